"""The judge audit (issue 28): known truth from the corruption operators grades the judges."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from chatledger.cli._app import main
from chatledger.core import Chunk, ExtractionRecord, ExtractionV3
from chatledger.corpus import read_chunks, read_extractions
from chatledger.demo import write_bundled_corpus
from chatledger.judge import (
    GroundingJudge,
    ItemVerdict,
    Judge,
    RecordingJudge,
    ReplayJudge,
    Verdict,
    judged_items,
    write_recorded,
)
from chatledger.runs._judge_audit import ADVERSARIAL, audit_inputs, audit_judge, copier_extraction


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    chunks_path, gold_path = write_bundled_corpus(tmp_path_factory.mktemp("corpus"))
    return read_chunks(chunks_path), read_extractions(gold_path).records


class FlagEverything(Judge):
    """Labels every item fabricated and scores every extraction 50/50/50."""

    name = "flag-everything"
    family = "test"

    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        return [
            Verdict(
                content_accuracy=50,
                completeness=50,
                hallucination=50,
                items=[
                    ItemVerdict(item_id=i.item_id, label="fabricated", reason="r")
                    for i in judged_items(e)
                ],
            )
            for _, e in pairs
        ]


class PrefersLonger(Judge):
    """A test double that prefers longer extractions: every score is the mean length of the
    item texts over 100 characters (capped at 1; 0 with no item), every item labelled none."""

    name = "prefers-longer"
    family = "test"

    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        out: list[Verdict | None] = []
        for _chunk, extraction in pairs:
            items = judged_items(extraction)
            mean = sum(len(i.text) for i in items) / len(items) if items else 0.0
            share = min(1.0, mean / 100)
            out.append(
                Verdict(
                    content_accuracy=100 * share,
                    completeness=100 * share,
                    hallucination=100 * share,
                    items=[ItemVerdict(item_id=i.item_id, label="none", reason="r") for i in items],
                )
            )
        return out


def _few(bundled, n: int = 4) -> tuple[list[Chunk], dict[str, ExtractionRecord]]:  # type: ignore[no-untyped-def]
    chunks, gold = bundled
    return chunks[:n], {c.chunk_id: gold[c.chunk_id] for c in chunks[:n]}


def test_audit_sets_and_their_truth(bundled) -> None:  # type: ignore[no-untyped-def]
    chunks, gold = _few(bundled)
    inputs = audit_inputs(gold, chunks, seed=2026)
    names = [i.name for i in inputs]
    assert names == [
        "reference",
        "simulated:light",
        "simulated:medium",
        "simulated:heavy",
        "probe:invent_item",
        "probe:swap_speaker",
        "probe:flip_polarity",
        "probe:shift_evidence",
        "probe:paraphrase",
        "probe:keywords",
        "probe:drop",
        "adversarial:copier",
        "adversarial:keywords",
        "adversarial:empty",
    ]
    by_name = {i.name: i for i in inputs}
    # The copier: one claim per message of >= 4 words, with its speaker and its own id.
    chunk = chunks[0]
    copied = by_name["adversarial:copier"].extractions[chunk.chunk_id].claims
    long_messages = [m for m in chunk.messages if len(m.text.split()) >= 4]
    assert [(c.text, c.speaker, c.evidence) for c in copied] == [
        (m.text, m.speaker, [m.id]) for m in long_messages
    ]
    assert copier_extraction(chunk).decisions == []
    assert all(e == ExtractionV3() for e in by_name["adversarial:empty"].extractions.values())
    # A probe's truth names one effect per corrupted item.
    truth = by_name["probe:flip_polarity"].truth
    assert truth is not None
    effects = {tuple(t.effects) for ct in truth.values() for t in ct.items}
    assert effects == {(), ("polarity_flipped",)}


def test_a_judge_that_flags_everything_fails_by_hand(bundled) -> None:  # type: ignore[no-untyped-def]
    chunks, gold = _few(bundled)
    audit = audit_judge(FlagEverything(), gold, chunks, seed=2026)
    n_items = sum(len(judged_items(gold[c.chunk_id].extraction)) for c in chunks)  # type: ignore[arg-type]
    assert audit.false_alarm_items == n_items
    assert audit.false_alarms == 1.0
    assert audit.false_alarm_labels == {"fabricated": n_items}
    invented = audit.detection_of("invented")
    swapped = audit.detection_of("speaker_swapped")
    assert invented is not None and swapped is not None
    assert (invented.flagged, invented.as_expected) == (1.0, 1.0)
    assert (swapped.flagged, swapped.as_expected) == (1.0, 0.0)
    # Every set scores 0.5 (the empty one too: it is scored like any other)…
    assert {s.composite for s in audit.sets} == {0.5}
    # …so nothing falls with severity, and the copier and empty tie the lightest corruption.
    assert audit.monotone is False
    assert audit.passed is False
    assert audit.failures == [
        "not monotone over the ladder (reference → heavy: 0.500 → 0.500 → 0.500 → 0.500)",
        "the copier extraction (0.500) is not below simulated:light (0.500)",
        "the empty extraction (0.500) is not below simulated:light (0.500)",
        "flags 100.0% of untouched reference items (more than 10%)",
    ]
    assert audit.adversarial_rank["copier"] == "at or above reference"


def test_a_judge_that_prefers_longer_extractions_fails_on_the_copier(bundled) -> None:  # type: ignore[no-untyped-def]
    chunks, gold = _few(bundled, 6)
    audit = audit_judge(PrefersLonger(), gold, chunks, seed=2026)
    copier = audit.set("adversarial:copier")
    light = audit.set("simulated:light")
    assert copier is not None and light is not None
    assert copier.composite is not None and light.composite is not None
    assert copier.composite > light.composite
    assert audit.false_alarms == 0.0
    assert not audit.passed
    assert any(f.startswith("the copier extraction") for f in audit.failures)


def test_recorded_verdicts_replay_offline_and_deterministically(bundled, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    chunks, gold = _few(bundled, 3)
    inputs = audit_inputs(gold, chunks, seed=2026)
    recording = RecordingJudge(GroundingJudge())
    live = audit_judge(recording, gold, chunks, seed=2026, inputs=inputs)
    path = tmp_path / "grounding.jsonl"
    write_recorded(recording.lines, path)
    assert len(recording.lines) == sum(len(i.extractions) for i in inputs)
    replay = ReplayJudge(path)
    assert replay.name == "recorded:grounding"
    replayed = audit_judge(replay, gold, chunks, seed=2026, inputs=inputs)
    assert replay.missing == 0
    assert replayed.model_dump(exclude={"judge"}) == live.model_dump(exclude={"judge"})
    # A pair the recording does not hold is unscored and counted, never guessed.
    other = audit_judge(replay, gold, chunks[:2], seed=7)
    assert replay.missing > 0
    assert any(s.unscored for s in other.sets)


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_cli_judges_audit_json_and_replay(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    code, out, err = _cli(
        ["judges", "audit", "--max-chunks", "2", "--record", str(path), "--format", "json"]
    )
    assert code == 0, err
    live = json.loads(out)["audits"][0]
    assert live["judge"] == "grounding" and live["chunks"] == 2
    code, out, err = _cli(
        ["judges", "audit", "--max-chunks", "2", "--judge", f"recorded:{path}", "--format", "json"]
    )
    assert code == 0, err
    replayed = json.loads(out)["audits"][0]
    assert replayed["judge"] == "recorded:grounding"
    assert {k: v for k, v in replayed.items() if k != "judge"} == {
        k: v for k, v in live.items() if k != "judge"
    }
    code, out, err = _cli(["judges", "audit", "--sets", "probe:nothing"])
    assert code == 2
    assert "unknown set(s) probe:nothing" in err


@pytest.fixture(scope="module")
def grounding_audit(bundled):  # type: ignore[no-untyped-def]
    chunks, gold = bundled
    return audit_judge(GroundingJudge(), gold, chunks, seed=2026)


def test_grounding_judge_passes_its_audit_on_the_bundled_corpus(grounding_audit) -> None:  # type: ignore[no-untyped-def]
    """Issue 28, "Must show" — measured on the 36 chunks of the bundled corpus."""
    audit = grounding_audit
    assert audit.passed, audit.failures
    invented = audit.detection_of("invented")
    assert invented is not None and invented.items == 377
    assert invented.flagged == pytest.approx(373 / 377)  # 0.989 >= 0.9
    # Swapped speakers, owners, holders, actors and deciders: >= 0.8 in every field.
    swap_fields = {
        d.field: round(d.flagged, 3)
        for d in audit.detection
        if d.effect == "speaker_swapped" and d.field is not None
    }
    assert swap_fields == {
        "action_items": 0.955,
        "claims": 1.0,
        "decisions": 0.9,
        "implicit_assumptions": 1.0,
        "negotiation_patterns": 0.909,
        "open_questions": 0.944,
        "qa_pairs": 0.943,
    }
    assert min(swap_fields.values()) >= 0.8
    flipped = audit.detection_of("polarity_flipped")
    assert flipped is not None and flipped.items == 87
    assert flipped.flagged == pytest.approx(58 / 87)  # 0.667 >= 0.6
    # False alarms: 51 of the reference's 1,073 judged items flagged (0.048 <= 0.05).
    assert (audit.false_alarm_items, audit.false_alarms) == (1073, pytest.approx(51 / 1073))
    assert audit.false_alarms is not None and audit.false_alarms <= 0.05
    composite = {s.name: round(s.composite or 0.0, 3) for s in audit.sets}
    assert audit.monotone is True
    assert (
        composite["reference"],
        composite["simulated:light"],
        composite["simulated:medium"],
        composite["simulated:heavy"],
    ) == (0.912, 0.813, 0.58, 0.275)
    # Copier, keywords and empty: each below simulated:medium.
    for name in ("copier", "keywords", "empty"):
        assert composite[f"adversarial:{name}"] < composite["simulated:medium"], name
    assert (composite["adversarial:copier"], composite["adversarial:empty"]) == (0.34, 0.333)


def test_offline_rules_does_not_outrank_simulated_light(bundled, grounding_audit) -> None:  # type: ignore[no-untyped-def]
    """The demo's judge layer: gold >= light > medium > heavy (above), and the
    sentence-copying offline:rules (0.793) not above simulated:light (0.813)."""
    from chatledger.extractors import get_extractor

    chunks, _gold = bundled
    rules = get_extractor("offline:rules")
    judge = GroundingJudge()
    verdicts = [judge.judge(c, rules.extract(c)) for c in chunks]
    rules_composite = sum(v.composite for v in verdicts) / len(verdicts)
    light = grounding_audit.set("simulated:light")
    assert round(rules_composite, 3) == 0.793
    assert rules_composite < light.composite


def test_docs_judges_audit_table_is_the_audit_s(grounding_audit) -> None:  # type: ignore[no-untyped-def]
    from chatledger.runs._judge_audit import audit_markdown
    from generated_docs import check_block

    check_block("docs/judges.md", "grounding-audit", audit_markdown(grounding_audit))


# ---- the audit in a run: strict / warn / off (issue 28) ------------------------------------

from chatledger.judge import JUDGES  # noqa: E402

if "prefers-longer" not in JUDGES:
    JUDGES.register("prefers-longer")(PrefersLonger)


def _write_config(
    tmp_path: Path, judges: object, *, first: int | None = None, seed: bool = True
) -> dict:  # type: ignore[type-arg]
    """The bundled corpus, simulated:light (30 % dropped, made from its first ``first`` chunks
    when given) and a run config of the extraction and judge layers with ``judges``."""
    from chatledger.simulate import simulate_records, write_records

    chunks_path, gold_path = write_bundled_corpus(tmp_path / "corpus")
    chunks = read_chunks(chunks_path)[:first]
    gold = read_extractions(gold_path).records
    write_records(
        simulate_records(gold, chunks, [("drop", 0.3)], seed=1, label="light"),
        tmp_path / "light.jsonl",
    )
    config = {
        "chunks": "corpus/chunks.jsonl",
        "reference": {"file": "corpus/gold.jsonl", "name": "gold"},
        "challengers": [{"file": "light.jsonl", "name": "simulated:light"}],
        "layers": ["extraction", "judge"],
        "judges": judges,
        "stats": {"bootstrap_resamples": 100, "dirichlet_draws": 100},
    }
    if seed:
        config["seed"] = 2026
    return config


def _run(tmp_path: Path, judges: object) -> tuple[object, dict]:  # type: ignore[type-arg]
    from chatledger.runs import execute_run, load_run_config

    config = _write_config(tmp_path, judges)
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config))
    result = execute_run(load_run_config(path), tmp_path / "out")
    return result, json.loads((tmp_path / "out" / "run.json").read_text())


def test_a_judge_that_fails_its_audit_leaves_overall_strict(tmp_path: Path) -> None:
    result, run = _run(tmp_path, {"panel": ["prefers-longer"], "max_chunks": 6})
    assert run["judge_audit"] == "strict"
    (audit,) = run["judge_audits"]
    assert audit["judge"] == "prefers-longer" and audit["chunks"] == 6
    assert audit["passed"] is False
    assert any(f.startswith("the copier extraction") for f in audit["failures"])
    (model,) = run["models"]
    # The judge layer is shown, marked, and left out; the overall is the extraction alone.
    assert "judge" in model["layers"]
    assert model["left_out"] == {"judge": "judge failed its audit"}
    assert model["overall"] == pytest.approx(model["layers"]["extraction"])
    assert model["layer_weights_used"] == {"extraction": 1.0}
    assert result.models[0].left_out == model["left_out"]  # type: ignore[attr-defined]
    assert model["renormalisation"] == (
        "left out of overall: judge (judge failed its audit); weights renormalised to "
        "extraction 1.000"
    )
    # The report marks it in the leaderboard and shows the audit.
    from chatledger.report import build_report

    html = build_report(tmp_path / "out").read_text(encoding="utf-8")
    assert "left out: judge failed its audit" in html
    assert 'id="judge-audit"' in html and "<strong>FAILED</strong>" in html
    assert "the copier extraction" in html


def test_strict_panel_keeps_the_judges_that_pass_and_warn_keeps_all(tmp_path: Path) -> None:
    _, run = _run(tmp_path / "strict", {"panel": ["grounding", "prefers-longer"], "max_chunks": 6})
    passed = {a["judge"]: a["passed"] for a in run["judge_audits"]}
    assert passed == {"grounding": True, "prefers-longer": False}
    assert list(run["judges_left_out"]) == ["prefers-longer"]
    (model,) = run["models"]
    assert model["left_out"] == {}
    assert list(model["judge"]["per_judge"]) == ["grounding"]  # the panel is who passed
    _, warned = _run(
        tmp_path / "warn",
        {"panel": ["grounding", "prefers-longer"], "audit": "warn", "max_chunks": 6},
    )
    (model,) = warned["models"]
    assert warned["judges_left_out"] == {} and model["left_out"] == {}
    assert list(model["judge"]["per_judge"]) == ["grounding", "prefers-longer"]
    _, off = _run(tmp_path / "off", {"panel": ["prefers-longer"], "audit": "off"})
    assert off["judge_audit"] == "off" and off["judge_audits"] == []
    assert off["models"][0]["left_out"] == {}


# ---- a model as judge: recorded once, replayed offline (issue 28) --------------------------


def _prompt_judge(body: dict) -> dict:  # type: ignore[type-arg]
    """A scripted model judge: flags every item whose text holds a word of the invented list
    ('catalogue', 'permit', …) as fabricated, the rest none; scores from the share flagged."""
    import re

    from fakes.llm_server import openai_body

    prompt = body["messages"][-1]["content"]
    listed = re.findall(r"^\d+\. (\w+#\d+): (.*)$", prompt, flags=re.MULTILINE)
    odd = ("catalogue", "permit", "notary", "broadband", "shed", "piano", "newsletter", "receipts")
    items = [
        {
            "item_id": item_id,
            "label": "fabricated" if any(w in text.casefold() for w in odd) else "none",
            "reason": "scripted",
        }
        for item_id, text in listed
    ]
    flagged = sum(i["label"] != "none" for i in items)
    share = 100.0 * (1 - flagged / len(items)) if items else 0.0
    verdict = {
        "content_accuracy": share,
        "completeness": min(100.0, 10.0 * len(items)),
        "hallucination": share,
        "items": items,
    }
    return openai_body(json.dumps(verdict), model=body["model"])


def test_a_model_judge_is_recorded_then_replayed_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply

    recording = tmp_path / "judge.jsonl"
    monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    with FakeLLMServer() as server:
        server.always(OPENAI_PATH, Reply(body=_prompt_judge))
        model = f"openai-compatible:{server.url}/v1:judge-x"
        argv = ["judges", "audit", "--judge", model, "--max-chunks", "2", "--format", "json"]
        code, out, err = _cli([*argv, "--record", str(recording)])
        assert code == 0, err
        live = json.loads(out)["audits"][0]
        calls = server.calls(OPENAI_PATH)
    # 14 sets × 2 chunks, but pairs with the same prompt are asked once (the call cache).
    assert 0 < calls <= 28
    lines = recording.read_text().splitlines()
    assert len(lines) == 28
    invented = next(d for d in live["detection"] if d["effect"] == "invented" and not d["field"])
    assert invented["flagged"] == 1.0  # the script knows the invented phrases
    # Offline: no server, the same verdicts from the file.
    code, out, err = _cli(
        [
            "judges",
            "audit",
            "--judge",
            f"recorded:{recording}",
            *("--max-chunks", "2", "--format", "json"),
        ]
    )
    assert code == 0, err
    replayed = json.loads(out)["audits"][0]
    assert replayed["judge"] == f"recorded:{model}"
    assert {k: v for k, v in replayed.items() if k != "judge"} == {
        k: v for k, v in live.items() if k != "judge"
    }


LOCAL_JUDGE = "qwen2.5-coder-1.5b"
RECORD_COMMAND = (
    f"chatledger judges audit --judge local:{LOCAL_JUDGE} --max-chunks 2 "
    f"--record src/chatledger/data/recorded/judges/{LOCAL_JUDGE}.jsonl"
)


def test_docs_local_judge_audit_is_the_recording_s() -> None:
    """docs/judges.md shows the recorded local model's audit, replayed offline; until the
    recording is committed the block says how to make it."""
    from chatledger.judge._recorded import bundled_recording
    from chatledger.runs._judge_audit import audit_markdown
    from generated_docs import check_block

    try:
        bundled_recording(LOCAL_JUDGE)
    except Exception:
        expected = f"Not recorded yet: `{RECORD_COMMAND}` (needs `make local-runtime`)."
    else:
        code, out, err = _cli(
            ["judges", "audit", "--judge", f"recorded:{LOCAL_JUDGE}", "--format", "json"]
        )
        assert code == 0, err
        from chatledger.record._judge_audit import JudgeAudit

        audit = JudgeAudit.model_validate(json.loads(out)["audits"][0])
        assert audit.judge == f"recorded:local:{LOCAL_JUDGE}"
        expected = audit_markdown(audit)
    check_block("docs/judges.md", "local-judge-audit", expected)


def test_judge_vs_person_kappa_in_the_audit(bundled, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--human GOLD --prefill FILE: the judge grades the prefilled items the person decided on;
    κ of its flags against the person's deletions sits in the audit."""
    from chatledger.annotate._gold import Annotation, GoldLine, ItemDecision

    chunks, gold = bundled
    chunk = chunks[0]
    reference = gold[chunk.chunk_id].extraction
    assert reference is not None
    invented = [
        {"text": t, "polarity": "pro", "speaker": chunk.messages[0].speaker, "evidence": ["x"]}
        for t in ("Renew the parking permit at the municipal office", "Repaint the garden shed")
    ]
    for claim in invented:
        claim["evidence"] = [chunk.messages[0].id]
    kept = [c.model_dump(mode="json") for c in reference.claims[:3]]
    prefill = ExtractionV3.model_validate({"claims": kept + invented})
    (tmp_path / "prefill.jsonl").write_text(
        json.dumps(
            {"chunk_id": chunk.chunk_id, "model": "m:prefill", "extraction": prefill.model_dump()}
        )
        + "\n"
    )
    decisions = [
        ItemDecision(prefill_index=i, decision="accepted", item_index=i) for i in range(3)
    ] + [ItemDecision(prefill_index=i, decision="deleted") for i in (3, 4)]
    line = GoldLine(
        chunk_id=chunk.chunk_id,
        model="human:ann",
        covers=["claims"],
        extraction=ExtractionV3.model_validate({"claims": kept}),
        annotation=Annotation(
            annotator="ann",
            prefill="m:prefill",
            updated_at="2026-01-01T00:00:00Z",
            decisions={"claims": decisions},
        ),
    )
    (tmp_path / "gold.jsonl").write_text(json.dumps(line.model_dump(mode="json")) + "\n")
    code, out, err = _cli(
        [
            *("judges", "audit", "--max-chunks", "2", "--format", "json"),
            *("--human", str(tmp_path / "gold.jsonl")),
            *("--prefill", str(tmp_path / "prefill.jsonl")),
        ]
    )
    assert code == 0, err
    human = json.loads(out)["audits"][0]["human"]
    # The grounding judge calls the 3 kept claims none and the 2 invented ones fabricated; the
    # person kept 3 and deleted 2: a perfect 2×2 table, κ = 1.
    assert human == {"kappa": 1.0, "items": 5, "source": str(tmp_path / "gold.jsonl")}


