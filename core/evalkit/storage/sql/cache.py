"""The answer cache in the SQL repository (:class:`~evalkit.storage.AnswerCache`): one row per
canonical request digest, holding the answer as it was given and who gave it."""

from __future__ import annotations

import time
from typing import Any

import peewee as pw

from ...answers import Usage
from ..protocols import CachedAnswer, CacheStats
from ..stored_checks import stored_time
from .rows import dump_json, load_json, usage_json
from .store import SqlStore, guarded

__all__ = ["AnswerCacheStore"]


class AnswerCacheStore(SqlStore):
    """``AnswerCache`` over the ``evalkit_answer_cache`` table."""

    @property
    def _Cache(self) -> Any:
        return self.models.AnswerCache

    @guarded
    def cached_answer(self, key: str) -> CachedAnswer | None:
        """The entry of ``key`` (its last use stamped), or ``None``; an entry that does not read
        as an answer (written by hand) is no entry."""
        row = self._Cache.get_or_none(self._Cache.key == key)
        if row is None:
            return None
        value = load_json(row.answer)
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            return None
        usage = value.get("usage")
        counts = usage if isinstance(usage, list) and len(usage) <= 4 and all(c is None or (type(c) is int and c >= 0) for c in usage) else None
        with self._atomic():
            self._Cache.update({self._Cache.used_at: time.time()}).where(self._Cache.key == key).execute()
        finish = value.get("finish_reason")
        return CachedAnswer(
            text=value["text"],
            provider_instance=row.provider_instance,
            model_alias=row.model_alias,
            reported_model=row.reported_model,
            finish_reason=finish if isinstance(finish, str) else None,
            usage=Usage(*counts) if counts else None,
            created_at=row.created_at,
        )

    @guarded
    def keep_answer(self, key: str, answer: CachedAnswer) -> None:
        """Store ``answer`` under ``key``; an entry already there is kept (the first answer wins)."""
        document = {"text": answer.text, "finish_reason": answer.finish_reason, "usage": load_json(usage_json(answer.usage))}
        with self._atomic():
            self._Cache.insert(
                key=key,
                provider_instance=answer.provider_instance,
                model_alias=answer.model_alias,
                reported_model=answer.reported_model,
                answer=dump_json(document),
                created_at=answer.created_at or time.time(),
            ).on_conflict_ignore().execute()

    @guarded
    def cache_stats(self) -> CacheStats:
        """Entries, answer characters, oldest and newest entry, entries per instance."""
        C = self._Cache
        entries, chars, oldest, newest = C.select(
            pw.fn.COUNT(C.key), pw.fn.SUM(pw.fn.LENGTH(C.answer)), pw.fn.MIN(C.created_at), pw.fn.MAX(C.created_at)
        ).tuples().get()
        per_instance = {name: count for name, count in C.select(C.provider_instance, pw.fn.COUNT(C.key)).group_by(C.provider_instance).tuples()}
        if entries:  # MIN and MAX return whatever another program left in the column, text included
            oldest = stored_time(oldest, "the oldest entry of the answer cache", "created_at")
            newest = stored_time(newest, "the newest entry of the answer cache", "created_at")
        return CacheStats(entries or 0, int(chars or 0), oldest, newest, per_instance)

    @guarded
    def clear_cache(self, older_than: float | None = None) -> int:
        """Delete every entry, or those stored before ``older_than``; return how many."""
        C = self._Cache
        query = C.delete() if older_than is None else C.delete().where(C.created_at < older_than)
        with self._atomic():
            return int(query.execute())
