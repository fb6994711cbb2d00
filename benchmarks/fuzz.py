"""The fuzz suite (tests/test_fuzz.py) with many more examples than CI runs.

CI runs every property with 15 fixed examples (the ``ci`` profile); this runs them with
the ``long`` profile (400 random examples each, a new draw every run) and records how
many properties held.

Writes benchmarks/results/fuzz.{json,md}.
Run: python benchmarks/fuzz.py [--examples 400]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from _common import markdown_table, write_results

ROOT = Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=400, help="examples per property")
    args = parser.parse_args()
    env = {**os.environ, "HYPOTHESIS_PROFILE": "long", "FUZZ_EXAMPLES": str(args.examples)}
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_fuzz.py",
         "-rA", "--hypothesis-show-statistics"],
        cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    rows = []
    for name, outcome in re.findall(r"^(PASSED|FAILED) (tests/test_fuzz.py::\S+)", result.stdout, re.M):
        rows.append([outcome.split("::")[1], name])
    print(result.stdout[-4000:])
    passed = sum(r[1] == "PASSED" for r in rows)
    markdown = (markdown_table(["property", "outcome"], rows)
                + f"\n\n{passed} of {len(rows)} properties held with {args.examples} examples "
                f"each, in {seconds / 60:.1f} min.")
    write_results("fuzz", {"examples": args.examples, "seconds": seconds,
                           "results": dict((r[0], r[1]) for r in rows),
                           "failures": result.stdout[-20000:] if result.returncode else ""},
                  markdown)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
