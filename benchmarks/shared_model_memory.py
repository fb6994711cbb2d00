"""What making the shared model read-only costs in memory (issue 54).

A model loaded by name is shared by every vectorizer of the process; elmofeat makes its
tensors inference tensors (``elmofeat.bilm.sharing.freeze_tensors``), which copies each
tensor once. This measures, in fresh processes, the peak and final resident memory of
``ElmoVectorizer().fit(texts)`` (which loads en-base and shares it) with and without
that conversion, and of three vectorizers on the shared model (one copy of the model,
however many vectorizers).

Writes benchmarks/results/shared_model_memory.{json,md}.

Run: python benchmarks/shared_model_memory.py
"""

from __future__ import annotations

import json
import subprocess
import sys

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

CHILD = r"""
import json, resource, sys
from elmofeat import ElmoVectorizer
from elmofeat.bilm import sharing
if sys.argv[1] == "without":
    sharing.freeze_tensors = lambda module: None
texts = ["the cat sat on the mat", "stocks fell sharply on monday"] * 50
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
before = rss()
vectorizers = [ElmoVectorizer().fit(texts) for _ in range(int(sys.argv[2]))]
assert len({id(v.bilm_) for v in vectorizers}) == 1
print(json.dumps({"rss_before_mb": before, "rss_after_mb": rss(),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(mode: str, n_vectorizers: int, repeats: int = 3) -> dict:
    runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD, mode, str(n_vectorizers)],
                                      check=True, capture_output=True, text=True).stdout)
            for _ in range(repeats)]
    return {key: min(run[key] for run in runs) for key in runs[0]}


def main():
    rows = {f"{mode}, {n} vectorizer{'s' if n > 1 else ''}": measure(mode, n)
            for mode in ("read-only (inference tensors)", "without")
            for n in (1, 3)}
    for key in list(rows):
        rows[key]["added_mb"] = rows[key]["rss_after_mb"] - rows[key]["rss_before_mb"]
    table = [[name, f"{r['added_mb']:.0f}", f"{r['peak_mb']:.0f}"] for name, r in rows.items()]
    markdown = ("## The shared model's read-only tensors: memory\n\n"
                "Fresh processes fitting `ElmoVectorizer()` (en-base, shared) on 100 short "
                "texts; resident memory added by the fit and the process's peak, in MB, "
                "the least of 3 runs. \"without\": `freeze_tensors` disabled (the "
                "model's tensors stay ordinary ones).\n\n"
                + markdown_table(["run", "added (MB)", "peak (MB)"], table) + "\n")
    write_results("shared_model_memory", {"rows": rows}, markdown)


if __name__ == "__main__":
    main()
