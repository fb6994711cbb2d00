"""Dataset loaders: AG News, Reuters R8, CR, MPQA and 20 Newsgroups, from a data home, with verified downloads
(``download_datasets``, ``elmofeat download``: those and GloVe 6B).

The data home is the ``data_home`` argument, else the ``ELMOFEAT_DATA`` environment
variable, else ``~/elmofeat_data``.
"""

from ._ag_news import clean_ag_news_text, load_ag_news
from ._polarity import load_cr, load_mpqa
from ._base import ChecksumError, RemoteFile, fetch_file, get_data_home
from ._downloads import dataset_names, download_datasets, missing_datasets
from ._newsgroups import load_20newsgroups
from ._r8 import load_r8

__all__ = [
    "ChecksumError",
    "RemoteFile",
    "clean_ag_news_text",
    "dataset_names",
    "download_datasets",
    "fetch_file",
    "get_data_home",
    "load_20newsgroups",
    "load_ag_news",
    "load_cr",
    "load_mpqa",
    "load_r8",
    "missing_datasets",
]
