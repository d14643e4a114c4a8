"""Editing a city's rule period on the rules page: staff only, versioned, checked as the rules
file is."""
from __future__ import annotations

import json
import logging
from decimal import Decimal
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from config.api import Conflict, Forbidden, NotFound, Unprocessable, strict_moment

from payroll.models import CityRulePeriod
from payroll.records.rules import HOUSING_FUND, RulesFileError, period_checked


log = logging.getLogger(__name__)


def _figure_text(value: Decimal) -> str:
    """A figure as the rules keep it: plain decimal text, no exponent, no trailing zeros."""
    text = format(Decimal(value), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def city_rules_may_change(user) -> bool:
    """The city rules are global: only Keel's staff (Django's is_staff) change them, never a
    tenant's admin, whose change would move every other tenant's payroll."""
    return bool(getattr(user, "is_authenticated", False) and getattr(user, "is_staff", False))


def city_rule_period_change(*, user, period_id: int, version: str, rates: dict[str, dict[str, Decimal]],
                            bases: dict[str, dict[str, Decimal]], source: dict[str, Any], verified: bool,
                            note: str):
    """Change one period's figures (staff only: the rules are global, every tenant's trial reads
    them). `rates`: {kind or "housing_fund": {employee_rate, employer_rate}} in percent; `bases`:
    {"social_base" | "housing_fund_base" | a kind with its own base: {floor, cap}} in yuan.
    The changed period is validated as a look-up validates it (payroll.records.rules.period_checked),
    then written compare-and-set on `version` (the updated_at the form was rendered with): a
    change someone else saved meanwhile is a 409, never overwritten; the same change submitted
    twice writes once. Records who and when on the row."""
    if not city_rules_may_change(user):
        raise Forbidden(_("Only Keel's staff may change the city rules: every tenant's payroll reads them."),
                        code="staff_required")
    row = CityRulePeriod.objects.filter(id=period_id).first()
    if row is None:
        raise NotFound(_("No such city rules period."), code="rules_period_not_found")
    figures = json.loads(json.dumps(row.rules))  # a deep copy of plain JSON
    for contribution in figures.get("contributions", []):
        kind = contribution.get("kind")
        for field, value in rates.get(kind, {}).items():
            contribution[field] = _figure_text(value)
        if kind in bases and "base" in contribution:
            contribution["base"] = {k: _figure_text(v) for k, v in bases[kind].items()}
    fund = figures.setdefault("housing_fund", {})
    for field, value in rates.get(HOUSING_FUND, {}).items():
        fund[field] = _figure_text(value)
    for name in ("social_base", "housing_fund_base"):
        if name in bases:
            figures[name] = {k: _figure_text(v) for k, v in bases[name].items()}
    source = {"authority": str(source.get("authority", "")).strip(), "title": str(source.get("title", "")).strip(),
              "year": source.get("year"), "url": str(source.get("url") or "").strip()}
    if not source["url"]:
        del source["url"]
    note = (note or "").strip()[:2000]
    changed = {"rules": figures, "source": source, "verified": bool(verified), "note": note}
    try:
        period_checked(row.city, {"name": row.name, "name_zh": row.name_zh},
                       {**figures, "effective_from": row.effective_from.isoformat(),
                        "effective_to": row.effective_to.isoformat() if row.effective_to else None,
                        "source": source, "verified": bool(verified)})
    except RulesFileError as err:
        raise Unprocessable(_("These figures are refused: %(detail)s") % {"detail": str(err)},
                            code="invalid_rules") from None
    if all(getattr(row, name) == value for name, value in changed.items()):
        return row  # nothing to change (or a repeated submit of a change already made)
    now = timezone.now()
    written = CityRulePeriod.objects.filter(id=row.id, updated_at=_version_parse(version)).update(
        **changed, updated_by=user, updated_at=now)
    if not written:
        # Someone saved this period since the form was rendered: theirs stands until this
        # person has seen it. (The same figures submitted twice are caught above.)
        raise Conflict(_("Someone changed these rules since you opened the page; reload it and make your "
                         "change again."), code="rules_changed")
    log.info("city rules %s from %s changed by %s", row.city, row.effective_from, user.get_username())
    row.refresh_from_db()
    return row


def _version_parse(version: str):
    try:
        return strict_moment(version or "")
    except ValueError:
        return None
