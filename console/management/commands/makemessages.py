"""Django's makemessages, which also knows the counted words' marker (config.words.ngettext_noop):
a counted message is stored as meaning and read with ngettext, so both its forms must reach
the catalog as one plural entry."""
from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [*makemessages.Command.xgettext_options, "--keyword=ngettext_noop:1,2"]
