"""Discovery: one metadata scan per process (shadowing as importlib.metadata does), loading through
stevedore's managers with every failure named, the deny-list, and clashing names."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from evalkit import registry
from evalkit.errors import PluginError, UnknownPluginError
from evalkit.plugin_managers import GroupManager

from tests.support.distributions import write_distribution

GRADERS = "evalkit.graders"


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[..., None]]:
    """Put folders at the front of ``sys.path`` (the first one given first) and forget the scan;
    afterwards, forget the plugin modules imported from ``tmp_path``."""

    def put(*folders: Path) -> None:
        for folder in reversed(folders):
            monkeypatch.syspath_prepend(str(folder))
        registry.forget()

    yield put
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def _graders() -> dict[str, registry.PluginRecord]:
    return {r.name: r for r in registry.records(GRADERS)}


@pytest.mark.parametrize("newer_first", [True, False], ids=["newer-first", "older-first"])
def test_the_first_distribution_of_a_name_on_sys_path_shadows_the_others(tmp_path: Path, on_path, newer_first: bool) -> None:
    newer = write_distribution(tmp_path / "newer", "evalkit-shadow", "2.0", {GRADERS: {"shadow_new": "json:dumps"}})
    older = write_distribution(tmp_path / "older", "evalkit-shadow", "1.0", {GRADERS: {"shadow_old": "json:loads"}})
    on_path(*((newer, older) if newer_first else (older, newer)))
    graders = _graders()
    shown, hidden, version = ("shadow_new", "shadow_old", "2.0") if newer_first else ("shadow_old", "shadow_new", "1.0")
    assert hidden not in graders
    assert graders[shown].distribution == "evalkit-shadow" and graders[shown].version == version


def test_a_distributions_name_and_version_are_kept_to_200_characters(tmp_path: Path, on_path) -> None:
    """A METADATA is anyone's to write: a Name or Version of 1,000,000 characters was in every
    record, and so in every line naming the plugin. The scan keeps 200 characters of each and the
    length; the plugin is found and loaded as before."""
    name, version = "evalkit-huge-" + "n" * 999_987, "1." + "0" * 999_998
    on_path(write_distribution(tmp_path / "huge", name, version, {GRADERS: {"huge": "json:dumps"}}, info="evalkit_huge-1.0"))
    record = _graders()["huge"]
    assert registry.MAX_METADATA_CHARS == 200
    assert record.distribution == name[:200] + "… (1,000,000 characters)"
    assert record.version == version[:200] + "… (1,000,000 characters)"
    assert record.describe() == f'"huge" ({record.distribution} {record.version})' and len(record.describe()) < 500
    assert registry.load(record) is json.dumps


def test_an_entry_point_whose_name_or_value_sprawls_is_refused_at_the_scan_naming_its_distribution(tmp_path: Path, on_path) -> None:
    """An entry point's name is how a plugin is found, so it cannot be cut; one of 1,000,000
    characters (or a value of as many) was printed whole in every listing naming it. The scan
    refuses it as a failure naming the distribution and the cut name; the distribution's others
    are records, found and loaded as before."""
    long_name, long_value = "g" * 1_000_000, "json:" + "d" * 999_995
    entry_points = {GRADERS: {long_name: "json:dumps", "fits": "json:dumps", "far": long_value, "g" * 200: "json:loads"}}
    on_path(write_distribution(tmp_path / "sprawl", "evalkit-sprawl", "1.0", entry_points))
    graders = _graders()
    assert {"fits", "g" * 200} <= set(graders) and long_name not in graders and "far" not in graders
    assert registry.load(graders["fits"]) is json.dumps
    refused = registry.refused(GRADERS)
    assert [(f.record.name, f.record.value, f.record.distribution, f.record.version) for f in refused] == [
        ("g" * 60 + "… (1,000,000 characters)", "json:dumps", "evalkit-sprawl", "1.0"),
        ("far", "json:" + "d" * 55 + "… (1,000,000 characters)", "evalkit-sprawl", "1.0"),
    ]  # fmt: skip
    assert refused[0].error == (
        "the entry point is refused: its name is 1,000,000 characters long, more than the 200 allowed; it is neither listed nor loaded"
    )
    assert "its value is 1,000,000 characters long, more than the 1,000 allowed" in refused[1].error
    assert registry.refused("evalkit.reporters") == () and len(registry.refused()) == 2
    with pytest.raises(UnknownPluginError):
        registry.find(GRADERS, long_name)


def test_a_distribution_put_on_sys_path_after_the_scan_is_found_once_the_scan_is_forgotten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry.scan()
    folder = write_distribution(tmp_path / "late", "evalkit-late", "1.0", {GRADERS: {"late": "json:dumps"}})
    monkeypatch.syspath_prepend(str(folder))
    assert "late" not in _graders(), "read once per process"
    registry.forget()
    assert _graders()["late"].describe() == "\"late\" (evalkit-late 1.0)"
    monkeypatch.undo()
    assert "late" in _graders()
    assert "late" not in {r.name for r in registry.scan(refresh=True) if r.group == GRADERS}, "the old name still forgets"


def test_an_entry_point_written_in_place_moments_later_is_seen(tmp_path: Path, on_path) -> None:
    """A plugin author adds an entry point and reinstalls: same folder, same path, the same second.
    stevedore's cache keys on modification times packed as 32-bit floats (~2 minutes apart at
    today's clock) and would serve the earlier listing; the scan reads the metadata itself."""
    folder = write_distribution(tmp_path / "site", "evalkit-growing", "1.0", {GRADERS: {"first": "json:dumps"}})
    on_path(folder)
    assert "second" not in _graders()
    info = folder / "evalkit_growing-1.0.dist-info" / "entry_points.txt"
    info.write_text(f"[{GRADERS}]\nfirst = json:dumps\nsecond = json:loads\n")
    registry.forget()
    assert {"first", "second"} <= set(_graders())


