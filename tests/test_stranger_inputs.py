"""Mistakes a stranger made on a fresh install: each is one exact line and exit 2 (or the
promised exit), never a traceback, never data dropped or changed without a word.

Found by running every command of the README from a fresh clone (no extras) against bad
input; each row here failed before its fix.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from test_cli_errors import EXAMPLES, RUN_YAML, Outcome, assert_one_error_line, chatledger


@pytest.fixture
def work(tmp_path: Path) -> Path:
    for name in ("chunks.jsonl", "reference.jsonl", "challenger.jsonl"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    (tmp_path / "run.yaml").write_text(RUN_YAML, encoding="utf-8")
    return tmp_path


def _only_error(result_err: str) -> str:
    lines = [line for line in result_err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


# --- a key written twice: YAML and JSON keep the last one silently ---------------------------


def test_a_gate_rule_written_twice_is_refused_not_overwritten(work: Path) -> None:
    # Before: the second `overall` replaced the first, the max_drop rule vanished and the
    # gate passed (exit 0) on the min rule alone.
    (work / "gate.yaml").write_text(
        "overall: {max_drop: 0.02}\nlayers.extraction: {min: 0.1}\noverall: {min: 0.1}\n",
        encoding="utf-8",
    )
    result = chatledger("gate", "r", "r", "--rules", "gate.yaml", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: gate.yaml:3:1: duplicate key 'overall' (first on line 1)"
    )


def test_a_run_config_key_written_twice_is_refused(work: Path) -> None:
    # Before: the second `challengers:` replaced the first list without a word.
    (work / "run.yaml").write_text(
        RUN_YAML + "challengers:\n  - {file: reference.jsonl, name: other}\n", encoding="utf-8"
    )
    result = chatledger("run", "run.yaml", "--out", "r", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: run.yaml:8:1: duplicate key 'challengers' (first on line 4)"
    )


def test_a_nested_duplicate_key_names_its_own_line(work: Path) -> None:
    (work / "run.yaml").write_text(
        RUN_YAML.replace(
            "stats: {bootstrap_resamples: 200}",
            "stats:\n  bootstrap_resamples: 200\n  bootstrap_resamples: 5",
        ),
        encoding="utf-8",
    )
    result = chatledger("run", "run.yaml", "--out", "r", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: run.yaml:9:3: duplicate key 'bootstrap_resamples' (first on line 8)"
    )


def test_a_json_gate_rules_file_with_a_key_twice_is_refused(work: Path) -> None:
    (work / "gate.json").write_text(
        json.dumps({"overall": {"max_drop": 0.02}})[:-1] + ', "overall": {"min": 0.1}}',
        encoding="utf-8",
    )
    result = chatledger("gate", "r", "r", "--rules", "gate.json", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == "error: gate.json: duplicate key 'overall'"


# --- wording -----------------------------------------------------------------------------------


def test_a_truncated_chunks_line_reads_once_at(work: Path) -> None:
    # Before: "not valid JSON (Unterminated string starting at at column 85)".
    text = (work / "chunks.jsonl").read_text(encoding="utf-8")
    (work / "chunks.jsonl").write_text(text[:84] + '"abc', encoding="utf-8")
    result = chatledger(
        "score", "--reference", "reference.jsonl", "--challenger", "challenger.jsonl",
        "--chunks", "chunks.jsonl", cwd=work,
    )  # fmt: skip
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: chunks.jsonl:1: not valid JSON (Unterminated string starting at column 85)"
    )


# --- CaSiNo exports close to the real format --------------------------------------------------

CASINO_DIALOGUE: dict[str, object] = {
    "dialogue_id": 7,
    "chat_logs": [
        {"text": "Hello! Ready for the trip?", "task_data": {}, "id": "mturk_agent_1"},
        {"text": "Yes, I need extra water.", "task_data": {}, "id": "mturk_agent_2"},
    ],
    "participant_info": {
        "mturk_agent_1": {"value2issue": {"High": "Food"}, "value2reason": {"High": "kids"}},
        "mturk_agent_2": {"value2issue": {"High": "Water"}, "value2reason": {"High": "hot"}},
    },
    "annotations": [["Yes, I need extra water.", "self-need"]],
}


def _casino(work: Path, dialogues: object, name: str = "casino.json") -> Outcome:
    (work / name).write_text(json.dumps(dialogues), encoding="utf-8")
    return chatledger("corpus", "import", "casino", name, "--out", "out", cwd=work)


def _changed(**chat_log_0: object) -> dict[str, object]:
    dialogue = json.loads(json.dumps(CASINO_DIALOGUE))
    dialogue["chat_logs"][0].update(chat_log_0)
    return dialogue


@pytest.mark.parametrize(
    ("dialogue", "says"),
    [
        # Before: the message's text was the four letters "None", imported with exit 0.
        (
            _changed(text=None),
            "casino.json:1 [1.chat_logs.0.text]: expected a string, got a JSON null",
        ),
        # Before: a third speaker nobody listed, imported with exit 0.
        (
            _changed(id="mturk_agent_9"),
            "casino.json:1 [1.chat_logs.0.id]: speaker 'mturk_agent_9' is not one of the "
            "dialogue's participants (mturk_agent_1, mturk_agent_2)",
        ),
        # Before: a traceback-free but placeless "not CaSiNo data" for the whole file.
        (
            {"dialogue_id": 8},
            "casino.json:1 [1.chat_logs]: missing (a CaSiNo dialogue has dialogue_id and "
            "chat_logs)",
        ),
        # Before: an internal error (exit 70): 'str' object has no attribute 'get'.
        (
            _changed(text="Submit-Deal", task_data="accept"),
            "casino.json:1 [1.chat_logs.0.task_data]: expected an object, got a JSON string",
        ),
    ],
    ids=["null text", "unknown speaker", "no chat_logs", "task_data a string"],
)
def test_a_bad_casino_dialogue_is_named_by_index_and_field(
    work: Path, dialogue: object, says: str
) -> None:
    result = _casino(work, [CASINO_DIALOGUE, dialogue])
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == f"error: {says}"
    assert not (work / "out" / "chunks.jsonl").exists()


def test_casino_as_one_dialogue_per_line_imports_the_same_chunks(work: Path) -> None:
    # Before: "not a JSON file (Extra data: line 2 column 1 (char …))", exit 2.
    second = dict(CASINO_DIALOGUE, dialogue_id=8)
    listed = _casino(work, [CASINO_DIALOGUE, second])
    assert listed.code == 0, listed.err
    expected = (work / "out" / "chunks.jsonl").read_text(encoding="utf-8")
    (work / "lines.jsonl").write_text(
        json.dumps(CASINO_DIALOGUE) + "\n\n" + json.dumps(second) + "\n", encoding="utf-8"
    )
    lines = chatledger("corpus", "import", "casino", "lines.jsonl", "--out", "out2", cwd=work)
    assert lines.code == 0, lines.err
    assert (work / "out2" / "chunks.jsonl").read_text(encoding="utf-8") == expected
    assert expected.count("\n") == 2


def test_a_bad_line_of_casino_jsonl_is_named_by_line(work: Path) -> None:
    (work / "lines.jsonl").write_text(
        json.dumps(CASINO_DIALOGUE) + "\n" + json.dumps(_changed(text=None)) + "\n",
        encoding="utf-8",
    )
    result = chatledger("corpus", "import", "casino", "lines.jsonl", "--out", "out", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: lines.jsonl:2 [chat_logs.0.text]: expected a string, got a JSON null"
    )


def test_one_casino_dialogue_object_is_refused_saying_what_it_got(work: Path) -> None:
    result = _casino(work, CASINO_DIALOGUE)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: casino.json: not CaSiNo data: expected a JSON list of dialogues with "
        "dialogue_id and chat_logs (or one dialogue per line), got a JSON object"
    )


# --- a provider's SDK not installed (`pip install chatledger`, no extras) ---------------------


@pytest.fixture
def without_sdks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment where ``import openai`` and ``import anthropic`` fail, as after
    ``pip install chatledger`` without their extras (a keyed environment: the key is there)."""
    shadow = tmp_path_factory.mktemp("no-sdks")
    for module in ("openai", "anthropic"):
        (shadow / module).mkdir()
        (shadow / module / "__init__.py").write_text(
            "raise ImportError('not installed here')\n", encoding="utf-8"
        )
    return {"PYTHONPATH": str(shadow), "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}


@pytest.mark.parametrize(
    ("model", "extra"),
    [("openai:gpt-5.2", "openai"), ("anthropic:claude-opus-4-6", "anthropic")],
)
def test_extract_without_the_sdk_names_the_extra_in_one_line_and_writes_nothing(
    work: Path, without_sdks: dict[str, str], model: str, extra: str
) -> None:
    # Before: exit 1 after every chunk's call failed, a summary table, "36 call(s) … failed"
    # and "hint: run the same command again to retry them" — which could never help.
    result = chatledger(
        "extract", "--model", model, "--chunks", "chunks.jsonl", "--out", "out.jsonl",
        "--cache-dir", "cache", cwd=work, env=without_sdks,
    )  # fmt: skip
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        f"error: calling {extra} models needs the optional extra '{extra}' "
        f"({extra} not installed): pip install 'chatledger[{extra}]'"
    )
    assert not (work / "out.jsonl").exists()


