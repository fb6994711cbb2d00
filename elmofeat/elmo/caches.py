"""Sharing pretrained biLMs and their layer representations across estimator clones.

``GridSearchCV`` clones an ``ElmoVectorizer`` for every candidate and fold. Without
help, each clone would pretrain its own biLM on the same training texts. Two caches
prevent that:

* **Pretrained biLMs**, keyed by the biLM's parameters and a digest of the training
  texts: in this process (a small LRU), and, when a cache folder is in use, on disk as
  ``BiLM.save`` files guarded by a file lock (``filelock``), so that parallel workers
  (joblib processes) wait for one another instead of pretraining the same model twice.
  Every pretraining appends a line to ``pretrain.log`` in that folder.

  The folder is the user's own: created private (0700), and refused (with a warning,
  the fit goes on without it) when it is not a folder of this user that only this user
  can write, so that another user cannot plant models or links in it. A cache that
  cannot be written (a full disk) only warns: the fitted model is never lost to it.
* **Layer representations** of documents, keyed by the biLM and the document text, in
  this process, within a memory budget: candidates that differ only in the mix reuse
  what the biLM computed for the same documents.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import threading
import time
import warnings
from collections import OrderedDict
from numbers import Integral
from pathlib import Path

import numpy as np

from .made_once import MadeOnce
from .._file_lock import shared_lock
from .._version import __version__ as _VERSION
from .._files import remove_stale_temporaries
from ..runtime.malloc import release_free_memory
from ..exceptions import CacheWarning

_MEMORY_BILMS = 4
_FOLDER_BILMS = 8


def private_folder(folder: Path) -> Path:
    """Create ``folder`` (0700) if needed and check that it is safe to use.

    Raises
    ------
    PermissionError
        If it is a link, not a folder, owned by another user, or writable by others.
    """
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise PermissionError(f"cache folder {folder} is a link or not a folder")
    if hasattr(os, "getuid"):  # POSIX ownership and modes (Windows: per-user by ACL)
        if info.st_uid != os.getuid():
            raise PermissionError(f"cache folder {folder} belongs to another user")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise PermissionError(f"cache folder {folder} can be written by other users "
                                  f"(mode {stat.S_IMODE(info.st_mode):o}); use a private one (0700)")
    return folder


def _append_line(path: Path, line: str) -> None:
    """Append to ``path`` without following a link planted in its place."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(path, flags, 0o600)
    with os.fdopen(handle, "a", encoding="utf-8") as log:
        log.write(line + "\n")


def documents_digest(documents) -> str:
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(hashlib.sha256(doc.encode("utf-8", "surrogatepass")).digest())
    return digest.hexdigest()


@functools.lru_cache(maxsize=8)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    """SHA-256 of a file's bytes (memoised by its path, size and modification time)."""
    from ..bilm.hub import file_sha256

    return file_sha256(path)


