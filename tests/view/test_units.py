"""The viewer's pieces on their own: Host parsing, search limits, word diffs, paging, the case
index and its cache, addresses, and what a template prints."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from evalkit.runs import CaseResult, Run
from evalkit.view.diff import MAX_DIFF_TOKENS, word_diff
from evalkit.view.guard import host_and_port
from evalkit.view.index import CaseRow, IndexCache, RunIndex, build_index, case_pairs, fetch_cases, index_cases
from evalkit.view.paging import Paging, page_number, per_page
from evalkit.view.search import Query, SearchError, SearchTimeout
from evalkit.view.server import address, allowed_hosts_for, is_loopback
from evalkit.view.urls import case_url, compare_url, run_url


@pytest.mark.parametrize(
    ("header", "parsed"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("LocalHost.:80", ("localhost", 80)),
        ("[::1]:8765", ("::1", 8765)),
        ("[::1]", ("::1", None)),
        ("example.org", ("example.org", None)),
        ("", None),
        ("a b:1", None),
        ("user@host:1", None),
        ("host:port", None),
        ("host:123456", None),
        ("::1:8765", None),
        ("[::1]x", None),
        ("[::1", None),
    ],
)
def test_host_headers_are_parsed_strictly(header: str, parsed: object) -> None:
    assert host_and_port(header) == parsed


def test_which_host_names_a_bound_address_accepts() -> None:
    assert allowed_hosts_for("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts_for("0.0.0.0") is None and allowed_hosts_for("::") is None
    assert allowed_hosts_for("192.168.1.20") == {"192.168.1.20"}
    assert is_loopback("127.0.0.2") and is_loopback("::1") and is_loopback("LOCALHOST")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.1") and not is_loopback("example.org")
    assert address("0.0.0.0", 80) == "http://127.0.0.1:80/" and address("::1", 8) == "http://[::1]:8/"


def test_text_search_is_case_insensitive_and_regex_search_is_bounded() -> None:
    assert Query("PARIS").matcher()("the capital is paris")
    assert not Query("lyon").matcher()("paris")
    assert Query(r"^pa(r|s)is$", regex=True).matcher()("paris")
    with pytest.raises(SearchError, match="at most 500"):
        Query("x" * 501).matcher()
    with pytest.raises(SearchError, match="10,000 allowed"):
        Query("(a{200}){200}", regex=True).matcher()
    with pytest.raises(SearchError, match="invalid regular expression"):
        Query("[", regex=True).matcher()
    catastrophic = Query("(a|aa)+$", regex=True).matcher(time_limit_s=0.2)
    with pytest.raises(SearchTimeout):
        catastrophic("a" * 60 + "!")
    with pytest.raises(SearchTimeout):  # the budget is spent: every later match stops at once
        catastrophic("fine")


def test_a_word_diff_rebuilds_both_texts_and_marks_the_changed_words() -> None:
    diff = word_diff("the cat sat on the mat", "the dog sat on a mat")
    assert diff is not None and diff.changed
    assert "".join(s.text for s in diff.old) == "the cat sat on the mat"
    assert "".join(s.text for s in diff.new) == "the dog sat on a mat"
    assert [s.text for s in diff.old if s.kind == "removed"] == ["cat", "the"]
    assert [s.text for s in diff.new if s.kind == "added"] == ["dog", "a"]
    same = word_diff("one  two\nthree", "one  two\nthree")
    assert same is not None and not same.changed
    assert word_diff("w " * MAX_DIFF_TOKENS, "w") is None


def test_paging_clamps_and_reads_addresses() -> None:
    paging = Paging.of(5, 4, 10)
    assert (paging.number, paging.count, paging.first_item, paging.last_item) == (3, 3, 9, 10)
    assert list(paging.cut(range(10))) == [8, 9]
    empty = Paging.of(1, 50, 0)
    assert (empty.count, empty.first_item, empty.last_item) == (1, 0, 0)
    assert page_number("7") == 7 and page_number("-1") == 1 and page_number("x") == 1 and page_number("9" * 20) == 1
    assert per_page(None, 50) == 50 and per_page("0", 50) == 1 and per_page("100000", 50) == 500


def test_addresses_carry_any_id_percent_encoded() -> None:
    assert run_url("a/b?c#d&e", filter="failed", q=None) == "/run?id=a%2Fb%3Fc%23d%26e&filter=failed"
    assert case_url("r", "\udcff\x00") == "/case?run=r&id=%ED%B3%BF%00"
    assert compare_url("a", "b", show=None, page=2) == "/compare?base=a&run=b&page=2"


class _Store:
    """A store holding one run's cases, counting how many it hands out."""

    def __init__(self, cases: list[CaseResult]) -> None:
        self._cases = cases
        self.read = 0

    def cases(self, run_id: str, *, notable_only: bool = False):  # noqa: ANN201
        for case in self._cases:
            if not notable_only or case.needs_a_look:
                self.read += 1
                yield case


