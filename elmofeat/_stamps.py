"""Version stamps carried by pickled elmofeat objects.

scikit-learn records its version only for its own classes, so elmofeat records the
versions of every package that shapes a fitted object's output and warns with an
:class:`~elmofeat.exceptions.ElmofeatVersionWarning` when they differ at load time.
"""

from __future__ import annotations

import warnings
from .exceptions import ElmofeatVersionWarning
from .runtime.host import installed_versions

STAMP_KEY = "_elmofeat_version_stamps"


def version_stamps(packages) -> dict[str, str | None]:
    """Current versions of ``packages`` (distribution names), e.g. ``{"numpy": "2.4.6"}``."""
    return installed_versions(packages)


def check_version_stamps(stamps: dict | None, what: str) -> None:
    """Warn once, naming every package whose version differs from ``stamps``."""
    if not stamps:
        return
    now = installed_versions(stamps)
    changed = [f"{package} {saved} -> {now[package]}"
               for package, saved in stamps.items() if saved != now[package]]
    if changed:
        warnings.warn(
            f"{what} was pickled with other package versions than the ones installed now "
            f"({', '.join(changed)}); it may give different results or fail. "
            "Refit it, or install the versions it was saved with.",
            ElmofeatVersionWarning,
            stacklevel=3,
        )
