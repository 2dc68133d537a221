"""Reading set files (YAML, JSON, JSONL, TOML) into plain data, remembering where each value sits.

Each reader returns a :class:`SetDocument`: the parsed data and a map from JSON paths
(``("prompts", 3, "assertions", 0)``) to the line and column the loader saw them at, so a problem
found later by the schema or the kernel's rules can point into the file. A plainly written YAML
file is built from libyaml's events (:func:`_read_plain_yaml`), any other composed into nodes
(which carry marks) before it is constructed (:func:`_read_yaml_nodes`); JSON and JSONL are
scanned once more for offsets. The places inside each prompt or question of a YAML or JSON file
(:class:`_KeptPlaces`) and a JSONL member line's (:class:`_MemberLines`) are found again when a
problem asks: kept for every value of a large file, they took more memory than its data. TOML has
no positions in :mod:`tomllib`, so its ``[[array.of.tables]]`` headers and ``key =`` lines are
located by a line scan.
"""

from __future__ import annotations

import bisect
import json
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from json.decoder import scanstring
from pathlib import Path
from typing import Any

import attrs

from ..jsonparse import TOO_MANY_DIGITS, json_lines, long_number_at, parse_json, too_many_digits
from ..set_file_heads import is_jsonl_header, jsonl_file_identifier
from ..textfiles import read_whole_file, utf8_text
from .problems import FileProblem, JsonPath, quoted, quoted_key

__all__ = [
    "SUFFIXES",
    "FileSyntaxError",
    "SetDocument",
    "made_document",
    "read_document",
]

#: File suffixes and the reader for each.
SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".toml")
#: Members of a set, by the key that holds them.
MEMBER_KEYS = ("prompts", "questions")
#: How deep a set file's lists and mappings may nest (the set itself is level 0; a prompt's JSON
#: Schema assertion sits at level 5). A deeper file is refused before anything walks it: the
#: schema, the kernel's rules and every later reader of the values would run out of stack.
MAX_NESTING = 64
#: What an empty set file is told it lacks.
_A_SET_HOLDS = "a set file holds a set: identifier, name, and prompts (or questions); see docs/sets.md"
#: The largest set file read, in bytes (a larger set is a provider's job: a PromptStream).
MAX_SET_FILE_BYTES = 256 * 1024 * 1024


