"""What the check of a biLM's weights costs a ``transform`` call (issue 71).

Before a call uses a biLM's layers, cached or computed, it checks the values the call
reads against the fingerprint taken with the weights' digest
(:mod:`elmofeat.bilm.integrity`): the encoder's tensors in full, and the rows of the
word table its texts read. On the shared en-base this is what refuses a model changed
in place by any route. Measured here, on ``ElmoVectorizer()`` (en-base, the defaults)
fitted on 500 AG News texts, transforming unseen AG News texts in batches of 10, 100
and 1,000:

* ``check ms``: the check alone, timed directly (the texts' distinct word ids, and the
  values they read compared with the fingerprint, as the layer cache's key does);
* ``transform ms``: the whole call; ``check share``: the first over the second;
* ``without check ms``: the call with the check switched off (the fingerprint's
  comparison answering "unchanged"), interleaved with the real calls; its difference
  from ``transform ms`` is within the timing noise where the share is small.

Medians over repeated calls. Writes benchmarks/results/integrity_check.{json,md}.
Run: python benchmarks/integrity_check.py [--data-home DIR] [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from unittest import mock

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results


from elmofeat import ElmoVectorizer
from elmofeat.bilm import integrity
from elmofeat.datasets import load_ag_news

BATCHES = (10, 100, 1000)
FIT_TEXTS = 500


def check_once(bilm, texts) -> None:
    """What a transform adds: the texts' distinct word ids, and the values they read
    compared with the fingerprint (the layer cache's key)."""
    tokens = bilm.tokenize(texts)  # done by the transform anyway: not counted
    start = time.perf_counter()
    bilm.weights_key(bilm.encoder_reads(bilm.word_ids(tokens)))
    return time.perf_counter() - start


def median_ms(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def measure(vectorizer, texts, repeats: int) -> dict:
    bilm = vectorizer.bilm_
    vectorizer.transform(texts)  # warm: allocator, threads
    check = 1000 * statistics.median(check_once(bilm, texts) for _ in range(repeats))
    with_check, without = [], []
    for _ in range(repeats):  # interleaved, so that drifts of the host hit both alike
        with_check.append(median_ms(lambda: vectorizer.transform(texts), 1))
        with mock.patch.object(integrity.WeightsFingerprint, "changed", lambda *a, **k: []):
            without.append(median_ms(lambda: vectorizer.transform(texts), 1))
    transform = statistics.median(with_check)
    return {"texts": len(texts), "check_ms": check, "transform_ms": transform,
            "without_check_ms": statistics.median(without),
            "check_share": check / transform, "repeats": repeats}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    texts = list(load_ag_news(data_home=args.data_home).data)
    vectorizer = ElmoVectorizer().fit(texts[:FIT_TEXTS])
    unseen = texts[FIT_TEXTS:]
    rows = []
    for n in BATCHES:
        repeats = args.repeats if n < 1000 else max(3, args.repeats // 3)
        rows.append(measure(vectorizer, unseen[:n], repeats))
        print(rows[-1], flush=True)
    report(rows)


def report(rows):
    table = markdown_table(
        ["texts", "check ms", "transform ms", "check share", "without check ms", "repeats"],
        [[f"{r['texts']:,}", f"{r['check_ms']:.2f}", f"{r['transform_ms']:.1f}",
          f"{100 * r['check_share']:.2f}%", f"{r['without_check_ms']:.1f}", r["repeats"]]
         for r in rows])
    lines = ["## The check of the weights' values per transform (issue 71)", "",
             "`ElmoVectorizer()` (en-base, the defaults) fitted on 500 AG News texts, "
             "transforming unseen AG News texts. `check ms`: the check alone (the texts' "
             "distinct word ids; the encoder's tensors and the texts' rows of the word table "
             "compared with the fingerprint, as the layer cache's key does). `check share`: its part of the whole call. `without check ms`: the "
             "call with the comparison switched off, interleaved with the real calls. "
             "Medians.", "", table]
    write_results("integrity_check", {"rows": rows}, "\n".join(lines))


if __name__ == "__main__":
    main()
