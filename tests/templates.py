"""Run a command with the test sessions' templates made once (tests/support.py `template`):
`python -m tests.templates COMMAND…`. `make test` runs the integration and browser suites
under it, side by side: each session's controller then finds them (KEEL_TEMPLATE_*) instead of
making its own — one embedded PostgreSQL migrated and seeded, not one a suite. The templates
are removed when the command ends."""
import subprocess
import sys

from tests.support import templates_share


def main(command: list[str]) -> int:
    if not command:
        sys.exit("usage: python -m tests.templates COMMAND…")
    templates_share("migrated", "production", "embedded")
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
