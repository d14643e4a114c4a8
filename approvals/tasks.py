from celery import shared_task


@shared_task(name="approvals.tasks.approval_reminders")
def approval_reminders() -> int:
    """Beat: remind approvers before deadlines (each reminder once; see the service)."""
    from .services import approval_reminders_send

    return approval_reminders_send()
