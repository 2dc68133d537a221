"""A project's configuration keeps its SQLite store inside the project: a cloned repository's
``database = "sqlite:///../../x.db"`` (or an absolute path) made `evalkit run` create, or write
evalkit's tables into, any SQLite file the user could write. ``--database`` and
``EVALKIT_DATABASE_URL`` are the user's own and name a store anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def configure(project: Path, database: str, extra: str = "") -> None:
    (project / "evalkit.toml").write_text(f'database = "{database}"\n{extra}', encoding="utf-8")


@pytest.mark.parametrize("form", ["relative", "absolute", "link"])
@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("history", "evalkit.smoke"), ("db", "upgrade")], ids=lambda c: c[0])
def test_a_configured_store_outside_the_project_is_refused_naming_the_file_and_key(
    evalkit_cli, project: Path, elsewhere: Path, form: str, command: tuple[str, ...]
) -> None:
    if form == "link":  # a folder of the project that is a link out of it
        (project / "stores").symlink_to(elsewhere, target_is_directory=True)
    database = {"relative": "sqlite:///../elsewhere/x.db", "absolute": f"sqlite:///{elsewhere}/x.db", "link": "sqlite:///stores/x.db"}[form]
    configure(project, database)
    result = evalkit_cli(*command)
    assert result.code == 2, result.stdout + result.stderr
    config = project / "evalkit.toml"
    assert f'{config}: database = "{database}" names the SQLite file {elsewhere}/x.db, outside the project' in result.stderr, result.stderr
    assert "--database or EVALKIT_DATABASE_URL" in result.stderr and "Traceback" not in result.stderr
    assert list(elsewhere.iterdir()) == [] and not (project / ".evalkit").exists(), "nothing was made"


def test_the_command_line_and_the_environment_name_a_store_anywhere(evalkit_cli, project: Path, elsewhere: Path) -> None:
    configure(project, "sqlite:///.evalkit/results.db")
    assert evalkit_cli("run", "evalkit.smoke", "--database", f"sqlite:///{elsewhere}/cli.db").code == 0
    assert evalkit_cli("run", "evalkit.smoke", env={"EVALKIT_DATABASE_URL": f"sqlite:///{elsewhere}/env.db"}).code == 0
    # beside a configuration that names one outside: the user's choice wins before it is read
    configure(project, "sqlite:///../elsewhere/x.db")
    assert evalkit_cli("run", "evalkit.smoke", "--database", f"sqlite:///{elsewhere}/cli.db").code == 0
    assert sorted(p.name for p in elsewhere.iterdir() if p.suffix == ".db") == ["cli.db", "env.db"]


def test_a_store_inside_the_project_or_an_allowed_place_is_used(evalkit_cli, project: Path, elsewhere: Path) -> None:
    configure(project, "sqlite:///stores/results.db")
    assert evalkit_cli("run", "evalkit.smoke").code == 0
    assert (project / "stores" / "results.db").is_file()
    configure(project, "sqlite:///../elsewhere/x.db", f'[sets]\nallow_outside = ["{elsewhere}"]\n')
    assert evalkit_cli("run", "evalkit.smoke").code == 0
    assert (elsewhere / "x.db").is_file()


@pytest.mark.parametrize(
    ("database", "spelling"),
    [("sqlite://x.db", "sqlite:///x.db"), ("sqlite:x.db", "sqlite:///x.db"), ("sqlite:/srv/x.db", "sqlite:////srv/x.db")],
)
def test_a_sqlite_url_without_three_slashes_is_refused_naming_the_right_spelling(
    evalkit_cli, project: Path, database: str, spelling: str
) -> None:
    # sqlite://x.db was opened from the working directory (project/sub/x.db), past the rule that a
    # configured store lies in the project; to SQLAlchemy and peewee x.db is a host
    configure(project, database)
    (project / "sub").mkdir()
    for where in (project / "sub", project):
        result = evalkit_cli("run", "evalkit.smoke", cwd=where)
        assert result.code == 2, result.stdout + result.stderr
        # named with the file it came from, as the configuration's other errors are
        assert f'{project / "evalkit.toml"}: database URL "{database}" is not spelled sqlite:///PATH' in result.stderr
        assert f"write {spelling} (three slashes" in result.stderr and "Traceback" not in result.stderr
    assert not list(project.rglob("*.db")) and not (project / ".evalkit").exists(), "nothing was made"
    result = evalkit_cli("history", "evalkit.smoke", "--database", database)
    assert result.code == 2 and f'error: database URL "{database}" is not spelled sqlite:///PATH' in result.stderr
    result = evalkit_cli("history", "evalkit.smoke", env={"EVALKIT_DATABASE_URL": database})
    assert result.code == 2 and f'error: EVALKIT_DATABASE_URL: database URL "{database}" is not spelled' in result.stderr


@pytest.mark.parametrize(
    ("database", "said"),
    [
        ("sqlite:///x.db?mode=ro", "has a query string ('?mode=ro')"),  # was shown resolved: sqlite:////…/x.db?mode=ro
        ("sqlite:///", "names no file"),  # was "sqlite:////…/project: … is a folder"
        ("x.db", "does not start with a scheme"),
        ("postgresql://[", "is malformed"),
    ],
)
def test_a_configured_database_url_of_the_wrong_form_is_refused_naming_the_file(
    evalkit_cli, project: Path, database: str, said: str
) -> None:
    configure(project, database)
    result = evalkit_cli("history", "evalkit.smoke")
    assert result.code == 2 and f'error: {project / "evalkit.toml"}: database URL "{database}" {said}' in result.stderr, result.stderr
    assert not list(project.rglob("*.db")) and not (project / ".evalkit").exists(), "nothing was made"


@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("history", "evalkit.smoke")], ids=lambda c: c[0])
def test_a_configured_database_url_of_an_unknown_scheme_is_refused_naming_where_it_was_read(
    evalkit_cli, project: Path, command: tuple[str, ...]
) -> None:
    # said only 'Unknown repository "mysql"', raised where the store is opened: which file held it?
    configure(project, "mysql://x")
    result = evalkit_cli(*command)
    assert result.code == 2, result.stdout + result.stderr
    assert f'error: {project / "evalkit.toml"}: Unknown repository "mysql".' in result.stderr, result.stderr
    assert "sqlite (built in)" in result.stderr and "Traceback" not in result.stderr
    (project / "evalkit.toml").unlink()
    result = evalkit_cli(*command, env={"EVALKIT_DATABASE_URL": "mysql://x"})
    assert result.code == 2 and 'error: EVALKIT_DATABASE_URL: Unknown repository "mysql".' in result.stderr, result.stderr
    result = evalkit_cli(*command, "--database", "mysql://x")  # typed: needs no name
    assert result.code == 2 and 'error: Unknown repository "mysql".' in result.stderr, result.stderr
    assert not list(project.rglob("*.db")) and not (project / ".evalkit").exists(), "nothing was made"


@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("history", "evalkit.smoke"), ("db", "upgrade")], ids=lambda c: c[0])
def test_a_default_store_a_link_leads_out_of_the_project_is_refused_like_the_database_it_stands_for(
    evalkit_cli, project: Path, elsewhere: Path, command: tuple[str, ...]
) -> None:
    # a committed .evalkit -> ../elsewhere held the store outside the project, where the same path
    # written out (database = "sqlite:///.evalkit/results.db") was refused
    configure(project, "sqlite:///.evalkit/results.db")
    (project / ".evalkit").symlink_to(elsewhere, target_is_directory=True)
    (project / "sub").mkdir()
    for database in ("sqlite:///.evalkit/results.db", None):
        if database is None:
            (project / "evalkit.toml").write_text("", encoding="utf-8")
        result = evalkit_cli(*command, cwd=project / "sub")
        assert result.code == 2, result.stdout + result.stderr
        assert f"the SQLite file {elsewhere}/results.db, outside the project" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert "the default store" in result.stderr and f"EVALKIT_DATABASE_URL=sqlite:///{elsewhere}/results.db" in result.stderr
    assert list(elsewhere.iterdir()) == [], "nothing was made"
    # the user's ways to keep the store on another disk
    assert evalkit_cli("run", "evalkit.smoke", env={"EVALKIT_DATABASE_URL": f"sqlite:///{elsewhere}/results.db"}).code == 0
    (project / "evalkit.toml").write_text(f'[sets]\nallow_outside = ["{elsewhere}"]\n', encoding="utf-8")
    assert evalkit_cli("history", "evalkit.smoke", cwd=project / "sub").code == 0


def test_a_default_store_a_link_keeps_inside_the_project_is_used(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text("", encoding="utf-8")
    (project / "stores").mkdir()
    (project / ".evalkit").symlink_to(project / "stores", target_is_directory=True)
    assert evalkit_cli("run", "evalkit.smoke").code == 0
    assert (project / "stores" / "results.db").is_file()
