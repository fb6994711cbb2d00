"""AG's News topic classification (Zhang, Zhao & LeCun 2015)."""

from __future__ import annotations

import html
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._base import RemoteFile, fetch_file, get_data_home, missing_data_error

SUBSETS = ("train", "test")
FOLDERS = ("ag_news", "ag_news_csv")
TARGET_NAMES = ["World", "Sports", "Business", "Sci/Tech"]
_BASE_URL = "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/"
REMOTE_FILES = {
    "train": RemoteFile("train.csv", _BASE_URL + "train.csv", "md5:b1a00f826fdfbd249f79597b59e1dc12"),
    "test": RemoteFile(
        "test.csv",
        _BASE_URL + "test.csv",
        "sha256:521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699",
    ),
}

_ENTITY = re.compile(r"(?:&| )(#\d+|#x[0-9a-fA-F]+|quot|amp|lt|gt|nbsp|apos);")
_ESCAPED_DOLLAR = re.compile(r"\\\$")
_LINE_BREAK = re.compile(r"\\+")
_SPACES = re.compile(r"\s+")


def clean_ag_news_text(text: str) -> str:
    """Undo the AG News encoding artefacts in one title or description.

    * ``\\$`` (an escaped dollar) becomes ``$``;
    * backslashes, the dataset's line-break marker (``\\`` and ``\\\\``), become spaces;
    * HTML entities whose ``&`` was turned into a space, such as `` #36;`` -> ``$``,
      `` #39;`` -> ``'``, `` quot;`` -> ``"``, `` amp;`` -> ``&``, `` lt;`` / `` gt;``,
      and the ordinary ``&...;`` entities, are decoded;
    * runs of whitespace become one space, and the ends are stripped.

    Examples
    --------
    >>> clean_ag_news_text("for the  #36;10 million\\\\prize, isn #39;t  quot;easy quot;")
    'for the $10 million prize, isn\\'t "easy"'
    """
    text = _ESCAPED_DOLLAR.sub("$", text)
    text = _LINE_BREAK.sub(" ", text)
    text = _ENTITY.sub(lambda m: html.unescape(f"&{m.group(1)};"), text)
    text = html.unescape(text)
    return _SPACES.sub(" ", text).strip()


def _find_folder(home: Path, filename: str) -> Path | None:
    for folder in FOLDERS:
        if (home / folder / filename).is_file():
            return home / folder
    return None


def _read_partition(path: Path) -> tuple[list[str], np.ndarray]:
    """Texts and 0-based classes of one CSV partition; a malformed file is a
    ``ValueError`` that names it (and the row, where one is at fault)."""
    try:
        frame = pd.read_csv(path, header=None, names=["label", "title", "description"],
                            dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {exc.start}): not an AG News "
                         "CSV file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path} is not an AG News CSV file (rows \"class\",\"title\","
                         f"\"description\"): {reason}") from None
    if frame.empty:
        raise ValueError(f"{path} is not an AG News CSV file: it has no rows")
    # Classes are the whole numbers 1..4 as written: "1.5" or "2.0" are not classes.
    valid = frame["label"].str.strip().isin(["1", "2", "3", "4"])
    if not valid.all():
        bad = int(np.flatnonzero(~valid.to_numpy())[0])
        raise ValueError(f"{path}: row {bad} has class {frame['label'][bad]!r}, expected 1..4")
    texts = (frame["title"] + " " + frame["description"]).map(clean_ag_news_text)
    return texts.tolist(), frame["label"].str.strip().astype(np.int64).to_numpy() - 1


def load_ag_news(data_home=None, subset="all", *, download_if_missing=False) -> Bunch:
    """Load AG's News topic classification data (4 classes).

    Reads the canonical ``ag_news_csv`` layout (``train.csv``, ``test.csv`` and
    optionally ``classes.txt``, CSV rows ``"class","title","description"``) from
    ``<data_home>/ag_news/`` or ``<data_home>/ag_news_csv/``. Each document is
    ``title + " " + description``, cleaned by :func:`clean_ag_news_text`.

    Parameters
    ----------
    data_home : str or path-like, default=None
        See :func:`~elmofeat.datasets.get_data_home` (``$ELMOFEAT_DATA`` if unset).
    subset : {"all", "train", "test"}, default="all"
        ``"all"`` returns every partition present (train first, 120,000 + 7,600 rows
        when complete) and warns about a missing one; ``"train"`` or ``"test"`` raise
        ``FileNotFoundError`` when that file is missing.
    download_if_missing : bool, default=False
        Download missing partitions into ``<data_home>/ag_news/`` (checksums verified).

    Returns
    -------
    bunch : sklearn.utils.Bunch
        ``data`` (list of str), ``target`` (ndarray of int, 0..3), ``target_names``,
        ``partition`` (ndarray of ``"train"`` / ``"test"`` per document) and ``DESCR``.

    Examples
    --------
    >>> from elmofeat.datasets import load_ag_news
    >>> news = load_ag_news(subset="test")
    >>> len(news.data), news.target_names
    (7600, ['World', 'Sports', 'Business', 'Sci/Tech'])
    """
    if subset not in ("all",) + SUBSETS:
        raise ValueError(f"subset must be 'all', 'train' or 'test', got {subset!r}")
    home = get_data_home(data_home)
    wanted = SUBSETS if subset == "all" else (subset,)
    found: dict[str, Path] = {}
    for part in wanted:
        folder = _find_folder(home, REMOTE_FILES[part].filename)
        if folder is None and download_if_missing:
            folder = fetch_file(REMOTE_FILES[part], home / FOLDERS[0], progress=True).parent
        if folder is not None:
            found[part] = folder / REMOTE_FILES[part].filename
    missing = [part for part in wanted if part not in found]
    if missing and (subset != "all" or not found):
        looked_at = [home / f / REMOTE_FILES[p].filename for p in missing for f in FOLDERS]
        raise missing_data_error(
            f"AG News ({', '.join(missing)})",
            looked_at,
            "Get it with load_ag_news(download_if_missing=True), or put the ag_news_csv "
            "files (train.csv, test.csv, classes.txt) in <data_home>/ag_news/.",
        )
    if missing:
        warnings.warn(
            f"AG News: the {', '.join(missing)} partition is missing from {home}; "
            f"returning only {', '.join(found)}",
            UserWarning,
            stacklevel=2,
        )
    data, targets, partitions = [], [], []
    for part, path in found.items():
        texts, target = _read_partition(path)
        data.extend(texts)
        targets.append(target)
        partitions.append(np.full(len(texts), part, dtype=object))
    classes_file = next(iter(found.values())).parent / "classes.txt"
    target_names = (
        classes_file.read_text(encoding="utf-8").split() if classes_file.is_file() else TARGET_NAMES
    )
    return Bunch(
        data=data,
        target=np.concatenate(targets),
        target_names=list(target_names),
        partition=np.concatenate(partitions),
        DESCR=(
            "AG's News topic classification (Zhang, Zhao & LeCun 2015): news titles and "
            f"descriptions in 4 classes. Partitions loaded: {', '.join(found)} from {home}."
        ),
    )
