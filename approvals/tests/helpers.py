from tests.demo import demo_ensure

from approvals.models import ApprovalRequest
from workflows.services import run_start
from tests.helpers import drive, membership

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def seed() -> None:
    demo_ensure()


def waiting_approval(username: str = "alice", group_name: str = "Shanghai Sales") -> ApprovalRequest:
    """Start a payroll setup as `username` and drive it to its approval gate."""
    run = run_start(membership=membership(username), blueprint="payroll_group_setup",
                    params={"request": REQUEST, "group_name": group_name})
    run = drive(run)
    assert run.status == "awaiting_approval", run.status_reason
    return ApprovalRequest.objects.get(run=run, status="pending")
