"""biLM pretraining speed: elmofeat's engine against the reference experiment's loop.

Same texts, same vocabulary (words seen at least twice), same model size (embedding
and hidden 256, 2 LSTM layers per direction), same machine, one run:

* reference: tokenize, vocabulary, documents in corpus order cut at 35 tokens, one
  padded batch of 64 after another, full softmax over the vocabulary, float32, Adam;
* elmofeat: ``BiLM``'s defaults (the SVD start of the embedding, length-bucketed
  batches of 64 windows of up to 64 tokens, adaptive softmax, bfloat16 autocast where
  the CPU has it, AdamW, a 5% validation split).

Two comparisons, both scored on the same held-out 5% of the documents (exact
perplexity of both directions), throughput in LM targets (both directions) per second:

* whole fits (what a user waits for): ``BiLM(...).fit(texts)`` with 1 and 5 epochs
  timed from call to return, against the reference run from raw strings to the end of
  the same epoch (also in a fresh process); the reference's perplexity is taken when it
  has run as long as each fit took. Each fit runs ``--repeats`` times, each in a fresh process (a user's
  first fit pays for its process's first kernels and memory), and the run of median
  time is reported with the range. A cProfile run says where a fit's time goes.
  Target: 8x. On a CPU with
  bf16 units the default trains in bfloat16; ``--fp32-epochs`` fits the same in fp32,
  what the default does on a host without them.
* the training loops alone for the same budget (setup and validation not counted),
  and, because a busy neighbour during one long run moves the ratio, --rounds short
  interleaved rounds whose median ratio is reported beside it.

``--hidden-dim H --embedding-dim E`` compares another size: H LSTM cells projected back
to E (``nn.LSTM(proj_size=E)``) when H > E, in both engines; the capacity curve's widest
model (issue 52) is ``--hidden-dim 512 --embedding-dim 128``.

Writes benchmarks/results/bilm_pretrain_speed.{json,md} (another size:
bilm_pretrain_speed_hH_eE.{json,md}).
Run: python benchmarks/bilm_pretrain_speed.py [--whole-epochs 1 5] [--fp32-epochs 1]
     [--repeats 3] [--budget 240] [--rounds 5] [--round-seconds 15] [--data-home DIR]
     [--hidden-dim 256] [--embedding-dim 256]
"""

from __future__ import annotations

import argparse
import json
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np
import torch

from elmofeat import BiLM
from elmofeat.text import TextTokenizer, Vocabulary
from elmofeat.bilm.batching import SPECIALS, UNK, make_batch, make_windows
from elmofeat.bilm.estimator import BILM_TOKEN_PATTERN
from elmofeat.runtime.torch_helpers import bf16_supported
from elmofeat.bilm.train import evaluate_perplexity
from elmofeat.datasets import load_ag_news

TOKENIZE = TextTokenizer(lowercase=True, token_pattern=BILM_TOKEN_PATTERN)


class ReferenceBiLM(torch.nn.Module):
    """The reference experiment's model, written the straightforward way.

    Same architecture and size as BiLM's (embedding, 2 LSTM layers per direction with a
    residual, projected back to the embedding width when wider, dropout 0.1, one output
    layer), with plain torch parts: nn.Dropout,
    torch.flip for the backward direction, a full softmax. Kept separate from
    elmofeat's modules so that the engine's optimisations do not leak into it.
    """

    def __init__(self, n_words, embedding_dim=256, hidden_dim=256):
        super().__init__()
        dim, hidden = embedding_dim, hidden_dim
        self.embedding = torch.nn.Embedding(n_words, dim, padding_idx=0)
        proj = dim if hidden != dim else 0
        self.forward_lstms = torch.nn.ModuleList(
            torch.nn.LSTM(dim, hidden, batch_first=True, proj_size=proj) for _ in range(2))
        self.backward_lstms = torch.nn.ModuleList(
            torch.nn.LSTM(dim, hidden, batch_first=True, proj_size=proj) for _ in range(2))
        self.dropout = torch.nn.Dropout(0.1)
        self.output = torch.nn.Linear(dim, n_words)

    @staticmethod
    def _stack(lstms, x, dropout):
        for i, lstm in enumerate(lstms):
            out, _ = lstm(dropout(x))
            x = out + x if i > 0 else out
        return x

    def forward(self, ids):
        x = self.embedding(ids)
        forward_top = self._stack(self.forward_lstms, x, self.dropout)
        backward_top = self._stack(self.backward_lstms, x.flip(1), self.dropout).flip(1)
        mask = ids[:, 1:] != 0
        logits_f = self.output(self.dropout(forward_top[:, :-1][mask]))
        logits_b = self.output(self.dropout(backward_top[:, 1:][mask]))
        targets = torch.cat([ids[:, 1:][mask], ids[:, :-1][mask]])
        return torch.nn.functional.cross_entropy(torch.cat([logits_f, logits_b]), targets)