def _cases(count: int) -> list[CaseResult]:
    return [
        CaseResult(f"c{n}", passed=n % 3 != 0, score=float(n % 3 != 0), latency_s=n / 10, fingerprint=f"f{n}")
        for n in range(count)
    ]


def test_the_index_keeps_a_row_and_the_case_itself_compressed() -> None:
    cases = _cases(600)
    store = _Store(cases)
    index = build_index(store, "r", version="v1")  # type: ignore[arg-type]
    assert len(index) == 600 and index.row("c4") == CaseRow(4, "c4", True, False, 1.0, 0.4, False, "f4")
    assert index.chunks is not None and len(index.chunks) == 3  # 256 + 256 + 88
    store.read = 0
    found = fetch_cases(store, index, ["c599", "c1", "missing"])  # type: ignore[arg-type]
    assert found == {"c599": cases[599], "c1": cases[1]} and store.read == 0  # from memory
    assert list(index_cases(store, index)) == cases and store.read == 0  # type: ignore[arg-type]


def test_an_index_too_large_to_keep_its_cases_reads_them_again_and_stops_at_the_last_needed() -> None:
    store = _Store(_cases(30))
    index = build_index(store, "r", version="v1", kept_bytes=10)  # type: ignore[arg-type]
    assert len(index) == 30 and index.chunks is None
    store.read = 0
    found = fetch_cases(store, index, ["c1", "c4", "missing"])  # type: ignore[arg-type]
    assert set(found) == {"c1", "c4"} and store.read == 5  # read up to c4, not the 25 after it
    store.read = 0
    failed = fetch_cases(store, index, ["c3", "c9"])  # type: ignore[arg-type]
    assert set(failed) == {"c3", "c9"} and store.read == 4  # failed ones only: c0, c3, c6, c9


def test_pairs_from_two_indexes_follow_the_store_order() -> None:
    current = build_index(_Store(_cases(4)[1:]), "now")  # type: ignore[arg-type]
    baseline = build_index(_Store(_cases(3)), "then")  # type: ignore[arg-type]
    pairs = list(case_pairs(current, baseline))
    assert [(p.case_id, p.current is not None, p.baseline is not None) for p in pairs] == [
        ("c1", True, True), ("c2", True, True), ("c3", True, False), ("c0", False, True),
    ]  # fmt: skip


def test_the_index_cache_builds_once_per_version_and_evicts_the_oldest() -> None:
    cache = IndexCache(max_bytes=5 * 160)
    built: list[str] = []

    def make(run_id: str, rows: int, version: str):  # noqa: ANN202
        def build() -> RunIndex:
            built.append(run_id)
            return RunIndex(run_id, tuple(CaseRow(n, f"c{n}", True, False, 1.0, 0.0) for n in range(rows)), {}, version)

        return build

    assert cache.get("a", "1", make("a", 3, "1")).run_id == "a"
    cache.get("a", "1", make("a", 3, "1"))
    assert built == ["a"]
    cache.get("b", "1", make("b", 3, "1"))  # 6 rows: "a" goes
    cache.get("a", "1", make("a", 3, "1"))
    assert built == ["a", "b", "a"]
    cache.get("a", "2", make("a", 3, "2"))  # another version of the run: read again
    assert built == ["a", "b", "a", "a"]


