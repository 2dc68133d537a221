"""Reporters through the CLI: `--report` on run and compare, `evalkit report RUN_ID`, third-party
and failing reporters, and waiting for a run's shards."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading

import pytest

from tests.support.reports import HOSTILE_IDS, REPORT_PLUGINS, answer_hostile

SET = "reportkit.hostile"


@pytest.fixture
def cli(evalkit_cli, plugin_dists):  # noqa: ANN001, ANN201
    """``evalkit`` with the report test distribution installed."""
    base = {"PYTHONPATH": plugin_dists(REPORT_PLUGINS)}
    return lambda *args, env=None: evalkit_cli(*args, env={**base, **(env or {})})


def run_ids(project) -> list[str]:  # noqa: ANN001
    db = project / ".evalkit" / "results.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("select id from evalkit_run order by started_at")]


def test_evalkit_list_shows_the_built_in_and_third_party_reporters(cli) -> None:
    result = cli("list", "--json")
    assert result.code == 0, result.stderr
    reporters = {(r["name"], r["distribution"]) for r in result.json() if r["group"] == "evalkit.reporters"}
    assert reporters >= {
        ("junit", "evalkit-golden"), ("markdown", "evalkit-golden"), ("html", "evalkit-golden"), ("json", "evalkit-golden"),
        ("one-line", "evalkit-report-plugins"), ("explodes", "evalkit-report-plugins"),
    }  # fmt: skip
    text = cli("list").stdout
    assert "evalkit.reporters  (reporters)" in text


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("nope:out.xml", 'Unknown reporter "nope". Available reporters: '),
        ("junit:", 'the path after the colon is empty (use "-" for standard output)'),
        (":out.xml", "name a format before the colon"),
    ],
)
def test_a_bad_report_option_is_refused_before_anything_runs(cli, project, value, message) -> None:
    answer_hostile(project)
    result = cli("run", SET, "--provider", "app", "--report", value)
    assert result.code == 2
    assert message in result.stderr
    assert run_ids(project) == []


def test_a_report_path_that_can_never_be_written_is_refused_before_anything_runs(cli, project) -> None:
    """`--report html:reports` with reports/ a folder (or a path under a file) answered every
    prompt, stored the run, then failed to write the report, exit 0: CI's test tab stayed empty
    after a whole paid run. Such a path is refused first, exit 2, on every command taking it."""
    answer_hostile(project)
    (project / "reports").mkdir()
    (project / "a-file").write_text("not a folder")
    refused = {
        "html:reports": "the html report cannot be written to reports: it is a folder; give a file's path",
        "junit:a-file/results.xml": "the junit report cannot be written to a-file/results.xml: it cannot be made: a-file is a file, not a folder",
        "junit:a-file/deeper/results.xml": "it cannot be made: a-file is a file, not a folder",
    }
    for value, message in refused.items():
        result = cli("run", SET, "--provider", "app", "--report", value)
        assert result.code == 2 and message in result.stderr, (value, result.stderr)
        assert "internal error" not in result.stderr
    assert run_ids(project) == []
    assert cli("run", SET, "--provider", "app").code == 0
    (run_id,) = run_ids(project)
    later = cli("report", run_id, "-o", "reports")
    assert later.code == 2 and "the html report cannot be written to reports: it is a folder" in later.stderr
    assert sorted(p.name for p in (project / "reports").iterdir()) == []


def test_a_report_path_in_a_folder_that_takes_no_file_is_refused_before_anything_runs(cli, project) -> None:
    """`--report html:/readonly/r.html` (a read-only mount: root's permission bits do not stop it)
    answered every prompt and stored the run; only the reporter at the end found the folder could
    not take the file. It is refused first, exit 2, naming the option and the path, on `run` and on
    `report -o`, and nothing is stored or left in the folder (the probe file is removed)."""
    from tests.support.tmpfs import read_only_folder

    answer_hostile(project)
    (project / "rw").mkdir()
    with read_only_folder(project / "ro") as folder:
        for value in ("html:ro/r.html", "junit:ro/deeper/results.xml"):
            result = cli("run", SET, "--provider", "app", "--report", "junit:rw/ok.xml", "--report", value)
            assert result.code == 2, result.stderr
            assert f"--report: the {value.split(':')[0]} report cannot be written to {value.split(':')[1]}: it cannot be made: " in result.stderr
            assert "no file can be made in ro (Read-only file system)" in result.stderr
            assert run_ids(project) == [], "nothing stored"
        assert cli("run", SET, "--provider", "app").code == 0
        (run_id,) = run_ids(project)
        later = cli("report", run_id, "-o", "ro/run.html")
        assert later.code == 2, later.stderr
        assert "--output: the html report cannot be written to ro/run.html: it cannot be made: " in later.stderr
        compared = cli("compare", run_id, run_id, "--report", "markdown:ro/c.md")
        assert compared.code == 2 and "--report: the markdown report cannot be written to ro/c.md" in compared.stderr
        assert list(folder.iterdir()) == []
    assert list((project / "rw").iterdir()) == [], "no file left where the run was refused"
    assert [p.name for p in project.iterdir() if p.name.startswith(".evalkit-probe-")] == []


def test_a_failing_reporter_is_named_and_changes_neither_the_run_nor_its_exit_code(cli, project) -> None:
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    answer_hostile(project, failing=HOSTILE_IDS[3:4])
    result = cli(
        "run", SET, "--provider", "app", "--fail-on-regression",
        "--report", "explodes:never.txt", "--report", "junit:results.xml",
    )  # fmt: skip
    assert result.code == 1  # the run's own code: it regressed (one case of six is beyond the 0.1 tolerance)
    assert (
        'evalkit: error: reporter "explodes" failed: RuntimeError: the exploding reporter exploded on purpose '
        "(the run's stored result and exit code are unchanged)"
    ) in result.stderr
    assert "Report junit written to results.xml" in result.stderr
    assert (project / "results.xml").exists() and not (project / "never.txt").exists()
    shown = cli("show", run_ids(project)[-1], "--json").json()
    assert shown["status"] == "complete" and shown["verdict"]["state"] == "regressed"

    answer_hostile(project)
    fine = cli("run", SET, "--provider", "app", "--report", "explodes")
    assert fine.code == 0
    assert 'reporter "explodes" failed' in fine.stderr


def test_report_exits_3_when_the_report_it_was_asked_for_cannot_be_made(cli, project, tmp_path) -> None:
    # `evalkit report` exists to make the file: a CI step must not pass without it (unlike `run --report`).
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    (run_id,) = run_ids(project)
    # /dev/full takes the report's name and refuses its bytes: only writing tells.
    unwritable = cli("report", run_id, "-o", "/dev/full")
    assert unwritable.code == 3
    assert 'evalkit: error: reporter "html" failed: ' in unwritable.stderr
    assert "(the stored run is unchanged)" in unwritable.stderr and "exit code" not in unwritable.stderr
    exploding = cli("report", run_id, "--format", "explodes", "--report", "junit:results.xml")
    assert exploding.code == 3
    assert "Report junit written to results.xml" in exploding.stderr and (project / "results.xml").exists()
    assert cli("report", run_id, "-o", "fine.html").code == 0
    # A gate that failed keeps its own code, the more important news, under --fail-on-regression.
    answer_hostile(project, failing=HOSTILE_IDS[:2])
    assert cli("run", SET, "--provider", "app").code == 0
    regressed = cli("report", run_ids(project)[-1], "--fail-on-regression", "-o", "/dev/full")
    assert regressed.code == 1 and 'reporter "html" failed' in regressed.stderr
    assert cli("show", run_id, "--json").json()["status"] == "complete"
    # --report extras fail the same way, and the help says so (it said "does not change the exit code")
    extra = cli("report", run_id, "-o", "fine.html", "--report", "junit:/dev/full")
    assert extra.code == 3 and 'reporter "junit" failed' in extra.stderr
    helped = " ".join(cli("report", "--help").stdout.split())
    assert "A failing reporter is named on stderr and makes the command exit 3" in helped
    assert "does not change the exit code" not in helped
    assert "does not change the exit code" in " ".join(cli("run", "--help").stdout.split())


def test_report_renders_any_stored_run_later_in_any_format(cli, project) -> None:
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    answer_hostile(project, failing=HOSTILE_IDS[:2])
    assert cli("run", SET, "--provider", "app").code == 0
    first, second = run_ids(project)

    html = cli("report", second, "--format", "html", "-o", "reports/run.html")
    assert html.code == 0, html.stderr
    assert html.stdout.startswith(f"REGRESSED: reportkit.hostile run {second}\nRegression: pass rate dropped 33.3 pp")
    page = (project / "reports" / "run.html").read_text()
    assert page.startswith("<!doctype html>") and f'<code id="run-id">{second}</code>' in page

    third_party = cli("report", second, "--format", "one-line")
    assert third_party.code == 0
    assert third_party.stdout == f"one-line {second} REGRESSED 6\n"
    assert third_party.stderr.startswith(f"REGRESSED: reportkit.hostile run {second}")

    document = json.loads(cli("report", second, "--format", "json").stdout)
    assert document["run"]["id"] == second and document["verdict"]["state"] == "regressed"
    assert document["comparison"]["regressed_cases"] == list(HOSTILE_IDS[:2])
    assert [p["run_id"] for p in document["history"]] == [first, second]
    assert [p["accepted"] for p in document["history"]] == [True, False]

    strict = cli("report", second, "--format", "junit", "-o", "gate.xml", "--fail-on-regression")
    assert strict.code == 1
    assert cli("report", first, "--fail-on-regression", "-o", "first.html").code == 0
    missing = cli("report", "no-such-run")
    assert missing.code == 2 and 'there is no run "no-such-run" in the store' in missing.stderr


@pytest.mark.parametrize("privacy", ["metadata", "redacted"])
def test_the_report_a_run_writes_holds_the_cases_a_later_report_of_it_holds(cli, project, privacy) -> None:
    """The report ``run --report`` wrote laid the checks this process graded over the stored cases:
    at ``metadata`` privacy it showed each failed check's detail (text a check may quote from the
    answer or a judge's reasons), which the store drops and ``evalkit report RUN`` later omits.
    Both now hold the cases as the run's privacy level kept them."""
    answer_hostile(project, failing=HOSTILE_IDS[:2])
    ran = cli("run", SET, "--provider", "app", "--privacy", privacy, "--report", "json:run.json", "--json")
    assert ran.code == 0, ran.stderr
    later = cli("report", ran.json()["run_id"], "--format", "json", "-o", "later.json")
    assert later.code == 0, later.stderr
    written, read_later = (json.loads((project / name).read_text()) for name in ("run.json", "later.json"))
    assert written["run"]["cases"] == read_later["run"]["cases"]
    details = [check["detail"] for case in written["run"]["cases"] for check in case["checks"] if not check["passed"]]
    assert details == ([None, None] if privacy == "metadata" else ["contains(yes) did not hold"] * 2), details


def test_compare_writes_reports_of_the_run_against_the_base(cli, project) -> None:
    answer_hostile(project)
    cli("run", SET, "--provider", "app")
    answer_hostile(project, failing=HOSTILE_IDS[:1])
    cli("run", SET, "--provider", "app")
    base, run = run_ids(project)
    result = cli(
        "compare",
        base,
        run,
        "--report",
        "markdown:cmp.md",
        "--report",
        "junit:cmp.xml",
        "--max-pass-rate-drop",
        "0.5",
        "--max-mean-score-drop",
        "0.5",
    )
    assert result.code == 0, result.stderr
    markdown = (project / "cmp.md").read_text()
    assert markdown.startswith(f"**✅ PASSED** — reportkit\\.hostile, run {run.replace('-', chr(92) + '-')}")
    assert "| Pass rate | 100.0% | 83.3% | -16.7 pp |" in markdown
    assert 'name="regression-gate" time="0.000" />' in (project / "cmp.xml").read_text()


def test_waiting_for_a_run_whose_shards_are_not_all_in_times_out_with_exit_3(cli, project) -> None:
    answer_hostile(project)
    shard = cli(
        "run",
        SET,
        "--provider",
        "app",
        "--shard",
        "1/2",
        "--run-id",
        "pipeline-41",
        "--database",
        "sqlite:///.evalkit/results.db",
    )
    assert shard.code == 0, shard.stderr
    pending = cli("report", "pipeline-41", "--format", "markdown", "-o", "pending.md", "--fail-on-regression")
    assert pending.code == 1
    assert pending.stdout.startswith("PENDING: reportkit.hostile run pipeline-41")
    assert "the verdict is pending until the run has finished" in (project / "pending.md").read_text()
    waited = cli("report", "pipeline-41", "--wait", "--timeout", "1s", "--poll", "0.2s", "-o", "late.html")
    assert waited.code == 3
    assert "Waiting up to 1s for every shard of run pipeline-41" in waited.stderr
    assert "cases are in after 1 s and the run is still running; the verdict is pending" in waited.stderr
    assert not (project / "late.html").exists()
    never = cli("report", "pipeline-42", "--wait", "--timeout", "0.5s", "--poll", "0.1s")
    assert never.code == 3 and "run pipeline-42 did not appear in the store within 0.5 s" in never.stderr
    bad = cli("report", "pipeline-41", "--wait", "--timeout", "soon")
    assert (
        bad.code == 2
        and "--timeout must be a duration from 1 ms to 7 days (" in bad.stderr
        and 'got "soon"' in bad.stderr
    )


def test_a_report_goes_into_a_pipe_or_standard_output_without_replacing_it(cli, project) -> None:
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    (run_id,) = run_ids(project)

    pipe = project / "report.pipe"
    os.mkfifo(pipe)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text()), daemon=True)
    reader.start()
    into_pipe = cli("report", run_id, "--format", "markdown", "-o", str(pipe))
    reader.join(timeout=60)
    assert into_pipe.code == 0, into_pipe.stderr
    assert received and received[0].startswith("**✅ BASELINE**") and stat.S_ISFIFO(os.lstat(pipe).st_mode)

    (project / "kept.md").write_text("old")
    (project / "latest.md").symlink_to("kept.md")
    over_link = cli("report", run_id, "--format", "markdown", "-o", "latest.md")
    assert over_link.code == 0, over_link.stderr
    assert not (project / "latest.md").is_symlink() and (project / "kept.md").read_text() == "old"
    assert (project / "latest.md").read_text().startswith("**✅ BASELINE**")

    to_stdout = cli("report", run_id, "--format", "markdown", "-o", "/dev/stdout")
    assert to_stdout.code == 0 and to_stdout.stdout.startswith("**✅ BASELINE**")
    assert to_stdout.stderr.startswith(f"BASELINE: reportkit.hostile run {run_id}")  # the verdict lines stay out of it


