"""The whole schema selection on the bundled corpus with the seeded simulated extractor: the
known right answer its noise levels were chosen for (select._simulated), resuming, and the
files a selection writes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from chatledger.core import InputError
from chatledger.demo._bundled import write_bundled_corpus
from chatledger.scoring import load_scoring_config
from chatledger.select import (
    FIELD_NOISE,
    SIMULATED_LABEL,
    SelectionRecord,
    SimulatedExtractor,
    UnitLine,
    UnitRequest,
    load_select_config,
    run_selection,
    simulated_truth,
    spread,
)
from chatledger.select._units import UnitStore


def write_config(folder: Path, **extra: object) -> Path:
    chunks, gold = write_bundled_corpus(folder)
    config = {
        "version": 1,
        "chunks": chunks.name,
        "reference": gold.name,
        "extractor": "simulated",
        **extra,
    }
    path = folder / "select.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def selection(tmp_path_factory: pytest.TempPathFactory) -> tuple[SelectionRecord, Path]:
    folder = tmp_path_factory.mktemp("select")
    out = folder / "select"
    return run_selection(load_select_config(write_config(folder)), out), out


def test_the_screen_finds_the_known_right_answer(selection: tuple[SelectionRecord, Path]) -> None:
    record, _ = selection
    assert record.simulated and record.extractor == SIMULATED_LABEL
    rows = {r.name: r for r in record.screening}
    # 19 unproven candidates screened, 3 runs × 8 evenly spaced chunks each.
    assert len(rows) == 19
    assert len(record.screen_chunks) == 8
    assert all(r.runs == 24 and r.invalid == 0 for r in rows.values())
    # Q/A pairs (noise 0.02) among the three most consistent; implicit assumptions (0.55) the
    # least consistent of all, and below the pass mark.
    by_consistency = sorted(rows.values(), key=lambda r: -r.consistency)
    assert "qa_pairs" in [r.name for r in by_consistency[:3]]
    assert by_consistency[-1].name == "implicit_assumptions"
    assert not rows["implicit_assumptions"].passed
    # Topic shifts are consecutive reference topics: a near-copy of the proven topics, consistent
    # (noise 0.05) and still failing, on redundancy alone.
    shifts = rows["topic_shifts"]
    assert shifts.consistency > 0.8
    assert shifts.composite >= 0.45
    assert not shifts.passed and shifts.reason.startswith("redundant")
    assert shifts.redundancy < 0.10
    # Conversation phases (noise 0.60): informative, inconsistent, passed.
    phases = rows["conversation_phases"]
    assert phases.passed and phases.consistency < 0.50
    # The composite is the weighted sum of the four metrics.
    for row in rows.values():
        expected = (
            0.30 * row.consistency
            + 0.25 * row.information_gain
            + 0.25 * row.discrimination
            + 0.20 * row.redundancy
        )
        assert row.composite == pytest.approx(expected)
        assert all(
            0.0 <= v <= 1.0
            for v in (row.consistency, row.information_gain, row.discrimination, row.redundancy)
        )


def test_phase_one_and_a_half_raises_the_inconsistent_survivor(
    selection: tuple[SelectionRecord, Path],
) -> None:
    record, _ = selection
    assert [v.field for v in record.variants] == ["conversation_phases"]
    found = record.variants[0]
    assert set(found.consistency) == {"base", "explicit", "example", "constrained"}
    # The simulation halves a field's noise under the explicit definition: that variant wins,
    # by well over a tenth (the phases scorer weights its range IoU by the matched share, so
    # the gain is 0.33 → 0.51 where it was 0.40 → 0.67).
    assert found.best == "explicit"
    assert found.after > found.before + 0.15
    assert found.after == max(found.consistency.values())
    assert "never merge two into one" in found.instruction


def test_the_tournament_picks_the_scored_schema_and_prunes_most(
    selection: tuple[SelectionRecord, Path],
) -> None:
    record, _ = selection
    tour = record.tournament
    assert tour is not None
    winner = next(r for r in tour.rows if r.rank == 1)
    # Fields no reference holds only crowd the prompt: the winner holds the proven fields and
    # the v3 survivors, and none of the eight fields outside v3.
    assert winner.schema_name == "scored"
    assert f"{winner.schema_name} / {winner.style}" == tour.winner
    survivors = {r.name for r in record.screening if r.passed}
    v3_survivors = {r.name for r in record.screening if r.passed and r.in_v3}
    assert set(winner.fields) == {
        "claims", "action_items", "open_questions", "decisions", "entities", "topics",
        *v3_survivors,
    }  # fmt: skip
    assert survivors - v3_survivors and not (survivors - v3_survivors) & set(winner.fields)
    assert tour.pruned_share >= 0.5
    complete = [r for r in tour.rows if not r.pruned]
    assert all(len(r.scores) == 8 for r in complete)
    assert all(len(r.scores) < 8 for r in tour.rows if r.pruned)
    # 8 schemas × 5 styles, every one in the table; fewer calls than the full grid.
    assert len(tour.rows) == 40
    assert tour.calls == sum(len(r.scores) for r in tour.rows) < 40 * 8


def test_validation_uses_every_chunk_and_the_weights_follow_the_rule(
    selection: tuple[SelectionRecord, Path],
) -> None:
    record, out = selection
    found = record.validation
    weights = record.weights
    assert found is not None and weights is not None and record.tournament is not None
    assert found.chunks == 36
    assert found.winner == record.tournament.winner
    assert found.winner_low <= found.winner_mean <= found.winner_high
    assert found.difference is not None and found.difference_low is not None
    assert found.difference_low <= found.difference <= (found.difference_high or 0.0)
    assert found.difference == pytest.approx(found.winner_mean - (found.runner_up_mean or 0.0))
    # v1 fields hold 60 % of the weight, the rest shared by screening composites.
    v1 = {"claims", "action_items", "open_questions", "decisions", "entities", "topics",
          "links", "warnings", "evidence_message_ids"}  # fmt: skip
    assert sum(w for f, w in weights.weights.items() if f in v1) == pytest.approx(0.6)
    assert sum(weights.weights.values()) == pytest.approx(1.0)
    rows = {r.name: r for r in record.screening}
    new = [f for f in weights.weights if f not in v1]
    total = sum(rows[f].composite for f in new)
    for f in new:
        assert weights.weights[f] == pytest.approx(0.4 * rows[f].composite / total)
    # weights.json is a weights file the scorer reads.
    config = load_scoring_config(out / "weights.json")
    assert sum(config.weights.values()) == pytest.approx(1.0)
    assert config.weights["claims"] == pytest.approx(weights.scorer_weights["claims"])
    assert config.weights["summary"] == 0.0  # not in the winning schema


def test_the_directory_holds_a_typed_record_and_parquet_tables(
    selection: tuple[SelectionRecord, Path],
) -> None:
    record, out = selection
    again = SelectionRecord.read(out)
    assert again == record
    assert again.phases == ["screen", "variants", "tournament", "validate", "weights"]
    screening = pq.read_table(out / "screening.parquet").to_pylist()
    assert [r["name"] for r in screening] == [r.name for r in record.screening]
    tournament = pq.read_table(out / "tournament.parquet").to_pylist()
    assert record.tournament is not None
    assert len(tournament) == record.tournament.calls
    # The running mean a trial reported is the mean of its scores so far.
    first = record.tournament.rows[0]
    steps = [
        r for r in tournament if r["schema_name"] == first.schema_name and r["style"] == first.style
    ]
    assert steps[-1]["running_mean"] == pytest.approx(first.mean)


def test_a_rerun_asks_nothing_and_gives_the_same_record(
    selection: tuple[SelectionRecord, Path],
) -> None:
    record, out = selection
    lines = (out / "units.jsonl").read_text().splitlines()
    again = run_selection(load_select_config(out.parent / "select.json"), out)
    assert (out / "units.jsonl").read_text().splitlines() == lines
    assert all(u.reused == u.units for u in again.usage.values())
    assert again.screening == record.screening
    assert again.tournament == record.tournament
    assert again.validation == record.validation


class Interrupting(SimulatedExtractor):
    """Stops the process (as Ctrl-C does) after ``after`` units."""

    def __init__(self, *args: object, after: int, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.left = after
        self.asked = 0

    async def extract(self, request: UnitRequest) -> UnitLine:
        self.asked += 1
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return await super().extract(request)


def _truths(folder: Path) -> dict[str, dict[str, object]]:
    from chatledger.corpus import read_chunks, read_extractions

    chunks = {c.chunk_id: c for c in read_chunks(folder / "chunks.jsonl")}
    gold = read_extractions(folder / "gold.jsonl").records
    return {
        cid: simulated_truth(chunks[cid], r.extraction) for cid, r in gold.items() if r.extraction
    }


def test_an_interrupted_selection_resumes_where_it_stopped(tmp_path: Path) -> None:
    loaded = load_select_config(write_config(tmp_path))
    out = tmp_path / "select"
    stopping = Interrupting(_truths(tmp_path), after=10)
    with pytest.raises(KeyboardInterrupt):
        run_selection(loaded, out, until="screen", extractor=stopping)
    kept = (out / "units.jsonl").read_text().splitlines()
    assert len(kept) == 10
    # A torn last line (the process died while writing it) is cut off, and asked again.
    with (out / "units.jsonl").open("a") as handle:
        handle.write('{"v": 1, "key": "half')
    resumed = Interrupting(_truths(tmp_path), after=1000)
    record = run_selection(loaded, out, until="screen", extractor=resumed)
    assert record.usage["screen"].reused == 10
    assert resumed.asked == 24 - 10
    fresh = run_selection(
        load_select_config(write_config(tmp_path / "fresh")), tmp_path / "fresh" / "select",
        until="screen",
    )  # fmt: skip
    assert record.screening == fresh.screening


def test_a_broken_units_line_is_named(tmp_path: Path) -> None:
    (tmp_path / "units.jsonl").write_text('{"v": 1}\nnot json\n')
    with pytest.raises(InputError) as caught:
        UnitStore(tmp_path)
    assert "units.jsonl:1" in str(caught.value)


def test_another_config_in_the_same_directory_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "select"
    run_selection(load_select_config(write_config(tmp_path)), out, until="screen")
    other = write_config(tmp_path, seed=7)
    with pytest.raises(InputError, match="another config"):
        run_selection(load_select_config(other), out, until="screen")


@pytest.mark.parametrize(
    ("extra", "field", "message"),
    [
        ({"screen": {"k": 1}}, "screen.k", "greater than or equal to 2"),
        ({"screen": {"fields": ["qa_pairs", "jokes"]}}, "screen.fields", "jokes"),
        ({"screen": {"weights": {"consistency": 1.0}}}, "screen.weights", "exactly"),
        ({"tournament": {"styles": ["shouty"]}}, "tournament.styles", "plain"),
        ({"extractor": "gpt-5"}, "extractor", "model"),
        ({"chunks": "../elsewhere.jsonl"}, "chunks", "leaves the config's folder"),
        ({"screen": {"ratings": "ratings.json"}}, "screen.ratings", "file not found"),
        ({"surprise": 1}, "surprise", "unknown key"),
    ],
)
def test_config_mistakes_name_the_file_and_key(
    tmp_path: Path, extra: dict[str, object], field: str, message: str
) -> None:
    path = write_config(tmp_path, **extra)
    with pytest.raises(InputError) as caught:
        load_select_config(path)
    text = str(caught.value)
    assert str(path) in text and f"[{field}" in text and message in text


def test_the_simulation_needs_a_reference(tmp_path: Path) -> None:
    write_bundled_corpus(tmp_path)
    path = tmp_path / "select.yaml"
    path.write_text("version: 1\nchunks: chunks.jsonl\nextractor: simulated\n")
    with pytest.raises(InputError, match="needs 'reference'"):
        load_select_config(path)


def test_spread_takes_evenly_spaced_items() -> None:
    assert spread(list(range(36)), 8) == [0, 5, 10, 15, 20, 25, 30, 35]
    assert spread([1, 2, 3], 8) == [1, 2, 3]
    assert spread([1, 2, 3], None) == [1, 2, 3]
    assert spread([4, 5], 1) == [4]


def test_noise_levels_cover_every_candidate() -> None:
    from chatledger.select import CANDIDATES

    assert set(FIELD_NOISE) == set(CANDIDATES)
