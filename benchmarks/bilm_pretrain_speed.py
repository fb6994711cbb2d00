"""biLM pretraining speed: elmofeat's engine against the reference experiment's loop.

Same texts, same vocabulary (words seen at least twice), same model size (embedding
and hidden 256, 2 LSTM layers per direction), same machine, one run:

* reference loop: documents in corpus order, cut at 35 tokens, one padded batch of 64
  after another, full softmax over the vocabulary, float32, Adam;
* elmofeat: BiLM's defaults (length-bucketed batches of 64 windows of up to 64 tokens,
  adaptive softmax, bfloat16 autocast, AdamW).

Each trains for the same wall-clock budget; then both are scored on the same held-out
5% of the documents (exact perplexity of both directions). Throughput counts LM targets
(both directions) per second. Target: ratio >= 6 (stretch 8), equal or better
perplexity.

The machine is shared, and a busy neighbour during one of the two long runs moves
their ratio. So the throughputs are also measured in --rounds short interleaved rounds
(reference, then elmofeat, --round-seconds each, fresh models), and the median of the
per-round ratios is reported beside the ratio of the long runs.

Writes benchmarks/results/bilm_pretrain_speed.{json,md}.
Run: python benchmarks/bilm_pretrain_speed.py [--budget 240] [--rounds 5]
     [--round-seconds 15] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from _common import markdown_table, write_results
from elmofeat import BiLM
from elmofeat._text import TextTokenizer, Vocabulary
from elmofeat.bilm.batching import SPECIALS, UNK, make_batch, make_windows
from elmofeat.bilm.estimator import BILM_TOKEN_PATTERN
from elmofeat.bilm.train import evaluate_perplexity
from elmofeat.datasets import load_ag_news

DIM = 256


class ReferenceBiLM(torch.nn.Module):
    """The reference experiment's model, written the straightforward way.

    Same architecture and size as BiLM's (embedding, 2 LSTM layers per direction with a
    residual, dropout 0.1, one output layer), with plain torch parts: nn.Dropout,
    torch.flip for the backward direction, a full softmax. Kept separate from
    elmofeat's modules so that the engine's optimisations do not leak into it.
    """

    def __init__(self, n_words):
        super().__init__()
        self.embedding = torch.nn.Embedding(n_words, DIM, padding_idx=0)
        self.forward_lstms = torch.nn.ModuleList(torch.nn.LSTM(DIM, DIM, batch_first=True) for _ in range(2))
        self.backward_lstms = torch.nn.ModuleList(torch.nn.LSTM(DIM, DIM, batch_first=True) for _ in range(2))
        self.dropout = torch.nn.Dropout(0.1)
        self.output = torch.nn.Linear(DIM, n_words)

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


def reference_loop(train_tokens, vocabulary, budget, seed):
    """The straightforward loop of the reference experiment, for the same time budget."""
    torch.manual_seed(seed)
    model = ReferenceBiLM(len(vocabulary))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    windows = make_windows([t[:35] for t in train_tokens if t], vocabulary, 35, False)
    batches = [np.arange(i, min(i + 64, len(windows))) for i in range(0, len(windows), 64)]
    model.train()
    targets, steps, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < budget:
        batch = make_batch(windows, batches[steps % len(batches)], None)
        loss = model(batch.word_ids)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        targets += 2 * int((batch.lengths - 1).sum())
        steps += 1
    elapsed = time.perf_counter() - start
    return _ReferenceForEvaluation(model.eval()), {
        "targets": targets, "seconds": elapsed, "steps": steps, "epochs": steps / len(batches)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=240.0, help="seconds of training each")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=5, help="short interleaved rounds")
    parser.add_argument("--round-seconds", type=float, default=15.0)
    args = parser.parse_args()

    texts = load_ag_news(args.data_home, subset="test").data
    rng = np.random.default_rng(args.seed)
    held_out = set(rng.choice(len(texts), size=len(texts) // 20, replace=False).tolist())
    train_texts = [t for i, t in enumerate(texts) if i not in held_out]
    valid_texts = [t for i, t in enumerate(texts) if i in held_out]
    tokenize = TextTokenizer(lowercase=True, token_pattern=BILM_TOKEN_PATTERN)
    train_tokens, valid_tokens = tokenize(train_texts), tokenize(valid_texts)
    vocabulary = Vocabulary.build(train_tokens, min_count=2, specials=SPECIALS, unknown=UNK)

    reference, ref_stats = reference_loop(train_tokens, vocabulary, args.budget, args.seed)
    valid_windows = make_windows(valid_tokens, vocabulary, 64, False)
    # One window per batch: the reference flips padded batches, so no padding at all here.
    ref_ppl = evaluate_perplexity(reference, valid_windows, None, 1, False, "cpu")
    print(f"reference: {ref_stats['targets'] / ref_stats['seconds']:,.0f} targets/s, ppl {ref_ppl:.1f}",
          flush=True)

    bilm = BiLM(embedding_dim=DIM, hidden_dim=DIM, max_epochs=1000, patience=None,
                validation_fraction=0.0, max_time=args.budget, random_state=args.seed)
    bilm.fit(train_texts)
    assert bilm.vocabulary_.tokens == vocabulary.tokens
    ours_targets = sum(h["tokens_per_second"] * h["seconds"] for h in bilm.history_)
    ours_seconds = sum(h["seconds"] for h in bilm.history_)
    ours_ppl = bilm.perplexity(valid_texts)
    ours_tps, ref_tps = ours_targets / ours_seconds, ref_stats["targets"] / ref_stats["seconds"]
    print(f"elmofeat: {ours_tps:,.0f} targets/s, ppl {ours_ppl:.1f}", flush=True)

    rounds = []
    for round_ in range(args.rounds):
        _, stats = reference_loop(train_tokens, vocabulary, args.round_seconds, args.seed + round_)
        short = BiLM(embedding_dim=DIM, hidden_dim=DIM, max_epochs=1000, patience=None,
                     validation_fraction=0.0, max_time=args.round_seconds,
                     random_state=args.seed + round_).fit(train_texts)
        short_tps = (sum(h["tokens_per_second"] * h["seconds"] for h in short.history_)
                     / sum(h["seconds"] for h in short.history_))
        rounds.append({"reference": stats["targets"] / stats["seconds"], "elmofeat": short_tps,
                       "ratio": short_tps / (stats["targets"] / stats["seconds"])})
        print(f"round {round_ + 1}: {rounds[-1]}", flush=True)
    median_ratio = float(np.median([r["ratio"] for r in rounds])) if rounds else float("nan")

    rows = [
        ["reference loop (full softmax, fp32, cut at 35, batches in order)", f"{ref_tps:,.0f}",
         f"{ref_stats['targets']:,}", f"{ref_ppl:.1f}"],
        ["elmofeat BiLM defaults (adaptive softmax, bf16, bucketed)", f"{ours_tps:,.0f}",
         f"{ours_targets:,.0f}", f"{ours_ppl:.1f}"],
    ]
    ratio = ours_tps / ref_tps
    markdown = (
        "### biLM pretraining: elmofeat engine vs the reference loop\n\n"
        f"AG News 7,600-row partition, {len(train_texts):,} training / {len(valid_texts)} held-out "
        f"documents, vocabulary {len(vocabulary):,} (words seen twice + 4 specials), embedding "
        f"= hidden = {DIM}, 2 LSTM layers per direction, {args.budget:.0f} s of training each, "
        f"{torch.get_num_threads()} threads.\n\n"
        + markdown_table(["engine", "targets/s (both directions)", "targets trained on",
                          "held-out perplexity"], rows)
        + f"\n\nSpeed-up: **{ratio:.1f}x** (target >= 6, stretch 8); perplexity after the same "
        f"time: {ours_ppl:.1f} vs {ref_ppl:.1f}.\n"
    )
    if rounds:
        markdown += (
            f"\nInterleaved rounds ({args.rounds} x {args.round_seconds:.0f} s each, fresh models): "
            "speed-ups " + ", ".join(f"{r['ratio']:.1f}x" for r in rounds)
            + f", median **{median_ratio:.1f}x**.\n"
        )
    write_results("bilm_pretrain_speed", {
        "budget_seconds": args.budget, "vocabulary": len(vocabulary),
        "reference": {**ref_stats, "targets_per_second": ref_tps, "perplexity": ref_ppl},
        "elmofeat": {"targets_per_second": ours_tps, "perplexity": ours_ppl,
                     "history": bilm.history_},
        "ratio": ratio, "rounds": rounds, "median_round_ratio": median_ratio,
    }, markdown)


if __name__ == "__main__":
    main()
