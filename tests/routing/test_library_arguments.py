"""``ModelSelection`` called as a library user calls it, with arguments of the wrong kind: each is
a ``UsageError`` naming the argument, never a raw error from inside nor a ranking that silently
read no quality."""

from __future__ import annotations

import pytest
from evalkit.config import Config, ProviderInstance
from evalkit.errors import UsageError
from evalkit.routing import ModelSelection, SelectionCriteria


def _config() -> Config:
    return Config(providers={"prod": ProviderInstance("prod", "reference", {"model": "m"})})


@pytest.mark.parametrize("repository", ["sqlite:///results.db", b"sqlite:///results.db"])
def test_a_store_url_where_the_store_goes_is_refused_not_read_as_a_store_without_quality(repository: object) -> None:
    """A URL passed as the repository was kept: it has none of the quality reads, so under
    ``quality`` every instance read as unmeasured and the ranking was the configuration's order."""
    with pytest.raises(UsageError, match=r"^ModelSelection: repository must be an open results store .*: got (str|bytes) "):
        ModelSelection(_config(), repository, policy="quality")


@pytest.mark.parametrize("candidates", [None, 5, "prod", [object()]])
def test_candidates_of_the_wrong_kind_are_refused_by_name(candidates: object) -> None:
    with pytest.raises(UsageError, match=r"^ModelSelection: (candidates|a routing candidate) must be "):
        ModelSelection(candidates)


@pytest.mark.parametrize("call", ["rank", "select_by_quality", "find_candidates"])
def test_criteria_that_are_not_selection_criteria_are_refused_by_name(call: str) -> None:
    """``rank(["chat"])`` was "AttributeError: 'list' object has no attribute 'missing'"."""
    selection = ModelSelection(_config())
    with pytest.raises(UsageError, match=r"^criteria must be an evalkit.routing.SelectionCriteria .*, got list \['chat'\]"):
        getattr(selection, call)(["chat"])
    assert [c.name for c in selection.find_candidates(SelectionCriteria(["chat"]))] == ["prod"]
