"""Write ``evalkit_set_stdlib/corpus.jsonl`` from the docstrings of the running Python's standard library.

Each record is one module, class, function or method: ``{"id": "json.loads", "title": "json.loads",
"text": "<signature and the first paragraphs of its docstring>"}``; builtins go without a module
prefix (``open``, ``str.split``), as the Python documentation names them. The docstrings are part
of CPython and are distributed under the PSF License (see ``NOTICE``). Output is deterministic for
a given Python build; the committed corpus was generated with the Python named in ``NOTICE``.

    python build_corpus.py                 # rewrites evalkit_set_stdlib/corpus.jsonl
    python build_corpus.py --output FILE   # writes elsewhere (the tests compare)
"""

from __future__ import annotations

import argparse
import builtins
import importlib
import inspect
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent / "evalkit_set_stdlib" / "corpus.jsonl"

MODULES = [
    "argparse", "asyncio", "base64", "bisect", "calendar", "collections", "concurrent.futures", "configparser",
    "contextlib", "copy", "csv", "dataclasses", "datetime", "decimal", "difflib", "enum", "fnmatch", "fractions",
    "functools", "getpass", "glob", "gzip", "hashlib", "heapq", "hmac", "html", "http.client", "http.server", "io",
    "itertools", "json", "logging", "math", "mimetypes", "operator", "os", "os.path", "pathlib", "pickle",
    "platform", "pprint", "queue", "random", "re", "secrets", "shlex", "shutil", "signal", "smtplib", "socket",
    "sqlite3", "statistics", "string", "struct", "subprocess", "sys", "tarfile", "tempfile", "textwrap",
    "threading", "time", "timeit", "tomllib", "traceback", "typing", "unicodedata", "unittest", "urllib.parse",
    "urllib.request", "uuid", "warnings", "weakref", "xml.etree.ElementTree", "zipfile", "zoneinfo",
]  # fmt: skip

#: Classes whose public methods get records of their own.
CLASSES_WITH_METHODS = [
    "str", "bytes", "list", "dict", "set", "int", "float",
    "pathlib.Path", "pathlib.PurePath", "datetime.datetime", "datetime.date", "datetime.timedelta",
    "collections.Counter", "collections.deque", "collections.OrderedDict", "re.Pattern", "re.Match",
    "subprocess.Popen", "zipfile.ZipFile", "tarfile.TarFile", "sqlite3.Connection", "sqlite3.Cursor",
    "logging.Logger", "argparse.ArgumentParser", "threading.Thread", "threading.Event",
    "concurrent.futures.Executor", "concurrent.futures.Future", "queue.Queue", "csv.DictWriter",
    "configparser.ConfigParser", "unittest.TestCase", "unittest.mock.Mock", "string.Template",
    "xml.etree.ElementTree.Element", "io.StringIO", "io.BytesIO", "decimal.Decimal", "fractions.Fraction",
    "uuid.UUID", "socket.socket", "asyncio.Queue", "asyncio.Task", "smtplib.SMTP",
]  # fmt: skip

BUILTIN_FUNCTIONS = sorted(
    name
    for name, obj in vars(builtins).items()
    if (not name.startswith("_") and inspect.isbuiltin(obj)) or name in {"range", "enumerate", "zip", "map", "filter"}
)

MAX_CHARS = 900
#: Default values print with their memory address, which would make every build differ.
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def summary(obj: object) -> str | None:
    """The docstring's first paragraphs, up to about ``MAX_CHARS`` characters; None without a docstring."""
    doc = obj.__doc__ if isinstance(getattr(obj, "__doc__", None), str) else None
    if not doc and inspect.isclass(obj) and "__init__" in vars(obj):
        doc = getattr(vars(obj)["__init__"], "__doc__", None)
    if not doc or not doc.strip():
        return None
    paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(doc).split("\n\n") if p.strip()]
    kept: list[str] = []
    for paragraph in paragraphs:
        if kept and len(" ".join(kept)) + len(paragraph) > MAX_CHARS:
            break
        kept.append(paragraph)
        if len(kept) == 3:
            break
    text = "\n\n".join(kept)
    return text if len(text) <= MAX_CHARS * 2 else text[: MAX_CHARS * 2].rsplit(" ", 1)[0] + " …"


def signature(obj: object) -> str:
    """``(args)`` when Python can tell, else ''."""
    if not callable(obj):
        return ""
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""
    return _ADDRESS.sub("", text)


def record(identifier: str, obj: object) -> dict[str, str] | None:
    """The corpus record of one object, None when it has no docstring."""
    text = summary(obj)
    if text is None:
        return None
    sig = signature(obj) if not inspect.ismodule(obj) else ""
    if sig and not text.startswith(identifier.rsplit(".", 1)[-1] + "("):
        text = f"{identifier}{sig}\n\n{text}"
    return {"id": identifier, "title": identifier, "text": text}


def belongs(obj: object, module: object, name: str) -> bool:
    """Whether ``obj`` is defined by the module (or its C accelerator) rather than imported into it."""
    owner = getattr(obj, "__module__", None)
    real = getattr(module, "__name__", name)
    return owner in {name, real, "_" + real.rsplit(".", 1)[-1], "_" + name.rsplit(".", 1)[-1]}


def module_members(name: str) -> Iterator[tuple[str, object]]:
    """The module itself, then its public classes and functions (``__all__`` when it declares one)."""
    module = importlib.import_module(name)
    yield name, module
    declared = getattr(module, "__all__", None)
    names = sorted(declared) if declared is not None else sorted(vars(module))
    for member in names:
        if member.startswith("_"):
            continue
        obj = getattr(module, member, None)
        if not (inspect.isclass(obj) or inspect.isroutine(obj)):
            continue
        if declared is None and not belongs(obj, module, name):
            continue
        yield f"{name}.{member}", obj


def resolve(dotted: str) -> object:
    """The object a dotted name (``pathlib.Path``, ``str``) stands for."""
    if "." not in dotted:
        return getattr(builtins, dotted)
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            obj = getattr(obj, attribute)
        return obj
    raise LookupError(dotted)


def class_members(dotted: str) -> Iterator[tuple[str, object]]:
    """The class, then the public methods and properties it defines itself."""
    cls = resolve(dotted)
    yield dotted, cls
    for member, obj in sorted(vars(cls).items()):
        if member.startswith("_"):
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if inspect.isroutine(obj) or isinstance(obj, property):
            yield f"{dotted}.{member}", obj


def entries() -> Iterator[dict[str, str]]:
    """Every record, builtins first, each identifier once."""
    seen: set[str] = set()
    sources: list[Iterator[tuple[str, object]]] = [iter((n, getattr(builtins, n)) for n in BUILTIN_FUNCTIONS)]
    sources += [module_members(m) for m in MODULES]
    sources += [class_members(c) for c in CLASSES_WITH_METHODS]
    for source in sources:
        for identifier, obj in source:
            if identifier in seen:
                continue
            item = record(identifier, obj)
            if item is not None:
                seen.add(identifier)
                yield item


def main(argv: list[str] | None = None) -> None:
    """Write the corpus and report its size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"where to write (default: {OUTPUT})")
    output = parser.parse_args(argv).output
    items = list(entries())
    output.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    print(f"{output}: {len(items)} documents, {output.stat().st_size / 1e6:.2f} MB, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
