"""An ordered registry of declared specs, keyed by name: the layer mixes
(:mod:`elmofeat.mixes`), the suite's tasks and methods (:mod:`elmofeat.suite`).

Plain Python: importing it loads nothing heavy, so command-line help can list what is
registered.
"""

from __future__ import annotations

from typing import Generic, Iterator, TypeVar

Spec = TypeVar("Spec")


class Registry(Generic[Spec]):
    """Specs of one kind (``what``, e.g. ``"mix"``) by name, in registration order.

    ``spec_type`` is what :meth:`register` accepts; ``key`` names the spec's attribute
    that holds its name.

    Examples
    --------
    >>> from collections import namedtuple
    >>> Colour = namedtuple("Colour", "name hex")
    >>> colours = Registry("colour", Colour)
    >>> _ = colours.register(Colour("red", "#f00"))
    >>> colours["red"].hex, list(colours), "blue" in colours
    ('#f00', ['red'], False)
    """

    def __init__(self, what: str, spec_type: type, key: str = "name"):
        self.what, self.spec_type, self.key = what, spec_type, key
        self._specs: dict[str, Spec] = {}

    def register(self, spec: Spec, *, replace: bool = False) -> Spec:
        """Add ``spec`` (``replace=True`` redefines a name); returns it."""
        if not isinstance(spec, self.spec_type):
            raise TypeError(f"register takes a {self.spec_type.__name__}, got "
                            f"{type(spec).__name__}")
        name = getattr(spec, self.key)
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.what} needs a non-empty name, got {name!r}")
        if name in self._specs and not replace:
            raise ValueError(f"a {self.what} named {name!r} is registered already "
                             "(replace=True redefines it)")
        self._specs[name] = spec
        return spec

    def unregister(self, name: str) -> None:
        """Remove a spec."""
        if name not in self._specs:
            raise KeyError(f"no {self.what} named {name!r} is registered")
        del self._specs[name]

    def __getitem__(self, name: str) -> Spec:
        spec = self._specs.get(name) if isinstance(name, str) else None
        if spec is None:
            raise ValueError(f"unknown {self.what} {name!r}; choose from "
                             f"{', '.join(self._specs)}")
        return spec

    def __contains__(self, name) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._specs))

    def __len__(self) -> int:
        return len(self._specs)

    def names(self) -> tuple[str, ...]:
        return tuple(self._specs)

    def values(self) -> tuple[Spec, ...]:
        return tuple(self._specs.values())

    def items(self):
        return tuple(self._specs.items())
