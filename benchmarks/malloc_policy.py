"""What keeping large freed blocks in the heap is worth (``elmofeat.runtime.malloc``).

With ``elmofeat.set_config(malloc_tuning=True)`` (an opt-in; the ``elmofeat`` command
makes it), ``BiLM.fit`` and ``ElmoVectorizer``'s fits raise glibc's
mmap threshold so that the large blocks a training step allocates and frees come back
from the heap instead of being mapped and zeroed by the kernel at every step, and do not
trim the heap until the fit ends. This benchmark runs the default biLM's whole 1-epoch
fit on the 7,600 AG News texts, then ``embed_flat`` of 3,000 of them (outside the
policy in every mode), in fresh processes, in three modes taken in turn, --pairs times,
for each of --precisions: the policy; its former setting (the heap's top trimmed
whenever more than 256 MiB lay free, which gave memory back at large swings of a step's
working set only to fault it in again); and glibc's own dynamic threshold (the default,
no opt-in). Each child reports the fit's wall seconds, the CPU seconds the kernel spent
for it (system time), its minor page faults, the peak resident memory above its
baseline, and a digest of the fitted weights and of the layers, which must be equal in
every mode: only where memory comes from changes.

The reference loop of ``bilm_pretrain_speed.py`` (full softmax, fp32: its logits are
over 100 MB a step) runs under glibc's defaults there, as a plain script does; here it
also runs for --reference-seconds in fresh processes with and without the same policy,
--reference-pairs times, to show what the policy would be worth to it.

Writes benchmarks/results/malloc_policy.{json,md}.
Run: python benchmarks/malloc_policy.py [--pairs 3] [--precisions auto fp32]
     [--reference-pairs 2] [--reference-seconds 45] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np

from elmofeat.datasets import get_data_home

CHILD = r"""
import hashlib, json, resource, sys, time
mode, home, precision = sys.argv[1], sys.argv[2], sys.argv[3]
import elmofeat
import elmofeat.runtime.malloc as policy
elmofeat.set_config(malloc_tuning=mode != "off")  # off: glibc's own dynamic threshold
if mode == "trim":  # the policy's former setting: the heap's top trimmed above 256 MiB free
    policy.TRIM_THRESHOLD = 256 * 2**20
from elmofeat import BiLM
from elmofeat.datasets import load_ag_news

def status_mb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024

def system_seconds():
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime

def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

texts = load_ag_news(home, subset="test").data
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak (VmHWM) counts from here
base = status_mb("VmRSS")
start, sys_start, faults_start = time.perf_counter(), system_seconds(), minor_faults()
bilm = BiLM(max_epochs=1, random_state=0, precision=precision).fit(texts)
fit_seconds, fit_sys = time.perf_counter() - start, system_seconds() - sys_start
fit_faults = minor_faults() - faults_start
weights = hashlib.sha256()
for tensor in bilm.language_model_.state_dict().values():
    weights.update(tensor.detach().float().numpy().tobytes())
layers, _ = bilm.embed_flat(texts[:3000])
print(json.dumps({
    "mode": mode, "precision": precision, "fit_seconds": fit_seconds,
    "fit_system_seconds": fit_sys, "fit_minor_page_faults": fit_faults,
    "peak_extra_mb": status_mb("VmHWM") - base,
    "weights_sha256": weights.hexdigest(),
    "layers_sha256": hashlib.sha256(layers.tobytes()).hexdigest(),
}))
"""

REFERENCE_CHILD = r"""
import contextlib, json, sys
mode, home, seconds, benchmarks = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
sys.path.insert(0, benchmarks)
from bilm_pretrain_speed import reference_fit
import elmofeat
from elmofeat.runtime.malloc import reuse_large_blocks
from elmofeat.datasets import load_ag_news

elmofeat.set_config(malloc_tuning=mode == "on")
texts = load_ag_news(home, subset="test").data[:7220]
with reuse_large_blocks():
    _, _, stats = reference_fit(texts, seed=0, budget=seconds)
