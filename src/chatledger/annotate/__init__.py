"""Human gold for your own chats: the annotation page (a session of chunks, its state and gold
file, the local server) and agreement between annotators."""

from chatledger.annotate._agreement import (
    AgreementReport,
    FieldAgreement,
    LabelAgreement,
    annotator_agreement,
    records_agreement,
)
from chatledger.annotate._form import FieldSpec, PropertySpec, form_spec
from chatledger.annotate._gold import ANNOTATION_VERSION, Annotation, GoldLine, ItemDecision
from chatledger.annotate._judge_agreement import (
    AgreementInterval,
    JudgeAgreement,
    KappaReading,
    KappaTable,
    judge_agreement,
)
from chatledger.annotate._sample import stratified_sample
from chatledger.annotate._server import TOKEN_HEADER, build_app, page_html, serve
from chatledger.annotate._session import AnnotationSession, SaveResult
from chatledger.annotate._state import ChunkState, FieldProblem, FieldState, ItemState, gold_line
from chatledger.annotate._store import AnnotationStore, SessionInfo

__all__ = [
    "ANNOTATION_VERSION",
    "TOKEN_HEADER",
    "AgreementInterval",
    "AgreementReport",
    "Annotation",
    "AnnotationSession",
    "AnnotationStore",
    "ChunkState",
    "FieldAgreement",
    "FieldProblem",
    "FieldSpec",
    "FieldState",
    "GoldLine",
    "ItemDecision",
    "ItemState",
    "JudgeAgreement",
    "KappaReading",
    "KappaTable",
    "LabelAgreement",
    "PropertySpec",
    "SaveResult",
    "SessionInfo",
    "annotator_agreement",
    "build_app",
    "form_spec",
    "gold_line",
    "judge_agreement",
    "page_html",
    "records_agreement",
    "serve",
    "stratified_sample",
]
