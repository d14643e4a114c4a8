from django.urls import path

from . import views

urlpatterns = [
    path("", views.claims_page, name="expenses-claims"),
    path("claims/<int:claim_id>/", views.claim_page, name="expenses-claim"),
    path("claims/<int:claim_id>/invoice/", views.claim_invoice),
    path("claims/<int:claim_id>/<str:action>/", views.claim_action, name="expenses-claim-action"),
]