class FileSyntaxError(Exception):
    """A set file cannot be parsed; ``problems`` says where and why."""

    def __init__(self, problems: list[FileProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


@attrs.frozen
class SetDocument:
    """One parsed set file: its data and the line and column of each JSON path the loader knows."""

    file: Path
    data: Any
    positions: Mapping[JsonPath, tuple[int, int]] = attrs.Factory(dict)
    #: Positions of mapping keys (``path + (key,)``), to point at an unexpected field's name.
    key_positions: Mapping[JsonPath, tuple[int, int]] = attrs.Factory(dict)
    #: Problems the reader found in well-formed text (a repeated key).
    problems: tuple[FileProblem, ...] = ()

    def position(self, path: JsonPath) -> tuple[int, int] | None:
        """The position of ``path``, else of its nearest ancestor the loader located."""
        for end in range(len(path), -1, -1):
            found = self.positions.get(path[:end])
            if found is not None:
                return found
        return None

    def problem(self, path: JsonPath, reason: str, *, at_key: bool = False) -> FileProblem:
        """A problem at ``path`` with the best position known."""
        where = self.key_positions.get(path) if at_key else None
        where = where or self.position(path)
        line, column = where if where else (None, None)
        return FileProblem(str(self.file), reason, path, line, column)


def nested_too_deeply(data: Any) -> JsonPath | None:
    """Where ``data`` nests more than :data:`MAX_NESTING` lists and mappings deep: the path of the
    innermost named value (mapping key) above the level that is too deep, at most its first eight
    steps (``prompts[0].metadata``); ``None`` when it does not."""
    if not isinstance(data, (dict, list)):
        return None
    stack: list[tuple[Any, JsonPath]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value)
        if len(path) > MAX_NESTING:
            named = max((i for i, part in enumerate(path) if isinstance(part, str)), default=-1)
            return path[: min(named + 1, 8)]
        stack.extend((child, (*path, key)) for key, child in items if isinstance(child, (dict, list)))
    return None


def _refuse_deep(file: Path, data: Any, position: Callable[[JsonPath], tuple[int, int]] | None = None) -> None:
    path = nested_too_deeply(data)
    if path is not None:
        line, column = position(path) if position is not None else (None, None)
        reason = f"nested more than {MAX_NESTING} lists and mappings deep; a set file may not nest deeper"
        raise FileSyntaxError([FileProblem(str(file), reason, path, line, column)])


def made_document(file: Path, data: Any) -> SetDocument:
    """A set document made in memory, to be written as ``file``, with the checks a reader makes of
    what it parsed that a document's data can fail: :class:`FileSyntaxError` when it nests deeper
    than :data:`MAX_NESTING` or holds a key that is not text. It has no positions: its problems
    name JSON paths. (:func:`evalkit.setfiles.check_document` checks it as ``evalkit validate``
    checks a file; the text written must be one that loads back as ``data``, which PyYAML's
    safe dumper writes.)"""
    _refuse_deep(file, data)
    stack: list[tuple[Any, JsonPath]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                if not isinstance(key, str):
                    reason = f"{_KEY_NOT_TEXT}{quoted(key)} is not text; every key in a set file is text"
                    raise FileSyntaxError([FileProblem(str(file), reason, path)])
                if isinstance(child, (dict, list)):
                    stack.append((child, (*path, key)))
        elif isinstance(value, list):
            stack.extend(
                (child, (*path, index)) for index, child in enumerate(value) if isinstance(child, (dict, list))
            )
    return SetDocument(file, data)


def read_document(file: Path) -> SetDocument:
    """Parse ``file`` by its suffix; raises :class:`FileSyntaxError` when it cannot be parsed."""
    try:
        text = utf8_text(read_whole_file(file, MAX_SET_FILE_BYTES))
    except UnicodeDecodeError as exc:
        raise FileSyntaxError(
            [FileProblem(str(file), f"is not UTF-8 text ({exc.reason} at byte {exc.start})")]
        ) from None
    except OSError as exc:
        raise FileSyntaxError([FileProblem(str(file), f"cannot be read: {exc.strerror}")]) from None
    suffix = file.suffix.lower()
    if suffix in SUFFIXES and not text.strip():  # each parser said it its own way: null, [] or a JSON error
        raise FileSyntaxError([FileProblem(str(file), f"is empty; {_A_SET_HOLDS}")])
    if suffix in (".yaml", ".yml"):
        return _read_yaml(file, text)
    if suffix == ".json":
        return _read_json(file, text)
    if suffix == ".jsonl":
        return _read_jsonl(file, text)
    if suffix == ".toml":
        return _read_toml(file, text)
    raise FileSyntaxError([FileProblem(str(file), f"has an unsupported type; use one of {', '.join(SUFFIXES)}")])


# --- YAML -------------------------------------------------------------------------------------


def _read_yaml(file: Path, text: str) -> SetDocument:
    """The document of a YAML set file: read by :func:`_read_plain_yaml` when it can, else (an
    alias, a tag, a key that is not text, a syntax error: whatever that reader leaves) by
    :func:`_read_yaml_nodes`, which every message about such a file comes from."""
    try:
        return _read_plain_yaml(file, text)
    except Exception:  # noqa: BLE001 - read again by the reader whose problems and errors users see
        return _read_yaml_nodes(file, text)


def _read_yaml_nodes(file: Path, text: str) -> SetDocument:
    """Compose the whole YAML document into nodes, check and construct it, record every place."""
    import yaml

    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(text)
    place = _yaml_places(text)
    try:
        node = loader.get_single_node()
        if node is None:  # comments, or a bare "---": no document, which read as null
            raise FileSyntaxError([FileProblem(str(file), f"holds no YAML document, only comments; {_A_SET_HOLDS}")])
        _check_aliases(file, node, place)
        written = _keys_written_beside_merges(node)
        data = loader.construct_document(node)
    except RecursionError:  # the pure-Python loader composes nested nodes recursively
        raise FileSyntaxError([FileProblem(str(file), "YAML syntax: nested too deeply")]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(part for part in (exc.context, exc.problem) if part) or "cannot be parsed"
        if mark is not None and text[mark.index : mark.index + 1] == "\t" and "tab" not in reason:
            reason += " (a tab: YAML indents with spaces only)"  # libyaml does not say which character
        line, column = place(mark) if mark is not None else (None, None)
        raise FileSyntaxError([FileProblem(str(file), f"YAML syntax: {reason}", (), line, column)]) from None
    except yaml.YAMLError as exc:
        raise FileSyntaxError([FileProblem(str(file), f"YAML syntax: {exc}")]) from None
    except ValueError as exc:
        if not too_many_digits(exc):
            raise
        raise _long_number_problem(file, text, "YAML") from None
    finally:
        loader.dispose()
    _refuse_deep(file, data, lambda path: place(_yaml_node_at(node, path).start_mark))
    positions: dict[JsonPath, tuple[int, int]] = {}
    keys: dict[JsonPath, tuple[int, int]] = {}
    problems: list[FileProblem] = []
    _YamlWalk(positions, keys, problems, file, written, place).walk(node, ())
    not_text = [p for p in problems if p.reason.startswith(_KEY_NOT_TEXT)]
    if not_text:  # nothing after the reader expects a key that is not text (null, a number): refuse here
        raise FileSyntaxError(not_text)
    return SetDocument(file, data, positions, keys, tuple(problems))


#: YAML tags a key may carry: text, and ``<<`` (a merge key, which the loader resolves away).
_TEXT_KEY_TAGS = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:merge")
#: What a plain YAML key reads as, by the tag the resolver gave it.
_KEY_READ_AS = {"null": "null", "bool": "a boolean", "int": "a number", "float": "a number", "timestamp": "a date"}
_KEY_NOT_TEXT = "the key "


def _key_not_text(key_node: Any) -> str | None:
    """Why a YAML key is no text (``~``, ``1``, ``yes``, ``2024-01-01`` unquoted), else ``None``."""
    if key_node.tag in _TEXT_KEY_TAGS:
        return None
    what = _KEY_READ_AS.get(key_node.tag.rsplit(":", 1)[-1], f"a value tagged {key_node.tag}")
    return f"{_KEY_NOT_TEXT}{quoted(key_node.value)} is read as {what}, not as text; every key in a set file is text (put it in quotes)"


#: How many values aliases may add to a YAML document beyond the ones written in it: this many,
#: or ten times as many as are written, whichever is more. Aliases share one node where they
#: are written, but everything after the loader (the positions, the schema, the kernel's rules)
#: sees each value as often as it is aliased: nine lines aliasing nine times would be 43 million.
ALIASED_VALUES_ALLOWED = 1_000_000


def _yaml_places(text: str) -> Callable[[Any], tuple[int, int]]:
    """The 1-based line and column of a YAML mark in ``text``, as an editor counts them. PyYAML
    (YAML 1.1) also breaks lines at U+0085, U+2028 and U+2029, which editors show inside a line
    (YAML 1.2 dropped them too): in a file holding one, every place after it was a line too far.
    Such a file's places are counted from the mark's character offset instead."""
    if not any(char in text for char in "\x85\u2028\u2029"):
        return lambda mark: (mark.line + 1, mark.column + 1)
    lines = _Lines(text, pattern=_LINE_END)
    return lambda mark: lines.at(mark.index)


def _check_aliases(file: Path, root: Any, place: Callable[[Any], tuple[int, int]]) -> None:
    """Refuse a YAML node graph that contains itself (``&a [*a]``) or whose aliases expand it
    past :data:`ALIASED_VALUES_ALLOWED`, before anything walks it value by value."""
    import yaml

    expanded: dict[int, int] = {}  # id(node) -> how many values it stands for, aliases expanded
    ancestors: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_counted = stack.pop()
        children = _yaml_children(node, yaml)
        if children_counted:
            ancestors.discard(id(node))
            expanded[id(node)] = 1 + sum(expanded[id(child)] for child in children)
            continue
        if id(node) in expanded:
            continue
        if id(node) in ancestors:
            raise FileSyntaxError([FileProblem(
                str(file), "YAML alias: an alias refers to a value that contains it, so the value would never end",
                (), *place(node.start_mark),
            )])  # fmt: skip
        ancestors.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in expanded)
    written = len(expanded)
    total = expanded[id(root)]
    allowed = max(ALIASED_VALUES_ALLOWED, 10 * written)
    if total - written > allowed:
        raise FileSyntaxError([FileProblem(
            str(file), f"YAML aliases: the {written:,} values written here stand for {total:,} with every alias "
            f"expanded, more than {allowed:,} added by aliases; write the repeated values out or alias fewer of them",
        )])  # fmt: skip


def _yaml_node_at(node: Any, path: JsonPath) -> Any:
    """The node at ``path``, or the nearest ancestor found along it."""
    import yaml

    for part in path:
        if isinstance(node, yaml.MappingNode):
            found = [value for key, value in node.value if isinstance(key, yaml.ScalarNode) and key.value == part]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            found = [node.value[part]]
        else:
            found = []
        if not found:
            break
        node = found[-1]
    return node


def _yaml_children(node: Any, yaml: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _keys_written_beside_merges(root: Any) -> dict[int, tuple[int, frozenset[str]]]:
    """For each mapping node that holds a merge key (``<<: *base``), by ``id()``: how many pairs
    the mapping itself writes, and their keys. Read before the constructor runs, which puts the merged pairs into the
    mapping's node ahead of its own: after it, the walk cannot tell a key merged in and
    overridden (what a merge key is for) from one written twice."""
    import yaml

    written: dict[int, tuple[int, frozenset[str]]] = {}
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode) and any(key.tag == _MERGE_TAG for key, _ in node.value):
            own = [key for key, _ in node.value if key.tag != _MERGE_TAG]
            written[id(node)] = (len(own), frozenset(key.value for key in own if isinstance(key, yaml.ScalarNode)))
        stack.extend(_yaml_children(node, yaml))
    return written


class _YamlWalk:
    """Records where every value and key of a composed (and constructed) YAML document sits, the
    keys a mapping writes twice and the keys that are not text. A mapping that merged others in
    holds their pairs first: those the mapping writes itself are skipped there (it overrides
    them), and the merged ones are never taken for repeats."""

    def __init__(
        self,
        positions: dict[JsonPath, tuple[int, int]],
        keys: dict[JsonPath, tuple[int, int]],
        problems: list[FileProblem],
        file: Path,
        written: Mapping[int, tuple[int, frozenset[str]]],
        place: Callable[[Any], tuple[int, int]],
    ) -> None:
        self.positions, self.keys, self.problems, self.file, self.written = positions, keys, problems, file, written
        self.place = place

    def walk(self, node: Any, path: JsonPath) -> None:
        """Record ``node`` (and everything in it) under ``path``."""
        import yaml

        self.positions[path] = self.place(node.start_mark)
        if isinstance(node, yaml.MappingNode):
            own_count, own = self.written.get(id(node), (len(node.value), frozenset()))
            merged = len(node.value) - own_count  # the constructor put the merged pairs first
            seen: set[str] = set()
            for index, (key_node, value_node) in enumerate(node.value):
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = key_node.value
                if index < merged and key in own:
                    continue  # merged in and overridden by the mapping's own
                where = self.place(key_node.start_mark)
                not_text = _key_not_text(key_node)
                if not_text is not None:
                    self.problems.append(FileProblem(str(self.file), not_text, path, *where))
                    continue
                if key in seen and index >= merged:
                    self.problems.append(
                        FileProblem(
                            str(self.file), f"key {quoted_key(key)} appears more than once", path + (key,), *where
                        )
                    )
                if index >= merged:
                    seen.add(key)
                self.keys[path + (key,)] = where
                self.walk(value_node, path + (key,))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.walk(item, path + (index,))


class _NotPlain(Exception):
    """A YAML set file holds what :func:`_read_plain_yaml` leaves to :func:`_read_yaml_nodes`."""


#: The tags a plain YAML scalar resolves to that :func:`_read_plain_yaml` constructs itself.
_PLAIN_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "null", "bool", "int", "float", "timestamp")
)
_STR_TAG = "tag:yaml.org,2002:str"


def _read_plain_yaml(file: Path, text: str) -> SetDocument:
    """The document of a YAML set file written plainly — one document whose top is a mapping, no
    anchor, alias or explicit tag, every key plain text, nested less than :data:`MAX_NESTING`
    deep — built from libyaml's events one at a time, the same data, repeated keys and places as
    :func:`_read_yaml_nodes` finds. That reader composes the whole file into nodes first (two
    marks each: 25 times the file's size in memory, 1.4 GB for a 50 MB file) and walks them four
    times; this one holds a value's node only while it constructs it. The places of the values
    inside each prompt or question are found again, by :func:`_read_yaml_nodes`, when a problem
    asks (:class:`_KeptPlaces`); the rest are kept. Raises :class:`_NotPlain`, or whatever the
    parser or a constructor raises, for anything else: the caller reads such a file again the
    other way, whose problems and errors users see."""
    import yaml
    from yaml import events

    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(text)
    place = _yaml_places(text)
    resolve, constructors = loader.resolve, loader.yaml_constructors
    scalar_node, scalar_event, alias_event = yaml.ScalarNode, events.ScalarEvent, events.AliasEvent
    mapping_start, sequence_start = events.MappingStartEvent, events.SequenceStartEvent
    ends = (events.MappingEndEvent, events.SequenceEndEvent)
    positions: dict[JsonPath, tuple[int, int]] = {}
    keys: dict[JsonPath, tuple[int, int]] = {}
    problems: list[FileProblem] = []
    try:
        get_event = loader.get_event
        get_event()  # the stream's start
        if not isinstance(get_event(), events.DocumentStartEvent):
            raise _NotPlain
        event = get_event()
        if type(event) is not mapping_start or event.anchor is not None or event.tag not in (None, "!"):
            raise _NotPlain
        root: dict[str, Any] = {}
        positions[()] = place(event.start_mark)
        # each open mapping or sequence: [its value, its path, whether its values' places are
        # kept, the key whose value comes next (mappings; None when a key comes next)]
        stack: list[list[Any]] = [[root, (), True, None]]
        while stack:
            event = get_event()
            kind = type(event)
            if kind in ends:
                stack.pop()
                continue
            frame = stack[-1]
            container, at, kept, key = frame
            if kind is alias_event or event.anchor is not None or event.tag not in (None, "!"):
                raise _NotPlain
            is_mapping = type(container) is dict
            if is_mapping and key is None:  # a key
                if kind is not scalar_event or resolve(scalar_node, event.value, event.implicit) != _STR_TAG:
                    raise _NotPlain
                key = frame[3] = event.value
                if key in container:
                    where = place(event.start_mark)
                    problems.append(
                        FileProblem(str(file), f"key {quoted_key(key)} appears more than once", at + (key,), *where)
                    )
                    if kept:
                        keys[at + (key,)] = where
                elif kept:
                    keys[at + (key,)] = place(event.start_mark)
                continue
            path = at + (key,) if is_mapping else at + (len(container),)
            if kept:
                positions[path] = place(event.start_mark)
            if kind is scalar_event:
                tag = resolve(scalar_node, event.value, event.implicit)
                if tag == _STR_TAG:
                    value: Any = event.value
                elif tag in _PLAIN_SCALAR_TAGS:
                    node = scalar_node(tag, event.value, event.start_mark, event.end_mark, event.style)
                    value = constructors[tag](loader, node)
                else:
                    raise _NotPlain
            elif kind is mapping_start or kind is sequence_start:
                if len(stack) >= MAX_NESTING:
                    raise _NotPlain
                value = {} if kind is mapping_start else []
                # a member's own place is kept, those of the values inside it found when asked
                member = not is_mapping and at[-1:] != () and at[-1] in MEMBER_KEYS
                stack.append([value, path, kept and not member, None])
            else:
                raise _NotPlain
            if is_mapping:
                container[key] = value
                frame[3] = None
            else:
                container.append(value)
        if not isinstance(get_event(), events.DocumentEndEvent) or not isinstance(get_event(), events.StreamEndEvent):
            raise _NotPlain
    finally:
        loader.dispose()
    everything = _EveryPlace(lambda: _yaml_places_of(_read_yaml_nodes(file, text)))
    return SetDocument(
        file, root, _KeptPlaces(positions, everything), _KeptPlaces(keys, everything, keys=True), tuple(problems)
    )


def _yaml_places_of(document: SetDocument) -> tuple[Mapping[JsonPath, tuple[int, int]], Mapping[JsonPath, tuple[int, int]]]:
    return document.positions, document.key_positions


def _inside_member(path: JsonPath) -> bool:
    """Whether ``path`` lies inside a prompt or question (below ``prompts[3]``): a place that
    :func:`_read_plain_yaml` does not keep."""
    return any(
        part in MEMBER_KEYS and isinstance(path[index + 1], int) and len(path) > index + 2
        for index, part in enumerate(path[:-1])
    )


class _EveryPlace:
    """Every place of a set file's values and keys, found by ``find`` when first asked (a YAML
    file read by :func:`_read_yaml_nodes`, a JSON file scanned whole)."""

    def __init__(self, find: Callable[[], tuple[Mapping[JsonPath, tuple[int, int]], Mapping[JsonPath, tuple[int, int]]]]) -> None:
        self._find = find
        self._found: tuple[Mapping[JsonPath, tuple[int, int]], Mapping[JsonPath, tuple[int, int]]] | None = None

    def places(self, *, keys: bool) -> Mapping[JsonPath, tuple[int, int]]:
        """The places of the values, or with ``keys`` of the mapping keys (found once)."""
        if self._found is None:
            self._found = self._find()
        return self._found[keys]


class _KeptPlaces(Mapping[JsonPath, tuple[int, int]]):
    """The places a reader kept (all but those inside each prompt or question) and, for a path
    inside one, the one :class:`_EveryPlace` finds. ``keys``: the places of mapping keys, not
    values."""

    def __init__(self, known: dict[JsonPath, tuple[int, int]], everything: _EveryPlace, *, keys: bool = False) -> None:
        self._known = known
        self._everything = everything
        self._keys = keys

    def _all(self) -> Mapping[JsonPath, tuple[int, int]]:
        return self._everything.places(keys=self._keys)

    def __getitem__(self, path: JsonPath) -> tuple[int, int]:
        found = self._known.get(path)
        if found is not None:
            return found
        if not _inside_member(path):
            raise KeyError(path)
        return self._all()[path]

    def __iter__(self) -> Iterator[JsonPath]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


# --- JSON and JSONL ---------------------------------------------------------------------------


#: Where a line ends in an editor's count: LF, CR LF, or a lone CR.
_LINE_END = re.compile(r"\r\n|\r|\n")


class _Lines:
    """Turns character offsets into 1-based line and column numbers (lines end at ``pattern``)."""

    def __init__(self, text: str, first_line: int = 1, pattern: re.Pattern[str] | str = "\n") -> None:
        self.starts = [0] + [m.end() for m in re.finditer(pattern, text)]
        self.first_line = first_line

    def at(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return self.first_line + index, offset - self.starts[index] + 1


_WHITESPACE = re.compile(r"[ \t\n\r]*")


_NO_LINES = _Lines("")


class _JsonScan:
    """Records where every value and key of JSON texts sits, and the keys a mapping repeats. A
    class, not a closure that calls itself: that is a reference cycle, which kept each scanned
    text and the maps filled for it alive until the cyclic collector ran (a JSONL file scans each
    of its lines)."""

    _decoder = json.JSONDecoder()

    def __init__(
        self,
        positions: dict[JsonPath, tuple[int, int]],
        keys: dict[JsonPath, tuple[int, int]],
        repeated: list[tuple[JsonPath, tuple[int, int]]],
        *,
        members: bool = True,
    ) -> None:
        self.positions, self.keys, self.repeated = positions, keys, repeated
        self.text, self.lines = "", _NO_LINES
        #: Whether the places inside each prompt or question are recorded (the keys a mapping
        #: repeats always are).
        self.members = members

    def scan(self, text: str, lines: _Lines, prefix: JsonPath) -> None:
        """Record the offset of every value in ``text`` (already known to be valid JSON) under ``prefix``."""
        self.text, self.lines = text, lines
        self.value(0, prefix)

    def skip(self, i: int) -> int:
        """The offset of the next character after whitespace at ``i``."""
        return _WHITESPACE.match(self.text, i).end()  # type: ignore[union-attr]

    def value(self, i: int, path: JsonPath, kept: bool = True, inner: bool | None = None) -> int:
        """Record the value at offset ``i`` (and everything in it) under ``path``; its end. Its
        place only when ``kept``, those of the values and keys inside it only when ``inner``
        (by default ``kept``)."""
        inner = kept if inner is None else inner
        text, lines, skip = self.text, self.lines, self.skip
        i = skip(i)
        if kept:
            self.positions[path] = lines.at(i)
        opener = text[i]
        if opener == "{":
            i = skip(i + 1)
            seen: set[str] = set()
            if text[i] == "}":
                return i + 1
            while True:
                i = skip(i)
                key_at = i
                key, i = scanstring(text, i + 1)
                if key in seen:
                    self.repeated.append((path + (key,), lines.at(key_at)))
                seen.add(key)
                if inner:
                    self.keys[path + (key,)] = lines.at(key_at)
                i = skip(i) + 1  # the colon
                i = skip(self.value(i, path + (key,), inner))
                if text[i] == "}":
                    return i + 1
                i += 1  # the comma
        if opener == "[":
            i = skip(i + 1)
            if text[i] == "]":
                return i + 1
            index = 0
            # a member's own place is kept, those inside it only when ``members``
            within = inner and (self.members or not (path and path[-1] in MEMBER_KEYS))
            while True:
                i = skip(self.value(i, path + (index,), inner, within))
                index += 1
                if text[i] == "]":
                    return i + 1
                i += 1
        _, end = self._decoder.raw_decode(text, i)
        return end


def _repeated_problems(file: Path, repeated: list[tuple[JsonPath, tuple[int, int]]]) -> Iterator[FileProblem]:
    for path, (line, column) in repeated:
        yield FileProblem(str(file), f"key {quoted_key(path[-1])} appears more than once", path, line, column)


def _parse_json(file: Path, text: str, first_line: int = 1) -> Any:
    try:
        return parse_json(text)
    except json.JSONDecodeError as exc:
        line = exc.lineno + first_line - 1
        raise FileSyntaxError([FileProblem(str(file), f"JSON syntax: {exc.msg}", (), line, exc.colno)]) from None


def _read_json(file: Path, text: str) -> SetDocument:
    data = _parse_json(file, text)
    _refuse_deep(file, data)
    positions: dict[JsonPath, tuple[int, int]] = {}
    keys: dict[JsonPath, tuple[int, int]] = {}
    repeated: list[tuple[JsonPath, tuple[int, int]]] = []
    # the places inside each prompt or question are found again when a problem asks: kept for
    # every value, they took more memory than the data
    _JsonScan(positions, keys, repeated, members=False).scan(text, _Lines(text), ())
    everything = _EveryPlace(lambda: _json_places(text))
    problems = tuple(_repeated_problems(file, repeated))
    return SetDocument(file, data, _KeptPlaces(positions, everything), _KeptPlaces(keys, everything, keys=True), problems)


def _json_places(text: str) -> tuple[dict[JsonPath, tuple[int, int]], dict[JsonPath, tuple[int, int]]]:
    """The places of every value and key of the JSON ``text``."""
    positions: dict[JsonPath, tuple[int, int]] = {}
    keys: dict[JsonPath, tuple[int, int]] = {}
    _JsonScan(positions, keys, []).scan(text, _Lines(text), ())
    return positions, keys


def _read_jsonl(file: Path, text: str) -> SetDocument:
    """One member per line; a first line without ``prompt``, ``question``, ``template`` or ``messages`` is the set's header,
    unless it has an ``id`` and no ``identifier``: that is a member whose ``prompt`` is missing or
    misspelt (taken for a header, it was told that a header needs an identifier and a name).

    Without a header the set's identifier and name are the file name without ``.jsonl``
    (``myapp.faq.jsonl`` holds the set ``myapp.faq``).
    """
    positions: dict[JsonPath, tuple[int, int]] = {}
    keys: dict[JsonPath, tuple[int, int]] = {}
    repeated: list[tuple[JsonPath, tuple[int, int]]] = []
    problems: list[FileProblem] = []
    rows: list[tuple[int, str, Any]] = []
    for number, line in enumerate(json_lines(text), start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, line, _parse_json(file, line, number)))
        except FileSyntaxError as exc:
            problems.extend(exc.problems)
    if problems:
        raise FileSyntaxError(problems)
    header: dict[str, Any] = {}
    header_line = header_text = None
    if rows and is_jsonl_header(rows[0][2]):
        header_line, header_text, header = rows.pop(0)
    member_key = "questions" if any(isinstance(r[2], dict) and "question" in r[2] for r in rows) else "prompts"
    data: dict[str, Any] = {}
    if header_line is None:
        stem = jsonl_file_identifier(file)
        data.update(identifier=stem, name=stem)
        positions[()] = (1, 1)
    data.update(header)
    data[member_key] = [row for _, _, row in rows]

    def line_of(path: JsonPath) -> tuple[int, int]:
        member = len(path) > 1 and path[0] == member_key and isinstance(path[1], int)
        return (rows[path[1]][0] if member else header_line or 1), 1  # type: ignore[index]

    _refuse_deep(file, data, line_of)
    if header_line is not None and header_text is not None:
        _JsonScan(positions, keys, repeated).scan(header_text, _Lines(header_text, header_line), ())
    positions.setdefault((member_key,), (rows[0][0], 1) if rows else (header_line or 1, 1))
    lines = [(number, line_text) for number, line_text, _ in rows]
    for index, (number, line_text) in enumerate(lines):
        # every line is scanned for repeated keys; where its values sit is kept only when asked
        _JsonScan({}, {}, repeated).scan(line_text, _Lines(line_text, number), (member_key, index))
    problems.extend(_repeated_problems(file, repeated))
    members = _MemberLines(member_key, lines)
    return SetDocument(
        file, data, _LinePositions(positions, members), _LinePositions(keys, members, keys=True), tuple(problems)
    )


class _MemberLines:
    """The member lines of a JSONL file, scanned again for the places of their values and keys
    when a problem asks for one: kept for every value of a 200,000-prompt file, those places
    took more memory than the data (3 KB a prompt). The last few lines scanned are remembered
    (problems come in file order, and a problem's place is looked up from its path upwards)."""

    def __init__(self, member_key: str, lines: list[tuple[int, str]]) -> None:
        self.member_key = member_key
        self.lines = lines
        self._scanned: dict[int, tuple[dict[JsonPath, tuple[int, int]], dict[JsonPath, tuple[int, int]]]] = {}

    def index_of(self, path: JsonPath) -> int | None:
        """The member line ``path`` lies in, else ``None``."""
        if len(path) > 1 and path[0] == self.member_key and isinstance(path[1], int) and 0 <= path[1] < len(self.lines):
            return path[1]
        return None

    def places(self, index: int) -> tuple[dict[JsonPath, tuple[int, int]], dict[JsonPath, tuple[int, int]]]:
        """The places of the values and of the keys of member line ``index``."""
        found = self._scanned.get(index)
        if found is None:
            if len(self._scanned) >= 8:
                self._scanned.pop(next(iter(self._scanned)))
            number, text = self.lines[index]
            found = ({}, {})
            _JsonScan(*found, []).scan(text, _Lines(text, number), (self.member_key, index))
            self._scanned[index] = found
        return found


class _LinePositions(Mapping[JsonPath, tuple[int, int]]):
    """The places a JSONL document knows: the header's, kept, and the member lines', found when
    looked up (:class:`_MemberLines`). ``keys``: the places of mapping keys, not values."""

    def __init__(self, known: dict[JsonPath, tuple[int, int]], members: _MemberLines, *, keys: bool = False) -> None:
        self._known = known
        self._members = members
        self._keys = keys

    def __getitem__(self, path: JsonPath) -> tuple[int, int]:
        found = self._known.get(path)
        if found is None:
            index = self._members.index_of(path)
            if index is not None:
                found = self._members.places(index)[self._keys].get(path)
        if found is None:
            raise KeyError(path)
        return found

    def __iter__(self) -> Iterator[JsonPath]:
        yield from self._known
        for index in range(len(self._members.lines)):
            yield from self._members.places(index)[self._keys]

    def __len__(self) -> int:
        return sum(1 for _ in self)


# --- TOML -------------------------------------------------------------------------------------

_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")
_TOML_TABLE = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_TOML_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+|\"[^\"]*\")\s*=")


