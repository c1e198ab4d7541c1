"""A statistical regression gate: does the candidate run fall *significantly* below the
baseline? Rules per figure, decided on paired bootstrap differences (``chatledger gate``, the
pytest plugin)."""

from chatledger.gating._evaluate import evaluate_gate
from chatledger.gating._formats import github_annotations, junit_xml, markdown_summary
from chatledger.gating._result import GATE_RESULT_VERSION, GateResult, GateSide, RuleOutcome
from chatledger.gating._rules import GateRule, GateRules, GateSettings, load_gate_rules

__all__ = [
    "GATE_RESULT_VERSION",
    "GateResult",
    "GateRule",
    "GateRules",
    "GateSettings",
    "GateSide",
    "RuleOutcome",
    "evaluate_gate",
    "github_annotations",
    "junit_xml",
    "load_gate_rules",
    "markdown_summary",
]
