"""What a sharded run says it spent is what the store keeps, on either engine: the note of a run
whose spending passed its budget is made from the spend ``finish_run`` summed (every case stored by
then, another shard's included), not from this process's earlier read of the run's cases."""

from __future__ import annotations

import re
from decimal import Decimal

from tests.cli.test_costs import dearer_than_estimated, priced


def test_the_past_the_budget_note_of_a_shard_says_what_the_store_summed(
    evalkit_cli, project, chat_server, database_url: str, monkeypatch
) -> None:
    # Shard 1/2 answers its four cases at once, each admitted at an estimate that proves low, and
    # passes the run's budget. As it finishes, the other shard stores a case after this one read the
    # run's cases: the note said the older read (0.368 EUR spent) while the run's stored spend, which
    # `show` and --json give, was the store's sum with that case (0.468 EUR).
    from evalkit.answers import Usage
    from evalkit.run.answering.prompts import PromptAnswering
    from evalkit.runs import CaseResult
    from evalkit.storage import open_repository

    chat_server.responder = dearer_than_estimated
    env = priced(project, chat_server, extra="max_tokens = 4")
    finish = PromptAnswering.finish

    def finish_while_the_other_shard_stores(self, header, store, streamed):  # noqa: ANN001, ANN202
        done = finish(self, header, store, streamed)
        theirs = next(p.id for p in self.golden_set.prompts if not self.live.shard.owns(p.id))
        other = open_repository(database_url)
        try:  # 100 prompt tokens at 1000 EUR a million: 0.1 EUR
            answered = Usage(input_tokens=100, output_tokens=0)
            other.record_cases(header.id, [CaseResult(theirs, True, 1.0, usage=answered, requests=1, requests_sent=1)], "metadata")
        finally:
            other.close()
        return done

    monkeypatch.setattr(PromptAnswering, "finish", finish_while_the_other_shard_stores)
    common = ("run", "arith.basic", "--provider", "prod", "--run-id", "shared", "--concurrency", "4", "--budget", "0.1")
    first = evalkit_cli(*common, "--shard", "1/2", "--database", database_url, "--json", env=env)
    assert first.code == 0, first.stdout + first.stderr
    (note,) = [note for note in first.json()["notes"] if "past the budget" in note]
    stored = evalkit_cli("show", "shared", "--database", database_url, "--json", env=env).json()["spend"]
    spent = Decimal(stored["cost"])
    assert spent > Decimal("0.4"), stored
    said = re.match(r"spent ([0-9.]+) EUR, ([0-9.]+) EUR past the budget of 0\.1 EUR: ", note)
    assert said is not None, note
    assert (Decimal(said[1]), Decimal(said[2])) == (spent, spent - Decimal("0.1")), (note, stored)
