"""The pendulum with a particle on a spring of the SP paper: Gil, Sanfelice,
Nikravesh, *Numerical Integration Scheme Using Singular Perturbation Method*
(DETC2013), eqs 63-68."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..mbs.outputs import Coordinate
from ..mbs.planar import PlanarModel

__all__ = ["pendulum_particle"]

G = 9.81


def _tip_of(q, h):
    """(x, y) of the bar's tip, shape (2,) or (2, m) for q of shape (nq,) or (nq, m)."""
    th = q[2]
    return np.stack([q[0] + h * np.sin(th), q[1] - h * np.cos(th)])


def _particle_offset(t, q, qd, h):
    """Distance [m] of the particle from the bar's tip (the spring's length)."""
    return np.linalg.norm(q[3:5] - _tip_of(q, h), axis=0)


def _tip_height(t, q, qd, h):
    """Height of the bar's tip [m]."""
    return _tip_of(q, h)[1]


def _energy(q, qd, m1, J1, m2, k, h):
    """Eq 68: total energy [J]."""
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    d = q[3:5] - _tip_of(q, h)
    return 0.5 * m1 * (qd[0] ** 2 + qd[1] ** 2) + 0.5 * J1 * qd[2] ** 2 \
        + 0.5 * m2 * (qd[3] ** 2 + qd[4] ** 2) \
        + G * (m1 * q[1] + m2 * q[4]) + 0.5 * k * (d ** 2).sum(0)


def pendulum_particle(theta0: float = math.pi / 2, m1: float = 100.0, J1: float = 100.0,
                      L: float = 1.0, m2: float = 1e-5, k: float = 5.0) -> PlanarModel:
    """SP paper eqs 63-68: a bar pendulum with a light particle on a spring at its tip.

    Printed parameters, used as printed: m1 = 100, J1 = 100, L = 1, m2 = 1e-5,
    k = 5, g = (0, -9.81); step h = 0.005 in the paper's comparison (RK4
    unstable, the SP method stable).  Geometry of eq 63-64: the bar (body 1)
    turns by theta about a pin at the origin, its centre of mass at
    r1 = s = (L/2 sin theta, -L/2 cos theta) (theta from the downward vertical),
    so in the bar's frame the pin is at (0, L/2) and the tip at (0, -L/2); the
    particle (body 2) is tied to the tip by a zero-length spring,
    f_s = k (r2 - (r1 + s)).

    Choices:

    - the paper does not print the initial state: theta(0) = pi/2 (bar
      horizontal) at rest, and the particle on the slow manifold of eq 67,
      r2 = r1 + s - (m2 / k) g, moving with the tip (at rest);
    - a body needs a rotational inertia: the particle gets J2 = 1e-5 kg m^2.
      No torque acts on it (the spring is attached at its centre), so its
      angle stays 0 and J2 does not affect the motion;
    - the spring is a TSDA of free length 0 (its force k (r2 - tip) is smooth
      through zero length).

    The fast mode is the particle on the spring, sqrt(k / m2) ~ 707 rad/s (the
    paper writes lambda_f ~ (k / m2) i = 5e5 i; with h = 0.005, h |lambda_f| = 3.5
    is still outside RK4's stability interval on the imaginary axis, 2.83, so
    RK4 is unstable as the paper says).

    Returns
    -------
    PlanarModel
        Outputs ``theta`` (the bar's angle), ``particle_offset`` (|r2 - tip|),
        ``particle_height`` (y of the particle), ``tip_height``.
        ``reference_energy`` is eq 68.
    """
    h = L / 2.0
    s = np.array([h * math.sin(theta0), -h * math.cos(theta0)])
    r1 = s
    tip = r1 + s
    r2 = tip - (m2 / k) * np.array([0.0, -G])
    m = PlanarModel(gravity=(0.0, -G), name="sp_pendulum_particle")
    bar = m.add_body(m1, J1, q=(r1[0], r1[1], theta0), name="bar")
    particle = m.add_body(m2, 1e-5, q=(r2[0], r2[1], 0.0), name="particle")
    m.add_revolute(m.ground, (0.0, 0.0), bar, (0.0, h), name="pin")
    m.add_spring_damper(bar, (0.0, -h), particle, (0.0, 0.0), k=k, c=0.0, length0=0.0,
                        name="spring")

    m.add_output("theta", Coordinate(2), unit="rad")
    m.add_output("particle_offset", partial(_particle_offset, h=h), unit="m")
    m.add_output("particle_height", Coordinate(4), unit="m")
    m.add_output("tip_height", partial(_tip_height, h=h), unit="m")
    m.reference_energy = partial(_energy, m1=m1, J1=J1, m2=m2, k=k, h=h)
    m.description = ("Bar pendulum (m1 = 100, J1 = 100, L = 1) with a particle m2 = 1e-5 on a "
                     "spring k = 5 at its tip (SP paper, eqs 63-68).")
    m.reference = "Gil, Sanfelice, Nikravesh, SP paper (DETC2013), eqs 63-68, Figs 6-8"
    m.t_span = (0.0, 5.0)
    m.settings = dict(rtol=1e-6, atol=1e-9)
    return m
