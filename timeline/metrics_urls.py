from django.urls import path

from .metrics_views import metrics_page

urlpatterns = [
    path("", metrics_page, name="metrics"),
]
