"""The payroll domain's blueprints, registered with the engine when Django starts."""
from pathlib import Path

from workflows.blueprints import blueprint_load

HERE = Path(__file__).parent

PAYROLL_GROUP_SETUP = blueprint_load(HERE / "payroll_group_setup.json")
PAYROLL_DIRECT_IMPORT = blueprint_load(HERE / "payroll_direct_import.json")
PAYROLL_TENANT_RESTORE = blueprint_load(HERE / "payroll_tenant_restore.json")
PAYROLL_MONTH = blueprint_load(HERE / "payroll_month.json")
PAYROLL_MONTH_REOPEN = blueprint_load(HERE / "payroll_month_reopen.json")
