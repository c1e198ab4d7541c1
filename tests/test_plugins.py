"""Components from other packages, through the entry-point groups ``chatledger.scorers``,
``chatledger.judges``, ``chatledger.consumers`` and ``chatledger.importers`` (docs/plugins.md).

The worked example is a real package, ``tests/plugin_example``. Each test makes it installed
the way pip leaves a distribution: a ``chatledger_example-0.1.0.dist-info`` folder holding its
METADATA and the ``entry_points.txt`` built from its pyproject.toml, on the path of a fresh
``chatledger`` process (never this one: the registries are per process, and the rest of the
suite must see the built-in components only). The figures are worked out by hand below.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from chatledger.core import InputError, PluginError, Registry

EXAMPLE = Path(__file__).resolve().parent / "plugin_example"


def _install(site: Path, name: str, entry_points: dict[str, dict[str, str]]) -> None:
    """What pip leaves in site-packages for a distribution: its .dist-info folder."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n", encoding="utf-8"
    )
    lines = []
    for group, entries in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value}" for key, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a process in which the example package is installed."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    site = tmp_path / "site"
    _install(site, project["name"], project["entry-points"])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(EXAMPLE), env.get("PYTHONPATH", "")])
    return env


def _chatledger(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


# --- the importer: chatledger corpus import irc ---------------------------------------------

IRC_LOG = """\
[2026-01-05 09:12] <ness> Can you send the invoice by Friday?
[2026-01-05 09:13] <tom> Yes, I'll send it Friday.
[2026-01-05 09:14] * ness waves
[2026-01-05 09:15] <ness> Thanks!
"""


def test_an_importer_from_another_package_reads_its_format(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "team.log").write_text(IRC_LOG, encoding="utf-8")
    named = _chatledger(plugin_env, tmp_path, "corpus", "import", "irc", "team.log", "--out",
                        "named", "--format", "json")  # fmt: skip
    assert named.returncode == 0, named.stderr
    summary = json.loads(named.stdout)
    # Three messages of two people; the action line skipped and counted.
    assert (summary["kind"], summary["messages"], summary["participants"]) == ("irc", 3, 2)
    assert summary["skipped"] == {"action": 1}
    chunk = json.loads((tmp_path / "named" / "chunks.jsonl").read_text("utf-8").splitlines()[0])
    assert [m["speaker"] for m in chunk["messages"]] == ["ness", "tom", "ness"]
    assert chunk["messages"][1]["text"] == "Yes, I'll send it Friday."
    # Without a kind, the format is found by its reader's sniff, after the built-in ones.
    found = _chatledger(plugin_env, tmp_path, "corpus", "import", "team.log", "--out", "found",
                        "--format", "json")  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["kind"] == "irc"
    # A line it cannot read is the user's mistake, in one line naming file and line.
    (tmp_path / "bad.log").write_text(IRC_LOG + "hello\n", encoding="utf-8")
    bad = _chatledger(plugin_env, tmp_path, "corpus", "import", "irc", "bad.log", "--out", "x")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "error: bad.log:5: not an IRC log line ([YYYY-MM-DD HH:MM] <nick> text)"
    ]


# --- scorer, judge and consumer in a run config ---------------------------------------------
#
# One conversation, two chunks of three messages. The reference and the challenger differ in:
# - topics, chunk 1: "Invoice timing", "Friday delivery" vs "invoice timing!", "Friday
#   deliveries". The example's `exact` matcher pairs only texts equal after preprocessing:
#   1 of 2 on each side → precision = recall = 0.5 → topics F1 0.5 (token set would pair both:
#   "friday delivery" vs "friday deliveries" scores 87.5 ≥ 60). Chunk 2 has no topics: 1.0.
#   Macro over chunks: (0.5 + 1.0) / 2 = 0.75.
# - evidence_message_ids: the challenger cites m1 and m9 in chunk 1 (m9 is not in the chunk):
#   the `evidence` judge gives accuracy 50, completeness 1/3 · 100, hallucination 50 →
#   composite (50 + 33.33… + 50) / 300 = 0.4444…; chunk 2 cites m4, m5, m6: all held, all
#   cited → 1.0. Judge layer = mean over chunks = (0.4444… + 1) / 2 = 0.7222….
# - action item owners: reference ness (chunk 1) and tom (chunk 2), challenger ness and sam:
#   the `assignees` consumer matches {ness} of 2 and 2 → F1 = 2·1 / (2 + 2) = 0.5.

