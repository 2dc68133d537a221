"""What a privacy level keeps, and the scrubber that removes secrets and e-mail addresses.

``metadata`` keeps aggregates, per-case verdicts and the serving-identity proof, and no text from
answers or judges; ``redacted`` keeps that text with secrets and e-mail addresses replaced by
``***``; ``full`` keeps everything. Error messages are always scrubbed.
"""

from __future__ import annotations

import re

__all__ = ["scrub", "keeps_text", "remove_secrets", "REDACTION"]

REDACTION = "***"

_PATTERNS = [
    re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),  # JWT
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9_-]{2,}-)*[A-Za-z0-9_-]{16,}"),  # OpenAI-style keys
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),  # AWS access key ids
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"),  # GitHub tokens
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"(?i)\b(?:api[_-]?key|secret|token|password|passwd)\s*[:=]\s*['\"]?[^\s'\"]{6,}"),
    re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),  # e-mail
]


def remove_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every exact value of ``secrets`` (credentials a component sends) replaced by ``***``."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTION)
    return text


def scrub(text: str, extra_secrets: tuple[str, ...] = ()) -> str:
    """``text`` with secret shapes, e-mail addresses and any of ``extra_secrets`` replaced by ``***``."""
    text = remove_secrets(text, extra_secrets)
    for pattern in _PATTERNS:
        text = pattern.sub(REDACTION, text)
    return text


def keeps_text(level: str) -> bool:
    """True when ``level`` stores answer and judge text (scrubbed or verbatim)."""
    return level in ("redacted", "full")
