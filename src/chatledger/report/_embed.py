"""Embedding data in a ``<script>`` element without letting the data end it."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

from markupsafe import Markup

# Inside <script>, the HTML parser looks for "</script" and "<!--" before any JavaScript runs;
# JSON allows "\u003c"-style escapes, so no "<", ">" or "&" need appear literally. U+2028/2029
# are valid in JSON strings but were line ends in older JavaScript: escape them as well.
_UNSAFE = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_TABLE = str.maketrans(_UNSAFE)


def script_json(data: Any) -> Markup:
    """``data`` as JSON that is safe verbatim inside ``<script type="application/json">``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Markup(text.translate(_TABLE))


def packed_json(data: Any) -> str:
    """``data`` as gzip-compressed JSON in base64, for bulky data the page unpacks itself
    (DecompressionStream). Base64 has no character that could end a script element, and a
    fixed mtime keeps the bytes the same for the same data."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(gzip.compress(raw.encode("utf-8"), compresslevel=9, mtime=0)).decode()


def unpack_json(text: str) -> Any:
    """The inverse of :func:`packed_json` (for tests and tools)."""
    return json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))
