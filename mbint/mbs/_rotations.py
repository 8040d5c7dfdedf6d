"""Euler parameters and rotation matrices: the conversions and the 3 x 4 matrices E(p),
G(p) of the spatial model (a leaf module: :mod:`mbint.mbs.spatial` re-exports them;
:mod:`mbint.mbs.reactions` and the URDF model use them without importing the model)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._typing import ArrayLike, FloatArray

__all__ = ["matrix_from_quat", "quat_from_axis_angle", "quat_from_matrix"]


def matrix_from_quat(p: ArrayLike) -> FloatArray:
    """Rotation matrix of the Euler parameters p = (e0, e1, e2, e3), shape (3, 3)
    (or (3, 3, m) for p of shape (4, m)): A = (e0^2 - e.e) I + 2 e e^T + 2 e0 e~."""
    p = np.asarray(p, float)
    e0, e1, e2, e3 = p
    return np.array([
        [e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3, 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3]])


def quat_from_axis_angle(axis: ArrayLike, angle: float) -> FloatArray:
    """Euler parameters of the rotation by ``angle`` (rad) about ``axis`` (3,)."""
    a = np.asarray(axis, float).reshape(-1)
    n = np.linalg.norm(a)
    if a.size != 3 or not n > 0 or not np.isfinite(n):
        raise ValueError(f"axis must be a finite non-zero 3-vector, got {axis!r}.")
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * a / n])


def quat_from_matrix(R: ArrayLike, tol: float = 1e-9) -> FloatArray:
    """Euler parameters (e0 >= 0) of a rotation matrix R (3, 3); ValueError when R is
    not orthonormal with determinant +1 to ``tol``."""
    R = np.asarray(R, float)
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ValueError("a rotation matrix must be a finite (3, 3) array.")
    if np.abs(R.T @ R - np.eye(3)).max() > tol or abs(np.linalg.det(R) - 1) > tol:
        raise ValueError("the matrix is not a rotation (R^T R = I, det R = +1).")
    tr = np.trace(R)
    # Shepperd's method: the largest of 4 e0^2, 4 e1^2, ... first
    d = np.array([tr, R[0, 0], R[1, 1], R[2, 2]])
    k = int(np.argmax(d))
    if k == 0:
        e0 = math.sqrt(1 + tr) / 2
        p = [e0, (R[2, 1] - R[1, 2]) / (4 * e0), (R[0, 2] - R[2, 0]) / (4 * e0),
             (R[1, 0] - R[0, 1]) / (4 * e0)]
    elif k == 1:
        e1 = math.sqrt(1 + 2 * R[0, 0] - tr) / 2
        p = [(R[2, 1] - R[1, 2]) / (4 * e1), e1, (R[0, 1] + R[1, 0]) / (4 * e1),
             (R[0, 2] + R[2, 0]) / (4 * e1)]
    elif k == 2:
        e2 = math.sqrt(1 + 2 * R[1, 1] - tr) / 2
        p = [(R[0, 2] - R[2, 0]) / (4 * e2), (R[0, 1] + R[1, 0]) / (4 * e2), e2,
             (R[1, 2] + R[2, 1]) / (4 * e2)]
    else:
        e3 = math.sqrt(1 + 2 * R[2, 2] - tr) / 2
        p = [(R[1, 0] - R[0, 1]) / (4 * e3), (R[0, 2] + R[2, 0]) / (4 * e3),
             (R[1, 2] + R[2, 1]) / (4 * e3), e3]
    pa = np.array(p)
    return -pa if pa[0] < 0 else pa


def _E(p: Any) -> FloatArray:
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]])


def _G(p: Any) -> FloatArray:
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])
