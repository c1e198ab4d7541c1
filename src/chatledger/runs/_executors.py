"""Where the units of a run are computed: this process, a pool of processes, or a Dask cluster.

A unit is a plain, picklable description of work (a model and a batch of chunks, see
``runs._units``) run by a module-level function; it names the files it reads instead of
carrying their contents (pickling parsed chunks costs more than scoring them). Every executor
returns results in the order of the units, so whatever runs them the run assembles the same
numbers in the same order — and writes the same bytes.

``local``            today's behaviour: one process, no pool.
``processes[:N]``    N worker processes of this machine (default: all cores).
``dask[:ADDRESS]``   Dask distributed: without an address a LocalCluster of one single-threaded
                     worker process per core; with one (``tcp://host:8786``) an existing
                     cluster, whose workers must see the run's files at the same paths.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, TypeVar

from chatledger.core import EnvironmentFault, InputError
from chatledger.runs._lifetime import interrupts_deferred, worker_start

U = TypeVar("U")
R = TypeVar("R")

EXECUTOR_KINDS = ("local", "processes", "dask")
# How much lower the priority of this machine's workers is than the run's own (nice): the
# run assembles the stages in threads while the units run (issue 34), and with every core
# busy it then keeps up with the batches instead of leaving them for after the last unit.
WORKER_NICE = 5
DASK_CONNECT_TIMEOUT_S = 30.0  # how long to wait for a scheduler at dask:ADDRESS
# The run's own LocalCluster (issue 34: dask within 10 % of processes:2). Its scheduler runs
# in the run's process, beside the threads that assemble the stages, and every process of it
# (scheduler, nannies, workers) wakes up for what a dashboard or a shared, long-lived cluster
# needs; a worker's event loop then takes the GIL from the unit its thread runs. Off or rarer:
# - the statistical profiler: every worker's stack sampled every 10 ms;
# - the event loop's health check ("tick"), every 20 ms in every process: once a second;
# - the system monitor (CPU, memory, network of each process for the dashboard): 500 ms → 5 s;
# - work stealing: the units are alike and the run takes their results in order, so a unit
#   moved to another worker only reorders them (and costs the scheduler a pass a second);
# - the active memory manager (replicas of results the run takes once): off.
LOCAL_CLUSTER_CONFIG: dict[str, object] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.scheduler.work-stealing": False,
    "distributed.scheduler.active-memory-manager.start": False,
}


@dataclass(frozen=True)
class ExecutorSpec:
    """A parsed ``--executor`` value."""

    kind: str
    workers: int | None = None
    address: str | None = None

    def __str__(self) -> str:
        if self.kind == "processes" and self.workers is not None:
            return f"processes:{self.workers}"
        if self.kind == "dask" and self.address is not None:
            return f"dask:{self.address}"
        return self.kind


def parse_executor(text: str | None) -> ExecutorSpec:
    """``local``, ``processes``, ``processes:N``, ``dask`` or ``dask:ADDRESS``."""
    value = (text or "local").strip()
    kind, _, arg = value.partition(":")
    if kind not in EXECUTOR_KINDS:
        raise InputError(
            f"unknown executor {value!r}: use local, processes[:N] or dask[:ADDRESS]",
            field="executor",
        )
    if kind == "local":
        if arg:
            raise InputError("the local executor takes no argument", field="executor")
        return ExecutorSpec("local")
    if kind == "processes":
        if not arg:
            return ExecutorSpec("processes", workers=os.cpu_count() or 1)
        if not arg.isdigit() or int(arg) < 1:
            raise InputError(
                f"processes:{arg}: the number of workers must be a whole number ≥ 1",
                field="executor",
            )
        return ExecutorSpec("processes", workers=int(arg))
    # dask: "dask:tcp://host:8786" keeps everything after the first colon.
    return ExecutorSpec("dask", address=arg or None)


class Executor(ABC):
    """Maps a module-level function over units; results come back in unit order."""

    spec: ExecutorSpec

    @abstractmethod
    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]: ...

    def imap(
        self, fn: Callable[[U], R], units: Sequence[U], heads: Sequence[U] = ()
    ) -> Iterator[R]:
        """:meth:`map` one result at a time, in unit order, each released by the executor
        once given: the caller need not hold them all. ``heads``, units started before the
        others (long ones), give their results after theirs, in their order: the caller is
        not kept waiting for them while theirs come in."""
        results = self.map(fn, [*heads, *units])
        yield from results[len(heads) :]
        yield from results[: len(heads)]

    def warm_up(self) -> None:  # noqa: B027 - a no-op unless the executor has workers
        """Start the workers and have them import the units' code now, without waiting: the
        run's own start (the judges' audit, its plans) then overlaps theirs (a no-op for
        ``local``)."""

    def close(self) -> None:  # noqa: B027 - a no-op unless the executor holds workers
        """Release the workers (a no-op for ``local``)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalExecutor(Executor):
    def __init__(self) -> None:
        self.spec = ExecutorSpec("local")

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]:
        return [fn(unit) for unit in units]

    def imap(
        self, fn: Callable[[U], R], units: Sequence[U], heads: Sequence[U] = ()
    ) -> Iterator[R]:
        first = [fn(head) for head in heads]
        for unit in units:
            yield fn(unit)
        yield from first


