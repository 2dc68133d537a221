"""The answer cache's key: the digest of the canonical request, and who it is sent to.

An answer is reused only for the identical request. The key is the SHA-256 of one canonical JSON
document (sorted keys, no spaces, UTF-8) holding:

* the **serving side**: the provider instance's name, its adapter, the model alias sent, and every
  option of the instance that can shape an answer (``base_url``, ``temperature``, ``max_tokens``,
  headers, any adapter option) — all of them but the few that only govern how requests are made
  (:data:`OPERATIONAL_OPTIONS`: time limits, retries, concurrency, rate limits, prices);
* the **request**: every field of the :class:`~evalkit.answers.GenerationRequest` (prompt, system
  prompt, model, temperature, max tokens, response format, case id, and whatever fields — messages,
  tools — a later evalkit adds to it: they are read from the class, not listed here).

So a changed parameter never meets an old entry: ``0`` and ``0.0`` are even different keys (a
miss costs a request; a false hit would be a lie). Only the digest is stored, never the options.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import attrs

from .answers import GenerationRequest

__all__ = ["CACHE_KEY_VERSION", "OPERATIONAL_OPTIONS", "request_key", "serving_side"]

#: Bumped whenever the canonical document changes, so old entries are never read as new ones.
CACHE_KEY_VERSION = 1

#: Instance options that govern how requests are made, not what is answered: left out of the key.
OPERATIONAL_OPTIONS = frozenset(
    {
        "concurrency", "timeout", "max_attempts", "backoff_base", "backoff_max", "max_response_bytes",
        "max_requests_per_minute", "max_tokens_per_minute", "ca_bundle", "api_key_env", "answer_timeout",
        "priority", "cost_per_1k_tokens", "price_per_million_input", "price_per_million_output", "currency",
        "capabilities",
    }
)  # fmt: skip

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=repr).encode


def serving_side(instance: str | None, adapter: str, alias: str | None, options: Mapping[str, Any]) -> dict[str, Any]:
    """The part of the key that names who answers (see the module docstring)."""
    return {
        "instance": instance,
        "adapter": adapter,
        "alias": alias,
        "options": {k: v for k, v in options.items() if k not in OPERATIONAL_OPTIONS},
    }


def request_key(serving: Mapping[str, Any], request: GenerationRequest) -> str:
    """The hex SHA-256 of the canonical document of ``serving`` and ``request``."""
    body = attrs.asdict(request, recurse=True)
    document = {"v": CACHE_KEY_VERSION, "serving": serving, "request": body}
    return hashlib.sha256(_encode(document).encode("utf-8", "surrogatepass")).hexdigest()