def test_docs_grounding_audit_on_the_human_gold_samples() -> None:
    from generated_docs import check_block

    data = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "human"
    rows = [
        "| human gold | chunks | reference → light → medium → heavy | copier · keywords · empty "
        "| false alarms | audit |",
        "|---|---|---|---|---|---|",
    ]
    outcome = {}
    for name in ("ami", "casino"):
        chunks = read_chunks(data / name / "chunks.jsonl")
        gold = read_extractions(data / name / "gold.jsonl").records
        audit = audit_judge(GroundingJudge(), gold, chunks, seed=2026)
        c = {s.name: s.composite for s in audit.sets}
        ladder = " → ".join(
            f"{c[n]:.3f}"
            for n in ("reference", "simulated:light", "simulated:medium", "simulated:heavy")
        )
        adversarial = " · ".join(f"{c[f'adversarial:{n}']:.3f}" for n in ADVERSARIAL)
        verdict = "passed" if audit.passed else "failed: " + "; ".join(audit.failures)
        rows.append(
            f"| {name} | {audit.chunks} | {ladder} | {adversarial} | {audit.false_alarms:.3f} "
            f"| {verdict} |"
        )
        outcome[name] = audit.passed
    assert outcome == {"ami": True, "casino": False}
    check_block("docs/judges.md", "grounding-audit-human", "\n".join(rows))


