from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_POST

from .login_throttle import cooloff_seconds, locked_out, locked_out_message
from .models import Membership
from .selectors import members_for, membership_for_user
from .tokens import sign_out_everywhere


class ThrottledAuthenticationForm(AuthenticationForm):
    """Says "locked out" when django-axes refused the attempt, rather than
    "wrong password", which would send a person to retype the right one."""

    def clean(self):
        try:
            return super().clean()
        except ValidationError:
            if locked_out(self.request):
                raise ValidationError(locked_out_message(self.request), code="locked_out")
            raise


class LoginView(auth_views.LoginView):
    redirect_authenticated_user = True
    authentication_form = ThrottledAuthenticationForm

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "locked_out": locked_out(self.request),
                "locked_out_message": locked_out_message(self.request)}

    def form_invalid(self, form):
        # A wrong password is bad input: say so in the page and in the status code;
        # a locked-out account or address is "too many requests".
        response = super().form_invalid(form)
        if locked_out(self.request):
            response.status_code = 429
            response["Retry-After"] = str(cooloff_seconds(self.request))
        else:
            response.status_code = 400
        return response


class PasswordChangeView(auth_views.PasswordChangeView):
    """Changing the password revokes the user's API tokens (tenants.tokens) and
    ends their other sessions (Django's session hash); this one stays."""

    template_name = "registration/password_change_form.html"
    success_url = reverse_lazy("home")

    def form_valid(self, form):
        response = super().form_valid(form)
        messages.success(self.request, gettext("Password changed. Your API tokens were revoked and your other sessions ended."))
        return response


@login_required
def home(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    return render(request, "tenants/home.html", {"membership": membership, "members": members_for(membership)})


@login_required
@require_POST
def sign_out_everywhere_view(request: HttpRequest) -> HttpResponse:
    """End every session (this one included) and revoke every API token."""
    result = sign_out_everywhere(user_id=request.user.pk)
    logout(request)
    ended = ngettext("%(n)s session ended", "%(n)s sessions ended", result.sessions_ended) % {
        "n": result.sessions_ended}
    revoked = ngettext("%(n)s API token revoked", "%(n)s API tokens revoked", result.tokens_revoked) % {
        "n": result.tokens_revoked}
    messages.success(request, gettext("Signed out everywhere: %(sessions)s, %(tokens)s.")
                     % {"sessions": ended, "tokens": revoked})
    return redirect("login")


@require_POST
def language_switch(request: HttpRequest) -> HttpResponse:
    """Switch the console's language: kept on the person's membership (every device, every
    session) and in a cookie (the log-in page too). An unknown language changes nothing."""
    language = request.POST.get("language", "")
    if language not in {code for code, _ in settings.LANGUAGES}:
        return HttpResponseBadRequest(gettext("“%(language)s” is not a language Keel speaks.")
                                      % {"language": language[:20]}, content_type="text/plain; charset=utf-8")
    if request.user.is_authenticated:
        Membership.objects.filter(user=request.user).update(language=language)
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = "/"
    translation.activate(language)
    response = redirect(target)
    response.set_cookie(settings.LANGUAGE_COOKIE_NAME, language, max_age=settings.LANGUAGE_COOKIE_AGE,
                        samesite=settings.LANGUAGE_COOKIE_SAMESITE, secure=request.is_secure())
    return response
