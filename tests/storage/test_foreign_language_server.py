"""A PostgreSQL server that does not speak English: its faults are told apart by SQLSTATE.

evalkit read the lower-cased English words of an error ("lock timeout", "too many clients", "the
database system is shutting down"), so a server whose ``lc_messages`` is German said the same
faults in words evalkit did not know: a lock held past the busy timeout, a server out of connection
slots or shutting down were exit 2 (bad usage) with the raw server text, where an English server's
are exit 3 (the environment's fault). These tests start a second server of their own speaking
German (a ``de_DE.UTF-8`` locale compiled with ``localedef`` into a folder of the test's, given to
the server as ``LOCPATH``), skipped when that cannot be done, failed instead under
``EVALKIT_REQUIRE_POSTGRES=1``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.storage.conftest import postgres_required

pytestmark = pytest.mark.postgres

#: The server's catalogue of German messages (Debian's postgresql-15 ships it).
_GERMAN_CATALOGUE = "de/LC_MESSAGES/postgres-15.mo"


class GermanServer:
    """A throwaway PostgreSQL server on 127.0.0.1 saying its messages in German: trust
    authentication for the superuser ``evalkit``, a password for the role ``pwuser``, five
    connection slots and none reserved, so a test can hold them all."""

    def __init__(self, base: Path, bindir: str, port: int, locales: Path) -> None:
        self.base, self.bindir, self.port, self.locales = base, bindir, port, locales
        self.url = f"postgresql://evalkit@127.0.0.1:{port}/evalkit_test"

    def _as_owner(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        env = dict(os.environ, LOCPATH=str(self.locales))
        prefix += ["env", f"LOCPATH={self.locales}"]
        return subprocess.run([*prefix, *command], env=env, capture_output=True, text=True, check=check)

    def start(self) -> None:
        """Start the server and wait until it takes connections."""
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.base} -c fsync=off -c lc_messages=de_DE.UTF-8 "
            "-c max_connections=5 -c superuser_reserved_connections=0"
        )
        self._as_owner(f"{self.bindir}/pg_ctl", "-D", str(self.base / "data"), "-l", str(self.base / "server.log"), "-w", "-t", "60", "-o", options, "start")

    def stop(self, mode: str = "fast", *, wait: bool = True) -> None:
        """Stop the server (``smart`` waits for every session to end; ``wait=False`` returns at once)."""
        self._as_owner(f"{self.bindir}/pg_ctl", "-D", str(self.base / "data"), "-m", mode, "-w" if wait else "-W", "stop")

    def wait_stopped(self) -> None:
        """Wait until a stop asked for without waiting has ended the server. A smart shutdown ends
        by itself once the last session closes, often before a second ``pg_ctl stop`` could ask
        (which then fails: no server running; seen in CI on a loaded machine), so the status is
        polled, and a fast stop asked only of a server still up after a minute."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status = self._as_owner(f"{self.bindir}/pg_ctl", "-D", str(self.base / "data"), "status", check=False)
            if status.returncode == 3:  # pg_ctl's "no server running"
                return
            time.sleep(0.05)
        self.stop("fast")

    def connect(self, url: str | None = None):  # noqa: ANN201 - a psycopg2 connection
        import psycopg2

        connection = psycopg2.connect(url or self.url)
        connection.autocommit = True
        return connection


def _unavailable(reason: str) -> None:
    if postgres_required():
        pytest.fail(f"EVALKIT_REQUIRE_POSTGRES=1 but a German-speaking PostgreSQL cannot be started: {reason}")
    pytest.skip(f"a German-speaking PostgreSQL cannot be started: {reason}")


def _bindir() -> str | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    if found:
        return str(found[-1].parent)
    initdb = shutil.which("initdb")
    return str(Path(initdb).parent) if initdb else None


