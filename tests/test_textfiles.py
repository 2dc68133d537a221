"""A named text file is written whole or not at all, and a link, pipe or device is written into."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from evalkit.textfiles import write_text_file


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


def test_a_link_is_written_through_and_kept(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    write_text_file(tmp_path / "link.txt", ["new"])
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"


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
