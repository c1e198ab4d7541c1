"""A run's worker processes live no longer than the run, and an interrupt at any moment of their
start-up ends the run with one line.

Each test starts ``chatledger run`` in a session of its own (``start_new_session``), so "its
tree" is every process of that session, whatever re-parented them; only those are ever killed
here (never a process of another session: the machine runs other work).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from synthetic_corpus import synthetic

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads the process table from /proc (Linux)"
)


@dataclass(frozen=True)
class Proc:
    pid: int
    parent: int
    state: str
    command: str


def session(sid: int) -> list[Proc]:
    """The living processes of session ``sid`` (zombies are dead: left out). Called every
    10 ms while a test waits for a moment: only the stat of the machine's other processes is
    read (their command lines too cost the test process a core on a busy machine)."""
    found: list[Proc] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            if int(fields[3]) != sid or fields[0] == b"Z":
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        found.append(Proc(int(entry), int(fields[1]), fields[0].decode(), command))
    return found


def kill_session(sid: int) -> None:
    for proc in session(sid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)


def start_run(config: Path, out: Path, executor: str) -> subprocess.Popen[str]:
    environment = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.Popen(
        [sys.executable, "-m", "chatledger", "run", str(config), "--out", str(out),
         "--executor", executor, "--no-report"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        start_new_session=True,
    )  # fmt: skip


def wait_until(
    process: subprocess.Popen[str], ready: Callable[[list[Proc]], bool], limit_s: float = 120
) -> list[Proc]:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        tree = session(process.pid)
        if ready(tree):
            return tree
        if process.poll() is not None:
            raise AssertionError(f"the run ended first: {process.communicate()[1][-2000:]}")
        time.sleep(0.01)
    raise AssertionError(f"not reached in {limit_s:.0f} s: {session(process.pid)}")


def workers(tree: list[Proc]) -> list[Proc]:
    """Pool workers: the forkserver's children (processes:N) or spawned processes (dask)."""
    forkservers = {p.pid for p in tree if "multiprocessing.forkserver" in p.command}
    return [p for p in tree if p.parent in forkservers or "multiprocessing.spawn" in p.command]


def wait_gone(sid: int, limit_s: float = 30) -> list[Proc]:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and session(sid):
        time.sleep(0.05)
    return session(sid)


@pytest.fixture(scope="module")
def demo_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """120 generated chunks, three challengers, three layers (the scale benchmark's corpus):
    several times the demo's units on two workers, so every moment below is reached while the run
    still has work. The demo's 36 chunks were done in a few seconds once the workers were up,
    and on a loaded machine a run finished before its Ctrl-C arrived."""
    config: Path = synthetic().write_run_corpus(tmp_path_factory.mktemp("corpus"), 120, "lifetime")
    return config


def test_kill_9_of_a_processes_run_leaves_no_process_of_its_tree_alive(
    demo_config: Path, tmp_path: Path
) -> None:
    process = start_run(demo_config, tmp_path / "run", "processes:2")
    try:
        # The moment the fault report measured: the forkserver, both workers and the resource
        # tracker running beside the run.
        tree = wait_until(process, lambda t: len(workers(t)) >= 2)
        assert any("resource_tracker" in p.command for p in tree)
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)
        left = wait_gone(process.pid)
        # Before the fix all four were still there 23 minutes later (re-parented to PID 1).
        assert left == [], left
    finally:
        kill_session(process.pid)


# Moments of start-up, each a state of the run's process tree: the resource tracker started, the
# forkserver (or the first dask worker) started, every worker started, and units running.
MOMENTS: dict[str, Callable[[list[Proc]], bool]] = {
    "tracker": lambda t: any("resource_tracker" in p.command for p in t),
    "first worker": lambda t: len(workers(t)) >= 1 or any("forkserver" in p.command for p in t),
    "all workers": lambda t: len(workers(t)) >= 2,
}


@pytest.mark.parametrize("executor", ["processes:2", "dask"])
@pytest.mark.parametrize("moment", [*MOMENTS, "units running"])
def test_ctrl_c_at_any_moment_of_start_up_is_one_line_and_leaves_nothing(
    executor: str, moment: str, demo_config: Path, tmp_path: Path
) -> None:
    process = start_run(demo_config, tmp_path / "run", executor)
    try:
        if moment == "units running":
            # Units are running once the first stage output is on disk (a fixed sleep after
            # the workers started let an idle machine finish the whole run first).
            wait_until(process, MOMENTS["all workers"])
            stages = tmp_path / "run" / "stages"
            deadline = time.monotonic() + 120
            while not any(stages.glob("*/*.json")) and time.monotonic() < deadline:
                if process.poll() is not None:
                    break
                time.sleep(0.01)
        else:
            wait_until(process, MOMENTS[moment])
        # As a terminal's Ctrl-C does: SIGINT to every process of the foreground group.
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=120)
        if process.returncode == 0:
            pytest.fail(f"the run finished before the interrupt at {moment!r}; {err}")
        assert process.returncode == 130, err
        assert "Traceback" not in err and "Error" not in err.replace("error:", ""), err
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines[0].startswith("error: interrupted while"), err
        assert lines[-1].startswith("hint: ") and len(lines) == 2, err
        assert wait_gone(process.pid) == []
    finally:
        kill_session(process.pid)