def test_a_run_whose_model_judge_has_no_sdk_stops_in_one_line(
    work: Path, without_sdks: dict[str, str]
) -> None:
    (work / "run.yaml").write_text(
        RUN_YAML.replace(
            "layers: [extraction, downstream]",
            "layers: [extraction, judge]\njudges: [{name: opus, model: anthropic:claude-opus-4-6}]",
        ),
        encoding="utf-8",
    )
    env = {**without_sdks, "CHATLEDGER_CACHE_DIR": str(work / "cache")}
    result = chatledger("run", "run.yaml", "--out", "r", "--no-report", cwd=work, env=env)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: calling anthropic models needs the optional extra 'anthropic' "
        "(anthropic not installed): pip install 'chatledger[anthropic]'"
    )


# --- a run directory whose files were cut short -------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("run")
    for name in ("chunks.jsonl", "reference.jsonl", "challenger.jsonl"):
        shutil.copy(EXAMPLES / name, work / name)
    (work / "run.yaml").write_text(RUN_YAML, encoding="utf-8")
    done = chatledger("run", "run.yaml", "--out", "r", "--no-report", cwd=work)
    assert done.code == 0, done.err
    return work / "r"


@pytest.mark.parametrize(
    ("name", "says"),
    [
        (
            "scores.parquet",
            "not a readable score table (Could not open Parquet input source "
            "'c/scores.parquet': Parquet magic bytes not found in footer. Either the file is "
            "corrupted or this is not a parquet file.)",
        ),
        ("downstream.json", "not a readable downstream file (Input data was truncated)"),
    ],
)
def test_report_on_a_run_file_cut_short_is_one_line_not_a_bug(
    finished_run: Path, tmp_path: Path, name: str, says: str
) -> None:
    # Before: exit 70, "internal error: ArrowInvalid: …" / "internal error: DecodeError: …".
    copy = tmp_path / "c"
    shutil.copytree(finished_run, copy)
    (copy / name).write_bytes((finished_run / name).read_bytes()[:100])
    result = chatledger("report", "c", cwd=tmp_path)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == f"error: c/{name}: {says}"


