"""Objects made once per key and kept in memory: the pattern behind the process's
caches of pretrained, adapted and fine-tuned biLMs."""

from __future__ import annotations

import threading
from collections import OrderedDict


class MadeOnce:
    """What ``make()`` returns, made once per key and kept in memory, the least recently
    used out first past ``max_items``. Threads asking for the same key wait for the one
    making it and get what it made; threads asking for other keys do not wait.

    Examples
    --------
    >>> made = MadeOnce(max_items=2)
    >>> made.get("a", lambda: [1]) is made.get("a", lambda: [2])
    True
    >>> _ = made.get("b", list), made.get("c", list)
    >>> len(made), "a" in made
    (2, False)
    """

    def __init__(self, max_items: int):
        self.max_items = max_items
        self._memory: OrderedDict = OrderedDict()
        self._lock = threading.Lock()  # guards _memory and _pending
        self._pending: dict = {}  # key -> the lock of the thread making it

    def get(self, key, make):
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                return self._memory[key]
            pending = self._pending.setdefault(key, threading.Lock())
        with pending:
            with self._lock:
                if key in self._memory:
                    return self._memory[key]
            try:
                made = make()
            finally:
                with self._lock:
                    self._pending.pop(key, None)
            with self._lock:
                self._memory[key] = made
                while len(self._memory) > self.max_items:
                    self._memory.popitem(last=False)
            return made

    def clear(self) -> None:
        with self._lock:
            self._memory.clear()

    def __len__(self) -> int:
        return len(self._memory)

    def __contains__(self, key) -> bool:
        return key in self._memory
