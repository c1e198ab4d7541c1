"""Local stand-ins for outside services, used by the tests (they listen on 127.0.0.1 only)."""
