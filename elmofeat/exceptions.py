"""Warnings and errors specific to elmofeat."""


class ElmofeatVersionWarning(UserWarning):
    """A pickled elmofeat object was saved with other package versions than the current ones.

    Unpickling still proceeds; results may differ from those at save time. The message
    names each package whose version changed.

    Examples
    --------
    Refuse, rather than warn about, models saved with other versions:

    >>> import warnings
    >>> from elmofeat.exceptions import ElmofeatVersionWarning
    >>> warnings.simplefilter("error", ElmofeatVersionWarning)
    >>> warnings.resetwarnings()
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
    >>> warnings.simplefilter("error", CacheWarning)
    >>> warnings.resetwarnings()
    """
