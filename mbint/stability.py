"""Stability functions R(z) and stability regions {z : |R(z)| <= 1}.

For a one-step method applied to y' = lambda y with z = h lambda,
y_{n+1} = R(z) y_n.  Explicit Runge-Kutta methods use their tableau (the same
data the C kernel integrates with): R(z) = 1 + z b^T (I - z A)^{-1} 1.
The Nystrom midpoint scheme works on q'' = a(q, q'); its amplification is the
spectral radius of its step matrix on the linear oscillator
q'' + 2 beta w q' + w^2 q = 0 whose eigenvalues are z/h and conj(z)/h (LN 7.4).
"""
from __future__ import annotations

import numpy as np

from . import _core
from .methods import resolve


def _erk_R(tab, z):
    A, b = tab["A"], tab["b"]
    s = len(b)
    g = []
    for i in range(s):
        acc = np.ones_like(z)
        for j in range(i):
            acc = acc + A[i, j] * g[j]
        g.append(z * acc)
    R = np.ones_like(z)
    for i in range(s):
        R = R + b[i] * g[i]
    return R


def _nystrom_rho(z):
    # oscillator with eigenvalues z, conj(z) (scaled by h): a = |z|^2 = (h w)^2,
    # b = -2 Re z = 2 beta h w; step matrix on (q, h q')
    a = np.abs(z) ** 2
    b = -2.0 * z.real
    c = a / 2.0 + b
    m11, m12 = 1.0 - a / 2.0, 1.0 - c / 2.0
    m21, m22 = -a, 1.0 - c
    tr = m11 + m22
    det = m11 * m22 - m12 * m21
    disc = np.sqrt((tr * tr - 4.0 * det).astype(complex))
    l1, l2 = (tr + disc) / 2.0, (tr - disc) / 2.0
    return np.where(np.abs(l1) >= np.abs(l2), l1, l2)


def amplification(method, z):
    """Stability function R(z) of ``method`` at complex z (array or scalar).

    For ``nystrom_midpoint`` the dominant eigenvalue of the step matrix on the
    oscillator with eigenvalues z and conj(z) is returned.

    Parameters
    ----------
    method : str
    z : complex or array_like of complex

    Returns
    -------
    complex ndarray of z's shape
    """
    name = resolve(method)
    z = np.asarray(z, dtype=complex)
    if name == "nystrom_midpoint":
        return _nystrom_rho(z)
    try:
        return _core.amplification(name, z)
    except ValueError:
        raise ValueError(f"method: no stability function available for {name!r}.") from None


def amplification_from_tableau(method, z):
    """R(z) computed in Python from the explicit Runge-Kutta tableau the C kernel
    integrates with (an independent check of the C stability function)."""
    return _erk_R(_core.tableau(resolve(method)), np.asarray(z, dtype=complex))


def region(method, re=(-5.0, 1.0), im=(-4.0, 4.0), n=401):
    """|R(z)| on a grid, for contour plots of the stability region (level 1).

    Returns
    -------
    X, Y : ndarray, shape (n, n)
        Real and imaginary parts of z.
    absR : ndarray, shape (n, n)
    """
    x = np.linspace(re[0], re[1], n)
    y = np.linspace(im[0], im[1], n)
    X, Y = np.meshgrid(x, y)
    return X, Y, np.abs(amplification(method, X + 1j * Y))


def imaginary_axis_limit(method, b_max=10.0, n=200001):
    """Largest b such that |R(i s)| <= 1 for all 0 <= s <= b (0 if none):
    the step limit h w < b for an undamped oscillator (LN 7.3: 2.8 for RK4)."""
    s = np.linspace(0.0, b_max, n)
    ok = np.abs(amplification(method, 1j * s)) <= 1.0 + 1e-12
    bad = np.nonzero(~ok)[0]
    return float(s[bad[0] - 1]) if len(bad) and bad[0] > 0 else (0.0 if len(bad) else float(b_max))


def real_axis_limit(method, a_max=10.0, n=200001):
    """Largest a such that |R(-s)| <= 1 for all 0 <= s <= a."""
    s = np.linspace(0.0, a_max, n)
    ok = np.abs(amplification(method, -s)) <= 1.0 + 1e-12
    bad = np.nonzero(~ok)[0]
    return float(s[bad[0] - 1]) if len(bad) and bad[0] > 0 else (0.0 if len(bad) else float(a_max))
