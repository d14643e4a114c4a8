from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import DomainError, StrictCharField, StrictIntegerField, StrictSlugField
from tenants.selectors import membership_for_user

from .services import policy_answer


class PolicyAnswerInputSerializer(serializers.Serializer):
    question = StrictCharField(max_length=500)
    date = serializers.DateField(help_text="The date the question is about (YYYY-MM-DD); picks the policy in force.")
    topic = StrictSlugField(max_length=40, help_text="Policy topic, e.g. travel.")
    lang = serializers.ChoiceField(choices=["en", "zh"])
    max_transitions = StrictIntegerField(min_value=1, max_value=64, required=False,
                                         help_text="Transition cap; 8 when omitted.")


class PolicyCitationSerializer(serializers.Serializer):
    source = StrictCharField()
    line = serializers.IntegerField()
    text = StrictCharField()


class PolicyAnswerBodySerializer(serializers.Serializer):
    amount = StrictCharField(allow_null=True, help_text="Exact, as the policy writes it (a string).")
    unit = StrictCharField(allow_null=True)
    citation = PolicyCitationSerializer(many=True)


class PolicyAnswerOutputSerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=["ANSWERED", "ABSTAINED", "STOPPED"])
    path = serializers.ListField(child=StrictCharField())
    reason = StrictCharField()
    detail = StrictCharField(allow_blank=True)
    model_calls = serializers.IntegerField()
    transitions = serializers.IntegerField()
    answer = PolicyAnswerBodySerializer()
    cached = serializers.BooleanField()
    corpus_version = StrictCharField()
    processing_version = StrictCharField()


class PolicyAnswerApi(APIView):
    """Answer a policy question through the exact graph (DESIGN.md §2, "KA-5")."""

    InputSerializer = PolicyAnswerInputSerializer
    OutputSerializer = PolicyAnswerOutputSerializer

    @extend_schema(request=PolicyAnswerInputSerializer, responses=PolicyAnswerOutputSerializer)
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        serializer = self.InputSerializer(data=request.data)
        if not serializer.is_valid():
            problems = "; ".join(f"{field}: {' '.join(str(m) for m in messages)}"
                                 for field, messages in serializer.errors.items())
            raise DomainError(_("Invalid policy question. %(problems)s")
                              % {"problems": problems}, extra={"errors": serializer.errors})
        data = serializer.validated_data
        result = policy_answer(tenant=membership.tenant, question=data["question"], on_date=data["date"],
                               topic=data["topic"], lang=data["lang"],
                               max_transitions=data.get("max_transitions"))
        return Response(self.OutputSerializer(result).data)


urlpatterns = [
    path("policy/answers/", PolicyAnswerApi.as_view(), name="api-policy-answers"),
]
