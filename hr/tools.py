"""The candidate-matching skill's tools: retrieve candidates from the CV bank
(read-only), score them (deterministic, explained; the per-candidate scratchpad stays in
memory), persist the top matches through the HR services — an approver first when there
are more than the threshold."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.words import Stored, localised, ngettext_noop, words
from workflows.faults import fault_point
from workflows.tools import Acceptance, Measure, Tool, ToolContext, ToolError, tool_register

from . import matching, previews
from .models import Candidate, Match, Tan, TanStatus
from .services import Actor, matches_record, matches_withdraw

ID = {"type": "string", "pattern": "^[0-9]{1,19}$"}


def retrieve_candidates(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    tan = Tan.objects.filter(tenant_id=ctx.tenant_id, id=int(arguments["tan_id"])).first()
    if tan is None or tan.status != TanStatus.APPROVED:
        raise ToolError("The TAN is missing or no longer approved.")
    candidates = [{"candidate_id": str(c.id), "name": c.name, "skills": c.skills, "location": c.location,
                   "seniority": c.seniority} for c in Candidate.objects.filter(tenant_id=ctx.tenant_id)]
    pool = {"tan": {"tan_id": str(tan.id), "title": tan.title, "skills": tan.skills, "location": tan.location,
                    "seniority": tan.seniority, "max_matches": tan.max_matches}, "candidates": candidates}
    return {"candidate_pool": pool, "count": len(candidates), "receipt_ref": f"hr/candidates?tan={tan.id}"}


tool_register(Tool(
    name="retrieve_candidates",
    description="Read the CV bank for an approved TAN (read-only).",
    input_schema={"type": "object", "properties": {"tan_id": ID}, "required": ["tan_id"]},
    output_schema={"type": "object", "properties": {"candidate_pool": {"type": "object"}, "count": {"type": "integer"}},
                   "required": ["candidate_pool", "count"]},
    fn=retrieve_candidates, produces=["candidate_pool"], inline=True,
    accept=lambda ctx, arguments, output: [Acceptance("the CV bank was read", output["count"] >= 0,
                                                      f"{output['count']} candidates")],
    summary=lambda output: words(ngettext_noop("Retrieved %(count)s candidate from the CV bank.",
                                                       "Retrieved %(count)s candidates from the CV bank.", "count"),
                                 count=output["count"]),
    milestones={"completed": "the candidates were retrieved"},
))


def score_candidates(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    pool = arguments["candidate_pool"]
    tan = pool["tan"]
    top = matching.rank(tan, pool["candidates"], limit=int(tan["max_matches"]))
    return {"match_result": {"tan_id": tan["tan_id"], "title": tan["title"], "matches": top,
                             "considered": len(pool["candidates"])},
            "receipt_ref": f"skill/candidate_matching/{tan['tan_id']}"}


def _score_summary(output: dict[str, Any]) -> Stored:
    """"Scored 10 candidates; 3 fit: Maria Garcia 1.000, …" as words: each candidate by their
    name in the reader's language (the CV bank keeps a Chinese name beside the English one)."""
    result = output["match_result"]
    matches = result["matches"]
    if not matches:
        return words(gettext_noop("Scored %(considered)s candidates; none fit."), considered=result["considered"])
    ids = [int(m["candidate_id"]) for m in matches if str(m.get("candidate_id", "")).isdigit()]
    chinese = dict(Candidate.objects.filter(id__in=ids).values_list("id", "name_zh"))
    names = [words(gettext_noop("%(name)s %(score)s"), score=m["score"], name=localised(
        m["name"], chinese.get(int(m["candidate_id"])) or m["name"]) if str(m.get("candidate_id", "")).isdigit()
        else m["name"]) for m in matches]
    return words(gettext_noop("Scored %(considered)s candidates; %(fit)s fit: %(names)s."),
                 considered=result["considered"], fit=len(matches), names=names)


