"""Compare two suite runs (``results.json`` of ``elmofeat benchmark``) field by field,
timings and run facts aside: what a refactoring must leave unchanged.

    python benchmarks/compare_reports.py before/results.json after/results.json

Prints each difference (path: before != after) and exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import json
import math

# Keys that hold timings or facts of the run, not results.
IGNORED = {"wall_seconds", "started", "estimated_seconds", "command", "environment",
           "added_runs", "machine"}


def _timing(key: str) -> bool:
    return key in IGNORED or "second" in key  # seconds, tokens_per_second


def differences(before, after, path: str = "") -> list[str]:
    """Every difference between two results, timings aside."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        kept_before = [k for k in before if not _timing(k)]
        kept_after = [k for k in after if not _timing(k)]
        if kept_before != kept_after:
            found.append(f"{path or '.'}: keys {kept_before} != {kept_after}")
        for key in kept_before:
            if key in after:
                found += differences(before[key], after[key], f"{path}.{key}")
        return found
    if isinstance(before, list) and isinstance(after, list):
        found = [] if len(before) == len(after) else [
            f"{path}: {len(before)} items != {len(after)}"]
        for i, (a, b) in enumerate(zip(before, after)):
            found += differences(a, b, f"{path}[{i}]")
        return found
    both_nan = (isinstance(before, float) and isinstance(after, float)
                and math.isnan(before) and math.isnan(after))
    return [] if before == after or both_nan else [f"{path}: {before!r} != {after!r}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="the first run's results.json")
    parser.add_argument("after", help="the second run's results.json")
    args = parser.parse_args(argv)
    with open(args.before) as before, open(args.after) as after:
        found = differences(json.load(before), json.load(after))
    print("\n".join(found) if found else "identical, timings aside")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
