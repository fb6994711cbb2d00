"""GloVe 6B word vectors (Pennington et al. 2014; public domain, PDDL), fetched into the
data home as ``glove/glove.6B.<dim>d.txt.gz``, the GloVe text format the suite and
``WordVectorsVectorizer`` read.

Stanford's own archive (``glove.6B.zip``, 822 MB, every dimension together, no published
checksum) is too large for a dimension of 66 MB; gensim-data publishes each dimension as
its own gzip with an MD5 in its catalogue (``glove-wiki-gigaword-<dim>``, the same
400,000 words and vectors in word2vec format: GloVe's text after a ``"400000 <dim>"``
header line). That file is fetched, its checksum checked, and its header dropped.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from .._files import atomic_path
from ._base import RemoteFile, fetch_file, get_data_home

FOLDER = "glove"
WORDS = 400_000
_GENSIM_DATA = "https://github.com/RaRe-Technologies/gensim-data/releases/download/"
#: dimension -> gensim-data's file and the MD5 its catalogue (list.json) gives
REMOTE_FILES = {
    50: RemoteFile("glove-wiki-gigaword-50.gz",
                   _GENSIM_DATA + "glove-wiki-gigaword-50/glove-wiki-gigaword-50.gz",
                   "md5:c289bc5d7f2f02c6dc9f2f9b67641813"),
    100: RemoteFile("glove-wiki-gigaword-100.gz",
                    _GENSIM_DATA + "glove-wiki-gigaword-100/glove-wiki-gigaword-100.gz",
                    "md5:40ec481866001177b8cd4cb0df92924f"),
}


def glove_path(dim: int, data_home=None) -> Path:
    """Where the GloVe 6B vectors of ``dim`` dimensions live in the data home."""
    return get_data_home(data_home) / FOLDER / f"glove.6B.{dim}d.txt.gz"


def fetch_glove(dim: int = 50, data_home=None, *, progress: bool = True) -> Path:
    """The path of GloVe 6B ``dim``-d vectors in the data home, downloaded if missing.

    Parameters
    ----------
    dim : {50, 100}, default=50
    data_home : str or path-like, default=None
        See :func:`~elmofeat.datasets.get_data_home`.
    progress : bool, default=True
        Say what is fetched and show a progress bar.

    Returns
    -------
    path : pathlib.Path
        ``<data_home>/glove/glove.6B.<dim>d.txt.gz`` (GloVe's text format, gzip).
    """
    if dim not in REMOTE_FILES:
        raise ValueError(f"GloVe 6B can be fetched in {sorted(REMOTE_FILES)} dimensions, "
                         f"not {dim!r}")
    target = glove_path(dim, data_home)
    if target.is_file():
        return target
    download = fetch_file(REMOTE_FILES[dim], target.parent, progress=progress)
    with gzip.open(download, "rt", encoding="utf-8") as source:
        header = source.readline().split()
        if header != [str(WORDS), str(dim)]:
            raise ValueError(f"{download} does not start with the header '{WORDS} {dim}': it "
                             "is not gensim-data's GloVe 6B file")
        with atomic_path(target) as temporary:
            with gzip.open(temporary, "wt", encoding="utf-8") as out:
                shutil.copyfileobj(source, out, 1 << 20)
    download.unlink()
    return target
