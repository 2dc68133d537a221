"""Judge graders end to end through ``evalkit run``: the model under test is a replay instance,
the judge an ``openai`` instance pointed at the local chat-completions server (scripted verdicts)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from evalkit.config import load_config
from evalkit.errors import ConfigError, UsageError
from evalkit.evaluation import evaluate_set

from tests.plugins.judge_support import JUDGE_MODEL, closed_port_url, decision_reply, user_message
from tests.support.chat_server import ChatServer, Fault
from tests.support.providers import openai_provider_table

YARDSTICK = f"decision:judge:{JUDGE_MODEL}:v1"

#: The model under test's answers to the smoke set, each with the passages it was given.
ANSWERS = {
    "capital-of-france": ("Paris", ["Paris is the capital of France."]),
    "two-plus-two": ("4", ["2 + 2 = 4"]),
    "opening-hours": ("Monday to Friday, 9am to 5pm.", ["The office is open Monday to Friday, 9am to 5pm."]),
    "contact-json": ('{"email": "office@example.org"}', ["Contact: office@example.org"]),
    "receipt-deadline": ("Submit it within 30 days, by e-mail.", ["3.2 Receipts must be submitted within 30 days."]),
    "colleague-claims": ("I can't share other people's claims.", ["Claims are visible to their owner only."]),
    "echo-token": ("ACKNOWLEDGED", ["Reply with ACKNOWLEDGED."]),
}


def write_project(project: Path, judge_url: str, *, without_passages: tuple[str, ...] = (), extra: str = "") -> None:
    """evalkit.toml with the replay instance ``sut`` under test and the judge instance ``judge``."""
    lines = []
    for case_id, (text, passages) in ANSWERS.items():
        item: dict[str, Any] = {"id": case_id, "text": text, "model": "sut-model-1"}
        if case_id not in without_passages:
            item["passages"] = passages
        lines.append(json.dumps(item))
    (project / "answers.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (project / "evalkit.toml").write_text(
        f"""judge = "judge"
{extra}
[providers.sut]
adapter = "replay"
path = "{(project / 'answers.jsonl').as_posix()}"
model = "sut"

{openai_provider_table('judge', judge_url, 'judge-alias')}""",
        encoding="utf-8",
    )


def verdicts(default: str, **by_answer: str) -> Callable[[Mapping[str, Any]], str]:
    """Reply ``default``, or the reply given for the answer text a request carries."""
    markers = {ANSWERS[case_id.replace("_", "-")][0]: reply for case_id, reply in by_answer.items()}

    def respond(body: Mapping[str, Any]) -> str:
        user = user_message(body)
        for text, reply in markers.items():
            if f"<<<\n{text}\n>>>" in user:
                return reply
        return default

    return respond


def sequence(default: str, case_id: str, *replies: str) -> Callable[[Mapping[str, Any]], str]:
    """Reply ``replies`` in turn to the requests about ``case_id``'s answer, ``default`` to the others."""
    marker = f"<<<\n{ANSWERS[case_id][0]}\n>>>"
    queue = list(replies)

    def respond(body: Mapping[str, Any]) -> str:
        return queue.pop(0) if marker in user_message(body) else default

    return respond


def completions(server: ChatServer) -> list[dict[str, Any]]:
    """The chat-completion request bodies the judge received."""
    return [r.body for r in server.requests if r.method == "POST"]


@pytest.fixture
def judge(chat_server: ChatServer, project: Path) -> ChatServer:
    """The judge server, reporting a dated model, configured in the project."""
    chat_server.model = JUDGE_MODEL
    chat_server.responder = verdicts(decision_reply(4))
    write_project(project, chat_server.base_url)
    return chat_server


def run(evalkit_cli: Callable[..., Any], *args: str) -> tuple[int, dict[str, Any]]:
    """``evalkit run evalkit.smoke --provider sut --json ARGS``: the exit code and the document."""
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--json", *args)
    assert result.code in (0, 1), result.stderr
    return result.code, result.json()


# -- decision -----------------------------------------------------------------------------------


