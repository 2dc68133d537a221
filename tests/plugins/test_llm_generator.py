"""The ``llm`` adapter without the optional llm library: refused with the install line, exit 2."""

from __future__ import annotations

import sqlite3
import sys


def test_the_llm_adapter_without_the_library_is_refused_with_how_to_install_it(project, evalkit_cli, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "llm", None)  # as if it were not installed (the test extra installs it)
    (project / "evalkit.toml").write_text('[providers.local]\nadapter = "llm"\nmodel = "SmolLM2"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "local")
    assert result.code == 2
    assert 'The "llm" adapter needs the llm library: pip install "evalkit-golden[llm]"' in result.stderr
    store = project / ".evalkit" / "results.db"
    if store.exists():
        with sqlite3.connect(store) as connection:
            assert connection.execute("SELECT COUNT(*) FROM evalkit_run").fetchone() == (0,)


def test_evalkit_list_shows_the_llm_adapter(evalkit_cli) -> None:
    result = evalkit_cli("list", "plugins")
    assert result.code == 0
    assert "llm" in result.stdout.split()
