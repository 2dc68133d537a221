"""An observer hook that raises for the case ``$EVALKIT_RAISE_FOR`` names, with ``$EVALKIT_RAISE_IN=hook``."""

from evalkit import hookimpl

from evalkit_raising_plugins import raise_for, raise_in


@hookimpl
def evalkit_case_graded(case):  # noqa: ANN001, ANN201 - a plugin need not import evalkit's types
    """Raise for one case."""
    raise_in("hook", lambda: raise_for(case.case_id))
