"""The version, in a module of its own: any part of the package can read it without importing
the package root (whose lazy names reach every layer, which the layer contracts forbid)."""

__version__ = "0.1.0"
