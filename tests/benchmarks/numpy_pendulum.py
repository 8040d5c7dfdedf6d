"""The RN stiff double pendulum written the way a SciPy user writes it: f and df/dy in
NumPy on the index-1 equations of motion, in mbint's coordinates y = (q, q'),
q = (x1, y1, th1, x2, y2, th2) [m, rad] (the same equations as the hand-written C of
``anchor_cvode.c``).

It is the fair peer of mbint for SciPy's solvers (issue 13: "compare with a reasonably
written NumPy model"), unlike ``mbint.testing.reference`` (a slow-on-purpose oracle)
and unlike ``model.rhs`` (mbint's own C kernels, called from Python: a SciPy user does
not have them).  No loops over bodies; one 10 x 10 ``numpy.linalg.solve`` of the
saddle-point system per f, and one with four right-hand sides per J (only the
columns of th1, th2, th1', th2' are non-zero below the identity block).
``test_bench_anchor.py`` checks both against ``model.rhs`` / ``model.jacobian``.
"""
from __future__ import annotations

import math

import numpy as np

M1, M2, L1, L2, G = 3.0, 0.3, 1.0, 1.5, 9.81
K1, C1, K2, C2 = 400.0, 15.0, 3e5, 5e4
J1, J2 = M1 * 4.0 * L1 ** 2 / 12.0, M2 * 4.0 * L2 ** 2 / 12.0
MASS = np.array([M1, M1, J1, M2, M2, J2])


def _wrap(x):
    return x - 2.0 * math.pi * math.ceil((x - math.pi) / (2.0 * math.pi))


def _saddle(q):
    c1, s1, c2, s2 = math.cos(q[2]), math.sin(q[2]), math.cos(q[5]), math.sin(q[5])
    P = np.array([[1.0, 0.0, L1 * s1, 0.0, 0.0, 0.0],
                  [0.0, 1.0, -L1 * c1, 0.0, 0.0, 0.0],
                  [1.0, 0.0, -L1 * s1, -1.0, 0.0, -L2 * s2],
                  [0.0, 1.0, L1 * c1, 0.0, -1.0, L2 * c2]])
    A = np.zeros((10, 10))
    A[np.arange(6), np.arange(6)] = MASS
    A[:6, 6:] = P.T
    A[6:, :6] = P
    return A, (c1, s1, c2, s2)


def _solve(y):
    q, v = y[:6], y[6:]
    A, (c1, s1, c2, s2) = _saddle(q)
    w1, w2 = v[2], v[5]
    T1 = K1 * _wrap(q[2] + math.pi / 2) + C1 * w1
    T2 = K2 * _wrap(q[5] - q[2]) + C2 * (w2 - w1)
    b = np.array([0.0, -M1 * G, -T1 + T2, 0.0, -M2 * G, -T2,
                  -L1 * w1 * w1 * c1, -L1 * w1 * w1 * s1,
                  L1 * w1 * w1 * c1 + L2 * w2 * w2 * c2, L1 * w1 * w1 * s1 + L2 * w2 * w2 * s2])
    return A, np.linalg.solve(A, b), (c1, s1, c2, s2)


def rhs(t, y):
    """f(t, y) = (q', q'') [m/s, rad/s, m/s^2, rad/s^2]."""
    _, x, _ = _solve(y)
    return np.concatenate([y[6:], x[:6]])


def jac(t, y):
    """df/dy (12 x 12) from the differentiated saddle-point system."""
    A, x, (c1, s1, c2, s2) = _solve(y)
    a, lam, v = x[:6], x[6:], y[6:]
    w1, w2 = v[2], v[5]
    R = np.zeros((10, 4))  # right-hand sides for th1, th2, th1', th2'
    R[2, 0] = -K1 - K2 - L1 * (c1 * lam[0] + s1 * lam[1] - c1 * lam[2] - s1 * lam[3])
    R[5, 0] = K2
    R[6:, 0] = [L1 * w1 * w1 * s1 - L1 * c1 * a[2], -L1 * w1 * w1 * c1 - L1 * s1 * a[2],
                -L1 * w1 * w1 * s1 + L1 * c1 * a[2], L1 * w1 * w1 * c1 + L1 * s1 * a[2]]
    R[2, 1] = K2
    R[5, 1] = -K2 + L2 * (c2 * lam[2] + s2 * lam[3])
    R[8:, 1] = [-L2 * w2 * w2 * s2 + L2 * c2 * a[5], L2 * w2 * w2 * c2 + L2 * s2 * a[5]]
    R[2, 2], R[5, 2] = -C1 - C2, C2
    R[6:, 2] = [-2 * L1 * w1 * c1, -2 * L1 * w1 * s1, 2 * L1 * w1 * c1, 2 * L1 * w1 * s1]
    R[2, 3], R[5, 3] = C2, -C2
    R[8:, 3] = [2 * L2 * w2 * c2, 2 * L2 * w2 * s2]
    X = np.linalg.solve(A, R)
    J = np.zeros((12, 12))
    J[np.arange(6), 6 + np.arange(6)] = 1.0
    J[6:, [2, 5, 8, 11]] = X[:6]
    return J
