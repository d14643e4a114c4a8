from .models import Membership


def membership(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"membership": None}
    return {"membership": Membership.objects.select_related("tenant").filter(user=user).first()}