# --- numbers an option cannot mean --------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "says"),
    [
        # Before: a table for a drop of nan (every row "—"), exit 0.
        (
            ("--detect", "nan"),
            "[detect]: the drop to detect is on the figures' 0–1 scale: give a number in "
            "(0, 1], e.g. 0.02 (got nan)",
        ),
        # Before: "≈ 2" conversations to tell a drop of 2 on a 0–1 scale, exit 0.
        (
            ("--detect", "2"),
            "[detect]: the drop to detect is on the figures' 0–1 scale: give a number in "
            "(0, 1], e.g. 0.02 (got 2)",
        ),
        # Before: exit 70, "internal error: ValueError: power must be in (0, 1)".
        (
            ("--power", "1.5"),
            "[power]: power is a probability: give a number in (0, 1), e.g. 0.8 (got 1.5)",
        ),
    ],
    ids=["detect nan", "detect 2", "power 1.5"],
)
def test_plan_refuses_a_drop_or_power_it_cannot_mean(
    finished_run: Path, option: tuple[str, str], says: str
) -> None:
    result = chatledger("plan", "r", *option, cwd=finished_run.parent)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == f"error: {says}"


@pytest.mark.parametrize("day", ["2026-13-10", "03/10/2026", "20260310"])
def test_report_day_refuses_a_day_that_is_not_a_date(work: Path, day: str) -> None:
    # Before: "nothing to report on 2026-13-10; days with a report: …" (every day listed).
    result = chatledger(
        "report-day", "--extractions", "challenger.jsonl", "--chunks", "chunks.jsonl",
        "--day", day, cwd=work,
    )  # fmt: skip
    assert_one_error_line(result, 2)
    assert result.err_lines == [
        f"error: Invalid value for '--day': '{day}' is not a date: write YYYY-MM-DD",
        "hint: try 'chatledger report-day --help'",
    ]


