from django.urls import path

from . import views

urlpatterns = [
    path("", views.inbox, name="approvals-inbox"),
    path("queue/", views.queue_partial, name="approvals-queue"),
    path("matrix/", views.matrix, name="approvals-matrix"),
    path("runs/<int:run_id>/history/", views.run_history, name="approvals-history"),
    path("<int:approval_id>/", views.inbox, name="approvals-detail"),
    path("<int:approval_id>/card/", views.card_partial, name="approvals-card"),
]
