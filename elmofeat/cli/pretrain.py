"""``elmofeat pretrain``: texts -> a saved BiLM."""

from __future__ import annotations

import time

from ._inputs import read_texts


def add_arguments(parser) -> None:
    parser.add_argument("input", help="text file (one document a line), CSV/TSV/Parquet file "
                        "(see --column) or dataset name (ag_news, r8, r8:train, ...)")
    parser.add_argument("-o", "--output", required=True, help="where to save the BiLM (e.g. bilm.pt)")
    parser.add_argument("--column", help="text column of a CSV/TSV/Parquet input (default: 'text')")
    parser.add_argument("--token-layer", choices=["word", "char"], default="word")
    parser.add_argument("--embedding-dim", type=int, default=256)
    parser.add_argument("--hidden-dim", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=10, help="most epochs (early stopping on a "
                        "held-out 5%%; default: 10)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--min-count", type=int, default=2,
                        help="words seen fewer times become <unk> in the output (default: 2)")
    parser.add_argument("--glove", metavar="PATH", help="initialise the word embedding from a "
                        "GloVe or word2vec text file (optionally .gz)")
    parser.add_argument("--checkpoint-dir", help="write checkpoints here; running the same "
                        "command again resumes from the last one")
    parser.add_argument("--checkpoint-every", type=int, metavar="STEPS",
                        help="also checkpoint every this many steps (default: each epoch)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's setting)")
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
    bilm.fit(texts)
    bilm.save(args.output)
    last = bilm.history_[-1]
    perplexity = last["validation_perplexity"] or last["train_perplexity"]
    print(f"saved {args.output}: {bilm.n_epochs_} epochs in {time.perf_counter() - start:.0f} s, "
          f"vocabulary {len(bilm.vocabulary_):,}, "
          f"{'validation' if last['validation_perplexity'] else 'training'} perplexity "
          f"{perplexity:.1f}")
    return 0
