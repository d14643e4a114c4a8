# Keel: `make run` serves the embedded default; `make test` runs the whole suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
PG_TEST_URL ?= postgres://postgres@127.0.0.1:5432/keel
REDIS_TEST_URL ?= redis://127.0.0.1:6379/13
APPS := config tenants idempotency llm timeline workflows approvals memory payroll policy expenses hr agents console

.PHONY: run test test-layers test-unit test-integration test-browser venv clean

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

run: venv
	$(PY) manage.py migrate --noinput -v0
	$(PY) manage.py seed_demo
	$(PY) manage.py serve --port $(PORT)

test: venv
	bash scripts/services.sh
	bash scripts/chromium.sh
	$(MAKE) --no-print-directory test-layers test-unit test-integration test-browser

# The layers contract (.importlinter): a lower layer never imports a higher one.
test-layers: venv
	$(VENV)/bin/lint-imports

# Fast unit tests on SQLite and in-memory layers.
test-unit: venv
	env -u DATABASE_URL -u REDIS_URL $(PY) -m pytest -q $(APPS)

# PostgreSQL, Redis and real worker processes; and the engine's hot path and its lock order
# (two writers at once), whose hand-written statements and row locks are PostgreSQL's only
# (on SQLite the same tests take the ORM path or skip).
test-integration: venv
	DATABASE_URL=$(PG_TEST_URL) REDIS_URL=$(REDIS_TEST_URL) $(PY) -m pytest -q tests/integration
	DATABASE_URL=$(PG_TEST_URL) REDIS_URL=$(REDIS_TEST_URL) $(PY) -m pytest -q workflows/tests/test_hot_path.py \
	  workflows/tests/test_lock_order.py workflows/tests/test_siblings_finishing_at_once.py approvals/tests/test_lock_order.py

# Chromium against the embedded server, as `make run` serves it.
test-browser: venv
	env -u DATABASE_URL -u REDIS_URL $(PY) -m pytest -q tests/browser

clean:
	rm -rf $(VENV) db.sqlite3* staticfiles tests/artifacts
