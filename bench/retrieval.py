"""Retrieval benchmarks: scoring speed against pytrec_eval, and the lexical retriever on a BEIR set.

1. Scoring: ``--questions`` generated questions (default 100,000), each with a ranking of
   ``--depth`` distinct ids (default 100) and 1-5 expected ids. evalkit scores them
   (``score_question`` + ``aggregate``: hit@1, hit@3, MRR@10, recall@10, nDCG@10) and pytrec_eval
   computes the same five measures (``success_1``, ``success_3``, ``recip_rank``, ``recall_10``,
   ``ndcg_cut_10``) plus their means; MRR@10 is checked against ``recip_rank`` on the rankings cut
   at 10 (evaluated apart, outside the timing: trec_eval's ``recip_rank`` has no cut-off). Both get the same data in the form they take: evalkit the
   ranked id lists, pytrec_eval its qrel and run dicts (built outside its timing, reported apart).
   Each side runs ``--repeat`` times after ``gc.collect(); gc.freeze()``; the best run counts. The
   goal is evalkit <= 0.25 x pytrec_eval. The means of both sides are checked to agree. The scored
   run is then stored through the real repository into a fresh SQLite file (cases built and
   batched as ``evaluate_retrieval`` does, at privacy metadata and full; goal < 10 s).
2. BEIR (``--beir PATH``, default /work/shared/datasets/scifact when it exists): the built-in
   ``evalkit.lexical`` retriever indexes ``corpus.jsonl`` into a temporary directory, answers the
   ``--split`` queries (default test) and is scored: success@1, success@3, MRR@10, nDCG@10,
   recall@100, with pytrec_eval's nDCG@10 alongside when it is installed.
3. End to end through the CLI (``--no-cli`` skips it): for SciFact (``--beir``, through the
   ``evalkit.collections`` BEIR provider) and Cranfield (``--cranfield``: its BEIR folder, binary,
   and its original graded qrels as TREC files), one fresh ``evalkit retrieval SET --deployment
   bench --privacy full --export-run run.txt --export-qrels qrels.txt`` process per repetition in a
   fresh project with a fresh index cache and a fresh SQLite store: index + every query + store +
   report. Printed: the best wall time of ``--cli-repeat`` (default 5), queries per second end to
   end, and every stored metric beside pytrec_eval's on the exported files (a judged question
   missing from the run counts 0), with the largest difference (goal <= 1e-12).

   Cranfield's grade direction: its readme defines code 1 as "complete answer" and 4 as "minimum
   interest" (lower = more relevant); ``-1`` marks the source paper, which trec_eval tools treat as
   not relevant. The graded TREC qrels therefore carry ``grade = 5 - code`` (1 -> 4 ... 4 -> 1) and
   drop the -1 rows; the BEIR folder's derived qrels are already binary (every code 1-4 -> 1).

    PYTHONPATH=core:plugins python bench/retrieval.py [--questions N] [--depth D] [--beir PATH | --no-beir]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evalkit.questions import GoldenQuestion
from evalkit.retrieval.scoring import QuestionScore, RetrievalMetrics, aggregate, score_question

K = 10
DEFAULT_BEIR = Path("/work/shared/datasets/scifact")
DEFAULT_CRANFIELD = Path("/work/shared/datasets/cranfield")
PYTREC_MEASURES = {"recip_rank", f"recall.{K}", f"ndcg_cut.{K}", "success.1,3"}


def generate(count: int, depth: int, seed: int = 20250611) -> tuple[list[GoldenQuestion], list[list[str]]]:
    """Questions with 1-5 expected ids and rankings of ``depth`` distinct ids, as a retriever returns them.

    About 60 % of expected ids are in the ranking, at a rank drawn from a geometric-like
    distribution (most near the top); the rest are absent. Ids are fresh string objects per
    ranking, as they would be coming out of a database.
    """
    rng = random.Random(seed)
    pool = [f"doc-{i:07d}" for i in range(200_000)]
    questions = []
    rankings = []
    for i in range(count):
        ranking = rng.sample(pool, depth)
        expected: list[str] = []
        for _ in range(rng.randint(1, 5)):
            if rng.random() < 0.6:
                expected.append(ranking[min(int(rng.expovariate(0.15)), depth - 1)])
            else:
                expected.append(rng.choice(pool))
        questions.append(GoldenQuestion(f"q{i}", "generated", expected_document_ids=list(dict.fromkeys(expected))))
        rankings.append(["".join(("doc-", d[4:])) for d in ranking])
    return questions, rankings


def best_of(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of ``repeat`` timed calls (after a collection, with the heap frozen) and its result."""
    best = math.inf
    result = None
    for _ in range(repeat):
        result = None
        gc.collect()
        gc.freeze()
        started = time.perf_counter()
        result = run()
        elapsed = time.perf_counter() - started
        gc.unfreeze()
        best = min(best, elapsed)
    return best, result


