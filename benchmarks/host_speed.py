"""The pretraining speed-up on each host the project has run on, beside the host's matmul peaks.

Shared machines that read the same CPU name are not alike: the project's virtual
machines all read "AMD EPYC (AVX-512 BF16)", yet their matrix products run at
different speeds, and a speed-up measured on one does not carry to another. This
script measures, on this host:

* its matmul peaks in bfloat16 and float32 (``_common.matmul_peak``: 2048 x 2048
  products, the faster of torch's BLAS and oneDNN, best timing);
* ``--rounds`` interleaved rounds of ``--round-seconds`` of training each: the
  reference loop of ``bilm_pretrain_speed.py`` (full softmax, fp32), ``BiLM``'s
  defaults (``precision="auto"``: bf16 where the CPU has it) and the same in fp32 (what
  the default does on a host without bf16 units), on the same AG News texts; each
  after a short warm-up run, so that a round measures the loop and not the process's
  first kernels. Targets per second, the speed-up of each round, the engine's system
  time and page faults;
* the engine's targets per second per TFLOP/s of the peak in the precision it trained
  in: a figure that stays put from host to host where the engine uses each host's
  matrix units equally well;
* a whole 1-epoch fit as a user waits for it (``bilm_pretrain_speed.py``'s whole fit,
  ``--whole-repeats`` fresh processes, the median) against the reference run from raw
  strings to the end of its first epoch, in a fresh process too: the speed-up that
  benchmark's target is set on.

One row per host (the CPU's description and identity, ``elmofeat.runtime.host``, and
its CPU count): a run replaces its own host's row and keeps the others, so the table
gathers the hosts that sessions have measured.

Writes benchmarks/results/host_speed.{json,md}.
Run: python benchmarks/host_speed.py [--rounds 5] [--round-seconds 15]
     [--whole-repeats 3] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, environment, markdown_table, matmul_peak, write_results

import numpy as np
import torch

from bilm_pretrain_speed import (ag_news_split, engine_loop, fresh_process_fits,
                                 fresh_process_reference, reference_fit)
from elmofeat.runtime.torch_helpers import bf16_supported

ENGINES = {"auto": "elmofeat default", "fp32": "elmofeat fp32"}


def host_key(env: dict) -> str:
    """The row a run on the host of ``env`` (an ``environment()`` record) fills."""
    identity = env.get("cpu_identity") or "identity not recorded"
    return f"{env['cpu']} [{identity}], {env['cpu_count']} CPUs"


def stored_rows() -> dict:
    """The rows of earlier runs, one per host."""
    path = RESULTS / "host_speed.json"
    return json.loads(path.read_text())["rows"] if path.is_file() else {}


def measure(args) -> dict:
    """This host's row: peaks, the interleaved rounds and their medians."""
    bf16 = bf16_supported(torch.device("cpu"))
    peaks = {"bf16": matmul_peak(torch.bfloat16), "fp32": matmul_peak(torch.float32)}
    print(f"matmul peaks: bf16 {peaks['bf16'] / 1e9:,.0f}, fp32 {peaks['fp32'] / 1e9:,.0f} "
          "GFLOP/s", flush=True)
    train_texts, _ = ag_news_split(args.data_home, args.seed)
    reference_fit(train_texts, seed=args.seed, budget=2.0)  # warm-ups
    for precision in ENGINES:
        engine_loop(train_texts, seconds=2.0, seed=args.seed, precision=precision)
    rounds = []
    for round_ in range(args.rounds):
        seed = args.seed + round_
        _, _, stats = reference_fit(train_texts, seed=seed, budget=args.round_seconds)
        found = {"reference": stats["targets"] / stats["training_seconds"]}
        for precision in ENGINES:
            found[precision] = engine_loop(train_texts, seconds=args.round_seconds, seed=seed,
                                           precision=precision)
        rounds.append(found)
        print(f"round {round_ + 1}: reference {found['reference']:,.0f}, "
              + ", ".join(f"{p} {found[p]['targets_per_second']:,.0f}" for p in ENGINES)
              + " targets/s", flush=True)

    def median(values):
        return float(np.median(values))

    reference = median([r["reference"] for r in rounds])
    engines = {}
    for precision in ENGINES:
        ratios = [r[precision]["targets_per_second"] / r["reference"] for r in rounds]
        speed = median([r[precision]["targets_per_second"] for r in rounds])
        trained_in = "bf16" if precision == "auto" and bf16 else "fp32"
        engines[precision] = {
            "trained_in": trained_in, "targets_per_second": speed,
            "speed_up": median(ratios), "speed_up_range": [min(ratios), max(ratios)],
            "targets_per_second_per_peak_tflops": speed / (peaks[trained_in] / 1e12),
            "system_seconds": median([r[precision]["system_seconds"] for r in rounds]),
            "minor_page_faults": median([r[precision]["minor_page_faults"] for r in rounds]),
        }
    return {"environment": environment(), "round_seconds": args.round_seconds,
            "peaks_flops": peaks, "reference_targets_per_second": reference,
            "engines": engines, "rounds": rounds,
            "whole_fit": whole_fit(args) if args.whole_repeats else None}