class _ReferenceForEvaluation(torch.nn.Module):
    """Exposes ReferenceBiLM through the interface evaluate_perplexity expects."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def log_likelihood(self, inputs, word_ids, lengths):
        loss = self.model(word_ids)
        n = 2 * int((lengths - 1).sum())
        return -float(loss) * n, n


def reference_fit(train_texts, *, sizes, seed, budget=None, epochs=None, snapshot_at=(),
                  valid_tokens=None):
    """The reference experiment's pretraining, end to end from raw strings.

    Tokenizes, builds the vocabulary (words seen twice), cuts documents at 35 tokens and
    trains on padded batches of 64 in corpus order (full softmax, fp32, Adam) for
    ``epochs`` epochs or ``budget`` seconds of training (setup not counted, as
    ``BiLM(max_time=...)`` does). ``sizes``: :func:`model_sizes`. ``snapshot_at``: whole-run times (setup included) at
    which the held-out perplexity of ``valid_tokens`` is taken; the time it takes is
    left out of the clock.
    """
    begin = time.perf_counter()
    train_tokens = TOKENIZE(train_texts)
    vocabulary = Vocabulary.build(train_tokens, min_count=2, specials=SPECIALS, unknown=UNK)
    windows = make_windows([t[:35] for t in train_tokens if t], vocabulary, 35, False)
    batches = [np.arange(i, min(i + 64, len(windows))) for i in range(0, len(windows), 64)]
    torch.manual_seed(seed)
    model = ReferenceBiLM(len(vocabulary), **sizes)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    setup = time.perf_counter() - begin
    paused, targets, steps, epoch_ends, snapshots = 0.0, 0, 0, [], []
    pending = sorted(snapshot_at)

    def clock():
        return time.perf_counter() - begin - paused

    while True:
        if epochs is not None and steps == epochs * len(batches):
            break
        if budget is not None and clock() - setup >= budget:
            break
        if pending and clock() >= pending[0]:
            pause = time.perf_counter()
            snapshots.append({"seconds": pending.pop(0), "epochs": steps / len(batches),
                              "perplexity": reference_perplexity(model, vocabulary, valid_tokens)})
            paused += time.perf_counter() - pause
        batch = make_batch(windows, batches[steps % len(batches)], None)
        loss = model(batch.word_ids)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        targets += 2 * int((batch.lengths - 1).sum())
        steps += 1
        if steps % len(batches) == 0:
            epoch_ends.append(clock())
    seconds = clock()
    stats = {"targets": targets, "seconds": seconds, "setup_seconds": setup,
             "training_seconds": seconds - setup, "steps": steps,
             "epochs": steps / len(batches), "epoch_end_seconds": epoch_ends,
             "snapshots": snapshots, "vocabulary": len(vocabulary)}
    return model, vocabulary, stats


def reference_perplexity(model, vocabulary, valid_tokens):
    """Held-out perplexity of a reference model, both directions, exact."""
    was_training = model.training
    # One window per batch: the reference flips padded batches, so no padding at all here.
    ppl = evaluate_perplexity(_ReferenceForEvaluation(model.eval()),
                              make_windows(valid_tokens, vocabulary, 64, False), None, 1, False,
                              "cpu")
    model.train(was_training)
    return ppl


def model_sizes(args) -> dict:
    """The model size both engines train, from ``--embedding-dim`` / ``--hidden-dim``:
    ``BiLM``'s keyword arguments (and :class:`ReferenceBiLM`'s)."""
    return {"embedding_dim": args.embedding_dim, "hidden_dim": args.hidden_dim}


def ag_news_split(data_home, seed):
    """The AG News partition's texts as (training 95%, held-out 5%), drawn by ``seed``."""
    texts = load_ag_news(data_home, subset="test").data
    rng = np.random.default_rng(seed)
    held_out = set(rng.choice(len(texts), size=len(texts) // 20, replace=False).tolist())
    return ([t for i, t in enumerate(texts) if i not in held_out],
            [t for i, t in enumerate(texts) if i in held_out])


def process_costs():
    """This process's CPU times and page faults so far (``resource.getrusage``)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"user_seconds": usage.ru_utime, "system_seconds": usage.ru_stime,
            "minor_page_faults": usage.ru_minflt, "major_page_faults": usage.ru_majflt}


def costs_since(before):
    after = process_costs()
    return {key: after[key] - before[key] for key in after}


def engine_loop(train_texts, *, sizes, seconds, seed, precision="auto"):
    """``BiLM``'s defaults trained for ``seconds`` (setup not counted, validation off):
    its training targets per second, with the system time and page faults of the
    whole fit."""
    costs = process_costs()
    bilm = BiLM(**sizes, max_epochs=1000, patience=None,
                validation_fraction=0.0, max_time=seconds, random_state=seed,
                precision=precision).fit(train_texts)
    targets = sum(h["tokens_per_second"] * h["seconds"] for h in bilm.history_)
    return {"targets_per_second": targets / sum(h["seconds"] for h in bilm.history_),
            "targets": targets, **costs_since(costs)}


def whole_fit(train_texts, valid_texts, sizes, seed, epochs, precision="auto"):
    """``BiLM(...).fit(texts)`` timed as a user waits for it, with the CPU time the
    kernel spent for it (system time) and its page faults: on hosts where fresh memory
    is expensive these are what slows a fit down."""
    begin, costs = time.perf_counter(), process_costs()
    bilm = BiLM(**sizes, max_epochs=epochs, random_state=seed, precision=precision)
    bilm.fit(train_texts)
    seconds = time.perf_counter() - begin
    costs = costs_since(costs)
    targets = sum(h["tokens_per_second"] * h["seconds"] for h in bilm.history_)
    return {"epochs": len(bilm.history_), "seconds": seconds, "targets": targets,
            "targets_per_second": targets / seconds,
            "step_loop_seconds": sum(h["seconds"] for h in bilm.history_),
            **costs, "perplexity": bilm.perplexity(valid_texts)}


def run_child(args, *flags: str) -> dict:
    """This script in a new process with ``flags`` (a hidden child mode): the JSON
    record it prints last."""
    import subprocess
    import sys

    command = [sys.executable, __file__, *flags, "--seed", str(args.seed),
               "--hidden-dim", str(args.hidden_dim), "--embedding-dim", str(args.embedding_dim)]
    if args.data_home:
        command += ["--data-home", args.data_home]
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def fresh_process_fits(args, precision: str, epochs: int) -> dict:
    """:func:`whole_fit` ``args.repeats`` times, each in a new process running this
    script: the run of median time, with every run's seconds (``seconds_all``)."""
    runs = []
    for _ in range(args.repeats):
        runs.append(run_child(args, "--child-fit", precision, str(epochs)))
        print(f"  fresh-process fit ({precision}, {epochs} epochs): {runs[-1]['seconds']:.1f} s",
              flush=True)
    median = sorted(runs, key=lambda run: run["seconds"])[len(runs) // 2]
    return {**median, "seconds_all": [run["seconds"] for run in runs]}


def fresh_process_reference(args, epochs: int, snapshot_at=()) -> dict:
    """:func:`reference_fit`'s statistics for ``epochs`` epochs, run in a new process
    like elmofeat's fits: each pays for its process's first optimizer (torch imports
    ``torch._dynamo`` then, about a second) and first kernels, which a process that has
    trained before would not. ``snapshot_at``: as :func:`reference_fit`'s, on the
    held-out texts."""
    return run_child(args, "--child-reference", str(epochs),
                     *(f"{seconds!r}" for seconds in snapshot_at))


PHASES = {  # phase of a fit -> (file suffix, function) whose cumulative time it is
    "tokenize": ("_base.py", "_tokenize"),
    "vocabulary": ("_text.py", "build"),
    "windows": ("batching.py", "make_windows"),
    "SVD start of the embedding": ("pretrained.py", "initial_word_vectors"),
    "model build": ("estimator.py", "_build_language_model"),
    "training steps (forward, backward, optimizer)": ("train.py", "_step"),
    "validation": ("train.py", "evaluate_perplexity"),
    # torch's Optimizer imports torch._dynamo the first time a process builds one
    "optimizer set-up (a process's first imports torch._dynamo)": ("optimizer.py", "__init__"),
    "layer spread on a training sample (layer_scales_)": ("inference.py", "embed_tokens"),
}


def profile_fit(train_texts, sizes, seed, epochs):
    """Where the seconds of one whole fit go: {phase: seconds}, from cProfile. It runs
    in this process before any other fit, so it pays what a process's first fit pays.

    "batches and the rest of the epoch loop" is the epochs' own clock less their steps
    (padding batches into tensors, callbacks); "other" what is left of the whole fit.
    """
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    begin = time.perf_counter()
    profiler.enable()
    bilm = BiLM(**sizes, max_epochs=epochs, random_state=seed)
    bilm.fit(train_texts)
    profiler.disable()
    total = time.perf_counter() - begin
    stats = pstats.Stats(profiler).stats
    phases = {phase: sum(row[3] for (file, _, func), row in stats.items()
                         if file.endswith(suffix) and func == name)
              for phase, (suffix, name) in PHASES.items()}
    step = phases["training steps (forward, backward, optimizer)"]
    phases["batches and the rest of the epoch loop"] = (
        sum(h["seconds"] for h in bilm.history_) - step)
    phases["other"] = total - sum(phases.values())
    return {"total_seconds": total, "phases": phases}


def budget_comparison(args, train_texts, valid_texts):
    """The inner loops for the same training time: (markdown, results)."""
    sizes, valid_tokens = model_sizes(args), TOKENIZE(valid_texts)
    reference, vocabulary, ref_stats = reference_fit(train_texts, sizes=sizes, seed=args.seed,
                                                     budget=args.budget)
    ref_ppl = reference_perplexity(reference, vocabulary, valid_tokens)
    ref_tps = ref_stats["targets"] / ref_stats["training_seconds"]
    print(f"reference: {ref_tps:,.0f} targets/s, ppl {ref_ppl:.1f}", flush=True)

    bilm = BiLM(**sizes, max_epochs=1000, patience=None,
                validation_fraction=0.0, max_time=args.budget, random_state=args.seed)
    bilm.fit(train_texts)
    assert bilm.vocabulary_.tokens == vocabulary.tokens
    ours_targets = sum(h["tokens_per_second"] * h["seconds"] for h in bilm.history_)
    ours_tps = ours_targets / sum(h["seconds"] for h in bilm.history_)
    ours_ppl = bilm.perplexity(valid_texts)
    print(f"elmofeat: {ours_tps:,.0f} targets/s, ppl {ours_ppl:.1f}", flush=True)

    rounds = []
    for round_ in range(args.rounds):
        _, _, stats = reference_fit(train_texts, sizes=sizes, seed=args.seed + round_,
                                    budget=args.round_seconds)
        short_tps = engine_loop(train_texts, sizes=sizes, seconds=args.round_seconds,
                                seed=args.seed + round_)["targets_per_second"]
        round_ref = stats["targets"] / stats["training_seconds"]
        rounds.append({"reference": round_ref, "elmofeat": short_tps, "ratio": short_tps / round_ref})
        print(f"round {round_ + 1}: {rounds[-1]}", flush=True)
    median_ratio = float(np.median([r["ratio"] for r in rounds])) if rounds else float("nan")
    ratio = ours_tps / ref_tps
    rows = [
        ["reference loop (full softmax, fp32, cut at 35, batches in order)", f"{ref_tps:,.0f}",
         f"{ref_stats['targets']:,}", f"{ref_ppl:.1f}"],
        ["elmofeat BiLM defaults (adaptive softmax, bf16, bucketed)", f"{ours_tps:,.0f}",
         f"{ours_targets:,.0f}", f"{ours_ppl:.1f}"],
    ]
    markdown = (
        "#### The training loops alone, for the same time\n\n"
        f"{args.budget:.0f} s of training each (setup not counted), validation off.\n\n"
        + markdown_table(["engine", "targets/s (both directions)", "targets trained on",
                          "held-out perplexity"], rows)
        + f"\n\nSpeed-up of the loop: **{ratio:.1f}x**; perplexity after the same time: "
        f"{ours_ppl:.1f} vs {ref_ppl:.1f}.\n"
    )
    if rounds:
        markdown += (
            f"\nInterleaved rounds ({args.rounds} x {args.round_seconds:.0f} s each, fresh models): "
            "speed-ups " + ", ".join(f"{r['ratio']:.1f}x" for r in rounds)
            + f", median **{median_ratio:.1f}x**.\n"
        )
    return markdown, {
        "budget_seconds": args.budget,
        "reference": {**ref_stats, "targets_per_second": ref_tps, "perplexity": ref_ppl},
        "elmofeat": {"targets_per_second": ours_tps, "perplexity": ours_ppl,
                     "history": bilm.history_},
        "ratio": ratio, "rounds": rounds, "median_round_ratio": median_ratio,
    }


def whole_fit_comparison(args, train_texts, valid_texts):
    """Whole fits against the whole reference run: (markdown, results)."""
    # precision "auto" trains in bf16 where the CPU has bf16 units; "fp32" is what the
    # same fit does on a host without them (same model name, often: see numerics_fingerprint).
    fits = [("auto", epochs) for epochs in args.whole_epochs]
    if bf16_supported(torch.device("cpu")):
        fits += [("fp32", epochs) for epochs in args.fp32_epochs]
    ours = {fit: fresh_process_fits(args, *fit) for fit in fits}
    for (precision, epochs), stats in ours.items():
        print(f"elmofeat whole fit, {epochs} epochs, precision {precision}: {stats}", flush=True)
    profile = profile_fit(train_texts, model_sizes(args), args.seed, min(args.whole_epochs))
    print(f"profile: {profile}", flush=True)
    # One reference run to the most epochs, its perplexity taken when it has run as long
    # as each of our fits took: the perplexity "after the same wall time".
    ref = fresh_process_reference(args, max(epochs for _, epochs in fits),
                                  [s["seconds"] for s in ours.values()])
    print(f"reference whole run: {ref}", flush=True)
    snapshots = {s["seconds"]: s for s in ref["snapshots"]}
    per_epoch = ref["targets"] / ref["epochs"]
    rows, results = [], []
    for (precision, epochs), stats in ours.items():
        snapshot = snapshots.get(stats["seconds"], {"perplexity": float("nan")})
        ref_seconds = ref["epoch_end_seconds"][epochs - 1]
        ref_tps = per_epoch * epochs / ref_seconds
        ratio = stats["targets_per_second"] / ref_tps
        cpu = stats["user_seconds"] + stats["system_seconds"]
        trained = {"auto": "bf16" if bf16_supported(torch.device("cpu")) else "fp32", "fp32": "fp32"}[precision]
        spread = f"{min(stats['seconds_all']):.1f}-{max(stats['seconds_all']):.1f}"
        rows.append([str(epochs), f"{precision} ({trained})", f"{ref_seconds:.1f}",
                     f"{ref_tps:,.0f}", f"{stats['seconds']:.1f} ({spread})",
                     f"{stats['targets_per_second']:,.0f}", f"**{ratio:.1f}x**",
                     f"{stats['perplexity']:.1f}", f"{snapshot['perplexity']:.1f}",
                     f"{stats['system_seconds']:.1f} ({100 * stats['system_seconds'] / cpu:.0f}%)",
                     f"{stats['minor_page_faults']:,}"])
        results.append({"epochs": epochs, "precision": precision, "trained_in": trained,
                        "reference_seconds": ref_seconds,
                        "reference_targets_per_second": ref_tps, "elmofeat": stats,
                        "ratio": ratio, "reference_at_same_time": snapshot})
    total = profile["total_seconds"]
    profile_rows = [[phase, f"{seconds:.2f}", f"{100 * seconds / total:.0f}%"]
                    for phase, seconds in profile["phases"].items()]
    markdown = (
        "#### Whole fits, as a user waits for them\n\n"
        f"`BiLM(embedding_dim={args.embedding_dim}, hidden_dim={args.hidden_dim}, max_epochs=E, random_state={args.seed})"
        ".fit(texts)` timed from call to return (tokenizing, vocabulary, the SVD start, "
        "its 5% validation split and every validation included), against the reference "
        "run timed from raw strings to the end of epoch E (its setup included, no "
        "validation; in a fresh process too, so that both pay for a process's first "
        "optimizer and kernels). Throughput: LM targets trained on per second of the whole run. "
        f"Each fit ran {args.repeats} times, each in a fresh process: the run of median "
        "time, its range in brackets. "
        "`precision=\"auto\"` (the default) trains in bfloat16 where the CPU has bf16 "
        "units; the `fp32` rows are the same fit with `precision=\"fp32\"`, what the "
        "default does on a host without them (the reference loop is fp32 on every host).\n\n"
        + markdown_table(["epochs", "precision (trained in)", "reference seconds",
                          "reference targets/s", "elmofeat fit seconds (range)",
                          "elmofeat targets/s",
                          "speed-up", "elmofeat held-out perplexity",
                          "reference perplexity after the same wall time",
                          "elmofeat system CPU s (share of its CPU time)",
                          "elmofeat minor page faults"], rows)
        + f"\n\nWhere a {min(args.whole_epochs)}-epoch fit's {total:.1f} s go (the first "
        "fit of a process, under cProfile, which slows Python-heavy phases a little):\n\n"
        + markdown_table(["phase", "seconds", "share"], profile_rows)
        + "\n"
    )
    return markdown, {"whole_fits": results, "reference_run": ref, "profile": profile}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=240.0,
                        help="seconds of training each for the loop comparison (0: skip it)")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=5, help="short interleaved rounds")
    parser.add_argument("--round-seconds", type=float, default=15.0)
    parser.add_argument("--whole-epochs", type=int, nargs="*", default=[1, 5],
                        help="epochs of the whole-fit comparison (none: skip it)")
    parser.add_argument("--fp32-epochs", type=int, nargs="*", default=[1],
                        help="epochs of whole fits also run in fp32, as on a host without "
                        "bf16 units (only where this one has them; none: skip them)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="fresh-process runs of each whole fit (the median is reported)")
    parser.add_argument("--child-fit", nargs=2, metavar=("PRECISION", "EPOCHS"),
                        help=argparse.SUPPRESS)  # one whole fit, its stats as JSON
    parser.add_argument("--child-reference", nargs="+", metavar="EPOCHS [SNAPSHOT_SECONDS]",
                        help=argparse.SUPPRESS)  # one reference run, its stats as JSON
    parser.add_argument("--hidden-dim", type=int, default=256, help="LSTM cells")
    parser.add_argument("--embedding-dim", type=int, default=256,
                        help="token width (cells above it are projected back to it)")
    args = parser.parse_args()
    sizes = model_sizes(args)
    dim, hidden = args.embedding_dim, args.hidden_dim

    train_texts, valid_texts = ag_news_split(args.data_home, args.seed)
    if args.child_reference:
        epochs, *snapshots = args.child_reference
        _, _, stats = reference_fit(train_texts, sizes=sizes, seed=args.seed, epochs=int(epochs),
                                    snapshot_at=[float(t) for t in snapshots],
                                    valid_tokens=TOKENIZE(valid_texts))
        print(json.dumps(stats))
        return
    if args.child_fit:
        precision, epochs = args.child_fit[0], int(args.child_fit[1])
        print(json.dumps(whole_fit(train_texts, valid_texts, sizes, args.seed, epochs,
                                   precision)))
        return

    markdown = (
        "### biLM pretraining: elmofeat engine vs the reference loop\n\n"
        f"AG News 7,600-row partition, {len(train_texts):,} training / {len(valid_texts)} "
        "held-out documents, vocabulary = words seen twice + 4 specials, "
        + (f"embedding = hidden = {dim}" if hidden == dim else
           f"embedding {dim}, {hidden} LSTM cells projected back to {dim} (both engines)")
        + f", 2 LSTM layers per direction, {torch.get_num_threads()} threads. "
        "Perplexities are exact, both directions, on the held-out documents.\n\n"
    )
    results = {}
    if args.whole_epochs:
        part, results["whole"] = whole_fit_comparison(args, train_texts, valid_texts)
        markdown += part + "\n"
    if args.budget > 0:
        part, results["loop"] = budget_comparison(args, train_texts, valid_texts)
        markdown += part
    default = (dim, hidden) == (256, 256)
    name = "bilm_pretrain_speed" + ("" if default else f"_h{hidden}_e{dim}")
    results["sizes"] = sizes
    flags = "" if default else f" --hidden-dim {hidden} --embedding-dim {dim}"
    write_results(name, results, markdown,
                  command=f"python benchmarks/bilm_pretrain_speed.py{flags}")


if __name__ == "__main__":
    main()
