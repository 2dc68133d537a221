"""Database URLs: SQLite paths, unreachable stores named clearly, passwords never shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit.errors import StorageError
from evalkit.storage import open_repository, schema_status
from evalkit.storage.sql import sqlite_path


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:////srv/evalkit/results.db", "/srv/evalkit/results.db"),
        ("sqlite:///.evalkit/results.db", ".evalkit/results.db"),
        ("sqlite:///:memory:", ":memory:"),
        ("postgresql://ci@db/evalkit", None),
    ],
)
def test_sqlite_paths(url: str, path: str | None) -> None:
    assert sqlite_path(url) == path


@pytest.mark.parametrize("url", ["sqlite:///", "sqlite://", "sqlite:", "sqlite://:memory:", "sqlite:///  "])
def test_a_sqlite_url_without_a_file_is_refused_not_silently_in_memory(url: str) -> None:
    with pytest.raises(StorageError, match="names no file"):
        sqlite_path(url)


def test_a_folder_that_cannot_be_created_is_a_storage_error() -> None:
    with pytest.raises(StorageError, match="cannot create the folder of database sqlite:////proc/nope/x.db"):
        open_repository("sqlite:////proc/nope/x.db")


def test_an_unreachable_server_is_named_without_its_password() -> None:
    with pytest.raises(StorageError) as caught:
        schema_status("postgresql://ci:s3cret@127.0.0.1:1/evalkit")
    assert "cannot open database postgresql://ci:***@127.0.0.1:1/evalkit" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def test_the_cli_says_so_and_exits_3(evalkit_cli) -> None:
    # a well-formed URL whose server is down is the environment's fault (exit 3), not bad usage (it was 2)
    result = evalkit_cli("run", "evalkit.smoke", "--database", "postgresql://ci:s3cret@127.0.0.1:1/evalkit")
    assert result.code == 3 and "cannot open database postgresql://ci:***@127.0.0.1:1/evalkit" in result.stderr
    assert "Connection refused" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert "s3cret" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    "command", [("run", "evalkit.smoke"), ("history", "evalkit.smoke"), ("db", "status"), ("view", "--port", "0")]
)
def test_a_postgresql_url_without_its_driver_installed_says_which_extra_to_install(
    evalkit_cli, monkeypatch, command: tuple[str, ...]
) -> None:
    # the README's install has no PostgreSQL driver: a postgresql:// store was "internal error (an
    # evalkit bug): ImproperlyConfigured: psycopg2 postgres driver not found." and a traceback
    import peewee

    monkeypatch.setattr(peewee, "psycopg2", None)
    monkeypatch.setattr(peewee, "psycopg", None)
    result = evalkit_cli(*command, "--database", "postgresql://ci:s3cret@127.0.0.1:1/evalkit")
    assert result.code == 2, result.stderr
    assert (
        "cannot open database postgresql://ci:***@127.0.0.1:1/evalkit: PostgreSQL needs the psycopg2 driver, "
        'which is not installed here; install it with pip install "evalkit-golden[postgres]"'
    ) in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "s3cret" not in result.stderr + result.stdout


@pytest.mark.postgres
def test_a_server_that_refuses_the_credentials_or_database_is_exit_2_as_a_refused_url_parameter_is(
    evalkit_cli,
) -> None:
    # the server answered and refused the user or the database: a wrong secret or name in the
    # command's URL, which a re-run cannot mend (exit 2, as a parameter libpq or the server refuses);
    # only a server that is down, starting or full is the environment's (exit 3)
    from urllib.parse import urlsplit, urlunsplit

    from tests.storage.conftest import fresh_postgres_database

    with fresh_postgres_database() as url:
        parts = urlsplit(url)
        refused = {
            urlunsplit(parts._replace(netloc=f"nosuchrole:pw@{parts.hostname}:{parts.port}")): "nosuchrole",
            urlunsplit(parts._replace(path="/evalkit_no_such_database")): "evalkit_no_such_database",
        }
        for bad, named in refused.items():
            for command in (("history", "evalkit.smoke"), ("db", "status"), ("run", "evalkit.smoke")):
                result = evalkit_cli(*command, "--database", bad)
                assert result.code == 2, (command, result.stderr)
                assert "cannot open database" in result.stderr and named in result.stderr, result.stderr
                assert "Traceback" not in result.stderr, result.stderr
        for query, said in (
            ("sslmode=bogus", "invalid sslmode value"),
            ("bogus=1", "invalid connection option"),
            ("connect_timeout=abc", "invalid integer value"),
            ("options=-c%20no_such_setting%3D1", "unrecognized configuration parameter"),
        ):
            result = evalkit_cli("history", "evalkit.smoke", "--database", f"{url}?{query}")
            assert result.code == 2 and said in result.stderr, (query, result.stderr)


#: Commands that read the store (never create it) and the one that writes it.
_STORE_COMMANDS = (
    ("history", "evalkit.smoke"),
    ("show", "r1"),
    ("db", "status"),
    ("baseline", "show", "evalkit.smoke"),
    ("run", "evalkit.smoke"),
)


@pytest.mark.parametrize("command", _STORE_COMMANDS, ids=lambda c: c[0])
def test_a_path_too_long_to_look_up_is_named_and_cut_not_a_crash(evalkit_cli, command: tuple[str, ...]) -> None:
    url = "sqlite:///" + "x" * 100_000
    result = evalkit_cli(*command, "--database", url)
    assert result.code == 2, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "File name too long" in result.stderr and "(100,010 characters)" in result.stderr
    assert len(result.stderr) < 1_000  # the URL is shown cut, once


def test_a_missing_store_under_a_long_path_is_shown_cut(evalkit_cli) -> None:
    path = "no-such-folder/" + "/".join(["y" * 100] * 30)  # within the system's limits: simply not there
    result = evalkit_cli("history", "evalkit.smoke", "--database", f"sqlite:///{path}")
    assert result.code == 2 and "There is no results store at no-such-folder/yyy" in result.stderr
    assert f"({len(path):,} characters)" in result.stderr and len(result.stderr) < 1_000


def test_a_loop_of_links_is_named(evalkit_cli, tmp_path) -> None:
    loop = tmp_path / "loop.db"
    loop.symlink_to(loop)
    result = evalkit_cli("history", "evalkit.smoke", "--database", f"sqlite:///{loop}")
    assert result.code == 2 and "Too many levels of symbolic links" in result.stderr, result.stderr
    assert "internal error" not in result.stderr


def test_a_store_name_with_no_room_for_its_log_is_refused_before_the_run(evalkit_cli, project) -> None:
    (project / ("z" * 255)).touch()  # a name at the system's limit: SQLite cannot make its -wal beside it
    result = evalkit_cli("run", "evalkit.smoke", "--database", "sqlite:///" + "z" * 255)
    assert result.code == 2 and "internal error" not in result.stderr, result.stderr
    assert "(265 characters)" in result.stderr


def test_messages_cut_a_long_url_and_still_hide_the_password() -> None:
    from evalkit.storage.urls import redact_url

    shown = redact_url("postgresql://ci:s3cret@host/" + "d" * 10_000)
    assert shown.startswith("postgresql://ci:***@host/ddd") and "s3cret" not in shown
    assert shown.endswith(f"… ({len('postgresql://ci:***@host/') + 10_000:,} characters)") and len(shown) < 250


@pytest.mark.parametrize("command", _STORE_COMMANDS, ids=lambda c: c[0])
def test_a_database_path_holding_nul_is_refused_naming_it(evalkit_cli, project, command) -> None:
    """A configuration may write "\\u0000" in a string; the system calls raised ValueError
    ("embedded null byte"), an internal error in every command that opens the store."""
    (project / "evalkit.toml").write_text('database = "sqlite:///runs\\u0000.db"\n')
    result = evalkit_cli(*command)
    assert result.code == 2, result.stderr
    assert 'runs\\x00.db" holds a NUL character, which no file name can' in result.stderr
    assert "internal error" not in result.stderr


def test_a_store_under_the_home_folder_is_there_not_in_a_folder_named_tilde(evalkit_cli, project, tmp_path) -> None:
    """`--database sqlite:///~/runs.db` created ./~/runs.db (and `database = "sqlite:///~/x.db"`
    in the configuration <root>/~/x.db): a user's home, like a shell's, is meant."""
    home = tmp_path / "home"
    home.mkdir()
    assert evalkit_cli("run", "evalkit.smoke", "--database", "sqlite:///~/runs.db", env={"HOME": str(home)}).code == 0
    # the home folder is outside the project: a configuration names a store there only where it allows it
    (project / "evalkit.toml").write_text(
        f'database = "sqlite:///~/configured.db"\n[sets]\nallow_outside = ["{home}"]\n'
    )
    assert evalkit_cli("run", "evalkit.smoke", env={"HOME": str(home)}).code == 0
    assert sorted(p.name for p in home.iterdir() if p.suffix == ".db") == ["configured.db", "runs.db"]
    assert not (project / "~").exists()


@pytest.mark.parametrize(
    ("url", "left"),
    [
        ("sqlite:///results.db?mode=ro", "?mode=ro"),
        ("sqlite:///results.db?timeout=30&journal_mode=off", "?timeout=30&journal_mode=off"),
        ("sqlite:///:memory:?cache=shared", "?cache=shared"),
        ("sqlite:///results.db#main", "#main"),
    ],
)
@pytest.mark.parametrize(
    "command", [("run", "evalkit.smoke"), ("history", "evalkit.smoke"), ("db", "upgrade")], ids=lambda c: c[0]
)
def test_a_sqlite_url_with_a_query_or_fragment_is_refused_not_made_a_file_name(
    evalkit_cli, project, url: str, left: str, command: tuple[str, ...]
) -> None:
    # SQLAlchemy and peewee's db_url read "?mode=ro" as options; SQLite took it as part of the file
    # name, so the runs went to "results.db?mode=ro" (or ":memory:?cache=shared" in the project)
    result = evalkit_cli(*command, "--database", url)
    assert result.code == 2, result.stderr
    assert f'database URL "{url}"' in result.stderr and repr(left) in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in project.iterdir()) == [], "no file was made"


@pytest.mark.parametrize("value", ["results.db", "runs/results.db", ":memory:", " sqlite:///results.db"])
@pytest.mark.parametrize("where", ["--database", "EVALKIT_DATABASE_URL", "config"])
def test_a_database_url_without_a_scheme_is_named_as_such_not_an_unknown_repository(
    evalkit_cli, project, value: str, where: str
) -> None:
    # a new user's first guess is a path; it was refused as 'Unknown repository "results.db"'
    args: tuple[str, ...] = ("--database", value) if where == "--database" else ()
    env = {"EVALKIT_DATABASE_URL": value} if where == "EVALKIT_DATABASE_URL" else None
    if where == "config":
        (project / "evalkit.toml").write_text(f"database = {value!r}\n".replace("'", '"'))
    for command in (("run", "evalkit.smoke"), ("history", "evalkit.smoke")):
        result = evalkit_cli(*command, *args, env=env)
        assert result.code == 2, result.stderr
        assert "Unknown repository" not in result.stderr, result.stderr
        assert f'database URL "{value}" does not start with a scheme' in result.stderr, result.stderr
        assert "sqlite:///" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in project.iterdir()) in ([], ["evalkit.toml"]), "nothing was made"


def _tables(path) -> list[str]:
    import sqlite3

    with sqlite3.connect(path) as connection:
        return sorted(row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))


_READERS = (
    ("history", "evalkit.smoke"),
    ("show", "r1"),
    ("compare", "r1", "r2"),
    ("report", "r1"),
    ("cache", "stats"),
    ("flaky", "evalkit.smoke"),
    ("baseline", "show", "evalkit.smoke"),
)


@pytest.mark.parametrize(
    "command", [*_READERS, ("db", "status"), ("db", "upgrade"), ("run", "evalkit.smoke")], ids=" ".join
)
def test_another_programs_sqlite_database_is_refused_and_left_as_it_was(evalkit_cli, tmp_path, command) -> None:
    # `--database sqlite:///app.db` (a typo, a wrong variable) wrote evalkit's tables into the app's
    # own database, even for a command that only reads
    import sqlite3

    theirs = tmp_path / "app.db"
    with sqlite3.connect(theirs) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
    before = theirs.read_bytes()
    result = evalkit_cli(*command, "--database", f"sqlite:///{theirs}")
    assert result.code == 2, result.stderr
    assert "holds tables of another program (orders, users) and no evalkit store" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert _tables(theirs) == ["orders", "users"] and theirs.read_bytes() == before


@pytest.mark.parametrize("command", _READERS, ids=" ".join)
def test_a_command_that_reads_never_makes_an_empty_file_a_store(evalkit_cli, tmp_path, command) -> None:
    empty = tmp_path / "results.db"
    empty.touch()
    result = evalkit_cli(*command, "--database", f"sqlite:///{empty}")
    assert result.code == 2 and "There is no results store at" in result.stderr, result.stderr
    assert empty.stat().st_size == 0, "a reader wrote the store's tables into it"
    assert evalkit_cli("run", "evalkit.smoke", "--database", f"sqlite:///{empty}").code == 0  # a run makes it one
    assert "evalkit_run" in _tables(empty)


@pytest.mark.parametrize(
    ("url", "env", "message"),
    [
        (
            "sqlite:///~nosuchuser-h3/runs.db",
            None,
            "names the home folder of user 'nosuchuser-h3', who does not exist here",
        ),
        ("sqlite:///~/runs.db", {"HOME": ""}, "names the home folder (~), but HOME is set and empty"),
    ],
)
def test_a_home_folder_that_cannot_be_found_is_refused_not_made_a_folder_or_the_root(
    evalkit_cli, project, url, env, message
) -> None:
    # `~nosuchuser` made a folder of that name in the working directory; HOME="" put the store at /runs.db
    for command in (("run", "evalkit.smoke"), ("history", "evalkit.smoke")):
        result = evalkit_cli(*command, "--database", url, env=env)
        assert result.code == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert list(project.iterdir()) == [] and not Path("/runs.db").exists()


def test_a_store_whose_pages_are_damaged_is_named_by_every_command_that_meets_it(
    evalkit_cli, project, tmp_path
) -> None:
    # "evalkit: error: database disk image is malformed" said which store nowhere: with
    # EVALKIT_DATABASE_URL or a configured database, the user could not tell which file to restore
    import sqlite3

    store = tmp_path / "damaged.db"
    url = f"sqlite:///{store}"
    for _ in range(3):
        assert evalkit_cli("run", "evalkit.smoke", "--database", url, "--privacy", "full").code == 0
    run_id, other = (
        r["run_id"] for r in evalkit_cli("history", "evalkit.smoke", "--database", url, "--json").json()["runs"][:2]
    )
    with sqlite3.connect(store) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with store.open("r+b") as file:
        file.seek(3 * 4096)
        file.write(bytes(range(256)) * 64)  # four pages of the same garbage every time
    for command in (
        ("history", "evalkit.smoke"),
        ("show", run_id),
        ("compare", other, run_id),
        ("report", run_id),
        ("run", "evalkit.smoke"),
    ):
        result = evalkit_cli(*command, "--database", url)
        assert result.code == 2, (command, result.stderr)
        assert f"database {url}: " in result.stderr and "malformed" in result.stderr, (command, result.stderr)
        assert "Traceback" not in result.stderr


def test_a_store_whose_baseline_index_is_damaged_is_named_never_a_traceback(evalkit_cli, project, tmp_path) -> None:
    # A store whose index of accepted runs is damaged made `history`, `baseline show` and
    # `baseline export` end in "internal error (an evalkit bug)" and a peewee traceback: the
    # repository's baseline reads (accepted_runs, acceptances_for, accepted_baseline) were not
    # turned into the one-line store failure every other read gives.
    import sqlite3

    store = tmp_path / "damaged.db"
    url = f"sqlite:///{store}"
    for _ in range(2):
        assert evalkit_cli("run", "evalkit.smoke", "--database", url).code == 0
    run_id, other = (
        r["run_id"] for r in evalkit_cli("history", "evalkit.smoke", "--database", url, "--json").json()["runs"][:2]
    )
    with sqlite3.connect(store) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'evalkit_run_set_accepted'"
        ).fetchone()
    with store.open("r+b") as file:
        file.seek((root - 1) * page_size)  # the index the baseline reads search: the runs themselves are intact
        file.write(bytes(range(256)) * (page_size // 256))
    for command in (
        ("history", "evalkit.smoke"),
        ("baseline", "show", "evalkit.smoke"),
        ("baseline", "export", "evalkit.smoke", "-o", str(tmp_path / "baseline.json")),
        ("baseline", "accept", run_id, "--reason", "r"),
        ("run", "evalkit.smoke"),
    ):
        result = evalkit_cli(*command, "--database", url)
        assert result.code == 2, (command, result.stderr)
        assert f"database {url}: " in result.stderr and "malformed" in result.stderr, (command, result.stderr)
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, (command, result.stderr)


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("postgresql://ci@127.0.0.1:1/evalkit?password=s3cretpw", 3),
        ("postgresql://127.0.0.1:1/evalkit?user=ci&password=s3cretpw&sslmode=disable", 3),
        ("postgres://ci@127.0.0.1:1/evalkit?sslmode=disable&PASSWORD=s3cretpw", 2),  # libpq: no option "PASSWORD"
        ("postgresql://ci@127.0.0.1:1/evalkit?sslpassword=s3cretpw", 3),
    ],
)
def test_a_password_in_the_query_string_is_hidden_like_one_in_the_user_info(evalkit_cli, url: str, code: int) -> None:
    # libpq (and peewee's URL parser) take ?password=: every message printed it whole; no server on
    # port 1 is exit 3, an option libpq refuses exit 2
    for command in (("history", "evalkit.smoke"), ("run", "evalkit.smoke"), ("db", "status")):
        result = evalkit_cli(*command, "--database", url)
        assert result.code == code and "cannot open database postgres" in result.stderr, result.stderr
        assert "s3cretpw" not in result.stderr + result.stdout and "password=***" in result.stderr.lower(), (
            result.stderr
        )


@pytest.mark.parametrize(
    ("url", "shown", "code"),
    [
        ("postgresql://ci@127.0.0.1:1/evalkit?pass%77ord=s3cretpw", "evalkit?pass%77ord=***", 3),
        ("postgresql://ci@127.0.0.1:1/evalkit?sslmode=disable&%70assword=s3cretpw#x", "&%70assword=***#x", 3),
        # libpq refuses the option "sslPASSWORD" itself: the URL is bad usage (exit 2)
        ("postgresql://ci@127.0.0.1:1/evalkit?ssl%50ASSWORD=s3cretpw&sslmode=disable", "ssl%50ASSWORD=***&sslmode", 2),
    ],
)
def test_a_query_password_whose_key_is_percent_escaped_is_hidden_by_the_key_libpq_reads(
    evalkit_cli, url: str, shown: str, code: int
) -> None:
    # a well-formed URL whose server is out of reach is the store's fault (exit 3);
    # libpq decodes "pass%77ord" to "password": the secret went to the server as one, and every
    # message printed it whole, the mask matching only the key as written
    result = evalkit_cli("db", "status", "--database", url)
    assert result.code == code and "cannot open database postgres" in result.stderr, result.stderr
    assert "s3cretpw" not in result.stderr + result.stdout and shown in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("url", "shown", "code"),
    [
        ("postgresql://ci:s3cret@tail9@127.0.0.1:1/evalkit", "postgresql://ci:***@127.0.0.1:1/evalkit", 3),
        ("postgresql://ci:s3:cret@tail9@127.0.0.1:1/evalkit", "postgresql://ci:***@127.0.0.1:1/evalkit", 3),
        # "#" ends the URL's address: malformed (exit 2); the others reach for a server on port 1 (exit 3)
        ("postgresql://ci:s3cret#tail9@x@127.0.0.1:1/evalkit", "postgresql://ci:***@127.0.0.1:1/evalkit", 2),
    ],
)
def test_a_password_holding_an_at_sign_is_hidden_whole(evalkit_cli, url: str, shown: str, code: int) -> None:
    # urlsplit (peewee's parser) ends the user info at the last "@": the password is "s3cret@tail9",
    # and up to the first "@" its tail was printed ("ci:***@tail9@127.0.0.1:1/evalkit")
    for command in (("history", "evalkit.smoke"), ("run", "evalkit.smoke"), ("db", "status")):
        result = evalkit_cli(*command, "--database", url)
        assert result.code == code and shown in result.stderr, result.stderr
        assert "tail9" not in result.stderr + result.stdout and "s3" not in result.stderr + result.stdout, result.stderr


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ci:s3cret/x@127.0.0.1:1/evalkit",  # "/" ends the authority: the port read "s3cret"
        "postgresql://ci:s3cret?x@127.0.0.1:1/evalkit",
        "postgresql://ci:s3c[ret@127.0.0.1:1/evalkit",  # "[" read as an IPv6 host
    ],
)
def test_a_password_that_breaks_the_url_is_not_quoted_by_its_parse_error(evalkit_cli, url: str) -> None:
    # urlsplit's "Port could not be cast to integer value as 's3cret'" was printed whole
    result = evalkit_cli("history", "evalkit.smoke", "--database", url)
    assert result.code == 2 and "postgresql://ci:***@127.0.0.1:1/evalkit" in result.stderr, result.stderr
    assert "s3c" not in result.stderr + result.stdout, result.stderr
    assert "percent-encoded" in result.stderr and "%2F" in result.stderr, result.stderr


def test_a_percent_encoded_user_password_and_database_are_decoded_as_libpq_decodes_them() -> None:
    # peewee's parse kept "p%40ss" as written: psql took the URL, evalkit failed authentication
    from evalkit.storage.engine import connect

    db = connect("postgresql://c%69:p%40ss%2Fw%23rd@127.0.0.1:1/my%20store")
    assert (db.database, db.connect_params["user"], db.connect_params["password"]) == ("my store", "ci", "p@ss/w#rd")


def test_query_parameters_reach_libpq_as_written() -> None:
    # peewee read "?password=00123" as the number 123 (and "true" as True, "none" as None): psql
    # took the URL, evalkit failed authentication
    from evalkit.storage.engine import connect

    db = connect(
        "postgresql://ci@127.0.0.1:1/evalkit?password=00123&application_name=true&sslmode=disable&connect_timeout=5"
    )
    params = db.connect_params
    assert (params["password"], params["application_name"], params["connect_timeout"]) == ("00123", "true", "5")
    # libpq decodes %XX only: a "+" is a plus, not a form's space
    assert connect("postgresql://ci@127.0.0.1:1/evalkit?password=a+b%2Bc").connect_params["password"] == "a+b+c"


@pytest.mark.parametrize("scheme", ["SQLITE", "Sqlite"])
@pytest.mark.parametrize("where", ["--database", "EVALKIT_DATABASE_URL", "config"])
def test_a_url_scheme_is_read_case_insensitively(evalkit_cli, project, scheme: str, where: str) -> None:
    # RFC 3986: a scheme is case-insensitive; SQLITE:///x.db was refused as an "unsupported database URL"
    url = f"{scheme}:///{project / 'store.db'}" if where != "config" else f"{scheme}:///store.db"
    args: tuple[str, ...] = ("--database", url) if where == "--database" else ()
    env = {"EVALKIT_DATABASE_URL": url} if where == "EVALKIT_DATABASE_URL" else None
    if where == "config":
        (project / "evalkit.toml").write_text(f'database = "{url}"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--json", *args, env=env)
    assert result.code == 0, result.stderr
    assert "store.db" in _names_in(project), "the runs went to the file the URL names"
    shown = evalkit_cli("history", "evalkit.smoke", "--json", *args, env=env)
    assert shown.code == 0 and result.json()["run_id"] in shown.stdout, shown.stderr


def _names_in(project) -> list[str]:
    return sorted(p.name for p in project.iterdir())


def test_an_upper_case_scheme_outside_the_project_is_refused_like_a_lower_case_one(
    evalkit_cli, project, tmp_path
) -> None:
    # read as no SQLite file at all, SQLITE:///../x.db slipped past the rule that a project's store lies inside it
    (project / "evalkit.toml").write_text('database = "SQLITE:///../outside.db"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "reference")
    assert result.code == 2 and "outside the project" in result.stderr, result.stderr
    assert not (tmp_path / "outside.db").exists()


def test_an_upper_case_postgresql_scheme_is_checked_as_postgresql(evalkit_cli) -> None:
    result = evalkit_cli("run", "evalkit.smoke", "--database", "POSTGRESQL://ci@db/")
    assert result.code == 2 and "names no database" in result.stderr, result.stderr
    assert "unsupported database URL" not in result.stderr


@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("db", "upgrade")])
def test_a_database_url_holding_a_line_break_prints_no_line_of_its_own(evalkit_cli, project, command) -> None:
    """``database sqlite:////etc/passwd/x<LF>evalkit: ok: Not a directory``: a message keeps its own
    line breaks where it is printed, and a URL from ``--database`` or the configuration put into
    one by ``redact_url`` kept its line break, so a line read as evalkit's. ``redact_url`` is what
    every message naming a store shows, and writes hidden characters as escapes."""
    url = "sqlite:////etc/passwd/x\nevalkit: ok \x1b[31m"
    result = evalkit_cli(*command, "--database", url)
    assert result.code in (2, 3), (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert not any(line.startswith("evalkit: ok") for line in lines), result.stderr
    assert "x\\x0aevalkit: ok \\x1b[31m" in result.stderr, result.stderr


def test_redact_url_writes_hidden_characters_as_escapes_and_still_hides_the_password() -> None:
    from evalkit.storage.urls import redact_url
    from evalkit.wording import quoted

    shown = redact_url("postgresql://ci:s3cret@db\u2028evalkit: ok/evalkit")
    assert "s3cret" not in shown and "\u2028" not in shown and "\\u2028" in shown
    assert quoted(redact_url("sqlite:////tmp/a\nb.db")) == '"sqlite:////tmp/a\\x0ab.db"', "escaped once"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://db/x?pass%77ord=s3cretpw&sslmode=disable", "postgresql://db/x?pass%77ord=***&sslmode=disable"),
        ("postgresql://db/x?x=1?password=s3cretpw&y=2", "postgresql://db/x?x=1?password=***&y=2"),
        ("postgresql://db/x?password=s3c?retpw#f&PassWord=s3cretpw", "postgresql://db/x?password=***#f&PassWord=***"),
        ("postgresql://db/x?options=-c%20a=b", "postgresql://db/x?options=-c%20a=b"),
    ],
)
def test_hide_password_reads_each_query_key_as_libpq_does(url: str, shown: str) -> None:
    from evalkit.storage.urls import hide_password

    assert hide_password(url) == shown


@pytest.mark.parametrize(
    "value",
    [
        "host=127.0.0.1 port=1 dbname=evalkit password=s3cretpw",
        "host=db password = 's3cret pw' sslmode=disable",
        "password=s3cretpw host=db",
        "host=db SSLPASSWORD=s3cretpw",
    ],
)
@pytest.mark.parametrize("where", ["--database", "EVALKIT_DATABASE_URL"])
def test_a_libpq_key_value_string_given_as_the_url_is_refused_without_its_password(
    evalkit_cli, project, value: str, where: str
) -> None:
    # psql's and libpq's other spelling of a connection: refused as a URL without a scheme, the
    # refusal quoted it whole, password included
    args: tuple[str, ...] = ("--database", value) if where == "--database" else ()
    env = {"EVALKIT_DATABASE_URL": value} if where == "EVALKIT_DATABASE_URL" else None
    for command in (("run", "evalkit.smoke"), ("history", "evalkit.smoke")):
        result = evalkit_cli(*command, *args, env=env)
        assert result.code == 2 and "does not start with a scheme" in result.stderr, result.stderr
        assert "s3cret" not in result.stderr + result.stdout and "***" in result.stderr, result.stderr


@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("history", "evalkit.smoke"), ("db", "upgrade")])
def test_a_sqlite_url_whose_query_holds_a_password_is_refused_without_it(evalkit_cli, project, command) -> None:
    # the refusal hid it in the URL it quoted, then quoted the query string and the file name whole
    result = evalkit_cli(*command, "--database", "sqlite:///results.db?password=s3cretpw")
    assert result.code == 2 and "has a query string ('?password=***')" in result.stderr, result.stderr
    assert "s3cret" not in result.stderr + result.stdout
    assert sorted(p.name for p in project.iterdir()) == [], "no file was made"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ci:s3cretpw@127.0.0.1:1/evalkit?application_name=a%00b",
        "postgresql://ci:s3c%00retpw@127.0.0.1:1/evalkit",
        "postgresql://ci@127.0.0.1:1/eval%00kit",
    ],
)
@pytest.mark.parametrize("command", _STORE_COMMANDS, ids=lambda c: c[0])
def test_a_postgresql_url_holding_nul_is_refused_naming_it_not_an_internal_error(evalkit_cli, url, command) -> None:
    # psycopg raised "ValueError: embedded null character": an internal error and a traceback
    result = evalkit_cli(*command, "--database", url)
    assert result.code == 2, result.stderr
    assert "holds a NUL character (%00), which no PostgreSQL connection parameter can" in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "s3cret" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("postgresql://ci:s3c\udcffretpw@127.0.0.1:1/evalkit", "--database"),
        ("postgresql://ci:s3cretpw@127.0.0.1:1/eval\udcc3kit", "EVALKIT_DATABASE_URL"),
    ],
)
@pytest.mark.parametrize("command", _STORE_COMMANDS, ids=lambda c: c[0])
def test_a_postgresql_url_that_is_not_utf8_is_refused_naming_it_not_an_internal_error(
    evalkit_cli, url: str, where: str, command
) -> None:
    # a byte that is not UTF-8 in an argument or the environment reaches Python as a lone surrogate:
    # psycopg raised "UnicodeEncodeError: ... surrogates not allowed", an internal error
    args: tuple[str, ...] = ("--database", url) if where == "--database" else ()
    env = {"EVALKIT_DATABASE_URL": url} if where == "EVALKIT_DATABASE_URL" else None
    result = evalkit_cli(*command, *args, env=env)
    assert result.code == 2, result.stderr
    assert "is not UTF-8 text (character " in result.stderr and "which libpq cannot take" in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "s3cret" not in result.stderr + result.stdout
