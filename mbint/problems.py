"""Standard test problems: Python right-hand sides, exact solutions where known,
and the same right-hand sides compiled in C (csrc/problems/problems.c) as
:class:`scipy.LowLevelCallable` for runs with no Python per step."""
from __future__ import annotations

import math

import numpy as np
from scipy import LowLevelCallable

from . import _core
from ._typing import ArrayLike, FloatArray, FloatOrArray

G = 9.81

# ---- lecture notes eq 7.7: m x'' = m g - k x - c x', with m = 1, k = 100, c = 1 ----
MSD_M, MSD_K, MSD_C = 1.0, 100.0, 1.0


def mass_spring_damper(t: float, y: FloatArray) -> FloatArray:
    """Mass-spring-damper of LN eq 7.7 (m = 1 kg, k = 100 N/m, c = 1 N s/m, g = 9.81)."""
    return np.array([y[1], G - MSD_K / MSD_M * y[0] - MSD_C / MSD_M * y[1]])


def mass_spring_damper_exact(t: ArrayLike) -> FloatArray:
    """Closed form of :func:`mass_spring_damper` from rest, y0 = (0, 0); shape (2, len(t))."""
    t = np.asarray(t, float)
    w0 = math.sqrt(MSD_K / MSD_M)
    a = MSD_C / (2.0 * MSD_M)          # beta * w0
    wd = math.sqrt(w0 * w0 - a * a)
    xe = G * MSD_M / MSD_K
    e = np.exp(-a * t)
    x = xe - e * (xe * np.cos(wd * t) + a * xe / wd * np.sin(wd * t))
    v = e * xe * (a * a / wd + wd) * np.sin(wd * t)
    return np.array([x, v])


def pendulum(t: float, y: FloatArray) -> FloatArray:
    """Undamped pendulum, L = 1 m: theta'' = -g sin(theta); y = (theta, theta')."""
    return np.array([y[1], -G * math.sin(y[0])])


def pendulum_energy(y: FloatArray) -> FloatOrArray:
    """Energy per unit mass of :func:`pendulum` (constant along exact solutions)."""
    y = np.asarray(y, float)
    return 0.5 * y[1] ** 2 + G * (1.0 - np.cos(y[0]))


def oscillator(t: float, y: FloatArray) -> FloatArray:
    """q'' = -q; exact solution (cos t, -sin t) from (1, 0)."""
    return np.array([y[1], -y[0]])


def damped_oscillator(t: float, y: FloatArray, beta: float = 0.1, w: float = 1.0) -> FloatArray:
    """q'' + 2 beta w q' + w^2 q = 0 (velocity-dependent: Nystrom midpoint is order 1)."""
    return np.array([y[1], -w * w * y[0] - 2.0 * beta * w * y[1]])


def exp_decay(t: float, y: FloatArray) -> FloatArray:
    """y' = -y."""
    return -y


# ---- Arenstorf orbit (Hairer, Norsett, Wanner I, II.0) ----
ARENSTORF_MU = 0.012277471
ARENSTORF_Y0 = np.array([0.994, 0.0, 0.0, -2.00158510637908252240537862224])
ARENSTORF_T = 17.0652165601579625588917206249


def arenstorf(t: float, y: FloatArray) -> FloatArray:
    """Restricted three-body problem; periodic with period ARENSTORF_T from ARENSTORF_Y0."""
    mu = ARENSTORF_MU
    mp = 1.0 - mu
    d1 = ((y[0] + mu) ** 2 + y[1] ** 2) ** 1.5
    d2 = ((y[0] - mp) ** 2 + y[1] ** 2) ** 1.5
    return np.array([
        y[2], y[3],
        y[0] + 2.0 * y[3] - mp * (y[0] + mu) / d1 - mu * (y[0] - mp) / d2,
        y[1] - 2.0 * y[2] - mp * y[1] / d1 - mu * y[1] / d2,
    ])


# ---- stiff problems (Hairer & Wanner II, IV.10; the IVP test set) ----
def van_der_pol(t: float, y: FloatArray, mu: float = 1000.0) -> FloatArray:
    """Van der Pol: y1' = y2, y2' = mu ((1 - y1^2) y2 - y1); stiff for mu >> 1."""
    return np.array([y[1], mu * ((1.0 - y[0] ** 2) * y[1] - y[0])])


def van_der_pol_jac(t: float, y: FloatArray, mu: float = 1000.0) -> FloatArray:
    return np.array([[0.0, 1.0], [mu * (-2.0 * y[0] * y[1] - 1.0), mu * (1.0 - y[0] ** 2)]])


