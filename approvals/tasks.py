from celery import shared_task

from .services import approval_reminders_send


@shared_task(name="approvals.tasks.approval_reminders")
def approval_reminders() -> int:
    """Beat: remind approvers before deadlines (each reminder once; see the service)."""
    return approval_reminders_send()