class ProcessExecutor(Executor):
    """A pool of worker processes started with ``forkserver``: forking a process that runs
    threads (the provider hub's event loop, the local-model spawner) is unsafe.

    Workers end with the run however it ends (kill -9 included) and leave Ctrl-C to it;
    starting them is one step an interrupt does not split (see ``runs._lifetime``)."""

    def __init__(self, workers: int) -> None:
        self.spec = ExecutorSpec("processes", workers=workers)
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            context = get_context("forkserver")
            # Workers import the scoring machinery once, before the first unit arrives.
            context.set_forkserver_preload(["chatledger.runs._units"])
            self._pool = ProcessPoolExecutor(
                max_workers=self.spec.workers,
                mp_context=context,
                initializer=start_pool_worker,
                initargs=(os.getpid(),),
            )
        return self._pool

    def warm_up(self) -> None:
        # One no-op per worker: with forkserver a worker is started per submitted unit while
        # none is idle, and the forkserver itself imports the units' code first.
        with interrupts_deferred():
            pool = self._get_pool()
            for _ in range(self.spec.workers or 1):
                pool.submit(warm_worker)

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]:
        if not units:
            return []
        if len(units) == 1:
            return [fn(units[0])]
        # Submitting starts the workers (as many as needed); results are awaited outside.
        with interrupts_deferred():
            pool = self._get_pool()
            futures = [pool.submit(fn, unit) for unit in units]
        return [future.result() for future in futures]

    def imap(
        self, fn: Callable[[U], R], units: Sequence[U], heads: Sequence[U] = ()
    ) -> Iterator[R]:
        everything = [*heads, *units]
        if len(everything) <= 1:
            yield from self.map(fn, everything)
            return
        with interrupts_deferred():
            pool = self._get_pool()
            futures: list[Future[R] | None] = [pool.submit(fn, unit) for unit in everything]
        order = [*range(len(heads), len(futures)), *range(len(heads))]
        for i in order:
            future = futures[i]
            assert future is not None
            futures[i] = None  # the result is the caller's now
            yield future.result()

    def close(self) -> None:
        if self._pool is not None:
            with interrupts_deferred():
                self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class _GatherCancelled(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" for distributed's ``AllExit``.

    When Ctrl-C stops ``Client.gather``, the gather's per-future waiters end with ``AllExit``,
    which nobody awaits any more; asyncio logs each one with a traceback when it is collected.
    The run already says in one line that it was interrupted, so these are noise, not news.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return exc is None or type(exc).__name__ != "AllExit"


_ASYNCIO_FILTER = _GatherCancelled()


class DaskExecutor(Executor):
    """Units as Dask futures; ``distributed`` is the optional extra ``dask``."""

    def __init__(self, address: str | None) -> None:
        self.spec = ExecutorSpec("dask", address=address)
        try:
            # Through importlib: distributed's API is untyped, and is used as such here.
            distributed: Any = importlib.import_module("distributed")
        except ImportError:
            raise InputError(
                "--executor dask needs Dask distributed: pip install 'chatledger[dask]'",
                field="executor",
            ) from None
        self._cluster: Any = None
        self._client: Any = None
        self._warming: list[Any] = []
        logging.getLogger("asyncio").addFilter(_ASYNCIO_FILTER)  # a set: added once
        # Starting the cluster is one step Ctrl-C does not split (see runs._lifetime): a
        # cluster half started is what distributed's exit hook trips over.
        try:
            with interrupts_deferred():
                self._start(distributed, address)
        except KeyboardInterrupt:
            self.close()
            raise

    def _start(self, distributed: Any, address: str | None) -> None:
        try:
            if address is None:
                # The run's own cluster without what only a long-lived, shared one needs
                # (LOCAL_CLUSTER_CONFIG). Nannies hand the config to their workers.
                dask: Any = importlib.import_module("dask")
                with dask.config.set(LOCAL_CLUSTER_CONFIG):
                    self._cluster = self._local_cluster(distributed)
                # Results straight from the workers: not relayed by the scheduler, which
                # runs in this process too (each batch's bytes would cross it twice).
                self._client = distributed.Client(self._cluster, direct_to_workers=True)
            else:
                self._client = distributed.Client(address, timeout=DASK_CONNECT_TIMEOUT_S)
        except OSError as exc:
            if self._cluster is not None:
                self._cluster.close()
            where = address or "a LocalCluster"
            raise EnvironmentFault(f"cannot start or reach Dask ({where}): {exc}") from None

    @staticmethod
    def _local_cluster(distributed: Any) -> Any:
        return distributed.LocalCluster(
            n_workers=os.cpu_count() or 1,
            threads_per_worker=1,  # the units are CPU-bound Python: one per process
            processes=True,
            # Its HTTP server on a free loopback port: None means the default 8787, and a
            # second cluster on the machine (another run, a `dask scheduler`) then prints a
            # UserWarning into the run's output.
            dashboard_address="127.0.0.1:0",
            host="127.0.0.1",
            # Only what stops a cluster process is printed. A unit's failure reaches the run
            # through its future (and the run says it in its own words); what the workers log
            # at ERROR is the cluster's own business — at a Ctrl-C, every process of the group
            # gets the signal and a worker whose scheduler went first logs its failed heartbeat
            # as a traceback (seen in CI), where the run owes the user one line.
            silence_logs=logging.CRITICAL,
            # No memory management: a unit's working set is a batch (≤ 200 chunks) and its
            # result leaves the worker as soon as the run takes it, so there is nothing to
            # spill, and the nanny and the worker would each poll the worker's memory every
            # 100 ms for thresholds the run never reaches.
            memory_limit=0,
        )

    def warm_up(self) -> None:
        # Each worker unpickles a unit's function on its first unit: importing the scoring
        # machinery then is ~1 s of every worker's, in series with the run unless done now.
        workers = list(self._client.scheduler_info().get("workers", {}))
        # The run's own cluster's workers run beside it on this machine: a lower priority, as
        # a pool's (another cluster's workers are left as they are).
        nice = WORKER_NICE if self.spec.address is None else 0
        self._warming = [
            self._client.submit(
                warm_worker, nice, pure=False, workers=[w], allow_other_workers=False
            )
            for w in workers
        ]

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]:
        if not units:
            return []
        # pure=False: every unit is computed, never deduplicated by Dask's key hashing.
        futures = self._client.map(fn, list(units), pure=False)
        results: list[R] = self._client.gather(futures)
        return results

    def imap(
        self, fn: Callable[[U], R], units: Sequence[U], heads: Sequence[U] = ()
    ) -> Iterator[R]:
        everything = [*heads, *units]
        if not everything:
            return
        futures: list[Any] = self._client.map(fn, everything, pure=False)
        order = [*range(len(heads), len(futures)), *range(len(heads))]
        for i in order:
            future = futures[i]
            result: R = self._client.gather(future)
            futures[i] = None
            future.release()  # the cluster forgets it: its workers keep no finished results
            yield result

    def close(self) -> None:
        with interrupts_deferred():
            self._warming = []
            if self._client is not None:
                self._client.close()
            if self._cluster is not None:
                self._cluster.close()


