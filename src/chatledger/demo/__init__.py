"""The offline demo: bundled corpus, offline and simulated challengers, human-gold samples."""

from chatledger.demo._bundled import human_sample, write_bundled_corpus
from chatledger.demo._demo import (
    OFFLINE_EXTRACTOR,
    SEVERITIES,
    DemoResult,
    HumanAgreement,
    human_agreement,
    prepare_demo,
    run_demo,
)
from chatledger.demo._examples import write_examples
from chatledger.demo._recorded import (
    RecordedModel,
    RecordedTask,
    RecordingFigures,
    RecordingManifest,
    recorded_dir,
    recorded_manifest,
    recording_figures,
)

__all__ = [
    "OFFLINE_EXTRACTOR",
    "SEVERITIES",
    "DemoResult",
    "HumanAgreement",
    "RecordedModel",
    "RecordedTask",
    "RecordingFigures",
    "RecordingManifest",
    "human_agreement",
    "human_sample",
    "prepare_demo",
    "recorded_dir",
    "recorded_manifest",
    "recording_figures",
    "run_demo",
    "write_bundled_corpus",
    "write_examples",
]
