"""``elmofeat pretrain``: texts -> a saved BiLM."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

from ._inputs import positive_int, read_texts, threads


def add_arguments(parser) -> None:
    parser.add_argument("input", help="text file (one document a line), CSV/TSV/Parquet file "
                        "(see --column) or dataset name (ag_news, r8, r8:train, ...)")
    parser.add_argument("-o", "--output", required=True, help="where to save the BiLM (e.g. bilm.pt)")
    parser.add_argument("--column", help="text column of a CSV/TSV/Parquet input (default: 'text')")
    parser.add_argument("--token-layer", choices=["word", "char"], default="word")
    parser.add_argument("--embedding-dim", type=positive_int, default=256,
                        help="width of the token layer; each layer representation is twice "
                        "this (default: 256)")
    parser.add_argument("--hidden-dim", type=positive_int, default=256,
                        help="LSTM width per direction (default: 256)")
    parser.add_argument("--epochs", type=positive_int, default=5, help="most epochs (early "
                        "stopping on a held-out 5%%; default: 5, as BiLM)")
    parser.add_argument("--batch-size", type=positive_int, default=64,
                        help="windows per training step (default: 64)")
    parser.add_argument("--min-count", type=positive_int, default=2,
                        help="words seen fewer times become <unk> in the output (default: 2)")
    parser.add_argument("--glove", metavar="PATH", help="initialise the word embedding from a "
                        "GloVe or word2vec text file (optionally .gz)")
    parser.add_argument("--checkpoint-dir", help="write checkpoints here; running the same "
                        "command again resumes from the last one")
    parser.add_argument("--checkpoint-every", type=positive_int, metavar="STEPS",
                        help="also checkpoint every this many steps (default: each epoch)")
    parser.add_argument("--threads", type=threads, metavar="N|auto",
                        help="torch threads (default: torch's setting, reproducible); 'auto' "
                        "follows the cores other processes leave free: much faster on a busy "
                        "machine, but the weights then depend on its load")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--data-home", help="dataset folder for dataset names "
                        "(default: $ELMOFEAT_DATA or ~/elmofeat_data)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args) -> int:
    from ..bilm import BiLM

    texts = read_texts(args.input, args.column, args.data_home)
    if args.glove is not None:
        from pathlib import Path

        if not Path(args.glove).is_file():
            raise FileNotFoundError(f"--glove: no such file: {args.glove}")
    bilm = BiLM(token_layer=args.token_layer, embedding_dim=args.embedding_dim,
                hidden_dim=args.hidden_dim, max_epochs=args.epochs, batch_size=args.batch_size,
                min_count=args.min_count, pretrained_vectors=args.glove,
                checkpoint_dir=args.checkpoint_dir, checkpoint_every=args.checkpoint_every,
                n_threads=args.threads, random_state=args.seed, verbose=not args.quiet)
    print(f"pretraining on {len(texts):,} documents from {args.input}", flush=True)
    start = time.perf_counter()
    try:
        bilm.fit(texts)
    except KeyboardInterrupt:
        print(_interrupted(args), file=sys.stderr)
        return 130
    bilm.save(args.output)
    last = bilm.history_[-1]
    perplexity = last["validation_perplexity"] or last["train_perplexity"]
    print(f"saved {args.output}: {bilm.n_epochs_} epochs in {time.perf_counter() - start:.0f} s, "
          f"vocabulary {len(bilm.vocabulary_):,}, "
          f"{'validation' if last['validation_perplexity'] else 'training'} perplexity "
          f"{perplexity:.1f}")
    return 0


def _interrupted(args) -> str:
    """What an interrupted pretraining leaves, and how to go on."""
    command = "elmofeat " + shlex.join(args.argv)
    if args.checkpoint_dir and (Path(args.checkpoint_dir) / "checkpoint.pt").is_file():
        return (f"elmofeat pretrain: interrupted; the last checkpoint is in {args.checkpoint_dir}: "
                f"run the same command to resume from it: {command}")
    if args.checkpoint_dir:
        return ("elmofeat pretrain: interrupted before the first checkpoint; nothing saved "
                f"(run the same command to start again: {command})")
    return ("elmofeat pretrain: interrupted; nothing saved. Add --checkpoint-dir DIR to be "
            "able to resume an interrupted run")