@pytest.fixture(scope="module")
def german_server() -> Iterator[GermanServer]:
    """A second PostgreSQL server, speaking German, for this module only (stopped and removed after)."""
    pytest.importorskip("psycopg2")
    bindir = _bindir()
    if bindir is None:
        _unavailable("no PostgreSQL server binaries (initdb) are installed")
    if shutil.which("localedef") is None:
        _unavailable("localedef is missing (it compiles the de_DE.UTF-8 locale the server needs)")
    if not any(Path(share, _GERMAN_CATALOGUE).is_file() for share in ("/usr/share/locale", "/usr/local/share/locale")):
        _unavailable(f"the server's German messages ({_GERMAN_CATALOGUE}) are not installed")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        _unavailable("running as root, and runuser (to run the server as postgres) is missing")
    with ExitStack() as cleanup:
        base = Path(tempfile.mkdtemp(prefix="evalkit-pg-de."))  # not pytest's tmp: the postgres user reads it
        cleanup.callback(shutil.rmtree, base, True)
        base.chmod(0o755)
        locales = base / "locales"
        locales.mkdir()
        made = subprocess.run(
            ["localedef", "-i", "de_DE", "-f", "UTF-8", str(locales / "de_DE.UTF-8")], capture_output=True, text=True
        )
        if made.returncode not in (0, 1) or not (locales / "de_DE.UTF-8" / "LC_MESSAGES").exists():  # 1: warnings only
            _unavailable(f"localedef -i de_DE -f UTF-8 failed: {made.stderr.strip()}")
        if os.geteuid() == 0:
            shutil.chown(base, "postgres")
        subprocess.run(["chmod", "-R", "a+rX", str(locales)], check=True)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = GermanServer(base, bindir, port, locales)
        server._as_owner(f"{bindir}/initdb", "-D", str(base / "data"), "-U", "evalkit", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
        hba = base / "data" / "pg_hba.conf"
        hba.write_text("host all pwuser 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        server.start()
        cleanup.callback(server.stop)
        admin = server.connect(server.url.rsplit("/", 1)[0] + "/postgres")
        try:
            with admin.cursor() as cursor:
                cursor.execute("CREATE DATABASE evalkit_test")
                cursor.execute("CREATE ROLE pwuser LOGIN SUPERUSER PASSWORD 'richtig'")
                try:
                    cursor.execute("SELECT 1/0")
                except Exception as exc:  # noqa: BLE001 - what the server says is what is tested
                    said = str(exc)
        finally:
            admin.close()
        if "Division durch Null" not in said:
            _unavailable(f"the server was started with lc_messages=de_DE.UTF-8 but said {said!r}")
        yield server


@contextmanager
def _runs_table_locked(server, evalkit_cli) -> Iterator[str]:  # noqa: ANN001 - the fixtures below
    """A run of ``evalkit.smoke`` stored on ``server``, then its runs table locked by another
    session (``ACCESS EXCLUSIVE``) until the block ends; gives the database URL."""
    database = server.url
    assert evalkit_cli("run", "evalkit.smoke", "--database", database).code == 0
    holder = server.connect()
    holder.autocommit = False
    try:
        holder.cursor().execute("LOCK TABLE evalkit_run IN ACCESS EXCLUSIVE MODE")
        yield database
    finally:
        holder.rollback()
        holder.close()


def test_a_lock_held_past_the_busy_timeout_on_a_german_server_is_exit_3(german_server, evalkit_cli) -> None:
    """The server says "storniere Anfrage wegen Zeitüberschreitung einer Sperre" (55P03): exit 3
    and evalkit's own line, as an English server's "canceling statement due to lock timeout"."""
    with _runs_table_locked(german_server, evalkit_cli) as database:
        result = evalkit_cli("run", "evalkit.smoke", "--database", database, env={"EVALKIT_BUSY_TIMEOUT": "1"})
    assert result.code == 3, result.stderr
    assert "database is locked after 1 s (another session held a lock that long)" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "Sperre" not in result.stderr, result.stderr


def test_a_statement_the_server_cancelled_is_the_environments_fault_exit_3(german_server, evalkit_cli) -> None:
    """``statement_timeout`` passed (57014, "storniere Anfrage wegen Zeitüberschreitung der
    Anfrage"; in English "canceling statement due to statement timeout"), as an operator's
    ``pg_cancel_backend`` is: the server stopped a right command. It was exit 2 in either language."""
    options = "options=-c%20lock_timeout%3D0%20-c%20statement_timeout%3D500"
    with _runs_table_locked(german_server, evalkit_cli) as database:
        result = evalkit_cli("run", "evalkit.smoke", "--database", f"{database}?{options}")
    assert result.code == 3, result.stderr
    assert "Zeitüberschreitung der Anfrage" in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_a_german_server_with_no_connection_slot_left_is_exit_3(german_server, evalkit_cli) -> None:
    """"tut mir leid, schon zu viele Verbindungen" (53300): the environment's fault, as "sorry, too
    many clients already" is; the next attempt once a slot is free works."""
    held = []
    try:
        while True:
            try:
                held.append(german_server.connect())
            except Exception as exc:  # noqa: BLE001 - the server full, in its words
                assert "zu viele Verbindungen" in str(exc), exc
                break
            assert len(held) <= 5, "the server has five slots"
        for words in (("run", "evalkit.smoke"), ("history", "evalkit.smoke")):
            result = evalkit_cli(*words, "--database", german_server.url)
            assert result.code == 3, (words, result.stderr)
            assert f"cannot open database {german_server.url}: " in result.stderr, result.stderr
            assert "zu viele Verbindungen" in result.stderr and "Traceback" not in result.stderr, result.stderr
    finally:
        for connection in held:
            connection.close()
    assert evalkit_cli("history", "evalkit.smoke", "--database", german_server.url).code == 0


def test_a_german_server_shutting_down_is_exit_3(german_server, evalkit_cli) -> None:
    """A smart shutdown waits for the sessions still open and refuses new ones with "das
    Datenbanksystem fährt herunter" (57P03, the code of "starting up" and "in recovery" too)."""
    session = german_server.connect()
    try:
        german_server.stop("smart", wait=False)
        result = evalkit_cli("history", "evalkit.smoke", "--database", german_server.url)
        assert result.code == 3, result.stderr
        assert "fährt herunter" in result.stderr and "Traceback" not in result.stderr, result.stderr
    finally:
        session.close()
        german_server.wait_stopped()
        german_server.start()
    assert evalkit_cli("history", "evalkit.smoke", "--database", german_server.url).code == 0


def test_a_wrong_password_database_or_role_on_a_german_server_stays_exit_2(german_server, evalkit_cli) -> None:
    """The server answered and refused what the command gave: a re-run cannot mend it (exit 2)."""
    port = german_server.port
    refused = {
        f"postgresql://pwuser:falsch@127.0.0.1:{port}/evalkit_test": "pwuser",
        f"postgresql://evalkit@127.0.0.1:{port}/keine_solche_datenbank": "keine_solche_datenbank",
        f"postgresql://niemand@127.0.0.1:{port}/evalkit_test": "niemand",
    }
    for url, named in refused.items():
        result = evalkit_cli("history", "evalkit.smoke", "--database", url)
        assert result.code == 2, (url, result.stderr)
        assert "cannot open database" in result.stderr and named in result.stderr, result.stderr
    good = f"postgresql://pwuser:richtig@127.0.0.1:{port}/evalkit_test"
    assert evalkit_cli("history", "evalkit.smoke", "--database", good).code == 0


def test_a_connection_a_german_server_terminated_is_lost_and_the_environments_fault(german_server) -> None:
    """"Verbindung wird abgebrochen aufgrund von Anweisung des Administrators" (57P01): evalkit's
    "connection to PostgreSQL lost", the connection dropped so the next call reconnects."""
    from evalkit.errors import StoreFailure
    from evalkit.storage import open_repository

    repository = open_repository(german_server.url)
    try:
        repository.recent_runs("evalkit.smoke", limit=1)
        admin = german_server.connect()
        try:
            with admin.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'evalkit_test' AND pid <> pg_backend_pid()"
                )
        finally:
            admin.close()
        with pytest.raises(StoreFailure) as failed:
            repository.recent_runs("evalkit.smoke", limit=1)
        assert failed.value.connection_lost and failed.value.environment, failed.value
        assert str(failed.value.cause).startswith("connection to PostgreSQL lost ("), failed.value
        repository.recent_runs("evalkit.smoke", limit=1)  # reconnected
    finally:
        repository.close()


def test_a_driver_error_without_a_sqlstate_is_a_lost_connection_in_any_words() -> None:
    """psycopg2's OperationalError with no SQLSTATE is libpq's: the socket went away (a server's
    error always carries a code). It was recognised as lost only by libpq's English words, so a
    client whose libpq speaks German ("Server hat die Verbindung unerwartet geschlossen") had its
    run stop with the raw text, the broken connection kept; and a coded error is told by its code."""
    import peewee as pw
    from evalkit.storage.engine import environment_fault, failure_cause, lock_timed_out

    psycopg2 = pytest.importorskip("psycopg2")

    def wrapped(driver_error: Exception) -> pw.OperationalError:
        try:
            raise driver_error
        except psycopg2.Error:
            try:
                raise pw.OperationalError(str(driver_error))
            except pw.OperationalError as exc:
                return exc
        raise AssertionError("unreachable")

    lost = wrapped(psycopg2.OperationalError("Server hat die Verbindung unerwartet geschlossen"))
    cause, is_lost = failure_cause(lost, is_sqlite=False, busy_timeout=60)
    assert is_lost and cause.startswith("connection to PostgreSQL lost ("), cause
    assert environment_fault(lost, is_sqlite=False)
    assert not environment_fault(lost, is_sqlite=False, connecting=True), "a failed attempt is told apart otherwise"
    # the code decides, whatever the words say
    assert lock_timed_out(lost, is_sqlite=False) is False
    assert environment_fault(Exception("FATAL:  tut mir leid"), is_sqlite=False, code="53300")
    assert not environment_fault(Exception("FATAL:  too many clients"), is_sqlite=False, code="28P01")


@pytest.mark.parametrize(
    "command",
    [("history", "evalkit.smoke"), ("baseline", "show", "evalkit.smoke"), ("flaky", "evalkit.smoke")],
    ids=lambda command: command[0],
)
def test_a_lock_a_reader_meets_outside_a_run_is_exit_3_as_a_runs_is(german_server, evalkit_cli, command) -> None:
    """A command that only reads met the same held lock as a run and said evalkit's line, but exit
    2, as if the command had been wrong: only a run turned the store's environment fault into 3."""
    with _runs_table_locked(german_server, evalkit_cli) as database:
        result = evalkit_cli(*command, "--database", database, env={"EVALKIT_BUSY_TIMEOUT": "1"})
    assert result.code == 3, result.stderr
    assert "database is locked after 1 s (another session held a lock that long)" in result.stderr, result.stderr
