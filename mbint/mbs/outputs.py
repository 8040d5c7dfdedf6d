"""Picklable outputs ``fn(t, q, qd)`` for :meth:`PlanarModel.add_output`.

A model pickles (for :func:`mbint.ensemble`, ``multiprocessing``, Dask) when every
function it holds pickles: a module-level function, a :func:`functools.partial`
of one, or the small callables here do; a lambda or a function defined inside
another function does not with :mod:`pickle` (it has no importable name), though
``cloudpickle`` (used by :func:`mbint.ensemble` and by Dask) pickles it by value.
"""
from __future__ import annotations

from typing import Any

__all__ = ["Coordinate", "Difference"]


class Coordinate:
    """The output ``scale * q[index]`` (one coordinate, optionally scaled).

    Parameters
    ----------
    index : int
        Entry of q.
    scale : float
        Factor (-1 for a coordinate counted the other way).
    """

    def __init__(self, index: int, scale: float = 1.0) -> None:
        self.index = int(index)
        self.scale = float(scale)

    def __call__(self, t: Any, q: Any, qd: Any) -> Any:
        v = q[self.index]
        return v if self.scale == 1.0 else self.scale * v

    def __eq__(self, other):
        return type(other) is type(self) and (self.index, self.scale) == (other.index, other.scale)

    def __repr__(self):
        return f"Coordinate({self.index}{'' if self.scale == 1.0 else f', {self.scale:g}'})"


class Difference:
    """The output ``q[j] - q[i]`` (a relative angle or distance)."""

    def __init__(self, i: int, j: int) -> None:
        self.i, self.j = int(i), int(j)

    def __call__(self, t: Any, q: Any, qd: Any) -> Any:
        return q[self.j] - q[self.i]

    def __eq__(self, other):
        return type(other) is type(self) and (self.i, self.j) == (other.i, other.j)

    def __repr__(self):
        return f"Difference({self.i}, {self.j})"
