"""The OpenAPI schema tells the truth: schemathesis (pinned in
requirements.txt) fuzzes EVERY operation of /api/schema/ against a live Keel in the
production topology (PostgreSQL, Redis, a `celery worker`, the ASGI server), as
a tenant admin with an API token, with every check it has (no 5xx, documented
status codes, content types, headers and bodies, invalid input rejected, valid
input accepted, auth enforced...).

Path parameters get VALID ids: a conversation, a run waiting for its approval, that
approval, an expense claim, a TAN, an Activity and one of its frames, a member, an
employee, a group, a snapshot, a template and a wiring check are created first,
so every operation is reached past its 404 (the issue's first fuzz never reached
`messages/` for want of a conversation id).

Bounded: MAX_EXAMPLES cases per operation and phase, one schemathesis worker, so
it takes a few minutes on two cores. Each run fuzzes with a new seed (from the clock),
so the suite keeps exploring instead of replaying one set of cases; the seed is in the
assertion message, and KEEL_FUZZ_SEED=<seed> replays a run. The counts (operations,
cases, failures) and the seed are in the assertion message and in
tests/artifacts/schema-fuzz/summary.json."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psycopg
import pytest

from tests.support import ROOT, Api, wait_until

MAX_EXAMPLES = int(os.environ.get("KEEL_FUZZ_MAX_EXAMPLES", "10"))
# A new seed per run unless one is given (to replay a failure): the clock, in seconds.
SEED = os.environ.get("KEEL_FUZZ_SEED") or str(int(time.time()))
# Every check schemathesis has (KEEL_FUZZ_CHECKS / KEEL_FUZZ_EXCLUDE_CHECKS narrow it).
CHECKS = os.environ.get("KEEL_FUZZ_CHECKS", "all")
# `negative_data_rejection` runs as schema_fuzz_hooks.negative_data_rejection_outside_links: the
# same check, but not in the stateful phase, where a link's values make a valid request look
# schema-violating (schemathesis#2983).
EXCLUDED_CHECKS = os.environ.get("KEEL_FUZZ_EXCLUDE_CHECKS", "negative_data_rejection")
# `positive_data_acceptance` wants every schema-valid request to succeed. These
# operations also refuse schema-valid requests for rules no OpenAPI 3.0 schema can
# say, each a clear problem: the answer they may give on top of 2xx/401/403/404/409/429.
ACCEPTED = ["2xx", "401", "403", "404", "409", "429"]
DOMAIN_REFUSALS = {
    "POST /api/v1/auth/token/": ["400"],  # a well-formed username with the wrong password
    "GET /api/v1/metrics/": ["400"],  # `days` or `since`/`until`, not both; since before until
    # `params` must fit the chosen blueprint's own JSON schema; an Idempotency-Key reused for another request
    "POST /api/v1/runs/": ["400", "422"],
    # the attachment's content is no CSV/XLSX; an Idempotency-Key reused for another message
    "POST /api/v1/conversations/{conversation_id}/messages/": ["400", "422"],
    "POST /api/v1/expenses/claims/": ["400", "422"],  # lodging needs nights; amount > 0 with 2 decimals; key reuse
    "POST /api/v1/expenses/claims/{claim_id}/invoices/": ["422"],  # the file is no PDF/PNG/JPEG; key reuse
    "POST /api/v1/expenses/invoices/": ["422"],  # the file is no PDF/PNG/JPEG
    "POST /api/v1/expenses/claims/{claim_id}/submit/": ["422"],  # an Idempotency-Key reused for another request
    "POST /api/v1/expenses/claims/{claim_id}/approve/": ["422"],
    "POST /api/v1/expenses/claims/{claim_id}/reject/": ["422"],
    "POST /api/v1/expenses/claims/{claim_id}/pay/": ["422"],
    # A name (or label) holding a character nobody can see is refused (config.names): an
    # unassigned or format code point, which no OpenAPI pattern can list; and key reuse.
    "POST /api/v1/payroll/groups/": ["400", "422"],
    "POST /api/v1/payroll/snapshots/": ["400", "422"],
    "POST /api/v1/payroll/snapshots/{snapshot_id}/restore/": ["422"],  # a run-scoped snapshot; key reuse
    # At most 1,200 payslips an answer (employees × months); an allowance's name of at most 100
    # characters (OpenAPI 3.0 cannot bound a key).
    "POST /api/v1/payroll/trial/": ["400"],
    # A term below its statutory floor or above its ceiling (each term has its own); a date
    # before 2000 or after 2100 (OpenAPI 3.0 has no bounds for a date).
    "POST /api/v1/payroll/attendance-rules/": ["400", "422"],
    # The file is no CSV/XLSX; its rows name unknown employees or impossible values; key reuse.
    "POST /api/v1/payroll/employees/identities/": ["400", "422"],
    "POST /api/v1/payroll/groups/{group_id}/inputs/": ["400", "422"],
    "POST /api/v1/payroll/months/{month_id}/inputs/": ["400", "422"],
    "POST /api/v1/payroll/year-openings/": ["400", "422"],
}
ARTIFACTS = ROOT / "tests" / "artifacts" / "schema-fuzz"
FUZZER, REVOKER = "ada", "dora"  # a tenant admin fuzzes; a developer's tokens are the ones revoked
FAST = {"KEEL_LEASE_SECONDS": "3", "KEEL_SWEEP_SECONDS": "1", "KEEL_OUTBOX_SECONDS": "1",
        # The fuzzer logs in with wrong passwords on purpose; the revoker's log-ins come
        # from the same address and must not be locked out by them.
        "KEEL_LOGIN_ADDRESS_FAILURES": "1000000"}
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
CLAIM = {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1800"}


pytestmark = [pytest.mark.long(110),  # seconds; started first (tests/fixtures.py)
              pytest.mark.keel("production", FAST, workers=1, beat=True)]


def sql_one(keel, query: str, *args):
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        row = conn.execute(query, args).fetchone()
    assert row is not None and row[0] is not None, f"no row for {query!r}"
    return row[0]


def pending_approval_of(api: Api, run_id: str) -> dict | None:
    return next((a for a in api.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run_id), None)


def valid_ids(keel) -> dict[str, int]:
    """One real, visible-to-the-fuzzer id for every path parameter of the schema."""
    alice, bob, ada = Api(keel.base_url, "alice"), Api(keel.base_url, "bob"), Api(keel.base_url, FUZZER)
    # A completed run first: it leaves a payroll group and a snapshot behind.
    status, done = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                                "params": {"request": REQUEST, "group_name": "Fuzz Done"}})
    assert status == 201, done
    wait_until(lambda: pending_approval_of(bob, done["id"]) is not None, "the first run's approval", 90)
    status, body = bob.post(f"/api/v1/approvals/{pending_approval_of(bob, done['id'])['id']}/approve/")
    assert status == 200, body
    finished = bob.wait_for_run(done["id"], {"completed"}, 90)
    assert finished["status"] == "completed"
    # The completed run's group starts a payroll month (its own run, at work meanwhile).
    group_id = next(s["value"] for s in finished["state"] if s["key"] == "group_id")
    status, month = ada.post("/api/v1/payroll/months/", {"group": str(group_id), "year": 2026, "month": 11})
    assert status == 202, month
    # A run started by someone else, so the fuzzer may decide its approval.
    status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                               "params": {"request": REQUEST, "group_name": "Fuzz Sales"}})
    assert status == 201, run
    wait_until(lambda: pending_approval_of(ada, run["id"]) is not None, "the run to wait for its approval", 90)
    approval = pending_approval_of(ada, run["id"])
    status, claim_run = alice.post("/api/v1/runs/", {"blueprint": "expense_claim", "params": CLAIM})
    assert status == 201, claim_run
    wait_until(lambda: pending_approval_of(ada, claim_run["id"]) is not None, "the claim to wait for approval", 90)
    status, conversation = ada.post("/api/v1/conversations/", {"title": "schema fuzz"})
    assert status == 201, conversation
    status, tan = ada.post("/api/v1/hr/tans/", {"title": "Fuzz Analyst", "location": "Beijing",
                                               "skills": ["sql", "python"], "seniority": 2})
    assert status == 201, tan
    status, check = ada.post("/api/v1/wiring-checks/")
    assert status in (200, 201, 202), check
    tenant = sql_one(keel, "SELECT id FROM tenants_tenant WHERE slug = 'demo'")
    return {
        "run_id": int(run["id"]),
        "month_id": int(month["id"]),
        "approval_id": int(approval["id"]),
        "conversation_id": int(conversation["id"]),
        "claim_id": sql_one(keel, "SELECT max(id) FROM expenses_expenseclaim WHERE tenant_id = %s", tenant),
        "tan_id": int(tan["id"]),
        "check_id": int(check["id"]),
        "activity_id": sql_one(keel, "SELECT a.id FROM timeline_activity a JOIN timeline_frame f ON f.activity_id = a.id "
                                     "WHERE a.run_id = %s ORDER BY a.id LIMIT 1", int(run["id"])),
        "frame_id": sql_one(keel, "SELECT f.id FROM timeline_frame f JOIN timeline_framepayload p ON p.frame_id = f.id "
                                  "JOIN timeline_activity a ON a.id = f.activity_id WHERE a.run_id = %s "
                                  "ORDER BY f.id LIMIT 1", int(run["id"])),
        "member_id": sql_one(keel, "SELECT m.id FROM tenants_membership m JOIN auth_user u ON u.id = m.user_id "
                                   "WHERE m.tenant_id = %s AND u.username = 'alice'", tenant),
        "employee_id": sql_one(keel, "SELECT min(id) FROM payroll_employee WHERE tenant_id = %s", tenant),
        "group_id": sql_one(keel, "SELECT min(id) FROM payroll_payrollgroup WHERE tenant_id = %s", tenant),
        "snapshot_id": sql_one(keel, "SELECT min(id) FROM payroll_snapshot WHERE tenant_id = %s", tenant),
        "template_id": sql_one(keel, "SELECT min(id) FROM payroll_payrolltemplate"),
    }


def frames_cursor(keel, activity_id: int) -> str:
    """The `next` cursor after an Activity's first frame ("<iso started_at>|<id>")."""
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        started_at, frame_id = conn.execute("SELECT started_at, id FROM timeline_frame WHERE activity_id = %s "
                                            "ORDER BY started_at, id LIMIT 1", (activity_id,)).fetchone()
    return f"{started_at.isoformat()}|{frame_id}"


