"""Lazy attributes for a package's ``__init__`` (PEP 562).

The estimators import torch, scikit-learn and gensim (seconds); the command line's
``--help`` and the light helpers should not pay for them.
"""

from __future__ import annotations

import importlib


def lazy_attributes(package: str, exports: dict[str, str], namespace: dict):
    """``__getattr__`` and ``__dir__`` that import ``name`` from ``exports[name]`` (a
    module relative to ``package``) on first access, then keep it in ``namespace``."""

    def __getattr__(name):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name], package), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