def test_a_reporter_naming_a_number_as_its_destination_is_a_failing_reporter(cli, project) -> None:
    """``open(1, "a")`` appends to a file descriptor: a reporter's default destination that is not
    a path must not be opened."""
    answer_hostile(project)
    result = cli("run", SET, "--provider", "app", "--report", "to-a-number", "--json")
    assert result.code == 0, result.stderr
    assert 'reporter "to-a-number" failed: TypeError: default_destination() returned int, not a path' in result.stderr
    assert "a report" not in result.stdout
    result.json()  # standard output is the run's document alone


def test_a_report_appended_to_a_file_keeps_text_that_was_not_utf8_as_escapes(tmp_path) -> None:
    from evalkit.reports.targets import RenderedReport, deliver

    summary = tmp_path / "summary.md"
    written, failures = deliver([RenderedReport("markdown", "case \udcff\udcfe", str(summary), append=True)])
    assert failures == [] and len(written) == 1
    assert summary.read_text(encoding="utf-8") == "case \\udcff\\udcfe\n"


@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
def test_an_empty_output_path_is_refused_not_read_as_standard_output_or_a_default(cli, project, value) -> None:
    # `-o "$REPORT"` with the variable unset printed the report on standard output (report), or
    # wrote the set file to its default place (import): the file the next CI step uploads was never made
    assert cli("run", "evalkit.smoke").code == 0
    run_id = run_ids(project)[0]
    for args in (("report", run_id, "--format", "junit", "-o", value), ("report", run_id, "-o", value),
                 ("baseline", "export", "evalkit.smoke", "-o", value)):  # fmt: skip
        result = cli(*args)
        assert result.code == 2, (args, result.stdout, result.stderr)
        assert "-o/--output is empty" in result.stderr and "Traceback" not in result.stderr, (args, result.stderr)
        assert "<testsuites" not in result.stdout
    (project / "trace.jsonl").write_text("")
    imported = cli("import", "otel", "trace.jsonl", "-o", value)
    assert imported.code == 2 and "-o/--output is empty" in imported.stderr, imported.stderr
    assert not (project / "evals").exists()


