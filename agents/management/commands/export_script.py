"""Incident reproduction: write the scripted-backend file of a recorded run, so that its turns
can be replayed, anywhere, with the model answering exactly as it did.

    python manage.py export_script RUN_ID [-o run.json]
    KEEL_LLM=scripted KEEL_LLM_SCRIPT=run.json  … replay the same turns …

"responses" are the outputs of every model call recorded on the run's conversation —
its message turns (intent, replies, ReAct steps, the policy decision) and its nodes
(interpretation) — in the order they were made: the scripted backend hands them back one
per call, so the same turns take the same routes, call the same tools and make the same
transitions. "turns" (the user's messages) and "approvals" (the human decisions) say what
to replay; a run started by a business event rather than a message has no turns, and
"trigger" (the event that started it), "blueprint", "params" and "started_by" say how to
start it again. The scripted backend reads only "responses". Nothing here knows a
domain: any blueprint's run exports the same way. A call that failed is kept as
"failed": true in "calls" and left out of "responses" (an exhausted script fails the same way).
"""
from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from agents.models import Message
from approvals.models import ApprovalRequest
from timeline.models import Event, Frame
from workflows.models import Run


def script_for_run(run_id: int) -> dict:
    run = Run.objects.filter(id=run_id).first()
    if run is None:
        raise CommandError(f"No run {run_id}.")
    frames = (Frame.objects.filter(activity__conversation_id=run.conversation_id, kind="model_call")
              .select_related("payload", "activity").order_by("started_at", "ended_at"))
    responses, calls = [], []
    for frame in frames:
        data = getattr(frame, "payload", None).data if hasattr(frame, "payload") else {}
        failed = bool(data.get("error"))
        calls.append({"purpose": data.get("purpose", ""), "activity": str(frame.activity_id),
                      "node": frame.activity.node_key or None, "failed": failed})
        if failed:
            continue
        if data.get("tool_calls"):
            responses.append({"text": data.get("text", ""), "tool_calls": data["tool_calls"]})
        else:
            responses.append(data.get("text", ""))
    turns = [{"text": m.text, "attachment": m.attachment_name or None}
             for m in Message.objects.filter(conversation_id=run.conversation_id, role="user").order_by("created_at")]
    approvals = [{"node": a.node.key, "verdict": a.status, "decided_by": a.decided_by.username if a.decided_by else None,
                  "comment": a.comment}
                 for a in ApprovalRequest.objects.filter(run=run).exclude(status="pending")
                 .select_related("node", "decided_by").order_by("decided_at")]
    trigger = (Event.objects.filter(conversation_id=run.conversation_id, run_id=run.id, type="run.trigger")
               .order_by("id").values_list("data", flat=True).first())
    return {"responses": responses, "run": str(run.id), "conversation": str(run.conversation_id),
            "blueprint": run.blueprint, "params": run.params,
            "started_by": run.created_by.username if run.created_by_id else None, "trigger": trigger,
            "status": run.status, "calls": calls, "turns": turns, "approvals": approvals}


class Command(BaseCommand):
    help = "Write the scripted-backend JSON ({\"responses\": [...]}) of a recorded run, for replay."

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int)
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        script = script_for_run(options["run_id"])
        text = json.dumps(script, ensure_ascii=False, indent=2)
        if options.get("output"):
            with open(options["output"], "w", encoding="utf-8") as out:
                out.write(text + "\n")
            self.stderr.write(f"wrote {len(script['responses'])} responses to {options['output']}")
        else:
            sys.stdout.write(text + "\n")
