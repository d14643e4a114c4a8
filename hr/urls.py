from django.urls import path

from . import views

urlpatterns = [
    path("", views.tans_page, name="hr-tans"),
    path("tans/<int:tan_id>/", views.tan_page, name="hr-tan"),
    path("tans/<int:tan_id>/approve/", views.tan_approve, name="hr-tan-approve"),
]
