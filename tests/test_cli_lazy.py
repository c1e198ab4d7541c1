"""Lazy commands: ``chatledger --help`` lists every command without importing its module, and
what it prints is what the fully loaded CLI prints (read from subprocesses, as a user runs it)."""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatledger.cli import _app

ALL_MODULES = sorted({module for module, _ in _app.LAZY_COMMANDS.values()})


def run(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


# The modules loaded by the end of the process, on one line of stderr: -X importtime does not
# log a module that importlib.import_module loads (the lazy packages' names) in itself.
LOADED = "modules loaded:"
_AT_EXIT = (
    "import atexit, sys\n"
    f"atexit.register(lambda: print({LOADED!r}, *sorted(sys.modules), file=sys.stderr))\n"
)


def modules_imported(stderr: str) -> set[str]:
    lines = [line for line in stderr.splitlines() if line.startswith(LOADED)]
    assert len(lines) == 1, stderr[-2000:]
    return set(lines[0].removeprefix(LOADED).split())


def messages(stderr: str) -> list[str]:
    """What the process said on stderr, without the lines the instruments add."""
    return [line for line in stderr.splitlines() if not line.startswith(("import time:", LOADED))]


LAZY = _AT_EXIT + "from chatledger.cli._app import main; sys.exit(main(sys.argv[1:]))"
EAGER = (
    _AT_EXIT + "import importlib\n"
    f"for m in {ALL_MODULES!r}: importlib.import_module('chatledger.cli.' + m)\n"
    "from chatledger.cli._app import main; sys.exit(main(sys.argv[1:]))"
)


def test_the_table_is_what_the_command_modules_register() -> None:
    for module in ALL_MODULES:
        importlib.import_module(f"chatledger.cli.{module}")
    from typer.main import get_command

    group = get_command(_app.app)
    built = dict(group.commands)
    # The same commands (the order they register in follows the order other tests in the same
    # process happened to import their modules; the help lists the table's order).
    assert sorted(built) == sorted([*_app._OWN_COMMANDS, *_app.LAZY_COMMANDS])
    for name, (module, summary) in _app.LAZY_COMMANDS.items():
        command = built[name]
        first = inspect.cleandoc(command.help or "").split("\n\n")[0]
        assert first == summary, f"{name}: update LAZY_COMMANDS in cli/_app.py"
        callback = command.callback
        if callback is not None and name not in ("budget", "corpus", "structbench"):
            assert callback.__module__ == f"chatledger.cli.{module}", name


@pytest.mark.parametrize(
    "args",
    [("--help",), ("score", "--help"), ("budget", "--help"), ("scor",), ("nosuch",), ()],
    ids=["help", "score help", "budget help", "typo", "unknown", "no command"],
)
def test_lazy_and_fully_loaded_print_the_same(args: tuple[str, ...], tmp_path: Path) -> None:
    lazy, eager = run(LAZY, *args, cwd=tmp_path), run(EAGER, *args, cwd=tmp_path)
    assert (lazy.returncode, lazy.stdout) == (eager.returncode, eager.stdout)
    errors, eager_errors = messages(lazy.stderr), messages(eager.stderr)
    assert errors == eager_errors
    if args == ("scor",):
        assert "Did you mean 'score', 'corpus'?" in errors[0]  # corpus is a lazy command


@pytest.mark.parametrize("args", [("--help",), ("score", "--help")], ids=["help", "score help"])
def test_help_loads_no_command_module_and_no_unused_rich_module(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    done = run(LAZY, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    names = modules_imported(done.stderr)
    assert "chatledger.cli._app" in names
    assert not {f"chatledger.cli.{m}" for m in ALL_MODULES} & names
    assert not {"rich.markdown", "rich.traceback", "markdown_it", "pygments", "pydantic"} & names
    assert "Usage: chatledger" in done.stdout


def test_the_rich_stand_ins_defer_to_the_real_classes() -> None:
    code = (
        "import sys\n"
        "from chatledger.cli import _app\n"
        "_app._import_rich_help()\n"
        "import typer.rich_utils as r\n"
        "assert 'rich.markdown' not in sys.modules\n"
        "text = r.Markdown('**x**')\n"
        "from rich.markdown import Markdown\n"
        "assert type(text) is Markdown\n"
        "assert r.Traceback.from_exception is not None\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "examples"


def test_score_loads_only_what_scoring_uses(tmp_path: Path) -> None:
    args = ["score", "--format", "json", "--chunks", str(EXAMPLES / "chunks.jsonl")]
    for role in ("reference", "challenger"):
        args += [f"--{role}", str(EXAMPLES / f"{role}.jsonl")]
    done = run(LAZY, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    names = modules_imported(done.stderr)
    # scipy.optimize for the assignment (its public function, imported on first use); no
    # other command's machinery
    assert {"chatledger.scoring._stream", "rapidfuzz", "msgspec", "scipy.optimize"} <= names
    unused = {"scipy.stats", "yaml", "chatledger.corpus._ami"}
    assert not unused & names
    assert not {f"chatledger.cli.{m}" for m in ALL_MODULES} & names


def _small_run(folder: Path) -> Path:
    """A real run of four chunks in two conversations (extraction and downstream)."""
    import json

    from chatledger.runs import execute_run, load_run_config

    chunks, gold, other = [], [], []
    for i in range(4):
        chunks.append(
            {
                "chunk_id": f"c{i}",
                "conversation_id": f"v{i // 2}",
                "participants": ["Ana", "Ben"],
                "messages": [{"id": f"c{i}m1", "speaker": "Ana", "text": "budget"}],
            }
        )
        gold.append({"chunk_id": f"c{i}", "model": "gold", "extraction": {"topics": ["budget"]}})
        other.append({"chunk_id": f"c{i}", "model": "other", "extraction": {"topics": []}})
    for name, rows in (("chunks", chunks), ("gold", gold), ("other", other)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {
        "chunks": "chunks.jsonl",
        "reference": {"file": "gold.jsonl"},
        "challengers": [{"file": "other.jsonl"}],
        "layers": ["extraction", "downstream"],
    }
    (folder / "run.yaml").write_text(json.dumps(config))
    execute_run(load_run_config(folder / "run.yaml"), folder / "out")
    return folder / "out"


def test_gate_and_stats_load_only_what_reading_a_run_uses(tmp_path: Path) -> None:
    # Readers of a run resample per-unit statistics with numpy: neither scipy (scipy.stats
    # alone was 1 s of a 1.7 s gate) nor the machinery that makes runs (model calls, the
    # executors) is theirs to load (benchmarks/bench_readers.py measures what is left).
    out = _small_run(tmp_path)
    unused = {
        "scipy.stats",
        "scipy.special",
        "scipy.optimize",
        "chatledger.providers",
        "chatledger.extraction",
        "chatledger.runs._execute",
        "chatledger.runs._config",
        # the field scorers: the gate reads per-unit statistics (each stage's per-chunk table,
        # Parquet read column by column with pyarrow since issue 34 — no model holds its rows
        # in memory) and recomputes figures with scoring's run-level arithmetic only
        "chatledger.scoring._fields",
        "chatledger.scoring._run",
        "chatledger.scoring._stream",
        # a conversation run's record: no structbench or what-breaks classes; the JUnit
        # writer's XML only for --format junit
        "chatledger.record._structbench",
        "chatledger.record._what_breaks",
        "xml.etree.ElementTree",
        # no chunk, extraction or schema class: the consumers' counts are read from the stage
        "chatledger.core._chunk",
        "chatledger.core._record",
        "chatledger.core._schema",
        # the per-chunk tables are read as single files (ParquetFile), not as a dataset
        "pyarrow.dataset",
        "pyarrow.compute",
        # no matcher: the consumers' composite reads their counts, it matches no events
        "rapidfuzz",
        "chatledger.matching",
        # the statistics a reader resamples with, not the sequential, PPI or power code
        "chatledger.stats._sequential",
        "chatledger.stats._ppi",
        "chatledger.stats._power",
    }
    # --strict: the small run has too few conversations for an interval (the rule would be
    # undecided, exit 3); the paired figures are computed either way
    gated = run(LAZY, "gate", str(out), str(out), "--rules", "{overall: {min: 0.1}}",
                "--strict", "--format", "json", cwd=tmp_path)  # fmt: skip
    assert gated.returncode == 0, gated.stderr[-2000:]
    names = modules_imported(gated.stderr)
    assert "chatledger.runs._paired" in names and not unused & names
    shown = run(LAZY, "stats", str(out), "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert not unused & modules_imported(shown.stderr)


@pytest.mark.parametrize("package", ["runs", "scoring", "stats"])
def test_a_lazy_package_loads_each_name_from_its_module(package: str) -> None:
    lazy = importlib.import_module(f"chatledger.{package}")
    assert set(lazy._WHERE) == set(lazy.__all__)
    for name in lazy.__all__:
        module = importlib.import_module(f"chatledger.{package}.{lazy._WHERE[name]}")
        assert getattr(lazy, name) is getattr(module, name)


def test_the_core_package_loads_its_pydantic_classes_on_first_use() -> None:
    import chatledger.core as core

    assert set(core._WHERE) <= set(core.__all__)
    for name in core.__all__:
        where = core._WHERE.get(name)
        if where is not None:
            module = importlib.import_module(f"chatledger.core.{where}")
            assert getattr(core, name) is getattr(module, name)
        else:
            assert name in vars(core)  # loaded with the package


def test_the_record_package_loads_its_other_records_on_first_use() -> None:
    import chatledger.record as record

    assert set(record._WHERE) <= set(record.__all__)
    for name in record.__all__:
        where = record._WHERE.get(name)
        value = getattr(record, name)
        if where is not None and name != "RunRecord":  # the union is made anew
            assert value is getattr(importlib.import_module(f"chatledger.record.{where}"), name)
    assert "StructbenchRun" in str(record.RunRecord)


def test_the_cli_scans_no_pydantic_plugins_unless_told_to(monkeypatch: pytest.MonkeyPatch) -> None:
    # pydantic scans every installed distribution's entry points for plugins when it builds
    # its first model (~0.03 s a command); the CLI opts out, keeping a setting the user made.
    from chatledger.cli import PYDANTIC_PLUGINS_ENV, _no_pydantic_plugins

    monkeypatch.delenv(PYDANTIC_PLUGINS_ENV, raising=False)
    _no_pydantic_plugins()
    assert os.environ[PYDANTIC_PLUGINS_ENV] == "__all__"
    monkeypatch.setenv(PYDANTIC_PLUGINS_ENV, "")  # "": every plugin allowed, as the user asked
    _no_pydantic_plugins()
    assert os.environ[PYDANTIC_PLUGINS_ENV] == ""


def test_the_cli_asks_for_one_blas_thread_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # numpy and scipy start OpenBLAS's pool of a thread a core when imported (~0.06 s of CPU a
    # process here); the CLI's matrix products are small and a run's parallelism is processes.
    from chatledger.cli import BLAS_THREADS_ENV, _one_blas_thread

    monkeypatch.delenv(BLAS_THREADS_ENV, raising=False)
    _one_blas_thread()
    assert os.environ[BLAS_THREADS_ENV] == "1"
    monkeypatch.setenv(BLAS_THREADS_ENV, "8")  # the user's setting is kept
    _one_blas_thread()
    assert os.environ[BLAS_THREADS_ENV] == "8"


def test_the_field_scorers_are_registered_when_their_registry_is_read() -> None:
    # FIELD_SCORERS is filled by importing the module that defines the 17 scorers; a fresh
    # process that reads the registry first must find all of them.
    code = (
        "from chatledger.scoring import FIELD_SCORERS\n"
        "from chatledger.core import FIELDS_V3\n"
        "assert sorted(FIELD_SCORERS.names()) == sorted(FIELDS_V3), FIELD_SCORERS.names()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
