"""``elmofeat embed``: a saved BiLM or fitted vectorizer + texts -> features."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import numpy as np

from .._files import atomic_path
from ..mixes import DEFAULT_LAYER_MIX, get_mix, mix_names
from ._inputs import n_jobs_argument, read_texts
from ._outputs import check_output_file

FORMATS = (".npy", ".parquet")


def _label_free_mixes() -> list[str]:
    """The registered mixes that need no labels: the ones ``embed`` can apply."""
    return [name for name in mix_names() if not get_mix(name).needs_labels]


def add_arguments(parser) -> None:
    parser.add_argument("model", help="a pretrained model's name (en-base, en-distil, en-small) or folder, a BiLM "
                        "saved by `elmofeat pretrain` / BiLM.save, or a "
                        "fitted vectorizer or pipeline saved with elmofeat.dump (both load without "
                        "running code); a joblib/pickle file only with --trust-pickle")
    parser.add_argument("input", help="text file (one document a line), CSV/TSV/Parquet or "
                        "JSON Lines file (see --column) or dataset name")
    parser.add_argument("-o", "--output", required=True,
                        help="features file: .npy (float32 array) or .parquet (one column per "
                        "feature); an existing file is refused unless --force")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing --output file (an input never)")
    parser.add_argument("--column", help="text column (or JSON key) of a CSV/TSV/Parquet/JSON "
                        "Lines input (default: 'text')")
    # None: not given. A fitted vectorizer's own settings define its features, so these
    # are refused with one (rather than dropped).
    parser.add_argument("--pooling", choices=["mean", "max", "meanmax"], default=None,
                        help="with a BiLM only: how token vectors become one document "
                        "vector (default: mean)")
    parser.add_argument("--layer-mix", choices=_label_free_mixes(), default=None,
                        help="with a BiLM only: how a token's layers become one vector, a mix "
                        f"that needs no labels (default: {DEFAULT_LAYER_MIX}, as "
                        "ElmoVectorizer's)")
    parser.add_argument("--mix-weights", type=float, nargs="+", metavar="W",
                        help="with a BiLM only: fixed weight of each layer (default: uniform)")
    parser.add_argument("--n-jobs", type=n_jobs_argument, default=None,
                        help="parallel workers for the transform of every ElmoVectorizer "
                        "(default: 1; -1: every CPU)")
    parser.add_argument("--data-home", help="dataset folder for dataset names")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="allow a joblib/pickle model file: loading a pickle runs code it "
                        "names, so only for files you made yourself")


def load_model(path: Path, args, texts):
    """A fitted transformer of texts: the elmofeat.dump (or, trusted, joblib) file's, or
    an ElmoVectorizer with a mix that needs no labels around a saved BiLM."""
    from .._persistence import is_skops_file, load

    if path.is_file() and is_skops_file(path):
        model = load(path)
    elif not path.is_file() or zipfile.is_zipfile(path):  # a name, a folder, BiLM.save's zip
        from ..bilm import BiLM
        from ..elmo.vectorizer import ElmoVectorizer

        # The name as typed: a registered name that is also a local folder resolves as in
        # Python (the local model, with a warning), and './en-base' stays a path.
        bilm = BiLM.from_pretrained(args.model)
        # The layer scales come from the model, never from the texts being embedded:
        # features of two calls (a query, a corpus) must be comparable.
        scales = "bilm"
        if bilm.layer_scales_ is None:
            scales = False
            print(f"{path} was saved before biLMs measured their layers' spread: its layers "
                  "are mixed unscaled (fit the biLM again, or save a fitted ElmoVectorizer "
                  "with elmofeat.dump, for scaled layers)", file=sys.stderr, flush=True)
        # No contextual bag: its codebook would be learned from texts, and a model file
        # embeds without any.
        vectorizer = ElmoVectorizer(bilm, layer_mix=args.layer_mix or DEFAULT_LAYER_MIX,
                                    mix_weights=args.mix_weights, scale_layers=scales,
                                    pooling=args.pooling or "mean", bag_size=None,
                                    n_jobs=args.n_jobs, cache_dir=None, verbose=not args.quiet)
        # Its mix, with fixed weights and the model's scales, learns nothing from texts.
        return vectorizer.fit([""])
    elif not args.trust_pickle:
        # Checked before the file is opened as a pickle: unpickling runs code.
        raise ValueError(
            f"{path} is not an elmofeat model file (BiLM.save or elmofeat.dump). If it is a "
            "joblib/pickle file that you made yourself, pass --trust-pickle: loading a pickle "
            "runs any code it names. Better: save the model with elmofeat.dump(model, path)")
    else:
        import joblib

        try:
            model = joblib.load(path)
        except Exception as exc:
            raise ValueError(f"{path} is neither an elmofeat model file nor a joblib file: "
                             f"{exc}") from exc
    given = [option for option, value in (("--pooling", args.pooling),
                                          ("--layer-mix", args.layer_mix),
                                          ("--mix-weights", args.mix_weights))
             if value is not None]
    if given:
        raise ValueError(f"{' and '.join(given)} apply to a BiLM, but {path} holds a fitted "
                         f"{type(model).__name__}, whose own settings define its features: "
                         "drop the option, or set it on the vectorizer before saving it")
    from sklearn.pipeline import Pipeline

    if isinstance(model, Pipeline) and not hasattr(model, "transform") and len(model) > 1:
        # A pipeline ending in a classifier: its features are what comes before it.
        features = model[:-1]
        if hasattr(features, "transform"):
            print(f"using the features of the pipeline in {path} (every step before its final "
                  f"{type(model[-1]).__name__})", flush=True)
            return features
    if not hasattr(model, "transform"):
        raise TypeError(f"{path} holds a {type(model).__name__}, which has no transform method: "
                        "save a fitted vectorizer, or a Pipeline whose steps (all, or all but a "
                        "final classifier) transform texts")
    return model


def run(args) -> int:
    output = Path(args.output)
    if output.suffix.lower() not in FORMATS:
        raise ValueError(f"--output must end in {' or '.join(FORMATS)}, got {output.name}")
    check_output_file(output, [args.input, args.model], "the features", replace=args.force)
    if output.suffix.lower() == ".parquet":
        check_parquet_engine()  # before the documents are embedded, not after
    from ..bilm import hub

    if not Path(args.model).exists() and args.model not in hub.REGISTRY:
        raise FileNotFoundError(f"no model file or folder at {args.model}, and no pretrained "
                                f"model of that name ({', '.join(sorted(hub.REGISTRY))})")
    texts = read_texts(args.input, args.column, args.data_home)
    model = load_model(Path(args.model), args, texts)
    for vectorizer in _elmo_vectorizers(model):
        # Run settings only: the features stay the saved vectorizer's.
        if not args.quiet:  # a loaded model's own setting is off: library calls are quiet
            vectorizer.verbose = True
        if args.n_jobs is not None:
            vectorizer.n_jobs = args.n_jobs
    try:
        features = model.transform(texts)
    except (ValueError, TypeError) as exc:
        first = _first_step(model)
        if _takes_text(first):
            raise
        # Another library's words ("could not convert string to float") would not say
        # what is wrong: the model does not read texts.
        raise ValueError(f"{args.model} holds a {type(model).__name__} whose first step, "
                         f"{type(first).__name__}, does not take texts ({exc}): embed needs a "
                         "text vectorizer, or a pipeline that starts with one") from None
    if hasattr(features, "toarray"):
        features = features.toarray()
    features = np.asarray(features, dtype=np.float32)
    with atomic_path(output) as temporary:
        if output.suffix.lower() == ".npy":
            with open(temporary, "wb") as handle:
                np.save(handle, features)
        else:
            import pandas as pd

            try:
                names = [str(n) for n in model.get_feature_names_out()]
            except (AttributeError, ValueError):
                names = [f"feature{i}" for i in range(features.shape[1])]
            pd.DataFrame(features, columns=names).to_parquet(temporary, index=False)
    print(f"wrote {output}: {features.shape[0]:,} documents x {features.shape[1]:,} features")
    return 0


def check_parquet_engine() -> None:
    """pandas writes Parquet with pyarrow or fastparquet: one must be installed."""
    import importlib.util

    if not any(importlib.util.find_spec(engine) for engine in ("pyarrow", "fastparquet")):
        raise ImportError("--output .parquet needs pyarrow (or fastparquet), which is not "
                          "installed: pip install 'elmofeat[parquet]', or write .npy")


def _elmo_vectorizers(model):
    """Every ElmoVectorizer in ``model`` (itself, or a step of a pipeline)."""
    from ..elmo.vectorizer import ElmoVectorizer

    for name, value in [("", model), *model.get_params(deep=True).items()]:
        if isinstance(value, ElmoVectorizer):
            yield value


def _first_step(model):
    from sklearn.pipeline import Pipeline

    while isinstance(model, Pipeline):
        model = model.steps[0][1]
    return model


def _takes_text(estimator) -> bool:
    """Whether ``estimator`` declares that it reads strings (scikit-learn's tags)."""
    from sklearn.utils import get_tags

    try:
        return bool(get_tags(estimator).input_tags.string)
    except Exception:  # an estimator without tags: take it at its word
        return True
