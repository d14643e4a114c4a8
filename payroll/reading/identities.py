"""The columns of an HR export a bank and the tax bureau need: ID type and number (证件类型,
证件号码), bank account and bank name (银行账号, 开户银行). Read from the same CSV or XLSX export as
the employees; each value is checked as the declaration and a batch payment would check it, and a
refusal names the row and the column, never the number itself (refusals are shown and logged)."""
from __future__ import annotations

import re

from django.utils.translation import gettext

from payroll.models import IdType

from .attachments import IDENTITY_ALIASES
from .figures import FiguresRead, figures_read

ID_TYPE_NAMES = {
    IdType.RESIDENT_ID: ("resident_id", "resident identity card", "居民身份证", "身份证"),
    IdType.PASSPORT: ("passport", "护照", "中国护照", "外国护照"),
    IdType.HK_MACAU_PASS: ("hk_macau_pass", "港澳居民来往内地通行证", "回乡证"),
    IdType.TAIWAN_PASS: ("taiwan_pass", "台湾居民来往大陆通行证", "台胞证"),
    IdType.FOREIGNER_PERMIT: ("foreigner_permit", "外国人永久居留身份证", "外国人永久居留证"),
    IdType.OTHER: ("other", "其他", "其它"),
}
RESIDENT_ID = re.compile(r"\d{17}[\dX]")
WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
CHECK_CHARS = "10X98765432"


def resident_id_valid(number: str) -> bool:
    """GB 11643: 17 digits and a check character (the weighted sum mod 11)."""
    if not RESIDENT_ID.fullmatch(number):
        return False
    return CHECK_CHARS[sum(int(d) * w for d, w in zip(number[:17], WEIGHTS)) % 11] == number[17]


def _id_type(text: str) -> str | None:
    key = text.strip().lower()
    return next((code for code, names in ID_TYPE_NAMES.items() if key in names or key == str(code.label).lower()),
                None)


def identities_read(*, tenant_id: int, filename: str, raw: bytes) -> FiguresRead:
    """Each row's identity and bank fields, normalised (spaces out of numbers, X upper case), the
    ID type as its code. Refused: an ID type the declaration does not know; a resident ID that
    fails its check character; an ID number without its type; a bank account that is not 8 to 30
    digits; an account without its bank's name."""
    read = figures_read(tenant_id=tenant_id, filename=filename, raw=raw, aliases=IDENTITY_ALIASES,
                        texts=frozenset(IDENTITY_ALIASES))
    header = {c["read_as"]: c["header"] for c in reversed(read.columns)}
    kept = []
    for row in read.rows:
        values, good = dict(row.values), True
        if "id_type" in values:
            code = _id_type(str(values["id_type"]))
            if code is None:
                read.refuse(row.line, header["id_type"], "unknown_id_type",
                            gettext("Not an ID type the tax declaration knows (居民身份证, 护照, …)."))
                good = False
            else:
                values["id_type"] = str(code)
        if "id_number" in values:
            number = re.sub(r"\s", "", str(values["id_number"])).upper()
            values["id_number"] = number
            if "id_type" not in values:
                read.refuse(row.line, header.get("id_type", header["id_number"]), "id_type_missing",
                            gettext("An ID number needs its ID type."))
                good = False
            elif values["id_type"] == IdType.RESIDENT_ID and not resident_id_valid(number):
                read.refuse(row.line, header["id_number"], "invalid_id_number",
                            gettext("Not a valid resident ID number (18 characters; the last is a check character)."))
                good = False
            elif not re.fullmatch(r"[0-9A-Z()（）-]{5,40}", number):
                read.refuse(row.line, header["id_number"], "invalid_id_number",
                            gettext("Not a valid ID number (5 to 40 letters and digits)."))
                good = False
        if "bank_account" in values:
            account = re.sub(r"[\s-]", "", str(values["bank_account"]))
            values["bank_account"] = account
            if not re.fullmatch(r"\d{8,30}", account):
                read.refuse(row.line, header["bank_account"], "invalid_bank_account",
                            gettext("Not a bank account number (8 to 30 digits)."))
                good = False
            elif not values.get("bank_name"):
                read.refuse(row.line, header.get("bank_name", header["bank_account"]), "bank_name_missing",
                            gettext("A bank account needs its bank's name."))
                good = False
        if good:
            row.values = values
            kept.append(row)
    return read.keeping(kept)