def evalkit_scoring(
    questions: Sequence[GoldenQuestion], rankings: Sequence[list[str]]
) -> tuple[list[QuestionScore], RetrievalMetrics]:
    """Score every question and aggregate, exactly as a run does."""
    scores = [score_question(q, r, K, 0.001) for q, r in zip(questions, rankings, strict=True)]
    return scores, aggregate(scores, K)


def store_seconds(scores: Sequence[QuestionScore], metrics: RetrievalMetrics, privacy: str = "metadata") -> tuple[float, float]:
    """Store one run of ``scores`` into a fresh SQLite file through the real repository, as a run does.

    Cases are built with :func:`case_from_score` and committed in batches of the run's size; the
    run is closed with :meth:`finish_run` (which recomputes the aggregates from the stored cases).
    Returns the seconds to store, and the seconds ``finish_run`` then takes to read the run back
    with every case (what a run does next, to compare it), measured apart.
    """
    from evalkit.retrieval.evaluation import CASE_BATCH, GRADER, case_from_score, metrics_document
    from evalkit.runs import Run, RunKind, RunStatus
    from evalkit.storage import open_repository

    with tempfile.TemporaryDirectory(prefix="evalkit-bench-store-") as folder:
        repository = open_repository(f"sqlite:///{folder}/results.db")
        try:
            gc.collect()
            started = time.perf_counter()
            header = Run(
                id="bench-run", set_identifier="bench.generated", grader=GRADER, kind=RunKind.RETRIEVAL,
                started_at=time.time(), case_count=len(scores), retriever="bench.memory", privacy=privacy,
            )  # fmt: skip
            repository.begin_run(header)
            now = time.time()
            batch = []
            for score in scores:
                batch.append(case_from_score(score, K, now))
                if len(batch) >= CASE_BATCH:
                    repository.record_cases(header.id, batch, privacy)
                    batch = []
            repository.record_cases(header.id, batch, privacy)
            stored_s = time.perf_counter() - started
            started = time.perf_counter()
            run = repository.finish_run(
                header.id, RunStatus.COMPLETE.value, time.time(), grader=GRADER, metrics=metrics_document(metrics)
            )
            finish_s = time.perf_counter() - started
        finally:
            repository.close()
    if run.answered_count != len(scores) or run.passed_count != metrics.top1_hits:
        sys.exit(f"stored run disagrees: {run.answered_count} cases, {run.passed_count} top-1 hits")
    return stored_s, finish_s


