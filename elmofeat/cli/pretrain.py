"""``elmofeat pretrain``: texts -> a saved BiLM."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

from ..models.recipes import RECIPES
from ._inputs import (positive_int_argument, positive_seconds_argument, read_texts,
                      seed_argument, threads)
from ._outputs import check_output_file, check_output_folder, refuse_nested


def add_arguments(parser) -> None:
    parser.add_argument("input", nargs="*",
                        help="text file (one document a line), CSV/TSV/Parquet file (see "
                        "--column) or dataset name (ag_news, r8, r8:train, ...), read into "
                        "memory; or folders, glob patterns, .gz files or several files, "
                        "streamed (never held in memory: a corpus of any size). Optional "
                        "with --recipe")
    parser.add_argument("-o", "--output", required=True,
                        help="where to save the BiLM: a file (e.g. bilm.pt), or with "
                        "--pretrained a model folder for BiLM.from_pretrained")
    parser.add_argument("--recipe", choices=sorted(RECIPES),
                        help="pretrain a model elmofeat ships, as it was made: its corpus "
                        "(from --data-home) and configuration (other options override it)")
    parser.add_argument("--pretrained", action="store_true",
                        help="save a pretrained-model folder (16-bit weights, config.json) "
                        "instead of one file")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing --output file, or with --pretrained write "
                        "into an output folder that holds files already (its config.json, "
                        "bilm.pt and README.md are replaced); without it either is refused "
                        "before any work. An input is never replaced")
    parser.add_argument("--column", help="text column of a CSV/TSV/Parquet input (default: 'text')")
    parser.add_argument("--token-layer", choices=["word", "char"], default=None,
                        help="(default: word)")
    parser.add_argument("--embedding-dim", type=positive_int_argument, default=None,
                        help="width of the token layer; each layer representation is twice "
                        "this (default: 256)")
    parser.add_argument("--hidden-dim", type=positive_int_argument, default=None,
                        help="LSTM width per direction (default: 256)")
    parser.add_argument("--epochs", type=positive_int_argument, default=None, help="most epochs (early "
                        "stopping on a held-out 5%%; default: 5, as BiLM)")
    parser.add_argument("--batch-size", type=positive_int_argument, default=None,
                        help="windows per training step (default: 64)")
    parser.add_argument("--min-count", type=positive_int_argument, default=None,
                        help="words seen fewer times become <unk> in the output (default: 2)")
    parser.add_argument("--glove", metavar="PATH", help="initialise the word embedding from a "
                        "GloVe or word2vec text file (optionally .gz)")
    parser.add_argument("--pretrained-words", type=positive_int_argument, metavar="N",
                        help="with --glove: also read the file's first N words that the "
                        "corpus lacks (read, not predicted)")
    parser.add_argument("--max-time", type=positive_seconds_argument, metavar="SECONDS",
                        help="stop pretraining after this long (the last epoch is validated)")
    parser.add_argument("--checkpoint-dir", help="write checkpoints here; running the same "
                        "command again resumes from the last one")
    parser.add_argument("--checkpoint-every", type=positive_int_argument, metavar="STEPS",
                        help="also checkpoint every this many steps (default: each epoch)")
    parser.add_argument("--threads", type=threads, metavar="N|auto",
                        help="torch threads (default: torch's setting, reproducible); 'auto' "
                        "follows the cores other processes leave free: much faster on a busy "
                        "machine, but the weights then depend on its load")
    parser.add_argument("--seed", type=seed_argument, default=None,
                        help="random seed (default: 0, or the recipe's)")
    parser.add_argument("--data-home", help="dataset folder for dataset names "
                        "(default: $ELMOFEAT_DATA or ~/elmofeat_data)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


_OPTIONS = {"token_layer": "token_layer", "embedding_dim": "embedding_dim",
            "hidden_dim": "hidden_dim", "epochs": "max_epochs", "batch_size": "batch_size",
            "min_count": "min_count", "glove": "pretrained_vectors",
            "pretrained_words": "pretrained_words", "max_time": "max_time"}


def _texts(args):
    """The documents (a list) or the streamed corpus (TextFiles), and how to name them."""
    from ..bilm.corpus import TextFiles

    inputs = args.input
    if args.recipe is not None and not inputs:
        return RECIPES[args.recipe].corpus(args.data_home), f"the {args.recipe} corpus"
    if not inputs:
        raise ValueError("give the texts to pretrain on (or --recipe)")
    single = Path(inputs[0])
    streamed = len(inputs) > 1 or single.is_dir() or single.suffix == ".gz" or (
        not single.exists() and any(c in inputs[0] for c in "*?["))
    if streamed:
        if args.column is not None:
            raise ValueError("--column applies to one CSV, TSV or Parquet file")
        corpus = TextFiles(inputs)
        return corpus, f"{len(corpus.files)} files (streamed)"
    return read_texts(inputs[0], args.column, args.data_home), inputs[0]


def run(args) -> int:
    from ..bilm import BiLM

    # Checked before the corpus is read: the model folder (--pretrained) or file, against
    # every input of the command (texts, word vectors, checkpoints it resumes from).
    inputs = [*args.input, *([args.glove] if args.glove else [])]
    if args.pretrained:
        check_output_folder(args.output, [*inputs, *filter(None, [args.checkpoint_dir])],
                            "the model", replace=args.force)
    else:
        check_output_file(args.output, [*inputs, *filter(None, [args.checkpoint_dir])],
                          "the model", replace=args.force)
    if args.checkpoint_dir:
        check_output_folder(args.checkpoint_dir, inputs, "checkpoints",
                            option="--checkpoint-dir")
        refuse_nested(("--output", args.output), ("--checkpoint-dir", args.checkpoint_dir))
    params = dict(RECIPES[args.recipe].params(args.data_home)) if args.recipe else {}
    for option, param in _OPTIONS.items():
        if getattr(args, option) is not None:
            params[param] = getattr(args, option)
    if args.recipe and args.glove is None:  # the recipe's own files: say how to make one
        RECIPES[args.recipe].check_files(params)
    vectors = params.get("pretrained_vectors")
    if isinstance(vectors, (str, Path)) and not Path(vectors).is_file():
        raise FileNotFoundError(f"--glove: no such file: {vectors}")
    texts, described = _texts(args)
    if args.seed is not None or "random_state" not in params:
        params["random_state"] = 0 if args.seed is None else args.seed
    bilm = BiLM(**params, checkpoint_dir=args.checkpoint_dir,
                checkpoint_every=args.checkpoint_every, n_threads=args.threads,
                verbose=not args.quiet)
    count = f"{len(texts):,} documents" if isinstance(texts, list) else described
    print(f"pretraining on {count}" + (f" from {described}" if isinstance(texts, list) else ""),
          flush=True)
    start = time.perf_counter()
    try:
        bilm.fit(texts)
    except KeyboardInterrupt:
        print(_interrupted(args), file=sys.stderr)
        return 130
    if args.pretrained:  # checked above, before the work: --force or a new folder
        bilm.save_pretrained(args.output, overwrite=True)
    else:
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
