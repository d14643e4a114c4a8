"""The expense tools: create claim → upload invoice → (policy check) →
submit → read result. `application_id` is produced by create and consumed by upload,
submit and read only through its coordinate: the model never retypes it."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.words import ngettext_noop, words
from workflows.tools import MONEY, Acceptance, Measure, Tool, ToolContext, ToolError, tool_register

from . import previews
from expenses.models import ClaimStatus, ExpenseClaim, Invoice
from expenses.records.services import (
    Actor,
    claim_create,
    claim_submit,
    claim_withdraw,
    invoice_upload,
)

ID = {"type": "string", "pattern": "^[0-9]{1,19}$"}


def _claim(ctx: ToolContext, claim_id: Any) -> ExpenseClaim | None:
    return ExpenseClaim.objects.filter(tenant_id=ctx.tenant_id, id=int(claim_id)).first()


# --- create_claim ----------------------------------------------------------------------------

def create_claim(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    receipt = claim_create(actor=Actor.of_agent(ctx), idempotency_key=ctx.idempotency_key, **arguments)
    body = receipt.body
    facts = {k: body[k] for k in ("category", "city", "start_date", "nights", "amount", "currency")}
    return {"application_id": body["application_id"], "claim_facts": facts, "per_night": body["per_night"],
            "receipt_ref": f"expenses/claims/{body['application_id']}"}


tool_register(Tool(
    name="create_claim",
    description="Create a draft expense claim (category, city, first date, nights, total amount, currency).",
    input_schema={"type": "object", "properties": {
        "category": {"enum": ["lodging", "meals", "transport", "other"]}, "city": {"type": "string", "minLength": 1},
        "start_date": {"type": "string", "format": "date"}, "nights": {"type": "integer", "minimum": 0},
        "amount": {"type": "string", "pattern": r"^[0-9]+(\.[0-9]{1,2})?$"}, "currency": {"type": "string"},
        "description": {"type": "string"}},
        "required": ["category", "city", "start_date", "nights", "amount"]},
    output_schema={"type": "object", "properties": {"application_id": ID, "claim_facts": {"type": "object"}},
                   "required": ["application_id", "claim_facts"]},
    fn=create_claim, produces=["application_id", "claim_facts"], side_effects=True, read_only=False,
    accept=lambda ctx, arguments, output: [
        Acceptance("the claim exists in this tenant as a draft",
                   bool((c := _claim(ctx, output["application_id"])) and c.status in ClaimStatus.values))],
    summary=lambda output: (f"Created a draft {output['claim_facts']['category']} claim: "
                            f"{output['claim_facts']['amount']} {output['claim_facts']['currency']} in "
                            f"{output['claim_facts']['city']}."),
    effects_count=previews.claim_effects,
    milestones={"completed": "the expense claim was created as a draft"},
))


# --- upload_invoice ----------------------------------------------------------------------------

def upload_invoice(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    receipt = invoice_upload(actor=Actor.of_agent(ctx), claim_id=arguments["application_id"],
                             invoice_id=arguments["invoice_id"], idempotency_key=ctx.idempotency_key)
    return {**receipt.body, "receipt_ref": f"expenses/invoices/{receipt.body['invoice_id']}"}


def _upload_accept(ctx, arguments, output) -> list[Acceptance]:
    invoice = Invoice.objects.filter(tenant_id=ctx.tenant_id, id=int(output["invoice_id"])).first()
    return [Acceptance("the invoice is filed to this claim",
                       bool(invoice and str(invoice.claim_id) == str(arguments["application_id"]))),
            Acceptance("its checksum matches the receipt", bool(invoice and invoice.checksum == output["checksum"]))]


tool_register(Tool(
    name="upload_invoice",
    description="File the attached invoice (PDF or image) to the draft claim.",
    input_schema={"type": "object", "properties": {"application_id": ID, "invoice_id": ID},
                  "required": ["application_id", "invoice_id"]},
    output_schema={"type": "object", "properties": {"invoice_id": ID, "checksum": {"type": "string"}},
                   "required": ["invoice_id", "checksum"]},
    fn=upload_invoice, consumes=["application_id"], side_effects=True, read_only=False, accept=_upload_accept,
    summary=lambda output: f"Filed the invoice “{output['filename']}” ({output['size']:,} bytes) to the claim.",
    milestones={"completed": "the invoice was filed to the claim"},
))


# --- submit_claim (approval only when the policy check says so) ---------------------------------

def submit_claim(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    receipt = claim_submit(actor=Actor.of_agent(ctx), claim_id=arguments["application_id"],
                           policy=arguments["policy_check"], idempotency_key=ctx.idempotency_key)
    return {"application_id": receipt.body["application_id"], "status": receipt.body["status"],
            "policy_verdict": receipt.body["policy_verdict"],
            "receipt_ref": f"expenses/claims/{receipt.body['application_id']}"}


def _submit_accept(ctx, arguments, output) -> list[Acceptance]:
    claim = _claim(ctx, arguments["application_id"])
    return [Acceptance("the claim is submitted", bool(claim and claim.status != ClaimStatus.DRAFT),
                       claim.status if claim else "missing")]


tool_register(Tool(
    name="submit_claim",
    title=gettext_noop("Submit claim"),
    description="Submit the checked claim. A claim over the policy limit waits for an approver first.",
    input_schema={"type": "object", "properties": {"application_id": ID, "policy_check": {"type": "object"}},
                  "required": ["application_id", "policy_check"]},
    output_schema={"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]},
    fn=submit_claim, consumes=["application_id", "policy_check"], side_effects=True, read_only=False,
    needs_approval=True, approval_when=previews.submit_needs_approval, compensation="withdraw_claim",
    accept=_submit_accept, preview=previews.submit_preview, preconditions_check=previews.submit_preconditions,
    argument_describe=previews.submit_argument, summary_describe=previews.submit_summary, effects_count=previews.submit_effects,
    approval_rule={"roles": ["approver", "admin"], "deadline_seconds": 3 * 24 * 3600,
                   "remind_before_seconds": 4 * 3600},
    # The policy's limits are in CNY; a claim in another currency is above any amount limit set here.
    measures=[Measure("amount", gettext_noop("Claim amount"), MONEY, currency="CNY")],
    summary=lambda output: f"Submitted the claim ({output['status']}).",
    milestones={"awaiting_approval": "the claim is over the policy limit and waits for an approver",
                "completed": "the claim was submitted", "blocked": "the over-limit claim was refused or timed out"},
))


def withdraw_claim(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    receipt = claim_withdraw(actor=Actor.of_agent(ctx), claim_id=arguments["application_id"],
                             idempotency_key=ctx.idempotency_key)
    return {"status": receipt.body["status"], "receipt_ref": f"expenses/claims/{receipt.body['application_id']}"}


tool_register(Tool(
    name="withdraw_claim",
    description="Withdraw a submitted claim back to draft (the submit step's compensation).",
    input_schema={"type": "object", "properties": {"application_id": ID}, "required": ["application_id"]},
    output_schema={"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]},
    fn=withdraw_claim, consumes=["application_id"], side_effects=True, read_only=False,
    accept=lambda ctx, arguments, output: [Acceptance("the claim is a draft again", output["status"] == "draft")],
    summary=lambda output: "Withdrew the claim back to draft.",
    milestones={"completed": "the claim was withdrawn"},
))


# --- read_claim_result ---------------------------------------------------------------------------

def read_claim_result(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    claim = _claim(ctx, arguments["application_id"])
    if claim is None:
        raise ToolError("The claim is missing.")
    return {"status": claim.status, "amount": str(claim.amount), "currency": claim.currency,
            "policy_verdict": claim.policy_verdict, "invoices": claim.invoices.count(),
            "receipt_ref": f"expenses/claims/{claim.id}"}


tool_register(Tool(
    name="read_claim_result",
    description="Read the claim's status back from the expense system.",
    input_schema={"type": "object", "properties": {"application_id": ID}, "required": ["application_id"]},
    output_schema={"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]},
    fn=read_claim_result, consumes=["application_id"], inline=True,
    accept=lambda ctx, arguments, output: [Acceptance("the expense system reports the claim submitted",
                                                      output["status"] == ClaimStatus.SUBMITTED, output["status"])],
    summary=lambda output: words(ngettext_noop(
        "The expense system reports the claim %(status)s (%(amount)s %(currency)s, %(invoices)s invoice).",
        "The expense system reports the claim %(status)s (%(amount)s %(currency)s, %(invoices)s invoices).",
        "invoices"), status=output["status"], amount=output["amount"], currency=output["currency"],
        invoices=output["invoices"]),
    milestones={"completed": "the claim's result was read back"},
))