print(json.dumps({"mode": mode, "targets_per_second": stats["targets"] / stats["training_seconds"]}))
"""

MODES = {"on": "kept in the heap, the heap not trimmed during the fit (elmofeat's policy)",
         "trim": "kept in the heap, its top trimmed above 256 MiB free (the policy until 2026-11-24)",
         "off": "glibc's dynamic threshold"}
REFERENCE_MODES = ("on", "off")


def run_child(mode: str, home: str, code: str = CHILD, *extra: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, mode, home, *extra], check=True,
                         capture_output=True, text=True, env=dict(os.environ))
    result = json.loads(out.stdout.strip().splitlines()[-1])
    print(result, flush=True)
    return result


def fit_section(runs: list[dict], precision: str) -> tuple[str, dict]:
    """The table of one precision's fits: (markdown, its figures)."""
    by_mode = {mode: [r for r in runs if r["mode"] == mode] for mode in MODES}

    def median(mode, key):
        return float(np.median([r[key] for r in by_mode[mode]]))

    rows = [[MODES[mode], f"{median(mode, 'fit_seconds'):.1f}",
             f"{median(mode, 'fit_system_seconds'):.1f}",
             f"{median(mode, 'fit_minor_page_faults'):,.0f}",
             f"{median(mode, 'peak_extra_mb'):,.0f}"] for mode in MODES]
    ratios = {other: [r["fit_seconds"] / on["fit_seconds"]
                      for on, r in zip(by_mode["on"], by_mode[other])]
              for other in MODES if other != "on"}
    speedups = {other: float(np.median(values)) for other, values in ratios.items()}
    markdown = (
        f"Fits in {precision} (`precision=\"{precision}\"`):\n\n"
        + markdown_table(["large blocks", "fit seconds", "fit system seconds",
                          "fit minor page faults", "peak extra memory (MB)"], rows)
        + "\n\nThe fit with the policy is "
        + "; ".join(f"**{speedups[other]:.2f}x** as fast as with {MODES[other].split(' (')[0]} "
                    f"(pairs: {', '.join(f'{r:.2f}' for r in ratios[other])})"
                    for other in ratios) + ".\n\n"
    )
    return markdown, {"speedups": speedups, "pair_ratios": ratios}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--precisions", nargs="+", default=["auto", "fp32"],
                        help="precisions of the fits (fp32: what the default does on a "
                        "host without bf16 units)")
    parser.add_argument("--reference-pairs", type=int, default=2)
    parser.add_argument("--reference-seconds", type=float, default=45.0)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    home = str(get_data_home(args.data_home))
    runs = [run_child(mode, home, CHILD, precision) for precision in args.precisions
            for _ in range(args.pairs) for mode in MODES]
    here = str(Path(__file__).resolve().parent)
    reference = [run_child(mode, home, REFERENCE_CHILD, str(args.reference_seconds), here)
                 for _ in range(args.reference_pairs) for mode in REFERENCE_MODES]
    identical = all(len({r[key] for r in runs if r["precision"] == precision}) == 1
                    for precision in args.precisions
                    for key in ("weights_sha256", "layers_sha256"))
    markdown = (
        "### Large freed blocks kept in the heap, or mapped afresh\n\n"
        "Default BiLM, whole 1-epoch fit on the 7,600 AG News texts, then `embed_flat` of "
        "3,000 of them (for the layers' digest; `embed` runs without the policy); each run "
        f"a fresh process, the modes in turn, {args.pairs} rounds, medians. System seconds: "
        "CPU time the kernel spent for the process (mapping and zeroing memory, mostly); "
        "page faults: the fit's first touches of memory the kernel had to supply. Peak "
        "memory: above the process's baseline before the fit, the embedding included.\n\n"
    )
    figures = {}
    for precision in args.precisions:
        part, figures[precision] = fit_section(
            [r for r in runs if r["precision"] == precision], precision)
        markdown += part
    markdown += (
        f"Weights and layers {'identical in every mode' if identical else 'DIFFER between modes'} "
        "(SHA-256 of the fitted weights and of the layers, per precision).\n\n")
    reference_ratios = [on["targets_per_second"] / off["targets_per_second"]
                        for on, off in zip(reference[::2], reference[1::2])]
    reference_rows = [[MODES[mode], f"{np.median([r['targets_per_second'] for r in reference if r['mode'] == mode]):,.0f}"]
                      for mode in REFERENCE_MODES]
    markdown += (
        f"The reference loop of `bilm_pretrain_speed.py` for {args.reference_seconds:.0f} s of "
        f"training, {args.reference_pairs} pairs of fresh processes, medians:\n\n"
        + markdown_table(["large blocks", "reference targets/s"], reference_rows)
        + f"\n\nWith the policy the reference loop would run **{np.median(reference_ratios):.2f}x** "
        f"as fast (pairs: {', '.join(f'{r:.2f}' for r in reference_ratios)}); "
        "`bilm_pretrain_speed.py` runs it under glibc's defaults, as a plain script does.\n"
    )
    write_results("malloc_policy", {"runs": runs, "fits": figures,
                                    "identical_results": identical, "reference_runs": reference,
                                    "reference_speedup": float(np.median(reference_ratios))},
                  markdown)


if __name__ == "__main__":
    main()
