"""``elmofeat embed``: a saved BiLM or fitted vectorizer + texts -> features."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from .._files import atomic_path
from ._inputs import read_texts

FORMATS = (".npy", ".parquet")


def add_arguments(parser) -> None:
    parser.add_argument("model", help="a BiLM saved by `elmofeat pretrain` / BiLM.save, or a "
                        "fitted vectorizer or pipeline saved with joblib.dump (trusted files only: "
                        "joblib files are pickles)")
    parser.add_argument("input", help="text file (one document a line), CSV/TSV/Parquet file "
                        "(see --column) or dataset name")
    parser.add_argument("-o", "--output", required=True,
                        help="features file: .npy (float32 array) or .parquet (one column per feature)")
    parser.add_argument("--column", help="text column of a CSV/TSV/Parquet input (default: 'text')")
    parser.add_argument("--pooling", choices=["mean", "max", "meanmax"], default="mean",
                        help="with a BiLM: how token vectors become one document vector")
    parser.add_argument("--mix-weights", type=float, nargs="+", metavar="W",
                        help="with a BiLM: frozen weight of each layer (default: uniform)")
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="with a BiLM: parallel workers for the transform (default: 1)")
    parser.add_argument("--data-home", help="dataset folder for dataset names")


def load_model(path: Path, args, texts):
    """A fitted transformer of texts: the joblib file's, or a frozen-mix ElmoVectorizer
    around a saved BiLM (fitting it learns nothing from ``texts``)."""
    if zipfile.is_zipfile(path):  # BiLM.save writes a torch zip archive
        from ..bilm import BiLM
        from ..elmo import ElmoVectorizer

        bilm = BiLM.load(path)
        vectorizer = ElmoVectorizer(bilm, layer_mix="frozen", mix_weights=args.mix_weights,
                                    pooling=args.pooling, n_jobs=args.n_jobs, cache_dir=None)
        return vectorizer.fit(texts)
    import joblib

    try:
        model = joblib.load(path)
    except Exception as exc:
        raise ValueError(f"{path} is neither an elmofeat BiLM file nor a joblib file: {exc}") from exc
    if not hasattr(model, "transform"):
        raise TypeError(f"{path} holds a {type(model).__name__}, which has no transform method")
    return model


def run(args) -> int:
    output = Path(args.output)
    if output.suffix.lower() not in FORMATS:
        raise ValueError(f"--output must end in {' or '.join(FORMATS)}, got {output.name}")
    if not Path(args.model).is_file():
        raise FileNotFoundError(f"no model file at {args.model}")
    texts = read_texts(args.input, args.column, args.data_home)
    model = load_model(Path(args.model), args, texts)
    features = model.transform(texts)
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
