#!/bin/bash
# Land the finished five-task run (issue 53), from the repository root of main, after
# `elmofeat benchmark --output OUT --resume --any-machine` (RESUME.md) has finished and
# written OUT/report.md. Usage: bash benchmarks/checkpoints/report-run/land.sh OUT
# Afterwards, by hand: recalibrate the estimate (suite_costs.md: _MIX_COST,
# _OWN_TEXTS_MIX_COST, the biLM seconds) and the README (task list, measured time per
# host, "In short"), then the tests named in RESUME.md.
set -euo pipefail
out=${1:?the run\'s output folder}
test -f "$out/report.md" -a -f "$out/results.json" || { echo "$out has no finished report"; exit 1; }
git apply benchmarks/checkpoints/report-run/run-branch.patch
rm -rf docs/report && cp -r "$out" docs/report
git rm -rq benchmarks/checkpoints
export ELMOFEAT_DATA=${ELMOFEAT_DATA:-../shared/data}
PYTHONPATH=$PWD .venv/bin/python benchmarks/make_docs.py
PYTHONPATH=$PWD .venv/bin/python benchmarks/suite_costs.py
git add -A docs benchmarks elmofeat CHANGELOG.md && git add -f docs/report/splits
git status --short | head -40
