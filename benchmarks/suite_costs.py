"""The suite's time estimate against a finished run: every step's estimated seconds
(``elmofeat.suite.run`` — the progress bar's weights and the "estimated N min" it
announces) beside the seconds the run measured, per method and per biLM, summed over
every split of every task.

A ratio far from 1 says which constant to correct (``cost_per_token`` of a method in
``elmofeat/suite/methods.py``, the biLM seconds in ``elmofeat/suite/bilms.py``).

Writes benchmarks/results/suite_costs.{json,md}.
Run: python benchmarks/suite_costs.py [--report docs/report] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _common import markdown_table, write_results

from elmofeat.suite import BenchmarkSettings
from elmofeat.suite.run import estimate_against_measured

ROOT = Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", default=str(ROOT / "docs" / "report"),
                        help="a suite report's folder (its results.json)")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    results = json.loads((Path(args.report) / "results.json").read_text())
    settings = BenchmarkSettings.from_dict(results["settings"])
    rows = estimate_against_measured(results, settings, args.data_home)
    total_estimated = sum(r["estimated_seconds"] for r in rows)
    total_measured = sum(r["measured_seconds"] for r in rows)
    table = markdown_table(
        ["step", "estimated min", "measured min", "measured / estimated"],
        [[r["step"], f"{r['estimated_seconds'] / 60:.1f}", f"{r['measured_seconds'] / 60:.1f}",
          f"{r['measured_seconds'] / r['estimated_seconds']:.2f}"]
         for r in sorted(rows, key=lambda r: -r["measured_seconds"])]
        + [["**all**", f"{total_estimated / 60:.1f}", f"{total_measured / 60:.1f}",
            f"{total_measured / total_estimated:.2f}"]])
    run_env = results["environment"]
    machine = f"{run_env.get('cpus', '?')} CPUs, {run_env.get('platform', '')}"
    report = Path(args.report).resolve()
    where = report.relative_to(ROOT) if report.is_relative_to(ROOT) else report
    markdown = (
        "### The suite's time estimate against a finished run\n\n"
        f"The run: `{results.get('command', 'elmofeat benchmark')}` in `{where}` "
        f"({machine}). Estimated: the seconds `elmofeat.suite.run` gives each step now (the "
        "progress bar's weights), summed over the splits; measured: the seconds the run "
        "recorded for it.\n\n" + table + "\n")
    write_results("suite_costs", {"report": str(where), "rows": rows,
                                  "estimated_seconds": total_estimated,
                                  "measured_seconds": total_measured}, markdown)


if __name__ == "__main__":
    main()
