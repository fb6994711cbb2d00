"""A file format for fitted estimators that loads without running code.

``joblib.dump`` writes a pickle: loading one runs whatever code the file names, so a
pickle is only as safe as its author. :func:`dump` writes a `skops
<https://skops.readthedocs.io>`_ file instead: the estimator's state as JSON plus NumPy
arrays, rebuilt on :func:`load` only from types on an allow-list (scikit-learn's and
NumPy's, which skops trusts, plus elmofeat's own, listed in :data:`TRUSTED_TYPES`, and
the fitted types of every registered layer mix, :mod:`elmofeat.mixes`). A
file that names any other type is refused before anything in it is built.

A fitted ``BiLM`` keeps its own weights-only format (:meth:`elmofeat.BiLM.save`); this
module covers everything else: fitted vectorizers and pipelines that hold them.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from ._files import atomic_path
from ._paths import refuse_package_models

# The types, beyond skops' defaults, that an elmofeat file may contain. Each rebuilds
# from plain data (its __setstate__ checks version stamps and rebuilds torch modules
# from arrays); none runs code named by the file.
TRUSTED_TYPES = (
    "elmofeat.bilm.estimator.BiLM",
    "elmofeat.elmo.classifier.ElmoClassifier",
    "elmofeat.elmo.vectorizer.ElmoVectorizer",
    "elmofeat.elmo.bag.ContextualBag",
    "elmofeat.hybrid.FeatureUnion",
    "elmofeat.stacking.StackingVectorizer",
    "elmofeat.wordvectors.svd.SVDVectorizer",
    "elmofeat.wordvectors.skipgram.SkipGramVectorizer",
    "elmofeat.wordvectors.pretrained.WordVectorsVectorizer",
    "elmofeat.text.Vocabulary",
    "gensim.models.keyedvectors.KeyedVectors",
)


def _skops():
    try:
        import skops.io
    except ImportError as exc:  # a dependency: missing, or too old for this scikit-learn
        raise ImportError(f"elmofeat.dump and elmofeat.load need skops (>= 0.11 with "
                          f"scikit-learn >= 1.6), which does not import here: {exc}") from exc
    return skops.io


def dump(estimator, path) -> Path:
    """Save a fitted estimator (a vectorizer, or a pipeline holding one) to ``path``.

    The file loads with :func:`load` without running code from it (unlike a pickle);
    an existing file at ``path`` is replaced only once the new one is complete.

    Parameters
    ----------
    estimator : object
        Any scikit-learn estimator made of scikit-learn, NumPy and elmofeat types.
    path : str or path
        Conventionally ending in ``.skops``.

    Returns
    -------
    path : Path

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import elmofeat
    >>> texts = ["the cat sat on the mat", "the dog sat on the log"] * 10
    >>> vec = elmofeat.SVDVectorizer(n_components=2, min_count=1, random_state=0).fit(texts)
    >>> path = elmofeat.dump(vec, pathlib.Path(tempfile.mkdtemp()) / "svd.skops")
    >>> bool((elmofeat.load(path).transform(texts) == vec.transform(texts)).all())
    True
    """
    sio = _skops()
    path = Path(path)
    refuse_package_models(path)
    with atomic_path(path) as temporary:
        sio.dump(estimator, temporary)
    return path


def load(path, trusted=()):
    """Load an estimator written by :func:`dump`, building only trusted types.

    Parameters
    ----------
    path : str or path
    trusted : sequence of str, default=()
        Further type names (``"module.Class"``) you trust, beyond scikit-learn's, NumPy's
        :data:`TRUSTED_TYPES` and the registered mixes' fitted types.

    Returns
    -------
    estimator : object

    Raises
    ------
    ValueError
        If the file is not an elmofeat/skops file, or names a type that is not trusted
        (nothing in it has been built then).

    Examples
    --------
    >>> import os, tempfile, pathlib
    >>> from sklearn.preprocessing import FunctionTransformer
    >>> import elmofeat
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "evil.skops"
    >>> _ = elmofeat.dump(FunctionTransformer(os.system), path)
    >>> elmofeat.load(path)
    Traceback (most recent call last):
    ...
    ValueError: ... holds types that elmofeat does not trust: ...system. Nothing was loaded. ...
    """
    sio = _skops()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no file at {path}")
    if not is_skops_file(path):
        raise ValueError(f"{path} is not a file written by elmofeat.dump (a skops file)")
    from .mixes import trusted_type_names

    allowed = {*TRUSTED_TYPES, *trusted_type_names(), *trusted}
    try:
        untrusted = [name for name in sio.get_untrusted_types(file=path) if name not in allowed]
    except Exception as exc:  # a damaged archive or schema
        raise ValueError(f"{path} is damaged: {exc}") from exc
    if untrusted:
        raise ValueError(
            f"{path} holds types that elmofeat does not trust: {', '.join(sorted(untrusted))}. "
            "Nothing was loaded. If you trust the file's author, pass them as "
            "load(path, trusted=[...])")
    try:
        return sio.load(path, trusted=sorted(allowed))
    except Exception as exc:
        raise ValueError(f"{path} could not be loaded: {exc}") from exc


def is_skops_file(path) -> bool:
    """Whether ``path`` is a skops archive (a zip with a ``schema.json``)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return "schema.json" in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return False
