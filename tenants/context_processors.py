from django.utils.functional import SimpleLazyObject

from .models import Membership


def membership(request):
    """The caller's membership for the top bar, read only when a template shows it."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"membership": None}
    return {"membership": SimpleLazyObject(lambda: Membership.objects.select_related("tenant").filter(user=user)
                                           .first())}
