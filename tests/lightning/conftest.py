"""Shared fixtures of the lightning tests."""

from _lightning_helpers import no_fit  # noqa: F401
