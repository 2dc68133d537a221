"""evalkit's environment variables, one rule: set but empty is refused, naming the variable
(:mod:`evalkit.environment`)."""

from __future__ import annotations

import pytest
from evalkit.environment import variable
from evalkit.errors import ConfigError, UsageError


@pytest.mark.parametrize(
    "name", ["EVALKIT_CONCURRENCY", "EVALKIT_BUSY_TIMEOUT", "EVALKIT_DISABLE_PLUGINS", "EVALKIT_CONFIG", "EVALKIT_DATABASE_URL"]
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
    with pytest.raises(UsageError, match=r"^EVALKIT_X is set but empty .*; set it to a thing, or unset it to do without$"):
        variable("EVALKIT_X", "a thing", "do without", environ={"EVALKIT_X": "\t"})
    with pytest.raises(ConfigError):
        variable("EVALKIT_X", "a thing", "do without", environ={"EVALKIT_X": ""}, error=ConfigError)

