"""The console's pages: every page a person opens, in one list."""
from django.urls import path

from .views import approvals, conversations, metrics, replay, runs, timeline

urlpatterns = [
    # The console: conversations with the agent
    path("console/", conversations.console, name="console"),
    path("conversations/<int:conversation_id>/", conversations.conversation_page, name="conversation"),
    path("conversations/<int:conversation_id>/panel/", conversations.conversation_panel, name="conversation-panel"),
    path("conversations/<int:conversation_id>/chat/", conversations.conversation_chat, name="conversation-chat"),
    path("conversations/<int:conversation_id>/upload/", conversations.conversation_upload,
         name="conversation-upload"),
    # Runs
    path("runs/", runs.runs_history, name="runs"),
    path("runs/<int:run_id>/", runs.run_page, name="run"),
    path("runs/<int:run_id>/panel/", runs.run_panel_fragment, name="run-panel"),
    path("runs/<int:run_id>/waits/", runs.run_waits_fragment, name="run-waits"),
    path("runs/<int:run_id>/replay/", replay.run_replay_fragment, name="run-replay-fragment"),
    # The timeline
    path("timeline/", timeline.timeline_index, name="timeline"),
    path("conversations/<int:conversation_id>/timeline/", timeline.conversation_timeline,
         name="conversation-timeline"),
    path("activities/<int:activity_id>/frames/", timeline.activity_frames_fragment, name="activity-frames"),
    path("frames/<int:frame_id>/payload/", timeline.frame_payload_fragment, name="frame-payload"),
    # The approver's desk
    path("approvals/", approvals.inbox, name="approvals-inbox"),
    path("approvals/queue/", approvals.queue_partial, name="approvals-queue"),
    path("approvals/matrix/", approvals.matrix, name="approvals-matrix"),
    path("approvals/runs/<int:run_id>/history/", approvals.run_history, name="approvals-history"),
    path("approvals/<int:approval_id>/", approvals.inbox, name="approvals-detail"),
    path("approvals/<int:approval_id>/card/", approvals.card_partial, name="approvals-card"),
    # Metrics
    path("metrics/", metrics.metrics_page, name="metrics"),
]
