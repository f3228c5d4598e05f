"""Named slots in a flat int64 count vector: the contract between a kernel and its result."""
from __future__ import annotations

import numpy as np


class CountLayout:
    """Maps names to slices of the count vector a kernel fills (scalars and histograms)."""

    def __init__(self):
        self._slots: dict[str, tuple[int, int]] = {}
        self.size = 0

    def add(self, name: str, length: int = 1) -> int:
        """Reserve ``length`` counters under ``name``; returns the offset."""
        if name in self._slots:
            raise ValueError(f"duplicate count slot {name!r}")
        offset = self.size
        self._slots[name] = (offset, int(length))
        self.size += int(length)
        return offset

    def offset(self, name: str) -> int:
        return self._slots[name][0]

    def length(self, name: str) -> int:
        return self._slots[name][1]

    def get(self, counts: np.ndarray, name: str) -> np.ndarray:
        offset, length = self._slots[name]
        return counts[offset:offset + length]

    def scalar(self, counts: np.ndarray, name: str) -> int:
        return int(self.get(counts, name)[0])

    def zeros(self) -> np.ndarray:
        return np.zeros(self.size, dtype=np.int64)

    def __contains__(self, name: str) -> bool:
        return name in self._slots

    def names(self) -> list[str]:
        return list(self._slots)
