"""``evalkit view`` through the CLI: its refusals (exit 2, nothing served), and the real server
process — printed address, Host check, token, Ctrl-C."""

from __future__ import annotations

import signal
import socket
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.view.server_process import serve


def test_without_the_view_extra_it_says_which_extra_to_install(evalkit_cli, stored, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)  # what an environment without the extra imports
    result = evalkit_cli("view")
    assert result.code == 2
    assert 'evalkit view needs the "view" extra: pip install "evalkit-golden[view]" (missing: starlette)' in result.stderr


def test_another_host_needs_a_token(evalkit_cli, stored) -> None:
    result = evalkit_cli("view", "--host", "0.0.0.0", "--port", "0")
    assert result.code == 2 and "--host 0.0.0.0 lets other machines connect: give --token TOKEN" in result.stderr
    empty = evalkit_cli("view", "--host", "0.0.0.0", "--token", " ")
    assert empty.code == 2 and "--token is empty" in empty.stderr


def test_a_missing_store_is_refused_and_not_created(evalkit_cli, project: Path) -> None:
    result = evalkit_cli("view", "--port", "0")
    assert result.code == 2 and "There is no results store at" in result.stderr
    assert not (project / ".evalkit").exists()


def test_a_port_in_use_is_refused(evalkit_cli, stored) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = evalkit_cli("view", "--port", str(port))
    assert result.code == 2 and f"cannot listen on 127.0.0.1 port {port}" in result.stderr and "--port 0" in result.stderr


def test_options_are_checked(evalkit_cli, stored) -> None:
    assert "must be a port number" in evalkit_cli("view", "--port", "70000").stderr
    assert evalkit_cli("view", "--json").code == 2
    help_text = evalkit_cli("view", "--help").stdout
    assert "[view]" in help_text and "--token" in help_text


# About the process: the server is a child, reached over a real socket, stopped with Ctrl-C.
def test_the_server_prints_its_address_checks_the_host_and_stops_on_ctrl_c(evalkit_process, stored) -> None:
    served = serve(evalkit_process)
    try:
        assert served.url.startswith("http://127.0.0.1:") and served.url.endswith("/")
        page = httpx.get(served.url, timeout=30)
        assert page.status_code == 200 and "viewkit.review" in page.text
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
        run = httpx.get(f"{served.url}run", params={"id": stored.v2, "filter": "regressed"}, timeout=30)
        assert run.status_code == 200 and "greeting" in run.text
        rebound = httpx.get(served.url, headers={"host": "attacker.example"}, timeout=30)
        assert rebound.status_code == 400
    finally:
        code, stderr = served.stop()
    assert code == 0, stderr
    assert "Traceback" not in stderr


def test_sigterm_stops_the_server_with_exit_0_and_no_traceback(evalkit_process, stored) -> None:
    # docs/viewer.md: "0 when stopped (Ctrl-C or SIGTERM)". The exit code was 0, but uvicorn raised
    # the SIGTERM again after its shutdown into evalkit's handler, whose KeyboardInterrupt cancelled
    # the application's lifespan: a 35-line "ERROR: Traceback" on every docker stop.
    served = serve(evalkit_process)
    assert httpx.get(served.url, timeout=30).status_code == 200
    code, stderr = served.stop(signal.SIGTERM)
    assert code == 0, stderr
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr


# About the process: another host needs the token on every request; the warning says so.
def test_a_server_on_every_interface_needs_its_token(evalkit_process, stored) -> None:
    served = serve(evalkit_process, "--host", "0.0.0.0", env={"EVALKIT_VIEW_TOKEN": "t0ken-for-the-test"})
    try:
        assert "?token=t0ken-for-the-test" in served.url
        bare = served.url.split("?", 1)[0]
        assert httpx.get(bare, timeout=30).status_code == 401
        assert httpx.get(bare, headers={"authorization": "Bearer t0ken-for-the-test"}, timeout=30).status_code == 200
        with httpx.Client(timeout=30, follow_redirects=True) as browser:  # the printed address logs a browser in
            assert browser.get(served.url).status_code == 200
            assert browser.get(f"{bare}set", params={"id": "viewkit.review"}).status_code == 200
    finally:
        code, stderr = served.stop()
    assert code == 0 and "warning: serving on 0.0.0.0, reachable from other machines" in stderr


# About the process: --open hands the address to the browser $BROWSER names.
def test_open_hands_the_address_to_the_browser(evalkit_process, stored, project: Path) -> None:
    opened = project / "opened.txt"
    served = serve(evalkit_process, "--open", env={"BROWSER": f"sh -c 'echo \"$0\" > {opened}' %s"})
    try:
        deadline = time.monotonic() + 30
        while not (opened.exists() and opened.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert opened.read_text().strip() == served.url
    finally:
        served.stop()


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_the_database_option_chooses_the_store(evalkit_cli, stored, project: Path, tmp_path: Path, store_kind: str) -> None:
    result = evalkit_cli("view", "--database", f"sqlite:///{tmp_path / 'elsewhere.db'}")
    assert result.code == 2 and "elsewhere.db" in result.stderr and "--database names it" in result.stderr


def test_what_view_prints_passes_the_console(capsys) -> None:
    """The address line names the store: a database file name holding an escape sequence or a
    bidi override is shown as escapes, on standard output (the warning, on standard error)."""
    from evalkit.cli.view_cmd import _announce, _warn

    _announce("evalkit view: sqlite:///db\x1b[31m\u202e.db (read only) at http://127.0.0.1:8765/")
    _warn("evalkit view: warning: serving on \x1b]8;;x\x07h")
    printed = capsys.readouterr()
    assert printed.out == "evalkit view: sqlite:///db\\x1b[31m\\u202e.db (read only) at http://127.0.0.1:8765/\n"
    assert printed.err == "evalkit view: warning: serving on \\x1b]8;;x\\x07h\n"
