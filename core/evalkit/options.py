"""Plugin options: declared once, as an attrs class; checked, structured and handed to the plugin.

A plugin factory (a generator, retriever, grader, repository, hook, or golden/question set
provider) declares its options by pointing ``Options`` at an attrs class. That class is the single
declaration of every option: the field's annotation is its type, a field without a default is
required, its validators say which values are allowed, and :func:`option` gives it one line of
help (``evalkit list plugins --options`` and the option tables of the docs show it), marks a file
or folder (``path=True``) and a value never to be shown (``secret=True``). The factory receives
the structured object::

    @attrs.frozen
    class ReplayOptions:
        path: str = option("JSONL file of recorded answers", path=True)
        model: str | None = option("alias reported when a line names no model", default=None)

    class ReplayGenerator:
        Options = ReplayOptions

        def __init__(self, options: ReplayOptions) -> None: ...

Before the factory is called, evalkit checks the configuration table against the class — unknown
options are refused with a "did you mean", missing required ones name the plugin, the option and
the table to put it in, values are structured with the project's cattrs converter (strict: a
string is not a number, a number is not a string) and the fields' validators run — and every
problem is reported at once, naming the plugin, the option and the table. Path options are made
absolute against the configuration file's folder and must lie inside the project
(:func:`resolve_paths`).

How the factory is called is decided here, in :func:`receives_options`, for every kind of plugin:

* it declares ``Options`` and takes one parameter, annotated with that class (or named
  ``options``): it is called with the structured object — the contract to write;
* it declares ``Options`` and takes anything else: it is called with the options that were given
  as keyword arguments of the declared types — the earlier contract, deprecated and still honoured;
* it declares nothing: it gets the table as it is.

Golden and question set providers read their options from ``[set_providers."ENTRY-POINT-NAME"]``
unless the provider names another table with ``config_table`` (a dotted path such as ``"sets"``).
A ``config_table`` ending in ``.*`` (``"question_sets.*"``) means "each sub-table is one instance":
every sub-table is checked against ``Options`` and the provider is called with
``instances={name: Options(...)}``.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from . import wording
from .errors import ConfigError, UsageError

if TYPE_CHECKING:
    from .project_files import ProjectBoundary

__all__ = [
    "resolve_paths",
    "DeclaresOptions",
    "MAX_WHOLE",
    "OptionError",
    "OptionsError",
    "OptionSpec",
    "SET_PROVIDER_TABLE",
    "TableOptions",
    "build_plugin",
    "check_options",
    "declaration_problem",
    "declared_options",
    "number",
    "one_of",
    "option",
    "option_specs",
    "path_options",
    "paths_anywhere",
    "provider_table",
    "receives_options",
    "requirement",
    "structure_options",
    "text",
    "whole",
]

#: Where a set provider's options live unless it says otherwise (``config_table``).
SET_PROVIDER_TABLE = "set_providers"
#: Option names that are never options: a secret belongs in an environment variable.
_SECRET_NAMES = frozenset({"api_key", "apikey", "key", "token", "api_token", "password", "secret"})


@runtime_checkable
class DeclaresOptions(Protocol):
    """A plugin factory whose options are the fields of an attrs class."""

    Options: type


@runtime_checkable
class TableOptions(Protocol):
    """A set provider that reads its options from a table other than ``[set_providers."NAME"]``."""

    config_table: str


class OptionsError(ConfigError, UsageError):
    """A plugin's options are missing, unknown or wrong (exit 2): every problem, each naming the
    plugin, the option and the table.

    A configuration error, and a usage error for options given on the command line (grader options).
    """


class OptionError(OptionsError):
    """One option has a value it cannot take: raised by the validators of this module with the
    option, what it must be and the value (unless the option is secret); ``str()`` names all three.
    """

    def __init__(self, option: str, requirement: str, value: Any = attrs.NOTHING) -> None:
        self.option = option
        #: What the value must be, as a sentence part: ``must be a whole number of at least 1``.
        self.requirement = requirement
        self.value = value
        super().__init__(f"wrong value for option {wording.quoted(option)}: {self.reason()}")

    def reason(self) -> str:
        """``timeout must be a number above 0 (got -1)`` (without the value when it is not shown)."""
        from .shapes import written_value

        got = "" if self.value is attrs.NOTHING else f" (got {written_value(self.value)})"
        return f"{self.option} {self.requirement}{got}"


def option(help: str, *, path: bool = False, anywhere: bool = False, secret: bool = False, **kwargs: Any) -> Any:  # noqa: A002 - the word the docs use
    """An attrs field with one line of ``help`` (shown by ``evalkit list plugins --options`` and the
    docs' option tables).

    ``path=True`` marks a file or folder: a relative one in a configuration is made absolute against
    the configuration file's folder, and it must lie inside the project (or a place ``[sets]
    allow_outside`` lists) — unless ``anywhere=True`` also says it is a file evalkit only trusts or
    uses and never quotes, stores or sends (a CA bundle in ``/etc/ssl``). ``secret=True`` keeps the value out of every message (header values,
    URLs that may carry credentials). Other keyword arguments (``default``, ``validator``,
    ``factory``, ``converter``) are ``attrs.field``'s.
    """
    metadata = {**kwargs.pop("metadata", {}), "help": help}
    if path:
        metadata["path"] = True
        if anywhere:
            metadata["anywhere"] = True
    if secret:
        metadata["secret"] = True
    return attrs.field(metadata=metadata, **kwargs)


# -- validators ------------------------------------------------------------------------------------
#
# attrs validators (``validator=`` of a field) whose failure is an OptionError naming the option and
# the allowed values. attrs' own (``attrs.validators.in_``, ``ge``, ``optional``) work as well.


def _shown(attribute: attrs.Attribute, value: Any) -> Any:  # type: ignore[type-arg]
    return attrs.NOTHING if attribute.metadata.get("secret") else value


#: The largest whole number an option takes, whatever its declaration says: 2**63 - 1, what a
#: store keeps. TOML reads ``1`` followed by 400 zeros as an int, and a plugin that divides by it
#: or waits for it (``float()`` of it) raised OverflowError, in the middle of a run.
MAX_WHOLE = 2**63 - 1


def _shown_bound(bound: float) -> str:
    """A bound as a message says it: ``1,000,000`` for a whole number of five digits or more
    (``:g`` wrote ``1e+06``), ``0.5`` or ``1024`` otherwise."""
    return f"{bound:,}" if isinstance(bound, int) and abs(bound) >= 10_000 else f"{bound:g}"


def _bounds(at_least: float | None, above: float | None, at_most: float | None) -> str:
    if at_least is not None and at_most is not None:
        return f" from {_shown_bound(at_least)} to {_shown_bound(at_most)}"
    low = f" of at least {_shown_bound(at_least)}" if at_least is not None else f" above {_shown_bound(above)}" if above is not None else ""
    high = f" at most {_shown_bound(at_most)}" if at_most is not None else ""
    return low + (" and" if low and high else "") + high


def number(*, at_least: float | None = None, above: float | None = None, at_most: float | None = None) -> Callable[..., None]:
    """A validator: a finite number (not a boolean) within the bounds given; an int a float cannot
    hold is refused as such."""
    requirement = f"must be a{' finite' if at_least is None and above is None and at_most is None else ''} number{_bounds(at_least, above, at_most)}"

    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:  # type: ignore[type-arg]
        from .shapes import finite_number

        if isinstance(value, int) and not isinstance(value, bool) and not finite_number(value):  # 10**400: math.isfinite raised
            raise OptionError(attribute.name, f"{requirement} that a float holds (up to about 1.8e308)", _shown(attribute, value))
        fits = finite_number(value)
        fits = fits and (at_least is None or value >= at_least) and (above is None or value > above)
        if not (fits and (at_most is None or value <= at_most)):
            raise OptionError(attribute.name, requirement, _shown(attribute, value))

    check.requirement = requirement  # type: ignore[attr-defined]
    return check


def whole(*, at_least: int | None = None, at_most: int | None = None) -> Callable[..., None]:
    """A validator: a whole number (not a boolean) within the bounds given, and never past
    :data:`MAX_WHOLE`."""
    requirement = f"must be a whole number{_bounds(at_least, None, at_most)}"

    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:  # type: ignore[type-arg]
        fits = isinstance(value, int) and not isinstance(value, bool)
        if not (fits and (at_least is None or value >= at_least) and (at_most is None or value <= at_most)):
            raise OptionError(attribute.name, requirement, _shown(attribute, value))
        if value > MAX_WHOLE:
            raise OptionError(attribute.name, f"{requirement}, at most 2**63 - 1 ({MAX_WHOLE:,})", _shown(attribute, value))

    check.requirement = requirement  # type: ignore[attr-defined]
    return check


def text(*, empty: bool = False) -> Callable[..., None]:
    """A validator: a string, non-empty unless ``empty``."""
    requirement = "must be a string" if empty else "must be a non-empty string"

    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:  # type: ignore[type-arg]
        if not isinstance(value, str) or not (empty or value):
            raise OptionError(attribute.name, requirement, _shown(attribute, value))

    check.requirement = requirement  # type: ignore[attr-defined]
    return check


def one_of(*choices: str) -> Callable[..., None]:
    """A validator: one of ``choices``."""
    quoted = [wording.quoted(choice) for choice in choices]
    requirement = "must be " + (", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0])

    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:  # type: ignore[type-arg]
        if not isinstance(value, str) or value not in choices:
            raise OptionError(attribute.name, requirement, _shown(attribute, value))

    check.requirement = requirement  # type: ignore[attr-defined]
    return check


# -- what a factory declares -------------------------------------------------------------------------


@attrs.frozen
class OptionSpec:
    """One declared option, as ``evalkit list plugins --options`` shows it."""

    name: str
    type: str
    required: bool
    default: Any
    help: str
    #: What its validator allows, as a refusal says it (``must be a number above 0``, ``must be
    #: "low" or "high"``, :func:`requirement`); ``None``: it does not say.
    allowed: str | None = None


def declared_options(factory: Any) -> type | None:
    """The attrs class ``factory`` declares its options with, or ``None``."""
    cls = getattr(factory, "Options", None)  # what isinstance(factory, DeclaresOptions) asks, for less
    if not (isinstance(cls, type) and attrs.has(cls)):
        return None
    return cls


def declaration_problem(factory: Any) -> str | None:
    """What is wrong with the options ``factory`` declares, as a sentence part after its name, or
    ``None``: an ``Options`` that is not an attrs class (it was passed over as "declares no
    options", and the factory then failed when called without its object), or a field whose own
    default its validator refuses (it was reported as if the user's table were wrong). A defect of
    the plugin, found before it is built and whatever the configuration says."""
    from .plugin_attributes import declared

    cls = declared(factory, "Options")
    if cls is None:
        return None
    if not (isinstance(cls, type) and attrs.has(cls)):
        from .shapes import short_repr

        shown = getattr(cls, "__name__", None) if isinstance(cls, type) else None
        return (
            f"declares Options = {shown if isinstance(shown, str) else short_repr(cls)}, which is not an attrs class: "
            "decorate the class with @attrs.frozen (or @attrs.define), or remove Options to receive the table as it is"
        )
    wrong_type = _default_of_another_type(cls)
    if wrong_type is not None:
        return wrong_type
    for field, default in _plain_defaults(cls):
        if field.validator is None:
            continue
        try:
            field.validator(None, field, default)
        except OptionError as exc:
            reason = OptionError(exc.option, exc.requirement, _shown(field, default)).reason()
        except (ValueError, TypeError) as exc:  # attrs' own validators; one reading other fields is not judged here
            from .shapes import exception_message

            reason = exception_message(exc)
        else:
            continue
        return f'declares a default for option "{field.name}" that its own validator refuses: {reason}'
    return None


def _plain_defaults(cls: type) -> Iterator[tuple[Any, Any]]:
    """Each field of the attrs class ``cls`` that has a plain default (not ``attrs.Factory``), with it."""
    for field in attrs.fields(cls):
        if field.default is not attrs.NOTHING and not isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            yield field, field.default


def _default_of_another_type(cls: type) -> str | None:
    """The first field of ``cls`` whose own default the options' converter refuses for its declared
    type (``folder: str = option(default=5)``), as :func:`declaration_problem` says it, or ``None``.
    What the converter accepts passes (a whole number for a float, a ``Path`` for a path option, a
    ``None`` for an ``Optional``); a class whose annotations cannot be resolved is not judged here."""
    import cattrs

    from .convert import options_converter

    try:
        attrs.resolve_types(cls)
    except Exception:  # a forward reference that names nothing: structuring fails later, naming the option
        return None
    for field, default in _plain_defaults(cls):
        if field.type is None:
            continue
        try:
            options_converter.structure(_fspath(field, default), field.type)
        except Exception as exc:
            lines = cattrs.transform_error(exc, path=f"$.{field.name}", format_exception=_structure_failure)
            reason = (lines[0].rpartition(" @ ")[0] or lines[0]) if lines else "of another type"
            return (
                f'declares a default for option "{field.name}" that is not of its declared type '
                f"{_type_text(field.type)}: {reason} (got {_short(default)})"
            )
    return None


def _type_text(annotation: Any) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def option_specs(factory: Any) -> list[OptionSpec] | None:
    """The options ``factory`` declares (``None`` when it declares nothing)."""
    cls = declared_options(factory)
    if cls is None:
        return None
    specs = []
    for field in attrs.fields(cls):
        required = field.default is attrs.NOTHING
        default = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            default = default.factory() if not default.takes_self else None
        specs.append(
            OptionSpec(
                field.name, _type_text(field.type), required, None if required else default, field.metadata.get("help", ""),
                requirement(field.validator),
            )
        )
    return specs


def requirement(validator: Any) -> str | None:
    """What a field's validator allows, as its message says it (``must be a number above 0``), when
    it says: the validators of this module do, also inside ``attrs.validators.optional``; attrs' own
    ``in_`` (``must be "low" or "high"``), ``ge``/``gt``/``le``/``lt`` (``must be at least 1``) and
    a list of validators (``and_``: ``must be at least 1 and at most 10``) are said the same way.
    A plugin's values are quoted (:func:`evalkit.wording.quoted`, :func:`evalkit.shapes.short_repr`);
    what cannot be read says nothing."""
    try:
        return _requirement(validator, depth=0)
    except Exception:  # noqa: BLE001 - a plugin's validator broken in itself: nothing said of it
        return None


#: The values of an ``attrs.validators.in_`` shown, the rest counted.
_CHOICES_SHOWN = 12
_COMPARED = {">=": "at least", ">": "above", "<=": "at most", "<": "below"}


def _requirement(validator: Any, depth: int) -> str | None:
    from .shapes import short_repr

    said = getattr(validator, "requirement", None)
    if isinstance(said, str):
        return said
    if depth > 8:  # an optional(and_(optional(...))) nested without end says nothing more
        return None
    kind = type(validator).__name__
    if kind == "_InValidator" and type(validator).__module__.startswith("attr"):
        return "must be " + _choices(validator.options)
    if kind == "_NumberValidator" and type(validator).__module__.startswith("attr") and validator.compare_op in _COMPARED:
        bound = validator.bound
        shown = _shown_bound(bound) if isinstance(bound, (int, float)) and not isinstance(bound, bool) else short_repr(bound)
        return f"must be {_COMPARED[validator.compare_op]} {shown}"
    inner = getattr(validator, "_validators", None)  # attrs.validators.and_(...), a field's list of validators
    if kind == "_AndValidator" and isinstance(inner, (tuple, list)):
        parts = [said for v in inner if (said := _requirement(v, depth + 1)) is not None]
        lead = "must be " if all(p.startswith("must be ") for p in parts) else "must "
        return lead + " and ".join(p.removeprefix(lead) for p in parts) if parts else None
    inner = getattr(validator, "validator", None)  # attrs.validators.optional(...)
    return _requirement(inner, depth + 1) if inner is not None and inner is not validator else None


def _choices(options: Any) -> str:
    """The values an ``in_`` allows, as a message says them: ``"a", "b" or "c"``, text quoted."""
    from itertools import islice

    from .shapes import short_repr

    count = len(options) if hasattr(options, "__len__") else None
    if isinstance(options, (set, frozenset)) and len(options) <= 1_000:  # shown in an order that stays
        values = sorted(options, key=short_repr)[: _CHOICES_SHOWN + 1]
    else:
        values = list(islice(options, _CHOICES_SHOWN + 1))  # a range(10**9) is never listed whole
    shown = [wording.quoted(v) if isinstance(v, str) else short_repr(v) for v in values[:_CHOICES_SHOWN]]
    if len(values) > _CHOICES_SHOWN:
        return ", ".join(shown) + (f", … ({count:,} values in all)" if isinstance(count, int) else ", …")
    return ", ".join(shown[:-1]) + " or " + shown[-1] if len(shown) > 1 else (shown[0] if shown else "nothing (no value is allowed)")


def path_options(factory: Any) -> tuple[str, ...]:
    """The options of ``factory`` that are files or folders: the fields of its ``Options`` marked
    ``path=True``, and the names a factory that declares no ``Options`` lists in ``path_options``."""
    cls = declared_options(factory)
    marked = tuple(f.name for f in attrs.fields(cls) if f.metadata.get("path")) if cls is not None else ()
    listed = getattr(factory, "path_options", ())
    if isinstance(listed, str) or not isinstance(listed, (tuple, list)):
        listed = ()
    return marked + tuple(name for name in listed if isinstance(name, str) and name not in marked)


def paths_anywhere(factory: Any) -> frozenset[str]:
    """The path options of ``factory`` that may lie outside the project (marked ``anywhere=True``)."""
    cls = declared_options(factory)
    if cls is None:
        return frozenset()
    return frozenset(f.name for f in attrs.fields(cls) if f.metadata.get("anywhere"))


def receives_options(factory: Any) -> str | None:
    """The parameter ``factory`` takes its structured ``Options`` object by, or ``None`` when it
    takes its options as keyword arguments (or declares none).

    The one place that tells the two contracts apart: a factory that declares ``Options`` and takes
    exactly one parameter (``self`` and ``*args``/``**kwargs`` aside) receives the object when that
    parameter is annotated with the class (or a base of it) or, unannotated, is named ``options``
    and the class has no option of that name.
    """
    try:
        return _contracts[factory]
    except (KeyError, TypeError):  # not asked yet, or a factory that cannot be a key
        pass
    parameter = _parameter_for_options(factory)
    try:
        _contracts[factory] = parameter
    except TypeError:
        pass
    return parameter


#: :func:`receives_options` per factory, asked once per process (a signature costs ~100 µs).
_contracts: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()


def _parameter_for_options(factory: Any) -> str | None:
    cls = declared_options(factory)
    if cls is None:
        return None
    import inspect

    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    named = [p for p in signature.parameters.values() if p.kind not in variadic]
    if len(named) != 1 or named[0].kind is inspect.Parameter.POSITIONAL_ONLY:
        return None
    parameter = named[0]
    annotation = parameter.annotation
    if annotation is inspect.Parameter.empty:
        return parameter.name if parameter.name == "options" and "options" not in attrs.fields_dict(cls) else None
    bases = {base.__name__ for base in cls.__mro__ if attrs.has(base)}
    if isinstance(annotation, str):  # ``from __future__ import annotations``: "MyOptions", "MyOptions | None"
        named_types = {part.strip().strip("'\"").rpartition(".")[2] for part in annotation.split("|")}
    else:
        import typing

        named_types = {getattr(t, "__name__", "") for t in (typing.get_args(annotation) or (annotation,))}
    return parameter.name if named_types & bases else None


# -- checking and structuring --------------------------------------------------------------------------


def _plugin_label(record: Any) -> str:
    """How an option's message names the plugin: its record's :attr:`~evalkit.registry.PluginRecord.label`."""
    return record.label if record is not None else "the plugin"


def structure_options(cls: type, given: Mapping[str, Any], *, plugin: str, table: str) -> Any:
    """``given`` checked against ``cls`` and structured into it; every problem in one :class:`OptionsError`."""
    from .convert import options_converter
    from .wording import did_you_mean

    if not isinstance(given, Mapping):
        raise ConfigError(f"{table} must be a table of options for {plugin}")
    fields = attrs.fields_dict(cls)
    names = list(fields)
    problems = []
    for key in given:
        if key not in fields:
            hint = did_you_mean(key, names)
            known = wording.listed(names)
            if key.lower() in _SECRET_NAMES:
                via = ' and name that variable with "api_key_env"' if "api_key_env" in fields else ""
                hint += f" A secret is never an option: put it in an environment variable{via}."
            problems.append(f"{plugin} has no option {wording.quoted(key)} (in {table}).{hint} Its options: {known}.")
    for name, field in fields.items():
        if field.default is attrs.NOTHING and name not in given:
            help_text = field.metadata.get("help")
            what = f" ({help_text})" if help_text else ""
            problems.append(f"{plugin} needs option {wording.quoted(name)}{what}: set {name} = … in {table}.")
    attrs.resolve_types(cls)
    values = {name: _fspath(fields[name], value) for name, value in given.items() if name in fields}
    failure: Exception | None = None
    if not problems:
        try:
            return options_converter.structure(values, cls)
        except Exception as exc:  # which values were wrong is found below, one option at a time
            failure = exc
    for name, value in values.items():
        problems.extend(_field_problems(fields[name], value, plugin, table))
    if not problems and failure is not None:  # a check across options (``__attrs_post_init__``) refused them together
        from .shapes import exception_message

        cause = failure.exceptions[0] if isinstance(failure, BaseExceptionGroup) and failure.exceptions else failure
        problems.append(f"{plugin} cannot take the options in {table}: {exception_message(cause)}")
    heading = "its options are wrong:" if plugin == "it" else f"the options of {plugin} are wrong:"
    raise OptionsError(problems[0] if len(problems) == 1 else "\n".join([heading, *problems]))


def _fspath(field: attrs.Attribute, value: Any) -> Any:  # type: ignore[type-arg]
    """A path option given as a ``pathlib.Path`` (in Python) as its string."""
    return os.fspath(value) if field.metadata.get("path") and isinstance(value, os.PathLike) else value


def _field_problems(field: attrs.Attribute, value: Any, plugin: str, table: str) -> list[str]:  # type: ignore[type-arg]
    """What is wrong with one option's value: its type (cattrs' strict structuring, one line per
    wrong part of a table or list), else what its validator refuses; nothing when it is right."""
    import cattrs

    from .convert import options_converter

    secret = bool(field.metadata.get("secret"))
    try:
        structured = options_converter.structure(value, field.type)
    except Exception as exc:
        problems = []
        for line in cattrs.transform_error(exc, path=f"$.{field.name}", format_exception=_structure_failure):
            message, _, where = line.rpartition(" @ ")
            if isinstance(value, bool):  # the value shown says it is a boolean, in TOML's words
                message = message.removesuffix(", not bool")
            shown = "value not shown" if secret else f"got {_short(value)}"
            problems.append(f"{plugin} has a wrong value for option {wording.quoted(where.removeprefix('$.'))} in {table}: {message} ({shown}).")
        return problems
    if field.validator is None:
        return []
    try:
        field.validator(None, field, structured)
    except OptionError as exc:  # shown with the value as written, not as structured
        reason = OptionError(exc.option, exc.requirement, attrs.NOTHING if secret else value).reason()
        return [f"{plugin} has a wrong value for option {wording.quoted(field.name)} in {table}: {reason}."]
    except Exception as exc:  # attrs' own validators, or a plugin's (which may raise its ConfigError)
        from .shapes import exception_message

        # quoted as any plugin's exception: its line breaks escaped, so it prints no line of its own
        return [f"{plugin} has a wrong value for option {wording.quoted(field.name)} in {table}: {exception_message(exc)}"]
    return []


def _structure_failure(exc: BaseException, kind: Any) -> str:
    """cattrs' words for a value of the wrong kind; ours for a whole number no float holds
    (``timeout = 1`` followed by 400 zeros: cattrs says "unknown error")."""
    import cattrs.v

    if isinstance(exc, OverflowError):
        return "a number past what a float holds (about 1.8e308)"
    said = str(exc.args[0]) if isinstance(exc, TypeError) and kind is None and exc.args else ""
    expected, comma, got = said.removeprefix("expected ").rpartition(", got ")
    if said.startswith("expected ") and comma:  # the converter's strict hooks: "must be a number, not str"
        return f"must be {expected}, not {got}"
    return cattrs.v.format_exception(exc, kind)


def _short(value: Any) -> str:
    """An option's value as its table wrote it (``true (a boolean)``, not Python's ``True``)."""
    from .shapes import written_value

    return written_value(value)


def check_options(
    record: Any, factory: Any, given: Mapping[str, Any], table: str, *, plugin: str | None = None
) -> dict[str, Any]:
    """The keyword arguments to call ``factory`` with, by the contract it follows
    (:func:`receives_options`): ``{parameter: Options(...)}``, the given options structured as
    keyword arguments (the earlier contract), or ``given`` unchanged (plugins that declare nothing).
    ``plugin`` is how messages name it (default: kind, name and distribution)."""
    problem = declaration_problem(factory)
    if problem is not None:
        from .errors import OptionsDeclarationError

        who = plugin if plugin is not None and plugin != "it" else _plugin_label(record) if record is not None else "the plugin"
        message = f"{who} {problem} (a defect of the plugin, whatever its configuration says)"
        raise OptionsDeclarationError.for_plugin(record, message) if record is not None else OptionsDeclarationError(message)
    cls = declared_options(factory)
    if cls is None:
        return dict(given)
    structured = structure_options(cls, given, plugin=plugin or _plugin_label(record), table=table)
    parameter = receives_options(factory)
    if parameter is not None:
        return {parameter: structured}
    return {name: getattr(structured, name) for name in given}


def build_plugin(factory: Any, /, **options: Any) -> Any:
    """``factory`` built from keyword ``options`` as evalkit builds it from a configuration table:
    checked against its ``Options`` (an :class:`OptionError` naming every problem) and called by
    the contract it follows. For library code and tests::

        retriever = build_plugin(LexicalRetriever, corpus="docs/", title_weight=2.0)
    """
    name = getattr(factory, "__name__", None) or type(factory).__name__
    return factory(**check_options(None, factory, options, "the options given", plugin=name))


# -- set providers' tables ---------------------------------------------------------------------------


def provider_table(record: Any, factory: Any, config: Any, refused: list[str] | None = None) -> tuple[str, dict[str, Any]]:
    """A set provider's options table: its name for messages and the keyword arguments to call the
    provider with (empty when it declares nothing or the table is absent and nothing is required).

    With ``refused``, a provider of one table per set (``question_sets.*``) is given only the valid
    tables, and the problem of each invalid one is appended to ``refused``: one bad table fails
    only its own set. Without it, the first invalid table raises."""
    if (problem := declaration_problem(factory)) is not None:
        from .errors import OptionsDeclarationError

        raise OptionsDeclarationError.for_plugin(record, f"{_plugin_label(record)} {problem}")
    # the provider's own table is [set_providers.NAME]: its name is one key, whatever it holds (a
    # '"', a '\\', a line break), quoted once where the table is shown (wording.table_key)
    keys = _split_table(factory.config_table) if isinstance(factory, TableOptions) else [SET_PROVIDER_TABLE, record.name]
    raw = getattr(config, "raw", {}) if config is not None else {}
    per_instance = isinstance(factory, TableOptions) and keys[-1:] == ["*"]
    if per_instance:
        keys = keys[:-1]
    data: Any = raw
    for key in keys:
        data = data.get(key, {}) if isinstance(data, Mapping) else {}
    where = _where(config)
    shown = ".".join(wording.table_key(k) for k in keys)
    cls = declared_options(factory)
    if cls is None:
        if data:
            raise ConfigError(
                f"{_plugin_label(record)} takes no options, but [{shown}]{where} gives some; remove the table"
            )
        return shown, {}
    if per_instance:
        if not isinstance(data, Mapping):
            raise ConfigError(f"[{shown}]{where} must hold one table per instance")
        instances = {}
        for name, table in data.items():
            at = f"[{shown}.{wording.table_key(name)}]{where}"
            try:
                instances[name] = structure_options(cls, _resolved(table, factory, config, at), plugin="it", table=at)
            except ConfigError as exc:
                if refused is None:
                    raise
                refused.append(str(exc))
        return shown, {"instances": instances}
    at = f"[{shown}]{where}"
    return shown, check_options(record, factory, _resolved(data, factory, config, at), at, plugin="it")


def _resolved(table: Any, factory: Any, config: Any, where: str) -> Any:
    """``table`` with the factory's path options made absolute against the config's folder, each
    inside the project (:func:`resolve_paths`)."""
    if getattr(config, "path", None) is None or not isinstance(table, Mapping):
        return table
    from .project_files import ProjectBoundary

    return resolve_paths(table, factory, config.root, boundary=ProjectBoundary.of(config), table=where)


def _where(config: Any) -> str:
    path = getattr(config, "path", None)
    return f" of {wording.path_named(path)}" if path is not None else " of evalkit.toml"


def _split_table(path: str) -> list[str]:
    """``a."b.c".d`` → ``["a", "b.c", "d"]``."""
    keys, current, quoted = [], "", False
    for char in path:
        if char == '"':
            quoted = not quoted
        elif char == "." and not quoted:
            keys.append(current)
            current = ""
        else:
            current += char
    keys.append(current)
    return [k for k in keys if k]


def resolve_paths(
    options: Mapping[str, Any], factory: Any, root: Path, *, boundary: ProjectBoundary | None = None, table: str = "the configuration"
) -> dict[str, Any]:
    """``options`` with the factory's path options (:func:`path_options`) made
    absolute against ``root``, the configuration file's folder (``~`` is left to the plugin).

    With ``boundary`` — the one place the project rule is applied to the files a configuration
    names for a plugin — a path that resolves (links followed) outside the project and outside
    every place ``[sets] allow_outside`` lists is refused before anything is built: an
    :class:`~evalkit.project_files.OutsideProjectError` (exit 2) naming the option, ``table``, the
    path, where it leads and how to allow it.
    """
    resolved = dict(options)
    anywhere = paths_anywhere(factory)
    for name in path_options(factory):
        value = resolved.get(name)
        if not isinstance(value, str) or not value:
            continue  # absent, or of the wrong type: checking the options says so
        if "\x00" in value:  # every option that is a path, one allowed anywhere (ca_bundle) too
            from .project_files import NUL_IN_NAME

            raise ConfigError(f"option {wording.quoted(name)} of {table}: {wording.path_named(value)} {NUL_IN_NAME}")
        path = root / Path(value).expanduser()  # an absolute path stays itself
        if not Path(value).expanduser().is_absolute():
            resolved[name] = str(path)
        if boundary is not None and name not in anywhere:
            reason = boundary.outside(path, folder=os.path.isdir(path))
            if reason is not None:
                from .project_files import OutsideProjectError

                raise OutsideProjectError(f"option {wording.quoted(name)} of {table}: {wording.path_named(value)} {reason}")
    return resolved
