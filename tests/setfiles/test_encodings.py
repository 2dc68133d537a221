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


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        (
            "lone.json",
            '{"identifier": "demo.lone", "name": "L",\n "prompts": [{"id": "a", "prompt": "caf\\ud800",'
            ' "system_prompt": "s", "assertions": [{"contains": "p"}]}]}\n',
            "evals/lone.json:2:36: prompt 'a': prompt: 'caf\\ud800' holds a lone surrogate (U+D800, character 4)",
        ),
        (
            "lone.jsonl",
            '{"identifier": "demo.lone", "name": "L"}\n{"id": "a", "prompt": "p", "system_prompt": "\\uDC00",'
            ' "assertions": [{"contains": "p"}]}\n',
            "evals/lone.jsonl:2:45: prompt 'a': system_prompt: '\\udc00' holds a lone surrogate (U+DC00, character 1)",
        ),
    ],
)
def test_a_prompt_with_a_json_escape_of_a_lone_surrogate_is_refused_before_a_run_not_errored_at_the_endpoint(
    evalkit_cli, project: Path, name: str, text: str, where: str
) -> None:
    # "\ud800" without its pair is valid JSON but no Unicode text: the file passed `evalkit validate`,
    # and every case holding it errored at the endpoint ("surrogates not allowed"), exit 3. An id or
    # a name holding one is accepted, shown escaped, as one holding a control character is
    (project / "evals").mkdir()
    (project / "evals" / name).write_text(text, encoding="utf-8")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.json", "evals/*.jsonl"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 2 and where in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    ran = evalkit_cli("run", "demo.lone")
    assert ran.code == 2 and where[len("evals/") :] in ran.stderr and "Traceback" not in ran.stderr, ran.stderr
    assert not (project / ".evalkit" / "results.db").exists()


def test_a_template_holding_a_lone_surrogate_is_said_once_at_its_line(evalkit_cli, project: Path) -> None:
    # the kernel's net placed it at the set's line 1:1 and said it once for every row of the table
    # (prompt "a/1", prompt "a/2"); the file's own check says it once, where it is written
    (project / "evals").mkdir()
    (project / "evals" / "lone.json").write_text(
        '{"identifier": "demo.lone", "name": "L",\n "prompts": [\n  {"id": "a", "template": "caf\\ud800 {x}",'
        ' "vars": [{"x": 1}, {"x": 2}],\n   "assertions": [{"contains": "p"}]},\n'
        '  {"id": "b", "template": "{y}", "vars": [{"y": "ok"}, {"y": "\\udc00"}], "assertions": [{"contains": "p"}]}]}\n',
        encoding="utf-8",
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.json"]\n')
    checked = evalkit_cli("validate")
    said = checked.stdout + checked.stderr
    assert checked.code == 2, said
    assert "evals/lone.json:3:27: prompt 'a': template: 'caf\\ud800 {x}' holds a lone surrogate (U+D800, character 4)" in said
    assert "evals/lone.json:5:62: prompt 'b': vars[1].y: '\\udc00' holds a lone surrogate (U+DC00, character 1)" in said
    assert said.count("holds a lone surrogate") == 2 and ":1:1:" not in said, said


def test_a_surrogate_pair_written_as_two_json_escapes_is_one_character_and_accepted(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "pair.json").write_text(
        '{"identifier": "demo.pair", "name": "\\ud83d\\ude00", "prompts": [{"id": "a", "prompt": "p \\ud83d\\ude00",'
        ' "reference": "p", "assertions": [{"contains": "p"}]}]}\n',
        encoding="utf-8",
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.json"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stdout + checked.stderr
