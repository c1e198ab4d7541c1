"""A spending cap in USD that refuses to start a call which could pass it.

Each live call first *reserves* its worst-case cost (the most it can be billed: its input
bound and all of ``max_tokens`` priced), and on return settles to what it really cost. A new
call starts only if money already spent + still reserved by calls in flight + its own worst case
stays within the cap, so even concurrent calls cannot overspend together. Cached answers cost
nothing.

A budget on its own counts this process's calls only (library use without a cache). Given a
cache — ``ProviderHub(cache=..., budget=...)`` binds it — the budget keeps its books in the
cache's spend ledger instead (see :mod:`chatledger.providers._ledger`): the cap then bounds the
ledger's cumulative spend, across every process and invocation that uses the cache, until the
ledger is reset.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from chatledger.providers._errors import BudgetExceeded
from chatledger.providers._ledger import (
    DEFAULT_HOLD_S,
    DEFAULT_LEDGER,
    LedgerTotals,
    SpendLedger,
    check_ledger_name,
)

if TYPE_CHECKING:
    from chatledger.providers._cache import CompletionCache


@dataclass(frozen=True)
class Reservation:
    """Money held back for one call in flight (``ticket`` is the ledger's hold id when the
    budget keeps a ledger)."""

    ticket: int
    model: str
    amount_usd: float
    # Whether the hold is a row of the budget's ledger (False: held in this process only).
    in_ledger: bool = False


class Budget:
    """Spend tracker with an optional cap (``None``: track only, never refuse).

    ``ledger`` (or, once bound to a cache, ``cache.ledger(name)``) is where the cap's spend is
    kept; ``shared=False`` keeps the budget in-process even next to a cache. ``spent_usd``,
    ``live_calls`` and ``cached_calls`` always count this budget's own calls (this run); the
    ledger's totals are :meth:`ledger_totals`.
    """

    def __init__(
        self,
        cap_usd: float | None = None,
        *,
        ledger: SpendLedger | None = None,
        name: str | None = None,
        shared: bool = True,
    ) -> None:
        if cap_usd is not None and cap_usd < 0:
            raise ValueError("a budget cap cannot be negative")
        if ledger is not None and name is not None and name != ledger.name:
            raise ValueError(f"budget name {name!r} differs from its ledger's, {ledger.name!r}")
        self.cap_usd = cap_usd
        self.name = check_ledger_name(name) if name is not None else DEFAULT_LEDGER
        self.ledger = ledger
        if ledger is not None:
            self.name = ledger.name
        self.shared = shared
        self.spent_usd = 0.0
        self.live_calls = 0
        self.cached_calls = 0
        self._reserved: dict[tuple[bool, int], Reservation] = {}
        self._tickets = itertools.count()
        # Providers call in from one event loop, but a run may share a budget across threads.
        self._lock = threading.Lock()

    def bind(self, cache: CompletionCache) -> None:
        """Keep the books in ``cache``'s ledger of this budget's name, unless the budget already
        has a ledger or is not ``shared``. Done by the hub and providers given both."""
        with self._lock:
            if self.ledger is None and self.shared:
                self.ledger = cache.ledger(self.name)

    @property
    def reserved_usd(self) -> float:
        """What this budget's own calls in flight hold."""
        return sum(r.amount_usd for r in self._reserved.values())

    @property
    def remaining_usd(self) -> float | None:
        """What the cap still allows (over the whole ledger when there is one)."""
        if self.cap_usd is None:
            return None
        if self.ledger is not None:
            return max(0.0, self.cap_usd - self.ledger.totals().committed_usd)
        return max(0.0, self.cap_usd - self.spent_usd - self.reserved_usd)

    def ledger_totals(self) -> LedgerTotals | None:
        """The shared ledger's totals (every process, every run), or None when in-process."""
        return self.ledger.totals() if self.ledger is not None else None

    def reserve(
        self, model: str, worst_case_usd: float, *, hold_s: float | None = None
    ) -> Reservation:
        """Hold ``worst_case_usd`` for a call about to start, or raise :class:`BudgetExceeded`.
        ``hold_s`` is the longest the call may take; a ledger drops an older hold as stale."""
        with self._lock:
            if self.ledger is not None:
                ticket = self.ledger.reserve(
                    model,
                    worst_case_usd,
                    cap_usd=self.cap_usd,
                    hold_s=hold_s if hold_s is not None else DEFAULT_HOLD_S,
                )
            else:
                committed = self.spent_usd + self.reserved_usd
                if self.cap_usd is not None and committed + worst_case_usd > self.cap_usd:
                    raise BudgetExceeded(
                        cap_usd=self.cap_usd,
                        committed_usd=committed,
                        worst_case_usd=worst_case_usd,
                        model=model,
                    )
                ticket = next(self._tickets)
            reservation = Reservation(ticket, model, worst_case_usd, self.ledger is not None)
            self._reserved[reservation.in_ledger, reservation.ticket] = reservation
            return reservation

    def settle(
        self,
        reservation: Reservation,
        cost_usd: float,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> None:
        """The call finished and cost ``cost_usd``: release the hold, record the spend."""
        write = self.book(
            reservation, cost_usd, input_tokens=input_tokens, output_tokens=output_tokens
        )
        if write is not None:
            write()

    def book(
        self,
        reservation: Reservation,
        cost_usd: float,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> Callable[[], None] | None:
        """:meth:`settle` in two parts: this budget's own books now, and the ledger's write
        returned (None without a ledger) for the caller to make — inside the cache's
        transaction that also stores the reply, so a call costs one commit."""
        with self._lock:
            self._reserved.pop((reservation.in_ledger, reservation.ticket), None)
            self.spent_usd += cost_usd
            self.live_calls += 1
            ledger = self.ledger if reservation.in_ledger else None
        if ledger is None:
            return None
        return partial(
            ledger.settle,
            reservation.ticket,
            cost_usd,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )

    def release(self, reservation: Reservation) -> None:
        """The call failed before it was billed: release the hold."""
        with self._lock:
            self._reserved.pop((reservation.in_ledger, reservation.ticket), None)
            if self.ledger is not None and reservation.in_ledger:
                self.ledger.release(reservation.ticket)

    def record_cached(self) -> None:
        with self._lock:
            self.cached_calls += 1
