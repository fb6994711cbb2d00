"""Every dataset the main job and the docs read, by name: where its files live in the
data home and how to fetch them (``elmofeat download``, ``download_datasets``).

Each entry fetches from the dataset's public source with a pinned checksum, through
:func:`~elmofeat.datasets.fetch_file` (resumed after a cut, a progress bar, a clear
error offline). The names of the suite's tasks are the suite's own keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ._base import get_data_home


@dataclass(frozen=True)
class Download:
    """A dataset that can be fetched: ``files(home)`` are what its loader reads,
    ``fetch(home)`` writes them."""

    description: str
    files: Callable[[Path], list]
    fetch: Callable[[Path], object]


def _ag_news_files(home):
    from ._ag_news import FOLDERS, REMOTE_FILES, _find_folder

    folder = _find_folder(home, REMOTE_FILES["test"].filename)
    return [(folder or home / FOLDERS[0]) / REMOTE_FILES["test"].filename]


def _ag_news_fetch(home):
    from ._ag_news import load_ag_news

    return load_ag_news(home, subset="test", download_if_missing=True)


def _r8_files(home):
    from ._r8 import FOLDER, REMOTE_FILES

    return [home / FOLDER / remote.filename for remote in REMOTE_FILES.values()]


def _r8_fetch(home):
    from ._r8 import load_r8

    return load_r8(home, subset="all", download_if_missing=True)


def _polarity_files(name):
    def files(home):
        from . import _polarity

        dataset = getattr(_polarity, name)
        return [home / dataset.folder / dataset.remote(side).filename for side in ("pos", "neg")]
    return files


def _polarity_fetch(name):
    def fetch(home):
        from . import _polarity

        return _polarity.load_polarity(getattr(_polarity, name), home, download_if_missing=True)
    return fetch


def _newsgroups_files(home):
    from ._newsgroups import FILES, FOLDER

    return [home / FOLDER / name for name in FILES.values()]


def _newsgroups_fetch(home):
    from ._newsgroups import fetch_20newsgroups_bydate

    return fetch_20newsgroups_bydate(home)


def _glove_files(dim):
    def files(home):
        from ._glove import glove_path

        return [glove_path(dim, home)]
    return files


def _glove_fetch(dim):
    def fetch(home):
        from ._glove import fetch_glove

        return fetch_glove(dim, home)
    return fetch


DOWNLOADS = {
    "ag_news": Download("AG News, the 7,600-row test partition (the suite's AG News task)",
                        _ag_news_files, _ag_news_fetch),
    "r8": Download("R8 (Reuters-21578), the standard train and test split", _r8_files, _r8_fetch),
    "cr": Download("CR product-review sentences", _polarity_files("CR"), _polarity_fetch("CR")),
    "mpqa": Download("MPQA opinion phrases", _polarity_files("MPQA"), _polarity_fetch("MPQA")),
    "20ng": Download("20 Newsgroups, the bydate split (14 MB archive)", _newsgroups_files,
                     _newsgroups_fetch),
    "glove-50d": Download("GloVe 6B word vectors, 50 dimensions (66 MB; the suite's GloVe rows)",
                          _glove_files(50), _glove_fetch(50)),
    "glove-100d": Download("GloVe 6B word vectors, 100 dimensions (128 MB; the glove-100d recipe)",
                           _glove_files(100), _glove_fetch(100)),
}
#: What ``elmofeat benchmark`` reads at its defaults.
MAIN_JOB = ("ag_news", "r8", "cr", "mpqa", "20ng", "glove-50d")


def dataset_names() -> tuple:
    """The names :func:`download_datasets` and ``elmofeat download`` know.

    Examples
    --------
    >>> dataset_names()[:3]
    ('ag_news', 'r8', 'cr')
    """
    return tuple(DOWNLOADS)


def missing_datasets(names, data_home=None) -> list:
    """The names among ``names`` whose files are not all in the data home.

    Examples
    --------
    >>> import tempfile
    >>> missing_datasets(["cr", "glove-50d"], tempfile.mkdtemp())
    ['cr', 'glove-50d']
    """
    home = get_data_home(data_home)
    unknown = [name for name in names if name not in DOWNLOADS]
    if unknown:
        raise ValueError(f"unknown datasets {unknown}; choose from {', '.join(DOWNLOADS)}")
    return [name for name in names
            if not all(Path(path).is_file() for path in DOWNLOADS[name].files(home))]


def download_datasets(names=MAIN_JOB, data_home=None, *, log=print) -> list:
    """Fetch each named dataset whose files are missing from the data home; return the
    names fetched (those present are left as they are: nothing is written).

    Parameters
    ----------
    names : iterable of str, default=MAIN_JOB
        Keys of :data:`DOWNLOADS`: ``ag_news``, ``r8``, ``cr``, ``mpqa``, ``20ng``,
        ``glove-50d``, ``glove-100d``.
    data_home : str or path-like, default=None
        See :func:`~elmofeat.datasets.get_data_home`.
    log : callable, default=print
        Receives one line per dataset.

    Examples
    --------
    >>> import tempfile
    >>> download_datasets([], tempfile.mkdtemp())
    []
    """
    names = list(names)
    home = get_data_home(data_home)
    missing = missing_datasets(names, home)
    for name in names:
        if name not in missing:
            log(f"{name}: present in {home}")
            continue
        log(f"{name}: fetching {DOWNLOADS[name].description} into {home}")
        DOWNLOADS[name].fetch(home)
    return missing
