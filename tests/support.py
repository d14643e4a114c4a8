"""Real processes for integration and browser tests: a Keel server (embedded or
production), `celery worker` processes, a fresh PostgreSQL database, a Redis db.
Plain functions; the fixtures in tests/fixtures.py call them."""
from __future__ import annotations

import atexit
import http.cookiejar
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from config.database import embedded_stop

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PG_ADMIN_URL = os.environ.get("KEEL_TEST_PG_ADMIN", "postgres://postgres@127.0.0.1:5432/postgres")
TEST_REDIS_BASE = os.environ.get("KEEL_TEST_REDIS", "redis://127.0.0.1:6379")
# Deployments share Redis database 1 (0 is the developer's, 13 the in-process
# tests'): each has its own Celery queue and channel prefix, so one deployment's
# workers never eat another's tasks. A test that flushes the broker asks for a
# database of its own (FLUSHED_REDIS_DB), so it wipes nobody else's messages.
# Two checkouts testing at once on one machine set KEEL_TEST_REDIS_DBS="shared,flushed".
SHARED_REDIS_DB, FLUSHED_REDIS_DB = (int(n) for n in os.environ.get("KEEL_TEST_REDIS_DBS", "1,12").split(","))
# xdist's workers flush a database each: gw0 12, gw1 11, …
FLUSHED_REDIS_DB -= int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:])
LOGS = ROOT / "tests" / "artifacts" / "logs"
ARTIFACTS = ROOT / "tests" / "artifacts"  # the browser tests' screenshots


def wait_until(predicate, what: str, timeout: float = 30, interval: float = 0.05) -> None:
    """Poll `predicate` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out waiting for {what}")


def proc_stats() -> Iterator[tuple[int, list[str]]]:
    """Each live process's pid and the fields of its /proc/<pid>/stat after its name: [1] its
    parent, [2] its process group, [11] and [12] its user and system CPU in clock ticks."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                yield int(pid), f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_database_create(template: str | None = None) -> str:
    """A fresh database, empty or a copy of the database `template` (a URL); returns its URL."""
    import psycopg

    name = f"keel_it_{uuid.uuid4().hex[:10]}"
    copy = f' TEMPLATE "{template.rsplit("/", 1)[1]}"' if template else ""
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{copy}')
    return PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name


def pg_database_drop(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_flush(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


@dataclass
class Keel:
    """A running Keel deployment: its URL, environment and processes."""

    base_url: str
    env: dict[str, str]
    procs: list[subprocess.Popen] = field(default_factory=list)
    workers: list[subprocess.Popen] = field(default_factory=list)

    def manage(self, *args: str) -> str:
        out = subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=self.env, check=True,
                             capture_output=True, text=True, timeout=300)
        return out.stdout

    def worker_start(self, concurrency: int = 2, name: str | None = None) -> subprocess.Popen:
        name = name or f"w{len(self.workers) + 1}-{uuid.uuid4().hex[:6]}"
        proc = _spawn([PYTHON, "-m", "celery", "-A", "config", "worker", "-l", "warning", "-c", str(concurrency),
                       "-n", f"{name}@%h", "--without-gossip", "--without-mingle"], self.env, f"worker-{name}")
        self.workers.append(proc)
        self.procs.append(proc)
        _wait_for_worker(self.env, f"{name}@{socket.gethostname()}")
        return proc

    def beat_start(self) -> subprocess.Popen:
        proc = _spawn([PYTHON, "-m", "celery", "-A", "config", "beat", "-l", "warning",
                       "-s", str(LOGS / f"beat-{uuid.uuid4().hex[:6]}.schedule")], self.env, "beat")
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            process_group_kill(proc)


def _spawn(cmd: list[str], env: dict[str, str], log_name: str) -> subprocess.Popen:
    LOGS.mkdir(parents=True, exist_ok=True)
    log = open(LOGS / f"{log_name}.log", "w")
    # A process group of its own, so a test can SIGKILL a worker with its children.
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def process_group_kill(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _wait_for_worker(env: dict[str, str], hostname: str, timeout: float = 60) -> None:
    """Ping the worker over its broker from this process (a `celery inspect ping` subprocess
    costs a Python start-up each try) until it answers."""
    from celery import Celery

    app = Celery(broker=env["REDIS_URL"], set_as_current=False)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if app.control.ping(destination=[hostname], timeout=0.5):
                return
    finally:
        app.close()
    raise RuntimeError(f"celery worker {hostname} did not answer a ping within {timeout} s")


def _wait_for_http(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}; see {LOGS}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return  # it answered
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


# The session's templates (`template`), made once each, copied for each Keel started and for
# pytest-django's test database: migrating and seeding cost ~12 s, a copy well under one.
_templates: dict[str, str] = {}
_template_locks = {kind: threading.Lock() for kind in ("migrated", "production", "embedded")}


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "KEEL_PGDATA"}}
    env.update({"PYTHONUNBUFFERED": "1", "DJANGO_SETTINGS_MODULE": "config.settings",
                # Its seeded users' passwords hashed fast: a log-in through the form costs the server
                # no 0.3 s of PBKDF2 (tests log in hundreds of times; config/settings.py).
                "KEEL_FAST_PASSWORD_HASHING": "1"})
    return env


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)


