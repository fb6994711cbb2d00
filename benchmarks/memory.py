"""Peak memory of ElmoVectorizer.transform against document length and corpus size.

Every measurement runs in a fresh process with the default biLM width (256), pretrained
for one epoch on 2,000 AG News documents (the weights do not change the memory) and
saved once. A process loads it, records its resident memory (RSS) as the baseline, runs
one operation and reports its peak RSS above that baseline (the peak counter, VmHWM,
is reset at the baseline, so loading and warming up do not count):

* one document of 1,000 / 10,000 / 100,000 words (AG News text repeated);
* ``transform`` of 1,000 / 4,000 / 16,000 AG News documents (repeated past 7,600);
* ``fit`` of a trainable mix on 4,000 documents (the representation cache fills, as
  it must for a search), then the RSS after ``elmofeat.set_config(
  representation_cache_bytes=0)`` empties it.

Writes benchmarks/results/memory.{json,md}.
Run: python benchmarks/memory.py [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import PEAK_MEMORY_HELPERS, markdown_table, write_results

SETUP = r"""
import json, sys
import numpy as np
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.datasets import load_ag_news

""" + PEAK_MEMORY_HELPERS + r"""
model, home, kind, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
news = load_ag_news(home, subset="test")
bilm = BiLM.load(model)
vec = ElmoVectorizer(bilm, cache_dir=None)
vec.fit(news.data[:50])
vec.transform(news.data[:50])  # warm: kernels, caches of small shapes
base = rss_mb()
reset_peak()
"""

OPERATIONS = {
    "document": r"""
words = " ".join(news.data).split()
document = " ".join((words * (size // len(words) + 1))[:size])
features = vec.transform([document])
""",
    "corpus": r"""
documents = (news.data * (size // len(news.data) + 1))[:size]
features = vec.transform(documents)
""",
    "fit_then_clear": r"""
import elmofeat
documents = news.data[:size]
ElmoVectorizer(bilm, layer_mix="trainable", cache_dir=None).fit(documents, news.target[:size])
held = rss_mb() - base
elmofeat.set_config(representation_cache_bytes=0)
after = rss_mb() - base
""",
}
REPORT = r"""
out = {"peak_mb": peak_mb() - base, "base_mb": base}
if kind == "fit_then_clear":
    out.update(held_mb=held, after_clear_mb=after)
print(json.dumps(out))
"""


def _measure(model, home, kind, size) -> dict:
    code = SETUP + OPERATIONS[kind] + REPORT
    result = subprocess.run([sys.executable, "-c", code, model, home, kind, str(size)],
                            capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"{kind} {size} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    from elmofeat import BiLM
    from elmofeat.datasets import get_data_home, load_ag_news

    home = str(get_data_home(args.data_home))
    news = load_ag_news(home, subset="test")
    with tempfile.TemporaryDirectory() as folder:
        model = str(Path(folder) / "bilm.pt")
        bilm = BiLM(max_epochs=1, random_state=0).fit(news.data[:2000])
        bilm.save(model)
        layer_mb = bilm.n_representations_ * bilm.output_dim_ * 4 / 2**20  # per token
        rows, results = [], []
        for kind, size, label in [("document", 1_000, "1 document of 1,000 words"),
                                  ("document", 10_000, "1 document of 10,000 words"),
                                  ("document", 100_000, "1 document of 100,000 words"),
                                  ("corpus", 1_000, "1,000 AG News documents"),
                                  ("corpus", 4_000, "4,000 AG News documents"),
                                  ("corpus", 16_000, "16,000 AG News documents"),
                                  ("fit_then_clear", 4_000, "fit (trainable) on 4,000 documents")]:
            measured = _measure(model, home, kind, size)
            results.append({"kind": kind, "size": size, **measured})
            extra = ""
            if kind == "fit_then_clear":
                extra = (f"{measured['held_mb']:,.0f} MB held by the cache after fit, "
                         f"{measured['after_clear_mb']:,.0f} MB after emptying it")
            elif kind == "document":
                extra = f"all its layers: {size * 1.3 * layer_mb:,.0f} MB (at ~1.3 tokens a word)"
            rows.append([label, f"{measured['peak_mb']:,.0f}", extra])
            print(rows[-1], flush=True)
    markdown = (markdown_table(["operation", "peak RSS above the loaded model (MB)", "for scale"], rows)
                + "\n\nThe default biLM (width 256) is loaded first (baseline "
                f"{results[0]['base_mb']:,.0f} MB RSS with torch). `transform` holds the layers "
                "of at most 16,384 tokens at once and streams longer documents a piece at a "
                "time, so its peak follows neither the document's length nor the corpus "
                "size; `fit` keeps its documents' layers for reuse (the other candidates "
                "of a search, cross-fitting) up to `representation_cache_bytes` (1 GiB).")
    write_results("memory", {"results": results}, markdown)


if __name__ == "__main__":
    main()