def _planted_link(project, tmp_path, name: str, mode: int = 0o600):  # noqa: ANN001, ANN202
    """A link at ``project/name`` to a file outside the workspace (what a pull request can commit)."""
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    precious = outside / f"precious-{name.replace('/', '-')}"
    precious.write_bytes(b"precious bytes\x00\xff\n")
    os.chmod(precious, mode)
    link = project / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(precious)
    return link, precious


def test_a_link_planted_at_an_output_is_replaced_never_followed(cli, project, tmp_path) -> None:
    """`ln -s /tmp/precious.txt reports/summary.md; evalkit report RUN -o reports/summary.md`
    replaced the link's target: a pull request that commits a link made CI overwrite a file
    outside the workspace. The link is now replaced by a regular file; its target keeps every byte."""
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    assert cli("run", SET, "--provider", "app").code == 0
    run_id, later = run_ids(project)
    commands = {
        "reports/summary.md": ("report", run_id, "--format", "markdown", "-o", "reports/summary.md"),
        "reports/junit.xml": ("report", run_id, "-o", "fine.html", "--report", "junit:reports/junit.xml"),
        "reports/run.md": ("run", SET, "--provider", "app", "--report", "markdown:reports/run.md"),
        "reports/compare.xml": ("compare", run_id, later, "--report", "junit:reports/compare.xml"),
        "evals/baseline.json": ("baseline", "export", SET, "--provider", "app", "-o", "evals/baseline.json"),
    }
    for name, command in commands.items():
        link, precious = _planted_link(project, tmp_path, name)
        result = cli(*command)
        assert result.code == 0, (name, result.stderr)
        assert precious.read_bytes() == b"precious bytes\x00\xff\n", name
        assert stat.S_IMODE(precious.stat().st_mode) == 0o600, name
        assert not link.is_symlink() and stat.S_ISREG(os.lstat(link).st_mode), name
        assert link.read_text().strip(), name
        assert sorted(p.name for p in precious.parent.iterdir()) == sorted(
            f"precious-{n.replace('/', '-')}" for n in list(commands)[: list(commands).index(name) + 1]
        ), "nothing written beside the link's target"


