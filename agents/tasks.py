from celery import shared_task

from .news import news_post

NEWS_TASK = "agents.tasks.run_news"


@shared_task(name=NEWS_TASK)
def run_news(event_id: int) -> None:
    news_post(event_id)
