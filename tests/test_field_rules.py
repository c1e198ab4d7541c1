"""The one table of field rules (scoring/_rules.py): DESIGN.md's numbers, the docs page, and
the scorers and pooled figures that read it."""

from __future__ import annotations

import re

import numpy as np
import pytest

from chatledger.core import WEIGHTS_V3
from chatledger.scoring import FIELD_RULES, FIELD_SCORERS, Thresholds, micro_parts, rules_markdown
from chatledger.scoring._rules import EXACT_CREDIT, FUZZY_CREDIT
from conftest import SHARED_DATA, require_shared
from generated_docs import check_block


def test_docs_table_is_the_rules_table() -> None:
    thresholds = Thresholds().model_dump()
    check_block("docs/scoring.md", "field-rules", rules_markdown(WEIGHTS_V3, thresholds))


def _design_rows() -> dict[str, tuple[str, float]]:
    """DESIGN.md §3's table: field → (its layer-1 scorer in words, its weight)."""
    design = require_shared(SHARED_DATA.parent / "DESIGN.md", "DESIGN.md").read_text("utf-8")
    rows = {}
    for line in design.splitlines():
        found = re.match(r"\| \d+ \| `(\w+)` \| .* \| (.*) \| (\d\.\d+) \|$", line)
        if found:
            rows[found.group(1)] = (found.group(2), float(found.group(3)))
    return rows


def test_every_weight_and_term_is_designs() -> None:
    rows = _design_rows()
    assert set(rows) == set(FIELD_RULES) == set(WEIGHTS_V3)
    for name, (scorer, weight) in rows.items():
        assert WEIGHTS_V3[name] == weight, name
        rule = FIELD_RULES[name]
        # The weighted terms DESIGN writes ("0.75·text F1 + 0.25·mean evidence Jaccard …"),
        # in order; a field without them is one F1 / similarity / ECE, or four equal parts.
        written = [float(w) for w in re.findall(r"(\d\.\d+)·", scorer)]
        weights = [t.weight for t in rule.terms if t.weight]
        if written:
            assert weights == written, name
            # Every term after the first is over matched pairs, as DESIGN says.
            assert "matched pairs" in scorer or "matched phases" in scorer, name
            assert [t.over_pairs for t in rule.terms] == [False] + [True] * (len(written) - 1)
        elif "four equal parts" in scorer:
            assert weights == [0.25] * 4 and not rule.pair_terms, name
        else:
            assert weights in ([1.0], []), name
    # Entities: credit 1 for the same normalised name, 0.5 for a fuzzy-only match.
    assert "credit 1 for the same normalised name, 0.5" in rows["entities"][0]
    assert (EXACT_CREDIT, FUZZY_CREDIT) == (1.0, 0.5)
    assert sum(WEIGHTS_V3.values()) == pytest.approx(1.0)


def test_scorers_name_the_components_of_their_rule() -> None:
    for name, rule in FIELD_RULES.items():
        assert FIELD_SCORERS.get(name).components == rule.components


def test_micro_score_combines_the_pooled_parts_by_the_rule() -> None:
    # Decisions pooled over chunks: 6 matched of 8 reference and 10 predicted, evidence
    # Jaccard summing 3.0 over the 6 pairs. F1 = 2·6/(8 + 10) = 2/3, Jaccard 0.5, share
    # 2·6/18 = 2/3: 0.75·2/3 + 0.25·0.5·2/3 = 0.5 + 0.0833… = 0.5833….
    sums = {
        "matched": 6.0,
        "n_reference": 8.0,
        "n_predicted": 10.0,
        "evidence_jaccard:sum": 3.0,
        "evidence_jaccard:n": 6.0,
        "usable": 4.0,
        "covered": 4.0,
    }
    parts = micro_parts("decisions", {k: np.array([v]) for k, v in sums.items()})
    assert parts["f1"][0] == pytest.approx(2 / 3)
    assert parts["evidence_jaccard"][0] == pytest.approx(0.5)
    assert parts["score"][0] == pytest.approx(0.75 * 2 / 3 + 0.25 * 0.5 * 2 / 3)
    assert parts["score"][0] == pytest.approx(7 / 12)


def test_formulas_read_as_design_writes_them() -> None:
    assert FIELD_RULES["claims"].formula() == (
        "0.60·text F1 + (0.25·polarity + 0.15·subject consistency) × matched share"
    )
    assert FIELD_RULES["emotional_arc"].formula() == (
        "(opening + closing + trajectory + turning points F1) / 4"
    )
    assert FIELD_RULES["entities"].formula() == "F1"  # exact share: shown, weight 0
    assert FIELD_RULES["summary"].formula() == "similarity"