def test_a_decision_run_is_stored_under_its_yardstick_and_compared_within_it(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    code, first = run(evalkit_cli, "--grader", "decision", "--fail-on-regression")
    assert code == 0
    assert first["grader"] == YARDSTICK
    assert first["status"] == "complete" and first["passed"] == 7
    assert first["verdict"]["state"] == "baseline"
    assert {c["yardstick"] for c in first["cases"]} == {YARDSTICK}
    assert first["metrics"]["judge"] == {
        "grader": "decision",
        "instance": "judge",
        "prompt_version": 1,
        "repeats": 1,
        "structured_output": "json_schema",
        "structured_output_refused": [],
    }
    probes = [r for r in judge.requests if r.method == "GET"]
    assert [p.path for p in probes] == ["/v1/models"]  # one readiness check, before the first paid call
    assert judge.requests[0].method == "GET"
    bodies = completions(judge)
    assert len(bodies) == 7 and all(b["temperature"] == 0 for b in bodies)
    capital = next(user_message(b) for b in bodies if "<<<\nParis\n>>>" in user_message(b))
    assert (
        "Instructions the response had to follow:\nYou are a concise factual assistant. Answer in as few words as possible."
        "\n\nTask:\nWhat is the capital of France? Answer with the city name only."
    ) in capital
    assert "Reference answer: Paris" in capital

    judge.responder = verdicts(decision_reply(4), two_plus_two=decision_reply(1, "Wrong."))
    code, second = run(evalkit_cli, "--grader", "decision", "--fail-on-regression")
    assert code == 1
    assert second["grader"] == YARDSTICK
    assert second["verdict"]["state"] == "regressed" and second["verdict"]["regressed"]
    assert second["verdict"]["regressed_cases"] == ["two-plus-two"]
    assert second["verdict"]["baseline_id"] == first["run_id"]


def test_the_table_shows_the_judges_reason_and_the_store_keeps_it_privacy_permitting(
    judge: ChatServer, evalkit_cli: Callable[..., Any], project: Path
) -> None:
    judge.responder = verdicts(decision_reply(4), echo_token=decision_reply(1, "Says [source] ACK only."))
    stored = project / ".evalkit" / "results.db"
    shown = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision", "--privacy", "redacted")
    assert shown.code == 0, shown.stderr
    assert "fulfilment (Fulfilment level 1.00 of 4. Says [source] ACK only.)" in shown.stdout
    assert f"Grader:     {YARDSTICK}" in shown.stdout
    assert b"Says [source] ACK only." in b"".join(p.read_bytes() for p in stored.parent.glob("results.db*"))
    stored.unlink()
    for extra in stored.parent.glob("results.db-*"):
        extra.unlink()
    at_metadata = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision")
    assert "Says [source] ACK only." in at_metadata.stdout  # shown on this terminal ...
    assert b"Says" not in b"".join(p.read_bytes() for p in stored.parent.glob("results.db*"))  # ... never stored


def test_some_decisions_failed_stores_plain_decision_and_never_compares(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    assert run(evalkit_cli, "--grader", "decision")[0] == 0  # a baseline that a mixed run must not use
    judge.responder = verdicts(decision_reply(4), contact_json="I'd say level 4.")
    code, document = run(evalkit_cli, "--grader", "decision")
    assert code == 0
    assert document["grader"] == "decision"
    assert document["status"] == "complete"
    assert document["verdict"]["state"] == "not_comparable"
    assert "do not share one yardstick" in document["verdict"]["reason"]
    failed = next(c for c in document["cases"] if c["id"] == "contact-json")
    assert failed["yardstick"] == "decision:failed" and not failed["passed"] and not failed["errored"]
    assert failed["checks"][0]["name"] == "grading"
    assert failed["checks"][0]["error"].startswith("Judge failed: the judge's reply was unusable twice")
    assert run(evalkit_cli, "--grader", "decision", "--fail-on-regression")[0] == 1


def test_every_decision_failed_stores_decision_failed(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judge.responder = lambda body: "level 4"
    code, document = run(evalkit_cli, "--grader", "decision")
    assert code == 0
    assert document["grader"] == "decision:failed"
    assert document["passed"] == 0 and document["status"] == "complete"
    assert "no grading of this run could be made" in document["verdict"]["reason"]
    assert len(completions(judge)) == 14  # every case asked twice
    assert run(evalkit_cli, "--grader", "decision", "--fail-on-regression")[0] == 1


def test_the_judge_model_changing_mid_run_stores_plain_decision(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    judge.fail_at(5, Fault.other_model("judge-model-2025-06-01"))  # request 1 is the readiness probe
    code, document = run(evalkit_cli, "--grader", "decision", "--concurrency", "1")
    assert code == 0
    assert document["grader"] == "decision"
    assert {c["yardstick"] for c in document["cases"]} == {YARDSTICK, "decision:judge:judge-model-2025-06-01:v1"}
    assert "the judge model changed during the run" in document["verdict"]["reason"]
    assert run(evalkit_cli, "--grader", "decision", "--concurrency", "1", "--fail-on-regression")[0] == 0  # no change now


@pytest.mark.parametrize("reported", ["judge-\u202emodel", "judge\x1b[31m</script>", "x" * 151, "https://judge.example/model"])
def test_a_judge_reporting_a_model_that_is_not_well_formed_is_a_failed_grading(
    judge: ChatServer, evalkit_cli: Callable[..., Any], reported: str
) -> None:
    # The judge's model is part of the yardstick, the run's scope: it became a grader named
    # "decision:judge:judge-\u202emodel:v1", a scope of its own whose first run was accepted as its
    # baseline, where the model under test reporting the same name is "not well formed".
    judge.model = reported
    code, document = run(evalkit_cli, "--grader", "decision")
    assert code == 0
    assert document["grader"] == "decision:failed" and not document["accepted"]
    errors = {c["checks"][0]["error"] for c in document["cases"]}
    assert len(errors) == 1
    (error,) = errors
    assert 'the judge "judge" reported a model that is not well formed (' in error
    assert "so its verdict cannot be attributed" in error and "\x1b" not in error and "\u202e" not in error


def test_a_judge_reporting_a_windows_path_as_its_model_grades_and_is_compared(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    """A llama.cpp or LM Studio server on Windows reports its model file's path: every grading
    failed ("may only use ASCII letters, digits and _ . / : @ + -") where the same server's
    POSIX path passed. A Windows path is a model name like any other path."""
    judge.model = "C:\\models\\judge.gguf"
    yardstick = "decision:judge:C:\\models\\judge.gguf:v1"
    code, first = run(evalkit_cli, "--grader", "decision")
    assert code == 0 and first["grader"] == yardstick and first["passed"] == 7, first["cases"][0]["checks"]
    assert first["verdict"]["state"] == "baseline"
    code, second = run(evalkit_cli, "--grader", "decision", "--fail-on-regression")
    assert code == 0 and second["grader"] == yardstick and second["verdict"]["state"] == "no_regression", second["verdict"]


def test_an_unreachable_judge_refuses_the_run_before_anything_is_paid_or_stored(project: Path, evalkit_cli: Callable[..., Any]) -> None:
    write_project(project, closed_port_url())
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision")
    assert result.code == 2
    assert 'The "decision" grader cannot run: its judge "judge" is not reachable' in result.stderr
    assert not (project / ".evalkit").exists()


def test_the_model_under_test_cannot_judge_itself_unless_allowed(judge: ChatServer, evalkit_cli: Callable[..., Any], project: Path) -> None:
    refused = evalkit_cli("run", "evalkit.smoke", "--provider", "judge", "--grader", "decision")
    assert refused.code == 2
    assert 'the judge "judge" is the provider instance under test' in refused.stderr
    assert "--allow-self-judge" in refused.stderr
    assert judge.requests == [] and not (project / ".evalkit").exists()

    judge.responder = verdicts(decision_reply(4))
    allowed = evalkit_cli(
        "run", "evalkit.smoke", "--provider", "judge", "--grader", "decision", "--allow-self-judge", "--json"
    )
    assert allowed.code == 0, allowed.stderr
    assert allowed.json()["status"] == "complete"


def test_judge_options_name_the_judge_and_are_refused_for_graders_without_one(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    unknown = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision", "--judge", "gpt4-judge")
    assert unknown.code == 2
    assert 'judge "gpt4-judge" is not a configured provider instance (configured: sut, judge)' in unknown.stderr
    deterministic = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--judge-repeats", "3")
    assert deterministic.code == 2
    assert '"deterministic" asks a judge only about a set\'s rubric checks, once per criterion' in deterministic.stderr
    assert judge.requests == []


def test_no_judge_configured_is_refused(chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    write_project(project, chat_server.base_url)
    text = (project / "evalkit.toml").read_text().replace('judge = "judge"\n', "", 1)
    (project / "evalkit.toml").write_text(text)
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision")
    assert result.code == 2
    assert 'name a configured provider instance with --judge NAME, or set judge = "NAME" in evalkit.toml' in result.stderr
    with_flag = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision", "--judge", "judge", "--json")
    assert with_flag.code == 0, with_flag.stderr


def test_a_judge_refusal_names_the_option_on_the_command_line_and_the_keyword_to_a_python_caller(
    judge: ChatServer, project: Path, sqlite_url: str
) -> None:
    """`evalkit run` is told `--judge NAME` and `--allow-self-judge` (above); a Python caller, who
    gives the judge as ``grader_options={"judge": …}``, was told the same flags, which it has no
    way to pass."""
    config = load_config(project / "evalkit.toml")
    with pytest.raises(UsageError) as self_judged:
        evaluate_set("evalkit.smoke", provider="judge", grader="decision", config=config, database=sqlite_url)
    message = str(self_judged.value)
    assert 'choose another judge with grader_options={"judge": NAME}, or pass grader_options={"allow_self_judge": True}' in message
    assert "--" not in message

    (project / "evalkit.toml").write_text((project / "evalkit.toml").read_text().replace('judge = "judge"\n', "", 1))
    with pytest.raises(UsageError) as unnamed:
        evaluate_set("evalkit.smoke", provider="sut", grader="decision", config=load_config(project / "evalkit.toml"), database=sqlite_url)
    assert 'name a configured provider instance with grader_options={"judge": NAME}, or set judge = "NAME"' in str(unnamed.value)
    with pytest.raises(ConfigError) as mistyped:
        evaluate_set("evalkit.smoke", provider="sut", grader="decision", grader_options={"repeats": "x"}, config=config, database=sqlite_url)
    assert 'option "repeats" in the grader options (grader_options)' in str(mistyped.value)
    assert judge.requests == [] and not (project / ".evalkit").exists()


def test_a_mistyped_judge_option_names_the_flags_on_the_command_line(
    judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    (project / "evalkit.toml").write_text((project / "evalkit.toml").read_text() + '\n[graders.decision]\nrepeats = "x"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision")
    assert result.code == 2, result.stderr
    assert "(--judge, --judge-repeats, --judge-temperature, --allow-self-judge)" in result.stderr


# -- llm_judge ------------------------------------------------------------------------------------


def test_llm_judge_is_refused_by_the_cli_and_falls_back_in_the_library(
    judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any], sqlite_url: str
) -> None:
    refused = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "llm_judge")
    assert refused.code == 2
    assert 'Unknown grader "llm_judge". Available graders: decision, deterministic, groundedness' in refused.stderr
    assert not (project / ".evalkit").exists()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = evaluate_set(
            "evalkit.smoke", provider="sut", grader="llm_judge", config=load_config(project / "evalkit.toml"), database=sqlite_url
        )
    assert any('unknown grader "llm_judge"' in str(w.message) for w in caught)
    assert outcome.run.grader == "deterministic"
    assert judge.requests == []  # not even a readiness probe: no judge was involved


# -- measuring the judge ------------------------------------------------------------------------


def test_plan_estimates_every_answer_and_judge_call_of_repeats(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    """`evalkit plan --repeats N --judge-repeats M` estimates the run it plans: N answers a prompt,
    each judged M times, and N times one pass's tokens; it printed one pass's tokens and cost."""

    def plan(*args: str) -> Any:
        return evalkit_cli("plan", "evalkit.smoke", "--provider", "sut", "--grader", "decision", *args)

    once = plan("--json").json()
    assert (once["answers"], once["judge_calls"]) == (7, 7)
    assert (once["estimate"]["generator_requests"], once["estimate"]["judge_requests"]) == (7, 7)
    document = plan("--repeats", "3", "--judge-repeats", "2", "--json").json()
    estimate = document["estimate"]
    assert (document["answers"], document["judge_calls"]) == (21, 42)
    assert (estimate["generator_requests"], estimate["judge_requests"]) == (21, 42), "the plan's own counts"
    for tokens in ("prompt_tokens", "completion_tokens"):
        assert estimate[tokens] == 3 * once["estimate"][tokens] > 0, tokens
    # a pass of judge calls is asked twice per answer, and every answer three times
    for tokens in ("judge_prompt_tokens", "judge_completion_tokens"):
        assert estimate[tokens] == 6 * once["estimate"][tokens] > 0, tokens
    shown = plan("--repeats", "3", "--judge-repeats", "2")
    assert shown.code == 0, shown.stderr
    assert "Requests:         21 answers (3 per case), 42 judge calls" in shown.stdout
    assert "Requests sent:" not in shown.stdout, "the estimate counts what the plan counts: no second line"
    assert f"Tokens:           about {estimate['prompt_tokens']:,} in, {estimate['completion_tokens']:,} out" in shown.stdout
    assert completions(judge) == [], "a plan asks nothing"


def test_plan_counts_the_judge_calls_a_graders_table_configures(judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    """`[graders.NAME] repeats = K` makes a run ask the judge K times an answer, so the plan counts
    K judge calls an answer as the run would (it counted one, from `--judge-repeats` alone), and
    the command line's `--judge-repeats` still wins over the table."""
    write_project(project, judge.base_url, extra="[graders.decision]\nrepeats = 3\n")

    def plan(*args: str) -> Any:
        return evalkit_cli("plan", "evalkit.smoke", "--provider", "sut", "--grader", "decision", *args)

    document = plan("--json").json()
    assert (document["answers"], document["judge_calls"]) == (7, 21)
    assert (document["estimate"]["generator_requests"], document["estimate"]["judge_requests"]) == (7, 21)
    shown = plan()
    assert shown.code == 0, shown.stderr
    assert "Requests:         7 answers (1 per case), 21 judge calls" in shown.stdout, shown.stdout
    assert "Requests sent:" not in shown.stdout, "the plan counts what the estimate counts"
    given = plan("--judge-repeats", "2", "--json").json()
    assert (given["judge_calls"], given["estimate"]["judge_requests"]) == (14, 14), "the command line wins over the table"
    code, ran = run(evalkit_cli, "--grader", "decision")
    assert code == 0 and ran["metrics"]["judge"]["repeats"] == 3, "what the plan counted is what a run asks"
    assert len(completions(judge)) == 21


def test_the_command_line_takes_as_many_repeats_as_a_run() -> None:
    from evalkit.cli.params import MAX_REPEATS as parsed
    from evalkit.config import MAX_REPEATS

    assert parsed == MAX_REPEATS, "evalkit.cli.params keeps its own copy (the CLI imports no configuration code to parse)"


def test_repeats_past_what_a_run_takes_are_refused_by_the_plan_as_by_the_run(judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    """A run takes at most 1,000 answers a prompt and 1,000 judge calls an answer. `evalkit plan
    --repeats 1001` planned a run that `evalkit run` refuses, and `[graders.NAME] repeats =
    1000000000000` was taken by both: the plan counted the judge calls one by one (it never
    ended) and a run would have gathered that many requests a case."""

    def both(*args: str) -> list[Any]:
        common = ("evalkit.smoke", "--provider", "sut", "--grader", "decision", *args)
        return [evalkit_cli("plan", *common), evalkit_cli("run", *common)]

    # refused as the command line is read, naming the option: 0 was "from 1 to 1000000" there, 1001
    # "repeats must be … from 1 to 1000" later, naming none (and a judge's options, for --judge-repeats)
    for option in ("--repeats", "--judge-repeats"):
        for done in both(option, "1001"):
            assert done.code == 2, done.stderr
            assert f"Invalid value for '{option}': must be a whole number from 1 to 1000, got '1001'" in done.stderr, done.stderr
    calibrate = evalkit_cli("judge", "calibrate", "--set", "x", "--repeats", "1001")
    assert calibrate.code == 2 and "Invalid value for '--repeats': must be a whole number from 1 to 1000" in calibrate.stderr
    write_project(project, judge.base_url, extra="[graders.decision]\nrepeats = 1000000000000\n")
    for done in both():
        assert done.code == 2, done.stderr
        assert '[graders."decision"]' in done.stderr and "repeats must be a whole number from 1 to 1000 (got 1000000000000)" in done.stderr
    write_project(project, judge.base_url, extra="[graders.decision]\nrepeats = 1000\n")
    most = evalkit_cli("plan", "evalkit.smoke", "--provider", "sut", "--grader", "decision", "--json").json()
    assert (most["judge_calls"], most["estimate"]["judge_requests"]) == (7000, 7000)
    assert completions(judge) == [], "nothing was asked"


def test_repeats_report_self_agreement_and_an_unstable_case_cannot_flip_the_gate(
    judge: ChatServer, evalkit_cli: Callable[..., Any]
) -> None:
    code, baseline = run(evalkit_cli, "--grader", "decision", "--judge-repeats", "3")
    assert code == 0
    assert baseline["metrics"]["judge"]["self_agreement"] == 1.0
    assert baseline["metrics"]["judge"]["unstable_cases"] == []
    assert len(completions(judge)) == 21

    judge.responder = sequence(decision_reply(4), "echo-token", decision_reply(4), decision_reply(0), decision_reply(0))
    code, current = run(evalkit_cli, "--grader", "decision", "--judge-repeats", "3", "--fail-on-regression")
    judge_metrics = current["metrics"]["judge"]
    assert judge_metrics["repeats"] == 3
    assert judge_metrics["judged_cases"] == 7 and judge_metrics["agreeing_cases"] == 6
    assert judge_metrics["self_agreement"] == pytest.approx(6 / 7)
    assert judge_metrics["unstable_cases"] == ["echo-token"]
    echo = next(c for c in current["cases"] if c["id"] == "echo-token")
    assert echo["unstable"] and not echo["passed"]
    assert echo["yardstick"] == YARDSTICK
    # Stored at the default metadata privacy: every verdict survives as a check name, no reasons.
    assert [(c["name"], c["passed"], c["detail"]) for c in echo["checks"]] == [
        ("fulfilment", False, None),
        ("verdict 1/3 = level 4", True, None),
        ("verdict 2/3 = level 0", False, None),
        ("verdict 3/3 = level 0", False, None),
        ("judge_agreement", False, None),
    ]
    # Without the rule the 1/7 pass-rate drop would exceed the 0.1 tolerance.
    assert current["verdict"]["state"] == "no_regression"
    assert current["verdict"]["unstable_cases"] == ["echo-token"]
    assert not current["verdict"]["regressed"]
    assert code == 0

    judge.responder = sequence(decision_reply(4), "echo-token", decision_reply(4), decision_reply(0), decision_reply(0))
    shown = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision", "--judge-repeats", "3")
    assert "Judge:      \"judge\" (prompt v1, asked 3x per case); self-agreement 85.7% (6/7 cases), 1 unstable" in shown.stdout
    assert "FAIL (unstable)" in shown.stdout
    assert "Left out of the comparison, the judge disagreed with itself (1): echo-token" in shown.stdout


# -- groundedness -------------------------------------------------------------------------------


def test_groundedness_end_to_end_prints_the_least_supported_claim_for_failed_cases(
    judge: ChatServer, evalkit_cli: Callable[..., Any]
) -> None:
    judge.responder = verdicts(
        "SUPPORTED\t",
        receipt_deadline="PARTIAL\tby e-mail",
        colleague_claims="UNSUPPORTED\tI can't share other people's claims.",
    )
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "groundedness", "--privacy", "full")
    assert result.code == 0, result.stderr
    assert "grounded (PARTIAL; least supported: by e-mail)" in result.stdout
    assert "grounded (UNSUPPORTED; least supported: I can't share other people's claims.)" in result.stdout
    assert f"Grader:     groundedness:judge:{JUDGE_MODEL}:v1" in result.stdout
    assert "Mean score: 0.786" in result.stdout  # (5 + 0.5 + 0) / 7
    user = user_message(completions(judge)[0])
    assert "PASSAGES\n<<<\n[1] " in user and "Do not use anything" in user


def test_groundedness_of_an_answer_without_passages_is_an_errored_grading(
    chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    chat_server.model = JUDGE_MODEL
    chat_server.responder = lambda body: "SUPPORTED\t"
    write_project(project, chat_server.base_url, without_passages=("two-plus-two",))
    code, document = run(evalkit_cli, "--grader", "groundedness")
    assert code == 0
    assert document["grader"] == "groundedness"  # one case has no groundedness yardstick: never compared
    case = next(c for c in document["cases"] if c["id"] == "two-plus-two")
    assert not case["passed"] and not case["errored"]
    assert case["yardstick"] == "groundedness:failed"
    assert "the answer carries no passages" in case["checks"][0]["error"]
    assert len(completions(chat_server)) == 6


def test_a_judge_that_refuses_the_credentials_stops_the_run_before_anything_is_stored(evalkit_cli, project, chat_server) -> None:
    from tests.support.chat_server import Fault

    (project / "evalkit.toml").write_text(
        "[providers.sut]\nadapter = \"reference\"\n\n"
        f"[providers.judge]\nadapter = \"openai\"\nbase_url = \"{chat_server.base_url}\"\nmodel = \"judge-model\"\n"
        "api_key_env = \"EVALKIT_TEST_JUDGE_KEY\"\n"
    )
    chat_server.fail_next(Fault.http_error(401))
    env = {"EVALKIT_TEST_JUDGE_KEY": "a-revoked-key"}
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision", "--judge", "judge", env=env)
    assert result.code == 2, result.stdout + result.stderr
    assert 'The "decision" grader cannot run' in result.stderr and "judge" in result.stderr
    assert not (project / ".evalkit").exists()  # the store was never opened
    assert [r.path for r in chat_server.requests] == ["/v1/models"]


# -- structured output negotiation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("accepted", "refuse_status", "expected_mode", "expected_formats"),
    [
        (frozenset({"json_schema", "json_object", "text"}), 400, "json_schema", ["json_schema"]),
        (frozenset({"json_object", "text"}), 500, "json_object", ["json_schema", "json_object"]),
        (frozenset({"json_object", "text"}), 400, "json_object", ["json_schema", "json_object"]),
        (frozenset(), 500, "none", ["json_schema", "json_object", None]),
        (frozenset(), 422, "none", ["json_schema", "json_object", None]),
    ],
    ids=["json_schema-accepted", "llama.cpp-500", "openai-400", "none-500", "none-422"],
)
def test_the_judge_negotiates_structured_output_and_remembers_it_for_the_run(
    judge: ChatServer,
    evalkit_cli: Callable[..., Any],
    accepted: frozenset[str],
    refuse_status: int,
    expected_mode: str,
    expected_formats: list[str | None],
) -> None:
    judge.response_formats = accepted
    judge.refuse_status = refuse_status
    code, document = run(evalkit_cli, "--grader", "decision", "--concurrency", "1")
    assert code == 0
    assert document["status"] == "complete" and document["grader"] == YARDSTICK and document["passed"] == 7
    judge_metrics = document["metrics"]["judge"]
    assert judge_metrics["structured_output"] == expected_mode
    assert len(judge_metrics["structured_output_refused"]) == len(expected_formats) - 1
    asked = [(b.get("response_format") or {}).get("type") for b in completions(judge)]
    # The refused modes are each asked once, never retried; every later request uses what was accepted.
    assert asked[: len(expected_formats)] == expected_formats
    assert asked[len(expected_formats) :] == [expected_formats[-1]] * 6
    assert len(asked) == len(expected_formats) + 6


def test_an_error_naming_another_request_field_is_not_retried_and_fails_only_the_grading(
    judge: ChatServer, evalkit_cli: Callable[..., Any], project: Path
) -> None:
    config = project / "evalkit.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("max_attempts = 1", "max_attempts = 5"), encoding="utf-8")
    body = json.dumps({"error": {"message": "[{'loc': ('body', 'temperature'), 'msg': 'Input should be less than 2'}]"}})
    judge.fail_at(2, Fault.http_error(500, body=body))  # request 1 is the readiness probe
    code, document = run(evalkit_cli, "--grader", "decision", "--concurrency", "1")
    assert code == 0
    grading_errors = [check["error"] for c in document["cases"] for check in c["checks"] if check["name"] == "grading"]
    assert len(grading_errors) == 1
    assert "'temperature'" in grading_errors[0] and "not retried" in grading_errors[0]
    assert len(completions(judge)) == 7  # the refused request was asked once, not five times


@pytest.mark.parametrize(("judge_concurrency", "expected"), [(None, 3), (2, 2)])
def test_the_repeats_of_a_case_are_asked_in_parallel_within_the_judges_own_concurrency(
    judge: ChatServer, evalkit_cli: Callable[..., Any], project: Path, judge_concurrency: int | None, expected: int
) -> None:
    if judge_concurrency is not None:
        config = project / "evalkit.toml"
        config.write_text(config.read_text(encoding="utf-8") + f"concurrency = {judge_concurrency}\n", encoding="utf-8")
    judge.delay = 0.2
    code, document = run(evalkit_cli, "--grader", "decision", "--judge-repeats", "3", "--concurrency", "1")
    assert code == 0 and document["metrics"]["judge"]["judged_cases"] == 7
    assert judge.max_in_flight == expected


def test_a_graders_table_in_the_configuration_sets_the_graders_options(chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    """`[graders.NAME]` configures a grader as `[providers.NAME]` configures a generator; the
    command line's judge flags still win over it."""
    chat_server.model = JUDGE_MODEL
    chat_server.responder = verdicts(decision_reply(3))  # fulfilment 0.75: passes the default 0.6
    write_project(project, chat_server.base_url)
    _, lenient = run(evalkit_cli, "--grader", "decision")
    assert lenient["passed"] == 7
    write_project(project, chat_server.base_url, extra="[graders.decision]\npass_threshold = 0.9\nrepeats = 2\n")
    _, strict = run(evalkit_cli, "--grader", "decision", "--judge-repeats", "1")
    assert strict["passed"] == 0, "0.75 is below the configured 0.9"
    assert strict["metrics"]["judge"]["repeats"] == 1, "the command line wins over the table"
    write_project(project, chat_server.base_url, extra="[graders.decision]\npass_threshold = 'high'\n")
    refused = evalkit_cli("run", "evalkit.smoke", "--provider", "sut", "--grader", "decision")
    assert refused.code == 2 and '[graders."decision"]' in refused.stderr and "pass_threshold" in refused.stderr, refused.stderr


# -- costs (issue 36) ----------------------------------------------------------------------------


def test_each_judge_call_keeps_its_usage_and_the_judge_is_priced_apart(judge: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    config = project / "evalkit.toml"
    config.write_text(config.read_text() + "price_per_million_input = 1\nprice_per_million_output = 2\ncurrency = \"EUR\"\n")
    code, document = run(evalkit_cli, "--grader", "decision", "--judge-repeats", "2")
    assert code == 0
    calls = [case["judge_usage"] for case in document["cases"]]
    assert all(len(usage) == 2 and all(u["prompt_tokens"] > 0 and u["total_tokens"] > 0 for u in usage) for usage in calls)
    spend = document["spend"]
    assert spend["judge"]["requests"] == 14 == len(completions(judge))
    assert spend["judge"]["prompt_tokens"] == sum(u["prompt_tokens"] for usage in calls for u in usage)
    assert spend["judge"]["currency"] == "EUR" and spend["judge"]["cost"] is not None
    # the replay instance under test has no price: the run's total is unknown, never the judge's alone
    assert spend["generator"]["cost"] is None and spend["cost"] is None
    text = evalkit_cli("show", document["run_id"])
    assert "Judging:    " in text.stdout and "in 14 replies" in text.stdout and "Cost:       unknown" in text.stdout


def test_plan_time_honours_the_judges_per_minute_limit(judge: ChatServer, evalkit_cli: Callable[..., Any], project: Path) -> None:
    """The judge's instance declares its own per-minute limits: a plan's time left them out."""
    with (project / "evalkit.toml").open("a", encoding="utf-8") as config:
        config.write("\nmax_requests_per_minute = 3\n")
    shown = evalkit_cli("plan", "evalkit.smoke", "--provider", "sut", "--grader", "decision")
    assert shown.code == 0, shown.stderr
    # 7 judge calls at 3 a minute: 3 at once, the other 4 over 80 seconds; no answer measured yet
    assert 'Time:             at least 80 s, bounded by max_requests_per_minute = 3 of "judge"' in shown.stdout, shown.stdout
    assert evalkit_cli("plan", "evalkit.smoke", "--provider", "sut", "--grader", "decision", "--json").json()["estimate"]["seconds"] == 80
    assert completions(judge) == [], "a plan asks nothing"
