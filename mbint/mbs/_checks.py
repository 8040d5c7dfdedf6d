"""Argument checks and small vector geometry shared by the model builders and the
sensors (a leaf: it imports nothing of mbint)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__: list[str] = []


def _finite(where: str, what: str, v: Any) -> float:
    """``v`` as a finite float (ValueError naming ``where`` and ``what``)."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {what} must be a number, got {v!r}.") from None
    if not math.isfinite(v):
        raise ValueError(f"{where}: {what} must be finite, got {v}.")
    return v


def _vec(where: str, what: str, v: Any, n: int = 2) -> NDArray[np.float64]:
    """``v`` as n finite floats (ValueError naming ``where`` and ``what``)."""
    try:
        a = np.array(v, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {what} must be {n} numbers, got {v!r}.") from None
    if a.size != n:
        raise ValueError(f"{where}: {what} must have {n} entries, got {a.size}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where}: {what} must be finite, got {a.tolist()}.")
    return a


def _unit(where: str, what: str, v: Any) -> NDArray[np.float64]:
    """``v`` (3 numbers) scaled to unit length; a zero vector is a ValueError."""
    a = _vec(where, what, v, 3)
    n = np.linalg.norm(a)
    if not n > 1e-300:
        raise ValueError(f"{where}: {what} must be a non-zero vector, got {a.tolist()}.")
    return a / n


def _perp_basis(h: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Unit f, g with (f, g, h) right-handed and orthonormal (h a unit vector)."""
    e = np.eye(3)[int(np.argmin(np.abs(h)))]
    f = np.cross(h, e)
    f /= np.linalg.norm(f)
    return f, np.cross(h, f)
