"""Reads of the policy corpus, always within one tenant."""
from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from django.db.models import Q

from tenants.models import Tenant

from .models import LineRole, PolicyLine, PolicyVersion


@dataclass
class Evidence:
    """What retrieval selected: one in-force version and its lines in one language, with
    the amount line that answers the question."""

    source: str
    version: PolicyVersion
    lines: list[PolicyLine]
    amount_line: PolicyLine
    authority: str
    other_in_force: list[str] = field(default_factory=list)

    def line_of(self, role: str) -> PolicyLine | None:
        return next((line for line in self.lines if line.role == role), None)


def versions_in_force(*, tenant: Tenant, topic: str, on_date: date) -> list[PolicyVersion]:
    """Versions in force on the date, newest first; a version replaced by another version
    in force on the same date is out, whatever its own dates say."""
    versions = list(
        PolicyVersion.objects.select_related("document")
        .filter(document__tenant=tenant, document__topic=topic, effective_from__lte=on_date)
        .filter(Q(effective_to__isnull=True) | Q(effective_to__gte=on_date))
        .order_by("-effective_from", "-id")
    )
    replaced = {v.replaces_id for v in versions if v.replaces_id}
    return [v for v in versions if v.id not in replaced]


def _terms_match(question: str, groups: list[list[str]]) -> bool:
    text = unicodedata.normalize("NFKC", question).lower()
    return bool(groups) and all(any(term.lower() in text for term in group) for group in groups)


def evidence_retrieve(*, tenant: Tenant, topic: str, on_date: date, lang: str, question: str) -> Evidence | None:
    """The newest in-force version with a line in `lang` that answers the question, or None."""
    in_force = versions_in_force(tenant=tenant, topic=topic, on_date=on_date)
    for version in in_force:
        lines = list(PolicyLine.objects.filter(version=version, lang=lang).order_by("number"))
        answering = [line for line in lines if line.role == LineRole.AMOUNT and _terms_match(question, line.subject_terms)]
        if answering:
            return Evidence(source=version.label, version=version, lines=lines, amount_line=answering[0],
                            authority=version.document.authority,
                            other_in_force=[v.label for v in in_force if v.id != version.id])
    return None


def corpus_version(*, tenant: Tenant, topic: str) -> str:
    """A digest of every version and line of the tenant's policy on this topic: any edit
    changes it, so a cached answer from the old text is never reused."""
    rows = []
    for version in PolicyVersion.objects.filter(document__tenant=tenant, document__topic=topic).order_by("label"):
        rows.append(["version", version.label, str(version.effective_from), str(version.effective_to),
                     version.replaces.label if version.replaces_id else None, version.document.authority])
        for line in version.lines.order_by("lang", "number"):
            rows.append(["line", version.label, line.lang, line.number, line.text, line.role,
                         str(line.amount) if line.amount is not None else None, line.unit, line.subject_terms])
    digest = hashlib.sha256(json.dumps(rows, ensure_ascii=False, sort_keys=True).encode()).hexdigest()
    return f"corpus-{digest[:16]}"


def amount_text(amount: Decimal) -> str:
    """750.00 -> "750", 12.50 -> "12.5": the number as a policy line would write it."""
    text = format(amount.normalize(), "f")
    return text
