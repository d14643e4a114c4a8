import pytest


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2 at full strength costs ~0.3 s a user; tests log in a lot.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
