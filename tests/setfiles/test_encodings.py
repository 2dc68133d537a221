"""A set file or a configuration saved as UTF-16 or UTF-32 is named as such.

Windows PowerShell 5 writes UTF-16 (with its byte-order mark) with ``>`` and ``Out-File``: a user
who made a set file that way was told `is not UTF-8 text (invalid start byte at byte 0)`. Every
reader of a text file decodes through :func:`evalkit.textfiles.utf8_text`, which says which
encoding the file is in and what to do.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SET = "identifier: demo.enc\nname: E\nprompts:\n  - id: a\n    prompt: p\n    reference: p\n    assertions: [{contains: p}]\n"


@pytest.mark.parametrize(("encoding", "name"), [("utf-16", "UTF-16"), ("utf-16-be", None), ("utf-32", "UTF-32")])
def test_a_set_file_in_utf16_or_utf32_is_named_by_its_encoding(evalkit_cli, project: Path, encoding: str, name: str | None) -> None:
    (project / "evals").mkdir()
    data = SET.encode(encoding)
    if name is None:  # UTF-16 big-endian with its mark, as some editors save it
        data, name = b"\xfe\xff" + data, "UTF-16"
    (project / "evals" / "enc.yaml").write_bytes(data)
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 2
    assert f"evals/enc.yaml: is not UTF-8 text (it is {name} (save it as UTF-8): its byte-order mark at byte 0)" in checked.stderr.splitlines()


def test_a_configuration_in_utf16_is_named_by_its_encoding(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_bytes('[sets]\npaths = ["evals/*.yaml"]\n'.encode("utf-16"))
    checked = evalkit_cli("validate")
    assert checked.code == 2
    assert "evalkit.toml is not UTF-8 text (it is UTF-16 (save it as UTF-8): its byte-order mark at byte 0)" in checked.stderr


def test_utf8_text_skips_utf8s_mark_and_names_other_failures_as_decode_does() -> None:
    from evalkit.textfiles import utf8_text

    assert utf8_text(b"\xef\xbb\xbfa") == "a"
    with pytest.raises(UnicodeDecodeError) as caught:
        utf8_text(b"ab\xff")
    assert (caught.value.reason, caught.value.start) == ("invalid start byte", 2)
