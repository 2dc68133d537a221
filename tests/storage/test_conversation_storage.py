"""A conversation's transcript on its case and a base system prompt in the run's serving identity,
on both engines: what each privacy level keeps, which runs share a comparison scope, and migration 8."""

from __future__ import annotations

import attrs
import pytest
from evalkit import CaseResult, Run, ServingIdentity
from evalkit.answers import base_prompt_digest
from evalkit.conversations import Message, ToolCall
from evalkit.storage import open_repository, upgrade_schema
from evalkit.storage import schema as schema_module
from evalkit.storage.migrations.m0001_initial import tables as v1_tables
from evalkit.storage.sql import connect

IDENTITY = ServingIdentity("bot", "bot-1", "bot-1-2026")
BASED = attrs.evolve(IDENTITY, base_prompt=base_prompt_digest("Answer in English."))
SECRET = "sk-" + "A" * 40

TRANSCRIPT = (
    Message("assistant", None, (ToolCall("get_weather", {"city": "Paris", "key": SECRET}, "call_1"),)),
    Message("tool", '{"temp_c": 18}', tool_call_id="call_1", name="get_weather"),
    Message("user", "And tomorrow?"),
    Message("assistant", f"Rain tomorrow. {SECRET}"),
)


def _run(repo, run_id: str, transcript=(), privacy: str = "full") -> None:  # noqa: ANN001
    repo.begin_run(Run(id=run_id, set_identifier="chat.set", grader="deterministic", case_count=1,
                       provider_instance="bot", model_alias="bot-1"))  # fmt: skip
    case = CaseResult("c1", True, 1.0, identity=IDENTITY, yardstick="deterministic", answer_text="Rain.", finished_at=1.0,
                      transcript=transcript)  # fmt: skip
    repo.record_cases(run_id, [case], privacy)


def test_full_keeps_the_whole_transcript_and_the_tool_calls_arguments(repo) -> None:  # noqa: ANN001
    _run(repo, "full", TRANSCRIPT, "full")
    assert repo.get_run("full").cases[0].transcript == TRANSCRIPT


def test_redacted_scrubs_each_text_and_each_calls_arguments(repo) -> None:  # noqa: ANN001
    _run(repo, "redacted", TRANSCRIPT, "redacted")
    call, tool, user, reply = repo.get_run("redacted").cases[0].transcript
    assert SECRET not in repr((call, tool, user, reply))
    assert call.tool_calls[0].name == "get_weather" and call.tool_calls[0].arguments["city"] == "Paris"
    assert tool.content == '{"temp_c": 18}' and tool.tool_call_id == "call_1" and user.content == "And tomorrow?"
    assert reply.content.startswith("Rain tomorrow. ")


def test_metadata_keeps_the_roles_and_the_tools_called_but_no_text(repo) -> None:  # noqa: ANN001
    _run(repo, "meta", TRANSCRIPT, "metadata")
    kept = repo.get_run("meta").cases[0].transcript
    assert [m.role for m in kept] == ["assistant", "tool", "user", "assistant"]
    assert all(m.content is None for m in kept)
    assert kept[0].tool_calls[0].name == "get_weather" and kept[0].tool_calls[0].arguments is None


def test_a_plain_prompt_stores_no_transcript(repo) -> None:  # noqa: ANN001
    _run(repo, "plain")
    assert repo.get_run("plain").cases[0].transcript == ()


def test_a_base_system_prompt_starts_its_own_comparison_scope(repo) -> None:  # noqa: ANN001
    _run(repo, "without")
    repo.finish_run("without", "complete", 2_000.0, identity=IDENTITY)
    assert repo.baseline_for("chat.set", BASED, "deterministic") is None
    _run(repo, "with")
    repo.finish_run("with", "complete", 3_000.0, identity=BASED)
    assert repo.get_run("with").identity == BASED
    assert repo.baseline_for("chat.set", BASED, "deterministic").id == "with"
    assert repo.baseline_for("chat.set", IDENTITY, "deterministic").id == "without"
    other = attrs.evolve(IDENTITY, base_prompt=base_prompt_digest("Answer in French."))
    assert repo.baseline_for("chat.set", other, "deterministic") is None


@pytest.fixture
def version_7_store(database_url: str) -> str:
    """A store at schema version 8 (the one before migration 9) holding one verified, complete run of ``chat.set``."""
    db = connect(database_url)
    db.connect()
    try:
        assert schema_module.upgrade(db, target=8)[-1] == 8
        tables = v1_tables(db)
        tables.Run.insert(id="old", set_identifier="chat.set", grader="deterministic", status="complete", started_at=1.0,
                          finished_at=2.0, provider_instance="bot", model_alias="bot-1", reported_model="bot-1-2026",
                          verified=True, case_count=1, answered_count=1, passed_count=1, pass_rate=1.0).execute()  # fmt: skip
        tables.Case.insert(run="old", case_id="c1", passed=True, score=1.0, finished_at=1.0).execute()
    finally:
        db.close()
    return database_url


def test_migration_9_keeps_every_older_run_in_the_scope_of_no_base_prompt(version_7_store: str) -> None:
    status, applied = upgrade_schema(version_7_store)
    assert applied == list(range(9, schema_module.SCHEMA_VERSION + 1)) and status.up_to_date
    repo = open_repository(version_7_store)
    try:
        old = repo.get_run("old")
        assert old.identity == IDENTITY and old.cases[0].transcript == ()
        assert repo.baseline_for("chat.set", IDENTITY, "deterministic").id == "old"
        assert repo.baseline_for("chat.set", BASED, "deterministic") is None
    finally:
        repo.close()