def template(kind: str) -> str:
    """A database made once per test session, for tests to copy instead of migrating anew
    (~12 s each time); removed when the session ends. Its kind:
    - "migrated": `migrate` on the test PostgreSQL, nothing seeded (its URL): in the integration
      session, pytest-django's test database is a copy (`migrated_template_use`);
    - "production": what `make run` has before it serves, migrated and the demo seeded (its URL);
    - "embedded": the same in a stopped embedded PostgreSQL's data folder (its path).
    A session's xdist workers use the ones their controller made (`templates_share`)."""
    if os.environ.get(f"KEEL_TEMPLATE_{kind.upper()}"):
        return os.environ[f"KEEL_TEMPLATE_{kind.upper()}"]
    with _template_locks[kind]:  # templates_share makes them on threads; "production" needs "migrated"
        if kind not in _templates:
            _templates[kind] = _template_make(kind)
    return _templates[kind]


def _template_make(kind: str) -> str:
    env = _base_env()
    if kind == "migrated":
        env["DATABASE_URL"] = pg_database_create()
        atexit.register(pg_database_drop, env["DATABASE_URL"])
        _manage(env, "migrate", "--noinput", "-v0")
    elif kind == "production":
        env["DATABASE_URL"] = pg_database_create(template=template("migrated"))
        atexit.register(pg_database_drop, env["DATABASE_URL"])
        _manage(env, "seed_demo")
    elif kind == "embedded":
        env["KEEL_PGDATA"] = str(Path(_tmp_folder("keel-seeded-")) / "pgdata")
        _manage(env, "migrate", "--noinput", "-v0")
        _manage(env, "seed_demo")
        # its processes exited, which stops the server; make sure before it is copied
        embedded_stop(Path(env["KEEL_PGDATA"]))
        (Path(env["KEEL_PGDATA"]) / ".handle_pids.json").unlink(missing_ok=True)
    else:
        raise ValueError(kind)
    return env.get("DATABASE_URL") or env["KEEL_PGDATA"]


def templates_share(*kinds: str) -> None:
    """Make these templates now, side by side, in this process, for the processes it starts
    later (xdist's workers) to copy: from a conftest's pytest_configure, in the controller."""
    with ThreadPoolExecutor() as pool:
        made = dict(zip(kinds, pool.map(template, kinds)))
    for kind, made_at in made.items():
        os.environ[f"KEEL_TEMPLATE_{kind.upper()}"] = made_at


def migrated_template_use(settings) -> None:
    """pytest-django's test database becomes a copy of the session's migrated template: its
    own migrate then finds every migration applied."""
    settings.DATABASES["default"].setdefault("TEST", {})["TEMPLATE"] = template("migrated").rsplit("/", 1)[1]


def _tmp_folder(prefix: str) -> str:
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def keel_start(mode: str, extra_env: dict[str, str] | None = None, redis_db: int = SHARED_REDIS_DB) -> Keel:
    """Serve a fresh Keel — migrated and seeded, a copy of the session's `template(mode)` — and
    wait for its first page. mode: 'embedded' or 'production'."""
    env = _base_env()
    env["KEEL_CHANNEL_PREFIX"] = f"keel-test-{uuid.uuid4().hex[:8]}"
    if mode == "production":
        env["DATABASE_URL"] = pg_database_create(template=template("production"))
        env["REDIS_URL"] = f"{TEST_REDIS_BASE}/{redis_db}"
        env["KEEL_QUEUE"] = f"keel-{uuid.uuid4().hex[:8]}"
        if redis_db != SHARED_REDIS_DB:
            redis_flush(env["REDIS_URL"])
    elif mode == "embedded":  # its own embedded PostgreSQL, as `make run` starts one
        # Not under pytest's temp folder: another pytest session starting on the machine makes
        # that folder's root private again, and the wheel's PostgreSQL (a user of its own, when
        # run as root) could no longer reach its data. cp -a keeps the owner.
        env["KEEL_PGDATA"] = str(Path(_tmp_folder("keel-pgdata-")) / "pgdata")
        subprocess.run(["cp", "-a", template("embedded"), env["KEEL_PGDATA"]], check=True)
    else:
        raise ValueError(mode)
    env.update(extra_env or {})
    port = free_port()
    keel = Keel(base_url=f"http://127.0.0.1:{port}", env=env)
    try:
        server = _spawn([PYTHON, "manage.py", "serve", "--port", str(port)], env, f"server-{mode}-{port}")
        keel.procs.append(server)
        _wait_for_http(keel.base_url + "/login/", server)
    except Exception:
        keel_stop(keel)
        raise
    return keel


