"""Worker processes that live no longer than the run, and a start-up that Ctrl-C cannot split.

Two faults this module answers (measured with ``--executor processes:2``, see
docs/architecture.md, "Processes"):

- **kill -9 of the run left its workers alive for ever.** A pool worker waits on its call
  queue, whose write end it holds itself, so the parent's death never reaches it; the
  forkserver waits until every holder of its "alive" pipe (the workers) is gone, and the
  resource tracker until every holder of its pipe is. Nothing the parent does on the way out
  helps (SIGKILL runs no handler), a process group only helps when the group is killed, and
  ``PR_SET_PDEATHSIG`` in a worker fires on the death of its *parent*, which is the forkserver.
  What works is each worker watching the run's process itself (:func:`exit_with`): a
  ``pidfd`` that becomes readable when that process ends (Linux ≥ 5.3; elsewhere a poll every
  half second), then ``os._exit``. Once the workers are gone the forkserver and the resource
  tracker see the end of their pipes and exit on their own.
- **Ctrl-C while the pool started printed tracebacks** (a worker unpickling a semaphore the
  parent had already removed; a half-built pool left to the interpreter's exit hooks). Starting
  workers is therefore one step that an interrupt does not split (:func:`interrupts_deferred`):
  a SIGINT or SIGTERM in it is held and raised as ``KeyboardInterrupt`` once the step is over,
  when the pool can be shut down whole. SIGINT is also blocked in the main thread for the
  step, so the processes started in it begin with it blocked; a worker then ignores it
  (:func:`worker_start`) — the terminal's Ctrl-C reaches every process of the foreground
  group, and only the run should answer it.
- **Ctrl-C during a Dask run was lost, and the run ended 0** (once in a CI run). Python raises
  the ``KeyboardInterrupt`` of a signal handler wherever the main thread is; inside a garbage
  collector callback (distributed installs one) or a ``__del__`` it is printed as "Exception
  ignored" and dropped. While a run is on (:func:`interrupts_recorded`) the handler therefore
  also notes the signal, and the run checks the note between units
  (:func:`raise_if_interrupted`).
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing import resource_tracker
from types import FrameType

from chatledger._signals import note_interrupt

# How often a worker without pidfd_open (not Linux) checks that the run is still there.
POLL_S = 0.5


# Signals noted by :func:`interrupts_recorded`'s handler and not yet raised from a check.
_noted: list[int] = []


@contextmanager
def interrupts_recorded() -> Iterator[None]:
    """For the body, a SIGINT or SIGTERM raises ``KeyboardInterrupt`` as usual *and* is noted,
    so :func:`raise_if_interrupted` raises it again if the first one was swallowed. A no-op
    off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def note(signum: int, frame: FrameType | None) -> None:
        _noted.append(signum)
        note_interrupt(signum)  # the exit code: 143 after SIGTERM, 130 after Ctrl-C
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _noted.clear()


def raise_if_interrupted() -> None:
    """Raise ``KeyboardInterrupt`` if a signal was noted since the last check (its own raise
    may have been swallowed where Python ignores exceptions)."""
    if _noted:
        _noted.clear()
        raise KeyboardInterrupt


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Run the body whole: a SIGINT or SIGTERM that arrives in it is raised as
    ``KeyboardInterrupt`` when it ends (a second one raises at once). A no-op off the main
    thread, where Python runs no signal handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        note_interrupt(signum)
        if held:
            raise KeyboardInterrupt  # asked twice: the user means it
        held.append(signum)

    previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, signal.SIGTERM)}
    # The resource tracker's start unblocks SIGINT in the thread that starts it (after
    # blocking it for its own start): it is started first, so the block below holds.
    resource_tracker.ensure_running()
    mask = _block({signal.SIGINT})
    try:
        yield
    finally:
        # Unblocked first, so a pending SIGINT reaches ``hold`` before the handlers go back.
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if held:
        raise KeyboardInterrupt


def _block(signals: set[signal.Signals]) -> set[int | signal.Signals] | None:
    """Block ``signals`` in this thread; the mask before (None where there are no masks)."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, signals)


def worker_start(run_pid: int) -> None:
    """The first thing a pool worker does: ignore Ctrl-C (the run answers it and shuts the pool
    down), and end when the run's process ends, however it ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    exit_with(run_pid)


def exit_with(pid: int) -> None:
    """End this process (``os._exit``) as soon as process ``pid`` has ended: a daemon thread
    waits on a pidfd of it, or polls where there is none."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)  # already gone
    except (AttributeError, OSError):
        threading.Thread(target=_poll, args=(pid,), name="exit-with-run", daemon=True).start()
        return
    threading.Thread(target=_wait, args=(handle,), name="exit-with-run", daemon=True).start()


def _wait(handle: int) -> None:
    select.select([handle], [], [])  # readable once the process has ended
    os._exit(1)


def _poll(pid: int) -> None:
    while True:
        time.sleep(POLL_S)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            pass  # it exists (under another user: a reused pid, which a poll cannot tell)