def test_stevedores_class_level_cache_is_left_alone() -> None:
    from stevedore.extension import ExtensionManager

    before = dict(ExtensionManager.ENTRY_POINT_CACHE)
    registry.driver(GRADERS, "deterministic")
    registry.load_group("evalkit.golden_sets")
    assert ExtensionManager.ENTRY_POINT_CACHE == before


FRAGILE = {
    "evalkit_fragile_fine.py": "class Grader:\n    pass\n",
    "evalkit_fragile_missing.py": "import evalkit_no_such_dependency\n",
    "evalkit_fragile_raises.py": "raise RuntimeError('the licence file is missing')\n",
    "evalkit_fragile_exits.py": "import sys\nsys.exit(3)\n",
    "evalkit_fragile_asserts.py": "assert False, 'run me with python -O'\n",
}


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("missing", "ModuleNotFoundError: No module named 'evalkit_no_such_dependency'"),
        ("raising", "RuntimeError: the licence file is missing"),
        ("exiting", "SystemExit: 3"),
        ("asserting", "AssertionError: run me with python -O"),
    ],
)
def test_a_plugin_that_fails_to_load_is_named_and_the_others_still_load(tmp_path: Path, on_path, name: str, reason: str) -> None:
    folder = write_distribution(
        tmp_path / "site",
        "evalkit-fragile",
        "1.0",
        {GRADERS: {"fine": "evalkit_fragile_fine:Grader", "missing": "evalkit_fragile_missing:Grader",
                   "raising": "evalkit_fragile_raises:Grader", "exiting": "evalkit_fragile_exits:Grader",
                   "asserting": "evalkit_fragile_asserts:Grader"}},
        FRAGILE,
    )
    on_path(folder)
    loaded = {item.record.name: item for item in registry.load_group(GRADERS)}
    assert loaded["fine"].error is None and loaded["fine"].plugin.__name__ == "Grader"
    assert loaded["deterministic"].error is None, "built-in graders load beside the broken ones"
    failed = loaded[name]
    assert failed.plugin is None
    assert str(failed.error) == f'grader "{name}" (evalkit-fragile 1.0) failed to load: {reason}'
    assert failed.error.distribution == "evalkit-fragile"
    with pytest.raises(PluginError, match=rf'^grader "{name}" \(evalkit-fragile 1\.0\) failed to load: '):
        registry.driver(GRADERS, name)


