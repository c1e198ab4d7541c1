"""Phase 1.5: prompt variants of an inconsistent field, re-measured on the simulated
extractor, the most consistent kept."""

from __future__ import annotations

from chatledger.select import (
    CANDIDATES,
    consistency,
    example_item,
    needs_variants,
    prompt_variants,
    search_variants,
    simulate_runs,
)

JOKES = ("walrus marmot", "dingo gecko", "bison ferret", "okapi tapir")


def test_variants_come_from_the_candidate() -> None:
    humour = CANDIDATES.get("humour_sarcasm")
    assert example_item(humour) == {"text": "…", "kind": "humour", "speaker": "…"}
    variants = prompt_variants(humour)
    assert [v.name for v in variants] == ["base", "explicit", "example", "constrained"]
    assert all(v.instruction.startswith(humour.instruction) for v in variants)
    assert '"kind": "humour"' in variants[2].instruction
    claim = example_item(CANDIDATES.get("claims"))
    assert set(claim) >= {"text", "subject", "polarity", "speaker", "evidence"}


def test_the_search_raises_an_inconsistent_fields_consistency() -> None:
    humour = CANDIDATES.get("humour_sarcasm")
    truth = [
        (f"c{i}", {"humour_sarcasm": [{"text": t, "kind": "humour"} for t in JOKES[: 1 + i % 4]]})
        for i in range(12)
    ]
    # How much each variant's runs drop, by construction: the example helps most.
    noise = {"base": 0.6, "explicit": 0.4, "example": 0.15, "constrained": 0.3}

    def measure(variant):  # type: ignore[no-untyped-def]
        runs = simulate_runs(truth, {"humour_sarcasm": noise[variant.name]}, k=3, seed=5)
        values = [[run["humour_sarcasm"] for run in chunk.runs] for chunk in runs]
        return consistency(values, humour.score_pair)

    search = search_variants(humour, measure)
    assert needs_variants(search.before, passed=True)
    assert search.best.name == "example"
    assert search.before < 0.50 <= search.after
    assert search.consistency["explicit"] < search.consistency["example"]
    assert not needs_variants(search.after, passed=True)
    assert not needs_variants(0.2, passed=False)  # a field that failed is not searched
