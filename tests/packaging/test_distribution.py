"""The kernel's wheel and sdist install into a fresh environment, and a set package needs nothing more.

The installs stay off the network where the machine has local package indexes (``file://`` URLs in
pip's configuration): the kernel's own dependencies come from there. The set is installed in a
second pip call with ``--no-index``: it succeeds only if its ``evalkit-golden`` requirement is
already satisfied by the kernel just installed, so it provably pulls nothing else.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARITH = ROOT / "contrib_sets" / "evalkit-set-arith"

pytestmark = pytest.mark.slow


def build(project: Path, out: Path, kinds: tuple[str, ...] = ("wheel", "sdist")) -> dict[str, Path]:
    """Build with hatchling's PEP 517 hooks (``python -m build`` is not needed)."""
    script = (
        "import os, sys\nfrom hatchling import build\n"
        "out = sys.argv[1]\n"
        "for kind in sys.argv[2:]:\n"
        "    print(kind, getattr(build, 'build_' + kind)(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(out), *kinds], cwd=project, capture_output=True, text=True, check=True)
    return {kind: out / name for kind, name in (line.split(" ", 1) for line in done.stdout.split("\n") if line)}


def local_indexes() -> list[str]:
    """The machine's ``file://`` package indexes from pip's configuration, if it has any."""
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False)
    urls: list[str] = []
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(("index-url", "extra-index-url")):
            urls += [u for u in value.strip().strip("'\"").split() if u.startswith("file://")]
    return urls


def pip(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", *args],
        capture_output=True, text=True, env=environment, timeout=600,
    )


def test_wheel_and_sdist_install_into_a_fresh_venv_and_a_set_package_pulls_nothing_else(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    kernel = build(ROOT, dist)
    arith = build(ARITH, dist, ("wheel",))["wheel"]

    wheel_files = set(zipfile.ZipFile(kernel["wheel"]).namelist())
    for shipped in ("evalkit/schemas/golden-set.schema.json", "evalkit/schemas/question-set.schema.json",
                    "evalkit/starter/example.yaml", "evalkit/pytest_plugin.py", "evalkit_plugins/file_sets.py",
                    "evalkit/view/templates/run.html", "evalkit/view/static/viewer.js", "evalkit/view/static/viewer.css"):
        assert shipped in wheel_files, shipped
    metadata = zipfile.ZipFile(kernel["wheel"]).read(next(n for n in wheel_files if n.endswith("METADATA"))).decode()
    assert "Name: evalkit-golden" in metadata and "requires-dist: pyyaml" in metadata.lower()

    # The sdist is complete: a wheel built from it holds the same files.
    with tarfile.open(kernel["sdist"]) as archive:
        archive.extractall(tmp_path / "sdist", filter="data")
    (unpacked,) = (tmp_path / "sdist").iterdir()
    rebuilt = build(unpacked, tmp_path / "rebuilt", ("wheel",))["wheel"]
    assert set(zipfile.ZipFile(rebuilt).namelist()) == wheel_files

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    indexes = local_indexes()
    sources = ["--no-index", "--find-links", str(dist)] if not indexes else [
        "--index-url", indexes[0], *(a for u in indexes[1:] for a in ("--extra-index-url", u)), "--find-links", str(dist),
    ]
    first = pip(venv, *sources, str(kernel["wheel"]))
    assert first.returncode == 0, first.stdout + first.stderr

    second = pip(venv, "--no-index", str(arith))
    assert second.returncode == 0, second.stdout + second.stderr
    installed = [line for line in second.stdout.splitlines() if line.startswith("Successfully installed")]
    assert installed == ["Successfully installed evalkit-set-arith-0.1.0"]

    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EVALKIT_DATABASE_URL")}
    environment.update({"NO_COLOR": "1", "COLUMNS": "200"})
    listed = subprocess.run([str(venv / "bin" / "evalkit"), "list", "sets"], capture_output=True, text=True, cwd=tmp_path, env=environment)
    assert listed.returncode == 0, listed.stderr
    assert "arith.basic" in listed.stdout and "evalkit-set-arith 0.1.0" in listed.stdout
    assert "evalkit.smoke" in listed.stdout and "evalkit-golden 0.1.0" in listed.stdout

    project = tmp_path / "project"
    project.mkdir()
    for command in (["init"], ["run", "starter.faq", "--provider", "recorded"], ["schema", "golden-set"]):
        done = subprocess.run([str(venv / "bin" / "evalkit"), *command], capture_output=True, text=True, cwd=project, env=environment)
        assert done.returncode == 0, (command, done.stdout, done.stderr)

    # Without the view extra, `evalkit view` says which extra to install (and serves nothing).
    view = subprocess.run([str(venv / "bin" / "evalkit"), "view", "--port", "0"], capture_output=True, text=True, cwd=project, env=environment, timeout=120)
    assert view.returncode == 2 and 'pip install "evalkit-golden[view]"' in view.stderr, (view.stdout, view.stderr)


def test_no_document_tells_anyone_to_pip_install_the_unrelated_evalkit() -> None:
    import re

    pattern = re.compile(r"pip install\s+['\"]?evalkit(?:\[|['\"]?\s|['\"]?$)", re.M)
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        assert not pattern.search(path.read_text(encoding="utf-8")), path


def test_every_install_command_of_the_docs_works_from_a_clean_clone() -> None:
    """`pip install "evalkit-golden[postgres]" ./evals` in docs/ci.md's workflows (and the viewer's
    `pip install "evalkit-golden[view]"`) asked an index for a distribution that is not published:
    it works only where evalkit is installed already, never in a fresh CI job. A command in a page's
    code block installs evalkit from a path (`-e ".[view]"`, `./evalkit`) or a git URL
    (`"evalkit-golden[postgres] @ git+https://…"`), never by name."""
    import re

    fence = re.compile(r"^\s*```.*?^\s*```", re.M | re.S)
    by_name = re.compile(r"""pip install\b[^\n#]*?(?<![\w./-])['"]?evalkit-golden(?:\[[\w,]+\])?['"]?(?!\s*@)(?=\s|$)""")
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in fence.findall(path.read_text(encoding="utf-8")):
            found += [f"{path.name}: {line.strip()}" for line in block.splitlines() if by_name.search(line)]
    assert not found, found
    # the pattern finds the command the docs used to give, and passes the ones they give now
    assert by_name.search('      - run: pip install "evalkit-golden[postgres]" ./evals')
    assert not by_name.search('      - run: pip install "evalkit-golden[postgres] @ $EVALKIT_SOURCE" ./evals')
    assert not by_name.search('.venv/bin/pip install -e ".[view]"')
