"""Stability functions R(z) and stability regions {z : ``|R(z)|`` <= 1}.

For a one-step method applied to y' = lambda y with z = h lambda,
y_{n+1} = R(z) y_n.  Explicit Runge-Kutta methods use their tableau (the same
data the C kernel integrates with): R(z) = 1 + z b^T (I - z A)^{-1} 1.
The Nystrom midpoint scheme works on q'' = a(q, q'); its amplification is the
spectral radius of its step matrix on the linear oscillator
q'' + 2 beta w q' + w^2 q = 0 whose eigenvalues are z/h and conj(z)/h (LN 7.4).

Multistep methods (LN 7.8: Adams-Bashforth, Adams-Moulton, the Adams PECE pair of
ode113, BDF) are not one-step maps: their stability at z is the spectral radius of
the roots of the characteristic polynomial (:func:`multistep_amplification`), and
the boundary of the region lies on the boundary locus
(:func:`multistep_region_boundary`).  Their coefficients are computed here exactly
(:func:`multistep_coefficients`), independently of the C kernels.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from . import _core
from .methods import resolve
from ._typing import ArrayLike, ComplexArray, FloatArray


def _erk_R(tab: dict[str, Any], z: Any) -> Any:
    A, b = tab["A"], tab["b"]
    s = len(b)
    g: list[Any] = []
    for i in range(s):
        acc = np.ones_like(z)
        for j in range(i):
            acc = acc + A[i, j] * g[j]
        g.append(z * acc)
    R = np.ones_like(z)
    for i in range(s):
        R = R + b[i] * g[i]
    return R


def _nystrom_rho(z: Any) -> Any:
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


def amplification(method: str, z: ArrayLike) -> ComplexArray:
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


def amplification_from_tableau(method: str, z: ArrayLike) -> ComplexArray:
    """R(z) computed in Python from the explicit Runge-Kutta tableau the C kernel
    integrates with (an independent check of the C stability function)."""
    return _erk_R(_core.tableau(resolve(method)), np.asarray(z, dtype=complex))


def region(method: str, re: tuple[float, float] = (-5.0, 1.0),
           im: tuple[float, float] = (-4.0, 4.0),
           n: int = 401) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``|R(z)|`` on a grid, for contour plots of the stability region (level 1).

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


def imaginary_axis_limit(method: str, b_max: float = 10.0, n: int = 200001) -> float:
    """Largest b such that ``|R(i s)|`` <= 1 for all 0 <= s <= b (0 if none):
    the step limit h w < b for an undamped oscillator (LN 7.3: 2.8 for RK4)."""
    s = np.linspace(0.0, b_max, n)
    ok = np.abs(amplification(method, 1j * s)) <= 1.0 + 1e-12
    bad = np.nonzero(~ok)[0]
    return float(s[bad[0] - 1]) if len(bad) and bad[0] > 0 else (0.0 if len(bad) else float(b_max))


def real_axis_limit(method: str, a_max: float = 10.0, n: int = 200001) -> float:
    """Largest a such that ``|R(-s)|`` <= 1 for all 0 <= s <= a."""
    s = np.linspace(0.0, a_max, n)
    ok = np.abs(amplification(method, -s)) <= 1.0 + 1e-12
    bad = np.nonzero(~ok)[0]
    return float(s[bad[0] - 1]) if len(bad) and bad[0] > 0 else (0.0 if len(bad) else float(a_max))


# --- linear multistep methods and Adams PECE pairs (LN 7.8) -------------------------
#
# With z = h lambda and y_n ~ zeta^n, a k-step method applied to y' = lambda y has
# the characteristic polynomial pi(zeta, z) = P0(zeta) + z P1(zeta) + z^2 P2(zeta):
# for a linear multistep method P0 = rho, P1 = -sigma, P2 = 0; for an Adams PECE
# pair P2 != 0 because the predicted value enters the corrector.  The method is
# stable at z when every root zeta of pi(., z) has |zeta| <= 1 (simple roots on
# the unit circle), so |R| is replaced by the spectral radius max |zeta|.

MULTISTEP_METHODS = ("bdf", "adams_bashforth", "adams_moulton", "pece")
MULTISTEP_MAX_ORDER = {"bdf": 6, "adams_bashforth": 12, "adams_moulton": 12, "pece": 12}
_MULTISTEP_ALIASES = {"ab": "adams_bashforth", "am": "adams_moulton", "abm": "pece",
                      "adams_pece": "pece"}


def _multistep_name(method: str, order: int) -> tuple[str, int]:
    if not isinstance(method, str):
        raise ValueError(f"method must be a string, got {type(method).__name__}.")
    name = _MULTISTEP_ALIASES.get(method.lower(), method.lower())
    if name not in MULTISTEP_METHODS:
        raise ValueError(f"method: {method!r} is not one of {', '.join(MULTISTEP_METHODS)}.")
    top = MULTISTEP_MAX_ORDER[name]
    if isinstance(order, bool) or int(order) != order or not 1 <= order <= top:
        raise ValueError(f"order: {name} is defined here for orders 1 to {top}, got {order!r}.")
    return name, int(order)


def _poly_mul(p: Sequence[Fraction], q: Sequence[Fraction]) -> list[Fraction]:
    """Product of two polynomials given as coefficient lists, lowest power first."""
    out = [Fraction(0)] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        for j, b in enumerate(q):
            out[i + j] += a * b
    return out


def _quadrature_weights(nodes: Sequence[Any]) -> list[Fraction]:
    """Exact weights w with sum_m w_m p(s_m) = int_0^1 p(s) ds for deg p < len(nodes).

    The nodes are in units of h from t_n (s = 1 is t_{n+1}, s = -j is t_{n-j}):
    integrating the interpolating polynomial of f over one step is the Adams idea
    (LN 7.8, figures 7.17 and 7.18).
    """
    nodes = [Fraction(s) for s in nodes]
    weights = []
    for m, sm in enumerate(nodes):
        basis, denom = [Fraction(1)], Fraction(1)
        for j, sj in enumerate(nodes):
            if j != m:
                basis = _poly_mul(basis, [-sj, Fraction(1)])
                denom *= sm - sj
        weights.append(sum(c / (p + 1) for p, c in enumerate(basis)) / denom)
    return weights


def _adams(order: int, implicit: bool) -> tuple[list[Fraction], list[Fraction]]:
    """(alpha, beta) of the Adams-Bashforth (explicit) or -Moulton method of ``order``.

    Adams-Bashforth of order k uses f_n, ..., f_{n-k+1} (k steps); Adams-Moulton
    of order k uses f_{n+1}, ..., f_{n-k+2} (max(k - 1, 1) steps; order 1 is
    backward Euler, order 2 the trapezoidal rule).
    """
    if implicit:
        steps = max(order - 1, 1)
        nodes = [1 - m for m in range(order)]         # f_{n+1}, f_n, ...
    else:
        steps = order
        nodes = [-m for m in range(order)]            # f_n, f_{n-1}, ...
    w = _quadrature_weights(nodes)
    alpha = [Fraction(0)] * (steps + 1)
    alpha[steps], alpha[steps - 1] = Fraction(1), Fraction(-1)
    beta = [Fraction(0)] * (steps + 1)
    for s, wm in zip(nodes, w):                       # f_{n+s} multiplies zeta^(steps - 1 + s)
        beta[steps - 1 + s] += wm
    return alpha, beta


def _bdf(order: int) -> tuple[list[Fraction], list[Fraction]]:
    """(alpha, beta) of BDF ``order``: sum_{j=1}^{k} (1/j) nabla^j y_{n+1} = h f_{n+1},
    normalized to alpha_k = 1."""
    k = order
    rho = [Fraction(0)] * (k + 1)
    for j in range(1, k + 1):
        term = [Fraction(1, j)]
        for _ in range(j):
            term = _poly_mul(term, [Fraction(-1), Fraction(1)])        # (zeta - 1)^j
        for i, c in enumerate(term):                                     # times zeta^(k - j)
            rho[i + k - j] += c
    lead = rho[k]
    alpha = [c / lead for c in rho]
    beta = [Fraction(0)] * k + [1 / lead]
    return alpha, beta


def multistep_coefficients(method: str, order: int) -> tuple[list[Fraction], list[Fraction]]:
    """Coefficients of a linear multistep method, exact fractions.

    The method is sum_i alpha_i y_{n+1-k+i} = h sum_i beta_i f_{n+1-k+i}
    (i = 0..k, k steps, alpha_k = 1), i.e. rho(zeta) = sum alpha_i zeta^i and
    sigma(zeta) = sum beta_i zeta^i.

    Parameters
    ----------
    method : {"bdf", "adams_bashforth", "adams_moulton"}
        ``"pece"`` is a pair of two such methods: ask for its predictor
        (``"adams_bashforth"``, ``order``) and corrector (``"adams_moulton"``,
        ``order + 1``).
    order : int

    Returns
    -------
    alpha, beta : list of fractions.Fraction, length k + 1, lowest power first

    Examples
    --------
    BDF2 (LN "Finally"): y_{n+1} = -1/3 y_{n-1} + 4/3 y_n + 2/3 h f_{n+1}:
    ``alpha = [1/3, -4/3, 1]``, ``beta = [0, 0, 2/3]``.
    """
    name, order = _multistep_name(method, order)
    if name == "bdf":
        return _bdf(order)
    if name == "pece":
        raise ValueError("method: a PECE pair has no single (alpha, beta); take the predictor "
                         "('adams_bashforth', order) and the corrector ('adams_moulton', "
                         "order + 1).")
    return _adams(order, implicit=(name == "adams_moulton"))


def _char_poly(method: str, order: int) -> Any:
    """P0, P1, P2 (float arrays, lowest power of zeta first) with
    pi(zeta, z) = P0 + z P1 + z^2 P2."""
    name, order = _multistep_name(method, order)
    if name != "pece":
        alpha, beta = multistep_coefficients(name, order)
        P0 = np.array([float(a) for a in alpha])
        P1 = -np.array([float(b) for b in beta])
        return P0, P1, np.zeros_like(P0)
    # PECE (LN 7.8, ode113): predict with Adams-Bashforth of order k, evaluate,
    # correct with Adams-Moulton of order k + 1, evaluate.  Both use k steps:
    #   y_p     = y_n + h sum_j b_j f_{n-j}
    #   y_{n+1} = y_n + h (c_0 f(y_p) + sum_j c_{j+1} f_{n-j})
    # so pi = rho - z sigma_C + c_0 z (rho - z sigma_P) with rho = zeta^k - zeta^(k-1).
    a_p, b_p = _adams(order, implicit=False)
    a_c, b_c = _adams(order + 1, implicit=True)
    rho = np.array([float(a) for a in a_p])
    sig_p = np.array([float(b) for b in b_p])
    sig_c = np.array([float(b) for b in b_c])
    c0 = float(b_c[-1])
    return rho, -sig_c + c0 * rho, -c0 * sig_p


def multistep_amplification(method: str, order: int, z: ArrayLike) -> FloatArray:
    """Spectral radius of the characteristic roots of a multistep method at z.

    The stability region is {z : rho(z) <= 1}; on its boundary one root has
    modulus 1.  Where the leading coefficient of the characteristic polynomial
    vanishes (a root at infinity) the result is inf.

    Parameters
    ----------
    method : {"bdf", "adams_bashforth", "adams_moulton", "pece"}
        Aliases ``"ab"``, ``"am"``, ``"abm"``.  ``"pece"`` of order k predicts
        with Adams-Bashforth of order k and corrects with Adams-Moulton of order
        k + 1 (LN 7.8; MATLAB's ode113), evaluating f after each.
    order : int
        1-6 for BDF, 1-12 for the Adams methods.
    z : complex or array_like of complex
        z = h lambda.

    Returns
    -------
    float ndarray of z's shape
    """
    P0, P1, P2 = _char_poly(method, order)
    z = np.asarray(z, dtype=complex)
    zz = z[..., None]
    c = P0 + zz * P1 + zz * zz * P2                      # shape z.shape + (k + 1,)
    k = c.shape[-1] - 1
    lead = c[..., k]
    scale = np.max(np.abs(c), axis=-1)
    dead = np.abs(lead) <= 1e-14 * scale
    lead = np.where(dead, 1.0, lead)
    monic = c[..., :k] / lead[..., None]
    if k == 1:
        rad = np.abs(monic[..., 0])
    else:
        comp = np.zeros(z.shape + (k, k), dtype=complex)
        comp[..., np.arange(1, k), np.arange(k - 1)] = 1.0
        comp[..., :, k - 1] = -monic
        rad = np.max(np.abs(np.linalg.eigvals(comp)), axis=-1)
    return np.where(dead, np.inf, rad)


def multistep_region(method: str, order: int, re: tuple[float, float] = (-5.0, 1.0),
                     im: tuple[float, float] = (-4.0, 4.0),
                     n: int = 401) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Spectral radius on a grid, for contour plots of a multistep stability region
    (level 1); the multistep counterpart of :func:`region`.

    Returns
    -------
    X, Y : ndarray, shape (n, n)
    rho : ndarray, shape (n, n)
    """
    x = np.linspace(re[0], re[1], n)
    y = np.linspace(im[0], im[1], n)
    X, Y = np.meshgrid(x, y)
    return X, Y, multistep_amplification(method, order, X + 1j * Y)


def multistep_region_boundary(method: str, order: int, n: int = 2000) -> ComplexArray:
    """Boundary locus: the z at which a characteristic root is zeta = e^{i theta}.

    The boundary of the stability region is part of this curve (the curve may also
    run inside the unstable set; fill regions with :func:`multistep_amplification`).
    For BDF of order k, z(theta) = sum_{j=1}^{k} (1/j) (1 - e^{-i theta})^j; for an
    Adams method z = rho(zeta) / sigma(zeta); for a PECE pair pi(zeta, z) = 0 is
    quadratic in z and both branches are returned.  Every curve passes through
    z = 0 (theta = 0, the consistent root zeta = 1).

    Parameters
    ----------
    method : {"bdf", "adams_bashforth", "adams_moulton", "pece"}
        See :func:`multistep_amplification` (``"pece"`` of order k: predictor
        Adams-Bashforth k, corrector Adams-Moulton k + 1).
    order : int
    n : int
        Points per branch, theta = linspace(0, 2 pi, n).

    Returns
    -------
    complex ndarray
        Shape (n,) for a linear multistep method; shape (2 n + 1,) for a PECE pair:
        the two branches separated by one NaN, so that ``plot(z.real, z.imag)``
        draws them as two lines.  A branch that goes to infinity is NaN there.
    """
    name, order = _multistep_name(method, order)
    theta = np.linspace(0.0, 2.0 * np.pi, int(n))
    zeta = np.exp(1j * theta)
    if name == "bdf":
        w = 1.0 - 1.0 / zeta
        return sum(w**j / j for j in range(1, order + 1))
    P0, P1, P2 = (np.polynomial.polynomial.polyval(zeta, p) for p in _char_poly(name, order))
    if name != "pece":
        with np.errstate(divide="ignore", invalid="ignore"):
            z = -P0 / P1
        return np.where(np.isfinite(z), z, np.nan + 0j)
    # P2 z^2 + P1 z + P0 = 0; a square root continuous in theta keeps each branch
    # a continuous curve
    disc = P1 * P1 - 4.0 * P0 * P2
    sq = np.sqrt(np.abs(disc)) * np.exp(0.5j * np.unwrap(np.angle(disc)))
    with np.errstate(divide="ignore", invalid="ignore"):
        small = np.abs(P2) <= 1e-14 * (np.abs(P0) + np.abs(P1))
        # z = 2 P0 / (-P1 -+ sq) is the same root, and stays finite as P2 -> 0
        z1 = np.where(small, -P0 / P1, (-P1 + sq) / (2.0 * P2))
        z2 = np.where(small, np.nan, (-P1 - sq) / (2.0 * P2))
    z1 = np.where(np.isfinite(z1), z1, np.nan + 0j)
    z2 = np.where(np.isfinite(z2), z2, np.nan + 0j)
    return np.concatenate([z1, [np.nan + 0j], z2])


def bdf_stability_angle(order: int, n: int = 20001) -> float:
    """A(alpha) angle of BDF ``order`` in degrees (90 for the A-stable orders 1, 2).

    The stability region of BDF is the exterior of its boundary locus, so the
    largest sector |arg(-z)| < alpha inside it is bounded by the locus point of
    largest |arg z|: alpha = 180 - max_theta |arg z(theta)|, found on a grid of
    ``n`` points in [1e-3, pi] (the curve is symmetric) and refined on a second
    grid around the maximum.  Near theta = 0, z = i theta + O(theta^(k+1)) and
    |arg z| tends to 90 degrees, which bounds alpha by 90.
    """
    name, order = _multistep_name("bdf", order)

    def arg_max(lo: float, hi: float) -> tuple[Any, int, Any]:
        theta = np.linspace(lo, hi, int(n))
        w = 1.0 - np.exp(-1j * theta)
        a = np.abs(np.angle(sum(w**j / j for j in range(1, order + 1))))
        i = int(np.argmax(a))
        return theta, i, a[i]

    theta0 = 1e-3
    theta, i, _ = arg_max(theta0, np.pi)
    d = theta[1] - theta[0]
    _, _, a = arg_max(max(theta[i] - d, theta0), min(theta[i] + d, np.pi))
    return float(min(90.0, 180.0 - np.degrees(a)))


# --- the singular-perturbation scheme (SP paper, eqs 48-59) -------------------------
#
# The test system of SP eq 50, x' = lambda_s x + mu z, z' = delta x + lambda_f z, with
# alpha = lambda_f / lambda_s, beta = delta / lambda_f = mu / lambda_s and xi = h
# lambda_s (eq 51): one step of the scheme is (x, z) <- M (x, z) (eq 57), stable where
# the spectral radius rho(M) <= 1 (eq 58).


def _rk4_R(s: Any) -> Any:
    return 1.0 + s + s * s / 2.0 + s ** 3 / 6.0 + s ** 4 / 24.0


def sp_step_matrix(xi: ArrayLike, alpha: float, beta: float) -> ComplexArray:
    """The step matrix M of the singular-perturbation scheme on the test system (SP
    eqs 55-57).

    Eq 55 prints M12 = beta (e^{alpha xi} - 1) - ...; the step gives
    ``(beta / alpha) (e^{alpha xi} - 1)``: mu int y with sigma = z_n + beta x_n
    contributes (mu / lambda_f) (e^{lambda_f h} - 1) z_n and mu / lambda_f =
    beta / alpha, as the first term of the printed M11 has it (beta^2 / alpha).  This
    corrected M12 is used (and enters M22); M11, M21 and M22 are as printed.
    tests/test_singular_perturbation.py checks M against the implemented step.

    Parameters
    ----------
    xi : complex or array_like of complex
        xi = h lambda_s.
    alpha, beta : float or complex
        alpha = lambda_f / lambda_s (alpha != 0, alpha + beta^2 != 0), beta the coupling.

    Returns
    -------
    complex ndarray, shape xi.shape + (2, 2)
        M with (x_{n+1}, z_{n+1}) = M (x_n, z_n); at xi = 0 the identity.
    """
    xi = np.asarray(xi, dtype=complex)
    a, b = complex(alpha), complex(beta)
    if a == 0 or a + b * b == 0:
        raise ValueError("alpha: need alpha != 0 and alpha + beta^2 != 0.")
    zero = xi == 0
    x = np.where(zero, 1.0, xi)
    ab = a + b * b
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(a * x)
        E = np.exp(ab * x)
        q = a * x - e + 1.0
        M11 = _rk4_R((1.0 - b * b) * x) + b * b / a * (e - 1.0) - b * b / a ** 2 * q
        M12 = b / a * (e - 1.0) - b ** 3 / a ** 2 * q
        c = b * (b * b - 1.0)
        M21 = (-b * M11 + b * E + c * (M11 - E) / ab
               - c * (E - 1.0) * (M11 - 1.0) / (ab * ab * x))
        M22 = -b * M12 + E + M12 * c / ab - M12 * c * (E - 1.0) / (ab * ab * x)
    M = np.stack([np.stack([M11, M12], -1), np.stack([M21, M22], -1)], -2)
    M[zero] = np.eye(2)
    return M


def sp_spectral_radius(xi: ArrayLike, alpha: float, beta: float) -> FloatArray:
    """rho(M) of the singular-perturbation scheme on the test system (SP eq 58): the
    scheme is absolutely stable at xi = h lambda_s where it is <= 1.

    Returns
    -------
    float ndarray of xi's shape (inf where M overflows: far in the right half plane)
    """
    M = sp_step_matrix(xi, alpha, beta)
    with np.errstate(over="ignore", invalid="ignore"):
        tr = M[..., 0, 0] + M[..., 1, 1]
        det = M[..., 0, 0] * M[..., 1, 1] - M[..., 0, 1] * M[..., 1, 0]
        d = np.sqrt(tr * tr - 4.0 * det)
        r = np.maximum(np.abs(tr + d), np.abs(tr - d)) / 2.0
    return np.where(np.isfinite(r), r, np.inf)


def sp_region(alpha: float, beta: float, re: tuple[float, float] = (-4.0, 1.0),
              im: tuple[float, float] = (0.0, 4.0),
              n: int = 401) -> tuple[FloatArray, FloatArray, FloatArray]:
    """rho(M) on a grid of xi = h lambda_s, for contour plots of the stability region
    of the singular-perturbation scheme (level 1; SP Figs 2 and 3 show the upper half).

    Returns
    -------
    X, Y : ndarray, shape (n, n)
        Real and imaginary parts of xi.
    rho : ndarray, shape (n, n)
    """
    x = np.linspace(re[0], re[1], n)
    y = np.linspace(im[0], im[1], n)
    X, Y = np.meshgrid(x, y)
    return X, Y, sp_spectral_radius(X + 1j * Y, alpha, beta)


def sp_real_axis_limit(alpha: float, beta: float, a_max: float = 10.0, n: int = 100001) -> float:
    """Largest a with rho(M(-s)) <= 1 for all 0 < s <= a (the stability interval on the
    negative real axis of xi)."""
    s = np.linspace(0.0, a_max, n)[1:]
    ok = sp_spectral_radius(-s + 0j, alpha, beta) <= 1.0 + 1e-12
    bad = np.nonzero(~ok)[0]
    return float(s[bad[0] - 1]) if len(bad) and bad[0] > 0 else (0.0 if len(bad) else float(a_max))


# ---- the L-stable block methods of the LS paper (csrc/methods/block_lstable.c) ----
def block_coefficients(method: str = "lstable_block", r: int | None = None,
                       nodes: str | None = None,
                       pade: tuple[int, int] | None = None) -> dict[str, Any]:
    """B, d of the block method's solution formula (LS eq 5) for h = 1.

    Computed by the C kernel (csrc/methods/block_lstable.c) from eq 9 with the
    constants mu_i chosen so that R(z) (eq 7) is the (k, j) Pade approximant of e^z.

    Parameters
    ----------
    method : {"lstable_block", "astable_block"}
    r : int, optional
        Nodes per step, 2..6 (default 4).
    nodes : {"equidistant", "chebyshev", "legendre"}, optional
    pade : (int, int), optional
        The Pade approximant (k, j) matched (default: (r - 2, r) for
        ``lstable_block``, (r, r) for ``astable_block``).

    Returns
    -------
    dict
        ``B`` (r, r), ``d`` (r,), ``c`` (r,) the nodes (c_i - t_k) / h, ``mu`` (r,)
        the constants of eq 8, ``k``, ``j``, ``order`` (classical order of the
        method) and ``stage_order``.
    """
    opts = {key: v for key, v in (("r", r), ("nodes", nodes), ("pade", pade)) if v is not None}
    return _core.block_coefficients(resolve(method), opts)


def block_amplification(z: ArrayLike, method: str = "lstable_block", r: int | None = None,
                        nodes: str | None = None,
                        pade: tuple[int, int] | None = None) -> ComplexArray:
    """R(z) = e_r^T (I - z B)^-1 (e + z d) (LS eq 7) of a block method, evaluated in
    Python from :func:`block_coefficients` (complex ndarray of z's shape)."""
    co = block_coefficients(method, r, nodes, pade)
    B, d = np.asarray(co["B"]), np.asarray(co["d"])
    n = len(d)
    z = np.asarray(z, dtype=complex)
    out = np.empty(z.shape, complex)
    for i, zi in np.ndenumerate(z):
        x = np.linalg.solve(np.eye(n) - zi * B, np.ones(n) + zi * d)
        out[i] = x[-1]
    return out
