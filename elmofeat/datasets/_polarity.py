"""Sentence polarity sets kept as ``<name>.pos`` / ``<name>.neg`` (one text a line): CR and MPQA.

Both come without a fixed train/test split; the usual protocol (SentEval and the papers
it follows) is stratified 10-fold cross-validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._base import RemoteFile, fetch_file, get_data_home, missing_data_error

TARGET_NAMES = ["negative", "positive"]
_BASE_URL = "https://raw.githubusercontent.com/harvardnlp/sent-conv-torch/master/data/"


@dataclass(frozen=True)
class PolaritySet:
    title: str
    folder: str
    stem: str
    checksums: dict  # "pos" / "neg" -> "sha256:<hex>"
    description: str

    def remote(self, side: str) -> RemoteFile:
        name = f"{self.stem}.{side}"
        return RemoteFile(name, _BASE_URL + name, self.checksums[side])


CR = PolaritySet(
    "CR", "cr", "custrev",
    {"pos": "sha256:15eeb0b9424043bb3755488e2d8ed97bdaeba464a5c230f213bad075125d2192",
     "neg": "sha256:8f29d7fa39f9862764b71f36b193f0674e0056287ffc5bf170edf6db42cc8f83"},
    "Customer reviews of products (Hu & Liu 2004): sentence-level sentiment, "
    "tokenised and lower-cased.",
)
MPQA = PolaritySet(
    "MPQA", "mpqa", "mpqa",
    {"pos": "sha256:f4aaafdd63c439fd2d056149f3b5d200416dabb200a8b7d8f4bf9903981ff8a5",
     "neg": "sha256:02e193d98c7715bc6200bb23dc6d2903482bd80c0432c53c3f3738c636df3f72"},
    "MPQA opinion polarity (Wiebe et al. 2005): short phrases from news, positive or "
    "negative opinion.",
)


def _read_lines(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it starts no new one
    return [line.rstrip("\r").strip() for line in lines]


def load_polarity(dataset: PolaritySet, data_home=None, *, download_if_missing=False) -> Bunch:
    """Load a ``.pos`` / ``.neg`` polarity set from ``<data_home>/<folder>/``."""
    home = get_data_home(data_home)
    folder = home / dataset.folder
    paths = {side: folder / dataset.remote(side).filename for side in ("pos", "neg")}
    for side, path in paths.items():
        if not path.is_file() and download_if_missing:
            fetch_file(dataset.remote(side), folder, progress=True)
    missing = [path for path in paths.values() if not path.is_file()]
    if missing:
        raise missing_data_error(
            dataset.title, missing,
            f"Get it with load_{dataset.folder}(download_if_missing=True), or put "
            f"{dataset.stem}.pos and {dataset.stem}.neg in <data_home>/{dataset.folder}/.",
        )
    positive, negative = _read_lines(paths["pos"]), _read_lines(paths["neg"])
    return Bunch(
        data=positive + negative,
        target=np.array([1] * len(positive) + [0] * len(negative), dtype=np.int64),
        target_names=list(TARGET_NAMES),
        DESCR=(f"{dataset.description} {len(positive):,} positive and {len(negative):,} "
               f"negative texts from {folder}. No fixed split: use stratified 10-fold "
               "cross-validation."),
    )


def load_cr(data_home=None, *, download_if_missing=False) -> Bunch:
    """Load CR, product-review sentences labelled positive or negative (Hu & Liu 2004).

    Reads ``<data_home>/cr/custrev.pos`` and ``custrev.neg`` (one tokenised,
    lower-cased sentence a line). Every line is a document, blank lines included (as
    empty strings), so the row count is the standard 3,775 used in the literature.

    Parameters
    ----------
    data_home : str or path-like, default=None
        See :func:`~elmofeat.datasets.get_data_home` (``$ELMOFEAT_DATA`` if unset).
    download_if_missing : bool, default=False
        Download missing files into ``<data_home>/cr/`` (checksums verified).

    Returns
    -------
    bunch : sklearn.utils.Bunch
        ``data`` (list of str, positives first), ``target`` (ndarray of int, 1 =
        positive), ``target_names`` (``["negative", "positive"]``) and ``DESCR``.

    Examples
    --------
    >>> from elmofeat.datasets import load_cr
    >>> cr = load_cr()
    >>> len(cr.data), cr.target_names, int(cr.target.sum())
    (3775, ['negative', 'positive'], 2407)
    """
    return load_polarity(CR, data_home, download_if_missing=download_if_missing)


def load_mpqa(data_home=None, *, download_if_missing=False) -> Bunch:
    """Load MPQA opinion polarity: short news phrases labelled positive or negative.

    Reads ``<data_home>/mpqa/mpqa.pos`` and ``mpqa.neg`` (one phrase of about three
    words a line). Every line is a document, blank lines included (as empty strings),
    so the row count is the standard 10,606.

    Parameters
    ----------
    data_home : str or path-like, default=None
        See :func:`~elmofeat.datasets.get_data_home` (``$ELMOFEAT_DATA`` if unset).
    download_if_missing : bool, default=False
        Download missing files into ``<data_home>/mpqa/`` (checksums verified).

    Returns
    -------
    bunch : sklearn.utils.Bunch
        ``data`` (list of str, positives first), ``target`` (ndarray of int, 1 =
        positive), ``target_names`` (``["negative", "positive"]``) and ``DESCR``.

    Examples
    --------
    >>> from elmofeat.datasets import load_mpqa
    >>> mpqa = load_mpqa()
    >>> len(mpqa.data), int(mpqa.target.sum())
    (10606, 3312)
    """
    return load_polarity(MPQA, data_home, download_if_missing=download_if_missing)
