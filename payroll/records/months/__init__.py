"""The payroll month: start, compute, close, verify, reopen (services) and its reads."""
from .close import current_files, month_close, month_files_build, month_payslips, month_reopen_apply, month_verify
from .compute import month_compute, month_figures
from .lifecycle import Started, month_reopen, month_start
from .state import TransitionRefused, month_rejected, month_rejection, month_transition

__all__ = ["Started", "TransitionRefused", "current_files", "month_close", "month_compute", "month_figures",
           "month_files_build", "month_payslips", "month_reopen", "month_rejected", "month_rejection",
           "month_reopen_apply", "month_start", "month_transition", "month_verify"]
