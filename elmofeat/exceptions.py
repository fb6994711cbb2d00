"""Warnings and errors specific to elmofeat."""


class ElmofeatVersionWarning(UserWarning):
    """A pickled elmofeat object was saved with other package versions than the current ones.

    Unpickling still proceeds; results may differ from those at save time. The message
    names each package whose version changed.
    """
