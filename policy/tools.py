"""The policy domain's tool: check a claim against the travel policy through the exact
graph. It consumes the claim's facts as a coordinate produced by the expense
system's create step, so no domain imports another: the engine carries the value."""
from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from tenants.models import Tenant
from workflows.pipeline import tool_model_call
from workflows.tools import Acceptance, Tool, ToolContext, tool_register

from .services import policy_claim_check


def check_claim_policy(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    facts = arguments["claim_facts"]
    result = policy_claim_check(tenant=Tenant.objects.get(id=ctx.tenant_id), on_date=date.fromisoformat(facts["start_date"]),
                                city=facts["city"], category=facts["category"], amount=Decimal(facts["amount"]),
                                nights=int(facts["nights"]), currency=facts["currency"],
                                lang=ctx.params.get("lang") or "en",
                                # The graph's one decision goes through the engine: capped by the
                                # run, counted in its metrics, a frame on the node's activity.
                                model=lambda messages, **options: tool_model_call(ctx, messages, **options))
    return {"policy_check": result, "receipt_ref": f"policy/travel/{result.get('source') or 'none'}"}


def _accept(ctx: ToolContext, arguments: dict[str, Any], output: dict[str, Any]) -> list[Acceptance]:
    check = output["policy_check"]
    cited = check["verdict"] == "no_policy" or (check["limit"] is not None and len(check["citation"]) >= 1)
    return [Acceptance("the verdict comes from the policy graph's terminal state", check["state"] in
                       ("ANSWERED", "ABSTAINED", "STOPPED", "NOT_ASKED"), check["state"]),
            Acceptance("a limit is cited with its policy lines", cited, check.get("source") or check["reason"])]


VERDICT_WORDS = {"within_limit": "within the policy", "over_limit": "over the policy limit",
                 "no_policy": "not covered by a policy limit"}

tool_register(Tool(
    name="check_claim_policy",
    description="Check an expense claim against the travel policy in force on its date (the exact policy graph).",
    input_schema={"type": "object", "properties": {"claim_facts": {"type": "object", "required": [
        "start_date", "city", "category", "amount", "nights", "currency"]}}, "required": ["claim_facts"]},
    output_schema={"type": "object", "properties": {"policy_check": {"type": "object", "required": [
        "verdict", "limit", "per_night", "citation", "summary"]}}, "required": ["policy_check"]},
    fn=check_claim_policy, consumes=["claim_facts"], produces=["policy_check"], accept=_accept,
    summary=lambda output: f"Policy check: the claim is {VERDICT_WORDS[output['policy_check']['verdict']]}. "
                           f"{output['policy_check']['summary']}",
    milestones={"completed": "the claim was checked against the travel policy"},
))
