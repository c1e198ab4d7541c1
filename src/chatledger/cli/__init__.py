"""Command line interface."""

import sys

from chatledger.cli._app import app
from chatledger.cli._app import main as _main

__all__ = ["app", "main"]


def main() -> None:
    sys.exit(_main())
