"""The payroll tools: each a thin, contract-checked door to the system of record.
Exact values (ids, versions) travel as coordinates; the model never sees them.

Registering is importing: each module registers its tools (workflows.tools.tool_register)
when it is imported; the trial step (trial_payroll) is registered with the trial it computes."""
from payroll.records import trial

from . import explore, interpret, match, month, restore, salaries, writes

__all__ = ["explore", "interpret", "match", "month", "restore", "salaries", "trial", "writes"]