MESSAGES = [
    ("m1", "ness", "Can you send the invoice by Friday?"),
    ("m2", "tom", "Yes, I'll send it Friday."),
    ("m3", "ness", "Thanks!"),
    ("m4", "tom", "Sam, can you book the van?"),
    ("m5", "sam", "Booked for Thursday."),
    ("m6", "tom", "Great."),
]


def _chunks() -> list[dict[str, Any]]:
    return [
        {
            "chunk_id": f"c{n + 1}",
            "conversation_id": "team",
            "participants": ["ness", "tom", "sam"],
            "messages": [
                {"id": i, "speaker": s, "timestamp": f"2026-01-05T09:{10 + k}:00Z", "text": t}
                for k, (i, s, t) in enumerate(MESSAGES[3 * n : 3 * n + 3], start=3 * n)
            ],
        }
        for n in range(2)
    ]


def _extraction(topics: list[str], cited: list[str], owner: str, item: str) -> dict[str, Any]:
    return {
        "topics": topics,
        "evidence_message_ids": cited,
        "action_items": [{"text": item, "owner": owner, "evidence": cited[:1]}],
    }


def _lines(model: str, first: dict[str, Any], second: dict[str, Any]) -> str:
    return "".join(
        json.dumps({"chunk_id": cid, "model": model, "extraction": e}) + "\n"
        for cid, e in (("c1", first), ("c2", second))
    )


