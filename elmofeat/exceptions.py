"""Warnings and errors specific to elmofeat."""

import errno
import shutil
from pathlib import Path


class ElmofeatVersionWarning(UserWarning):
    """A pickled elmofeat object was saved with other package versions than the current ones.

    Unpickling still proceeds; results may differ from those at save time. The message
    names each package whose version changed.

    Examples
    --------
    Refuse, rather than warn about, models saved with other versions:

    >>> import warnings
    >>> from elmofeat.exceptions import ElmofeatVersionWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", ElmofeatVersionWarning)
    ...     # loading a model saved with other versions raises here
    ...     pass
    """


class CacheWarning(UserWarning):
    """The biLM cache folder could not be used or written; the fit went on without it.

    Raised when the folder is a link, belongs to another user or can be written by
    others (it is then not used at all), or when writing to it fails (a full disk):
    the fitted biLM is kept in memory either way.

    Examples
    --------
    Make an unusable cache an error instead:

    >>> import warnings
    >>> from elmofeat.exceptions import CacheWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", CacheWarning)
    ...     # a fit whose cache folder is unusable raises here
    ...     pass
    """


class ShadowedModelWarning(UserWarning):
    """A registered pretrained model's name is also a local file or folder: the local
    one was loaded.

    Examples
    --------
    Make the ambiguity an error instead:

    >>> import warnings
    >>> from elmofeat.exceptions import ShadowedModelWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", ShadowedModelWarning)
    ...     # BiLM.from_pretrained("en-base") with a folder ./en-base raises here
    ...     pass
    """


class DiskFullError(OSError):
    """A file could not be written for lack of space; the previous file is intact.

    Raised by every elmofeat save (models, checkpoints, reports, features) when the disk
    is full or the file size limit (``ulimit -f``) is reached; an ``OSError`` with
    ``errno.ENOSPC``, whose message names the file and the free space.

    Examples
    --------
    >>> from elmofeat.exceptions import DiskFullError
    >>> issubclass(DiskFullError, OSError)
    True
    """

    def __init__(self, path, cause):
        path = Path(path)
        try:
            free = f"{shutil.disk_usage(path.parent).free / 2**20:,.1f} MiB free there"
        except OSError:  # pragma: no cover - the folder vanished
            free = "free space unknown"
        super().__init__(
            errno.ENOSPC,
            f"could not write {path}: the disk that holds {path.parent} is full, or the "
            f"file size limit (ulimit -f) was reached ({free}); any previous {path.name} "
            f"is intact ({type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''})")

    def __str__(self):
        return self.strerror