def _long_number_problem(file: Path, text: str, syntax: str) -> FileSyntaxError:
    """The problem of a file holding a number longer than Python converts, at its line and column."""
    at = long_number_at(text)
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return FileSyntaxError([FileProblem(str(file), f"{syntax} syntax: {TOO_MANY_DIGITS}", (), line, column)])


def _read_toml(file: Path, text: str) -> SetDocument:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _TOML_POSITION.search(message)
        line, column = (int(found.group(1)), int(found.group(2))) if found else (None, None)
        reason = _TOML_POSITION.sub("", message).strip()
        raise FileSyntaxError([FileProblem(str(file), f"TOML syntax: {reason}", (), line, column)]) from None
    except RecursionError:
        raise FileSyntaxError(
            [FileProblem(str(file), "TOML syntax: arrays or inline tables nested too deeply")]
        ) from None
    except ValueError as exc:
        if not too_many_digits(exc):
            raise
        raise _long_number_problem(file, text, "TOML") from None
    _refuse_deep(file, data)
    positions, keys = _toml_positions(text)
    return SetDocument(file, data, positions, keys)


def _toml_positions(text: str) -> tuple[dict[JsonPath, tuple[int, int]], dict[JsonPath, tuple[int, int]]]:
    """Lines of ``[table]`` / ``[[array.of.tables]]`` headers and of ``key =`` lines under them."""
    positions: dict[JsonPath, tuple[int, int]] = {(): (1, 1)}
    keys: dict[JsonPath, tuple[int, int]] = {}
    indexes: dict[str, int] = {}
    current: JsonPath = ()
    for number, line in enumerate(text.split("\n"), start=1):  # TOML's only line end (U+2028 is text)
        table = _TOML_TABLE.match(line)
        if table:
            name = table.group(2).replace(" ", "")
            if table.group(1) == "[[":
                indexes[name] = indexes.get(name, -1) + 1
                for other in [n for n in indexes if n.startswith(name + ".")]:
                    del indexes[other]
            path: list[str | int] = []
            segments = name.split(".")
            for count in range(1, len(segments) + 1):
                path.append(segments[count - 1].strip('"'))
                prefix = ".".join(segments[:count])
                if prefix in indexes:
                    path.append(indexes[prefix])
            current = tuple(path)
            positions.setdefault(current, (number, 1))
            continue
        key = _TOML_KEY.match(line)
        if key:
            name = key.group(1).strip('"')
            where = (number, line.index(key.group(1)) + 1)
            keys.setdefault(current + (name,), where)
            positions.setdefault(current + (name,), where)
    return positions, keys
