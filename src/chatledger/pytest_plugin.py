"""The pytest plugin of ``chatledger gate`` (entry point ``pytest11: chatledger``).

``pytest --chatledger-gate gate.yaml`` adds one test item per rule of the gate, so a
regression shows up beside the project's own tests, in pytest's summary, its ``-k`` selection
and its JUnit report (``--junitxml``). The run directories come from the rules file
(``baseline:``, ``candidate:``, relative to the file) or from ``--chatledger-baseline`` /
``--chatledger-candidate``. A usage error (a missing run, runs on different chunks) stops the
session as pytest's own usage errors do (exit code 4).

Without ``--chatledger-gate`` the plugin does nothing; it imports nothing of ChatLedger's
until then, so installing ChatLedger costs other projects' test runs nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from chatledger.gating import RuleOutcome

OPTION = "--chatledger-gate"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("chatledger", "ChatLedger regression gate")
    group.addoption(
        OPTION,
        metavar="RULES",
        default=None,
        help="a gate rules file: each rule becomes a test item",
    )
    group.addoption("--chatledger-baseline", metavar="DIR", default=None, help="baseline run")
    group.addoption("--chatledger-candidate", metavar="DIR", default=None, help="candidate run")
    group.addoption("--chatledger-baseline-model", metavar="NAME", default=None)
    group.addoption("--chatledger-candidate-model", metavar="NAME", default=None)
    group.addoption(
        "--chatledger-strict",
        action="store_true",
        default=False,
        help="decide the gate's rules on point estimates",
    )


class GateRuleFailed(Exception):
    """A rule of the gate failed (shown without a traceback)."""


class GateItem(pytest.Item):
    """One rule of the gate, already decided: running it reports the verdict."""

    def __init__(self, *, outcome: RuleOutcome, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outcome = outcome
        self.user_properties.extend(
            [("baseline", outcome.baseline), ("candidate", outcome.candidate)]
        )

    def runtest(self) -> None:
        if not self.outcome.passed:
            raise GateRuleFailed(self.outcome.reason)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, GateRuleFailed):
            from chatledger.gating._formats import _detail

            return f"chatledger gate: {self.outcome.name} failed\n{_detail(self.outcome)}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"chatledger gate: {self.outcome.name}"


class GateFile(pytest.File):
    """The rules file, whose items are the gate's rules."""

    def __init__(self, *, outcomes: list[RuleOutcome], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outcomes = outcomes

    def collect(self) -> list[pytest.Item]:
        return [
            GateItem.from_parent(self, name=outcome.name, outcome=outcome)
            for outcome in self.outcomes
        ]


def _directory(value: str | None) -> Path | None:
    return Path(value) if value else None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    rules_option = config.getoption(OPTION)
    if not rules_option:
        return
    from chatledger.core import ChatLedgerError
    from chatledger.gating import evaluate_gate, load_gate_rules

    path = Path(str(rules_option))
    if not path.is_file():
        raise pytest.UsageError(f"chatledger gate: {path}: rules file not found")
    try:
        rules = load_gate_rules(str(rules_option))
        result = evaluate_gate(
            rules,
            _directory(config.getoption("--chatledger-baseline")),
            _directory(config.getoption("--chatledger-candidate")),
            baseline_model=config.getoption("--chatledger-baseline-model"),
            candidate_model=config.getoption("--chatledger-candidate-model"),
            strict=True if config.getoption("--chatledger-strict") else None,
        )
    except ChatLedgerError as exc:
        raise pytest.UsageError(f"chatledger gate: {exc}") from None
    gate_file = GateFile.from_parent(session, path=path.resolve(), outcomes=result.outcomes)
    items.extend(gate_file.collect())
