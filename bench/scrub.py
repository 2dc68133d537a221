"""Cost of scrubbing secrets (``evalkit.privacy.remove_secrets``) in every echoed form.

Every printed and stored text passes through ``remove_secrets``: a run calls it for each field of
each case, the CLI for each string it prints. This prints, for a few secrets, the time per call on
a short line (the common case), the throughput on long answers (prose, and text dense in the
characters an escaped form starts with), against a plain ``str.replace`` of the literal values —
what the scrubber did before it also looked for the JSON-escaped, percent-encoded, HTML-escaped
and base64 forms::

    PYTHONPATH=core python bench/scrub.py --secrets 3 --megabytes 4
"""

from __future__ import annotations

import argparse
import random
import string
import time

from evalkit.privacy import remove_secrets


def _per_call(function, text: str, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        function(text)
    return (time.perf_counter() - started) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--secrets", type=int, default=3, help="how many secrets a run holds (default 3)")
    parser.add_argument("--megabytes", type=float, default=4, help="size of each long text (default 4)")
    parser.add_argument("--calls", type=int, default=200_000, help="calls on the short line (default 200,000)")
    args = parser.parse_args()
    rng = random.Random(34)
    secrets = tuple("sk-" + "".join(rng.choices(string.ascii_letters + string.digits, k=45)) for _ in range(args.secrets))
    size = int(args.megabytes * 1_000_000)
    texts = {
        "short line": "The capital of France is Paris.",
        "prose": ("The answer is 42, as the reference says; see section 3.2 of the policy. " * (size // 72 + 1))[:size],
        "escape-dense": "".join(rng.choices(string.ascii_letters + " \\%&/", k=size)),
    }
    literal = lambda text: [text := text.replace(s, "***") for s in secrets][-1]  # noqa: E731 - the old scrubber
    scrubbed = lambda text: remove_secrets(text, secrets)  # noqa: E731
    remove_secrets("warm the cache", secrets)
    print(f"{args.secrets} secrets of {len(secrets[0])} characters")
    for name, text in texts.items():
        calls = args.calls if len(text) < 1000 else 3
        new, old = _per_call(scrubbed, text, calls), _per_call(literal, text, calls)
        if len(text) < 1000:
            print(f"{name:>13}: {new * 1e6:8.2f} µs per call (literal replace: {old * 1e6:.2f} µs)")
        else:
            print(f"{name:>13}: {len(text) / new / 1e6:8.1f} MB/s (literal replace: {len(text) / old / 1e6:.0f} MB/s)")


if __name__ == "__main__":
    main()
