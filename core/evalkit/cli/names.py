"""Parameter types for the names a user picks from what is installed, configured or stored: set
identifiers, provider instances, graders, retrievers, deployments and run ids.

Each gives the shell its candidates when the user presses Tab (click's ``shell_complete``), and a
missing SET or RUN_ID a pointer to where the names are (``get_missing_message``). A name is checked
where the library resolves it — the set when the catalog is loaded, the provider when the run is
planned, and for a command that reads the store where it opens the store
(:mod:`evalkit.cli.known_names`) — with a "did you mean" from the same helper click's suggestions
use (:func:`evalkit.wording.close_matches`); parsing the command line loads no plugin.

Completion runs plugin code only where the names come from plugins (set identifiers), reads the
configuration only where the names are configured, and never prints: each list is made with a
plugin's output sent to standard error (which the completion request discards), within
:data:`LISTED_WITHIN_S` seconds, and any failure offers nothing.
"""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from click.shell_completion import CompletionItem

__all__ = ["DeploymentName", "PluginName", "ProviderName", "RunId", "SetIdentifier", "TypedName", "installed_sets_hint", "refuse_blank", "safe_names"]

#: How long finding the names to complete, or the sets a missing SET lists, may take (seconds).
LISTED_WITHIN_S = 5.0
#: The most set identifiers a missing SET lists.
SETS_SHOWN = 8
#: The most run ids offered (the newest first).
RUN_IDS_OFFERED = 50


class _ListingTooSlow(BaseException):
    """A listing's own limit passed (its own class: a provider's ``set_load_timeout`` guard,
    nested inside, must not take it for its own)."""


def refuse_blank(ctx: click.Context | None, param: click.Parameter, value: str | None, what: str) -> None:
    """A usage error naming ``param`` when ``value`` is empty or only spaces, asking for ``what``
    instead (the callbacks of :func:`evalkit.cli.params.non_empty`, and the typed names here)."""
    if value is not None and not value.strip():
        if isinstance(param, click.Option):
            raise click.UsageError(f"{'/'.join(param.opts)} is empty; give {what}, or leave the option out", ctx)
        name = param.human_readable_name.strip("[]").removesuffix("...")  # the metavar: [DIR] → DIR
        raise click.UsageError(f"{name} is empty; give {what}" + ("" if param.required else ", or leave it out"), ctx)


class TypedName(click.ParamType):
    """A configured name the user types (``--provider``, ``--judge``, ``--deployment``), read in
    Unicode normal form NFC, as every configured name is (:func:`evalkit.printable.not_nfc`): a
    name typed as ``e`` and a combining accent names what it prints as. An empty one is refused
    (``--provider "$PROVIDER"`` with the variable unset): no name is empty."""

    #: What an empty value is asked to be instead.
    wanted = "a name"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """``value`` in NFC; a usage error when it is empty or only spaces."""
        import unicodedata

        if not isinstance(value, str):
            return value
        if param is not None:
            refuse_blank(ctx, param, value, self.wanted)
        return unicodedata.normalize("NFC", value)


def _bounded(listing: Callable[[], list[str]]) -> list[str]:
    """``listing()`` with what plugins print sent to standard error, within :data:`LISTED_WITHIN_S`
    (where alarms reach: the main thread); raises whatever it raised, or :class:`_ListingTooSlow`."""
    from ..timeouts import alarm_bounded, alarms_reach_this_thread
    from .stdout import plugin_output_to_stderr

    def quietly() -> list[str]:
        with plugin_output_to_stderr():  # a provider that prints must not write to standard output
            return listing()

    return alarm_bounded(quietly, (), LISTED_WITHIN_S, _ListingTooSlow) if alarms_reach_this_thread() else quietly()


def safe_names(names: Sequence[object]) -> list[str]:
    """The names a shell may be given as candidates: made of letters, digits and ``_ . : @ + / ,
    % -``, not starting with ``-``. A candidate reaches bash unquoted (click's script adds it with
    ``COMPREPLY+=($value)``, which expands a ``*`` into file names; the scripts before it used
    ``compgen -W``, which ran a provider named ``$(touch /tmp/x)`` in a cloned project's
    evalkit.toml). A name with other characters can still be typed."""
    import re

    safe = re.compile(r"[\w.:@+/,%-]+")
    return [name for name in names if isinstance(name, str) and safe.fullmatch(name) and not name.startswith("-")]


def _offered(ctx: click.Context, incomplete: str, listing: Callable[[], list[str]]) -> list[CompletionItem]:
    """The names ``listing`` finds that start with ``incomplete``; none when it fails or stalls."""
    from click.shell_completion import CompletionItem

    try:
        names = _bounded(listing)
    except (Exception, _ListingTooSlow):  # noqa: BLE001 - completion stays quiet: nothing offered
        return []
    return [CompletionItem(name) for name in dict.fromkeys(safe_names(names)) if name.startswith(incomplete)]