tool_register(Tool(
    name="score_candidates",
    description="Score each candidate against the TAN: skills overlap, location, seniority; keep the best.",
    input_schema={"type": "object", "properties": {"candidate_pool": {"type": "object"}},
                  "required": ["candidate_pool"]},
    output_schema={"type": "object", "properties": {"match_result": {"type": "object", "required": ["matches"]}},
                   "required": ["match_result"]},
    fn=score_candidates, consumes=["candidate_pool"], produces=["match_result"], inline=True,
    accept=lambda ctx, arguments, output: [Acceptance(
        "every kept match is explained", all(m["explanation"] for m in output["match_result"]["matches"]))],
    summary=lambda output: _score_summary(output),
    milestones={"completed": "the candidates were scored"},
))


def persist_matches(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    matches = arguments["match_result"]["matches"]
    if str(arguments["match_result"]["tan_id"]) != str(arguments["tan_id"]):
        raise ToolError("The scored matches belong to another TAN.")

    def after_each(index: int) -> None:
        if index == 0:
            fault_point("persist_matches.partial")  # recovery tests: die with some matches written

    receipts = matches_record(actor=Actor.of_agent(ctx), tan_id=arguments["tan_id"], matches=matches, run_id=ctx.run_id,
                              after_each=after_each)
    return {"persisted": len(receipts), "match_ids": [r["match_id"] for r in receipts],
            "receipt_ref": f"hr/tans/{arguments['tan_id']}/matches"}


def _persist_accept(ctx, arguments, output) -> list[Acceptance]:
    wanted = {int(m["candidate_id"]) for m in arguments["match_result"]["matches"]}
    stored = set(Match.objects.filter(tenant_id=ctx.tenant_id, tan_id=int(arguments["tan_id"]),
                                      candidate_id__in=wanted).values_list("candidate_id", flat=True))
    return [Acceptance("every top match is recorded once", stored == wanted, f"{len(stored)} of {len(wanted)}")]


tool_register(Tool(
    name="persist_matches",
    title=gettext_noop("Persist matches"),
    description="Record the top matches in the HR system, one per TAN and candidate.",
    input_schema={"type": "object", "properties": {"tan_id": ID, "match_result": {"type": "object"}},
                  "required": ["tan_id", "match_result"]},
    output_schema={"type": "object", "properties": {"persisted": {"type": "integer"}}, "required": ["persisted"]},
    fn=persist_matches, consumes=["match_result"], side_effects=True, read_only=False, needs_approval=True,
    approval_when=previews.persist_needs_approval, compensation="withdraw_matches", accept=_persist_accept,
    preview=previews.persist_preview, argument_describe=previews.persist_argument,
    summary_describe=previews.persist_summary,
    preconditions_check=previews.persist_preconditions, effects_count=previews.match_effects,
    approval_rule={"roles": ["approver", "admin"], "deadline_seconds": 24 * 3600, "remind_before_seconds": 2 * 3600},
    measures=[Measure("matches", gettext_noop("Matches recorded"), gettext_noop("matches"))],
    summary=lambda output: words(ngettext_noop("Recorded %(count)s match in the HR system.",
                                                       "Recorded %(count)s matches in the HR system.", "count"),
                                 count=output["persisted"]),
    milestones={"awaiting_approval": "more matches than usual wait for an approver",
                "completed": "the matches were recorded"},
))


def withdraw_matches(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    removed = matches_withdraw(actor=Actor.of_agent(ctx), tan_id=arguments["tan_id"], run_id=ctx.run_id)
    return {"removed": removed, "receipt_ref": f"hr/tans/{arguments['tan_id']}/matches"}


tool_register(Tool(
    name="withdraw_matches",
    description="Remove the matches this run recorded (the persist step's compensation).",
    input_schema={"type": "object", "properties": {"tan_id": ID}, "required": ["tan_id"]},
    output_schema={"type": "object", "properties": {"removed": {"type": "integer"}}, "required": ["removed"]},
    fn=withdraw_matches, side_effects=True, read_only=False,
    summary=lambda output: words(ngettext_noop("Removed %(count)s match this run had recorded.",
                                                       "Removed %(count)s matches this run had recorded.", "count"),
                                 count=output["removed"]),
))
