"""``python -m chatledger``: the same command line as ``chatledger``."""

from chatledger.cli import main

main()
