"""evalkit's environment variables (``EVALKIT_*``): the one reader, and its one rule for a variable
that is set but empty.

A variable that is not set is no setting: what it would name is found another way (the project's
own store, a discovered configuration, the default concurrency). A variable that is set but empty,
or blank, is refused with an error naming it — never read as "not set": an empty value is what CI
makes of a secret or variable a job cannot read (a fork's pull request), and read as unset it
quietly switched to another store, configuration or deployment, so no gate ever fired. Every
``EVALKIT_*`` variable follows that rule, as ``EVALKIT_CONFIG``, ``EVALKIT_DATABASE_URL`` and
``EVALKIT_DEPLOYMENT`` already did; ``EVALKIT_CONCURRENCY=`` and ``EVALKIT_BUSY_TIMEOUT=`` were
read as unset (docs/configuration.md, "Environment variables").
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .errors import UsageError

__all__ = ["variable"]


def variable(
    name: str,
    means: str,
    unset_means: str,
    *,
    environ: Mapping[str, str] | None = None,
    error: type[Exception] = UsageError,
) -> str | None:
    """The value of the environment variable ``name`` (from ``environ``, default ``os.environ``),
    as it is; ``None`` when it is not set. Set but empty or blank, it is refused:
    ``error`` (default :class:`~evalkit.errors.UsageError`, exit 2) saying it is set but empty,
    what to set it to (``means``) and what unsetting it does (``unset_means``)."""
    value = (os.environ if environ is None else environ).get(name)
    if value is None:
        return None
    if not value.strip():
        raise error(
            f"{name} is set but empty (in CI: a secret or variable this job cannot read, e.g. on a fork's pull "
            f"request?); set it to {means}, or unset it to {unset_means}"
        )
    return value
