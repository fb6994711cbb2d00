"""Where elmofeat keeps files of its own: the user's cache folder, the shipped models."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$ELMOFEAT_CACHE``, else the user's cache folder (``platformdirs``:
    ``~/.cache/elmofeat`` on Linux, ``~/Library/Caches/elmofeat`` on macOS,
    ``%LOCALAPPDATA%\\elmofeat\\Cache`` on Windows)."""
    env = os.environ.get("ELMOFEAT_CACHE")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("elmofeat", appauthor=False))


#: Where the models shipped with elmofeat live.
PACKAGE_MODELS = Path(__file__).resolve().parent / "models"


def refuse_package_models(path) -> None:
    """Refuse to write ``path`` inside :data:`PACKAGE_MODELS`: a file there would replace
    (or sit beside) a shipped model, whose pinned SHA-256 then refuses it for every user
    until elmofeat is reinstalled."""
    resolved = Path(path).expanduser().resolve()
    package = PACKAGE_MODELS.resolve()
    if resolved == package or package in resolved.parents:
        raise ValueError(f"{path} is inside elmofeat's own models folder ({package}), where "
                         "the shipped models live: save your model elsewhere and load it by "
                         "its path")
