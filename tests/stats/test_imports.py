"""evalkit computes its statistics with the standard library: importing the statistics modules
(or the verdict that uses them) loads none of the test oracles, nor numpy."""

from __future__ import annotations

import json
import subprocess
import sys

ORACLES = ("scipy", "statsmodels", "sklearn", "krippendorff", "numpy", "hypothesis")


def test_statistics_modules_import_no_oracle() -> None:
    code = (
        "import json, sys\n"
        "import evalkit.stats, evalkit.agreement, evalkit.verdict\n"
        "from evalkit.stats import comparison, distributions, gate, power, repeats, resampling\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {ORACLES!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(done.stdout) == []
