"""A gate's verdicts in the forms CI systems read: JUnit XML, GitHub workflow commands and a
Markdown summary (for ``$GITHUB_STEP_SUMMARY``).

The JUnit document carries every attribute and element the strictest of the common readings
of the format asks for (the Ant schema that Jenkins' xUnit plugin, GitLab and most JUnit
readers follow): ``testsuites`` → one ``testsuite`` with name, timestamp, hostname, counts,
time, id and package, its ``properties``, one ``testcase`` per rule (``failure`` with message
and type when the rule failed), then ``system-out`` and ``system-err``.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime

from chatledger.gating._result import GateResult, RuleOutcome

FAILURE_TYPE = "RegressionGateFailure"
SUITE = "chatledger gate"


def _detail(outcome: RuleOutcome) -> str:
    parts = [outcome.reason]
    if outcome.baseline is not None:
        parts.append(f"baseline {outcome.baseline:.6g}, candidate {outcome.candidate:.6g}")
    if outcome.p_value is not None:
        parts.append(f"p = {outcome.p_value:.3g}")
    if outcome.units:
        parts.append(f"resampled {outcome.n_units} {outcome.units}")
    parts.append(f"decided on the {outcome.decided_on}")
    return "; ".join(parts)


def _header(result: GateResult) -> str:
    return (
        f"{result.baseline.model} ({result.baseline.run_dir}) → {result.candidate.model} "
        f"({result.candidate.run_dir})"
    )


def junit_xml(result: GateResult, *, timestamp: datetime | None = None, time_s: float = 0.0) -> str:
    """The verdicts as a JUnit XML document (one test case per rule)."""
    from xml.etree import ElementTree as ET  # only this format needs it (~5 ms a gate)

    when = (timestamp or datetime.now(UTC)).replace(tzinfo=None, microsecond=0)
    n, failed = len(result.outcomes), len(result.failures)
    counts = {"tests": str(n), "failures": str(failed), "errors": "0"}
    root = ET.Element("testsuites", {"name": SUITE, **counts, "time": f"{time_s:.3f}"})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": f"{SUITE}: {result.baseline.model} → {result.candidate.model}",
            "timestamp": when.isoformat(),
            "hostname": socket.gethostname() or "localhost",
            **counts,
            "skipped": str(len(result.undecided)),
            "time": f"{time_s:.3f}",
            "id": "0",
            "package": "chatledger.gating",
        },
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("baseline", result.baseline.run_dir),
        ("baseline_model", result.baseline.model),
        ("candidate", result.candidate.run_dir),
        ("candidate_model", result.candidate.model),
        ("rules", result.rules_source),
        ("strict", str(result.strict).lower()),
        ("confidence", f"{result.confidence:g}"),
        ("resamples", str(result.resamples)),
        ("seed", str(result.seed)),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": value})
    for outcome in result.outcomes:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "name": outcome.name,
                "classname": f"chatledger.gating.{outcome.rule.figure}",
                "time": "0.000",
            },
        )
        if outcome.undecided:  # neither a pass nor a failure: skipped, with the reason
            ET.SubElement(case, "skipped", {"message": outcome.reason})
        elif not outcome.passed:
            failure = ET.SubElement(
                case, "failure", {"message": outcome.reason, "type": FAILURE_TYPE}
            )
            failure.text = _detail(outcome)
    out = ET.SubElement(suite, "system-out")
    out.text = "\n".join([_header(result), *(f"note: {n}" for n in result.notes)])
    ET.SubElement(suite, "system-err").text = ""
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(result: GateResult) -> str:
    """GitHub Actions workflow commands: an ``::error`` per failed rule, a ``::notice`` per
    passed one and per note (shown on the run's summary page and in the log)."""
    lines = []
    for outcome in result.outcomes:
        level = "notice" if outcome.passed else "warning" if outcome.undecided else "error"
        verdict = "passed" if outcome.passed else "UNDECIDED" if outcome.undecided else "FAILED"
        title = _escape_property(f"{SUITE}: {outcome.name} {verdict}")
        lines.append(f"::{level} title={title}::{_escape_data(_detail(outcome))}")
    for note in result.notes:
        lines.append(f"::warning title={_escape_property(SUITE)}::{_escape_data(note)}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_summary(result: GateResult) -> str:
    """A Markdown table of the verdicts (what a job summary shows)."""
    verdict = (
        "passed"
        if result.passed
        else f"failed ({len(result.failures)} of {len(result.outcomes)} rules)"
        if result.failures
        else f"undecided ({len(result.undecided)} of {len(result.outcomes)} rules)"
    )
    lines = [
        f"### {SUITE}: {verdict}",
        "",
        _cell(_header(result)),
        "",
        "| rule | baseline | candidate | change | interval | verdict |",
        "|---|---:|---:|---:|---|---|",
    ]
    for o in result.outcomes:
        base = "—" if o.baseline is None else f"{o.baseline:.4g}"
        change = "—" if o.difference is None else f"{o.difference:+.4g}"
        interval = "—" if o.low is None or o.high is None else f"[{o.low:+.4f}, {o.high:+.4f}]"
        mark = "pass" if o.passed else "undecided" if o.undecided else "**FAIL**"
        lines.append(
            f"| {_cell(o.name)} | {base} | {o.candidate:.4g} | {change} | {interval} | {mark} |"
        )
    lines += ["", *(f"- note: {_cell(n)}" for n in result.notes)]
    return "\n".join(lines).rstrip() + "\n"
