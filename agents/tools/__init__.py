"""Importing this package registers every tool (agents.apps calls it)."""
from . import noop, payroll  # noqa: F401
