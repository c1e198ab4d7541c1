"""report/_load.read_downstream: downstream.json read as typed figures, events capped."""

from __future__ import annotations

import json
from pathlib import Path

from chatledger.report._load import ConsumerFigures, read_downstream


def test_the_page_reads_each_consumer_as_figures_with_its_events_capped(tmp_path: Path) -> None:
    path = tmp_path / "downstream.json"
    drift = {
        "agreement": 0.5,
        "precision": 0.25,
        "n_reference": 4,
        "missed": [{"chunk_id": f"c{i}", "subject": "budget"} for i in range(3)],
        "invented": [],
    }
    data = {
        "models": {
            "m": {"consumers": {"drift": drift}, "skipped": ["loops"], "downstream_composite": 0.5},
            "n": {"consumers": {}, "skipped": {"arcs": ["emotional_arc"]}},
        }
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    read = read_downstream(path, cap=2)
    m, n = read.models["m"], read.models["n"]
    assert m.consumers["drift"] == ConsumerFigures(
        agreement=0.5,
        missed=[{"chunk_id": "c0", "subject": "budget"}, {"chunk_id": "c1", "subject": "budget"}],
        invented=[],
        n_missed=3,  # all of them, though two were read
        n_invented=0,
        precision=0.25,
        n_reference=4,
    )
    assert m.consumers["drift"].figures == {"precision": 0.25, "n_reference": 4}
    # skipped: an older file's list of names (no fields) and a newer file's mapping
    assert (m.skipped, n.skipped) == ({"loops": []}, {"arcs": ["emotional_arc"]})
    assert (m.downstream_composite, n.downstream_composite) == (0.5, None)