def bench_scoring(count: int, depth: int, repeat: int) -> None:
    """Part 1: evalkit's scoring against pytrec_eval on generated data."""
    print(f"== scoring: {count:,} questions x {depth} ranked ids, k={K}, best of {repeat}")
    started = time.perf_counter()
    questions, rankings = generate(count, depth)
    print(f"generated in {time.perf_counter() - started:.1f} s")

    ours_s, (scores, metrics) = best_of(repeat, lambda: evalkit_scoring(questions, rankings))
    print(f"evalkit    score_question + aggregate       {ours_s:8.3f} s")
    for privacy in ("metadata", "full"):
        stored_s, finish_s = store_seconds(scores, metrics, privacy)
        print(
            f"storing {count:,} questions (SQLite, privacy {privacy:<8}) {stored_s:6.3f} s   (goal < 10 s); "
            f"finish_run reading the run back {finish_s:.3f} s"
        )

    try:
        import pytrec_eval
    except ImportError:
        print("pytrec_eval is not installed (pip install pytrec-eval-terrier); no comparison")
        return

    started = time.perf_counter()
    qrel = {q.id: {d: 1 for d in q.expected_document_ids} for q in questions}
    run = {q.id: {d: float(depth - rank) for rank, d in enumerate(r)} for q, r in zip(questions, rankings, strict=True)}
    convert_s = time.perf_counter() - started

    def trec() -> dict[str, float]:
        evaluator = pytrec_eval.RelevanceEvaluator(qrel, PYTREC_MEASURES)
        results = evaluator.evaluate(run)
        n = len(results)
        names = ("success_1", "success_3", "recip_rank", f"recall_{K}", f"ndcg_cut_{K}")
        return {m: math.fsum(r[m] for r in results.values()) / n for m in names}

    trec_s, means = best_of(repeat, trec)
    print(f"pytrec_eval evaluator + evaluate + means    {trec_s:8.3f} s")
    print(f"pytrec_eval building its qrel/run dicts     {convert_s:8.3f} s (once, not in the ratio)")
    print(f"ratio evalkit / pytrec_eval                 {ours_s / trec_s:8.3f}   (goal <= 0.25)")
    print(f"ratio incl. pytrec_eval's input dicts       {ours_s / (trec_s + convert_s):8.3f}")

    ours = {
        "success_1": metrics.top1_hit_rate,
        "success_3": metrics.top3_hit_rate,
        "recip_rank": metrics.mrr_at_k,
        f"recall_{K}": metrics.recall_at_k,
        f"ndcg_cut_{K}": metrics.ndcg_at_k,
    }
    cut = {qid: {d: s for d, s in ranked.items() if s > depth - K} for qid, ranked in run.items()}
    cut_results = pytrec_eval.RelevanceEvaluator(qrel, {"recip_rank"}).evaluate(cut)
    means["recip_rank"] = math.fsum(r["recip_rank"] for r in cut_results.values()) / len(cut_results)
    worst = max(abs(ours[m] - means[m]) for m in ours)
    print("means      " + "  ".join(f"{m}={ours[m]:.6f}" for m in ours))
    print(f"agreement  largest difference to pytrec_eval's means: {worst:.1e}")
    if worst > 1e-12:
        sys.exit("evalkit and pytrec_eval disagree")


def load_beir(root: Path, split: str) -> tuple[Path, list[GoldenQuestion]]:
    """The corpus path and the labelled questions of one split of a BEIR collection."""
    relevant: dict[str, list[str]] = {}
    with (root / "qrels" / f"{split}.tsv").open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            fields = line.rstrip("\n").split("\t")
            if number == 0 and not fields[-1].lstrip("-").isdigit():
                continue  # header row
            if int(fields[2]) > 0:
                relevant.setdefault(fields[0], []).append(fields[1])
    questions = []
    with (root / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record["_id"] in relevant:
                targets = relevant[record["_id"]]
                questions.append(GoldenQuestion(record["_id"], record["text"], expected_document_ids=targets))
    return root / "corpus.jsonl", questions


def bench_beir(root: Path, split: str) -> None:
    """Part 2: the lexical retriever on a BEIR collection."""
    from evalkit_plugins.lexical import LexicalOptions, LexicalRetriever

    corpus, questions = load_beir(root, split)
    print(f"\n== evalkit.lexical on {root.name} ({split}: {len(questions)} queries)")
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as index_dir:
        retriever = LexicalRetriever(LexicalOptions(str(corpus), index_dir=index_dir))
        index = retriever.prepare()
        print(f"index      {index.documents:,} documents in {index.seconds:.2f} s")
        rankings = []
        started = time.perf_counter()
        for question in questions:
            rankings.append([d for d, _ in retriever.retrieve(question.question, 100)])
        elapsed = time.perf_counter() - started
        retriever.close()
    print(f"queries    {len(questions) / elapsed:.0f} per second ({elapsed / len(questions) * 1000:.2f} ms each)")
    at10 = aggregate([score_question(q, r[:K], K, 0.0) for q, r in zip(questions, rankings, strict=True)], K)
    at100 = aggregate([score_question(q, r, 100, 0.0) for q, r in zip(questions, rankings, strict=True)], 100)
    print(
        f"quality    success@1 {at10.top1_hit_rate:.4f}  success@3 {at10.top3_hit_rate:.4f}  "
        f"MRR@10 {at10.mrr_at_k:.4f}  nDCG@10 {at10.ndcg_at_k:.4f}  recall@100 {at100.recall_at_k:.4f}"
    )
    try:
        import pytrec_eval
    except ImportError:
        return
    qrel = {q.id: {d: 1 for d in q.expected_document_ids} for q in questions}
    run = {q.id: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in zip(questions, rankings, strict=True) if r}
    results = pytrec_eval.RelevanceEvaluator(qrel, {f"ndcg_cut.{K}"}).evaluate(run)
    ndcg = math.fsum(r[f"ndcg_cut_{K}"] for r in results.values()) / len(questions)
    print(f"pytrec_eval nDCG@10 {ndcg:.4f} (queries without results count as 0)")


def cranfield_trec(root: Path, into: Path) -> tuple[Path, Path, Path]:
    """Cranfield's original qrels as graded TREC qrels (``grade = 5 - code``, code -1 dropped), with
    the BEIR folder's queries as topics (sequential ids, as the qrels number them) and its corpus."""
    lines = []
    for raw in (root / "original" / "cranqrel").read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        query, doc, code = raw.split()
        if int(code) >= 1:
            lines.append(f"{query} 0 {doc} {5 - int(code)}\n")
    qrels = into / "cranfield-graded.qrels"
    qrels.write_text("".join(lines), encoding="utf-8")
    return root / "beir" / "queries.jsonl", qrels, root / "beir" / "corpus.jsonl"


def trec_means(qrels_path: Path, run_path: Path, k: int, threshold: int) -> dict[str, float]:
    """pytrec_eval's five measures averaged over every judged question (missing from the run: 0)."""
    import pytrec_eval

    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text(encoding="utf-8").splitlines():
        query, _, doc, grade = line.split()
        qrels.setdefault(query, {})[doc] = int(grade)
    run: dict[str, dict[str, float]] = {}
    for line in run_path.read_text(encoding="utf-8").splitlines():
        query, _, doc, _, score, _ = line.split()
        run.setdefault(query, {})[doc] = float(score)
    measures = {"success.1,3", "recip_rank", f"recall.{k}", f"ndcg_cut.{k}"}
    results = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold).evaluate(run)
    # MRR@k is trec_eval's recip_rank on the ranking cut at k.
    cut = {q: dict(sorted(docs.items(), key=lambda item: -item[1])[:k]) for q, docs in run.items()}
    reciprocal = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=threshold).evaluate(cut)
    for q, values in results.items():
        values["recip_rank"] = reciprocal.get(q, {}).get("recip_rank", 0.0)
    names = ("success_1", "success_3", "recip_rank", f"recall_{k}", f"ndcg_cut_{k}")
    return {m: math.fsum(results.get(q, {}).get(m, 0.0) for q in qrels) / len(qrels) for m in names}


