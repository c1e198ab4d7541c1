"""A consumer's agreement merged conversation by conversation (issue 34: a run's layer 3 no
longer holds every conversation's outputs) is the agreement over the whole run, float for
float: its details, counts, missed and invented events in the same order, the daily report's
days too — on the scale benchmark's generated corpus, its three challengers against the
reference, the reference against each, and a reference missing every third chunk (so the
compared side has days the reference lacks, which a run lists after all the others)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatledger.core import Chunk, ExtractionRecord, iter_json
from chatledger.corpus import read_chunks, read_extractions
from chatledger.downstream import (
    CONSUMER_NAMES,
    AgreementMerger,
    ConsumerAgreement,
    ItemSpool,
    build_outputs,
    combine_agreements,
    compare_outputs,
    get_consumer,
    merge_outputs,
)
from chatledger.downstream._base import Consumer, ConsumerOutput
from synthetic_corpus import synthetic


def _synthetic_corpus(folder: Path) -> Path:
    config: Path = synthetic().write_run_corpus(folder, 60, "merge")
    return config.parent


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[Chunk], dict[str, dict[str, ExtractionRecord]]]:
    folder = _synthetic_corpus(tmp_path_factory.mktemp("merge"))
    files = ["reference", "challenger", "challenger_b", "challenger_c"]
    records = {name: dict(read_extractions(folder / f"{name}.jsonl").records) for name in files}
    # The reference without every third chunk (read as empty): days only the other side has.
    records["sparse"] = {k: r for i, (k, r) in enumerate(records["reference"].items()) if i % 3}
    return read_chunks(folder / "chunks.jsonl"), records


def _whole(agreement: ConsumerAgreement) -> dict[str, Any]:
    return {
        "agreement": agreement.agreement,
        "details": agreement.details,
        "counts": agreement.counts,
        "missed": [e.to_dict() for e in agreement.missed],
        "invented": [e.to_dict() for e in agreement.invented],
    }


def _merged(
    consumer: Consumer[Any],
    pairs: list[tuple[ConsumerOutput[Any], ConsumerOutput[Any]]],
    directory: Path | None,
) -> dict[str, Any]:
    merger = AgreementMerger(consumer, directory)
    for reference, challenger in pairs:
        merger.add(reference, challenger)
    found = merger.result()
    assert found.missed == () and found.invented == ()
    details = {k: list(v) if isinstance(v, ItemSpool) else v for k, v in found.details.items()}
    merged = {
        "agreement": found.agreement,
        "details": details,
        "counts": found.counts,
        "missed": list(merger.missed),
        "invented": list(merger.invented),
    }
    merger.close()
    return merged


@pytest.mark.parametrize("challenger", ["challenger", "challenger_b", "challenger_c"])
def test_merged_conversations_agree_with_the_whole_run(
    corpus: tuple[list[Chunk], dict[str, dict[str, ExtractionRecord]]],
    challenger: str,
    tmp_path: Path,
) -> None:
    chunks, records = corpus
    later_days = 0
    sides = [("reference", challenger), (challenger, "reference"), ("sparse", challenger)]
    for left, right in sides:
        reference = build_outputs(chunks, records[left])
        compared = build_outputs(chunks, records[right])
        assert len(reference) == 6  # ten chunks a conversation
        whole = compare_outputs(merge_outputs(reference), merge_outputs(compared))
        agreements: dict[str, ConsumerAgreement] = {}
        for name in CONSUMER_NAMES:
            pairs = [(reference[c][name], compared[c][name]) for c in reference]
            expected = _whole(whole.consumers[name].result)
            for directory in (None, tmp_path):
                assert _merged(get_consumer(name), pairs, directory) == expected, name
            merger = AgreementMerger(get_consumer(name))
            for pair in pairs:
                merger.add(*pair)
            agreements[name] = merger.result()
        days = whole.consumers["daily_report"].result.details["days"]
        later_days += sum(1 for day in days if day["n_reference"] == 0)
        combined = combine_agreements(agreements)
        assert combined.composite == whole.downstream_composite
        assert combined.weights == whole.weights
        assert (combined.left_out, combined.renormalisation) == (
            whole.left_out,
            whole.renormalisation,
        )
    # Days only the compared side speaks of come after all the others over a run: the
    # merge had to put them there (20 of the 60 chunks' days here).
    assert later_days == 20


def test_an_empty_run_merges_to_the_empty_agreement() -> None:
    for name in CONSUMER_NAMES:
        consumer = get_consumer(name)
        empty = ConsumerOutput(name, (), ())
        expected = _whole(consumer.agreement(empty, empty))
        assert _merged(consumer, [], None) == expected, name


def test_a_spool_writes_its_items_json_as_the_encoder_nests_them(tmp_path: Path) -> None:
    # What a model's part of downstream.json copies instead of encoding every event after the
    # last batch: the spool's text is the encoder's text of the list one level above its items.
    items: list[Any] = [{"a": 1, "b": [1.5, float("inf")], "c": {"d": "é\n"}}, {}, [], "x"]
    for level in (1, 4):
        spool = ItemSpool(tmp_path, json_level=level)
        written: list[str] = []
        spool.write_json(written.append)
        assert written == ["[]"]
        spool.extend(items)
        written = []
        spool.write_json(written.append)
        assert "".join(written) == "".join(iter_json(items, level=level - 1))
        assert len(list(spool)) == 4  # and the items are still read back
        spool.close()
    text = "".join(iter_json({"k": [{"a": None}]}))
    assert text == '{\n  "k": [\n    {\n      "a": null\n    }\n  ]\n}'