def given_config(ctx: click.Context) -> str | None:
    """The ``--config`` given on the command line so far (after the command, else before it)."""
    return next((str(c.params["config"]) for c in _lineage(ctx) if c.params.get("config")), None)


def _configuration(ctx: click.Context) -> Any:
    from ..config import load_config

    return load_config(given_config(ctx))


def _set_identifiers(kinds: Sequence[str], config: Any) -> list[str]:
    from ..catalog import prompt_set_catalog, question_set_catalog

    found: list[str] = []
    for kind in kinds:
        found += (prompt_set_catalog if kind == "prompt" else question_set_catalog)(config=config).identifiers()
    return found


def installed_sets_hint(kinds: Sequence[str], config_path: str | None = None) -> str:
    """The sets a command could name (``kinds``: prompt, question), as a line for its error; a
    pointer to `evalkit list sets` when they cannot be listed promptly (a provider that fails or
    stalls, a configuration with a mistake)."""
    from ..config import load_config
    from ..printable import visible

    pointer = "`evalkit list sets` lists the installed sets"
    try:
        found = _bounded(lambda: _set_identifiers(kinds, load_config(config_path)))
    except (Exception, _ListingTooSlow):  # noqa: BLE001 - only a hint: the error itself stands
        return f"\n{pointer}"
    if not found:
        return f"\nno set is installed here; {pointer} and the plugins that ship them"
    shown = ", ".join(visible(name) for name in found[:SETS_SHOWN])
    more = f" and {len(found) - SETS_SHOWN} more" if len(found) > SETS_SHOWN else ""
    return f"\nsets here: {shown}{more} ({pointer})"


class SetIdentifier(TypedName):
    """A golden set identifier (``kinds``: the kinds of set the command takes, prompt and/or question)."""

    name = "set"
    wanted = "a set identifier"

    def __init__(self, *kinds: str) -> None:
        self.kinds = kinds

    def get_missing_message(self, param: click.Parameter, ctx: click.Context | None) -> str | None:
        """The sets installed here (or where to find them)."""
        return installed_sets_hint(self.kinds, given_config(ctx) if ctx is not None else None)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """The installed sets' identifiers (their providers are loaded to list them)."""
        return _offered(ctx, incomplete, lambda: _set_identifiers(self.kinds, _configuration(ctx)))


class ProviderName(TypedName):
    """A configured provider instance, or a generator adapter (an ad-hoc run)."""

    name = "provider"
    wanted = "a provider name"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """The configured instances first, then the installed adapters (from metadata: nothing imported)."""
        from .. import registry

        def listing() -> list[str]:
            adapters = sorted({record.name for record in registry.records("evalkit.generators")})
            return [*_configuration(ctx).providers, *adapters]

        return _offered(ctx, incomplete, listing)


class PluginName(click.ParamType):
    """The name of an installed plugin of one entry-point ``group`` (a grader, a retriever)."""

    name = "plugin"

    def __init__(self, group: str) -> None:
        self.group = group

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """The group's plugin names, from installed metadata (no plugin imported)."""
        from .. import registry

        return _offered(ctx, incomplete, lambda: sorted({record.name for record in registry.records(self.group)}))


class DeploymentName(TypedName):
    """A retrieval deployment (``[deployments.NAME]``)."""

    name = "deployment"
    wanted = "a deployment name"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """The configured deployments (a set provider's own are not listed: that would load it)."""
        return _offered(ctx, incomplete, lambda: sorted(_configuration(ctx).deployments))


class RunId(click.ParamType):
    """The id of a stored run."""

    name = "run_id"

    def get_missing_message(self, param: click.Parameter, ctx: click.Context | None) -> str | None:
        """Where run ids are listed."""
        return "\nrun ids: `evalkit history SET` lists a set's stored runs"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """The newest stored runs' ids, from the store the command line names (never created)."""

        def listing() -> list[str]:
            from ..storage import capabilities, close_repository, missing_store, open_repository, resolve_database_url

            database = next((c.params["database"] for c in _lineage(ctx) if c.params.get("database")), None)
            url = resolve_database_url(database, _configuration(ctx))
            if missing_store(url) is not None:
                return []
            repository = open_repository(url)
            try:
                history = capabilities(repository).history
                return [run.id for run in history.recent_runs(limit=RUN_IDS_OFFERED)] if history is not None else []
            finally:
                close_repository(repository)

        return _offered(ctx, incomplete, listing)


def _lineage(ctx: click.Context | None) -> list[click.Context]:
    """``ctx`` and its parents, the command's own first."""
    found = []
    while ctx is not None:
        found.append(ctx)
        ctx = ctx.parent
    return found
