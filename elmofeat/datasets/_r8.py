"""Reuters-21578 R8 (Cardoso-Cachopo's "all-terms" version of the ModApte split)."""

from __future__ import annotations

from pathlib import Path

from sklearn.utils import Bunch

from ._base import (RemoteFile, fetch_file, get_data_home, labelled_partitions,
                    missing_data_error)

FOLDER = "r8"
_BASE_URL = "https://www.cs.umb.edu/~smimarog/textmining/datasets/"
REMOTE_FILES = {
    "train": RemoteFile(
        "r8-train-all-terms.txt",
        _BASE_URL + "r8-train-all-terms.txt",
        "sha256:f2cebcc0203f9092db55fc11b98377a5c30407121b1d633583580e36d0668ed9",
    ),
    "test": RemoteFile(
        "r8-test-all-terms.txt",
        _BASE_URL + "r8-test-all-terms.txt",
        "sha256:2cda485b855244b8995a67b81edc691470059225776627d3c45545206f61a1b2",
    ),
}


def _read(path: Path) -> tuple[list[str], list[str]]:
    labels, texts = [], []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            label, sep, text = line.partition("\t")
            if not sep:
                raise ValueError(f"{path}:{lineno}: expected 'label<TAB>text'")
            labels.append(label)
            texts.append(text.strip())
    return labels, texts


def load_r8(data_home=None, subset="train", *, download_if_missing=False) -> Bunch:
    """Load the R8 subset of Reuters-21578 (8 classes, standard train/test split).

    Reads ``<data_home>/r8/r8-train-all-terms.txt`` and ``r8-test-all-terms.txt``
    (one document a line, ``label<TAB>text``; the text is already lower-cased and
    stripped of punctuation).

    Parameters
    ----------
    data_home : str or path-like, default=None
        See :func:`~elmofeat.datasets.get_data_home` (``$ELMOFEAT_DATA`` if unset).
    subset : {"train", "test", "all"}, default="train"
        5,485 training and 2,189 test documents; ``"all"`` is train then test.
    download_if_missing : bool, default=False
        Download missing files into ``<data_home>/r8/`` (checksums verified).

    Returns
    -------
    bunch : sklearn.utils.Bunch
        ``data`` (list of str), ``target`` (ndarray of int), ``target_names``
        (sorted label names; ``target`` indexes them), ``partition`` and ``DESCR``.

    Examples
    --------
    >>> from elmofeat.datasets import load_r8
    >>> r8 = load_r8(subset="test")
    >>> len(r8.data), len(r8.target_names)
    (2189, 8)
    """
    if subset not in ("train", "test", "all"):
        raise ValueError(f"subset must be 'train', 'test' or 'all', got {subset!r}")
    home = get_data_home(data_home)
    parts = ("train", "test") if subset == "all" else (subset,)
    paths = {part: home / FOLDER / REMOTE_FILES[part].filename for part in parts}
    for part, path in paths.items():
        if not path.is_file() and download_if_missing:
            fetch_file(REMOTE_FILES[part], path.parent, progress=True)
    missing = [path for path in paths.values() if not path.is_file()]
    if missing:
        raise missing_data_error(
            "R8",
            missing,
            "Get it with load_r8(download_if_missing=True), or put r8-train-all-terms.txt "
            "and r8-test-all-terms.txt in <data_home>/r8/.",
        )
    # Read every partition first so that the label ids are the same whatever the subset.
    read = {part: _read(path) for part, path in paths.items()}
    return labelled_partitions(
        read, "Reuters-21578 R8 (Cardoso-Cachopo, all-terms, ModApte split): 8 classes. "
              f"Partitions loaded: {', '.join(parts)} from {home}.")
