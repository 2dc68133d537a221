"""The viewer over a PostgreSQL store written by `evalkit run` (skipped without
``EVALKIT_TEST_POSTGRES_URL``; failed instead with ``EVALKIT_REQUIRE_POSTGRES=1``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.storage.conftest import fresh_postgres_database
from tests.view.pages import element_text, listed_cases
from tests.view.store_project import ANSWERS_V1, ANSWERS_V2, CONFIG, SCRIPT_ID, set_file, write_answers

pytestmark = pytest.mark.postgres


def _rows(url: str) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every evalkit table, in a stable order."""
    import psycopg2

    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
            tables = [name for (name,) in cursor.fetchall()]
            found = {}
            for table in tables:
                cursor.execute(f'SELECT * FROM "{table}" ORDER BY 1')
                found[table] = cursor.fetchall()
            return found
    finally:
        connection.close()


def test_the_viewer_reads_a_postgresql_store_and_writes_nothing(evalkit_cli, project: Path) -> None:
    from evalkit.config import load_config
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    (project / "evals").mkdir()
    (project / "evalkit.toml").write_text(CONFIG)
    (project / "evals" / "review.yaml").write_text(set_file(1))
    with fresh_postgres_database() as url:
        write_answers(project, ANSWERS_V1)
        first = evalkit_cli("run", "viewkit.review", "--provider", "app", "--privacy", "full", "--database", url, "--json")
        assert first.code == 0, first.stderr
        (project / "evals" / "review.yaml").write_text(set_file(2))
        write_answers(project, ANSWERS_V2)
        second = evalkit_cli("run", "viewkit.review", "--provider", "app", "--privacy", "full", "--database", url, "--json")
        assert second.code == 0, second.stderr
        base, run = first.json()["run_id"], second.json()["run_id"]
        before = _rows(url)
        app = create_app(url, port=8765, config=load_config(project / "evalkit.toml"))
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            assert "viewkit.review" in client.get("/").text
            assert client.get("/set", params={"id": "viewkit.review"}).status_code == 200
            page = client.get("/run", params={"id": run, "filter": "regressed"})
            assert element_text(page.text, "verdict") == "REGRESSED"
            assert listed_cases(page.text) == ["greeting", SCRIPT_ID]
            comparison = client.get("/compare", params={"base": base, "run": run})
            assert listed_cases(comparison.text)[:2] == ["greeting", SCRIPT_ID]
            case = client.get("/case", params={"run": run, "id": "greeting"})
            assert "<del>hello</del>" in case.text and "Say hello to the user." in case.text
            assert "postgresql://" in page.text  # the footer names the store
        assert _rows(url) == before
        _assert_the_connection_refuses_a_write(url)


def _assert_the_connection_refuses_a_write(url: str) -> None:
    import peewee
    from evalkit.view.store import open_read_only

    store = open_read_only(url)
    try:
        with pytest.raises(peewee.InternalError, match="read-only transaction"):
            store._repository.db.execute_sql("DELETE FROM evalkit_run")
    finally:
        store.close()
