"""A named text file is written whole or not at all, a link at its name replaced (never followed),
and a pipe or device written into; a file is read only when it is a regular file (or, read whole, a
pipe) within its reader's limit."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from evalkit import textfiles
from evalkit.textfiles import (
    FileTooLarge,
    NoReaderOnPipe,
    NotARegularFile,
    append_text_file,
    open_regular_file,
    read_whole_file,
    write_text_file,
)


def test_a_new_file_and_its_folder_are_created_with_the_umasks_mode(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "out.xml"
    write_text_file(target, ["<a/>", "\n"])
    assert target.read_text() == "<a/>\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()


def test_a_failure_midway_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")

    def chunks() -> Iterator[str]:
        yield "new, half"
        raise ValueError("the writer failed")

    with pytest.raises(ValueError, match="the writer failed"):
        write_text_file(target, chunks())
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_link_is_replaced_never_written_through(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    write_text_file(tmp_path / "link.txt", ["new"])
    assert not (tmp_path / "link.txt").is_symlink() and (tmp_path / "link.txt").read_text() == "new"
    assert (tmp_path / "real.txt").read_text() == "old"


def test_a_named_pipe_is_written_into_not_replaced(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text()), daemon=True)
    reader.start()
    write_text_file(pipe, ["through ", "the pipe"])
    reader.join(timeout=30)
    assert received == ["through the pipe"] and stat.S_ISFIFO(os.lstat(pipe).st_mode)


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        write_text_file(tmp_path, ["x"])
    assert tmp_path.is_dir()


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


@pytest.mark.skipif(not Path("/dev/zero").is_char_device(), reason="needs /dev/zero")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_an_endless_device_is_refused_before_a_byte_is_read(device: str) -> None:
    with pytest.raises(NotARegularFile) as caught:
        read_whole_file(device, 10**12)
    assert caught.value.strerror == "not a regular file but a character device"
    with pytest.raises(NotARegularFile):
        open_regular_file(device)


def test_a_named_pipe_nobody_writes_is_refused_after_a_moment_instead_of_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it read as an empty file: a configuration "held no settings", a set file was empty
    monkeypatch.setattr(textfiles, "PIPE_WRITER_WAIT_S", 0.2)
    fifo = tmp_path / "set.yaml"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def read() -> None:
        try:
            read_whole_file(fifo, 100)
        except OSError as exc:
            done.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert len(done) == 1 and isinstance(done[0], NotARegularFile)
    assert done[0].strerror == "not a regular file but a pipe nothing writes into (waited 0.2 s for a writer)"
    with pytest.raises(NotARegularFile, match="named pipe"):
        open_regular_file(fifo)  # a reader that streams or reads twice wants a regular file


def test_a_pipe_with_a_writer_is_read_whole_within_the_limit(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"x = 1\n")
    os.close(write_end)
    try:
        assert read_whole_file(f"/proc/self/fd/{read_end}", 100) == b"x = 1\n"
    finally:
        os.close(read_end)


def test_a_file_past_the_limit_is_refused_naming_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * 1001)
    assert read_whole_file(big, 1001) == b"#" * 1001
    with pytest.raises(FileTooLarge) as caught:
        read_whole_file(big, 1000)
    assert caught.value.strerror == "larger than the 1,000 bytes it may hold"


def test_a_folder_is_refused_as_a_folder(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        read_whole_file(tmp_path, 100)


def _failing_midway() -> Iterator[str]:
    yield "new, half"
    raise ValueError("the writer failed")


def test_a_link_is_replaced_whole_never_half_written_and_its_target_untouched(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    os.chmod(tmp_path / "real.txt", 0o600)
    (tmp_path / "link.txt").symlink_to("real.txt")
    with pytest.raises(ValueError, match="the writer failed"):
        write_text_file(tmp_path / "link.txt", _failing_midway())
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"], "no temporary file left"
    write_text_file(tmp_path / "link.txt", ["new"])
    assert not (tmp_path / "link.txt").is_symlink() and (tmp_path / "link.txt").read_text() == "new"
    assert (tmp_path / "real.txt").read_text() == "old" and stat.S_IMODE((tmp_path / "real.txt").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "link.txt").stat().st_mode) == 0o666 & ~_umask(), "the umask's, not the target's"


def test_a_regular_file_keeps_its_permissions_when_replaced(tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text("old")
    os.chmod(tmp_path / "secret.json", 0o600)
    write_text_file(tmp_path / "secret.json", ["new"])
    assert stat.S_IMODE((tmp_path / "secret.json").stat().st_mode) == 0o600


def test_an_append_over_a_link_neither_reads_nor_changes_its_target(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "summary.md").write_text("private\n")
    (tmp_path / "summary.md").symlink_to(tmp_path / "elsewhere" / "summary.md")
    append_text_file(tmp_path / "summary.md", ["more\n"])
    assert (tmp_path / "elsewhere" / "summary.md").read_text() == "private\n"
    assert not (tmp_path / "summary.md").is_symlink() and (tmp_path / "summary.md").read_text() == "more\n"
    assert [p.name for p in (tmp_path / "elsewhere").iterdir()] == ["summary.md"]


def test_an_append_is_whole_or_not_at_all(tmp_path: Path) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("# earlier step\n")
    append_text_file(summary, ["# evalkit\n", "all good\n"])
    assert summary.read_text() == "# earlier step\n# evalkit\nall good\n"
    with pytest.raises(ValueError, match="the writer failed"):
        append_text_file(summary, _failing_midway())
    assert summary.read_text() == "# earlier step\n# evalkit\nall good\n"
    assert [p.name for p in tmp_path.iterdir()] == ["step_summary.md"]
    append_text_file(tmp_path / "new.md", ["first\n"])
    assert (tmp_path / "new.md").read_text() == "first\n"


@pytest.mark.parametrize("write", [write_text_file, append_text_file])
def test_a_named_pipe_with_no_reader_is_refused_not_waited_on_for_ever(tmp_path: Path, write) -> None:
    pipe = tmp_path / "report.xml"
    os.mkfifo(pipe)
    with pytest.raises(NoReaderOnPipe) as caught:
        write(pipe, ["<a/>"])
    assert caught.value.strerror.startswith("no reader on the pipe")
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)


def test_a_link_to_a_named_pipe_or_a_device_is_replaced_never_written_through(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to("pipe")
    (tmp_path / "full").symlink_to("/dev/full")
    (tmp_path / "out").symlink_to("/dev/stdout")
    for name in ("link", "full", "out"):
        write_text_file(tmp_path / name, ["x"])
        assert not (tmp_path / name).is_symlink() and (tmp_path / name).read_text() == "x"
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)


def test_a_descriptor_reached_through_a_linked_folder_is_written_into(tmp_path: Path) -> None:
    # The links in the folders on the way are the user's layout, followed: fds/N is /proc/PID/fd/N.
    target = tmp_path / "redirected.txt"
    (tmp_path / "fds").symlink_to("/proc/self/fd")
    with open(target, "w") as held:
        write_text_file(tmp_path / "fds" / str(held.fileno()), ["through the descriptor\n"])
    assert target.read_text() == "through the descriptor\n"


def test_a_pipe_whose_reader_stops_taking_data_ends_the_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textfiles, "PIPE_STALL_S", 0.2)
    pipe = tmp_path / "export.trec"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # open, and never read
    try:
        with pytest.raises(NoReaderOnPipe, match="took no data"):
            write_text_file(pipe, ["x" * 1_000_000])
    finally:
        os.close(reader)


def test_a_descriptor_name_is_written_into_never_replaced(tmp_path: Path) -> None:
    target = tmp_path / "redirected.txt"
    with open(target, "w") as held:
        write_text_file(Path(f"/proc/self/fd/{held.fileno()}"), ["through the descriptor\n"])
    assert target.read_text() == "through the descriptor\n"


def test_a_loop_of_links_at_the_name_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    write_text_file(tmp_path / "a", ["x"])
    assert (tmp_path / "a").read_text() == "x" and os.readlink(tmp_path / "b") == "a"


def test_a_file_that_cannot_be_made_is_named_not_its_temporary_file(tmp_path: Path, monkeypatch) -> None:
    # The error named ".s.yaml.r648rylt", the temporary file beside the target, a name no one gave
    # (`evalkit import otel … -o link.yaml --force`, when the temporary file could not be made).
    from evalkit.textfiles import staged_text_file

    def full(*, prefix: str, dir: Path) -> tuple[int, str]:  # noqa: A002 - mkstemp's own name
        raise OSError(28, "No space left on device", os.path.join(dir, prefix + "r648rylt"))

    monkeypatch.setattr(textfiles.tempfile, "mkstemp", full)
    for write in (
        lambda: write_text_file(tmp_path / "s.yaml", ["x"]),
        lambda: staged_text_file(tmp_path / "s.yaml", ["x"]).__enter__(),
    ):
        with pytest.raises(OSError) as caught:
            write()
        assert caught.value.filename == str(tmp_path / "s.yaml")
    assert list(tmp_path.iterdir()) == []


def test_a_staged_file_appears_only_when_put_and_fails_before_anything_changes(tmp_path: Path) -> None:
    from evalkit.textfiles import staged_text_file

    target = tmp_path / "out" / "s.yaml"
    with staged_text_file(target, ["left"]):
        pass
    assert not target.exists() and list(target.parent.iterdir()) == []
    with staged_text_file(target, ["new"]) as put:
        assert not target.exists()
        put()
    assert target.read_text() == "new" and list(target.parent.iterdir()) == [target]
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OSError), staged_text_file(tmp_path / "afile" / "s.yaml", ["x"]):
        raise AssertionError("the folder is a file: refused before the block runs")


def test_no_output_replaces_the_results_store_the_command_opened(cli, project: Path, tmp_path: Path) -> None:
    # `--export-run results.db` replaced the store with a TREC run, exit 0: every run was lost. So did
    # `report -o`, `baseline export -o` and `--report FMT:PATH` naming the store or its -wal file.
    (project / "evalkit.toml").write_text('database = "sqlite:///results.db"\n')
    store = project / "results.db"
    args = ("retrieval", "evalkit_stdlib.docs", "--deployment", "demo")
    first = cli(*args, env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert first.code == 0, first.stderr
    run_id = cli("history", "evalkit_stdlib.docs", "--json").json()["runs"][0]["run_id"]

    exported = cli(*args, "--export-run", "results.db", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")})
    # refused before anything is asked or stored (it once stored the run, then failed, exit 3)
    assert exported.code == 2, exported.stderr
    assert "--export-run results.db: is the results store's file" in exported.stderr
    assert len(cli("history", "evalkit_stdlib.docs", "--json").json()["runs"]) == 1
    assert cli(*args, env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}).code == 0
    newest = cli("history", "evalkit_stdlib.docs", "--json").json()["runs"][0]["run_id"]
    linked = project / "link.db"
    linked.symlink_to(store)
    for command in (
        ("report", run_id, "-o", "results.db"),
        ("report", run_id, "--format", "junit", "-o", str(linked)),
        ("compare", run_id, newest, "--report", "junit:results.db-wal"),
        ("baseline", "export", "evalkit_stdlib.docs", "-o", "results.db"),
    ):
        result = cli(*command)
        assert "it is the results store's file" in result.stderr, (command, result.stderr)
    assert store.read_bytes().startswith(b"SQLite format 3\x00")
    assert len(cli("history", "evalkit_stdlib.docs", "--json").json()["runs"]) == 2


def test_an_output_no_write_could_make_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """A blank name (``--report "junit: "`` wrote a file named by a space), a name too long (an
    internal error where the path was looked at), a file the command keeps (the results store:
    refused only when written, after the run was stored)."""
    store = tmp_path / "results.db"
    store.write_text("")
    with textfiles.outputs_relative_to(str(tmp_path)):
        textfiles.keep_from_outputs(store, "the results store's file")
        assert textfiles.output_refusal(" ") == "names no file (its name is blank); give a file's path"
        assert textfiles.output_refusal("out/\t") == "names no file (its name is blank); give a file's path"
        assert textfiles.output_refusal("n" * 300) == "cannot be made: File name too long"
        assert textfiles.output_refusal("results.db") == (
            "is the results store's file, which no output replaces; name another file"
        )
        assert textfiles.output_refusal("report.xml") is None
        # a folder on the way whose name is too long: the run went on, then the report failed
        assert textfiles.output_refusal(f"d/{'n' * 300}/x.xml") == "cannot be made: File name too long"
        # a link at the name is replaced, not followed: a link to the store is no store
        (tmp_path / "link.db").symlink_to(store)
        assert textfiles.output_refusal("link.db") is None
def test_a_link_planted_at_an_export_is_replaced_never_followed(cli, project: Path, tmp_path: Path) -> None:
    # `--export-run run.trec` with run.trec a committed link to a file outside the workspace
    # replaced that file with the TREC run. The link is replaced; so is a link to a folder.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_bytes(b"precious\n")
    (outside / "folder").mkdir()
    (project / "run.trec").symlink_to(outside / "precious.txt")
    (project / "qrels.trec").symlink_to(outside / "folder")
    exported = cli(
        "retrieval", "evalkit_stdlib.docs", "--deployment", "demo", "--export-run", "run.trec",
        "--export-qrels", "qrels.trec", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert exported.code == 0, exported.stderr
    assert (outside / "precious.txt").read_bytes() == b"precious\n" and list((outside / "folder").iterdir()) == []
    for name in ("run.trec", "qrels.trec"):
        assert stat.S_ISREG(os.lstat(project / name).st_mode) and (project / name).read_text().strip(), name
