"""A spending cap in USD that refuses to start a call which could pass it.

Each live call first *reserves* its worst-case cost (its input estimate and all of ``max_tokens``
priced), and on return settles to what it really cost. A new call starts only if money already
spent + still reserved by calls in flight + its own worst case stays within the cap, so even
concurrent calls cannot overspend together. Cached answers cost nothing.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

from chatledger.providers._errors import BudgetExceeded


@dataclass(frozen=True)
class Reservation:
    """Money held back for one call in flight."""

    ticket: int
    model: str
    amount_usd: float


class Budget:
    """Spend tracker with an optional cap (``None``: track only, never refuse)."""

    def __init__(self, cap_usd: float | None = None) -> None:
        if cap_usd is not None and cap_usd < 0:
            raise ValueError("a budget cap cannot be negative")
        self.cap_usd = cap_usd
        self.spent_usd = 0.0
        self.live_calls = 0
        self.cached_calls = 0
        self._reserved: dict[int, Reservation] = {}
        self._tickets = itertools.count()
        # Providers call in from one event loop, but a run may share a budget across threads.
        self._lock = threading.Lock()

    @property
    def reserved_usd(self) -> float:
        return sum(r.amount_usd for r in self._reserved.values())

    @property
    def remaining_usd(self) -> float | None:
        if self.cap_usd is None:
            return None
        return max(0.0, self.cap_usd - self.spent_usd - self.reserved_usd)

    def reserve(self, model: str, worst_case_usd: float) -> Reservation:
        """Hold ``worst_case_usd`` for a call about to start, or raise :class:`BudgetExceeded`."""
        with self._lock:
            committed = self.spent_usd + self.reserved_usd
            if self.cap_usd is not None and committed + worst_case_usd > self.cap_usd:
                raise BudgetExceeded(
                    cap_usd=self.cap_usd,
                    committed_usd=committed,
                    worst_case_usd=worst_case_usd,
                    model=model,
                )
            reservation = Reservation(next(self._tickets), model, worst_case_usd)
            self._reserved[reservation.ticket] = reservation
            return reservation

    def settle(self, reservation: Reservation, cost_usd: float) -> None:
        """The call finished and cost ``cost_usd``: release the hold, record the spend."""
        with self._lock:
            self._reserved.pop(reservation.ticket, None)
            self.spent_usd += cost_usd
            self.live_calls += 1

    def release(self, reservation: Reservation) -> None:
        """The call failed before it was billed: release the hold."""
        with self._lock:
            self._reserved.pop(reservation.ticket, None)

    def record_cached(self) -> None:
        with self._lock:
            self.cached_calls += 1
