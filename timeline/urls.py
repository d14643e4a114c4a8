from django.urls import path

from . import views

urlpatterns = [
    path("console/", views.console, name="console"),
    path("conversations/<int:conversation_id>/", views.conversation_page, name="conversation"),
    path("conversations/<int:conversation_id>/panel/", views.conversation_panel, name="conversation-panel"),
    path("conversations/<int:conversation_id>/chat/", views.conversation_chat, name="conversation-chat"),
    path("conversations/<int:conversation_id>/timeline/", views.conversation_timeline, name="conversation-timeline"),
    path("runs/<int:run_id>/", views.run_page, name="run"),
    path("runs/<int:run_id>/panel/", views.run_panel_fragment, name="run-panel"),
    path("timeline/", views.timeline_index, name="timeline"),
    path("activities/<int:activity_id>/frames/", views.activity_frames_fragment, name="activity-frames"),
    path("frames/<int:frame_id>/payload/", views.frame_payload_fragment, name="frame-payload"),
]
