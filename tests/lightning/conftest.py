"""Shared fixtures of the lightning tests."""

from _lightning_helpers import no_fit  # noqa: F401
from _resume_helpers import reference  # noqa: F401
