"""Fill locale/zh_Hans/LC_MESSAGES/django.po from locale/zh_hans_strings.py and compile it.

    python manage.py makemessages -l zh_Hans --ignore='.venv/*' --ignore='*/tests/*' --ignore='tests/*'
    python scripts/i18n_fill.py        # fills msgstr, fixes the header, runs msgfmt --check

Prints every msgid that has no Chinese yet (it stays English on the page)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
sys.path.insert(0, str(ROOT / "locale"))
from zh_hans_strings import ZH

# A branch may keep its new words in its own locale/zh_hans_<area>.py (ZH = {...}) so that two
# branches adding words do not edit the same lines; they are read after the main file.
for extra in sorted((ROOT / "locale").glob("zh_hans_*.py")):
    if extra.name != "zh_hans_strings.py":
        namespace: dict = {}
        exec(compile(extra.read_text(encoding="utf-8"), str(extra), "exec"), namespace)
        ZH.update(namespace["ZH"])


def unquote(lines: list[str]) -> str:
    text = "".join(re.match(r'^(?:msgid|msgid_plural|msgstr(?:\[\d\])?)?\s*"(.*)"$', line).group(1) for line in lines)
    return text.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def main() -> int:
    blocks = PO.read_text(encoding="utf-8").split("\n\n")
    missing, out = [], []
    for i, block in enumerate(blocks):
        lines = block.split("\n")
        if i == 0:  # the header
            block = block.replace("#, fuzzy\n", "").replace("charset=CHARSET", "charset=UTF-8")
            block = re.sub(r'"Plural-Forms: .*\\n"', '"Plural-Forms: nplurals=1; plural=0;\\\\n"', block)
            block = block.replace('"Language: \\n"', '"Language: zh_Hans\\n"')
            out.append(block)
            continue
        # "#|" (the previous msgid of a fuzzy match) goes: the entry is translated now.
        keep = [line for line in lines if line.startswith("#") and not line.startswith(("#, fuzzy", "#|"))]
        flags = [line.replace("fuzzy, ", "").replace(", fuzzy", "") for line in lines if line.startswith("#,")
                 and line.strip() not in ("#, fuzzy",)]
        keep = [line for line in keep if not line.startswith("#,")] + [f for f in flags if f.strip() != "#,"]
        body = [line for line in lines if not line.startswith("#") and line.strip()]
        if not body:
            out.append(block)
            continue
        sections: dict[str, list[str]] = {}
        current = None
        for line in body:
            m = re.match(r"^(msgid_plural|msgid|msgstr(?:\[\d\])?) ", line)
            if m:
                current = m.group(1)
                sections[current] = [line]
            elif current:
                sections[current].append(line)
        msgid = unquote(sections["msgid"])
        zh = ZH.get(msgid)
        if zh is None:
            missing.append(msgid)
            out.append(block)
            continue
        new = keep + ["msgid " + l if j == 0 else l for j, l in enumerate([quote(msgid)])]
        if "msgid_plural" in sections:
            new += ["msgid_plural " + quote(unquote(sections["msgid_plural"])), "msgstr[0] " + quote(zh)]
        else:
            new += ["msgstr " + quote(zh)]
        out.append("\n".join(new))
    PO.write_text("\n\n".join(out), encoding="utf-8")
    for msgid in missing:
        print("no Chinese yet:", msgid.replace("\n", "\\n"))
    subprocess.run(["msgfmt", "--check", "-o", str(PO.with_suffix(".mo")), str(PO)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