def whole_fit(args) -> dict:
    """The default 1-epoch fit in fresh processes (median) against the reference's
    first epoch in a fresh process, setup included in both."""
    fits = fresh_process_fits(SimpleNamespace(repeats=args.whole_repeats, seed=args.seed,
                                              data_home=args.data_home), "auto", 1)
    reference = fresh_process_reference(SimpleNamespace(seed=args.seed,
                                                        data_home=args.data_home), 1)
    reference_seconds = reference["epoch_end_seconds"][0]
    reference_speed = reference["targets"] / reference_seconds
    print(f"whole 1-epoch fit: {fits['seconds']:.1f} s, reference {reference_seconds:.1f} s",
          flush=True)
    return {"seconds": fits["seconds"], "seconds_all": fits["seconds_all"],
            "targets_per_second": fits["targets_per_second"],
            "reference_seconds": reference_seconds,
            "reference_targets_per_second": reference_speed,
            "speed_up": fits["targets_per_second"] / reference_speed,
            "system_seconds": fits["system_seconds"],
            "minor_page_faults": fits["minor_page_faults"]}


def whole_fit_cell(whole: dict | None) -> str:
    if not whole:
        return "not measured"
    return (f"**{whole['speed_up']:.1f}x** ({whole['seconds']:.1f} / "
            f"{whole['reference_seconds']:.1f})")


def markdown(rows: dict) -> str:
    table = []
    for key, row in sorted(rows.items(), key=lambda item: -item[1]["peaks_flops"]["bf16"]):
        default, fp32 = row["engines"]["auto"], row["engines"]["fp32"]
        table.append([
            key, f"{row['peaks_flops']['bf16'] / 1e9:,.0f}", f"{row['peaks_flops']['fp32'] / 1e9:,.0f}",
            f"{row['reference_targets_per_second']:,.0f}",
            f"{default['targets_per_second']:,.0f} ({default['trained_in']})",
            f"**{default['speed_up']:.1f}x** ({default['speed_up_range'][0]:.1f}-"
            f"{default['speed_up_range'][1]:.1f})",
            f"{fp32['targets_per_second']:,.0f}", f"{fp32['speed_up']:.1f}x",
            f"{default['targets_per_second_per_peak_tflops']:,.0f}",
            f"{fp32['targets_per_second_per_peak_tflops']:,.0f}",
            f"{default['system_seconds']:.1f} / {fp32['system_seconds']:.1f}",
            whole_fit_cell(row.get("whole_fit")),
            row["environment"]["date"][:10],
        ])
    return (
        "### Pretraining speed-up by host\n\n"
        "Interleaved rounds on the AG News partition (the setup of "
        "`bilm_pretrain_speed.py`: embedding = hidden = 256, 2 LSTM layers per direction): "
        "the reference loop (full softmax, fp32), elmofeat's `BiLM` defaults and the same "
        "in fp32, each for the same seconds of training per round, medians over the rounds "
        "(range of the default's speed-up in brackets). Peaks: 2048 x 2048 matmuls, the "
        "faster of torch's BLAS and oneDNN, best timing. *Per peak TFLOP/s*: the engine's "
        "targets per second divided by the host's peak in the precision it trained in, "
        "which stays put where the engine uses each host's matrix units equally well. "
        "The whole fit: `BiLM` defaults at this benchmark's size, 1 epoch, timed from call "
        "to return in fresh processes (median), against the reference's first epoch from "
        "raw strings (its setup included) in a fresh process, as `bilm_pretrain_speed.py` "
        "times them. "
        "One row per host, each from a run on that host.\n\n"
        + markdown_table(["host", "bf16 peak GFLOP/s", "fp32 peak GFLOP/s",
                          "reference targets/s", "elmofeat default targets/s",
                          "default speed-up", "elmofeat fp32 targets/s", "fp32 speed-up",
                          "default per peak TFLOP/s", "fp32 per peak TFLOP/s",
                          "engine system s per round (default / fp32)",
                          "1-epoch whole fit: speed-up (elmofeat s / reference s)",
                          "measured"], table)
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--round-seconds", type=float, default=15.0)
    parser.add_argument("--whole-repeats", type=int, default=3,
                        help="fresh-process runs of the whole 1-epoch fit (0: skip it)")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    row = measure(args)
    rows = {**stored_rows(), host_key(row["environment"]): row}
    write_results("host_speed", {"rows": rows}, markdown(rows))


if __name__ == "__main__":
    main()
