"""Process-wide settings, in scikit-learn's ``set_config`` / ``config_context`` style."""

from __future__ import annotations

import contextlib
from numbers import Integral

from . import _token_patterns as _text
from .elmo import caches as _bilm_cache
from .runtime import malloc as _malloc


def get_config() -> dict:
    """The current settings.

    Returns
    -------
    config : dict
        ``representation_cache_bytes``: the most bytes of biLM layer representations kept
        in this process between fits; ``malloc_tuning``: whether fits keep large freed
        blocks in glibc's heap; ``trusted_token_patterns``: token patterns accepted from
        files beside the vetted ones (see :func:`set_config`).

    Examples
    --------
    >>> import elmofeat
    >>> elmofeat.get_config()["representation_cache_bytes"] > 0
    True
    """
    return {"representation_cache_bytes": _bilm_cache.REPRESENTATIONS.max_bytes,
            "malloc_tuning": _malloc.enabled,
            "trusted_token_patterns": _text.trusted_token_patterns()}


def set_config(*, representation_cache_bytes=None, malloc_tuning=None,
               trusted_token_patterns=None) -> None:
    """Change process-wide settings; ``None`` leaves a setting as it is.

    Parameters
    ----------
    representation_cache_bytes : int, default=None
        The most bytes of layer representations kept in this process (default 1 GiB).
        ``ElmoVectorizer.fit`` keeps the representations of its training documents
        there, so that the other candidates of a ``GridSearchCV`` on the same fold, and
        the cross-fitting of a supervised mix, do not run the biLM again;
        ``transform`` uses what is there but adds nothing. 0 keeps nothing (and frees
        what is held): the least memory, at the cost of a biLM run per candidate.
    malloc_tuning : bool, default=None
        Off unless turned on (the ``elmofeat`` command turns it on for its own process).
        On Linux with glibc, ``fit`` then keeps freed blocks of up to 128 MiB in the heap,
        and the heap untrimmed until it ends, instead of having the kernel map and zero
        them at every training step (a
        measured speed-up of pretraining, identical results), sets glibc's thresholds to
        the limits of its dynamic rule afterwards and trims the heap, also when caches
        are cleared. glibc cannot restore its dynamic rule nor a threshold you set in code
        once this ran, which is why it is an opt-in; a ``MALLOC_*`` threshold or
        ``glibc.malloc`` tunable in the environment keeps it off.
    trusted_token_patterns : list of str, default=None
        Token patterns (regular expressions) that model files, model folders and skops
        files may carry beside elmofeat's vetted ones
        (:data:`elmofeat.text.VETTED_TOKEN_PATTERNS`); it replaces the list (default
        empty). Python's engine can take exponential time with some patterns, so a file
        with any other pattern is refused when it is loaded. Patterns given in code
        (``BiLM(token_pattern=...)``) and pickles need no trust.

    Examples
    --------
    >>> import elmofeat
    >>> with elmofeat.config_context(representation_cache_bytes=0):
    ...     elmofeat.get_config()["representation_cache_bytes"]
    0
    """
    if representation_cache_bytes is not None:
        if (isinstance(representation_cache_bytes, bool)
                or not isinstance(representation_cache_bytes, Integral)
                or representation_cache_bytes < 0):
            raise ValueError("representation_cache_bytes must be an integer >= 0, got "
                             f"{representation_cache_bytes!r}")
        cache = _bilm_cache.REPRESENTATIONS
        cache.max_bytes = int(representation_cache_bytes)
        cache.shrink_to(cache.max_bytes)
    if malloc_tuning is not None:
        if not isinstance(malloc_tuning, bool):
            raise TypeError(f"malloc_tuning must be True or False, got {malloc_tuning!r}")
        _malloc.enabled = malloc_tuning
    if trusted_token_patterns is not None:
        _text.set_trusted_token_patterns(trusted_token_patterns)


def clear_caches() -> None:
    """Forget the pretrained and fine-tuned biLMs and the layer representations kept in
    this process.

    ``ElmoVectorizer`` keeps both between fits (see :func:`set_config`) so that a search
    does not pretrain or run the biLM again; once a search is over, this frees their
    memory at once. Files in a cache folder (``cache_dir``) stay.

    Examples
    --------
    >>> import elmofeat
    >>> elmofeat.clear_caches()
    """
    from .elmo import fine_tuning

    _bilm_cache.BILMS.clear()
    _bilm_cache.REPRESENTATIONS.clear()
    _bilm_cache.clear_pretrained()
    fine_tuning.FINE_TUNED.clear()


@contextlib.contextmanager
def config_context(**changes):
    """Settings changed within a ``with`` block, restored after it (see :func:`set_config`).

    Examples
    --------
    Search over mixes while keeping at most 4 GiB of layer representations:

    >>> import elmofeat
    >>> with elmofeat.config_context(representation_cache_bytes=4 << 30):
    ...     elmofeat.get_config()["representation_cache_bytes"] == 4 << 30
    True
    >>> elmofeat.get_config()["representation_cache_bytes"] == 1 << 30
    True
    """
    before = get_config()
    set_config(**changes)
    try:
        yield
    finally:
        set_config(**before)