def stored_metrics(database: Path, run_id: str) -> dict[str, Any]:
    """The run metrics as the store keeps them."""
    from evalkit.storage import open_repository

    repository = open_repository(f"sqlite:///{database}")
    try:
        return repository.get_run(run_id, with_cases=False).metrics["retrieval"]
    finally:
        repository.close()


def cli_run(collection: str, table: str, corpus: Path, repeat: int, threshold: int = 1, outside: tuple[Path, ...] = ()) -> None:
    """One collection end to end through the CLI: best wall of ``repeat`` fresh processes, metrics vs pytrec_eval.

    The collection's files lie outside the fresh project: the folder of ``corpus`` and the folders
    ``outside`` are listed in ``[sets] allow_outside``, so evalkit reads them."""
    allowed = json.dumps([str(corpus.parent), *(str(p) for p in outside)])
    best = math.inf
    best_cpu = math.inf
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-cli-") as folder:
        base = Path(folder)
        for attempt in range(repeat):
            project = base / f"p{attempt}"
            project.mkdir()
            (project / "evalkit.toml").write_text(
                f'database = "sqlite:///{project}/results.db"\n\n[sets]\nallow_outside = {allowed}\n\n{table}\n'
                f'[deployments.bench]\nretriever = "evalkit.lexical"\n'
                f'[deployments.bench.retrievers."evalkit.lexical"]\ncorpus = {json.dumps(str(corpus))}\n',
                encoding="utf-8",
            )
            env = {**os.environ, "EVALKIT_CACHE_DIR": str(project / "cache"), "NO_COLOR": "1"}
            env.pop("EVALKIT_DATABASE_URL", None)
            command = [
                sys.executable, "-m", "evalkit", "retrieval", collection, "--deployment", "bench", "--k", str(K),
                "--relevance-threshold", str(threshold), "--privacy", "full",
                "--export-run", "run.txt", "--export-qrels", "qrels.txt",
            ]  # fmt: skip
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
            elapsed = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            best_cpu = min(best_cpu, cpu)
            if done.returncode != 0:
                sys.exit(f"evalkit retrieval {collection} exited {done.returncode}:\n{done.stderr}{done.stdout[-2000:]}")
            best = min(best, elapsed)
            last = project
        run_id = done.stdout.split("(run ", 1)[1].split(")", 1)[0]
        ours = stored_metrics(last / "results.db", run_id)
        theirs = trec_means(last / "qrels.txt", last / "run.txt", K, threshold)
    n = ours["question_count"]
    label = collection + (f" (relevance threshold {threshold})" if threshold != 1 else "")
    print(f"\n-- {label}: {n} queries, `evalkit retrieval {collection} --deployment bench` in a fresh process")
    print(f"wall       {best:.2f} s best of {repeat} (fresh index cache and store each time; goal < 3 s for SciFact)")
    print(f"CPU        {best_cpu:.2f} s best of {repeat} (user + system of the process: its wall time on an idle core)")
    print(f"queries    {n / best:.0f} per second end to end (index, queries, store, report); p50 latency {ours['latency_p50_s'] * 1000:.2f} ms")
    pairs = (
        ("top-1 hit rate", "top1_hit_rate", "success_1"),
        ("top-3 hit rate", "top3_hit_rate", "success_3"),
        (f"MRR@{K}", "mrr_at_k", "recip_rank"),
        (f"recall@{K}", "recall_at_k", f"recall_{K}"),
        (f"nDCG@{K}", "ndcg_at_k", f"ndcg_cut_{K}"),
    )
    print(f"{'metric':<16}{'evalkit (stored)':>20}{'pytrec_eval (files)':>22}{'difference':>12}")
    worst = 0.0
    for name, key, measure in pairs:
        difference = abs(ours[key] - theirs[measure])
        worst = max(worst, difference)
        print(f"{name:<16}{ours[key]:>20.12f}{theirs[measure]:>22.12f}{difference:>12.1e}")
    print(f"agreement  largest difference {worst:.1e} (goal <= 1e-12)")
    if worst > 1e-12:
        sys.exit(f"{collection}: evalkit and pytrec_eval disagree")