def test_a_file_replacing_a_link_has_the_umasks_mode_not_its_targets(cli, project, tmp_path) -> None:
    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    (run_id,) = run_ids(project)
    link, precious = _planted_link(project, tmp_path, "summary.md", mode=0o755)
    before = os.umask(0o027)
    try:
        result = cli("report", run_id, "--format", "markdown", "-o", "summary.md")
    finally:
        os.umask(before)
    assert result.code == 0, result.stderr
    assert stat.S_IMODE(os.lstat(link).st_mode) == 0o640 and stat.S_IMODE(precious.stat().st_mode) == 0o755


def test_a_report_failing_midway_through_a_link_leaves_no_temporary_file_and_no_partial_output(
    cli, project, tmp_path, monkeypatch
) -> None:
    """The report is written beside the name given (not beside a link's target) and renamed over
    it; a failure before the rename leaves the link, its target and the folder as they were."""
    from evalkit import textfiles

    answer_hostile(project)
    assert cli("run", SET, "--provider", "app").code == 0
    (run_id,) = run_ids(project)
    link, precious = _planted_link(project, tmp_path, "reports/summary.md")
    renamed: list[str] = []

    def refused(source, destination) -> None:  # noqa: ANN001
        renamed.append(os.path.dirname(source))
        raise OSError(28, "No space left on device", str(destination))

    monkeypatch.setattr(textfiles.os, "replace", refused)
    result = cli("report", run_id, "--format", "markdown", "-o", "reports/summary.md")
    assert result.code == 3 and "cannot write reports/summary.md: No space left on device" in result.stderr
    assert renamed == [str(project / "reports")], "the temporary file is made beside the name given"
    assert link.is_symlink() and precious.read_bytes() == b"precious bytes\x00\xff\n"
    assert sorted(p.name for p in (project / "reports").iterdir()) == ["summary.md"]
    assert sorted(p.name for p in precious.parent.iterdir()) == [precious.name]
