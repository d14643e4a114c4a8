"""Opaque 64-bit business identifiers.

They are random (not sequential) so a neighbour's id cannot be guessed, and the
API serialises them as strings: a JavaScript number rounds above 2**53, which would
silently change an ID's last digits: another record named, and no error to say so.
"""
import secrets

from django.db import models


def new_id() -> int:
    # 63 bits keeps the value inside a signed BIGINT; never zero.
    return secrets.randbits(63) or 1


class BusinessIdField(models.BigIntegerField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("primary_key", True)
        kwargs.setdefault("default", new_id)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)


MAX_ID = 2**63 - 1
