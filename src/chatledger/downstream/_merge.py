"""A consumer's agreement over a run, merged from its conversations one at a time (issue 34).

Every built-in consumer matches within a conversation (its keys start with the conversation),
so its agreement over a run is its conversations' put together: counts and the whole numbers
of the details add up, ratios are recomputed from the sums, and the missed and invented events
are the conversations' in run order. :class:`AgreementMerger` does that as conversations come,
writing those events (and the daily report's days) to :class:`ItemSpool` lists instead of
holding them, so a run's layer 3 needs one conversation's outputs at a time; its result is what
``consumer.agreement`` over the merged outputs (:func:`merge_outputs`) gives, float for float
(tested against it). A consumer of another package has no merge rule: its outputs are kept and
compared whole at the end, as before.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from chatledger.core import iter_json
from chatledger.downstream._arcs import ArcsConsumer
from chatledger.downstream._base import Consumer, ConsumerAgreement, ConsumerOutput
from chatledger.downstream._daily import DailyReportConsumer
from chatledger.downstream._drift import DriftConsumer
from chatledger.downstream._escalation import (
    EscalationConsumer,
    escalation_details,
    rating_tables,
)
from chatledger.downstream._loops import LoopsConsumer


class ItemSpool(list[Any]):
    """An append-only list of JSON-ready items kept in an unnamed file (in ``directory``), or
    in memory when ``directory`` is None. It is a ``list`` to the JSON encoder
    (:func:`chatledger.core.iter_json` iterates it and asks its length), so a summary holding
    it is written with its items read back one at a time; the ``list`` itself stays empty."""

    def __init__(self, directory: Path | None = None, json_level: int | None = None) -> None:
        super().__init__()
        self._file: IO[bytes] | None = (
            tempfile.TemporaryFile(dir=directory) if directory is not None else None  # noqa: SIM115
        )
        self._items: list[Any] = []
        self._count = 0
        # With ``json_level``, each item's JSON text as the list's items are at that level
        # (iter_json) is also written as it comes (:meth:`write_json`).
        self._level = json_level
        self._text: IO[str] | None = None
        if json_level is not None:
            self._text = tempfile.TemporaryFile(  # noqa: SIM115 - closed by close()
                "w+", encoding="utf-8", newline="", dir=directory
            )

    def append(self, item: Any) -> None:
        if self._file is None:
            self._items.append(item)
        else:
            self._file.seek(0, 2)
            pickle.dump(item, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        if self._text is not None and self._level is not None:
            self._text.write(
                ("\n" if self._count == 0 else ",\n")
                + "  " * self._level
                + "".join(iter_json(item, level=self._level))
            )
        self._count += 1

    def write_json(self, write: Callable[[str], None]) -> None:
        """The list's text as :func:`chatledger.core.iter_json` gives it with its items at
        ``json_level``, from the items' texts written as they came (issue 34: encoded after
        the last batch, a model's events were most of the time a run spent after its units)."""
        if self._text is None or self._level is None:
            raise RuntimeError("an ItemSpool without json_level has no text")
        if not self._count:
            write("[]")
            return
        write("[")
        self._text.flush()
        self._text.seek(0)
        while block := self._text.read(1 << 20):
            write(block)
        self._text.seek(0, 2)
        write("\n" + "  " * (self._level - 1) + "]")

    def extend(self, items: Iterable[Any]) -> None:
        for item in items:
            self.append(item)

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __iter__(self) -> Iterator[Any]:
        if self._file is None:
            yield from self._items
            return
        self._file.seek(0)
        for _ in range(self._count):
            yield pickle.load(self._file)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, list) and list(iter(self)) == list(iter(other))

    __hash__ = None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self._text is not None:
            self._text.close()


