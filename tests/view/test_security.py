"""Who may read the viewer and what its answers carry: the Host check, the token, the methods,
the security headers, and the proof that browsing writes nothing to the store."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.view.pages import listed_cases, markup_problems

HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def every_page(stored) -> list[tuple[str, dict[str, str]]]:  # noqa: ANN001 - StoredRuns
    """One address of each kind, with filters, search and sorting."""
    return [
        ("/", {}),
        ("/set", {"id": "viewkit.review"}),
        ("/set", {"id": "viewkit.docs"}),
        ("/run", {"id": stored.v2}),
        ("/run", {"id": stored.v2, "filter": "regressed"}),
        ("/run", {"id": stored.v2, "q": "goodbye", "sort": "score", "order": "desc"}),
        ("/run", {"id": stored.v2, "q": "^good", "regex": "1"}),
        ("/run", {"id": stored.v3}),
        ("/run", {"id": stored.retrieval_v2}),
        ("/run", {"id": stored.live}),
        ("/run", {"id": stored.hostile}),
        ("/case", {"run": stored.v2, "id": "greeting"}),
        ("/compare", {"base": stored.v1, "run": stored.v2, "show": "all"}),
        ("/compare", {"base": stored.retrieval_v1, "run": stored.retrieval_v2}),
        ("/progress", {"id": stored.live}),
        ("/static/viewer.css", {}),
        ("/static/viewer.js", {}),
    ]


def test_every_answer_carries_the_security_headers(client, stored) -> None:
    for path, params in [*every_page(stored), ("/run", {"id": "missing"}), ("/nowhere", {})]:
        response = client.get(path, params=params)
        for name, value in HEADERS.items():
            assert response.headers.get(name) == value, (path, name)
        assert response.headers["cache-control"] == "no-store"
        if response.headers["content-type"].startswith("text/html"):
            assert markup_problems(response.text) == [], path


def test_the_host_header_must_name_this_viewer(client, stored) -> None:
    assert client.get("/", headers={"host": "127.0.0.1:8765"}).status_code == 200
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200
    assert client.get("/", headers={"host": "[::1]:8765"}).status_code == 200
    for host in ("attacker.example:8765", "attacker.example", "127.0.0.1:9999", "127.0.0.1", "127.0.0.1.evil:8765", "",
                 "127.0.0.1:8765@evil", "[::1", "localhost:87a5"):  # fmt: skip
        response = client.get("/", headers={"host": host})
        assert response.status_code == 400, host
        assert "Host header" in response.text and "viewkit" not in response.text
        assert response.headers["x-content-type-options"] == "nosniff"


def test_only_get_and_head_are_answered(client, stored) -> None:
    assert client.head("/run", params={"id": stored.v2}).status_code == 200
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        response = client.request(method, "/run", params={"id": stored.v2})
        assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"


@pytest.fixture
def guarded(store_url: str, project: Path):  # noqa: ANN201
    """A viewer that needs the token ``s3cret-token-value``, bound to every interface (any Host)."""
    from evalkit.config import load_config
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    app = create_app(store_url, "s3cret-token-value", allowed_hosts=None, port=None, config=load_config(project / "evalkit.toml"))
    with TestClient(app, base_url="http://viewer.lan:8765", follow_redirects=False) as test_client:
        yield test_client


def test_a_token_is_needed_on_every_request(guarded, stored) -> None:
    for path, params in every_page(stored):
        response = guarded.get(path, params=params)
        assert response.status_code == 401, path
        assert "needs its token" in response.text and "viewkit" not in response.text
    assert guarded.get("/", params={"token": "wrong"}).status_code == 401
    assert guarded.get("/", headers={"authorization": "Bearer wrong"}).status_code == 401
    assert guarded.get("/", headers={"authorization": "Basic czNjcmV0LXRva2VuLXZhbHVl"}).status_code == 401
    assert guarded.get("/", cookies={"evalkit_view": "00" * 32}).status_code == 401
    assert guarded.get("/", cookies={"evalkit_view": "not hex"}).status_code == 401
    assert guarded.get("/", headers={"authorization": "Bearer s3cret-token-value"}).status_code == 200


def test_the_token_in_an_address_becomes_a_cookie_and_leaves_the_address(guarded, stored) -> None:
    first = guarded.get("/run", params={"id": stored.v2, "filter": "regressed", "token": "s3cret-token-value"})
    assert first.status_code == 303
    assert first.headers["location"] == "/run?id=v2&filter=regressed"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith("evalkit_view=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert "s3cret-token-value" not in cookie
    guarded.cookies.set("evalkit_view", cookie.split(";")[0].split("=", 1)[1])
    page = guarded.get(first.headers["location"])
    assert page.status_code == 200 and listed_cases(page.text) == ["greeting", "<script>window.__evalkitInjected=1</script>"]
    assert "s3cret-token-value" not in page.text
    assert guarded.get("/static/viewer.css").status_code == 200
    assert guarded.get("/", params={"token": ["s3cret-token-value", "s3cret-token-value"]}).status_code == 401


def test_browsing_writes_nothing_to_the_store(store_url: str, project: Path, stored) -> None:
    from evalkit.config import load_config
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    database = project / ".evalkit" / "results.db"
    assert not Path(f"{database}-wal").exists() or Path(f"{database}-wal").stat().st_size == 0
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    app = create_app(store_url, port=8765, config=load_config(project / "evalkit.toml"))
    with TestClient(app, base_url="http://127.0.0.1:8765") as browser:
        for path, params in every_page(stored) * 2:
            assert browser.get(path, params=params).status_code == 200, path
        assert browser.get("/case", params={"run": stored.v2, "id": "big"}).status_code == 200
        assert app.app.state.viewer.state.store.__class__.__name__ == "ReadOnlyStore"
    wal = Path(f"{database}-wal")
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before
    assert not wal.exists() or wal.stat().st_size == 0, "a write would have left frames in the write-ahead log"


def test_the_viewer_reaches_the_store_through_reads_only(client) -> None:
    from evalkit.view.store import ReadOnlyStore

    writes = ("begin_run", "record_cases", "finish_run", "record_verdict", "accept_run", "mark_status", "purge_older_than",
              "delete_runs", "acquire_lease", "accept_if_first", "record_cases_as_stored")  # fmt: skip
    assert not [name for name in writes if hasattr(ReadOnlyStore, name)]


def test_the_connection_itself_refuses_a_write(store_url: str) -> None:
    """Beyond the reading methods, the connection: a bug, or a plugin reaching through, cannot write."""
    import peewee
    from evalkit.view.store import open_read_only

    store = open_read_only(store_url)
    try:
        with pytest.raises(peewee.OperationalError, match="readonly"):
            store._repository.db.execute_sql("DELETE FROM evalkit_run")
    finally:
        store.close()


def test_a_run_holding_the_write_lock_does_not_keep_the_viewer_out(store_url: str, project: Path, stored, monkeypatch) -> None:
    """`evalkit run` commits each batch under SQLite's write lock; the viewer, reading only, neither
    waits for it nor takes it (its connection opened and read while another holds it)."""
    import sqlite3

    from evalkit.view.store import open_read_only

    monkeypatch.setenv("EVALKIT_BUSY_TIMEOUT", "0.5")  # a viewer that waited for the lock would fail within it
    writer = sqlite3.connect(project / ".evalkit" / "results.db", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        store = open_read_only(store_url)
        try:
            assert store.run(stored.v2) is not None
        finally:
            store.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_missing_store_is_not_created(tmp_path: Path) -> None:
    from evalkit.errors import StorageError
    from evalkit.view import create_app

    with pytest.raises(StorageError, match="there is no results store at"):
        create_app(f"sqlite:///{tmp_path / 'nothing' / 'results.db'}")
    assert not (tmp_path / "nothing").exists()