def file_identity(path) -> str:
    """What a file given as a parameter contributes to a key: its content (size,
    modification time and SHA-256), not its name, so that a file rewritten at the same
    path is a new key."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        return f"missing:{real}"
    return f"{info.st_size}:{_file_digest(real, info.st_size, info.st_mtime_ns)}"


def _described_params(bilm) -> dict:
    """The parameters that make a pretrained model what it is, as text (run settings and
    placement do not change it)."""
    params = bilm.get_params(deep=False)
    ignored = set(type(bilm)._run_settings) | set(type(bilm)._placement_params)
    return {k: repr(v) for k, v in sorted(params.items()) if k not in ignored}


def bilm_key(bilm, documents) -> str | None:
    """Cache key of ``bilm`` pretrained on ``documents``; None if it cannot be keyed."""
    params = bilm.get_params(deep=False)
    if params.get("tokenizer") is not None:
        return None  # an arbitrary callable cannot be keyed (nor saved)
    pretrained = params.get("pretrained_vectors")
    if pretrained is not None and not isinstance(pretrained, (str, os.PathLike)):
        return None
    described = _described_params(bilm)
    if pretrained is not None:
        described["pretrained_vectors"] = file_identity(pretrained)
    text = _VERSION + json.dumps(described, sort_keys=True) + documents_digest(documents)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _stored_params(bilm) -> dict:
    """``_described_params`` less what a BiLM file does not keep (its training inputs):
    what a model loaded from the cache folder is compared on."""
    unsaved = set(type(bilm)._unsaved_params)
    return {k: v for k, v in _described_params(bilm).items() if k not in unsaved}


def model_identity(bilm) -> str:
    """What a fitted biLM is, beyond its parameters: its full fitted state. The weights
    (by their values: :meth:`BiLM.weights_key`), the vocabulary, and every other
    fitted attribute (``layer_scales_`` and any added later), taken from the object
    itself rather than from a list of names that could leave one out."""
    import joblib

    vocabulary = hashlib.sha256("\n".join(bilm.vocabulary_.tokens).encode(
        "utf-8", "surrogatepass")).hexdigest()
    others = {name: value for name, value in vars(bilm).items()
              if name.endswith("_") and not name.startswith("_")
              and name not in ("language_model_", "vocabulary_")}
    return bilm.weights_key() + vocabulary + joblib.hash(others)


def adaptation_target(base, params: dict):
    """The unfitted description of ``base`` adapted with ``params``: ``base``'s own
    parameters (its ``learning_rate``, ``max_len``, ...) with ``warm_start=True`` and
    ``params`` on top. Its described parameters key the adapted model."""
    target = base.shared_copy()  # parameters of its own: base is left as it is
    for name, value in {**params, "warm_start": True}.items():
        setattr(target, name, value)
    return target


def _evict(folder: Path, keep: int) -> None:
    """Delete all but the ``keep`` most recently used biLM files of ``folder``."""
    files = sorted(folder.glob("bilm-*.pt"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[keep:]:
        old.unlink(missing_ok=True)
        old.with_suffix(".lock").unlink(missing_ok=True)
    remove_stale_temporaries(folder, r"bilm-[0-9a-f]+\.pt")  # writes of other entries, killed


def _is_seed(random_state) -> bool:
    """Whether ``random_state`` makes a pretraining reproducible (an int)."""
    return isinstance(random_state, Integral) and not isinstance(random_state, bool)


class BiLMCache:
    """Pretrained biLMs by key: memory first, then the cache folder (if any)."""

    def __init__(self):
        self._memory = MadeOnce(_MEMORY_BILMS)

    def fitted(self, bilm, documents, folder: Path | None, threads=None):
        """``bilm`` pretrained on ``documents``, from a cache when possible.

        Returns the fitted BiLM (a fresh clone of ``bilm``; ``bilm`` is not modified).
        ``threads``: the caller's thread policy in force, which the pretraining follows.
        Only a seeded biLM (an int ``random_state``) is kept in ``folder``: with None (or
        a RandomState) the pretraining is not reproducible, and a later session must not
        get this session's model back; in this process it is shared all the same, so
        that a search pretrains once.
        """
        from sklearn.base import clone

        key = bilm_key(bilm, documents)
        if not _is_seed(bilm.random_state):
            folder = None
        expected = _stored_params(bilm)

        def matches(loaded) -> bool:  # a file planted under the key is not taken on trust
            return _stored_params(loaded) == expected

        return self._cached(key, lambda: clone(bilm).fit(documents, threads=threads),
                            len(documents), folder, bilm.device, matches,
                            token_pattern=bilm.token_pattern)

    def adapted(self, base, documents, params: dict, folder: Path | None, threads=None):
        """A copy of the fitted ``base`` whose pretraining continued on ``documents``
        (``warm_start=True`` with ``params``, under the caller's ``threads``), from a
        cache when possible; ``base`` is not modified. As in :meth:`fitted`, only an
        adaptation with an int ``random_state`` is kept in ``folder``."""
        import copy

        def adapt():
            return copy.deepcopy(base).set_params(warm_start=True, **params).fit(
                documents, threads=threads)

        if not _is_seed(params.get("random_state")):
            folder = None
        # Everything that defines the adapted model, derived from the parameters (the
        # base's own and the adaptation's, less run settings such as verbose) and the
        # base's weights and vocabulary, and this elmofeat's version (its training code).
        target = adaptation_target(base, params)
        expected = _stored_params(target)
        key = None
        if base.tokenizer is None:
            text = ("adapted" + _VERSION + model_identity(base)
                    + json.dumps(_described_params(target), sort_keys=True)
                    + documents_digest(documents))
            key = hashlib.sha256(text.encode()).hexdigest()[:32]

        def matches(loaded) -> bool:  # a file planted under the key is not taken on trust
            return _stored_params(loaded) == expected

        return self._cached(key, adapt, len(documents), folder, base.device, matches,
                            token_pattern=base.token_pattern)

    def _cached(self, key, make, n_documents: int, folder: Path | None, device,
                matches=lambda loaded: True, token_pattern=None):
        """``token_pattern``: the requesting estimator's own (given in code), which a
        file of the cache folder may carry; ``matches`` then checks it is that one."""
        if key is None:
            return make()

        def made():
            from ..bilm import sharing  # lazily: elmofeat's import loads no torch

            return sharing.share(self._make_or_load(key, make, n_documents, folder, device,
                                                    matches, token_pattern))
        return self._memory.get(key, made)

    def _make_or_load(self, key, make, n_documents, folder, device, matches,
                      token_pattern=None):
        if folder is not None:
            try:
                folder = private_folder(Path(folder))
            except OSError as exc:
                warnings.warn(f"not using the biLM cache folder: {exc}; pretraining without it "
                              "(set cache_dir to a private folder, or None)", CacheWarning,
                              stacklevel=5)
                folder = None
        if folder is None:
            return make()
        return self._from_folder(make, key, n_documents, folder, device, matches,
                                 token_pattern)

    def _from_folder(self, make, key: str, n_documents: int, folder: Path, device, matches,
                     token_pattern=None):
        from ..bilm import BiLM

        path = folder / f"bilm-{key}.pt"
        with shared_lock(folder / f"bilm-{key}.lock", "the pretrained biLM",
                         stacklevel=7) as locked:
            if not locked:  # said why (a warning): pretrain, keep it in memory only
                return make()
            if path.is_file() and not path.is_symlink():
                try:
                    loaded = BiLM.load(path, device=device, trusted_token_patterns=(
                        () if token_pattern is None else (token_pattern,)))
                    if matches(loaded):
                        os.utime(path, follow_symlinks=False)  # recently used
                        return loaded
                except (ValueError, OSError):
                    pass
                path.unlink(missing_ok=True)  # unreadable or not this model: pretrain again
            start = time.perf_counter()
            fitted = make()
            # The cache is a convenience: failing to write it never loses the model.
            try:
                fitted.save(path)
                _evict(folder, keep=_FOLDER_BILMS)
                _append_line(folder / "pretrain.log", json.dumps(
                    {"key": key, "documents": n_documents, "pid": os.getpid(),
                     "seconds": round(time.perf_counter() - start, 3)}))
            except OSError as exc:
                warnings.warn(f"could not write the biLM cache in {folder}: {exc}; the fitted "
                              "biLM is kept in memory only", CacheWarning, stacklevel=6)
        return fitted

    def clear(self):
        self._memory.clear()


class RepresentationCache:
    """Per-document layer representations of fitted biLMs, within a byte budget (LRU).

    Safe to share between threads (``GridSearchCV`` under the threading backend): the
    entries are read and written under a lock, and a call keeps references to the
    entries it found, so an eviction by another thread cannot take them away; the biLM
    runs outside the lock.
    """

    def __init__(self, max_bytes: int = 2 << 30):
        self.max_bytes = max_bytes
        self._entries: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = threading.RLock()
        self.hits = self.misses = 0

    def clear(self):
        with self._lock:
            had_entries = bool(self._entries)
            self._entries.clear()
            self._bytes = 0
        if had_entries:
            release_free_memory()

    def embed(self, bilm, documents: list[str], store: bool = True,
              batch_size: int | None = None, token_lists=None,
              threads=None) -> tuple[np.ndarray, np.ndarray]:
        """Like ``bilm.embed_flat(documents)``, computing only documents not cached;
        with ``store=False`` what it computes is not added to the cache. ``token_lists``:
        the documents' tokens, when the caller has them already; ``threads``: the
        caller's thread policy in force.

        Entries are keyed by :meth:`BiLM.representation_key`, which first checks the
        values these documents' layers read (the encoder, and their rows of the word
        table): layers cached before an in-place change of the weights, by any route,
        are never served. While a forward hook is set on the model, the cache is
        neither read nor written (the hook changes what the layers are)."""
        from ..runtime.torch_helpers import forward_hooks

        if token_lists is None:
            token_lists = bilm.tokenize(documents)
        if forward_hooks(bilm.language_model_):
            return bilm.embed_tokens(token_lists, batch_size, threads=threads)
        bilm_id = bilm.representation_key(bilm.word_ids(token_lists))
        keys = [(bilm_id, hashlib.sha256(d.encode("utf-8", "surrogatepass")).digest())
                for d in documents]
        with self._lock:
            held = {k: self._entries[k] for k in keys if k in self._entries}
            self._touch(held)
            missing = [i for i, k in enumerate(keys) if k not in held]
            self.hits += len(documents) - len(missing)
            self.misses += len(missing)
        fresh = {}
        if missing:
            tokens = [token_lists[i] for i in missing]
            layers, offsets = bilm.embed_tokens(tokens, batch_size, threads=threads,
                                                weights_checked=True)
            for j, i in enumerate(missing):
                fresh[keys[i]] = layers[offsets[j] : offsets[j + 1]]
        all_fresh = bool(documents) and len(missing) == len(documents)
        parts = None if all_fresh else [fresh[k] if k in fresh else held[k] for k in keys]
        if store and fresh:
            with self._lock:
                for key, value in fresh.items():
                    self._store(key, value)
        if all_fresh:
            # Nothing was cached: the computed array is the answer already (joining its
            # pieces again would hold a third copy of every layer at the peak of a fit).
            return layers, offsets
        lengths = np.fromiter((len(p) for p in parts), np.int64, len(parts))
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        shape = (0, bilm.n_representations_, bilm.output_dim_)
        return (np.concatenate(parts) if parts else np.zeros(shape, np.float32)), offsets

    def _touch(self, keys) -> None:
        """Mark ``keys`` as the most recently used (the lock is held)."""
        for key in keys:
            if key in self._entries:
                self._entries.move_to_end(key)

    def shrink_to(self, max_bytes: int) -> None:
        """Drop the least recently used entries until at most ``max_bytes`` are held."""
        dropped = False
        with self._lock:
            while self._entries and self._bytes > max_bytes:
                _, old = self._entries.popitem(last=False)
                self._bytes -= old.nbytes
                dropped = True
        if dropped:
            release_free_memory()

    @property
    def n_bytes(self) -> int:
        """Bytes of representations held now."""
        return self._bytes

    def _store(self, key, value: np.ndarray):
        """Add one entry, evicting the oldest beyond the budget (the lock is held)."""
        if self.max_bytes <= 0 or value.nbytes > self.max_bytes or key in self._entries:
            return
        value = value.copy()  # do not keep the whole batch array alive
        self._entries[key] = value
        self._bytes += value.nbytes
        while self._bytes > self.max_bytes:
            _, old = self._entries.popitem(last=False)
            self._bytes -= old.nbytes


BILMS = BiLMCache()
REPRESENTATIONS = RepresentationCache(max_bytes=1 << 30)


_PRETRAINED: OrderedDict = OrderedDict()
_PRETRAINED_MAX = 2


def _file_stamp(path: Path) -> tuple:
    """A file's real path, size and modification time (None for a missing file)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return (str(path), None)
    return (str(path.resolve()), info.st_size, info.st_mtime_ns)


