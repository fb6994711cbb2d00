"""Where elmofeat keeps files of its own: the user's cache folder."""

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
