from celery import shared_task

from .services import wiring_check_complete


@shared_task
def wiring_check_run(check_id: int) -> None:
    wiring_check_complete(check_id=check_id)
