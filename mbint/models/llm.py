"""Mechanisms of the LLM paper: Gil, Sanfelice, Nikravesh, *Local Linearization
Method in the Integration of Multibody Equations*.

Section 2: a double pendulum with a very stiff torsional spring (3000 N m/deg)
between its links, in body coordinates.  Section 3: two balls bouncing on a
vertical line with penalty contacts (K = 1e5 N/m, unit masses, eqs 19-21).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ..mbs.outputs import Coordinate, Difference
from ..mbs.planar import PlanarModel

__all__ = ["double_pendulum_stiff_spring", "bouncing_balls", "bouncing_balls_ode", "OdeForm"]

G = 9.81


def _dp_tip_height(t, q, qd, a):
    """Height of the tip of link 2 [m] (double_pendulum_stiff_spring)."""
    return q[4] + a * np.sin(q[5])


def _dp_energy(q, qd, mass, J, k):
    """Total energy [J] of double_pendulum_stiff_spring from its own formulas."""
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    T = 0.5 * mass * (qd[0] ** 2 + qd[1] ** 2 + qd[3] ** 2 + qd[4] ** 2) \
        + 0.5 * J * (qd[2] ** 2 + qd[5] ** 2)
    V = mass * G * (q[1] + q[4]) + 0.5 * k * (q[5] - q[2]) ** 2
    return T + V


def _balls_energy(q, qd, radius, K):
    """Total energy [J] of bouncing_balls from eqs 19-21."""
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    p1 = np.maximum(2 * radius - (q[1] - q[4]), 0.0)
    p2 = np.maximum(radius - q[4], 0.0)
    return 0.5 * (qd[1] ** 2 + qd[4] ** 2) + G * (q[1] + q[4]) \
        + 0.5 * K * (p1 ** 2 + p2 ** 2)


def double_pendulum_stiff_spring(k_deg: float = 3000.0, mass: float = 1.0, length: float = 1.0,
                                 theta1: float = 0.0, theta2: float = 0.0) -> PlanarModel:
    """LLM paper section 2: double pendulum, torsional spring k = 3000 N m/deg.

    The paper prints only the spring constant and the integration settings
    (LLM with h = 0.02; ODE45, ODE15s, ODE23s for comparison).  Choices made
    here, keeping its character (a slow pendulum whose lower link vibrates at
    high frequency against the stiff spring):

    - two uniform bars of mass 1 kg and length 1 m (centroidal inertia
      m L^2 / 12), the first pinned to the ground at the origin, the second
      pinned to the end of the first (Fig. 1);
    - the torsional spring acts between the links on theta2 - theta1 with
      zero-tension angle 0 (straight), k = 3000 N m/deg = 3000 * 180 / pi
      N m/rad ~ 1.72e5 N m/rad, no damping;
    - gravity 9.81 m/s^2 along -y; body angles from the +x axis;
    - initial state: both links horizontal (theta1 = theta2 = 0) at rest, so
      gravity bends the spring and excites the fast mode (about 1.5e3 rad/s at the start).

    Parameters
    ----------
    k_deg : float
        Spring constant in N m/deg (the paper's unit).
    mass, length : float
        Of each link.
    theta1, theta2 : float
        Initial absolute angles of the links (rad).

    Returns
    -------
    PlanarModel
        Outputs ``theta1``, ``theta2``, ``relative_angle`` (theta2 - theta1),
        ``tip_height``.
    """
    m = PlanarModel(gravity=(0.0, -G), name="llm_double_pendulum")
    J = mass * length ** 2 / 12.0
    a = length / 2.0
    c1, s1, c2, s2 = math.cos(theta1), math.sin(theta1), math.cos(theta2), math.sin(theta2)
    b1 = m.add_body(mass, J, q=(a * c1, a * s1, theta1), name="link1")
    b2 = m.add_body(mass, J, q=(2 * a * c1 + a * c2, 2 * a * s1 + a * s2, theta2), name="link2")
    m.add_revolute(m.ground, (0.0, 0.0), b1, (-a, 0.0), name="pin0")
    m.add_revolute(b1, (a, 0.0), b2, (-a, 0.0), name="pin1")
    k = k_deg * 180.0 / math.pi
    m.add_rotational_spring_damper(b1, b2, k=k, c=0.0, angle0=0.0, name="spring")
    m.add_output("theta1", Coordinate(2), unit="rad")
    m.add_output("theta2", Coordinate(5), unit="rad")
    m.add_output("relative_angle", Difference(2, 5), unit="rad")
    m.add_output("tip_height", partial(_dp_tip_height, a=a), unit="m")
    m.reference_energy = partial(_dp_energy, mass=mass, J=J, k=k)
    m.description = (f"Double pendulum, two uniform links {mass:g} kg x {length:g} m, torsional "
                     f"spring {k_deg:g} N m/deg between the links (LLM paper, section 2).")
    m.reference = "Gil, Sanfelice, Nikravesh, LLM paper, section 2, Figs 1-2"
    m.t_span = (0.0, 2.0)
    m.settings = dict(rtol=1e-6, atol=1e-8)
    return m


def bouncing_balls(K: float = 1e5, radius: float = 0.1, y1: float = 2.0, y2: float = 1.0,
                   v1: float = 0.0, v2: float = 0.0) -> PlanarModel:
    """LLM paper section 3: two balls on a vertical line, penalty contacts.

    Ball 1 (upper, height y1) and ball 2 (lower, y2), unit masses, gravity
    9.81; contact ball-ball (Psi_1 = 2R - (y1 - y2)) and ball-ground (Psi_2 =
    R - y2) with the fictitious spring K = 1e5 N/m, no damping (eqs 19-21).
    The paper gives neither R nor the initial heights; chosen here: R = 0.1 m,
    y1 = 2 m, y2 = 1 m, both at rest; each ball's inertia is that of a solid
    sphere, 2/5 m R^2 (it never matters: the contact forces pass through the
    centres).  The balls are bodies without joints at x = 0: the contact
    forces are vertical, so x and theta stay 0 exactly and the model is eq 21.

    An adaptive method that sees exact free-flight parabolas grows its step far
    beyond a contact's duration (ball against ball lasts pi / sqrt(2 K / m) = 7.0 ms,
    ball against ground pi / sqrt(K / m) = 9.9 ms); the model's contact step bound
    (continuous collision detection in C: each step ends at most a quarter radius
    into a contact it enters) and the contacts' switching events keep every method
    from stepping over a contact, so ``settings`` holds only tolerances.

    Returns
    -------
    PlanarModel
        Outputs ``height1``, ``height2`` (y of the ball centres); contacts in
        the order (ball-ball, ball-ground) as in eq 19, so
        ``contact_gaps(q)`` is (Psi_1, Psi_2).
    """
    m = PlanarModel(gravity=(0.0, -G), name="llm_bouncing_balls")
    J = 0.4 * radius ** 2
    b1 = m.add_body(1.0, J, q=(0.0, y1, 0.0), qd=(0.0, v1, 0.0), name="ball1")
    b2 = m.add_body(1.0, J, q=(0.0, y2, 0.0), qd=(0.0, v2, 0.0), name="ball2")
    m.add_contact(b1, radius=radius, other=b2, other_radius=radius, K=K, name="ball_ball")
    m.add_contact(b2, radius=radius, K=K, name="ball_ground")
    m.add_output("height1", Coordinate(1), unit="m")
    m.add_output("height2", Coordinate(4), unit="m")
    m.reference_energy = partial(_balls_energy, radius=radius, K=K)
    m.description = (f"Two unit-mass balls (R = {radius:g} m) on a vertical line, penalty "
                     f"contacts K = {K:g} N/m (LLM paper, section 3, eqs 19-21).")
    m.reference = "Gil, Sanfelice, Nikravesh, LLM paper, section 3, eqs 19-21, Figs 3-5"
    m.t_span = (0.0, 3.0)
    m.settings = dict(rtol=1e-6, atol=1e-8)
    return m


@dataclass
class OdeForm:
    """A model as a plain first-order ODE for :func:`mbint.solve_ivp`.

    Attributes
    ----------
    fun : callable
        ``fun(t, y) -> y'``.
    jac : callable
        ``jac(t, y) -> df/dy``.
    y0 : ndarray
    t_span : tuple
    energy : callable
        ``energy(y)`` (y of shape (n,) or (n, m)).
    gaps : callable
        ``gaps(y)``: the contact functions Psi (eq 19), > 0 in contact.
    events : list of callables
        Zeros of the contact functions, for ``events=``.
    settings : dict
        Suggested solver options.
    description : str
    """

    fun: object
    jac: object
    y0: np.ndarray
    t_span: tuple
    energy: object
    gaps: object
    events: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    description: str = ""


def bouncing_balls_ode(K: float = 1e5, radius: float = 0.1, y1: float = 2.0, y2: float = 1.0,
                       v1: float = 0.0, v2: float = 0.0) -> OdeForm:
    """The bouncing balls exactly as LLM eqs 19-21: y = (y1, y2, y1', y2').

    Same parameters and choices as :func:`bouncing_balls`, for comparing the
    PlanarModel with the paper's equations.  As a plain ODE for
    :func:`mbint.solve_ivp` it has no contact step bound, and its events are located
    between step ends only: ``settings`` bounds the step by ``max_step = 0.005`` s,
    below the shortest contact (7.0 ms), so that no step passes over a contact.

    Returns
    -------
    OdeForm
    """
    R = radius

    def gaps(y):
        y = np.asarray(y, float)
        return np.array([2 * R - (y[0] - y[1]), R - y[1]])

    def fun(t, y):
        p1, p2 = 2 * R - (y[0] - y[1]), R - y[1]
        F1 = -K * (y[0] - y[1] - 2 * R) if p1 > 0 else 0.0
        F2 = -K * (y[1] - R) if p2 > 0 else 0.0
        return np.array([y[2], y[3], -G + F1, -G - F1 + F2])

    def jac(t, y):
        p1, p2 = 2 * R - (y[0] - y[1]), R - y[1]
        J = np.zeros((4, 4))
        J[0, 2] = J[1, 3] = 1.0
        if p1 > 0:
            J[2, 0] -= K
            J[2, 1] += K
            J[3, 0] += K
            J[3, 1] -= K
        if p2 > 0:
            J[3, 1] -= K
        return J

    def energy(y):
        y = np.asarray(y, float)
        p = gaps(y)
        return 0.5 * (y[2] ** 2 + y[3] ** 2) + G * (y[0] + y[1]) + \
            0.5 * K * (np.maximum(p[0], 0.0) ** 2 + np.maximum(p[1], 0.0) ** 2)

    def ev(k):
        def g(t, y):
            return float(gaps(y)[k])
        g.terminal = False
        g.direction = 0
        return g

    return OdeForm(fun=fun, jac=jac, y0=np.array([y1, y2, v1, v2], float), t_span=(0.0, 3.0),
                   energy=energy, gaps=gaps, events=[ev(0), ev(1)],
                   settings=dict(rtol=1e-6, atol=1e-8, max_step=0.005),
                   description="LLM eqs 19-21 as a first-order ODE")
