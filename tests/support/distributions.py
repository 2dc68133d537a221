"""Real plugin distributions for tests, installed with pip into their own folders.

A test adds a folder to ``PYTHONPATH`` for one ``evalkit`` command, so a deliberately broken or
clashing distribution is installed for real without touching the shared test environment.
The distributions declare ``dependencies = ["evalkit-golden"]`` like real plugins; they are
installed with ``--no-deps`` because the kernel under test is already installed, so nothing is
ever fetched from an index.

Every pip call costs seconds (its start-up, a build back-end per distribution), and the suite asks
for some twenty combinations: :class:`TestDistributions` installs every distribution of
``tests/data`` in one pip call into a staging folder, and makes the folder of a combination by
copying the files each of its distributions' ``RECORD`` lists — what ``pip install --target`` of
just those distributions leaves.
"""

from __future__ import annotations

import csv
import fcntl
import shutil
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"


def install_into(target: Path, *names: str) -> Path:
    """pip-install the test distributions ``names`` (folders under tests/data) into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    paths = [str(DATA / name) for name in names]
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(target), *paths],
        check=True,
        capture_output=True,
        text=True,
    )
    return target


def write_distribution(
    folder: Path,
    name: str,
    version: str,
    entry_points: dict[str, dict[str, str]],
    modules: dict[str, str] | None = None,
    *,
    info: str | None = None,
) -> Path:
    """Lay out an installed distribution by hand in ``folder`` (a ``sys.path`` entry): its
    ``NAME-VERSION.dist-info`` with ``METADATA`` and ``entry_points.txt``, and ``modules``
    (file name → source) beside it. Quicker than pip for tests that need several versions of one
    distribution, or a plugin module that misbehaves at import. ``info`` names the ``.dist-info``
    folder instead (``NAME-VERSION``, without the suffix), for a name or version no file name can
    hold (a ``METADATA`` written by hand may say anything). Returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    info_folder = folder / f"{info or name.replace('-', '_') + '-' + version}.dist-info"
    info_folder.mkdir()
    (info_folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nA test distribution.\n")
    sections = [f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in members.items()) for group, members in entry_points.items()]
    (info_folder / "entry_points.txt").write_text("\n".join(sections))
    for filename, source in (modules or {}).items():
        (folder / filename).write_text(source)
    return folder


class TestDistributions:
    """The distributions of tests/data, installed once into ``staging`` (on first use)."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self, staging: Path) -> None:
        self.staging = staging
        self._installed = False
        self._lock = threading.Lock()

    def install(self, target: Path, *names: str) -> Path:
        """A folder ``target`` holding the distributions ``names`` (folders under tests/data) as
        pip installs them, and nothing else."""
        self._install_all()
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            for relative in _recorded_files(self.staging, _distribution_name(name)):
                destination = target / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.staging / relative, destination)
        return target

    def _install_all(self) -> None:
        # pytest-xdist's workers share one staging folder (see the plugin_dists fixture): the first
        # to get here installs, under a lock file every worker takes, and leaves a mark the others
        # find; in one process the thread lock alone would do.
        with self._lock:
            if self._installed:
                return
            self.staging.mkdir(parents=True, exist_ok=True)
            with open(self.staging.parent / f"{self.staging.name}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                done = self.staging / ".installed"
                if not done.exists():
                    install_into(self.staging, *sorted(p.name for p in DATA.iterdir() if (p / "pyproject.toml").is_file()))
                    done.touch()
            self._installed = True


def _distribution_name(folder: str) -> str:
    """The normalised project name (as in ``NAME-VERSION.dist-info``) of the distribution in tests/data/``folder``."""
    with open(DATA / folder / "pyproject.toml", "rb") as file:
        name = tomllib.load(file)["project"]["name"]
    return name.lower().replace("-", "_").replace(".", "_")


def _recorded_files(staging: Path, name: str) -> list[Path]:
    """The files pip installed for distribution ``name`` into ``staging``, from its RECORD."""
    (info,) = staging.glob(f"{name}-*.dist-info")
    with open(info / "RECORD", encoding="utf-8", newline="") as record:
        paths = [Path(row[0]) for row in csv.reader(record) if row]
    return [path for path in paths if not path.is_absolute() and ".." not in path.parts]  # scripts land outside the folder