def test_a_run_config_names_the_scorer_judge_and_consumer_of_another_package(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "chunks.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in _chunks()), encoding="utf-8"
    )
    second = _extraction([], ["m4", "m5", "m6"], "tom", "book the van")
    (tmp_path / "reference.jsonl").write_text(
        _lines(
            "gold:hand",
            _extraction(["Invoice timing", "Friday delivery"], ["m1", "m2"], "ness", "pay"),
            second,
        ),
        encoding="utf-8",
    )
    (tmp_path / "challenger.jsonl").write_text(
        _lines(
            "other:model",
            _extraction(["invoice timing!", "Friday deliveries"], ["m1", "m9"], "ness", "pay"),
            {**second, "action_items": [{"text": "book the van", "owner": "sam"}]},
        ),
        encoding="utf-8",
    )
    config = {
        "chunks": "chunks.jsonl",
        "reference": {"file": "reference.jsonl"},
        "challengers": [{"file": "challenger.jsonl"}],
        "layers": ["extraction", "judge", "downstream"],
        "matcher": "exact",
        "judges": ["evidence"],
        # The five built-in consumers weigh 0.2 each; the added one joins at 0.2 and the daily
        # report steps out so the group still sums to 1.
        "weights": {"consumers": {"assignees": 0.2, "daily_report": 0}},
    }
    (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    ran = _chatledger(plugin_env, tmp_path, "run", "run.yaml", "--out", "out", "--format", "json")
    assert ran.returncode == 0, ran.stderr
    run = json.loads((tmp_path / "out" / "run.json").read_text("utf-8"))
    (model,) = run["models"]
    assert model["fields"]["topics"] == pytest.approx(0.75)
    assert model["layers"]["judge"] == pytest.approx((50 + 100 / 3 + 50) / 300 / 2 + 0.5)
    downstream = json.loads((tmp_path / "out" / "downstream.json").read_text("utf-8"))
    consumers = downstream["models"][model["name"]]["consumers"]
    assert consumers["assignees"]["agreement"] == pytest.approx(0.5)
    # The built-in consumers see no event on either side in two chunks (no evidence: left
    # out), so the added consumer carries the whole weight of the layer.
    left_out = downstream["models"][model["name"]]["left_out"]
    assert left_out == dict.fromkeys(("drift", "loops", "escalation", "arcs"), "no events")
    assert consumers["assignees"]["weight"] == pytest.approx(1.0)
    assert model["layers"]["downstream"] == pytest.approx(0.5)
    assert "daily_report" in consumers and consumers["daily_report"]["weight"] == 0.0
    assert run["consumer_weights"]["assignees"] == pytest.approx(0.2)
    # The gate reads the added consumer's figure like a built-in one's: 0.5 is below 0.9
    # (--strict: the point estimate; two chunks make no interval worth reading).
    gated = _chatledger(plugin_env, tmp_path, "gate", "out", "out", "--strict", "--rules",
                        "{consumers.assignees: {min: 0.9}}", "--format", "json")  # fmt: skip
    assert gated.returncode == 1, gated.stderr
    (outcome,) = json.loads(gated.stdout)["outcomes"]
    assert outcome["candidate"] == pytest.approx(0.5) and not outcome["passed"]
    # The same run without the package: each name is unknown, in one line listing the known.
    bare = dict(plugin_env, PYTHONPATH="")
    missing = _chatledger(bare, tmp_path, "run", "run.yaml", "--out", "out2")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        "error: run.yaml:1 [weights.consumers]: unknown downstream consumer 'assignees' (known: "
        "arcs, daily_report, drift, escalation, loops)"
    ]
    del config["weights"]
    (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    missing = _chatledger(bare, tmp_path, "run", "run.yaml", "--out", "out2")
    assert missing.returncode == 2
    (line,) = missing.stderr.strip().splitlines()
    assert line.startswith("error: run.yaml") and "unknown matcher 'exact'" in line


# --- the registry's own rules, on a group of this test's making ------------------------------


class Shape:
    """What the test registry holds: Shape subclasses."""


class Square(Shape):
    pass


@pytest.fixture
def shapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry[type[Shape]]:
    registry: Registry[type[Shape]] = Registry(
        "shape", group="chatledger-test.shapes", expects=Shape
    )
    registry.register("circle")(Shape)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return registry


def test_a_registry_loads_its_group_only_for_a_name_it_lacks(
    shapes: Registry[type[Shape]], tmp_path: Path
) -> None:
    _install(
        tmp_path / "site",
        "shapes-extra",
        {"chatledger-test.shapes": {"square": f"{__name__}:Square"}},
    )
    assert shapes.get("circle") is Shape and shapes.plugin_package("circle") is None
    assert not shapes._loaded  # a built-in name never reads the installed packages
    assert shapes.get("square") is Square and shapes.plugin_package("square") == "shapes-extra"
    assert shapes.names() == ["circle", "square"]
    with pytest.raises(InputError) as caught:
        shapes.get("triangle")
    assert str(caught.value) == "unknown shape 'triangle' (known: circle, square)"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"circle": f"{__name__}:Square"},
            "the chatledger-test.shapes entry point 'circle' of shapes-extra "
            f"({__name__}:Square): the shape name is already taken by a built-in one",
        ),
        (
            {"hexagon": "no_such_module_of_shapes:Hexagon"},
            "the chatledger-test.shapes entry point 'hexagon' of shapes-extra "
            "(no_such_module_of_shapes:Hexagon) does not load: ModuleNotFoundError: No module "
            "named 'no_such_module_of_shapes'",
        ),
        (
            {"oval": "json:dumps"},
            "the chatledger-test.shapes entry point 'oval' of shapes-extra (json:dumps): not a "
            "shape (a Shape class)",
        ),
    ],
)
def test_a_package_that_declares_a_bad_component_is_named(
    shapes: Registry[type[Shape]], tmp_path: Path, entry: dict[str, str], message: str
) -> None:
    _install(tmp_path / "site", "shapes-extra", {"chatledger-test.shapes": entry})
    with pytest.raises(PluginError) as caught:
        shapes.get("square")
    assert str(caught.value) == message
