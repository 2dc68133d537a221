"""Every page of the viewer over a real store (written by `evalkit run` and `evalkit retrieval`),
through Starlette's TestClient: what each shows, every filter, search, sorting, paging, 404s."""

from __future__ import annotations

import html
import json
import re

from tests.view.pages import element_text, listed_cases, markup_problems, seen, shown
from tests.view.store_project import (
    BIG_CHARS,
    EMAIL,
    HOSTILE_RUN_ID,
    HOSTILE_SET,
    IMG_ID,
    RTL_ID,
    SCRIPT_ID,
    SECRET,
    WAVERING_ID,
    finish_live_run,
)

V2_ORDER = ["greeting", SCRIPT_ID, IMG_ID, RTL_ID, "flaky-fact", "always-wrong", "edited", "secret", "big", "added"]


def run_page(client, run_id: str, **params: str):  # noqa: ANN001, ANN201 - a TestClient
    return client.get("/run", params={"id": run_id, **params})


def test_the_sets_page_lists_every_set_with_its_runs_and_latest_verdict(client, stored) -> None:
    page = client.get("/")
    assert page.status_code == 200
    rows = {}
    for row in page.text.split('<tr class="set-row">')[1:]:
        cells = [" ".join(cell.split()) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        rows[html.unescape(re.sub("<[^>]+>", "", cells[0]))] = cells
    assert set(rows) == {"viewkit.review", "viewkit.docs", "viewkit.live", HOSTILE_SET}
    assert rows["viewkit.review"][2] == "3" and rows["viewkit.review"][3] == "1"  # three runs, one accepted
    assert "REGRESSED" in rows["viewkit.review"][6]  # its newest run (v3) regressed
    assert "PENDING" in rows["viewkit.live"][6]
    assert shown(HOSTILE_SET) in page.text and HOSTILE_SET not in page.text


def test_a_set_page_lists_its_runs_with_a_trend_per_series_and_the_accepted_baseline(client, stored) -> None:
    page = client.get("/set", params={"id": "viewkit.review"})
    assert page.status_code == 200
    runs = re.findall(r'<tr class="run-row( accepted)?" data-run="([^"]*)"', page.text)
    assert [run_id for _, run_id in runs] == [stored.v3, stored.v2, stored.v1]  # newest first
    assert [bool(accepted) for accepted, _ in runs] == [False, False, True]
    assert page.text.count('<svg class="trend"') == 1  # one series: one identity, one grader
    assert page.text.count('class="point s0') == 3 and page.text.count("point s0 accepted") == 1
    assert 'action="/compare"' in page.text
    assert f"/compare?base={stored.v1}&amp;run={stored.v2}" in page.text  # the verdict's baseline, linked
    assert client.get("/set", params={"id": "no.such.set"}).status_code == 404
    assert client.get("/set").status_code == 404


def test_a_run_page_shows_the_verdict_every_case_and_its_texts(client, stored) -> None:
    page = run_page(client, stored.v2)
    assert page.status_code == 200
    assert element_text(page.text, "verdict") == "REGRESSED"
    assert element_text(page.text, "run-id") == "v2"
    assert listed_cases(page.text) == [seen(c) for c in V2_ORDER]
    flaky = page.text.split('data-case="flaky-fact"')[1].split("</tbody>")[0]
    assert (
        "What is the capital of France?" in flaky and ">Paris<" in flaky
    )  # prompt from the installed set, answer stored
    assert (
        "tag fixed" in flaky
        and "Baseline's answer" in flaky
        and "<del>Lyon</del>" in flaky
        and "<ins>Paris</ins>" in flaky
    )
    greeting = page.text.split('data-case="greeting"')[1].split("</tbody>")[0]
    assert "tag regressed" in greeting and "contains" in greeting and "<del>hello</del>" in greeting
    assert "Failed (3)" in page.text and "Regressed (2)" in page.text and "Edited (1)" in page.text
    figures = [
        " ".join(re.sub("<[^>]+>", " ", row).split())
        for row in page.text.split('<table id="figures">')[1].split("</table>")[0].split("<tr")[2:]
    ]
    assert figures == [
        'class="verdict-figure"> Pass rate, 8 unchanged cases 75.0% 62.5% -12.5 pp',  # what the verdict is computed on
        'class="verdict-figure"> Mean score, 8 unchanged cases 0.750 0.625 -0.125',
        'class="all-cases"> Pass rate, all cases 77.8% 70.0% -7.8 pp',
        'class="all-cases"> Mean score, all cases 0.778 0.700 -0.078',
    ]


def test_the_prompt_of_a_case_that_changed_since_the_run_is_not_shown(client, stored) -> None:
    page = run_page(client, stored.v1)
    edited = page.text.split('data-case="edited"')[1].split("</tbody>")[0]
    assert (
        "this case has changed since the run" in edited
        and "Name a colour." not in edited
        and "Name two colours." not in edited
    )
    same = page.text.split('data-case="greeting"')[1].split("</tbody>")[0]
    assert "Say hello to the user." in same


def test_each_filter_keeps_its_cases(client, stored) -> None:
    expected = {
        "all": V2_ORDER,
        "failed": ["greeting", SCRIPT_ID, "always-wrong"],
        "regressed": ["greeting", SCRIPT_ID],
        "fixed": ["flaky-fact"],
        "still_failing": ["always-wrong"],
        "added": ["added"],
        "edited": ["edited"],
    }
    for name, cases in expected.items():
        page = run_page(client, stored.v2, filter=name)
        assert page.status_code == 200
        assert listed_cases(page.text) == [seen(c) for c in cases], name
        assert f'class="filter active" data-filter="{name}"' in page.text
    assert listed_cases(run_page(client, stored.v2, filter="no-such-filter").text) == [seen(c) for c in V2_ORDER]


def test_a_run_without_a_baseline_offers_no_change_filters(client, stored) -> None:
    page = run_page(client, stored.v1)
    assert 'class="filter unavailable" data-filter="regressed"' in page.text
    assert (
        'class="filter unavailable" data-filter="flaky" title="no case of this run was judged several times'
        in page.text
    )


def test_the_flaky_filter_keeps_the_cases_whose_judge_disagreed_with_itself(client, stored) -> None:
    page = run_page(client, stored.hostile, filter="flaky")
    assert 'class="filter active" data-filter="flaky"' in page.text and "Flaky (1)" in page.text
    assert listed_cases(page.text) == [WAVERING_ID]
    assert "pass (unstable)" in page.text and "2 of 3 judgements agreed &lt;b&gt;" in page.text
    assert listed_cases(run_page(client, stored.v1, filter="failed").text) == ["flaky-fact", "always-wrong"]


def test_text_search_looks_through_ids_answers_checks_and_prompts(client, stored) -> None:
    assert listed_cases(run_page(client, stored.v2, q="GOODBYE").text) == ["greeting", seen(SCRIPT_ID)]
    assert listed_cases(run_page(client, stored.v2, q="capital of france").text) == [
        "flaky-fact"
    ]  # the installed prompt
    assert listed_cases(run_page(client, stored.v2, q="always").text) == ["always-wrong"]  # the id
    both = run_page(client, stored.v2, q="goodbye", filter="regressed", sort="case")
    assert listed_cases(both.text) == sorted(["greeting", SCRIPT_ID])
    assert "no case matches" in run_page(client, stored.v2, q="nowhere to be found").text


def test_regex_search_and_its_limits(client, stored) -> None:
    assert listed_cases(run_page(client, stored.v2, q=r"^(hello|goodbye) there", regex="1").text) == ["greeting"]
    bad = run_page(client, stored.v2, q="(unclosed", regex="1")
    assert bad.status_code == 200 and "invalid regular expression '(unclosed'" in element_text(bad.text, "search-error")
    huge = run_page(client, stored.v2, q="a{1000000}", regex="1")
    assert "more than the 10,000 allowed" in element_text(huge.text, "search-error")
    assert listed_cases(run_page(client, stored.v2, q="/^THERE/i", regex="1").text) == []  # ^: the start of each text
    assert listed_cases(run_page(client, stored.v2, q="/^GOODBYE THERE/i", regex="1").text) == ["greeting"]  # PCRE form
    long = run_page(client, stored.v2, q="x" * 600)
    assert "at most 500 are taken" in element_text(long.text, "search-error")


def test_a_catastrophic_regex_is_stopped_and_said_so(client, stored) -> None:
    page = run_page(client, stored.v2, q="(x|xx)+y", regex="1")  # the big answer is a million x's
    assert page.status_code == 200
    assert "the pattern took too long" in element_text(page.text, "search-error")
    assert run_page(client, stored.v2).status_code == 200  # the viewer still answers


def test_sorting_and_order(client, stored) -> None:
    by_score = listed_cases(run_page(client, stored.v2, sort="score").text)
    assert by_score[:3] == ["greeting", seen(SCRIPT_ID), "always-wrong"]  # score 0 first, then stored order
    by_case = listed_cases(run_page(client, stored.v2, sort="case", order="desc").text)
    assert by_case == [seen(c) for c in sorted(V2_ORDER, reverse=True)]
    assert listed_cases(run_page(client, stored.v2, sort="result").text)[:3] == [
        "greeting",
        seen(SCRIPT_ID),
        "always-wrong",
    ]
    assert len(listed_cases(run_page(client, stored.v2, sort="latency", order="desc").text)) == len(V2_ORDER)
    assert listed_cases(run_page(client, stored.v2, sort="bogus").text) == [seen(c) for c in V2_ORDER]


def test_pages_of_cases(client, stored) -> None:
    first = run_page(client, stored.v2, per="4")
    assert listed_cases(first.text) == [seen(c) for c in V2_ORDER[:4]]
    assert element_text(first.text, "shown-count") == f"1–4 of {len(V2_ORDER)} shown"
    assert 'rel="next" href="/run?id=v2&amp;page=2&amp;per=4"' in first.text
    third = run_page(client, stored.v2, per="4", page="3")
    assert listed_cases(third.text) == [seen(c) for c in V2_ORDER[8:]]
    assert listed_cases(run_page(client, stored.v2, per="4", page="99").text) == listed_cases(third.text)  # clamped
    assert listed_cases(run_page(client, stored.v2, per="0", page="x").text)[:1] == ["greeting"]


def test_a_case_page_shows_prompt_reference_answer_and_the_baseline_answer_with_a_word_diff(client, stored) -> None:
    page = client.get("/case", params={"run": stored.v2, "id": "greeting"})
    assert page.status_code == 200
    assert element_text(page.text, "case-result") == "FAIL"
    assert (
        "Say hello to the user." in page.text and "<del>hello</del>" in page.text and "<ins>goodbye</ins>" in page.text
    )
    assert "contains" in page.text and "tag regressed" in page.text
    by_position = client.get("/case", params={"run": stored.v2, "pos": "0"})
    assert by_position.status_code == 200 and 'data-case="greeting"' in by_position.text
    assert client.get("/case", params={"run": stored.v2, "id": "no-such-case"}).status_code == 404
    assert client.get("/case", params={"run": "no-such-run", "id": "greeting"}).status_code == 404
    assert client.get("/case", params={"run": stored.v2, "pos": "999"}).status_code == 404


def test_a_megabyte_answer_is_cut_in_lists_and_shown_far_on_its_page(client, stored) -> None:
    page = run_page(client, stored.v2)
    assert len(page.content) < 200_000
    assert f"… {BIG_CHARS + 6 - 2000:,} more characters" in page.text
    case = client.get("/case", params={"run": stored.v2, "id": "big"})
    assert case.status_code == 200 and f"… {BIG_CHARS + 6 - 200_000:,} more characters" in case.text
    assert "too long to diff word by word" in case.text


def test_the_comparison_lists_the_changed_cases_first_with_both_answers(client, stored) -> None:
    page = client.get("/compare", params={"base": stored.v1, "run": stored.v2})
    assert page.status_code == 200
    assert element_text(page.text, "verdict") == "REGRESSED"
    assert listed_cases(page.text) == ["greeting", seen(SCRIPT_ID), "flaky-fact", "edited", "added"]
    assert "exact McNemar p = " in element_text(page.text, "flips")
    assert "pass rate dropped 12.5 pp" in element_text(page.text, "verdict-sentence")
    assert "<del>Lyon</del>" in page.text and "<ins>Paris</ins>" in page.text
    every = client.get("/compare", params={"base": stored.v1, "run": stored.v2, "show": "all"})
    assert len(listed_cases(every.text)) == len(V2_ORDER)
    still = client.get("/compare", params={"base": stored.v1, "run": stored.v2, "show": "still_failing"})
    assert listed_cases(still.text) == ["always-wrong"]
    removed = client.get("/compare", params={"base": stored.v2, "run": stored.v1})
    assert "added" in listed_cases(removed.text) and "tag removed" in removed.text


def test_comparison_tolerances_and_refusals(client, stored) -> None:
    lenient = client.get(
        "/compare",
        params={"base": stored.v1, "run": stored.v2, "max_pass_rate_drop": "0.2", "max_mean_score_drop": "0.2"},
    )
    assert element_text(lenient.text, "verdict") == "NO REGRESSION"
    assert "max_pass_rate_drop=0.2" in lenient.text  # kept in its section links
    bad = client.get("/compare", params={"base": stored.v1, "run": stored.v2, "max_pass_rate_drop": "2"})
    assert bad.status_code == 400
    other_set = client.get("/compare", params={"base": stored.retrieval_v1, "run": stored.v2})
    assert other_set.status_code == 400 and "different sets" in other_set.text
    assert client.get("/compare", params={"base": "nope", "run": stored.v2}).status_code == 404
    assert client.get("/compare", params={"base": stored.v1}).status_code == 400


def test_a_retrieval_run_shows_each_ranking_with_the_relevant_documents_marked(client, stored) -> None:
    page = run_page(client, stored.retrieval_v2)
    assert page.status_code == 200
    assert element_text(page.text, "verdict") == "REGRESSED"
    csv = page.text.split('data-case="csv"')[1].split("</tbody>")[0]
    assert "tag regressed" in csv and "read rows of a comma separated values file" in csv
    ranking = csv.split('<ol class="ranking">')[1].split("</ol>")[0]
    assert [part.split("<")[0] for part in ranking.split('<span class="mono">')[1:]] == [
        "doc-zip",
        "doc-copy",
        "doc-csv",
    ]
    assert (
        ranking.count('class="expected"') == 1
        and 'class="expected" title="relevant: an expected document"><span class="mono">doc-csv' in ranking
    )
    assert "nothing in the index answers this question" in page.text.split('data-case="nothing"')[1]
    assert "RR@k" in page.text and "nDCG@k" in page.text
    assert listed_cases(run_page(client, stored.retrieval_v2, filter="regressed").text) == ["csv"]
    comparison = client.get("/compare", params={"base": stored.retrieval_v1, "run": stored.retrieval_v2})
    assert comparison.status_code == 200 and "hit@1 dropped" in element_text(comparison.text, "verdict-sentence")


def test_a_run_stored_at_privacy_metadata_says_its_answers_are_not_stored(client, stored) -> None:
    page = run_page(client, stored.v3)
    assert page.text.count("not stored (privacy metadata)") >= len(V2_ORDER)
    assert "Say hello to the user." in page.text  # the prompt comes from the installed set, not the store


def test_a_running_run_shows_what_is_in_and_follows_it(client, viewer_cli, stored) -> None:
    page = run_page(client, stored.live)
    assert page.status_code == 200
    assert 'id="live"' in page.text and 'data-progress-url="/progress?id=live-run"' in page.text
    assert '<noscript><meta http-equiv="refresh"' in page.text
    assert element_text(page.text, "verdict") == "PENDING"
    in_first = listed_cases(page.text)
    assert 0 < len(in_first) < 8
    before = client.get("/progress", params={"id": stored.live}).json()
    assert before["status"] == "running" and before["answered"] == len(in_first) and before["cases"] == 8
    finish_live_run(viewer_cli)
    after = client.get("/progress", params={"id": stored.live}).json()
    assert after["state"] != before["state"] and after["status"] == "complete" and after["answered"] == 8
    done = run_page(client, stored.live)
    assert len(listed_cases(done.text)) == 8 and 'id="live"' not in done.text
    assert client.get("/progress", params={"id": "nope"}).status_code == 404


def kill_second_shard_elsewhere(store_url: str, run_id: str) -> None:
    """Shard 2/2 of ``run_id`` started on machine ci-7 and was killed there: its lease taken, its
    heartbeat older than a live process's."""
    from evalkit.leases import STALE_AFTER_S, LeaseOwner
    from evalkit.storage import open_repository

    repo = open_repository(store_url)
    try:
        repo.acquire_lease(run_id, "2/2", LeaseOwner("ci-7", 4242, "token-2"), shard_count=2)
        L = repo.Lease
        then = repo._store_now() - STALE_AFTER_S - 5
        L.update({L.heartbeat_at: then, L.acquired_at: then}).where((L.run == run_id) & (L.part == "2/2")).execute()
    finally:
        repo.close()


def test_the_line_continuing_a_killed_run_names_the_store_the_viewer_was_given(
    viewer_cli, stored, store_url, project
) -> None:
    """`evalkit view --database URL` said the command that continues a killed run without it, as
    `show --database URL` did: pasted, it looked in the default store. Both repeat it now."""
    from evalkit.config import load_config
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    kill_second_shard_elsewhere(store_url, stored.live)
    shown = viewer_cli("show", stored.live, "--database", store_url)
    (said,) = [line.strip() for line in shown.stdout.splitlines() if "no live process since" in line]
    assert f"--database {store_url} --shard 2/2 --run-id live-run`" in said, said
    app = create_app(
        store_url, port=8765, config=load_config(project / "evalkit.toml"), store_options=("--database", store_url)
    )
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        page = run_page(client, stored.live)
    assert element_text(page.text, "live").startswith(f"No process answers this run any more: it has {said}.")


def test_a_running_run_whose_process_died_says_so_as_history_and_show_do(client, viewer_cli, stored, store_url) -> None:
    """`history` and `show` said `running (no live process)` since when, with the command that
    continues the run, where the viewer's run and set pages said plain `running` and the run page
    "still being answered"; they now read the same rule (`evalkit.run.continuing.status_label`, `gone_sentence`)."""

    # shard 1 is in, shard 2 not started yet: the run is waited for, not given up on
    waiting = run_page(client, stored.live)
    assert element_text(waiting.text, "run-status").startswith("running, ")
    assert "This run is still being answered" in element_text(waiting.text, "live")
    before = client.get("/progress", params={"id": stored.live}).json()

    # shard 2 started on machine ci-7 and was killed there
    kill_second_shard_elsewhere(store_url, stored.live)
    rerun = "`evalkit run viewkit.live --provider app --privacy full --shard 2/2 --run-id live-run`"
    shown = viewer_cli("show", stored.live)  # the default store: its line names no --database, as the page
    (said,) = [line.strip() for line in shown.stdout.splitlines() if "no live process since" in line]
    assert rerun in said

    page = run_page(client, stored.live)
    assert element_text(page.text, "run-status").startswith("running (no live process), ")
    assert element_text(page.text, "live").startswith(f"No process answers this run any more: it has {said}.")
    assert "still being answered" not in page.text
    after = client.get("/progress", params={"id": stored.live}).json()
    assert (before["status"], before["status_label"]) == ("running", "running")
    assert after["status"] == "running" and after["status_label"] == "running (no live process)"
    assert after["state"] != before["state"], "an open page reloads to say it"
    (state,) = re.findall(r'data-progress-state="([^"]*)"', page.text)
    assert html.unescape(state) == after["state"]
    listed = client.get("/set", params={"id": "viewkit.live"})
    (cell,) = re.findall(r'<td class="nowrap run-status">(.*?)</td>', listed.text)
    assert cell == "running (no live process)"


def test_the_compare_page_says_a_running_run_whose_process_died_is_gone_as_the_run_page_does(
    client, viewer_cli, stored, store_url
) -> None:
    """The compare page said plain "The run is running" of a run no process answers any more,
    where the run page, the set page, `history` and `show` say `running (no live process)` since
    when, with the command that continues it: it reads the same rule (`evalkit.leases`)."""

    done = viewer_cli("run", "viewkit.live", "--provider", "app", "--privacy", "full", "--json")
    assert done.code == 0, done.stderr[-3000:]
    base = done.json()["run_id"]

    def notes() -> list[str]:
        page = client.get("/compare", params={"base": base, "run": stored.live})
        assert page.status_code == 200
        listed = re.search(r'<ul class="notes">(.*?)</ul>', page.text, re.S)
        return [html.unescape(note) for note in re.findall(r"<li>(.*?)</li>", listed.group(1), re.S)] if listed else []

    # shard 2 not started yet: the run is waited for
    assert notes() == ["The run is running: cases it lacks count as added or removed."]

    kill_second_shard_elsewhere(store_url, stored.live)
    shown = viewer_cli("show", stored.live)  # the default store: its line names no --database, as the page
    (said,) = [line.strip() for line in shown.stdout.splitlines() if "no live process since" in line]
    assert "`evalkit run viewkit.live --provider app --privacy full --shard 2/2 --run-id live-run`" in said
    assert notes() == [
        f"The run is running (no live process): cases it lacks count as added or removed; it has {said}."
    ]
    # the other way round, the base is the one named
    swapped = client.get("/compare", params={"base": stored.live, "run": base})
    assert (
        html.unescape(swapped.text).count(
            f"The base is running (no live process): cases it lacks count as added or removed; it has {said}."
        )
        == 1
    )


def test_the_run_and_compare_pages_continue_a_killed_run_of_another_model_with_it_as_show_does(
    client, viewer_cli, stored, store_url
) -> None:
    """A killed run of a configured instance given another `--model`: `show` and `history` say
    `--provider app --model app-mini` in the line that continues it (the configured alias would be
    refused), where the run and compare pages said `--provider app` alone: they read the same
    configured aliases (`evalkit.run.continuing.resume_defaults`)."""
    from evalkit.storage import open_repository

    done = viewer_cli("run", "viewkit.live", "--provider", "app", "--privacy", "full", "--json")
    assert done.code == 0, done.stderr[-3000:]
    base = done.json()["run_id"]
    repo = open_repository(store_url)
    try:  # the run was answered with `--provider app --model app-mini`
        repo.Run.update({repo.Run.model_alias: "app-mini"}).where(repo.Run.id == stored.live).execute()
    finally:
        repo.close()
    kill_second_shard_elsewhere(store_url, stored.live)
    rerun = "`evalkit run viewkit.live --provider app --model app-mini --privacy full --shard 2/2 --run-id live-run`"
    shown = viewer_cli("show", stored.live)  # the default store: its line names no --database, as the page
    (said,) = [line.strip() for line in shown.stdout.splitlines() if "no live process since" in line]
    assert rerun in said
    page = run_page(client, stored.live)
    assert element_text(page.text, "live").startswith(f"No process answers this run any more: it has {said}.")
    compared = client.get("/compare", params={"base": base, "run": stored.live})
    assert (
        f"The run is running (no live process): cases it lacks count as added or removed; it has {said}."
        in html.unescape(compared.text)
    )


def test_the_run_and_compare_pages_continue_a_killed_run_with_its_repeats_once_the_configured_ones_change(
    viewer_cli, stored, store_url, project
) -> None:
    """A killed run answered once, as the configuration said when it began; then `[run] repeats = 3`
    configured: the run and compare pages said `evalkit run viewkit.live --provider app --shard 2/2
    …`, which, pasted, answered 3 times and was refused; then they said its `--repeats 1`. A
    continuing command without `--repeats` now answers with the run's own: the pages say the
    shortest line that does so, as `show` does."""
    from evalkit.config import load_config
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    done = viewer_cli("run", "viewkit.live", "--provider", "app", "--privacy", "full", "--json")
    assert done.code == 0, done.stderr[-3000:]
    base = done.json()["run_id"]
    kill_second_shard_elsewhere(store_url, stored.live)
    config = project / "evalkit.toml"
    config.write_text(config.read_text() + "\n[run]\nrepeats = 3\n")
    rerun = "`evalkit run viewkit.live --provider app --privacy full --shard 2/2 --run-id live-run`"
    shown = viewer_cli("show", stored.live)  # the default store: its line names no --database, as the page
    (said,) = [line.strip() for line in shown.stdout.splitlines() if "no live process since" in line]
    assert rerun in said
    app = create_app(store_url, port=8765, config=load_config(config))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        page = run_page(client, stored.live)
        assert element_text(page.text, "live").startswith(f"No process answers this run any more: it has {said}.")
        compared = client.get("/compare", params={"base": base, "run": stored.live})
        assert (
            f"The run is running (no live process): cases it lacks count as added or removed; it has {said}."
            in html.unescape(compared.text)
        )


def test_unknown_ids_are_404_pages(client, stored) -> None:
    for path, params in (("/run", {"id": "no-such-run"}), ("/run", {}), ("/case", {}), ("/set", {"id": "x.y"})):
        response = client.get(path, params=params)
        assert response.status_code == 404, path
        assert "text/html" in response.headers["content-type"]
    assert client.get("/nowhere").status_code == 404
    assert client.get("/static/nothing.js").status_code == 404


def test_secrets_are_scrubbed_from_every_page(client, stored) -> None:
    pages = [run_page(client, stored.v2).text, client.get("/case", params={"run": stored.v2, "id": "secret"}).text,
             client.get("/compare", params={"base": stored.v1, "run": stored.v2, "show": "all"}).text,
             run_page(client, stored.v2, q="configured").text]  # fmt: skip
    for text in pages:
        assert SECRET not in text and SECRET[:12] not in text and EMAIL not in text
    assert "with key *** for ***" in pages[1]


def test_hostile_ids_answers_and_labels_are_text(client, stored) -> None:
    for response in (
        client.get("/"),
        client.get("/set", params={"id": HOSTILE_SET}),
        run_page(client, HOSTILE_RUN_ID),
        client.get("/case", params={"run": HOSTILE_RUN_ID, "id": SCRIPT_ID}),
        run_page(client, stored.v2),
        client.get("/compare", params={"base": stored.v1, "run": stored.v2, "show": "all"}),
    ):
        assert response.status_code == 200, response.url
        text = response.text
        for raw in ("<script>window", "<img src", "<svg onload", "<b>set", "<i>", "\x1b", "\x00", "\u202e"):
            assert raw not in text, (response.url, raw)
        assert markup_problems(text) == [], response.url
    hostile = run_page(client, HOSTILE_RUN_ID).text
    assert shown(HOSTILE_RUN_ID) in hostile and "\\u202e" in hostile and "\\x1b[31m" in hostile
    assert "note &lt;script&gt;" in hostile and "yyyy… (5,001 characters)" in hostile  # a long id cut in the list
    answer = client.get("/case", params={"run": stored.v2, "id": SCRIPT_ID}).text
    assert "goodbye &lt;script&gt;window.__evalkitAnswer=1&lt;/script&gt;" in answer and "\\x1b[31mred\\x00" in answer
    rtl = client.get("/case", params={"run": stored.v2, "id": RTL_ID})
    assert rtl.status_code == 200 and "rtl-\\u202eevil.exe" in rtl.text


def test_the_progress_document_is_json(client, stored) -> None:
    document = client.get("/progress", params={"id": stored.v2})
    assert document.headers["content-type"] == "application/json"
    assert json.loads(document.text)["status"] == "complete"
