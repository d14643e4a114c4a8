"""Approve → the approved node claimed (in the approver's after-commit, for the
worker its message goes to) and → its tool started on that worker, against a Celery hop measured
in the same run (Keel's raw chain hop and the lean one). The resume needs no
sweep: the approver's request dispatches the node after its commit.

    .venv/bin/python bench/approve_resume.py [--n 12]
Ends with one JSON line."""
import argparse
import json
import time

from common import Api, celery_client, deployment, keel_stop, summary, wait
from dag_hop import raw_chain_hops
from lean import Lean

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def approve_once(alice: Api, bob: Api, i: int) -> tuple[float, float]:
    """(approve → the node claimed, approve → its tool started on a worker), ms."""
    from approvals.models import ApprovalRequest
    from workflows.models import ToolCall, Transition

    status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup", "params": {
        "request": REQUEST, "group_name": f"Bench Resume {i} {time.time_ns()}"}})
    assert status == 201, run
    alice.wait_for_run(run["id"], {"awaiting_approval"}, timeout=120)
    approval = ApprovalRequest.objects.get(run_id=int(run["id"]), status="pending")
    status, body = bob.post(f"/api/v1/approvals/{approval.id}/approve/", {"comment": "ok"})
    assert status == 200, body
    approval.refresh_from_db()

    def claimed():
        return Transition.objects.filter(node_id=approval.node_id, to_status="in_progress",
                                         at__gte=approval.decided_at).order_by("at").first()

    def started():
        return ToolCall.objects.filter(node_id=approval.node_id, started_at__gte=approval.decided_at).first()

    wait(claimed, timeout=60, what="the approved node's claim")
    wait(started, timeout=60, what="the approved node's tool call")
    return ((claimed().at - approval.decided_at).total_seconds() * 1000,
            (started().started_at - approval.decided_at).total_seconds() * 1000)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=12)
    args = parser.parse_args()
    keel = deployment(workers=2, concurrency=2)
    lean = None
    try:
        lean = Lean(keel.env["REDIS_URL"], workers=2, concurrency=2)
        app = celery_client(keel)
        alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
        approve_once(alice, bob, -1)  # warm up
        resume, running, raw, lean_hops = [], [], [], []
        for i in range(args.n):  # interleaved with the baselines
            claim_ms, run_ms = approve_once(alice, bob, i)
            resume.append(claim_ms)
            running.append(run_ms)
            raw += raw_chain_hops(app, keel.env["REDIS_URL"], 6)
            lean_hops += lean.chain_hops(6)
    finally:
        if lean:
            lean.stop()
        keel_stop(keel)
    r, g, w, ln = summary(resume), summary(running), summary(raw), summary(lean_hops)
    print(f"approve → claimed p50 {r['p50']:.2f} ms p99 {r['p99']:.2f} ms | approve → tool running on a worker "
          f"p50 {g['p50']:.2f} ms | raw hop p50 {w['p50']:.2f} ms | lean hop p50 {ln['p50']:.2f} ms")
    print(json.dumps({"n": args.n, "approve_to_claim_p50_ms": round(r["p50"], 3),
                      "approve_to_claim_p99_ms": round(r["p99"], 3),
                      "approve_to_tool_started_p50_ms": round(g["p50"], 3),
                      "tool_started_lean_p50_ratio": round(g["p50"] / ln["p50"], 3), "raw_p50_ms": round(w["p50"], 3),
                      "lean_p50_ms": round(ln["p50"], 3), "p50_ratio": round(r["p50"] / w["p50"], 3),
                      "lean_p50_ratio": round(r["p50"] / ln["p50"], 3)}))


if __name__ == "__main__":
    main()
