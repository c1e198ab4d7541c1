"""Extractors: turn conversation chunks into schema v3 extractions.

``offline:rules`` (:class:`RuleBasedExtractor`) is the embedded default: cue phrases, small word
lists and VADER sentiment, with no network and no model weights. Build any registered extractor
by name with :func:`get_extractor`.
"""

from chatledger.extractors._registry import EXTRACTORS, Extractor, get_extractor
from chatledger.extractors._rules import RuleBasedExtractor

__all__ = ["EXTRACTORS", "Extractor", "RuleBasedExtractor", "get_extractor"]
