"""Command line interface."""

import sys

from chatledger.cli._app import app
from chatledger.cli._app import main as _main
from chatledger.cli import _run_cmd as _run_cmd  # registers run, compare

__all__ = ["app", "main"]


def main() -> None:
    sys.exit(_main())
