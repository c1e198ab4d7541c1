"""Executors, stages and the run record: the same bytes whatever computes the units, a rerun
that skips finished stages, and run.json read back by the classes that wrote it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from chatledger.core import InputError
from chatledger.demo import prepare_demo
from chatledger.record import SCHEMA_VERSION, ConversationRun, read_run_record
from chatledger.runs import _execute as execute_module
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._executors import ExecutorSpec, parse_executor

OUTPUTS = ("scores.parquet", "downstream.json", "judgements.jsonl")


def _challengers(config: Path) -> int:
    return len(load_run_config(config).challengers)


def _digests(run_dir: Path) -> dict[str, str]:
    return {f: hashlib.sha256((run_dir / f).read_bytes()).hexdigest() for f in OUTPUTS}


@pytest.fixture(scope="module")
def demo_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's corpus and its challengers (36 chunks, 12 conversations), all three layers."""
    return prepare_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def local_run(demo_config: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local") / "run"
    execute_run(load_run_config(demo_config), out, executor="local")
    return out


@pytest.mark.parametrize("executor", ["processes:2", "dask"])
def test_every_executor_writes_the_same_bytes(
    executor: str,
    demo_config: Path,
    local_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Small batches, so that the 36 chunks are spread over several units and both workers.
    monkeypatch.setattr(execute_module, "MIN_BATCH_CHUNKS", 5)
    out = tmp_path / "run"
    result = execute_run(load_run_config(demo_config), out, executor=executor)
    assert _digests(out) == _digests(local_run)
    record = read_run_record(out)
    assert isinstance(record, ConversationRun)
    assert record.executor == ("processes:2" if executor == "processes:2" else "dask")
    # More than one unit per model really ran.
    scored = [s for s in record.stages if s.stage == "score"]
    assert len(scored) == _challengers(demo_config) and len(scored) >= 6
    assert all(s.units > 1 and not s.reused for s in scored)
    assert result.record is not None and result.record.models == record.models


def test_a_rerun_skips_finished_stages_and_writes_the_same_bytes(
    demo_config: Path, local_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"

    # The first run dies after the layer stages, in the statistics (as a kill would).
    def crash(*args: object, **kwargs: object) -> dict[str, object]:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(execute_module, "compute_run_stats", crash)
        with pytest.raises(KeyboardInterrupt):
            execute_run(load_run_config(demo_config), out)
    assert not (out / "run.json").exists()
    challengers = _challengers(demo_config)
    assert len(list((out / "stages").glob("*/score.json"))) == challengers

    units: list[int] = []
    real = execute_module._Run.execute

    def counting(self: execute_module._Run) -> object:
        original, original_imap = self.pool.map, self.pool.imap

        def map_and_count(fn: object, batch: list[object]) -> list[object]:
            units.append(len(batch))
            return original(fn, batch)  # type: ignore[arg-type]

        def imap_and_count(
            fn: object, batch: list[object], heads: Sequence[object] = ()
        ) -> Iterator[object]:
            units.append(len(batch) + len(heads))
            return original_imap(fn, batch, heads)  # type: ignore[arg-type]

        self.pool.map = map_and_count  # type: ignore[method-assign]
        self.pool.imap = imap_and_count  # type: ignore[method-assign]
        return real(self)

    monkeypatch.setattr(execute_module._Run, "execute", counting)
    execute_run(load_run_config(demo_config), out)
    record = read_run_record(out)
    assert isinstance(record, ConversationRun)
    layer_stages = [s for s in record.stages if s.stage in ("score", "judge", "downstream")]
    assert len(layer_stages) == 3 * challengers and all(s.reused for s in layer_stages)
    # Only the index and the reference's facts, then the judges' audit and the challengers'
    # facts (one judge: they run beside the batches, and there is none); no batch.
    assert units == [2, 1 + challengers]
    assert _digests(out) == _digests(local_run)


def test_an_edited_file_recomputes_only_its_model(
    demo_config: Path, local_run: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    shutil.copytree(demo_config.parent, folder)
    config = folder / demo_config.name
    out = tmp_path / "run"
    execute_run(load_run_config(config), out)
    # Same records, one byte more (a trailing blank line is skipped by the reader).
    edited = folder / "challengers" / "offline-rules.jsonl"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    execute_run(load_run_config(config), out)
    record = read_run_record(out)
    assert isinstance(record, ConversationRun)
    recomputed = {s.model for s in record.stages if s.model and not s.reused}
    assert recomputed == {"offline:rules"}
    assert _digests(out)["scores.parquet"] == _digests(local_run)["scores.parquet"]


def test_run_json_round_trips_through_the_record(local_run: Path) -> None:
    record = read_run_record(local_run)
    assert isinstance(record, ConversationRun)
    data = json.loads((local_run / "run.json").read_text(encoding="utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION and data["task"] == "conversation"
    assert record.model_dump(mode="json") == data
    again = tmp = local_run.parent / "copy"
    tmp.mkdir()
    record.write(again)
    assert read_run_record(again) == record
    # Provenance: every input with its content hash.
    roles = [i.role for i in record.inputs]
    assert roles[:2] == ["chunks", "reference"]
    assert roles[2:] == [f"challenger:{m.name}" for m in record.models]
    assert all(i.sha256 and len(i.sha256) == 64 for i in record.inputs)


def test_a_newer_or_broken_run_json_is_refused_in_one_line(local_run: Path, tmp_path: Path) -> None:
    data = json.loads((local_run / "run.json").read_text(encoding="utf-8"))
    (tmp_path / "run.json").write_text(json.dumps({**data, "schema_version": 9}))
    with pytest.raises(InputError, match=r"newer ChatLedger \(schema_version 9\)") as caught:
        read_run_record(tmp_path)
    assert "\n" not in str(caught.value)
    broken = dict(data)
    broken["models"] = [{**data["models"][0], "overall": "high"}]
    (tmp_path / "run.json").write_text(json.dumps(broken))
    with pytest.raises(InputError, match=r"models\.0\.overall"):
        read_run_record(tmp_path)


def test_executor_specs() -> None:
    assert parse_executor(None) == ExecutorSpec("local")
    assert parse_executor("processes:3") == ExecutorSpec("processes", workers=3)
    assert parse_executor("dask") == ExecutorSpec("dask")
    assert parse_executor("dask:tcp://127.0.0.1:8786").address == "tcp://127.0.0.1:8786"
    for bad in ("threads", "processes:0", "processes:x", "local:2"):
        with pytest.raises(InputError):
            parse_executor(bad)


def test_dask_connects_to_a_running_cluster(
    demo_config: Path, local_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``dask:ADDRESS`` uses a cluster someone else started (and leaves it running)."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(execute_module, "MIN_BATCH_CHUNKS", 10)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        out = tmp_path / "run"
        execute_run(load_run_config(demo_config), out, executor=f"dask:{cluster.scheduler_address}")
        assert _digests(out) == _digests(local_run)
        record = read_run_record(out)
        assert record.executor == f"dask:{cluster.scheduler_address}"
        assert len(cluster.workers) == 2  # still up


def test_a_cluster_that_cannot_be_reached_is_one_line(
    demo_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chatledger.core import EnvironmentFault
    from chatledger.runs import _executors

    monkeypatch.setattr(_executors, "DASK_CONNECT_TIMEOUT_S", 2.0)

    with pytest.raises(EnvironmentFault, match="cannot start or reach Dask"):
        execute_run(
            load_run_config(demo_config), tmp_path / "run", executor="dask:tcp://127.0.0.1:9"
        )


class _Cluster:
    """``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1, as a user would start
    them on their machines: separate processes, each in its own session (so that stopping one
    stops its nanny and worker), each in its own working folder (so that nothing is found
    through the coordinator's current folder), no dashboards."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.processes: list[subprocess.Popen[bytes]] = []
        self.address = ""

    def _start(self, name: str, *args: str) -> None:
        cwd = self.folder / name
        cwd.mkdir()
        log = (self.folder / f"{name}.log").open("wb")
        self.processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "dask", *args],
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

    def start(self, workers: int = 2, timeout_s: float = 60.0) -> str:
        distributed = pytest.importorskip("distributed")
        scheduler_file = self.folder / "scheduler.json"
        # Port 0: the scheduler takes a free port and writes its address to the file.
        self._start(
            "scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0",
            "--no-dashboard", "--scheduler-file", str(scheduler_file),
        )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            if self.processes[0].poll() is not None or time.monotonic() > deadline:
                log = (self.folder / "scheduler.log").read_text(errors="replace")
                pytest.fail(f"dask scheduler did not start:\n{log[-2000:]}")
            time.sleep(0.1)
        self.address = json.loads(scheduler_file.read_text())["address"]
        for i in range(workers):
            self._start(
                f"worker{i}", "worker", self.address, "--host", "127.0.0.1", "--nthreads", "1",
                "--no-dashboard", "--name", f"worker{i}",
                "--local-directory", str(self.folder / f"worker{i}"),
            )  # fmt: skip
        with distributed.Client(self.address, timeout=timeout_s) as client:
            client.wait_for_workers(workers, timeout=timeout_s)
        return self.address

    def workers(self) -> int:
        distributed = pytest.importorskip("distributed")
        with distributed.Client(self.address, timeout=30) as client:
            return len(client.scheduler_info()["workers"])

    def stop(self) -> None:
        """Workers first, then the scheduler; a process that ignores SIGTERM is killed."""
        for process in reversed(self.processes):
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def test_a_separate_scheduler_and_workers_write_the_same_bytes(
    demo_config: Path, local_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real cluster: ``dask scheduler`` and two ``dask worker`` processes started on their own
    (not a LocalCluster), reached at ``dask:tcp://127.0.0.1:PORT``. The workers read the run's
    input files at the paths the units name (shared storage on a real cluster)."""
    monkeypatch.setattr(execute_module, "MIN_BATCH_CHUNKS", 5)
    cluster = _Cluster(tmp_path / "cluster")
    cluster.folder.mkdir()
    try:
        address = cluster.start()
        assert address.startswith("tcp://127.0.0.1:")
        out = tmp_path / "run"
        execute_run(load_run_config(demo_config), out, executor=f"dask:{address}")
        assert _digests(out) == _digests(local_run)
        record = read_run_record(out)
        assert isinstance(record, ConversationRun)
        assert record.executor == f"dask:{address}"
        scored = [s for s in record.stages if s.stage == "score"]
        assert all(s.units > 1 and not s.reused for s in scored)
        assert cluster.workers() == 2  # the run leaves the cluster running
    finally:
        cluster.stop()
    assert all(p.returncode is not None for p in cluster.processes)


@pytest.mark.parametrize(
    "models",
    [
        {},
        {"a": {"x": [1, 2.5, None], "y": {"nested": "line\nbreak", "é": []}}},
        {"offline:rules": {"k": {}}, "b": [], "c": "text", "d": {"deep": [{"e": [1]}]}},
    ],
)
def test_downstream_json_written_per_model_is_the_whole_files_bytes(
    models: dict[str, object], tmp_path: Path
) -> None:
    """The coordinator writes each model's part as it is assembled; the bytes are those of the
    whole dict written at once (what every run before wrote)."""
    from chatledger.core import atomic_write_json, atomic_writer
    from chatledger.runs._downstream_file import DownstreamWriter

    atomic_write_json(tmp_path / "whole.json", {"reference": "ref ü", "models": models})
    with atomic_writer(tmp_path / "streamed.json") as handle:
        writer = DownstreamWriter(handle, "ref ü")
        for name, value in models.items():
            writer.add(name, value)
        writer.close()
    assert (tmp_path / "streamed.json").read_bytes() == (tmp_path / "whole.json").read_bytes()


def test_a_streamed_description_of_a_file_is_the_whole_files(tmp_path: Path) -> None:
    # Issue 34: the facts stage reads the chunks, the reference and a challenger front to back,
    # one record of each at a time; what it finds is what reading them whole finds: a file out
    # of chunk order, a missing chunk, an invalid line, a duplicate, a chunk the chunks file
    # lacks (in both files), usage on every line.
    from chatledger.runs._units import ModelUnit, RunSpec, _describe_whole, describe_model
    from chatledger.scoring import ScoringConfig

    parts = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "corpus" / "parts"
    shutil.copy(parts / "part1_chunks.jsonl", tmp_path / "chunks.jsonl")
    gold = (parts / "part1_gold.jsonl").read_text(encoding="utf-8").splitlines()
    unknown = json.dumps({"chunk_id": "nowhere", "model": "m", "extraction": {}})
    (tmp_path / "reference.jsonl").write_text("\n".join([*gold, unknown]) + "\n")
    lines = [json.loads(line) for line in gold]
    for i, line in enumerate(lines):
        line["model"] = "challenger-x"
        line["usage"] = {"input_tokens": 10 + i, "output_tokens": 3, "cost_usd": 0.1 * (i + 1)}
    lines[2]["extraction"] = {"summary": 5}  # invalid
    challenger = [json.dumps(line) for line in reversed(lines[1:])]  # out of order, one missing
    challenger += [challenger[0], "{not json", unknown.replace("nowhere", "elsewhere")]
    (tmp_path / "challenger.jsonl").write_text("\n".join(challenger) + "\n")
    spec = RunSpec(
        chunks_path=str(tmp_path / "chunks.jsonl"),
        reference_path=str(tmp_path / "reference.jsonl"),
        scoring=ScoringConfig(),
        layers=("extraction", "judge", "downstream"),
    )
    for unit in (
        ModelUnit(spec, "challengers.0", str(tmp_path / "challenger.jsonl")),
        ModelUnit(spec, "reference", spec.reference_path, is_reference=True),
    ):
        streamed, whole = describe_model(unit), _describe_whole(unit)
        assert streamed == whole
    facts = describe_model(ModelUnit(spec, "challengers.0", str(tmp_path / "challenger.jsonl")))
    assert (facts.missing, facts.invalid, facts.invalid_count) == (1, 1, 1)  # "{not json": no chunk
    assert len(facts.file_problems) == 3  # the invalid line, the duplicate, "{not json"
    assert facts.unknown_chunks == ["nowhere", "elsewhere"]
    assert facts.usage["input_tokens"] == sum(10 + i for i in range(1, len(lines)))
    assert facts.degenerate is not None and facts.degenerate.valid == len(lines) - 2


def test_a_second_dask_cluster_on_the_machine_prints_nothing() -> None:
    # Dask's default HTTP port 8787 taken (another run, a `dask scheduler` in the docs test):
    # the run's own LocalCluster serves on a free loopback port instead, without the
    # "Port 8787 is already in use" UserWarning that used to land in the run's output.
    import socket
    import warnings

    from chatledger.runs._executors import DaskExecutor

    pytest.importorskip("distributed")
    with contextlib.ExitStack() as stack:
        taken = stack.enter_context(socket.socket())
        with contextlib.suppress(OSError):  # already taken by someone else: just as good
            taken.bind(("127.0.0.1", 8787))
            taken.listen()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            executor = DaskExecutor(None)
            try:
                assert executor.map(abs, [-1, -2]) == [1, 2]
            finally:
                executor.close()
    assert not [w for w in caught if "8787" in str(w.message)], [str(w.message) for w in caught]