class AgreementMerger:
    """One consumer's agreement over conversations given one at a time (:meth:`add`, in run
    order); :meth:`result` is ``consumer.agreement`` over all of them merged, with its missed
    and invented events (JSON-ready) in :attr:`missed` and :attr:`invented` and, for the daily
    report, its days in the details' ``days`` — spools, not the agreement's tuples (left
    empty)."""

    def __init__(
        self, consumer: Consumer[Any], directory: Path | None = None, json_level: int | None = None
    ) -> None:
        self.consumer = consumer
        self.rule = _RULE_OF.get(type(consumer))
        self.directory = directory
        # ``json_level``: the events' and days' spools keep their JSON text at that level.
        self.missed = ItemSpool(directory, json_level)
        self.invented = ItemSpool(directory, json_level)
        self._days = ItemSpool(directory, json_level)  # daily: the days with a reference line
        self._later_days = ItemSpool(directory)  # daily: days with challenger lines only
        self._later_invented = ItemSpool(directory)  # daily: their lines
        self._sums: dict[str, int] = {}
        self._tables: dict[str, tuple[int, ...]] = {}
        self._f1_sum = 0.0
        self._whole: list[tuple[ConsumerOutput[Any], ConsumerOutput[Any]]] = []

    def add(self, reference: ConsumerOutput[Any], challenger: ConsumerOutput[Any]) -> None:
        """One conversation's outputs on both sides."""
        if self.rule is None:
            self._whole.append((reference, challenger))
            return
        part = self.consumer.agreement(reference, challenger)
        details = part.details
        if self.rule == "daily_report":
            self._add_daily(part)
            return
        self.missed.extend(e.to_dict() for e in part.missed)
        self.invented.extend(e.to_dict() for e in part.invented)
        for name in _RULES[self.rule]:
            self._sums[name] = self._sums.get(name, 0) + details[name]
        if self.rule == "arcs":
            # The shares are of whole numbers of chunks: n · share gives them back exactly.
            n = details["n_chunks"]
            for name in ("valence", "trajectory"):
                same = round(details[f"{name}_agreement"] * n) if n else 0
                self._sums[name] = self._sums.get(name, 0) + same
        elif self.rule == "escalation":
            for flag, table in rating_tables(reference, challenger).items():
                before = self._tables.get(flag, (0, 0, 0, 0))
                self._tables[flag] = tuple(a + b for a, b in zip(before, table, strict=True))

    def _add_daily(self, part: ConsumerAgreement) -> None:
        # Over a run the days come in two runs: every day with a reference line (conversation
        # by conversation), then the days only the challenger speaks of; a day's invented
        # lines follow its place.
        later: set[tuple[str, str]] = set()
        for day in part.details["days"]:
            if day["n_reference"] > 0:
                self._days.append(day)
            else:
                self._later_days.append(day)
                later.add((day["conversation_id"], day["day"]))
        self.missed.extend(e.to_dict() for e in part.missed)
        for event in part.invented:
            key = (event.conversation_id, getattr(event, "day", None))
            (self._later_invented if key in later else self.invented).append(event.to_dict())
        # Per conversation, then over conversations in run order (as the consumer sums).
        self._f1_sum += float(part.counts["f1_sum"])
        for name in ("n_reference", "n_challenger", "matched"):
            self._sums[name] = self._sums.get(name, 0) + part.details[name]

    def result(self) -> ConsumerAgreement:
        consumer = self.consumer
        if self.rule is None:
            merged = [
                ConsumerOutput(
                    consumer.name,
                    tuple(e for part in parts for e in part.events),
                    tuple(c for part in parts for c in part.chunks),
                )
                for parts in zip(*self._whole, strict=True)
            ] or [ConsumerOutput(consumer.name, (), ())] * 2
            whole = consumer.agreement(merged[0], merged[1])
            self.missed.extend(e.to_dict() for e in whole.missed)
            self.invented.extend(e.to_dict() for e in whole.invented)
            return ConsumerAgreement(whole.agreement, whole.details, (), (), whole.counts)
        sums = self._sums
        details: dict[str, Any]
        if self.rule in ("drift", "loops"):
            matched, n_ref, n_chal = (
                sums.get("matched", 0),
                sums.get("n_reference", 0),
                sums.get("n_challenger", 0),
            )
            details = {
                "n_reference": n_ref,
                "n_challenger": n_chal,
                "matched": matched,
                "precision": matched / n_chal if n_chal else (1.0 if n_ref == 0 else 0.0),
                "recall": matched / n_ref if n_ref else (1.0 if n_chal == 0 else 0.0),
            }
            counts: dict[str, float] = {
                "matched": matched,
                "n_reference": n_ref,
                "n_challenger": n_chal,
            }
        elif self.rule == "escalation":
            matched, n_ref, n_chal = (
                sums.get("matched", 0),
                sums.get("n_reference", 0),
                sums.get("n_challenger", 0),
            )
            tables = self._tables or rating_tables(
                ConsumerOutput(consumer.name, (), ()), ConsumerOutput(consumer.name, (), ())
            )
            details = escalation_details(n_ref, n_chal, matched, tables)
            counts = {"matched": matched, "n_reference": n_ref, "n_challenger": n_chal}
        elif self.rule == "arcs":
            n = sums.get("n_chunks", 0)
            both = sums.get("agreeing_chunks", 0)
            details = {
                "n_chunks": n,
                "n_reference": sums.get("n_reference", 0),
                "n_challenger": sums.get("n_challenger", 0),
                "agreeing_chunks": both,
                "valence_agreement": sums.get("valence", 0) / n if n else 1.0,
                "trajectory_agreement": sums.get("trajectory", 0) / n if n else 1.0,
            }
            counts = {"agreeing_chunks": both, "n_chunks": n}
        else:  # daily_report
            self._days.extend(self._later_days)
            self.invented.extend(self._later_invented)
            self._later_days.close()
            self._later_invented.close()
            n_days = len(self._days)
            details = {
                "n_days": n_days,
                "n_reference": sums.get("n_reference", 0),
                "n_challenger": sums.get("n_challenger", 0),
                "matched": sums.get("matched", 0),
                "days": self._days,
            }
            counts = {"f1_sum": self._f1_sum, "n_days": n_days}
        return consumer.counted(counts, details, [], [])

    def close(self) -> None:
        for spool in (self.missed, self.invented, self._days, self._later_days):
            spool.close()
        self._later_invented.close()


# The whole numbers each built-in consumer's details add up (the rest is derived from them).
_RULES: dict[str, tuple[str, ...]] = {
    "drift": ("matched", "n_reference", "n_challenger"),
    "loops": ("matched", "n_reference", "n_challenger"),
    "escalation": ("matched", "n_reference", "n_challenger"),
    "arcs": ("n_chunks", "n_reference", "n_challenger", "agreeing_chunks"),
    "daily_report": (),
}
_RULE_OF: dict[type[Consumer[Any]], str] = {
    DriftConsumer: "drift",
    LoopsConsumer: "loops",
    EscalationConsumer: "escalation",
    ArcsConsumer: "arcs",
    DailyReportConsumer: "daily_report",
}
