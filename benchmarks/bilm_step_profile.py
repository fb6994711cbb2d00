"""The biLM training step against the machine's matmul peak, part by part.

For each model named by ``--models``: ``default``, the default BiLM (256/256, adaptive
softmax) pretrained one epoch on AG News (so that its weights and the softmax's cluster
sizes are those of a real run), or a registered pretrained model (``en-base``), whose
steps on AG News are those of its adaptation. The same sample of training batches goes
through:

* the whole step, exactly as the engine runs it (autocast forward, backward, gradient
  clipping, fused AdamW), timed;
* the same steps under ``torch.profiler``, each operation's own time attributed to a
  part: the LSTM kernels (forward, backward), the softmax's matmuls, its fp32
  log-softmax, casts and copies, the optimizer, indexing, dropout draws, the rest.
  Parts are measured inside real steps: timing each part alone (all forwards, then all
  backwards) kept every batch's graph alive and measured the LSTM at half its in-step
  speed.

Achieved FLOP/s count the matmul work each part does (LSTM: 2 x 4h x (d + h) per
position, layer and direction; softmax: the head and tail projections of the rows
actually computed; backward = 2 x forward, less the first layers' input gradients
when the token layer does not learn), divided by the measured peak of a 2048 x
2048 matmul in the same precision (the best of several timings, before and after).
The other parts move memory rather than multiply: their share of the
step's time is what counts.

Writes benchmarks/results/bilm_step_profile.{json,md} (one section per model; models
not named keep their stored sections).
Run: python benchmarks/bilm_step_profile.py [--batches 60] [--precision bf16|fp32]
     [--models default en-base ~/elmofeat-work/capacity/w512p@40838681.pt]
     [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import (RESULTS, bare_lstm_flops, environment, markdown_table, matmul_peak,
                     training_step, write_results)

import numpy as np
import torch

from elmofeat import BiLM
from elmofeat.runtime.malloc import reuse_large_blocks
from elmofeat.runtime.torch_helpers import autocast
from elmofeat.bilm.batching import bucket_batches, make_batch
from elmofeat.bilm.softmax import bucketed_rows
from elmofeat.datasets import load_ag_news


def lstm_flops(batch, d, h, n_layers, projected: bool = False) -> float:
    """Forward matmul FLOPs of every LSTM layer of both directions on a padded batch. A
    projected layer (``proj_size=d``) feeds back its ``d``-wide projection, not its ``h``
    cells, and adds the ``h -> d`` projection."""
    positions = batch.word_ids.numel()
    per_position = 4 * h * (d + d) + h * d if projected else 4 * h * (d + h)
    return positions * 2 * per_position * n_layers * 2


def softmax_flops(adaptive, targets) -> float:
    """Forward matmul FLOPs of the adaptive softmax on these targets (bucketed rows)."""
    dim = adaptive.in_features
    flops = bucketed_rows(len(targets)) * 2 * dim * adaptive.head_size
    for i, tail in enumerate(adaptive.tail):
        low, high = adaptive.cutoffs[i], adaptive.cutoffs[i + 1]
        rows = int(((targets >= low) & (targets < high)).sum())
        if rows:
            hidden, out = tail[0].out_features, tail[1].out_features
            flops += bucketed_rows(rows) * 2 * (dim * hidden + hidden * out)
    return flops


def timed(function, batches, repeats=5) -> list[float]:
    """Seconds of each of ``repeats`` passes of ``function`` over ``batches``."""
    passes = []
    for _ in range(repeats):
        start = time.perf_counter()
        for batch in batches:
            function(batch)
        passes.append(time.perf_counter() - start)
    return passes


MATMULS = ("aten::mm", "aten::addmm", "aten::bmm")
#: The softmax's fp32 work between its matmuls: scored in blocks (chunked_cross_entropy),
#: every operation inside the blockwise cross-entropy that is not a matmul.
NORMALISATION = "softmax normalisation (fp32)"
BLOCKWISE_SOFTMAX = "crossentropy"
# Which part of the step each profiled operation belongs to: the first pattern its name
# contains decides. oneDNN's LSTM runs as aten::mkldnn_rnn_layer (and its backward).
PARTS = (
    ("LSTM backward", ("rnn_layer_backward", "lstm_backward", "rnn_backward")),
    ("LSTM forward", ("rnn_layer", "aten::lstm", "rnn_tanh", "lstm_cell")),
    ("softmax matmuls", MATMULS),
    (NORMALISATION, ("log_softmax",)),
    ("casts and copies", ("aten::copy_", "aten::_to_copy", "aten::clone")),
    ("optimizer (clipping + AdamW)", ("adamw", "norm", "foreach", "clamp")),
    ("indexing (masks, gathers, reversals)", ("index", "gather", "scatter", "masked",
                                              "nonzero", "select")),
    ("dropout draws", ("random_",)),
)
OTHER = "everything else (element-wise, allocation, autograd)"


def profile_parts(step, batches) -> tuple[dict, float]:
    """Seconds of each part of ``step`` over ``batches`` by ``torch.profiler``.

    Each operation's self time (without the operations it calls) goes to a part: inside
    an ``aten::lstm`` call, to the LSTM's forward; inside the backward of an operation
    that ran inside one (autograd's ``evaluate_function`` carries its forward
    operation's sequence number), to the LSTM's backward. A projected LSTM runs
    torch's plain kernel, whose matmuls and gates are separate operations, where
    oneDNN's runs as one; both are counted whole this way. Any other operation goes to
    the first part of :data:`PARTS` whose pattern its name contains, the rest to
    ``OTHER``; inside the blockwise cross-entropy, every operation but the matmuls goes
    to ``NORMALISATION``.
    Returns ``(seconds by part, profiled wall seconds)``; the parts' sum is below the
    wall time by what runs outside any operation (Python, the profiler itself).
    """
    from torch.profiler import ProfilerActivity, profile

    seconds = {name: 0.0 for name, _ in PARTS}
    seconds[OTHER] = 0.0
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        start = time.perf_counter()
        for batch in batches:
            step(batch)
        wall = time.perf_counter() - start
    events = profiler.events()
    lstm_sequence = {event.sequence_nr for event in events
                     if event.sequence_nr >= 0 and _ancestor(event, "aten::lstm")}
    for event in events:
        name = event.name.lower()
        backward = _ancestor(event, "autograd::engine::evaluate_function")
        if backward is not None and backward.sequence_nr in lstm_sequence:
            part = "LSTM backward"
        elif _ancestor(event, "aten::lstm") is not None:
            part = "LSTM forward"
        elif _inside_blockwise_softmax(event) and not any(m in name for m in MATMULS):
            part = NORMALISATION
        else:
            part = next((part for part, patterns in PARTS
                         if any(pattern in name for pattern in patterns)), OTHER)
        seconds[part] += event.self_cpu_time_total / 1e6
    return seconds, wall


def _ancestor(event, prefix: str):
    """The nearest of ``event`` and its callers whose name starts with ``prefix``."""
    while event is not None:
        if event.name.startswith(prefix):
            return event
        event = event.cpu_parent
    return None


def _inside_blockwise_softmax(event) -> bool:
    parent = event
    while parent is not None:
        if BLOCKWISE_SOFTMAX in parent.name.lower():
            return True
        parent = parent.cpu_parent
    return False


def model_for(name: str, texts, precision: str):
    """``(bilm, description)``: the default BiLM pretrained one epoch on ``texts``, a
    registered pretrained model as it ships, or a saved BiLM file (e.g. a snapshot of
    ``capacity.py``'s wide runs)."""
    if Path(name).suffix == ".pt":
        if not Path(name).is_file():
            raise SystemExit(f"{name}: no such BiLM file")
        return BiLM.load(name), f"`{Path(name).stem}` (its adaptation's steps)"
    if name == "default":
        bilm = BiLM(max_epochs=1, validation_fraction=0.0, random_state=0,
                    precision=precision).fit(texts)
        return bilm, "Default BiLM"
    return BiLM.from_pretrained(name), f"`{name}` (its adaptation's steps)"


def profile(name: str, texts, args) -> dict:
    """One model's step against the peak (what :func:`section` reports)."""
    bf16 = args.precision == "bf16"
    dtype = torch.bfloat16 if bf16 else torch.float32
    peak_before = matmul_peak(dtype)

    bilm, described = model_for(name, texts, args.precision)
    lm = bilm.language_model_.train()
    encoder, adaptive = lm.encoder, lm.softmax.adaptive
    windows = bilm._windows(bilm.tokenize(texts))
    order = bucket_batches(windows.lengths, bilm.batch_size, np.random.default_rng(0))
    batches = [make_batch(windows, idx, None) for idx in order[: args.batches]]
    step = training_step(lm, bf16)

    # The default keeps the word embedding frozen (freeze_embedding=True): then the token
    # layer runs forward only and the LSTMs compute no gradient for their inputs.
    token_layer_learns = any(p.requires_grad for p in encoder.token_layer.parameters())
    targets_of = []
    for batch in batches:  # the softmax's real targets, for its FLOP count
        with torch.no_grad(), autocast("cpu", bf16):
            targets_of.append(lm._hidden_and_targets(batch.inputs, batch.word_ids, batch.lengths)[1])

    # The steps run under the engine's allocation policy, as in BiLM.fit.
    with reuse_large_blocks():
        for batch in batches[:5]:  # warm-up: oneDNN builds its kernels once per shape
            step(batch)
        # A shared host's speed drifts: the best pass is the step's speed, the median
        # what a run of it sees.
        passes = timed(step, batches)
        part_seconds, profiled_seconds = profile_parts(step, batches)
    step_seconds, median_seconds = min(passes), float(np.median(passes))
    d, h = bilm.embedding_dim, bilm.hidden_dim
    mean_width = int(round(np.mean([b.word_ids.shape[1] for b in batches])))
    bare = bare_lstm_flops(bilm.batch_size, mean_width, h, bf16, backward=True,
                           input_dim=d)
    peak = max(peak_before, matmul_peak(dtype))

    projected = h != d  # the encoder projects wider cells back to the embedding width
    forward_lstm = sum(lstm_flops(b, d, h, bilm.n_layers, projected) for b in batches)
    backward_lstm = 2 * forward_lstm
    if not token_layer_learns:  # no gradient for the first layers' inputs
        backward_lstm -= sum(b.word_ids.numel() * 2 * 4 * h * d * 2 for b in batches)
    forward_softmax = sum(softmax_flops(adaptive, t) for t in targets_of)
    flops = {"step": forward_lstm + backward_lstm + 3 * forward_softmax,
             "LSTM forward": forward_lstm, "LSTM backward": backward_lstm,
             "softmax matmuls": 3 * forward_softmax}
    targets = sum(2 * int((b.lengths - 1).sum()) for b in batches)
    return {
        "described": described, "dims": [d, h], "projected": projected,
        "token_layer_learns": token_layer_learns, "precision": args.precision,
        "threads": torch.get_num_threads(), "batches": len(batches),
        "batch_size": bilm.batch_size, "mean_width": mean_width,
        "targets": targets, "peak_flops": peak, "step_seconds": step_seconds,
        "step_passes": passes, "profiled_seconds": profiled_seconds,
        "part_seconds": part_seconds, "flops": flops,
        "fraction_of_peak": flops["step"] / step_seconds / peak,
        "lstm_fraction_of_peak": (forward_lstm + backward_lstm) / (
            part_seconds["LSTM forward"] + part_seconds["LSTM backward"]) / peak,
        "bare_lstm_flops": bare, "bare_lstm_fraction_of_peak": bare / peak,
        "measured": environment()["date"],
    }


def section(run: dict) -> str:
    """The markdown section of one model's measurement (``profile``'s payload)."""
    described, (d, h), peak = run["described"], run["dims"], run["peak_flops"]
    flops, parts, profiled = run["flops"], run["part_seconds"], run["profiled_seconds"]
    rows = [["whole step (timed without the profiler)", f"{run['step_seconds']:.2f}", "",
             f"{flops['step'] / run['step_seconds'] / 1e9:.0f}",
             f"{100 * run['fraction_of_peak']:.0f}%"]]
    for part, seconds in parts.items():
        achieved = flops[part] / seconds if part in flops and seconds > 0 else None
        rows.append([part, f"{seconds:.2f}", f"{100 * seconds / profiled:.0f}%",
                     "" if achieved is None else f"{achieved / 1e9:.0f}",
                     "" if achieved is None else f"{100 * achieved / peak:.0f}%"])
    share, lstm_share = run["fraction_of_peak"], run["lstm_fraction_of_peak"]
    bare_share = run["bare_lstm_fraction_of_peak"]
    lstm_time = (parts["LSTM forward"] + parts["LSTM backward"]) / profiled
    median = float(np.median(run["step_passes"]))
    precision = run["precision"]
    kernel = f"nn.LSTM({d}, {h}{f', proj_size={d}' if run['projected'] else ''})"
    if lstm_share < 0.9 * bare_share:
        verdict = "The step's LSTM runs below the bare kernel."
    elif lstm_time >= 0.5 and lstm_share < 0.5:
        verdict = ("The LSTM kernel itself keeps the step below the target: it takes most "
                   "of the step's time at the bare kernel's speed"
                   + (", and a projected LSTM runs torch's plain kernel (oneDNN has none "
                      "with a projection), each time step's matmuls and gates separate "
                      "operations." if run["projected"] else "."))
    else:
        verdict = ("The step's LSTM runs at the bare kernel's speed or better: what keeps "
                   "the step below the target is the rest of its time (the softmax, casts, "
                   "element-wise and indexing operations, the optimizer), which does "
                   "little matmul work.")
    return (
        f"### {described}: training step against the {precision} matmul peak\n\n"
        f"{described} ({d}/{h}{', projected' if run['projected'] else ''}, adaptive "
        f"softmax, word embedding {'learning' if run['token_layer_learns'] else 'frozen'}), "
        f"{precision}, {run['batches']} training batches of AG News ({run['targets']:,} LM "
        f"targets), {run['threads']} threads; matmul peak {peak / 1e9:.0f} GFLOP/s (2048 x "
        "2048, the faster of torch's BLAS and oneDNN, best timing). The parts are the time "
        "`torch.profiler` attributes to each kind of operation inside the same steps "
        f"({profiled:.2f} s profiled; each operation's own time, without the operations it "
        "calls; the operations inside an LSTM call, or inside the backward of one, are the "
        "LSTM's).\n\n"
        + markdown_table(["part", "seconds", "of the profiled step", "achieved GFLOP/s",
                          "of matmul peak"], rows)
        + f"\n\nThe whole step reaches **{100 * share:.0f}%** of the {precision} matmul "
        f"peak ({run['targets'] / run['step_seconds']:,.0f} targets/s; best of "
        f"{len(run['step_passes'])} passes, median "
        f"{100 * flops['step'] / median / peak:.0f}%). Target: 50%.\n\n"
        f"Inside the step the LSTM kernels (forward and backward together) reach "
        f"**{100 * lstm_share:.0f}%** of the peak in {100 * lstm_time:.0f}% of its time; one "
        f"bare `{kernel}`, forward + backward on a random ({run['batch_size']}, "
        f"{run['mean_width']}, {d}) input (the batches' mean width), reaches "
        f"{run['bare_lstm_flops'] / 1e9:.0f} GFLOP/s, {100 * bare_share:.0f}%. {verdict}\n\n"
        f"(Measured {run['measured']}.)\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
    parser.add_argument("--models", nargs="+", default=["default", "en-base"],
                        help="default (the default BiLM, pretrained here), registered "
                        "pretrained models and/or saved BiLM files (*.pt)")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    texts = load_ag_news(args.data_home, subset="test").data
    # Models not measured again keep their stored sections (each names its date), so
    # that one model can be profiled alone on an idle machine.
    stored = RESULTS / "bilm_step_profile.json"
    saved = json.loads(stored.read_text()) if stored.is_file() else {}
    runs = {name: run for name, run in saved.get("runs", {}).items() if "described" in run}
    for name in args.models:
        runs[Path(name).stem if Path(name).suffix == ".pt" else name] = profile(name, texts, args)
    write(runs, saved.get("earlier", []))


def write(runs: dict, earlier: list, environment=None) -> None:
    """The results file: this host's sections, then the earlier hosts' reports as they
    were written (the figures cited from them stay where they were measured)."""
    markdown = "\n".join(section(run) for run in runs.values())
    for report in earlier:
        markdown += (f"\n## Earlier measurement: {report['environment']['cpu']}, "
                     f"{report['environment']['date']}\n\n"
                     + ("\n" + report["markdown"]).replace("\n### ", "\n#### ").lstrip()
                     + "\n")
    write_results("bilm_step_profile", {"runs": runs, "earlier": earlier}, markdown,
                  environment=environment)


if __name__ == "__main__":
    main()