def test_a_disabled_plugin_is_neither_found_nor_imported(tmp_path: Path, on_path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_distribution(
        tmp_path / "site", "evalkit-quiet", "1.0", {GRADERS: {"quiet": "evalkit_quiet_grader:Grader"}},
        {"evalkit_quiet_grader.py": "class Grader:\n    pass\n"},
    )
    on_path(folder)
    monkeypatch.setenv(registry.DISABLE_ENV, " quiet , other")
    with pytest.raises(UnknownPluginError) as caught:
        registry.find(GRADERS, "quiet")
    assert "quiet" not in caught.value.available and "deterministic" in caught.value.available
    assert "quiet" not in {item.record.name for item in registry.load_group(GRADERS)}
    assert "evalkit_quiet_grader" not in sys.modules
    assert "quiet" in _graders(), "still listed"
    monkeypatch.delenv(registry.DISABLE_ENV)
    assert registry.driver(GRADERS, "quiet")[1].__module__ == "evalkit_quiet_grader"


def test_one_name_declared_by_two_distributions_is_an_error_naming_both(tmp_path: Path, on_path) -> None:
    first = write_distribution(tmp_path / "a", "evalkit-twin-a", "1.0", {GRADERS: {"twin": "json:dumps"}})
    second = write_distribution(tmp_path / "b", "evalkit-twin-b", "2.5", {GRADERS: {"twin": "json:loads"}})
    on_path(first, second)
    with pytest.raises(PluginError) as caught:
        registry.driver(GRADERS, "twin")
    assert str(caught.value) == (
        'grader "twin" is declared by more than one distribution: evalkit-twin-a 1.0, evalkit-twin-b 2.5; keep the one you '
        "want by switching the other off by distribution and name (EVALKIT_DISABLE_PLUGINS=evalkit-twin-a:twin or "
        "EVALKIT_DISABLE_PLUGINS=evalkit-twin-b:twin), or uninstall it"
    )


def test_an_unknown_name_lists_the_installed_ones() -> None:
    with pytest.raises(UnknownPluginError, match=r'Unknown grader "determinstic"\. Did you mean "deterministic"\?'):
        registry.driver(GRADERS, "determinstic")
    record, factory = registry.driver(GRADERS, "deterministic")
    assert (record.distribution, factory.__name__) == ("evalkit-golden", "DeterministicGrader")


def test_a_group_manager_lists_its_records_and_imports_only_what_it_names(tmp_path: Path, on_path) -> None:
    folder = write_distribution(
        tmp_path / "site", "evalkit-lazy", "1.0",
        {GRADERS: {"lazy_a": "evalkit_lazy_a:Grader", "lazy_b": "evalkit_lazy_b:Grader"}},
        {"evalkit_lazy_a.py": "class Grader:\n    pass\n", "evalkit_lazy_b.py": "class Grader:\n    pass\n"},
    )
    on_path(folder)
    records = registry.records(GRADERS)

    def fail(manager: object, entry_point: object, exc: BaseException) -> None:
        raise AssertionError(f"nothing should fail: {exc}")

    listing = GroupManager(GRADERS, records, [], fail)
    assert listing.list_entry_points() == list(records) and listing.extensions == []
    assert "evalkit_lazy_a" not in sys.modules and "evalkit_lazy_b" not in sys.modules
    one = GroupManager(GRADERS, records, ["lazy_b"], fail)
    assert [e.entry_point.describe() for e in one.extensions] == ["\"lazy_b\" (evalkit-lazy 1.0)"]
    assert "evalkit_lazy_a" not in sys.modules and "evalkit_lazy_b" in sys.modules


def test_a_distribution_in_a_zip_archive_on_sys_path_is_found(tmp_path: Path, on_path) -> None:
    import zipfile

    folder = write_distribution(tmp_path / "unzipped", "evalkit-zipped", "1.0", {GRADERS: {"zipped": "json:dumps"}})
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in folder.rglob("*"):
            zipped.write(path, path.relative_to(folder).as_posix())
    on_path(archive)
    record, factory = registry.driver(GRADERS, "zipped")
    assert record.describe() == "\"zipped\" (evalkit-zipped 1.0)" and factory.__name__ == "dumps"