def warm_worker(nice: int = 0) -> None:
    """A worker's first unit (:meth:`Executor.warm_up`): import what every unit runs, and
    lower the priority of the thread that runs them by ``nice``."""
    importlib.import_module("chatledger.runs._units")
    lower_priority(nice)


def start_pool_worker(run_pid: int) -> None:
    """A pool worker's start (``runs._lifetime.worker_start``), at :data:`WORKER_NICE`."""
    worker_start(run_pid)
    lower_priority(WORKER_NICE)


def lower_priority(nice: int) -> None:
    """``os.nice`` for the calling thread (Linux: a thread's own; elsewhere the process's),
    where there is one and it is allowed."""
    if nice > 0:
        with contextlib.suppress(AttributeError, OSError):
            os.nice(nice)


def start_executor(spec: ExecutorSpec) -> Executor:
    if spec.kind == "processes":
        return ProcessExecutor(spec.workers or os.cpu_count() or 1)
    if spec.kind == "dask":
        return DaskExecutor(spec.address)
    return LocalExecutor()


def worker_count(executor: Executor) -> int:
    """How many units run at once (for sizing batches)."""
    if executor.spec.kind == "processes":
        return executor.spec.workers or 1
    if isinstance(executor, DaskExecutor):
        info: dict[str, Any] = executor._client.scheduler_info()
        return max(1, len(info.get("workers", {})))
    return 1