def bench_cli(scifact: Path | None, cranfield: Path | None, repeat: int) -> None:
    """Part 3: standard collections end to end through the CLI."""
    print(f"\n== end to end through the CLI, best of {repeat}")
    if scifact is not None:
        table = f'[question_sets."beir.scifact"]\npath = {json.dumps(str(scifact))}\nsplit = "test"\n'
        cli_run("beir.scifact", table, scifact, repeat)
    if cranfield is not None:
        beir = cranfield / "beir"
        table = f'[question_sets."beir.cranfield"]\npath = {json.dumps(str(beir))}\nsplit = "test"\n'
        cli_run("beir.cranfield", table, beir, repeat)
        with tempfile.TemporaryDirectory(prefix="evalkit-bench-cran-") as folder:
            topics, qrels, corpus = cranfield_trec(cranfield, Path(folder))
            table = (
                f'[question_sets."trec.cranfield"]\nformat = "trec"\ntopics = {json.dumps(str(topics))}\n'
                f"qrels = {json.dumps(str(qrels))}\ncorpus = {json.dumps(str(corpus))}\n"
            )
            cli_run("trec.cranfield", table, corpus, repeat, outside=(Path(folder),))
            cli_run("trec.cranfield", table, corpus, repeat, threshold=3, outside=(Path(folder),))


def main(argv: list[str] | None = None) -> None:
    """Run both benchmarks and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--beir", type=Path, default=DEFAULT_BEIR if DEFAULT_BEIR.is_dir() else None)
    parser.add_argument("--no-beir", action="store_true", help="skip the BEIR part")
    parser.add_argument("--split", default="test")
    parser.add_argument("--no-scoring", action="store_true", help="skip the scoring part")
    parser.add_argument("--cranfield", type=Path, default=DEFAULT_CRANFIELD if DEFAULT_CRANFIELD.is_dir() else None)
    parser.add_argument("--no-cli", action="store_true", help="skip the end-to-end CLI part")
    parser.add_argument("--cli-repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if not args.no_scoring:
        bench_scoring(args.questions, args.depth, args.repeat)
    if args.beir is not None and not args.no_beir:
        bench_beir(args.beir, args.split)
    if not args.no_cli:
        bench_cli(None if args.no_beir else args.beir, args.cranfield, args.cli_repeat)


if __name__ == "__main__":
    main()
