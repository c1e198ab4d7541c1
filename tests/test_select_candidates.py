"""The 25 candidate fields of schema selection: tiers, shapes, texts and pair scorers."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chatledger.core import FIELDS_V3
from chatledger.select import CANDIDATES, candidates, consistency, proven_texts


def test_twenty_five_candidates_in_the_seeds_four_tiers() -> None:
    assert len(CANDIDATES.names()) == 25
    counts = {tier: len(candidates(tier)) for tier in ("proven", "latent", "structural", "derived")}
    assert counts == {"proven": 6, "latent": 5, "structural": 8, "derived": 6}
    v3 = {c.name for c in candidates() if c.in_v3}
    assert v3 == set(FIELDS_V3)  # the 17 v3 fields, plus 8 new ones
    assert {c.name for c in candidates("proven")} == {
        "claims",
        "action_items",
        "open_questions",
        "decisions",
        "entities",
        "topics",
    }
    assert all(c.instruction for c in candidates())


def test_a_v3_candidate_scores_with_its_layer_1_scorer() -> None:
    claims = CANDIDATES.get("claims")
    same = [{"text": "the van is too small", "subject": "van", "polarity": "con"}]
    flipped = [{"text": "the van is too small", "subject": "van", "polarity": "pro"}]
    assert claims.score_pair(same, same) == 1.0
    # 0.60·text F1 1 + 0.25·polarity 0 + 0.15·subject consistency 1 (one claim, same subject)
    assert claims.score_pair(same, flipped) == pytest.approx(0.75)
    assert claims.texts(same) == ["the van is too small"]


def test_new_list_candidates_score_by_fuzzy_set_f1_of_their_texts() -> None:
    requests = CANDIDATES.get("requests")
    a = [{"text": "book the hall"}, {"text": "send the invoice"}]
    b = [{"text": "please book the hall"}]  # token set 100 with the first; 1 of 2 vs 1 of 1
    assert requests.score_pair(a, b) == pytest.approx(2 / 3)
    assert requests.score_pair([], []) == 1.0 and requests.score_pair(a, []) == 0.0
    with pytest.raises(ValidationError):
        requests.validate([{"txt": "typo"}])


def test_keyed_candidates_score_by_set_f1_of_their_keys() -> None:
    politeness = CANDIDATES.get("politeness")
    a = [{"speaker": "Ness", "level": "polite"}, {"speaker": "Sam", "level": "neutral"}]
    b = [{"speaker": "ness", "level": "polite"}, {"speaker": "Sam", "level": "impolite"}]
    assert politeness.score_pair(a, b) == 0.5  # (ness, polite) shared; 1 of 2 each way
    with pytest.raises(ValidationError):
        politeness.validate([{"speaker": "Sam", "level": "rude"}])


def test_candidates_feed_the_screening_metrics() -> None:
    # Three runs of "commitments" on one chunk: two agree, one finds nothing.
    runs = [
        [{"text": "send the slides by friday"}],
        [{"text": "send the slides by friday", "owner": "Sam"}],
        [],
    ]
    commitments = CANDIDATES.get("commitments")
    texts = [commitments.texts(r) for r in runs]
    # Pairs: (1, 2) agree 1.0; (1, 3), (2, 3) one side empty 0 → 1/3.
    pair_mean = consistency([texts])
    assert pair_mean == pytest.approx(1 / 3)
    chunk = {"topics": ["slides"], "action_items": [{"text": "send the slides"}]}
    assert proven_texts(chunk) == ["send the slides", "slides"]
