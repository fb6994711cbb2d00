"""The ``elmofeat`` command line: ``pretrain``, ``embed``, ``benchmark`` and ``download``.

Errors the user can fix (a missing file, a bad value) end the command with the whole
message on standard error (:func:`error_message`) and exit status 1; argument mistakes
exit with status 2.

The command owns its process, so it opts in to the process-level settings that a library
leaves to its user (:func:`entry_point`): a short OpenMP spin and malloc tuning.
"""

from __future__ import annotations

import argparse
import sys

from . import benchmark, download, embed, pretrain

COMMANDS = {
    "pretrain": (pretrain, "pretrain a biLM on texts and save it",
                 "Pretrain an ELMo-style biLM on texts and save it (BiLM.save format). "
                 "With --checkpoint-dir, running the same command again resumes."),
    "embed": (embed, "turn texts into document features with a saved model",
              "Document features from a saved BiLM (a layer mix that needs no labels, "
              "--layer-mix; pooled; layers divided by the spread the model measured on its "
              "pretraining texts) or a fitted vectorizer / pipeline saved with "
              "elmofeat.dump, written as .npy or .parquet. "
              "A document's features do not depend on the other documents of the input; an "
              "empty input gives an empty (0 x n_features) result."),
    "benchmark": (benchmark, "run the task suite (TF-IDF, GloVe, SVD, skip-gram, ELMo, "
                  "hybrid) and write a report",
                  "The suite: AG News, R8, CR, MPQA and 20 Newsgroups (a seeded sample of its "
                  "standard split); TF-IDF, GloVe and all-MiniLM-L6-v2 anchors, SVD, "
                  "skip-gram, ELMo (every layer mix; the MLP mix on AG News only, unless "
                  "--methods names it), the shipped en-base and the TF-IDF + ELMo hybrid, "
                  "each with its defaults + LogisticRegression; every biLM is pretrained on "
                  "the training part of each split only. Writes results.json, report.md and "
                  "PNG figures to --output."),
    "download": (download, "fetch the datasets the suite reads into the data home",
                 "Fetch datasets into the data home from their public sources (checksums "
                 "pinned; a cut transfer resumes; files already there are left as they "
                 "are). Without names: what `elmofeat benchmark` reads."),
}


class _Parser(argparse.ArgumentParser):
    """Argument errors as one line (plus the exit status 2 argparse uses)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = _Parser(prog="elmofeat",
                     description="Contextual and word-vector text features for scikit-learn.")
    parser.add_argument("--version", action="version", version=f"elmofeat {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=_Parser)
    for name, (module, summary, description) in COMMANDS.items():
        command = commands.add_parser(name, help=summary, description=description)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    return parser


def error_message(command: str, exc: BaseException) -> str:
    """The one way every command reports an error the user can fix: the whole message
    (the paths a loader tried, the fix it suggests), its lines after the first indented."""
    lines = (str(exc) or type(exc).__name__).splitlines() or [type(exc).__name__]
    return "\n".join([f"elmofeat {command}: error: {lines[0]}", *(f"  {line}" for line in lines[1:])])


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        return args.run(args)
    except (OSError, ValueError, TypeError, ImportError, FloatingPointError) as exc:
        print(error_message(args.command, exc), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"elmofeat {args.command}: interrupted", file=sys.stderr)
        return 130


def entry_point() -> int:
    """The ``elmofeat`` program: :func:`main` with the process-level opt-ins made.

    A shorter OpenMP spin (before torch loads; a ``GOMP_SPINCOUNT`` or
    ``OMP_WAIT_POLICY`` of the user wins) and large freed blocks kept in glibc's heap
    while fitting (``set_config(malloc_tuning=True)``). :func:`main`, which tests and
    other programs call, makes neither.
    """
    from .. import limit_openmp_spinning, set_config

    limit_openmp_spinning()
    set_config(malloc_tuning=True)
    return main()
