"""Numbers and dates are written in ASCII digits: one policy for every field that reads one.

Python reads any Unicode decimal digit as a number: int("١٢٣٤٥") is 12345, Decimal("１２")
is 12, and Django's date pattern (\\d) takes "１２１２-11-16" as the year 1212. A person
reading "١٢٣٤٥" in a page or a record does not read 12,345, and the value stored is not
the one they saw. So every DRF serializer field and every Django form field that reads a
number, a date or a time refuses text with any character beyond ASCII (400, naming the
field, as any invalid value), before the field's own parsing: one rule for the API and
the pages, installed once when Django starts (`ascii_digits_install`, from config.apps),
not remembered field by field."""
from __future__ import annotations

import functools
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _
from rest_framework import fields as drf_fields
from rest_framework import serializers

NOT_ASCII = _("Write numbers and dates with the digits 0–9; “%(value)s” holds other characters.")

# The fields that read a number, a date, a time or a duration from text.
DRF_FIELDS = (drf_fields.IntegerField, drf_fields.FloatField, drf_fields.DecimalField, drf_fields.DateField,
              drf_fields.DateTimeField, drf_fields.TimeField, drf_fields.DurationField)
FORM_FIELDS = (forms.IntegerField, forms.FloatField, forms.DecimalField, forms.DateField, forms.DateTimeField,
               forms.TimeField, forms.DurationField)


def _shown(value: str) -> str:
    return value if len(value) <= 40 else value[:40] + "…"


def _checked(read, error: type[Exception]):
    @functools.wraps(read)
    def read_ascii(self, value: Any, *args: Any, **kwargs: Any):
        if isinstance(value, str) and not value.isascii():
            raise error(NOT_ASCII % {"value": _shown(value)}, code="invalid")
        return read(self, value, *args, **kwargs)

    read_ascii.keel_ascii_digits = True
    return read_ascii


def ascii_digits_install() -> None:
    """Put the policy in front of each field class's parsing (idempotent)."""
    for field_class, method, error in ([(f, "to_internal_value", serializers.ValidationError) for f in DRF_FIELDS]
                                       + [(f, "to_python", forms.ValidationError) for f in FORM_FIELDS]):
        read = field_class.__dict__.get(method)
        if read is not None and not getattr(read, "keel_ascii_digits", False):
            setattr(field_class, method, _checked(read, error))
