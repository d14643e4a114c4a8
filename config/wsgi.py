import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)

from config.requests import WSGIHandler  # noqa: E402

application = WSGIHandler()  # Django's, building requests that take only charsets Keel reads
