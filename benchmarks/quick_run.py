"""How long the README's smoke run takes: ``elmofeat benchmark --quick``, run as a user
runs it (a fresh process: imports, data loading, every row on each task's quick slice,
the report and its figures), timed from start to exit, ``--rounds`` times in turn.

The README's first lines quote the median of these rounds beside the main job's time
(read from the committed report), so both figures come from files that a command writes.
Each round writes its report into a temporary folder that is removed afterwards: nothing
tracked is touched.

Writes benchmarks/results/quick_run.{json,md}.
Run: python benchmarks/quick_run.py [--rounds 2] [--data-home PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import markdown_table, write_results

import numpy as np


def one_round(data_home: str | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="elmofeat-quick-") as folder:
        output = Path(folder) / "report"
        env = dict(os.environ, **({"ELMOFEAT_DATA": data_home} if data_home else {}))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "elmofeat", "benchmark", "--quick",
                        "--output", str(output)], check=True, env=env)
        seconds = time.perf_counter() - start
        results = json.loads((output / "results.json").read_text())
    return {"seconds": seconds, "report_wall_seconds": results["wall_seconds"],
            "tasks": sorted(results["datasets"])}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    rounds = [one_round(args.data_home) for _ in range(args.rounds)]
    seconds = [r["seconds"] for r in rounds]
    median = float(np.median(seconds))
    markdown = (
        "## The smoke run: `elmofeat benchmark --quick`\n\n"
        f"The whole command in a fresh process (start to exit), {args.rounds} rounds; "
        f"tasks: {', '.join(rounds[0]['tasks'])}.\n\n"
        + markdown_table(["round", "seconds", "minutes", "the report's own wall time (s)"],
                         [[str(i + 1), f"{r['seconds']:.1f}", f"{r['seconds'] / 60:.1f}",
                           f"{r['report_wall_seconds']:.1f}"] for i, r in enumerate(rounds)])
        + f"\n\nMedian: {median:.1f} s ({median / 60:.1f} min).")
    write_results("quick_run", {"rounds": rounds, "median_seconds": median,
                                "median_minutes": median / 60}, markdown)


if __name__ == "__main__":
    main()
