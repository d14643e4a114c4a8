# The tests' shared fixtures and hooks live in the tests package (tests/fixtures.py), their plain
# helpers beside them (tests/helpers.py, tests/support.py): every app's tests and the integration
# and browser suites take them from there.
pytest_plugins = ["tests.fixtures"]