def keel_stop(keel: Keel) -> None:
    keel.stop()
    if "DATABASE_URL" in keel.env:
        pg_database_drop(keel.env["DATABASE_URL"])
    if "KEEL_PGDATA" in keel.env:  # its processes were killed: none was left to stop the server
        embedded_stop(Path(keel.env["KEEL_PGDATA"]))
        shutil.rmtree(Path(keel.env["KEEL_PGDATA"]).parent, ignore_errors=True)


@contextmanager
def keel_running(mode: str = "embedded", env: dict[str, str] | None = None, *, workers: int = 0,
                 concurrency: int = 2, beat: bool = False) -> Iterator[Keel]:
    """A Keel (`keel_start`) with `workers` `celery worker` processes of `concurrency` each and,
    if `beat`, the beat; stopped, its database dropped, however the block ends."""
    keel = keel_start(mode, env)
    try:
        for _ in range(workers):
            keel.worker_start(concurrency=concurrency)
        if beat:
            keel.beat_start()
        yield keel
    finally:
        keel_stop(keel)


class Session:
    """A logged-in HTTP session against a running Keel (cookies + CSRF)."""

    def __init__(self, base_url: str, username: str, password: str = "keel-demo"):
        self.base_url = base_url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.opener.open(base_url + "/login/").read()
        body = urllib.parse.urlencode({"username": username, "password": password,
                                       "csrfmiddlewaretoken": self.cookie("csrftoken")}).encode()
        self.opener.open(urllib.request.Request(base_url + "/login/", data=body,
                                                headers={"Referer": base_url + "/login/"})).read()
        if not self.cookie("sessionid"):
            raise RuntimeError(f"{username} could not log in")

    def cookie(self, name: str) -> str:
        return next((c.value for c in self.jar if c.name == name), "")

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)

    def request(self, method: str, path: str, json_body: dict | None = None) -> tuple[int, dict]:
        import json

        data = json.dumps(json_body).encode() if json_body is not None else None
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers={
            "X-CSRFToken": self.cookie("csrftoken"), "Referer": self.base_url + "/",
            "Content-Type": "application/json", "Accept": "application/json"})
        try:
            with self.opener.open(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null")


class Api:
    """A token-authenticated JSON client, as a script would use the API."""

    def __init__(self, base_url: str, username: str, password: str = "keel-demo"):
        import json

        self.base_url = base_url
        req = urllib.request.Request(base_url + "/api/v1/auth/token/", method="POST",
                                     data=json.dumps({"username": username, "password": password}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            self.token = json.loads(resp.read())["token"]

    def request(self, method: str, path: str, body: dict | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict]:
        import json

        req = urllib.request.Request(self.base_url + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"Token {self.token}",
                                              "Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                return err.code, json.loads(raw or b"null")
            except ValueError:
                return err.code, {"raw": raw.decode(errors="replace")}

    def get(self, path: str) -> dict:
        status, body = self.request("GET", path)
        assert status == 200, (status, body)
        return body

    def post(self, path: str, body: dict | None = None) -> tuple[int, dict]:
        return self.request("POST", path, body or {})

    def wait_for_run(self, run_id: str, statuses: set[str], timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        run = {}
        while time.monotonic() < deadline:
            run = self.get(f"/api/v1/runs/{run_id}/")
            if run["status"] in statuses:
                return run
            time.sleep(0.1)
        raise AssertionError(f"run {run_id} did not reach {statuses} in {timeout} s: {run.get('status')} "
                             f"{run.get('status_reason')} {[(n['key'], n['status'], n.get('status_reason', '')) for n in run.get('nodes', [])]}")


# --- In a browser (Playwright pages) ---------------------------------------------------------

def log_in(page, base_url: str, username: str, password: str = "keel-demo") -> None:
    page.goto(base_url + "/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def logged_in(browser, base_url: str, username: str, *, locale: str = "en-US", size: tuple[int, int] = (1366, 860),
              password: str = "keel-demo"):
    """A new browser context in `locale` at `size`, logged in through the login form (by its
    fields' names, so in either language). Returns (context, page); the caller closes the context."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale=locale)
    page = context.new_page()
    page.goto(base_url + "/login/")
    page.locator("input[name=username]").fill(username)
    page.locator("input[name=password]").fill(password)
    page.locator("input[name=password]").press("Enter")
    page.wait_for_url(lambda url: "/login/" not in url)
    return context, page
