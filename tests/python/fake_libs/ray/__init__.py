"""Fake Ray (tests/python/fake_libs/README.md)."""
FAKE = True
