"""What expanding a prompt template costs: a set file whose one template entry reads a CSV table
of N rows, loaded with ``evalkit.setfiles.load_set_files`` (reading, checking, expanding, building
the golden prompts), beside the same N prompts written out in a JSONL set file.

    python bench/set_templates.py [--rows 100000] [--repeats 3]

Each figure is the best (lowest) of ``--repeats`` loads, processor time, in seconds and in
microseconds per prompt.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "core"))

TEMPLATE = """\
identifier: bench.capitals
name: Capitals
prompts:
  - id: capital
    template: What is the capital of {country}? Answer with the city only.
    vars: capitals.csv
    id_column: country
    reference: "{capital}"
    assertions:
      - contains: "{capital}"
      - regex: '/^\\p{Lu}\\p{L}+\\.?$/u'
"""


def write_files(folder: Path, rows: int) -> tuple[Path, Path]:
    """The template set with its table, and the same prompts written out as JSONL."""
    (folder / "capitals.csv").write_text("country,capital\n" + "".join(f"Country{i},City{i}\n" for i in range(rows)))
    template = folder / "template.yaml"
    template.write_text(TEMPLATE)
    lines = [json.dumps({"identifier": "bench.written", "name": "Written"})]
    for i in range(rows):
        lines.append(json.dumps({
            "id": f"capital/Country{i}", "prompt": f"What is the capital of Country{i}? Answer with the city only.",
            "reference": f"City{i}", "assertions": [{"contains": f"City{i}"}, {"regex": "/^\\p{Lu}\\p{L}+\\.?$/u"}],
        }))  # fmt: skip
    written = folder / "written.jsonl"
    written.write_text("\n".join(lines) + "\n")
    return template, written


def measure(path: Path, repeats: int) -> tuple[float, int]:
    """The best processor seconds of a load, and the prompts it built."""
    from evalkit.setfiles import load_set_files

    best = float("inf")
    count = 0
    for _ in range(repeats):
        start = time.process_time()
        loaded = load_set_files([path])
        best = min(best, time.process_time() - start)
        assert not loaded.problems, loaded.problems[:3]
        count = len(loaded.prompt_sets[0].prompts)
    return best, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        template, written = write_files(Path(folder), args.rows)
        for label, path in (("template × CSV", template), ("written out (JSONL)", written)):
            seconds, count = measure(path, args.repeats)
            print(f"{label:22} {count:>9,} prompts  {seconds:7.2f} s  {seconds / count * 1e6:6.1f} µs/prompt")


if __name__ == "__main__":
    main()
