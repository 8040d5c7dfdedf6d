"""The planar two-link manipulator of the LS paper: Li, Ding, Li, *L-Stable Method
for DAEs of Multibody System Dynamics* (2019), section 4."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..mbs.outputs import Coordinate
from ..mbs.planar import PlanarModel

__all__ = ["two_link_manipulator"]

G = 9.81


def _tip_x(t, q, qd, L2):
    """x of the end of link 2 [m]."""
    return q[3] + L2 / 2 * np.cos(q[5])


def _tip_y(t, q, qd, L2):
    """y of the end of link 2 [m]."""
    return q[4] + L2 / 2 * np.sin(q[5])


def _energy(q, qd, m1, m2, I1, I2):
    """Total energy [J] of the manipulator (gravity along -y)."""
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    T = 0.5 * m1 * (qd[0] ** 2 + qd[1] ** 2) + 0.5 * I1 * qd[2] ** 2 \
        + 0.5 * m2 * (qd[3] ** 2 + qd[4] ** 2) + 0.5 * I2 * qd[5] ** 2
    return T + G * (m1 * q[1] + m2 * q[4])


def two_link_manipulator(theta1: float = math.pi / 3, theta2: float = -math.pi / 6) -> PlanarModel:
    """LS paper section 4: a planar two-link manipulator swinging under gravity.

    Printed parameters, used as printed: L1 = 1 m, L2 = sqrt(3) m, m1 = 1 kg,
    m2 = 2 kg, I_k = m_k L_k^2 / 12, q = (x1, y1, theta1, x2, y2, theta2) with
    (x_k, y_k) the link centroids, M = diag(m1, m1, I1, m2, m2, I2),
    F = (0, -m1 g, 0, 0, -m2 g, 0), theta1 = pi/3, theta2 = -pi/6 at t = 0;
    simulation time 10 s, h = 0.01 in the paper's tables.

    Readings and choices: the angles are absolute, from the +x axis (with them
    the end of link 2 starts on the x axis at (2, 0)); link 1 is pinned to the
    ground at the origin and link 2 to the end of link 1; no joint torques;
    g = 9.81 m/s^2; the links start at rest.

    Returns
    -------
    PlanarModel
        Outputs ``theta1``, ``theta2``, ``tip_x``, ``tip_y`` (the end of link 2,
        the paper's Figs 2-3).
    """
    L1, L2, m1, m2 = 1.0, math.sqrt(3.0), 1.0, 2.0
    I1, I2 = m1 * L1 ** 2 / 12.0, m2 * L2 ** 2 / 12.0
    e1 = np.array([math.cos(theta1), math.sin(theta1)])
    e2 = np.array([math.cos(theta2), math.sin(theta2)])
    r1 = 0.5 * L1 * e1
    r2 = L1 * e1 + 0.5 * L2 * e2
    m = PlanarModel(gravity=(0.0, -G), name="ls_two_link_manipulator")
    b1 = m.add_body(m1, I1, q=(r1[0], r1[1], theta1), name="link1")
    b2 = m.add_body(m2, I2, q=(r2[0], r2[1], theta2), name="link2")
    m.add_revolute(m.ground, (0.0, 0.0), b1, (-L1 / 2, 0.0), name="shoulder")
    m.add_revolute(b1, (L1 / 2, 0.0), b2, (-L2 / 2, 0.0), name="elbow")
    m.add_output("theta1", Coordinate(2), unit="rad")
    m.add_output("theta2", Coordinate(5), unit="rad")
    m.add_output("tip_x", partial(_tip_x, L2=L2), unit="m")
    m.add_output("tip_y", partial(_tip_y, L2=L2), unit="m")
    m.reference_energy = partial(_energy, m1=m1, m2=m2, I1=I1, I2=I2)
    m.description = "Planar two-link manipulator, L1 = 1, L2 = sqrt(3), m1 = 1, m2 = 2 (LS paper)."
    m.reference = "Li, Ding, Li, LS paper (2019), section 4, Figs 1-5, Tables 1-7"
    m.t_span = (0.0, 10.0)
    m.settings = dict(rtol=1e-6, atol=1e-8)
    return m
