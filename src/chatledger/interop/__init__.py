"""Results in the formats other evaluation tools read.

``export_inspect_log`` writes a conversation run as an inspect_ai ``.eval`` log that
``inspect view`` opens (the optional extra ``inspect``: ``pip install 'chatledger[inspect]'``);
docs/inspect.md says what maps to what. inspect_ai is imported only when a log is written.
"""

from chatledger.interop._inspect import INSPECT_EXTRA, InspectExport, export_inspect_log

__all__ = ["INSPECT_EXTRA", "InspectExport", "export_inspect_log"]
