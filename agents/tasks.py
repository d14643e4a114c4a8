from celery import shared_task

from .news import news_post
from .replay import sandboxes_clean

NEWS_TASK = "agents.tasks.run_news"


@shared_task(name=NEWS_TASK)
def run_news(event_id: int) -> None:
    news_post(event_id)


@shared_task(name="agents.tasks.replay_sandboxes_clean")
def replay_sandboxes_clean() -> int:
    """Delete replay sandboxes left behind (see agents.replay.sandboxes_clean)."""
    return sandboxes_clean()
