"""evalkit's environment variables, one rule: set but empty is refused, naming the variable
(:mod:`evalkit.environment`)."""

from __future__ import annotations

import pytest
from evalkit.environment import variable
from evalkit.errors import ConfigError, UsageError


@pytest.mark.parametrize(
    "name",
    [
        "EVALKIT_CONCURRENCY",
        "EVALKIT_BUSY_TIMEOUT",
        "EVALKIT_DISABLE_PLUGINS",
        "EVALKIT_CONFIG",
        "EVALKIT_DATABASE_URL",
    ],
)
@pytest.mark.parametrize("value", ["", "  "])
def test_every_evalkit_variable_set_but_empty_is_refused_naming_it(cli, project, name, value) -> None:
    """``EVALKIT_CONCURRENCY=`` and ``EVALKIT_BUSY_TIMEOUT=`` were read as unset while
    ``EVALKIT_CONFIG=`` and ``EVALKIT_DATABASE_URL=`` were refused: an empty value is what CI
    makes of a variable a job cannot read, and every variable now says so."""
    result = cli("run", "evalkit.smoke", env={name: value})
    assert result.code == 2, (name, result.stdout, result.stderr)
    assert f"{name} is set but empty" in result.stderr and "or unset it to " in result.stderr, result.stderr
    assert not (project / ".evalkit").exists(), "refused before anything was stored"


def test_the_one_reader() -> None:
    assert variable("EVALKIT_X", "a thing", "do without", environ={}) is None
    assert variable("EVALKIT_X", "a thing", "do without", environ={"EVALKIT_X": " 8 "}) == " 8 "
    with pytest.raises(
        UsageError, match=r"^EVALKIT_X is set but empty .*; set it to a thing, or unset it to do without$"
    ):
        variable("EVALKIT_X", "a thing", "do without", environ={"EVALKIT_X": "\t"})
    with pytest.raises(ConfigError):
        variable("EVALKIT_X", "a thing", "do without", environ={"EVALKIT_X": ""}, error=ConfigError)


def test_a_disabled_plugin_name_no_installed_plugin_has_is_warned_about_once_with_a_suggestion(
    cli, monkeypatch
) -> None:
    """``EVALKIT_DISABLE_PLUGINS=evalkit.smok`` switched nothing off, silently: the run went ahead
    with the plugin the user meant to switch off. Now a warning (never an error: a deployment may
    list a plugin not installed on every machine), once per process, with the close names."""
    from evalkit import registry

    monkeypatch.setattr(registry, "_looked_up", set())
    result = cli(
        "list", "sets", env={"EVALKIT_DISABLE_PLUGINS": "evalkit.smok, nonexistent.plugin ,acme-nowhere:openai"}
    )
    assert result.code == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "EVALKIT_DISABLE_PLUGINS names" in line]
    assert len(warned) == 3, result.stderr  # once each, however often the command reads the variable
    assert all(line.startswith("evalkit: warning: EVALKIT_DISABLE_PLUGINS names ") for line in warned), warned
    assert (
        'names "evalkit.smok", which no installed plugin is, so it switches nothing off. Did you mean "evalkit.smoke"?'
        in warned[1]
    )
    assert 'names "nonexistent.plugin"' in warned[2] and "Did you mean" not in warned[2]
    assert "not installed on every machine" in warned[0] and 'names "acme-nowhere:openai"' in warned[0]
    assert "evalkit.smoke" in result.stdout
    again = cli("list", "sets", env={"EVALKIT_DISABLE_PLUGINS": "evalkit.smok"})
    assert "EVALKIT_DISABLE_PLUGINS names" not in again.stderr, "once per process"
    quiet = cli("list", "sets", env={"EVALKIT_DISABLE_PLUGINS": "evalkit.smoke"})
    assert quiet.code == 0 and "warning" not in quiet.stderr


def test_a_disabled_plugin_name_no_installed_plugin_has_is_a_warning_to_a_library_caller_not_stderr(
    monkeypatch, capfd
) -> None:
    """A library caller met the warning printed straight to its stderr, past its warning filters
    (it could neither silence it, record it nor make it an error). It is now an ``EvalkitWarning``
    (``warnings.warn``), and nothing is printed; the CLI says it (the test above)."""
    import warnings

    from evalkit import registry
    from evalkit.errors import EvalkitWarning

    monkeypatch.setattr(registry, "_looked_up", set())
    monkeypatch.setenv("EVALKIT_DISABLE_PLUGINS", "evalkit.smok")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.disabled() == frozenset({"evalkit.smok"})
    assert [w.category for w in caught] == [EvalkitWarning]
    assert str(caught[0].message).startswith('EVALKIT_DISABLE_PLUGINS names "evalkit.smok", which no installed plugin')
    assert 'Did you mean "evalkit.smoke"?' in str(caught[0].message)
    out, err = capfd.readouterr()
    assert out == err == "", "a library prints no warning"
    monkeypatch.setattr(registry, "_looked_up", set())
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalkitWarning)  # a caller's filter decides
        with pytest.raises(EvalkitWarning):
            registry.disabled()
