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
