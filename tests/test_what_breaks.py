"""``what-breaks.json``: written and read by one class; a broken or foreign file is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatledger.core import InputError
from chatledger.record import WHAT_BREAKS_FILE, SwitchComparison, SwitchFigure, WhatBreaks


def _comparison() -> SwitchComparison:
    return SwitchComparison(
        production="a",
        candidate="b",
        scored_against="gold",
        confidence=0.95,
        resamples=2000,
        figures=[
            SwitchFigure(
                figure="fields.claims", production=0.4, candidate=0.3, difference=-0.1,
                low=-0.2, high=-0.05, verdict="drop",
            ),
            SwitchFigure(
                figure="overall", production=0.4, candidate=0.39, difference=-0.01,
                low=-0.05, high=0.03, verdict="no change shown",
            ),
        ],
    )  # fmt: skip


def test_round_trip_and_drops(tmp_path: Path) -> None:
    assert WhatBreaks.read(tmp_path) is None
    found = WhatBreaks(comparisons=[_comparison()])
    assert found.write(tmp_path) == tmp_path / WHAT_BREAKS_FILE
    again = WhatBreaks.read(tmp_path)
    assert again == found
    assert again is not None and [f.figure for f in again.comparisons[0].drops] == ["fields.claims"]


def test_a_broken_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / WHAT_BREAKS_FILE).write_text(
        '{"version": 1, "comparisons": [{"production": "a"}]}', encoding="utf-8"
    )
    with pytest.raises(InputError, match="what-breaks file") as caught:
        WhatBreaks.read(tmp_path)
    assert WHAT_BREAKS_FILE in str(caught.value)
    (tmp_path / WHAT_BREAKS_FILE).write_text('{"version": 2}', encoding="utf-8")
    with pytest.raises(InputError, match="version"):
        WhatBreaks.read(tmp_path)
