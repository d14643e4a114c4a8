"""The console speaks the language a person chose (kept on their membership), else their
browser's (Django's LocaleMiddleware runs first and reads Accept-Language and the cookie)."""
from __future__ import annotations

from django.conf import settings
from django.utils import translation

from .selectors import membership_of_request

SUPPORTED = {code for code, _ in settings.LANGUAGES}


class UserLanguageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            membership = membership_of_request(user)  # the view's membership_for_user reads no more
            language = membership.language if membership else None
            if language in SUPPORTED:
                translation.activate(language)
                request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)
