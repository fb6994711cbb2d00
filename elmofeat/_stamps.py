"""Version stamps carried by pickled elmofeat objects.

scikit-learn records its version only for its own classes, so elmofeat records the
versions of every package that shapes a fitted object's output and warns with an
:class:`~elmofeat.exceptions.ElmofeatVersionWarning` when they differ at load time.
"""

from __future__ import annotations

import warnings
from importlib.metadata import PackageNotFoundError, version

from ._version import __version__
from .exceptions import ElmofeatVersionWarning

STAMP_KEY = "_elmofeat_version_stamps"


def _installed_version(package: str) -> str | None:
    if package == "elmofeat":
        return __version__
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def version_stamps(packages) -> dict[str, str | None]:
    """Current versions of ``packages`` (distribution names), e.g. ``{"numpy": "2.4.6"}``."""
    return {package: _installed_version(package) for package in packages}


def check_version_stamps(stamps: dict | None, what: str) -> None:
    """Warn once, naming every package whose version differs from ``stamps``."""
    if not stamps:
        return
    changed = [
        f"{package} {saved} -> {_installed_version(package)}"
        for package, saved in stamps.items()
        if saved != _installed_version(package)
    ]
    if changed:
        warnings.warn(
            f"{what} was pickled with other package versions than the ones installed now "
            f"({', '.join(changed)}); it may give different results or fail. "
            "Refit it, or install the versions it was saved with.",
            ElmofeatVersionWarning,
            stacklevel=3,
        )