# --- where a file is, and what it is ----------------------------------------------------------


def test_an_output_folder_that_takes_no_file_names_the_file_asked_for(work: Path) -> None:
    # Before: "error: /proc/.emails.jsonl.2371leut.part: cannot write: …" — a temporary name.
    result = chatledger(
        "structbench", "generate", "--n", "5", "--out", "/proc/emails.jsonl", cwd=work
    )
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: /proc/emails.jsonl: cannot write: No such file or directory"
    )


def test_a_config_path_naming_a_folder_says_so(work: Path) -> None:
    # Before: "file not found: …/adir" for a folder that is there.
    (work / "adir").mkdir()
    (work / "run.yaml").write_text(
        RUN_YAML.replace("{file: challenger.jsonl, name: cheap}", "{file: adir, name: cheap}"),
        encoding="utf-8",
    )
    result = chatledger("run", "run.yaml", "--out", "r", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        f"error: run.yaml:5 [challengers.0.file]: is a directory, expected a file: {work / 'adir'}"
    )


def test_an_annotated_corpus_without_its_kind_is_told_the_kinds_that_read_it(
    work: Path,
) -> None:
    # Before: the kinds listed were the chat apps only, though ami and casino read it.
    (work / "casino.json").write_text(json.dumps([CASINO_DIALOGUE]), encoding="utf-8")
    result = chatledger("corpus", "import", "casino.json", "--out", "out", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: casino.json: cannot tell which app this export comes from (known: imessage, "
        "slack, messenger, instagram, telegram, discord, signal, whatsapp, csv); give the kind, "
        "e.g. chatledger corpus import whatsapp PATH (annotated corpora are named too: "
        "chatledger corpus import ami|casino PATH)"
    )


# --- a value of the wrong type in an extraction ------------------------------------------------


@pytest.mark.parametrize("value", ['"0.9"', "true"])
def test_a_confidence_of_the_wrong_type_is_an_invalid_line_not_a_number(
    work: Path, value: str
) -> None:
    # Before: lax validation read "0.9" as 0.9 and true as 1.0: the line counted as valid
    # although `chatledger schema v3` (a JSON Schema: "type": "number") refuses it.
    lines = (work / "challenger.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    items = [
        (name, item)
        for name, listed in first["extraction"].items()
        if isinstance(listed, list)
        for item in listed
        if isinstance(item, dict) and "confidence" in item
    ]
    name, item = items[0]
    index = first["extraction"][name].index(item)
    item["confidence"] = json.loads(value)
    lines[0] = json.dumps(first)
    (work / "challenger.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = chatledger(
        "score", "--reference", "reference.jsonl", "--challenger", "challenger.jsonl",
        "--chunks", "chunks.jsonl", "--format", "json", cwd=work,
    )  # fmt: skip
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["invalid"] == 1
    assert report["problems"] == [
        f"challenger.jsonl:1 [extraction.{name}.{index}.confidence]: Input should be a valid number"
    ]


# --- files of the user's that a command would have replaced -------------------------------------


def test_examples_does_not_replace_a_users_file_of_the_same_name(tmp_path: Path) -> None:
    # Before: `chatledger examples .` in a folder holding the user's own gold.jsonl replaced
    # it with the bundled gold, exit 0.
    (tmp_path / "gold.jsonl").write_text("MY OWN GOLD\n", encoding="utf-8")
    result = chatledger("examples", ".", cwd=tmp_path)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: gold.jsonl: is already there with other content: not overwritten (choose an "
        "empty folder, or pass --overwrite)"
    )
    assert (tmp_path / "gold.jsonl").read_text(encoding="utf-8") == "MY OWN GOLD\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold.jsonl"]  # nothing half-written
    # Run again on its own files: nothing differs, nothing refused; --overwrite replaces.
    assert chatledger("examples", ".", "--overwrite", cwd=tmp_path).code == 0
    again = chatledger("examples", ".", cwd=tmp_path)
    assert again.code == 0, again.err
    assert (tmp_path / "gold.jsonl").read_text(encoding="utf-8").startswith('{"chunk_id"')


