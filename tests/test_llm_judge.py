"""Model judges over real HTTP (tests/fakes on 127.0.0.1): verdicts, unscored, a panel in a run.

Two scripted judges on two endpoints — one on the chat-completions API (an OpenAI-compatible
id), one on the Messages API (an ``anthropic:`` id sent to the fake server through
ANTHROPIC_BASE_URL) — give different, constant verdicts on three identical chunks, next to the
offline grounding judge.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest

from chatledger.core import Chunk, ExtractionV3
from chatledger.judge import ISSUE_LABELS, LLMJudge, Verdict, judged_items
from chatledger.providers import CompletionCache, ProviderHub
from chatledger.runs import execute_run, load_run_config
from fakes.llm_server import ANTHROPIC_PATH, OPENAI_PATH, FakeLLMServer, Reply, openai_body
from fakes.scripted_models import (
    anthropic_verdict,
    asked_chunk,
    chunks,
    extraction_for,
    openai_verdict,
    write_chunks,
)

ANTHROPIC_KEY = "sk-ant-judge-test-0b7c"
CHALLENGER_NAME = "cheap-model-under-test"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
        monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(tmp_path / "cache"))
        yield fake


def verdict(
    scores: tuple[float, float, float], labels: dict[str, str], extra: dict[str, str] | None = None
) -> dict[str, Any]:
    """A verdict labelling every challenger item 'none' unless ``labels`` says otherwise."""
    items = [
        {"item_id": i.item_id, "label": labels.get(i.item_id, "none"), "reason": "checked"}
        for i in judged_items(challenger("ex-1"))
    ]
    items += [{"item_id": k, "label": v, "reason": "?"} for k, v in (extra or {}).items()]
    acc, comp, hall = scores
    return {
        "content_accuracy": acc,
        "completeness": comp,
        "hallucination": hall,
        "items": items,
    }


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def challenger(chunk_id: str) -> ExtractionV3:
    return ExtractionV3.model_validate(extraction_for(chunk_id, "challenger"))


# Judge A: 80 / 70 / 90, flags the assumption as over-interpreted and an entity as fabricated.
VERDICT_A = verdict(
    (80, 70, 90), {"implicit_assumptions#0": "over_interpreted", "entities#2": "fabricated"}
)
# Judge B: 60 / 50 / 100, flags the assumption too and the action item's owner; it also labels
# an item that does not exist (claims#7), which must be dropped.
VERDICT_B = verdict(
    (60, 50, 100),
    {"implicit_assumptions#0": "over_interpreted", "action_items#0": "misattributed"},
    extra={"claims#7": "fabricated"},
)


def test_llm_judge_reads_the_verdict_and_drops_unknown_items(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.always(
        OPENAI_PATH,
        Reply(body=openai_verdict(lambda _: VERDICT_B, prompt_tokens=800, completion_tokens=300)),
    )
    model = f"openai-compatible:{server.url}/v1:judge-b"
    hub = ProviderHub(cache=CompletionCache(tmp_path / "c"))
    judge = LLMJudge(model, name="B", hub=hub)
    pair = (Chunk.model_validate(chunks(1)[0]), challenger("ex-1-d0"))
    (result,) = judge.judge_many([pair])

    assert isinstance(result, Verdict)
    assert (result.content_accuracy, result.completeness, result.hallucination) == (60, 50, 100)
    assert len(result.items) == 11  # the 11 listed items; claims#7 is not one of them
    assert "claims#7" not in {i.item_id for i in result.items}
    assert judge.family == "openai-compatible"
    assert judge.describe() == {"name": "B", "family": "openai-compatible", "model": model}
    body = server.bodies(OPENAI_PATH)[0]
    assert body["response_format"]["json_schema"]["name"] == "judge_verdict"
    user = body["messages"][-1]["content"]
    assert "[ex1-m2-d0] Mei Chen: Yes but I'm not sure the new setlist works" in user
    assert "1. decisions#0: Drop the ballad from Saturday's set" in user
    assert "11. links#0: https://example.com/setlist" in user
    usage = judge.usage()
    assert (usage["verdicts"], usage["unscored"], usage["calls"]) == (1, 0, 1)
    assert (usage["input_tokens"], usage["output_tokens"]) == (800, 300)
    assert hub.cache is not None
    hub.cache.close()


def test_a_verdict_that_never_parses_is_unscored(server: FakeLLMServer, tmp_path: Path) -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if asked_chunk(body) == "ex-1-d1":
            return openai_body('{"content_accuracy": "high"}')
        return openai_verdict(lambda _: VERDICT_A)(body)

    server.always(OPENAI_PATH, Reply(body=answer))
    judge = LLMJudge(f"openai-compatible:{server.url}/v1:judge-a", name="A")
    pairs = [(Chunk.model_validate(c), challenger(c["chunk_id"])) for c in chunks(2)]
    results = asyncio.run(judge.ajudge_many(pairs))

    assert isinstance(results[0], Verdict) and results[1] is None
    # d0: one call; d1: one call + 2 re-asks, then unscored (never a 0).
    assert server.calls() == 4
    usage = judge.usage()
    assert (usage["verdicts"], usage["unscored"], usage["calls"]) == (1, 1, 4)


def _run_config(tmp_path: Path, judges: list[Any], n_chunks: int = 3) -> Path:
    write_chunks(tmp_path / "chunks.jsonl", n_chunks)
    for which, name in (("reference", "gold"), ("challenger", CHALLENGER_NAME)):
        rows = [
            {
                "chunk_id": c["chunk_id"],
                "model": name,
                "extraction": extraction_for(c["chunk_id"], which),
            }
            for c in chunks(n_chunks)
        ]
        (tmp_path / f"{which}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {
        "name": "judged",
        "chunks": "chunks.jsonl",
        "reference": {"file": "reference.jsonl", "name": "gold"},
        "challengers": [{"file": "challenger.jsonl", "name": CHALLENGER_NAME}],
        "layers": ["extraction", "judge"],
        "judges": judges,
        "cache_dir": "cache",
        "stats": {"bootstrap_resamples": 100, "dirichlet_draws": 100},
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config))
    return path


def test_a_panel_of_two_model_judges_and_grounding_in_a_run(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.always(
        OPENAI_PATH,
        Reply(body=openai_verdict(lambda _: VERDICT_A, prompt_tokens=900, completion_tokens=250)),
    )
    server.always(
        ANTHROPIC_PATH,
        Reply(body=anthropic_verdict(lambda _: VERDICT_B, input_tokens=1000, output_tokens=200)),
    )
    judges = [
        {"name": "A", "model": f"openai-compatible:{server.url}/v1:judge-a"},
        {"name": "B", "model": "anthropic:claude-haiku-4-5", "options": {"max_tokens": 1500}},
        "grounding",
    ]
    result = execute_run(load_run_config(_run_config(tmp_path, judges)), tmp_path / "out")
    run = json.loads((tmp_path / "out" / "run.json").read_text())

    assert server.calls(OPENAI_PATH) == 3 and server.calls(ANTHROPIC_PATH) == 3
    assert server.bodies(ANTHROPIC_PATH)[0]["max_tokens"] == 1500
    # The judges never see which model made the extraction.
    for request in server.requests:
        assert CHALLENGER_NAME not in json.dumps(request.body)
    judge = run["models"][0]["judge"]
    assert judge["unscored"] == {"A": 0, "B": 0, "grounding": 0}
    # Per judge: A (80 + 70 + 90) / 300 = 0.8, B (60 + 50 + 100) / 300 = 0.7.
    assert judge["per_judge"]["A"] == pytest.approx(0.8)
    assert judge["per_judge"]["B"] == pytest.approx(0.7)
    # Grounding on the 11 items: 10 'none' (credit 1) and the action item 'misattributed' (0.5:
    # Mei asked "Can you print the new setlist?", Jordan answered "Will do" — the owner is
    # Jordan, not Mei) → accuracy 10.5/11 = 95.4545; no fabrication → hallucination 100; 4 of
    # the 5 content messages are stated (ex1-m5, about the spare cables, is not) → 80.
    # Panel mean per chunk: accuracy (80 + 60 + 95.4545)/3, completeness (70 + 50 + 80)/3,
    # hallucination (90 + 100 + 100)/3 → composite (235.4545 + 200 + 290) / 900 = 0.806061.
    assert result.models[0].layers["judge"] == pytest.approx(725.454545 / 900, abs=1e-6)
    agreement = judge["agreement"]
    assert agreement["judges"] == ["A", "B", "grounding"]
    # Each judge's scores are the same on all m = 3 chunks, so every unit holds the same three
    # values and α (interval) = 1 − D_o/D_e = 1 − (S/3) / (2mS / (3(3m − 1))) = 1 − (3m − 1)/(2m)
    # = 1 − 8/6 = −1/3 whatever the values (S = sum of squared pairwise gaps > 0).
    for name in ("content_accuracy", "completeness", "hallucination"):
        assert agreement["alpha"][name] == pytest.approx(-1 / 3)
    # Cohen's κ over the 33 (chunk, item) labels; the proportions are those of one chunk's 11:
    # A|B: agree on the 8 shared 'none' + the assumption → p_o = 9/11; A has none 9, over 1,
    # fabricated 1; B none 9, over 1, misattributed 1 → p_e = (81 + 1)/121 = 82/121;
    # κ = (99 − 82)/(121 − 82) = 17/39.
    assert agreement["kappa"]["A|B"] == pytest.approx(17 / 39)
    # Grounding says none 10 times and misattributed once (the action item). A|grounding: both
    # 'none' on 8 items → p_o = 8/11, p_e = (9·10)/121 → κ = (88 − 90)/(121 − 90) = −2/31.
    # B|grounding: 9 shared 'none' + the action item → p_o = 10/11, p_e = (9·10 + 1·1)/121 →
    # κ = (110 − 91)/(121 − 91) = 19/30.
    assert agreement["kappa"]["A|grounding"] == pytest.approx(-2 / 31)
    assert agreement["kappa"]["B|grounding"] == pytest.approx(19 / 30)
    # Nominal α on labels, recomputed from judgements.jsonl through the krippendorff package.
    lines = [
        json.loads(x) for x in (tmp_path / "out" / "judgements.jsonl").read_text().split("\n") if x
    ]
    assert len(lines) == 9  # 3 chunks × 3 judges
    units = sorted({(x["chunk_id"], i["item_id"]) for x in lines for i in x["verdict"]["items"]})
    code = {label: float(n) for n, label in enumerate(ISSUE_LABELS)}
    matrix = np.array(
        [
            [
                next(
                    code[i["label"]]
                    for x in lines
                    if x["judge"] == judge_name and x["chunk_id"] == unit[0]
                    for i in x["verdict"]["items"]
                    if i["item_id"] == unit[1]
                )
                for unit in units
            ]
            for judge_name in ("A", "B", "grounding")
        ]
    )
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert agreement["alpha"]["labels"] == pytest.approx(expected)
    grounding = next(x for x in lines if x["judge"] == "grounding")["verdict"]
    assert {i["item_id"]: i["label"] for i in grounding["items"] if i["label"] != "none"} == (
        {"action_items#0": "misattributed"}
    )
    # What the judges cost sits in run.json: A 3 calls × (900 in, 250 out) at $0 (compatible
    # servers are free by default); B 3 × (1000, 200) at haiku's $1 / $5 per Mtok:
    # 3 · (1000·1e-6 + 200·5e-6) = 3 · 0.002 = $0.006.
    entries = {entry["name"]: entry for entry in run["judges"]}
    assert entries["A"]["family"] == "openai-compatible"
    assert entries["B"]["family"] == "anthropic"
    assert entries["grounding"]["family"] == "offline-grounding"
    assert (entries["A"]["usage"]["input_tokens"], entries["A"]["usage"]["calls"]) == (2700, 3)
    assert entries["B"]["usage"]["cost_usd"] == pytest.approx(0.006)
    assert run["model_calls"]["spent_usd"] == pytest.approx(0.006)


def test_an_unparseable_verdict_is_counted_unscored_in_the_run(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if asked_chunk(body) == "ex-1-d1":
            return openai_body("Looks fine to me!")
        return openai_verdict(lambda _: VERDICT_A)(body)

    server.always(OPENAI_PATH, Reply(body=answer))
    judges = [{"name": "A", "model": f"openai-compatible:{server.url}/v1:judge-a"}]
    result = execute_run(load_run_config(_run_config(tmp_path, judges, 2)), tmp_path / "out")
    run = json.loads((tmp_path / "out" / "run.json").read_text())

    assert run["models"][0]["judge"]["unscored"] == {"A": 1}
    assert run["judges"][0]["usage"]["unscored"] == 1
    # d1 is left out (not a 0): the judge layer is d0's (80 + 70 + 90)/300 = 0.8 alone.
    assert result.models[0].layers["judge"] == pytest.approx(0.8)
    lines = [
        json.loads(x) for x in (tmp_path / "out" / "judgements.jsonl").read_text().split("\n") if x
    ]
    assert [(x["chunk_id"], x["scored"]) for x in lines] == [("ex-1-d0", True), ("ex-1-d1", False)]


def test_model_judge_options_are_checked(server: FakeLLMServer, tmp_path: Path) -> None:
    from chatledger.core import InputError

    judges = [{"name": "A", "model": "anthropic:claude-haiku-4-5", "options": {"colour": "red"}}]
    with pytest.raises(InputError, match=r"\[judges.0\]: option colour: unknown key"):
        execute_run(load_run_config(_run_config(tmp_path, judges, 1)), tmp_path / "out")
    assert server.calls() == 0


def test_a_model_judge_without_a_name_is_named_by_its_id(tmp_path: Path) -> None:
    from chatledger.runs._panel import build_judges

    judges = [{"model": "anthropic:claude-haiku-4-5"}, "grounding"]
    built = build_judges(load_run_config(_run_config(tmp_path, judges, 1)))
    assert [j.describe() for j in built] == [
        {
            "name": "anthropic:claude-haiku-4-5",
            "family": "anthropic",
            "model": "anthropic:claude-haiku-4-5",
        },
        {"name": "grounding", "family": "offline-grounding"},
    ]


def test_a_local_judge_without_a_runtime_stops_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No llama-server and no node-llama-cpp: the first call's EnvironmentFault ends the
    judging; the other calls in flight add no traceback at the event loop's shutdown."""
    from chatledger.core import EnvironmentFault

    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("CHATLEDGER_NODE_LLAMA_CPP", str(tmp_path))  # no node_modules here
    monkeypatch.delenv("CHATLEDGER_LLAMA_SERVER", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(tmp_path / "cache"))
    pairs = [
        (Chunk.model_validate(c), ExtractionV3.model_validate(extraction_for(c["chunk_id"])))
        for c in chunks(4)
    ]
    judge = LLMJudge(f"local:{model}", name="local")
    with pytest.raises(EnvironmentFault, match="no local model runtime found"):
        judge.judge_many(pairs)
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
    # asyncio logs a task's exception nobody retrieved when the loop shuts down.
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