def test_a_recording_replays_on_the_chunks_and_sets_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    argv = ["judges", "audit", "--max-chunks", "2", "--sets", "probe:invent_item"]
    code, out, err = _cli([*argv, "--record", str(path), "--format", "json"])
    assert code == 0, err
    live = json.loads(out)["audits"][0]
    # No options: the recording's own 2 chunks and 5 sets (reference, ladder, the probe).
    code, out, err = _cli(["judges", "audit", "--judge", f"recorded:{path}", "--format", "json"])
    assert code == 0, err
    replayed = json.loads(out)["audits"][0]
    assert replayed["chunks"] == 2
    assert [s["name"] for s in replayed["sets"]] == [
        "reference",
        "simulated:light",
        "simulated:medium",
        "simulated:heavy",
        "probe:invent_item",
    ]
    assert replayed["sets"] == live["sets"]


def test_chatledger_run_marks_the_judge_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chatledger.cli._app import stdout as console

    # A wide console: under pytest-xdist COLUMNS is 80, and at 80 columns the leaderboard
    # wraps "(left out)" over two lines (what a narrow terminal would show).
    monkeypatch.setattr(console, "width", 200)

    judges = {"panel": ["prefers-longer"], "max_chunks": 4}
    config = _write_config(tmp_path, judges, first=6, seed=False)
    (tmp_path / "run.yaml").write_text(json.dumps(config))
    code, out, err = _cli(["run", str(tmp_path / "run.yaml"), "--out", str(tmp_path / "out")])
    assert code == 0, err
    assert "(left out)" in out
    assert (
        "judge prefers-longer failed its audit (the judge layer leaves overall): the copier "
        "extraction"
    ) in out
    assert "left out of overall: judge (judge failed its audit)" in out
