"""A named text file is written whole or not at all, and a link, pipe or device is written into; a
file is read only when it is a regular file (or, read whole, a pipe) within its reader's limit."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from evalkit.textfiles import FileTooLarge, NotARegularFile, open_regular_file, read_whole_file, write_text_file


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


@pytest.mark.skipif(not Path("/dev/zero").is_char_device(), reason="needs /dev/zero")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_an_endless_device_is_refused_before_a_byte_is_read(device: str) -> None:
    with pytest.raises(NotARegularFile) as caught:
        read_whole_file(device, 10**12)
    assert caught.value.strerror == "not a regular file but a character device"
    with pytest.raises(NotARegularFile):
        open_regular_file(device)


def test_a_named_pipe_nobody_writes_reads_as_empty_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "set.yaml"
    os.mkfifo(fifo)
    done: list[bytes] = []
    reader = threading.Thread(target=lambda: done.append(read_whole_file(fifo, 100)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert done == [b""]
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
