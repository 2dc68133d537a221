"""How long the viewer's pages take on a 100,000-case run, and what it holds in memory.

The script writes a SQLite store through the repository (the public API, as ``evalkit run``
does): a baseline run and a run of ``--cases`` cases each at privacy ``full`` (answers of about
260 characters), one failing case in ten in the baseline and one in seven in the run, a case in
97 edited; the run's stored verdict names the baseline (regressed). It then opens the viewer
(``evalkit.view.create_app``) and asks for each page through Starlette's TestClient, printing the
wall time of every request — the first request for a run reads its cases once into the run's
index, later ones cut pages from it — and the process's peak resident memory.

    python bench/viewer.py [--cases 100000] [--store PATH]   # --store keeps (or reuses) the file
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

from evalkit import CaseResult, Check, Run, ServingIdentity
from evalkit.answers import Usage
from evalkit.storage import StoredVerdict, close_repository, open_repository

ROOT = Path(__file__).resolve().parent.parent
WHO = ServingIdentity("app", "app", "app-2025-01")


def build(url: str, cases: int) -> None:
    """The two runs, committed 2,000 cases a transaction."""
    repository = open_repository(url)
    try:
        for run_id, failing_every in (("base", 10), ("run", 7)):
            started = time.time()
            repository.begin_run(Run(id=run_id, set_identifier="bench.viewer", grader="deterministic", case_count=cases,
                                     privacy="full", fingerprints_kept=True, started_at=started))  # fmt: skip
            batch = []
            for n in range(cases):
                passed = n % failing_every != 0
                edited = n % 97 == 0 and run_id == "run"
                batch.append(CaseResult(
                    case_id=f"case-{n:06d}", passed=passed, score=1.0 if passed else 0.0,
                    checks=(Check("stated_the_fact", passed, None, None if passed else "contains('Paris') did not hold"),),
                    latency_s=0.2 + (n * 37 % 100) / 100, identity=WHO, yardstick="deterministic",
                    answer_text=f"Answer {n} of {run_id}: " + "the capital of France is Paris, " * 8,
                    usage=Usage(40, 60), fingerprint=f"sha256:{n}{'-edited' if edited else ''}", finished_at=started,
                ))  # fmt: skip
                if len(batch) == 2000:
                    repository.record_cases(run_id, batch, "full")
                    batch = []
            repository.record_cases(run_id, batch, "full")
            repository.finish_run(run_id, "complete", time.time(), grader="deterministic", identity=WHO, with_cases=False)
        repository.record_verdict("base", StoredVerdict("baseline", None, "the first run"))
        repository.record_verdict("run", StoredVerdict("regressed", "base", "Regression: pass rate dropped"))
    finally:
        close_repository(repository)


def main() -> None:
    """Build (or reuse) the store, then time the pages."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--store", type=Path, help="keep the store here (reused when it exists)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="evalkit-viewer-bench-"))
    path = args.store or folder / "results.db"
    url = f"sqlite:///{path}"
    if not path.exists():
        started = time.perf_counter()
        build(url, args.cases)
        print(f"built {args.cases:,} cases x 2 runs in {time.perf_counter() - started:.1f} s ({path})")

    warnings.simplefilter("ignore")  # starlette's TestClient over httpx warns about httpx2
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    app = create_app(url, port=8765)
    last = f"case-{args.cases - 1:06d}"
    requests = [
        ("sets page", "/", {}),
        ("set page (runs, trend)", "/set", {"id": "bench.viewer"}),
        ("run page, first request (reads both runs' indexes)", "/run", {"id": "run"}),
        ("run page again", "/run", {"id": "run"}),
        ("filter regressed", "/run", {"id": "run", "filter": "regressed"}),
        ("filter failed, page 200", "/run", {"id": "run", "filter": "failed", "page": "200"}),
        ("last page (reads to the run's end)", "/run", {"id": "run", "page": str(-(-args.cases // 50))}),
        ("sort by latency, descending", "/run", {"id": "run", "sort": "latency", "order": "desc"}),
        ("text search (every case read)", "/run", {"id": "run", "q": "answer 99999 of"}),
        ("the same search, next page", "/run", {"id": "run", "q": "answer 99999 of", "page": "2"}),
        ("regex search", "/run", {"id": "run", "q": r"^Answer 1234\d of", "regex": "1"}),
        ("the last case's page", "/case", {"run": "run", "id": last}),
        ("compare, changed cases first", "/compare", {"base": "base", "run": "run"}),
        ("compare, page 100", "/compare", {"base": "base", "run": "run", "page": "100"}),
    ]
    print(f"{'page':<52} {'seconds':>8} {'KiB':>7}")
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        for label, route, params in requests:
            started = time.perf_counter()
            response = client.get(route, params=params)
            elapsed = time.perf_counter() - started
            assert response.status_code == 200, (label, response.status_code)
            print(f"{label:<52} {elapsed:8.3f} {len(response.content) / 1024:7.0f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of this process: {peak:.0f} MiB (two {args.cases:,}-case indexes held)")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
