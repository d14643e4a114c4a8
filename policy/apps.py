from django.apps import AppConfig


class PolicyConfig(AppConfig):
    name = "policy"

    def ready(self) -> None:
        from . import tools  # noqa: F401 - registering is importing (check_claim_policy)
        from workflows.conversation import conversation_register

        from .conversation import PolicyConversation

        conversation_register(PolicyConversation())  # its part in the conversation: policy questions

    def seed_demo(self) -> None:
        """The demo travel policy for tenant demo; tenant other has none (its
        questions abstain), which also shows that the corpus is per tenant."""
        from tenants.models import Tenant

        from .services import policy_travel_seed

        tenant = Tenant.objects.filter(slug="demo").first()
        if tenant is not None:
            policy_travel_seed(tenant=tenant)