def test_a_chunk_timestamp_that_is_not_iso_is_named_with_its_file_and_line(work: Path) -> None:
    # Before: score took it (exit 0); pipeline, report-day and downstream said only
    # "[messages.0.timestamp]: chunk '…': timestamp 'yesterday' is not …" — no file, no line.
    lines = (work / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["messages"][0]["timestamp"] = "yesterday"
    lines[0] = json.dumps(first)
    (work / "chunks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    message_id = first["messages"][0]["id"]
    for args in (
        ("score", "--reference", "reference.jsonl", "--challenger", "challenger.jsonl"),
        ("pipeline", "--extractions", "challenger.jsonl"),
    ):
        result = chatledger(*args, "--chunks", "chunks.jsonl", cwd=work)
        assert_one_error_line(result, 2)
        assert _only_error(result.err) == (
            f"error: chunks.jsonl:1 [messages]: message 0 ({message_id!r}): timestamp "
            "'yesterday' is not an ISO 8601 date-time (e.g. 2026-02-03T18:04:00Z)"
        )


def test_compare_of_runs_on_other_chunks_says_so(finished_run: Path, tmp_path: Path) -> None:
    # Before: a Δ per figure as if the model had changed, with no word that the two runs
    # scored other chunks. The later run here adds a copy of the one chunk under a new id.
    work = finished_run.parent
    for name in ("chunks.jsonl", "reference.jsonl", "challenger.jsonl"):
        line = json.loads((work / name).read_text(encoding="utf-8"))
        copy = dict(line, chunk_id=line["chunk_id"] + "-copy")
        if "conversation_id" in copy:
            copy["conversation_id"] = str(copy["conversation_id"]) + "-copy"
        (tmp_path / name).write_text(json.dumps(line) + "\n" + json.dumps(copy) + "\n")
    shutil.copy(work / "run.yaml", tmp_path / "run.yaml")
    done = chatledger("run", "run.yaml", "--out", "r", "--no-report", cwd=tmp_path)
    assert done.code == 0, done.err
    shown = chatledger("compare", str(finished_run), "r", cwd=tmp_path)
    assert shown.code == 0, shown.err
    assert shown.out.splitlines()[-1] == (
        "note: the runs did not score the same chunks (1 before, 2 after; 0 only before, 1 "
        "only after): each Δ mixes the change with the change of data (chatledger gate pairs "
        "two runs on the same chunks)"
    )
    as_json = chatledger("compare", str(finished_run), "r", "--format", "json", cwd=tmp_path)
    assert json.loads(as_json.out)["chunks"] == {
        "same": False, "before": 1, "after": 2, "only_before": 0, "only_after": 1,
    }  # fmt: skip
    same = chatledger("compare", str(finished_run), str(finished_run), "--format", "json", cwd=work)
    assert json.loads(same.out)["chunks"]["same"] is True


# --- a name as the tool printed it --------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "plain"), [("local:nope", "nope"), ("local:/x/y.gguf", "/x/y.gguf")]
)
def test_serve_local_takes_the_local_prefix_that_its_list_prints(
    work: Path, written: str, plain: str
) -> None:
    # Before: `serve-local --list` prints `local:smollm2-135m`, and `serve-local
    # local:smollm2-135m` answered "unknown local model 'local:smollm2-135m'".
    prefixed = chatledger("serve-local", written, cwd=work)
    assert_one_error_line(prefixed, 2)
    assert prefixed.err == chatledger("serve-local", plain, cwd=work).err
    assert "'local:" not in prefixed.err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("run", "adir", "--out", "r"), "adir: is a directory, expected a run config"),
        (("gate", "r", "r", "--rules", "adir"), "adir: is a directory, expected a rules file"),
        (
            ("score", "--reference", "reference.jsonl", "--challenger", "challenger.jsonl",
             "--chunks", "chunks.jsonl", "--weights", "adir"),
            "adir: is a directory, expected a weights file",
        ),
    ],
    ids=["run config", "gate rules", "weights"],
)  # fmt: skip
def test_a_folder_given_as_a_config_file_is_named_as_a_folder(
    work: Path, args: tuple[str, ...], says: str
) -> None:
    # Before: "run config not found" / "rules file not found (nor YAML rules written inline)" /
    # "weights file not found" — for a folder that is there.
    (work / "adir").mkdir()
    result = chatledger(*args, cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == f"error: {says}"


# --- an AMI release with a value its reader cannot read -----------------------------------------


def test_an_ami_word_time_that_is_not_a_number_is_one_line(tmp_path: Path) -> None:
    # Before: exit 70, "internal error: ValueError: could not convert string to float: 'abc'".
    from conftest import SHARED_DATA, require_shared

    release = require_shared(SHARED_DATA / "ami" / "ami_public_manual_1.6.2", "the AMI sample")
    copy = tmp_path / "ami"
    shutil.copytree(release, copy)
    words = copy / "words" / "ES2002a.B.words.xml"
    text = words.read_text(encoding="iso-8859-1")
    first = text.index('starttime="')
    end = text.index('"', first + len('starttime="'))
    words.write_text(text[:first] + 'starttime="abc' + text[end:], encoding="iso-8859-1")
    result = chatledger("corpus", "import", "ami", "ami", "--out", "out", cwd=tmp_path)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: ami/words/ES2002a.B.words.xml [ES2002a.B.words0.starttime]: starttime 'abc' is "
        "not a number of seconds from the meeting's start (0 to 31,622,400)"
    )