VDP_Y0 = np.array([2.0, 0.0])
VDP_SCALED_EPS = 1e-6


def van_der_pol_scaled(t: float, y: FloatArray, eps: float = VDP_SCALED_EPS) -> FloatArray:
    """Scaled form y1' = y2, y2' = ((1 - y1^2) y2 - y1) / eps (mu = 1/sqrt(eps) = 1000,
    t -> t/mu; eps = 1e-6 corresponds to mu^2 = 1e6), y0 = (2, -0.66), t in [0, 2]."""
    return np.array([y[1], ((1.0 - y[0] ** 2) * y[1] - y[0]) / eps])


def van_der_pol_scaled_jac(t: float, y: FloatArray, eps: float = VDP_SCALED_EPS) -> FloatArray:
    return np.array([[0.0, 1.0], [(-2.0 * y[0] * y[1] - 1.0) / eps, (1.0 - y[0] ** 2) / eps]])


VDP_SCALED_Y0 = np.array([2.0, -0.66])


def robertson(t: float, y: FloatArray) -> FloatArray:
    """Robertson's chemical kinetics, y0 = (1, 0, 0), t up to 1e5 (or 1e11)."""
    f0 = -0.04 * y[0] + 1e4 * y[1] * y[2]
    f2 = 3e7 * y[1] ** 2
    return np.array([f0, -f0 - f2, f2])


def robertson_jac(t: float, y: FloatArray) -> FloatArray:
    return np.array([[-0.04, 1e4 * y[2], 1e4 * y[1]],
                     [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                     [0.0, 6e7 * y[1], 0.0]])


ROBERTSON_Y0 = np.array([1.0, 0.0, 0.0])


def hires(t: float, y: FloatArray) -> FloatArray:
    """HIRES (Schafer 1975), 8 components, y0 = HIRES_Y0, t in [0, 321.8122]."""
    f6 = 280.0 * y[5] * y[7] - 1.81 * y[6]
    return np.array([
        -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007,
        1.71 * y[0] - 8.75 * y[1],
        -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4],
        8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3],
        -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6],
        -280.0 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6],
        f6,
        -f6,
    ])


def hires_jac(t: float, y: FloatArray) -> FloatArray:
    """The Jacobian of :func:`hires`, 8 x 8."""
    J = np.zeros((8, 8))
    J[0, 0], J[0, 1], J[0, 2] = -1.71, 0.43, 8.32
    J[1, 0], J[1, 1] = 1.71, -8.75
    J[2, 2], J[2, 3], J[2, 4] = -10.03, 0.43, 0.035
    J[3, 1], J[3, 2], J[3, 3] = 8.32, 1.71, -1.12
    J[4, 4], J[4, 5], J[4, 6] = -1.745, 0.43, 0.43
    J[5, 3], J[5, 4], J[5, 5], J[5, 6], J[5, 7] = (0.69, 1.71, -280.0 * y[7] - 0.43, 0.69,
                                                   -280.0 * y[5])
    J[6, 5], J[6, 6], J[6, 7] = 280.0 * y[7], -1.81, 280.0 * y[5]
    J[7] = -J[6]
    return J


HIRES_Y0 = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0057])
HIRES_T = 321.8122

C_PROBLEMS = ("arenstorf", "mass_spring_damper", "pendulum", "exp_decay", "oscillator",
              "vdp1000", "vdp_scaled", "robertson", "hires")
C_JACOBIANS = ("vdp1000", "vdp_scaled", "robertson", "hires")


def c_rhs(name: str) -> LowLevelCallable:
    """The C right-hand side of problem ``name`` as a LowLevelCallable.

    Parameters
    ----------
    name : str
        One of ``C_PROBLEMS``.
    """
    if name not in C_PROBLEMS:
        raise ValueError(f"name: unknown C problem {name!r}; known: {', '.join(C_PROBLEMS)}.")
    return LowLevelCallable(_core.c_problem(name))


def c_jac(name: str) -> LowLevelCallable:
    """The analytic C Jacobian of stiff problem ``name`` (one of ``C_JACOBIANS``) as a
    LowLevelCallable, for ``jac=``."""
    if name not in C_JACOBIANS:
        raise ValueError(f"name: no C Jacobian for {name!r}; known: {', '.join(C_JACOBIANS)}.")
    return LowLevelCallable(_core.c_problem_jac(name))
