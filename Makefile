# Keel: `make run` serves the embedded default; `make test` runs the whole suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
PG_TEST_URL ?= postgres://postgres@127.0.0.1:5432/keel
REDIS_TEST_URL ?= redis://127.0.0.1:6379/13
APPS := config tenants idempotency outbox llm timeline workflows approvals memory payroll policy expenses hr agents console

.PHONY: run test test-fast test-layers test-unit test-integration test-browser venv venv-dev clean

# The tests keep the bytecode Python compiles (__pycache__, git-ignored). This machine's
# environment sets PYTHONDONTWRITEBYTECODE: every Python start-up of a test run (a server, a
# worker, beat, a subprocess) then compiled ~1,600 modules again, 2 of its 3 seconds. Empty, it
# is off. (`make run` leaves it as it is: writing the bytecode slows the first page.)
test test-fast test-layers test-unit test-integration test-browser: export PYTHONDONTWRITEBYTECODE :=

# `make run` installs what serving needs; `make test` the test tools too. The venv gets no pip
# of its own (the interpreter's pip installs into it: --python) and no precompiled bytecode
# (Python compiles what it imports): a fresh clone serves sooner.
PIP := $(PYTHON) -m pip --python $(PY) install -q --disable-pip-version-check --no-compile
venv: $(VENV)/.installed
venv-dev: $(VENV)/.installed-dev

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	$(PIP) -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PIP) -r requirements-dev.txt
	touch $@

# Migrate, seed the demo (idempotently) and serve, in one process.
run: venv
	$(PY) manage.py serve --port $(PORT) --migrate-and-seed

# The layers and the unit tests first (they fail fastest, and the unit tests keep both cores
# busy), then the integration and browser suites side by side, each on both cores, with the
# databases their Keels copy made once for both (tests/templates.py). Each suite's output is
# printed when it ends.
test: venv-dev
	bash scripts/services.sh
	bash scripts/chromium.sh
	$(MAKE) --no-print-directory test-layers test-unit
	$(PY) -m tests.templates $(MAKE) --no-print-directory -j2 --output-sync=target test-integration test-browser

# The loop while working: the layers and the unit tests.
test-fast: test-layers test-unit

# The layers contract (.importlinter): a lower layer never imports a higher one.
test-layers: venv-dev
	$(VENV)/bin/lint-imports

# Unit tests on PostgreSQL (DATABASE_URL's, else the embedded one), each in a transaction
# rolled back, on both cores; in-memory broker and channel layer.
test-unit: venv-dev
	env -u REDIS_URL $(PY) -m pytest -q -n 2 --durations=15 $(APPS)

# PostgreSQL, Redis and real worker processes; and the one unit test that needs Redis (a
# worker's presence there), skipped by test-unit.
test-integration: venv-dev
	DATABASE_URL=$(PG_TEST_URL) REDIS_URL=$(REDIS_TEST_URL) $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=15 tests/integration \
	  "workflows/tests/test_siblings_finishing_at_once.py::test_a_worker_on_another_host_is_alive_while_it_holds_its_presence_in_redis"

# Chromium against the embedded server, as `make run` serves it.
test-browser: venv-dev
	env -u DATABASE_URL -u REDIS_URL $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=15 tests/browser

clean:
	rm -rf $(VENV) .pgdata staticfiles tests/artifacts