def test_schemathesis_finds_no_server_error_and_no_schema_violation(keel):
    print(f"schema fuzz seed {SEED} (replay with KEEL_FUZZ_SEED={SEED})")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ids = valid_ids(keel)
    token = Api(keel.base_url, FUZZER).token

    # The schema needs an authenticated caller; anonymous is refused with a problem.
    try:
        urllib.request.urlopen(keel.base_url + "/api/schema/", timeout=30)
        raise AssertionError("/api/schema/ answered an anonymous caller")
    except urllib.error.HTTPError as err:
        assert err.code == 401, err.code
    req = urllib.request.Request(keel.base_url + "/api/schema/?format=json",
                                 headers={"Authorization": f"Token {token}", "Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        schema = json.loads(resp.read())
    schema_path = ARTIFACTS / "schema.json"
    schema_path.write_text(json.dumps(schema, indent=1))
    documented = {(m.upper(), p) for p, item in schema["paths"].items() for m in item
                  if m in {"get", "post", "put", "patch", "delete"}}
    params = {p["name"] for item in schema["paths"].values() for op in item.values() if isinstance(op, dict)
              for p in op.get("parameters", []) if p.get("in") == "path"}
    assert params <= set(ids), f"no valid id for path parameters {params - set(ids)}"

    config = ARTIFACTS / "schemathesis.toml"
    # Ids for every path; the frames page's `after` is an opaque cursor the API hands
    # out, so it gets a real one (an invented cursor is rightly refused with a 400).
    config.write_text("[parameters]\n" + "".join(f'"path.{name}" = {value}\n' for name, value in ids.items())
                      + '[[operations]]\ninclude-path = "/api/v1/activities/{activity_id}/frames/"\n'
                      + f'parameters = {{ "query.after" = "{frames_cursor(keel, ids["activity_id"])}" }}\n'
                      + "".join(f'[[operations]]\ninclude-name = "{name}"\n'
                                f'checks.positive_data_acceptance.expected-statuses = {json.dumps(ACCEPTED + extra)}\n'
                                for name, extra in DOMAIN_REFUSALS.items()))
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.integration.schema_fuzz_hooks",
           "KEEL_FUZZ_BASE_URL": keel.base_url, "KEEL_FUZZ_TOKEN": token, "KEEL_FUZZ_REVOKER": f"{REVOKER}:keel-demo",
           "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "160"}
    report = ARTIFACTS / "report.ndjson"
    junit = ARTIFACTS / "junit.xml"
    cmd = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run", str(schema_path),
           "--url", keel.base_url, "--checks", CHECKS, "--max-examples", str(MAX_EXAMPLES), "--workers", "1",
           "--seed", SEED, "--generation-database", "none",
           "--request-timeout", "60", "--no-color", "--report", "ndjson,junit",
           "--report-ndjson-path", str(report), "--report-junit-path", str(junit)]
    if EXCLUDED_CHECKS:
        cmd += ["--exclude-checks", EXCLUDED_CHECKS]
    # Run inside the artifacts folder: schemathesis keeps its cache (.schemathesis/) in the
    # working directory, which must not be the checkout.
    out = subprocess.run(cmd, cwd=ARTIFACTS, env=env, capture_output=True, text=True, timeout=1500, check=False)
    (ARTIFACTS / "schemathesis.log").write_text(out.stdout + out.stderr)

    counts = summary_counts(out.stdout, junit)
    counts["documented_operations"] = len(documented)
    counts["seed"] = int(SEED)
    (ARTIFACTS / "summary.json").write_text(json.dumps(counts, indent=1))
    counts["checks"] = f"{CHECKS} except {EXCLUDED_CHECKS}" if EXCLUDED_CHECKS else CHECKS
    message = (f"schemathesis ({counts['checks']}, seed {SEED}: replay with KEEL_FUZZ_SEED={SEED}): "
               f"{counts['operations']} operations ({len(documented)} documented), "
               f"{counts['cases']} cases, {counts['failures']} failures, {counts['errors']} errors, "
               f"exit {out.returncode}; log: {ARTIFACTS / 'schemathesis.log'}\n" + out.stdout[-12000:] + out.stderr[-3000:])
    print(message)
    assert counts["operations"] == len(documented), message
    assert counts["cases"] > counts["operations"] * 5, message
    assert out.returncode == 0 and counts["failures"] == 0 and counts["errors"] == 0, message


def summary_counts(stdout: str, junit: Path) -> dict[str, int]:
    """The counts of the CLI's closing summary ("Tested: 54", "1138 generated, 3 found
    5 unique failures, 107 skipped"); errors from the JUnit report."""
    import xml.etree.ElementTree as ET

    def number(pattern: str) -> int:
        found = re.search(pattern, stdout)
        return int(found.group(1)) if found else 0

    errors = sum(len(case.findall("error")) for case in ET.parse(junit).getroot().iter("testcase")) \
        if junit.exists() else 0
    return {"operations": number(r"Tested:\s*(\d+)"), "cases": number(r"(\d+) generated"),
            "failures": number(r"(\d+) unique failures"), "errors": errors}
