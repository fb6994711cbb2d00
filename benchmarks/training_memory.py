"""What a biLM training step asks of the allocator, and what a whole fit pays for it.

glibc serves a block above its mmap threshold (at most 32 MiB under its dynamic rule)
with a fresh ``mmap`` and unmaps it when freed: a training step that allocates such
blocks has the kernel map and zero them again at every step (minor page faults, system
time). Two parts:

1. **A step's allocations.** The default BiLM is fitted one epoch on the 7,600 AG News
   texts (its vocabulary and softmax clusters those of a real run); then its --steps
   widest training batches (the worst case) run under ``torch.profiler`` with memory
   profiling. Every allocation is attributed to the part of the step that made it
   (the LSTM layers, the softmax, everything else) and the largest of each part is
   reported, with the count above 32 MiB.
2. **Whole fits.** The same 1-epoch fit, then ``embed_flat`` of 3,000 texts, in fresh
   processes, --pairs rounds, each starting with the next engine (the child of
   ``malloc_policy.py``): this
   tree under glibc's defaults (what a user's fit gets), this tree with the opt-in
   ``malloc_tuning``, and, with --baseline REV, the engine of that git revision under
   glibc's defaults (checked out in a temporary worktree).

Writes benchmarks/results/training_memory.{json,md}.
Run: python benchmarks/training_memory.py [--steps 8] [--pairs 3] [--baseline REV]
     [--precision auto] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, training_step, write_results
from malloc_policy import CHILD

import numpy as np

from elmofeat import BiLM
from elmofeat.bilm.batching import bucket_batches, make_batch
from elmofeat.datasets import get_data_home, load_ag_news

MMAP_LIMIT = 32 * 2**20  # glibc's largest dynamic mmap threshold
REPO = Path(__file__).resolve().parent.parent

# The part of the step an allocation belongs to: the first pattern found in the names
# of the operations that enclose it (innermost first) decides.
PARTS = (("LSTM layers (oneDNN workspace, states, their gradients)", ("rnn", "lstm")),
         ("softmax (scores, log-probabilities, their gradients)",
          ("crossentropy", "log_softmax", "gather", "linear", "mm")),)
OTHER = "everything else (token layer, dropout, indexing, optimizer)"


def part_of(event) -> str:
    names, parent = [], event
    while parent is not None:
        names.append(parent.name.lower())
        parent = parent.cpu_parent
    for part, patterns in PARTS:
        if any(pattern in name for name in names for pattern in patterns):
            return part
    return OTHER


def step_allocations(home: str, steps: int, precision: str) -> dict:
    """Largest allocation of each part over the widest ``steps`` training batches."""
    from torch.profiler import ProfilerActivity, profile

    texts = load_ag_news(home, subset="test").data
    bilm = BiLM(max_epochs=1, validation_fraction=0.0, random_state=0,
                precision=precision).fit(texts)
    lm = bilm.language_model_.train()
    bf16 = bilm._bf16(training=True)
    windows = bilm._windows(bilm.tokenize(texts))
    order = bucket_batches(windows.lengths, bilm.batch_size, np.random.default_rng(0))
    order = sorted(order, key=lambda idx: -int(windows.lengths[idx].max()))[:steps]
    batches = [make_batch(windows, idx, None) for idx in order]
    step = training_step(lm, bf16)

    step(batches[0])  # warm-up
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
        for batch in batches:
            step(batch)
    sizes = {part: [] for part, _ in PARTS}
    sizes[OTHER] = []
    for event in profiler.events():
        # An allocating operation's own memory: what it allocated and kept on return.
        if event.self_cpu_memory_usage > 0 and not event.cpu_children:
            sizes[part_of(event)].append(event.self_cpu_memory_usage)
    return {
        "precision": "bf16" if bf16 else "fp32",
        "widths": [int(b.word_ids.shape[1]) for b in batches],
        "targets": [2 * int((b.lengths - 1).sum()) for b in batches],
        "parts": {part: {"largest_mb": max(values, default=0) / 2**20,
                         "above_32_mib_per_step": sum(v > MMAP_LIMIT for v in values) / len(batches)}
                  for part, values in sizes.items()},
    }


# Put an earlier revision's package ahead of this tree's (an editable install's finder
# would otherwise win over PYTHONPATH).
PREFER = """
import importlib.machinery, sys
class _Baseline:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "elmofeat":
            return importlib.machinery.PathFinder.find_spec(name, [{root!r}])
        return None