# --- a config's bad value named by its line as well as its key path -----------------------------


def test_a_config_error_names_the_line_of_its_key(work: Path) -> None:
    # Before: "run.yaml [challengers.1.samples]: …" — the key path, no line.
    (work / "run.yaml").write_text(
        RUN_YAML.replace(
            "  - {file: challenger.jsonl, name: cheap}\n",
            "  - {file: challenger.jsonl, name: cheap}\n"
            "  - file: reference.jsonl\n"
            "    name: other\n"
            "    samples: 0\n",
        ),
        encoding="utf-8",
    )
    result = chatledger("run", "run.yaml", "--out", "r", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: run.yaml:8 [challengers.1.samples]: Input should be greater than or equal to 1"
    )


def test_a_gate_rule_error_names_the_line_of_its_figure(finished_run: Path) -> None:
    # A figure name holds a dot (fields.claims): the line is found all the same.
    work = finished_run.parent
    (work / "gate.yaml").write_text(
        "overall: {max_drop: 0.02}\n\nfields.claims:\n  max_drop: 0.05\n  mni: 0.3\n",
        encoding="utf-8",
    )
    result = chatledger("gate", "r", "r", "--rules", "gate.yaml", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == "error: gate.yaml:5 [fields.claims.mni]: unknown key"


# --- money that overflows: "$/chunk inf" -----------------------------------------------------


def test_a_price_beyond_any_real_one_is_refused_naming_the_file_and_field(work: Path) -> None:
    # 1e308 per million tokens: every call's cost was inf, the leaderboard said "$/chunk inf".
    (work / "prices.json").write_text(
        json.dumps({"openai-compatible:*": {"input": 0.5, "output": 1e308}}), encoding="utf-8"
    )
    result = chatledger(
        "extract", "--model", "offline:rules", "--chunks", "chunks.jsonl", "--out", "o.jsonl",
        "--prices", "prices.json", cwd=work,
    )  # fmt: skip
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: prices.json:1 [openai-compatible:*.output]: output price 1e+308 is beyond any "
        "real price (at most 1e+12 USD per million tokens): its costs would overflow; prices "
        "are per million tokens, not per token"
    )
    assert not (work / "o.jsonl").exists()


def test_costs_that_add_up_beyond_a_float_are_refused_at_their_line(work: Path) -> None:
    # Each line's 1e308 is a finite number; two of them are inf, which the run wrote into
    # run.json (and no reader could read it back).
    from chatledger.core import InputError
    from chatledger.runs import execute_run, load_run_config

    chunk = json.loads((work / "chunks.jsonl").read_text(encoding="utf-8"))
    line = json.loads((work / "challenger.jsonl").read_text(encoding="utf-8"))
    reference = json.loads((work / "reference.jsonl").read_text(encoding="utf-8"))
    chunks, challenger, gold = [], [], []
    for n in (1, 2):
        chunks.append(json.dumps({**chunk, "chunk_id": f"c-{n}"}))
        gold.append(json.dumps({**reference, "chunk_id": f"c-{n}"}))
        usage = {"input_tokens": 10, "output_tokens": 10, "cost_usd": 1e308, "latency_s": 1.0}
        challenger.append(json.dumps({**line, "chunk_id": f"c-{n}", "usage": usage}))
    for name, rows in (("chunks", chunks), ("reference", gold), ("challenger", challenger)):
        (work / f"{name}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as refused:
        execute_run(load_run_config(work / "run.yaml"), work / "run")
    assert str(refused.value) == (
        f"{work / 'challenger.jsonl'}:2 [usage.cost_usd]: the file's costs add up to more than "
        "a number can hold at this line (cost_usd 1e+308): a line's cost is in USD"
    )
    assert not (work / "run" / "run.json").exists()
