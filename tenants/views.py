from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .selectors import members_for, membership_for_user


class LoginView(auth_views.LoginView):
    redirect_authenticated_user = True

    def form_invalid(self, form):
        # A wrong password is bad input: say so in the page and in the status code.
        response = super().form_invalid(form)
        response.status_code = 400
        return response


@login_required
def home(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    return render(request, "tenants/home.html", {"membership": membership, "members": members_for(membership)})
