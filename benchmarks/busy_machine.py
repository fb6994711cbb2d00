"""Pretraining and transform speed on a busy machine: 0 and 1 competing processes.

A laptop or a shared server is always a little busy. torch's CPU kernels wait at a
barrier for their slowest thread, so a thread that shares its core with another
process stalls the others: on 2 cores with one busy neighbour, 2 threads can run
many times slower than 1. elmofeat's default (``n_threads=None``) follows the cores
that other processes leave free (``elmofeat/_threads.py``).

Each run is a fresh process: ``BiLM(embedding_dim=64, hidden_dim=64, max_epochs=1,
random_state=0).fit`` on the first --documents AG News texts (1 epoch), then
``ElmoVectorizer(bilm).transform`` of the same texts, with ``n_threads`` None (the
default: fixed while training, adaptive in transform), ``"auto"`` (adaptive in both),
1 and 2, beside 0 or 1 competing processes (each a Python busy loop, one core's worth).
Target: with one competing process, at least half the idle-machine throughput.

Writes benchmarks/results/busy_machine.{json,md}.
Run: python benchmarks/busy_machine.py [--documents 7600] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from _common import markdown_table, write_results

CHILD = r"""
import json, sys, time
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.datasets import load_ag_news

n, home, threads = int(sys.argv[1]), sys.argv[2], sys.argv[3]
threads = {"default": None, "auto": "auto"}[threads] if threads in ("default", "auto") else int(threads)
texts = load_ag_news(home, subset="test").data[:n]
start = time.perf_counter()
bilm = BiLM(embedding_dim=64, hidden_dim=64, max_epochs=1, random_state=0,
            n_threads=threads).fit(texts)
fit_seconds = time.perf_counter() - start
vectorizer = ElmoVectorizer(bilm, cache_dir=None, n_threads=threads).fit(texts[:50])
start = time.perf_counter()
vectorizer.transform(texts)
transform_seconds = time.perf_counter() - start
print(json.dumps({"fit_seconds": fit_seconds,
                  "tokens_per_second": bilm.history_[0]["tokens_per_second"],
                  "transform_seconds": transform_seconds,
                  "documents_per_second": len(texts) / transform_seconds}))
"""

SPIN = "while True: pass"


def run(documents: int, home: str, threads: str, competitors: int) -> dict:
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(competitors)]
    try:
        time.sleep(0.5 if competitors else 0)
        out = subprocess.run([sys.executable, "-c", CHILD, str(documents), home, threads],
                             check=True, capture_output=True, text=True)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    result = {"threads": threads, "competitors": competitors,
              **json.loads(out.stdout.strip().splitlines()[-1])}
    print(result, flush=True)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=7600)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    from elmofeat.datasets import get_data_home

    home = str(get_data_home(args.data_home))
    runs = [run(args.documents, home, threads, competitors)
            for competitors in (0, 1) for threads in ("default", "auto", "1", "2")]
    idle = {r["threads"]: r for r in runs if r["competitors"] == 0}
    rows = []
    for r in runs:
        base = idle[r["threads"]]
        rows.append([r["threads"], r["competitors"], f"{r['tokens_per_second']:,.0f}",
                     f"{r['tokens_per_second'] / base['tokens_per_second']:.2f}",
                     f"{r['documents_per_second']:,.0f}",
                     f"{r['documents_per_second'] / base['documents_per_second']:.2f}"])
    share = {name: next(r for r in runs if r["threads"] == name and r["competitors"] == 1)
             ["tokens_per_second"] / idle[name]["tokens_per_second"]
             for name in ("default", "auto")}
    markdown = (
        f"BiLM 64/64, 1 epoch on {args.documents:,} AG News texts, then `ElmoVectorizer."
        "transform` of the same texts; each run a fresh process, beside 0 or 1 busy-loop "
        "processes. Ratios are to the same thread setting on the idle machine.\n\n"
        + markdown_table(["n_threads", "competing processes", "pretraining tokens/s",
                          "of idle", "transform documents/s", "of idle"], rows)
        + "\n\nTarget: at least half the idle pretraining throughput beside one busy process. "
        f"`n_threads=\"auto\"`: {share['auto']:.2f} "
        f"({'met' if share['auto'] >= 0.5 else 'missed'}). The default keeps torch's thread "
        f"count while training, so that the weights do not depend on the machine's load "
        f"(the thread count changes how some kernels sum): {share['default']:.2f} "
        f"({'met' if share['default'] >= 0.5 else 'missed'}); its transform adapts, as "
        "its output does not depend on the thread count.\n")
    write_results("busy_machine", {"documents": args.documents, "runs": runs,
                                    "share_when_busy": share}, markdown)


if __name__ == "__main__":
    main()
