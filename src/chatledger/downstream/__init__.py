"""Layer 3: downstream consumers (drift, loops, escalation, arcs, daily report), DESIGN.md §5.

Each consumer reads one model's extractions of every conversation in time order and produces
events; a challenger is compared with the reference by how well the events built from its
extractions agree with those built from the reference's.
"""

from chatledger.downstream import _arcs as _arcs  # registers the consumers, in DESIGN order
from chatledger.downstream import _daily as _daily
from chatledger.downstream import _drift as _drift
from chatledger.downstream import _escalation as _escalation
from chatledger.downstream import _loops as _loops
from chatledger.downstream._agreement import (
    cluster_texts,
    cohen_kappa,
    f1_agreement,
    f1_array,
    f1_from_counts,
)
from chatledger.downstream._arcs import VALENCE, ArcPoint, ArcsConsumer, valence
from chatledger.downstream._base import (
    CONSUMERS,
    Consumer,
    ConsumerAgreement,
    ConsumerOutput,
    Counts,
    DownstreamEvent,
    get_consumer,
)
from chatledger.downstream._conversation import (
    UNDATED,
    ChunkRef,
    ChunkView,
    ConversationView,
    build_conversations,
)
from chatledger.downstream._daily import DailyReportConsumer, Highlight
from chatledger.downstream._drift import DriftConsumer, DriftEvent
from chatledger.downstream._escalation import EscalationConsumer, EscalationFlag
from chatledger.downstream._loops import LoopItem, LoopsConsumer
from chatledger.downstream._markdown import render_pipeline_markdown
from chatledger.downstream._merge import AgreementMerger, ItemSpool
from chatledger.downstream._run import (
    CONSUMER_NAMES,
    CombinedAgreements,
    ConsumerOutputs,
    ConsumerResult,
    DownstreamReport,
    build_outputs,
    combine_agreements,
    compare_outputs,
    composite_from_counts,
    consumer_names,
    coverage_fields,
    merge_outputs,
    narrow_coverage,
    reference_coverage,
    resolve_weights,
    run_downstream,
    skipped_consumers,
)

__all__ = [
    "CONSUMERS",
    "CONSUMER_NAMES",
    "UNDATED",
    "VALENCE",
    "AgreementMerger",
    "ArcPoint",
    "ArcsConsumer",
    "ChunkRef",
    "ChunkView",
    "CombinedAgreements",
    "Consumer",
    "ConsumerAgreement",
    "ConsumerOutput",
    "ConsumerOutputs",
    "ConsumerResult",
    "ConversationView",
    "Counts",
    "DailyReportConsumer",
    "DownstreamEvent",
    "DownstreamReport",
    "DriftConsumer",
    "DriftEvent",
    "EscalationConsumer",
    "EscalationFlag",
    "Highlight",
    "ItemSpool",
    "LoopItem",
    "LoopsConsumer",
    "build_conversations",
    "build_outputs",
    "cluster_texts",
    "cohen_kappa",
    "combine_agreements",
    "compare_outputs",
    "composite_from_counts",
    "consumer_names",
    "coverage_fields",
    "f1_agreement",
    "f1_array",
    "f1_from_counts",
    "get_consumer",
    "merge_outputs",
    "narrow_coverage",
    "reference_coverage",
    "render_pipeline_markdown",
    "resolve_weights",
    "run_downstream",
    "skipped_consumers",
    "valence",
]