sys.meta_path.insert(0, _Baseline)
"""


def run_fit(label: str, mode: str, home: str, precision: str, root: str | None) -> dict:
    code = CHILD.replace("import elmofeat\n", "import elmofeat\nprint(elmofeat.__file__, file=sys.stderr)\n", 1)
    if root:
        code = PREFER.format(root=root) + code
    out = subprocess.run([sys.executable, "-c", code, mode, home, precision], check=True,
                         capture_output=True, text=True, env=dict(os.environ))
    package = out.stderr.strip().splitlines()[0]
    expected = Path(root or REPO, "elmofeat", "__init__.py").resolve()
    if Path(package).resolve() != expected:
        raise RuntimeError(f"{label}: the child imported {package}, not {expected}")
    result = {"label": label, **json.loads(out.stdout.strip().splitlines()[-1])}
    print(result, flush=True)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--baseline", default=None, help="git revision to compare against")
    parser.add_argument("--precision", default="auto")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    home = str(get_data_home(args.data_home))

    allocations = step_allocations(home, args.steps, args.precision)
    print(allocations, flush=True)

    labels = {"tree": "this tree, glibc's defaults (a user's fit)",
              "tuned": "this tree, `malloc_tuning=True` (opt-in)"}
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"tree": (None, "off"), "tuned": (None, "on")}
        if args.baseline:
            revision = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.baseline],
                                      check=True, capture_output=True, text=True).stdout.strip()
            worktree = Path(scratch, "baseline")
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(worktree),
                            revision], check=True, capture_output=True)
            labels["baseline"] = f"revision {revision}, glibc's defaults"
            trees["baseline"] = (str(worktree), "off")
        try:
            # Each round starts with the next engine: none always runs after another.
            order, runs = list(trees), []
            for round_ in range(args.pairs):
                for label in order[round_ % len(order):] + order[:round_ % len(order)]:
                    root, mode = trees[label]
                    runs.append(run_fit(label, mode, home, args.precision, root))
        finally:
            if args.baseline:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force",
                                str(worktree)], check=False)

    def median(label, key):
        return float(np.median([r[key] for r in runs if r["label"] == label]))

    fit_rows = [[labels[label], f"{median(label, 'fit_seconds'):.1f}",
                 f"{median(label, 'fit_system_seconds'):.1f}",
                 f"{median(label, 'fit_minor_page_faults'):,.0f}",
                 f"{median(label, 'peak_extra_mb'):,.0f}"] for label in trees]
    ratios = {label: [other["fit_seconds"] / mine["fit_seconds"]
                      for mine, other in zip([r for r in runs if r["label"] == "tree"],
                                             [r for r in runs if r["label"] == label])]
              for label in trees if label != "tree"}
    part_rows = [[part, f"{info['largest_mb']:.1f}", f"{info['above_32_mib_per_step']:.1f}"]
                 for part, info in allocations["parts"].items()]
    low, high = min(allocations["widths"]), max(allocations["widths"])
    widths = f"{low}" if low == high else f"{low} to {high}"
    identical = len({r["weights_sha256"] for r in runs if r["label"] in ("tree", "tuned")}) == 1
    markdown = (
        "### The training step's allocations, and what a fit pays for them\n\n"
        f"Default BiLM ({allocations['precision']}), its {args.steps} widest AG News training "
        f"batches ({widths} positions, "
        f"{sum(allocations['targets']):,} LM targets) under `torch.profiler` with memory "
        "profiling: the largest block each part of the step allocates, and how many per "
        "step exceed glibc's largest mmap threshold (32 MiB; each such block is mapped "
        "and zeroed afresh by the kernel):\n\n"
        + markdown_table(["part of the step", "largest block (MB)", "blocks above 32 MiB per step"],
                         part_rows)
        + "\n\nWhole 1-epoch fits of the 7,600 AG News texts (then `embed_flat` of 3,000), "
        f"fresh processes, {args.pairs} rounds, each starting with the next engine, medians. "
        "System seconds: CPU time "
        "the kernel spent for the process; page faults: the fit's first touches of memory "
        "the kernel had to supply; peak memory above the process's baseline.\n\n"
        + markdown_table(["engine", "fit seconds", "fit system seconds", "fit minor page faults",
                          "peak extra memory (MB)"], fit_rows)
        + "\n\n" + "".join(
            f"{labels[label][:1].upper() + labels[label][1:]}: its fit took "
            f"**{np.median(values):.2f}x** the time of this "
            f"tree's default fit (pairs: {', '.join(f'{v:.2f}' for v in values)}).\n\n"
            for label, values in ratios.items())
        + f"Weights with and without the opt-in: {'identical' if identical else 'DIFFERENT'}.\n"
    )
    write_results("training_memory", {"allocations": allocations, "runs": runs,
                                      "time_ratios": ratios, "baseline": args.baseline,
                                      "identical_with_opt_in": identical}, markdown)


if __name__ == "__main__":
    main()
