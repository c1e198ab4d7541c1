"""A Ctrl-C that Python swallows is not lost (runs._lifetime.interrupts_recorded).

The CI run of 2026-12-04 ended a Dask run 0 after its Ctrl-C: the KeyboardInterrupt was raised
inside distributed's garbage-collector callback, where Python prints "Exception ignored" and
drops it. The same happens in a ``__del__``, which is how these tests provoke it.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

import pytest

from chatledger.runs._lifetime import interrupts_recorded, raise_if_interrupted


class SignalsWhenCollected:
    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)


def test_an_interrupt_swallowed_in_a_destructor_is_raised_at_the_next_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    swallowed: list[type[BaseException] | None] = []

    def unraisable(report: Any) -> None:
        swallowed.append(report.exc_type)

    monkeypatch.setattr(sys, "unraisablehook", unraisable)
    with interrupts_recorded():
        SignalsWhenCollected()  # collected at once: its KeyboardInterrupt is swallowed
        assert swallowed == [KeyboardInterrupt]  # the fault is real: Python dropped it
        with pytest.raises(KeyboardInterrupt):
            raise_if_interrupted()
        raise_if_interrupted()  # raised once: the note is cleared


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_sigterm_is_noted_too_and_the_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

    class TermWhenCollected:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGTERM)

    with interrupts_recorded():
        TermWhenCollected()
        with pytest.raises(KeyboardInterrupt):
            raise_if_interrupted()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_an_interrupt_raised_normally_is_not_raised_twice_after_the_run() -> None:
    with pytest.raises(KeyboardInterrupt), interrupts_recorded():
        signal.raise_signal(signal.SIGINT)
    raise_if_interrupted()  # the run is over: nothing is left noted


def test_the_exit_code_follows_the_signal_143_after_sigterm_130_after_ctrl_c() -> None:
    """Both signals stop a run as KeyboardInterrupt; the CLI exits 128 + the signal's number
    (what the run's handlers noted), so a CI timeout's SIGTERM reads 143, not Ctrl-C's 130."""
    from chatledger._signals import clear_interrupt, interrupt_exit_code
    from chatledger.runs._lifetime import interrupts_deferred

    try:
        for signum, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
            clear_interrupt()
            with pytest.raises(KeyboardInterrupt), interrupts_recorded():
                signal.raise_signal(signum)
            assert interrupt_exit_code() == code
            clear_interrupt()
            with pytest.raises(KeyboardInterrupt), interrupts_deferred():  # held, then raised
                signal.raise_signal(signum)
            assert interrupt_exit_code() == code
        clear_interrupt()
        assert interrupt_exit_code() == 130  # Python's own Ctrl-C: nothing noted
    finally:
        clear_interrupt()
