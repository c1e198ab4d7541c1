"""The scale benchmark's corpus generator (benchmarks/_synthetic.py), loaded once for the tests
that need a corpus larger than the demo's. benchmarks/ is not a package, so it is loaded by path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

NAME = "bench_synthetic"


def synthetic() -> ModuleType:
    """benchmarks/_synthetic.py as a module (the same one on every call)."""
    if NAME in sys.modules:
        return sys.modules[NAME]
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "_synthetic.py"
    spec = importlib.util.spec_from_file_location(NAME, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module