def clear_pretrained() -> None:
    """Forget the process's copies of pretrained models: later fits load them afresh."""
    _PRETRAINED.clear()


def shared_pretrained(name_or_path, device="cpu", cache_dir=None, *,
                      prefer_local: bool = True):
    """The pretrained biLM of ``name_or_path`` (see :func:`elmofeat.bilm.hub.resolve`),
    loaded once per process and shared.

    Estimators that name a pretrained model (``ElmoVectorizer(bilm="en-base")``) and
    their clones read one copy; they never train it (an adaptation trains a copy), and
    it refuses to be changed in place (:mod:`elmofeat.bilm.sharing`).
    ``prefer_local=False``: a registered name is the registered model even where a
    local folder has its name (a pickle that names it).
    """
    from ..bilm import BiLM, hub, sharing
    from ..bilm.io import load_pretrained

    path, name = hub.resolve_named(name_or_path, cache_dir, prefer_local=prefer_local)
    # Every file of the folder that defines the model: its weights and the config.json
    # beside them (layer scales), so that an edited folder is read afresh.
    key = (*(_file_stamp(p) for p in (path, path.with_name("config.json"))), str(device))
    if key in _PRETRAINED and not sharing.is_unchanged(_PRETRAINED[key]):
        del _PRETRAINED[key]  # changed in place by a user: later fits read it afresh
    if key not in _PRETRAINED:
        while len(_PRETRAINED) >= _PRETRAINED_MAX:
            _PRETRAINED.popitem(last=False)
        bilm = load_pretrained(BiLM, path, name, device=device)
        _PRETRAINED[key] = sharing.share(bilm, name, source=str(path.parent))
    elif name is not None:  # loaded by path before; resolve just checked its SHA-256
        sharing.share(_PRETRAINED[key], name)
    _PRETRAINED.move_to_end(key)
    return _PRETRAINED[key]
