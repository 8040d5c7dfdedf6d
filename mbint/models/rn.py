"""The stiff double pendulum of the RN paper: Sandu, Negrut, Haug, Potra, Sandu,
*Rosenbrock-Nystrom Integrators for SODE of Multibody Dynamics*, section 5.1."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..mbs.outputs import Coordinate
from ..mbs.planar import PlanarModel

__all__ = ["stiff_double_pendulum"]

G = 9.81


def _wrap(a):
    """Angle wrapped to (-pi, pi]."""
    return np.pi - np.mod(np.pi - np.asarray(a, float), 2 * np.pi)


def _theta1_mod(t, q, qd):
    """theta1 mod 2 pi [rad] (the paper's Fig. 2 reading)."""
    return np.mod(q[2], 2 * np.pi)


def _relative_angle(t, q, qd):
    """Wrapped theta2 - theta1 [rad]."""
    return _wrap(q[5] - q[2])


def _tip_height(t, q, qd, L2):
    """Height of the tip of body 2 [m]."""
    return q[4] + L2 * np.sin(q[5])


def _energy(q, qd, m1, m2, J1, J2, k1, k2):
    """Total energy [J] from the paper's data (gravity, both RSDAs on wrapped angles)."""
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    T = 0.5 * m1 * (qd[0] ** 2 + qd[1] ** 2) + 0.5 * J1 * qd[2] ** 2 \
        + 0.5 * m2 * (qd[3] ** 2 + qd[4] ** 2) + 0.5 * J2 * qd[5] ** 2
    V = G * (m1 * q[1] + m2 * q[4]) \
        + 0.5 * k1 * _wrap(q[2] + math.pi / 2) ** 2 \
        + 0.5 * k2 * _wrap(q[5] - q[2]) ** 2
    return T + V


def stiff_double_pendulum(k1: float = 400.0, c1: float = 15.0, k2: float = 3e5,
                          c2: float = 5e4) -> PlanarModel:
    """RN paper section 5.1: double pendulum with two RSDAs (k2 = 3e5, c2 = 5e4).

    Printed parameters, all used as printed: m1 = 3, m2 = 0.3, L1 = 1,
    L2 = 1.5, k1 = 400, c1 = 15, k2 = 3e5, c2 = 5e4 (SI), zero-tension angles
    3 pi/2 and 0, initial CM positions (1, 0) and (3.4488887, -0.388228), body 2
    rotated by 23 pi/12, body 1 at rest, body 2 with velocities (3.8822857,
    14.4888887, 10).  Simulation length 2 s.

    Readings and choices:

    - The printed initial state is consistent (Phi = 0, Phi_q q' = 0) only when
      L1 and L2 are the distances from each joint to the body's centre of
      mass, i.e. uniform bars of length 2 and 3: the ground pin is at the
      origin, body 1's CM at (1, 0), the joint between the bodies at (2, 0),
      body 2's CM 1.5 from it at the angle 23 pi/12 = -pi/12, and body 2 spins
      about that joint at 10 rad/s.  The initial state is computed from this
      geometry (the printed numbers are these values rounded to 7 digits;
      the printed 14.4888887 is 15 cos(pi/12) = 14.4888874).
    - Inertias are not printed: uniform bars, J1 = m1 2^2/12 = 1,
      J2 = m2 3^2/12 = 0.225.
    - RSDA 1 acts between the ground and body 1 on theta1, RSDA 2 between the
      bodies on theta2 - theta1.  The zero-tension angle 3 pi/2 of RSDA 1 is
      read as -pi/2 (body 1 hanging down, where the paper says it settles), and
      both springs act on the angle difference wrapped to (-pi, pi] (so the
      printed theta2 = 23 pi/12 is the same spring state as -pi/12, and 3 pi/2
      the same as -pi/2).
    - Gravity 9.81 m/s^2 along -y.

    Returns
    -------
    PlanarModel
        Outputs ``theta1`` (absolute, unwrapped), ``theta1_mod`` (theta1 mod 2 pi,
        the paper's Fig. 2 reading: it settles at 3 pi/2), ``theta2``,
        ``relative_angle`` (wrapped theta2 - theta1), ``tip_height``.
    """
    m1, m2, L1, L2 = 3.0, 0.3, 1.0, 1.5
    J1, J2 = m1 * (2 * L1) ** 2 / 12.0, m2 * (2 * L2) ** 2 / 12.0
    th2 = 23.0 * math.pi / 12.0
    joint = np.array([2 * L1, 0.0])
    r2 = joint + L2 * np.array([math.cos(th2), math.sin(th2)])
    w2 = 10.0
    v2 = w2 * np.array([-(r2[1] - joint[1]), r2[0] - joint[0]])
    m = PlanarModel(gravity=(0.0, -G), name="rn_stiff_double_pendulum")
    b1 = m.add_body(m1, J1, q=(L1, 0.0, 0.0), name="body1")
    b2 = m.add_body(m2, J2, q=(r2[0], r2[1], th2), qd=(v2[0], v2[1], w2), name="body2")
    m.add_revolute(m.ground, (0.0, 0.0), b1, (-L1, 0.0), name="pin0")
    m.add_revolute(b1, (L1, 0.0), b2, (-L2, 0.0), name="pin1")
    m.add_rotational_spring_damper(m.ground, b1, k=k1, c=c1, angle0=-math.pi / 2, wrap=True,
                                   name="rsda1")
    m.add_rotational_spring_damper(b1, b2, k=k2, c=c2, angle0=0.0, wrap=True, name="rsda2")
    m.add_output("theta1", Coordinate(2), unit="rad")
    m.add_output("theta1_mod", _theta1_mod, unit="rad")
    m.add_output("theta2", Coordinate(5), unit="rad")
    m.add_output("relative_angle", _relative_angle, unit="rad")
    m.add_output("tip_height", partial(_tip_height, L2=L2), unit="m")
    m.reference_energy = partial(_energy, m1=m1, m2=m2, J1=J1, J2=J2, k1=k1, k2=k2)
    m.description = ("Stiff double pendulum with two RSDAs (k2 = 3e5, c2 = 5e4), "
                     "RN paper section 5.1.")
    m.reference = "Sandu, Negrut, Haug, Potra, Sandu, RN paper, section 5.1, Figs 1-2, Table 1"
    m.t_span = (0.0, 2.0)
    m.settings = dict(rtol=1e-4, atol=1e-6)
    return m