def test_two_requests_for_one_index_wait_for_one_read() -> None:
    cache = IndexCache()
    started, release = threading.Event(), threading.Event()
    built: list[int] = []

    def slow() -> RunIndex:
        started.set()
        release.wait(5)
        built.append(1)
        return RunIndex("r", (), {}, "v")

    first = threading.Thread(target=cache.get, args=("r", "v", slow))
    first.start()
    started.wait(5)
    second = threading.Thread(target=cache.get, args=("r", "v", slow))
    second.start()
    release.set()
    first.join(5)
    second.join(5)
    assert built == [1]


def test_what_a_template_prints_is_visible_scrubbed_and_escaped() -> None:
    from evalkit.view.app import _exact, _finalize, _short
    from markupsafe import Markup, escape

    assert (
        _finalize("key sk-proj-AbCdEfGhIjKlMnOpQrSt and a@b.example\x1b[1m\u202e") == "key *** and ***\\x1b[1m\\u202e"
    )
    assert _finalize(None) == "" and _finalize(3) == "3" and _finalize(Markup("<b>")) == Markup("<b>")
    assert str(escape(_finalize('"><img onerror=x>'))) == "&#34;&gt;&lt;img onerror=x&gt;"
    assert _short("x" * 200) == "x" * 160 + "… (200 characters)"
    assert _exact('a"b') == Markup("a&#34;b") and _exact("a\x1bb") == "a\x1bb"  # not markup: printed visible


def test_a_run_without_cases_has_an_empty_index() -> None:
    index = build_index(_Store([]), Run("r", "s.x", "g").id)  # type: ignore[arg-type]
    assert len(index) == 0 and fetch_cases(_Store([]), index, ["a"]) == {}  # type: ignore[arg-type]


def test_the_compare_page_says_two_retrieval_runs_differ_by_retriever_or_corpus_not_generator() -> None:
    # The viewer's compare page said two retrieval runs "were answered by different generators",
    # and nothing when they searched corpora of different revisions.
    from evalkit.runs import Run, RunKind, RunStatus
    from evalkit.view.compare_page import run_differences

    def stored(deployment: str, revision: str) -> Run:
        return Run(
            id=f"r-{deployment}", set_identifier="beir.x", grader="retrieval_hit_rate", kind=RunKind.RETRIEVAL,
            status=RunStatus.COMPLETE, retriever="evalkit.lexical", deployment=deployment,
            provenance={"corpus_revision": revision},
        )  # fmt: skip

    notes = run_differences(stored("staging", "sha256:aa"), stored("production", "sha256:bb"))
    assert notes == (
        "The runs measured different retrievers or deployments: evalkit.lexical (deployment staging) vs "
        "evalkit.lexical (deployment production).",
        'The runs searched different corpora (corpus revision "sha256:aa" vs "sha256:bb"): a document one corpus '
        "lacks is a miss in that run only, so the difference is not the retriever's alone.",
    )
    assert run_differences(stored("staging", "sha256:aa"), stored("staging", "sha256:aa")) == ()


def test_a_third_party_store_failing_as_a_page_reads_it_is_the_stores_failure_not_a_page_bug(
    plugin_dists, tmp_path: Path
) -> None:
    """A store plugin's own exception raised while a page read it (here: its JSON file damaged)
    was a page's bug: 500 and a traceback in the viewer's output. It is the store's failure, said
    as every command says it (503, naming the store and what it raised)."""
    from starlette.testclient import TestClient

    from tests.support.cli_runner import _importable

    store = tmp_path / "store.json"
    store.write_text("{ damaged", encoding="utf-8")
    with _importable([plugin_dists("evalkit-minimal-repo")]):
        from evalkit.view import create_app

        app = create_app(f"minimal://{store}", port=8765)
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            page = client.get("/run", params={"id": "r-1"})
    assert page.status_code == 503, page.text
    assert (
        "the results store failed: evalkit_minimal_repo.MinimalRepository raised JSONDecodeError: " in page.text
    ), page.text
