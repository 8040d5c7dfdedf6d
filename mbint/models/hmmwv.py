"""The 14-body HMMWV of the RN paper: Sandu, Negrut, Haug, Potra, Sandu,
*Rosenbrock-Nystrom Integrators for SODE of Multibody Dynamics*, section 5.2.

Notes on the default layout (``layout="spherical"``, the paper's 18 degrees of
freedom): what holds the fore-aft swing of each upper arm and spindle.  At static
equilibrium the TSDA's line must (in its part normal to the arm) be parallel to the
ball joint's reaction, which here lies in the y-z plane (a line with a fore-aft
component leaves no static equilibrium: ``spring_top = (0.3, -0.06, 0.40)`` fails
with a residual of 1.9 kN), so the swing is normal to the TSDA's line and only the
TSDA's preload resists it, through its geometric stiffness F/L: stable when the TSDA
pulls (a pull rod below the arm, L <= 0.25 m here), unstable when it pushes (a strut
above the arm: the chassis falls from 0.71 m to 0.25 m within 2 s).  The swing is
undamped (the damper acts along the line, to which the swing is normal): about 2.5 Hz
(eigenvalues +-15.6i), a few tenths of a millimetre after the bump.  The dominant
eigenvalue of the state-space ODE at t = 0 is -2.00e4 (the paper: about -2.6e5):
c_susp over the TSDA's effective mass, which includes the spindle's (about 100 kg),
not the arm's 8 kg alone.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._typing import ArrayLike, FloatArray
from ..mbs.spatial import SpatialModel

__all__ = ["hmmwv", "MPH", "CORNERS"]

#: one mile per hour in m/s
MPH = 0.44704

#: the four corners: (name, front?, side: +1 left / -1 right)
CORNERS = (("front_left", True, 1.0), ("front_right", True, -1.0),
           ("rear_left", False, 1.0), ("rear_right", False, -1.0))

# ---- geometry and inertia (HMMWV-like; the paper prints none of them) ----
TRACK = 1.82            # m, wheel centre to wheel centre across (HMMWV: 71.6 in)
WHEEL_RADIUS = 0.47     # m, unloaded (37 x 12.5 R16.5 tire)
WHEEL_Z = 0.45          # m, wheel-centre height at the design (static) configuration
MASS = dict(chassis=2086.0, uca=8.0, lca=15.0, spindle=60.0, rack=10.0)   # kg
INERTIA = dict(chassis=(940.0, 3694.0, 4287.0), uca=(0.09, 0.01, 0.09),
               lca=(0.28, 0.03, 0.28), spindle=(3.8, 5.0, 3.8), rack=(0.55, 0.01, 0.55))
# suspension points relative to the wheel centre (x forward, y outward, z up), m
UBJ = (0.0, -0.15, 0.20)      # upper ball joint (spindle - upper control arm)
LBJ = (0.0, -0.11, -0.17)     # lower ball joint (spindle - lower control arm)
UCA_PIVOT = (0.0, -0.53, 0.22)  # upper arm's pivot on the chassis (ball joint or revolute)
LCA_PIVOT = (0.0, -0.61, -0.13) # lower arm's revolute on the chassis (axis along x)
SPRING_ARM = 0.75             # spring seat on the upper arm: this fraction pivot -> ball joint
# chassis end of the TSDA relative to its seat on the upper arm (x forward, y outward, z up), m
SPRING_TOP = dict(spherical=(0.0, 0.0, -0.15),   # a pull rod below the arm, in tension
                  wishbone=(0.0, -0.06, 0.40))   # a strut above the arm, in compression
STEER_ARM = (-0.18, -0.19, 0.02)  # tie-rod end on the spindle
TIE_ROD_INNER = (-0.18, -0.55, 0.02)  # inner tie-rod end (rack front, chassis rear)


def _chassis_height(t, q, qd):
    """Height z of the chassis centre of mass [m]."""
    return q[2]


def hmmwv(speed_mph: float = 10.0, t_front: float = 0.5, t_rear: float = 1.2,
          bump_diameter: float = 0.1, k_susp: float = 2e7, c_susp: float = 2e6,
          k_tire: float = 296325.0, c_tire: float = 3502.0, chassis_height: float = 0.71,
          layout: str = "spherical", spring_top: ArrayLike | None = None) -> SpatialModel:
    """RN paper section 5.2: a 14-body HMMWV driving straight over a half-cylinder bump.

    Printed (used as printed): 14 bodies -- chassis; front and rear, left and right
    upper and lower control arms; four wheel spindles; the steering rack -- joined
    by spherical, revolute, distance and translational joints, with a steering
    constraint that holds the rack (driving straight); four TSDAs between the upper
    control arms and the chassis, k = 2e7 N/m, c = 2e6 N s/m; the tires as vertical
    TSDAs, k = 296325 N/m, c = 3502 N s/m; 10 mph; a half-cylinder bump of
    diameter 0.1 m reached by the front wheels at 0.5 s and by the rear wheels at
    1.2 s; 5 s in all; the chassis settles near z = 0.71 m.

    Layout (x forward, y left, z up, the road at z = 0), ``layout="spherical"`` (the
    default, the paper's counts): upper control arm on a spherical joint on the
    chassis and one on the spindle (3 + 3 equations); lower control arm on a revolute
    joint on the chassis (axis along x) and a spherical joint on the spindle (5 + 3);
    tie rod: a distance constraint between the spindle's steering arm and the rack
    (front) or the chassis (rear) (1); rack: a translational joint on the chassis
    along y (5) and the steering constraint, a prescribed rack offset 0 (1); 14
    Euler-parameter normalizations; the stiff TSDA of each upper arm (k_susp, c_susp)
    a pull rod from the arm (3/4 of the way from its chassis ball joint to its
    spindle ball joint) straight down ``spring_top`` = 0.15 m to the chassis, in
    tension at equilibrium (about 7 kN).  98 coordinates (14 x 7), 80 constraint
    equations (14 + 4 x 15 + 5 + 1, rank of Phi_q 80), 18 degrees of freedom as
    printed: the chassis' six and three per corner -- wheel travel (held by the
    TSDA's axial stiffness), a fore-aft swing of the upper arm and spindle (held by
    the pull rod's preload alone, undamped, about 2.5 Hz), and the upper arm's spin
    about the line through its ball joints (idle: a zero eigenvalue, harmless).  Why
    the swing needs a pull rod, and the dominant eigenvalue (-2.00e4; the paper:
    about -2.6e5): the notes of :mod:`mbint.models.hmmwv`.

    ``layout="wishbone"``: each corner a double wishbone (both arms on revolute
    joints on the chassis, axis along x; 5 + 5 + 3 + 3 + 1 equations), the TSDA a
    strut above the upper arm (``spring_top`` = (0, -0.06, 0.40)): 98 coordinates, 88
    equations, 10 degrees of freedom (the chassis' six and one wheel travel per
    corner); dominant eigenvalue -1.93e4.  Nothing loose, but not the paper's counts.

    Choices (the paper prints no masses, inertias or geometry): masses (kg) chassis
    2086, upper arm 8, lower arm 15, spindle (wheel, tire, hub) 60, rack 10, total
    2428 (HMMWV curb weight about 2400); principal inertias (kg m^2, body axes along
    x, y, z) chassis (940, 3694, 4287) (a 4.5 x 2.1 x 1.0 m box), upper arm (0.09,
    0.01, 0.09), lower arm (0.28, 0.03, 0.28), spindle (3.8, 5.0, 3.8), rack (0.55,
    0.01, 0.55); wheelbase = the distance driven between ``t_front`` and ``t_rear``,
    3.129 m at 10 mph (HMMWV: 3.30 m); track 1.82 m; chassis centre of mass at
    mid-wheelbase; suspension points relative to the wheel centre (m; y outward):
    upper ball joint (0, -0.15, 0.20), lower ball joint (0, -0.11, -0.17), upper arm
    pivot (0, -0.53, 0.22), lower arm pivot (0, -0.61, -0.13), TSDA seat on the upper
    arm 3/4 of the way from pivot to ball joint, its chassis end at ``spring_top``
    from the seat, steering arm (-0.18, -0.19, 0.02), inner tie-rod end (-0.18,
    -0.55, 0.02).  Static equilibrium at the design configuration (wheel centres at
    0.45 m): the free lengths of the eight TSDAs are solved so that the model starts
    at rest in the vehicle's frame (least change from the design lengths: equal loads
    left and right); the vehicle moves forward at ``speed_mph`` with no longitudinal
    force (the tires are vertical springs), so it coasts at that speed.  Tires:
    vertical spring-dampers at the wheel centres against the road as seen by a wheel
    of radius 0.47 m (``SpatialModel.add_tire``; a point following the bare
    half-cylinder would meet an infinite slope and damping force at its edges): the
    enveloped profile rises smoothly to 0.05 m, with a kink where the wheel first
    touches the bump.

    Parameters
    ----------
    speed_mph : float
        Forward speed, mph (10 as printed).
    t_front, t_rear : float
        Times in s at which the front and rear wheels reach the bump (0.5, 1.2).
    bump_diameter : float
        m (0.1).
    k_susp, c_susp : float
        Suspension TSDAs, N/m and N s/m (2e7, 2e6 as printed).
    k_tire, c_tire : float
        Tires, N/m and N s/m (296325, 3502 as printed).
    chassis_height : float
        Height of the chassis centre of mass at static equilibrium, m (0.71).
    layout : {"spherical", "wishbone"}
        "spherical" (default): the upper arms on ball joints on the chassis, held by
        pull-rod TSDAs (98, 80, 18 as printed); "wishbone": revolute pivots and
        struts above the arms (98, 88, 10).  See above.
    spring_top : array_like, shape (3,), optional
        The chassis end of each upper arm's TSDA relative to its seat on the arm, m
        (x forward, y outward, z up; mirrored left/right).  Default by layout:
        (0, 0, -0.15) for "spherical", (0, -0.06, 0.40) for "wishbone".  The free
        lengths are solved for static equilibrium; a RuntimeError if there is none.

    Returns
    -------
    SpatialModel
        With outputs ``chassis_height`` (m), ``t_span`` (0, 5), settings rtol =
        atol = 1e-3 (the paper's Fig. 5) and ``params`` (a dict of the above,
        with the solved ``free_lengths``, m).

    Raises
    ------
    ValueError
        For an unknown ``layout`` or a ``spring_top`` that is not 3 finite numbers.
    RuntimeError
        If no choice of free lengths makes the design configuration a static
        equilibrium (e.g. a spherical-layout TSDA with a fore-aft component).
    """
    spring_top = _spring_top(layout, spring_top)
    road = _road(speed_mph, t_front, t_rear, bump_diameter)
    m = SpatialModel(gravity=(0.0, 0.0, -9.81), name="hmmwv")
    ch, rack = _chassis_and_rack(m, road, chassis_height)
    corners = [_add_corner(m, ch, rack, corner, road, layout, spring_top, (k_susp, c_susp),
                           (k_tire, c_tire)) for corner in CORNERS]
    m.add_translational(ch, rack, point=rack.r0, axis=(0, 1, 0), name="rack_slider")
    m.add_driver(ch, rack, "translation", point=rack.r0, axis=(0, 1, 0), f=0.0, name="steering")
    springs = [spring for spring, _ in corners] + [tire for _, tire in corners]
    _equilibrate(m, springs)
    _describe(m, speed_mph, bump_diameter, layout)
    m.params = dict(  # type: ignore[attr-defined]
                    speed=road["speed"], wheelbase=road["wheelbase"], track=TRACK,
                    bump_x=road["bump_x"], bump_radius=road["bump_radius"],
                    wheel_radius=WHEEL_RADIUS, wheel_z=WHEEL_Z, chassis_height=chassis_height,
                    layout=layout, spring_top=tuple(float(v) for v in spring_top),
                    k_susp=k_susp, c_susp=c_susp, k_tire=k_tire, c_tire=c_tire,
                    masses=dict(MASS), inertias=dict(INERTIA),
                    free_lengths={e.name: e.prims[0]["L0"] for e in springs})
    return m


def _road(speed_mph, t_front, t_rear, bump_diameter):
    """Speed [m/s], wheelbase (the distance driven between the bump times), the front
    axle's x, and the bump's radius and x (the wheel centre's x at first touch), m."""
    V = speed_mph * MPH
    wheelbase = V * (t_rear - t_front)
    r_bump = bump_diameter / 2
    half = np.sqrt((WHEEL_RADIUS + r_bump) ** 2 - WHEEL_RADIUS ** 2)  # first touch, ahead of the centre
    x_front = wheelbase / 2
    return dict(speed=V, wheelbase=wheelbase, x_front=x_front, bump_radius=r_bump,
                bump_x=x_front + V * t_front + half)


def _chassis_and_rack(m, road, chassis_height):
    """The chassis and the steering rack, moving forward at the road's speed."""
    vel = (road["speed"], 0.0, 0.0)
    ch = m.add_body(MASS["chassis"], INERTIA["chassis"], r=(0.0, 0.0, chassis_height), v=vel,
                    name="chassis")
    x_rack = road["x_front"] + TIE_ROD_INNER[0]
    rack = m.add_body(MASS["rack"], INERTIA["rack"], r=(x_rack, 0.0, WHEEL_Z + TIE_ROD_INNER[2]),
                      v=vel, name="rack")
    return ch, rack


def _spring_top(layout: str, spring_top: Any) -> FloatArray:
    """The checked ``spring_top`` of :func:`hmmwv` (its layout's default for None)."""
    if layout not in SPRING_TOP:
        raise ValueError(f"hmmwv: layout must be 'spherical' or 'wishbone', got {layout!r}.")
    if spring_top is None:
        spring_top = SPRING_TOP[layout]
    spring_top = np.asarray(spring_top, dtype=float)
    if spring_top.shape != (3,) or not np.all(np.isfinite(spring_top)):
        raise ValueError(f"hmmwv: spring_top must be 3 finite numbers (m), got {spring_top!r}.")
    return spring_top


def _add_corner(m, ch, rack, corner, road, layout, spring_top, susp, tire):
    """One corner (an entry of :data:`CORNERS`) of :func:`hmmwv`: the upper and lower
    control arms and the spindle, their joints, the tie rod, the suspension TSDA (k, c =
    ``susp``) and the tire (k, c = ``tire``); returns the TSDA and the tire."""
    name, front, s = corner
    x_front, vel = road["x_front"], (road["speed"], 0.0, 0.0)
    xa = x_front if front else -x_front
    W = np.array([xa, s * TRACK / 2, WHEEL_Z])

    def at(rel):
        return W + np.array([rel[0], s * rel[1], rel[2]])

    ubj, lbj, up, lp = at(UBJ), at(LBJ), at(UCA_PIVOT), at(LCA_PIVOT)
    uca = m.add_body(MASS["uca"], INERTIA["uca"], r=(up + ubj) / 2, v=vel, name=f"uca_{name}")
    lca = m.add_body(MASS["lca"], INERTIA["lca"], r=(lp + lbj) / 2, v=vel, name=f"lca_{name}")
    sp = m.add_body(MASS["spindle"], INERTIA["spindle"], r=W, v=vel, name=f"spindle_{name}")
    if layout == "wishbone":
        m.add_revolute(ch, uca, point=up, axis=(1, 0, 0), name=f"uca_pivot_{name}")
    else:
        m.add_spherical(ch, uca, point=up, name=f"uca_pivot_{name}")
    m.add_revolute(ch, lca, point=lp, axis=(1, 0, 0), name=f"lca_pivot_{name}")
    m.add_spherical(uca, sp, point=ubj, name=f"ubj_{name}")
    m.add_spherical(lca, sp, point=lbj, name=f"lbj_{name}")
    inner = at(TIE_ROD_INNER)
    m.add_distance(rack if front else ch, inner, sp, at(STEER_ARM), name=f"tie_rod_{name}")
    seat = up + SPRING_ARM * (ubj - up)
    top = seat + np.array([spring_top[0], s * spring_top[1], spring_top[2]])
    spring = m.add_spring_damper(uca, seat, ch, top, k=susp[0], c=susp[1], name=f"spring_{name}")
    tire = m.add_tire(sp, W, k=tire[0], c=tire[1], bump_x=road["bump_x"],
                      bump_radius=road["bump_radius"], wheel_radius=WHEEL_RADIUS,
                      name=f"tire_{name}")
    return spring, tire


def _describe(m, speed_mph, bump_diameter, layout):
    """The output, time span, settings, description and reference of :func:`hmmwv`."""
    m.add_output("chassis_height", _chassis_height, unit="m")
    m.t_span = (0.0, 5.0)
    m.settings = dict(rtol=1e-3, atol=1e-3)
    m.description = ("RN paper section 5.2: 14-body HMMWV (%s, steering rack held straight) "
                     "at %g mph over a half-cylinder bump of diameter %g m"
                     % ("upper arms on ball joints held by pull-rod TSDAs" if layout == "spherical"
                        else "double-wishbone corners", speed_mph, bump_diameter))
    m.reference = ("A. Sandu, D. Negrut, E. J. Haug, F. A. Potra, C. Sandu, Rosenbrock-Nystrom "
                   "Integrators for SODE of Multibody Dynamics (2001), section 5.2")


def _equilibrate(m, springs):
    """Free lengths of the springs (TSDA / tire elements, each its k > 0) that make the
    initial configuration a static equilibrium: the generalized force E^T Q vanishes
    on the null space E of Phi_q, at rest.  Q is affine in the free lengths; the
    solution closest to the initial lengths (least squares on the changes)."""
    q0 = m.q0
    E = _null_space(m.constraint_jacobian(0.0, q0))
    zero = np.zeros(m.nq)

    def reduced():
        m._compiled = None
        return E.T @ m.forces(0.0, q0, zero)

    base = reduced()
    cols = []
    for e in springs:
        pr = e.prims[0]
        pr["L0"] += 1.0
        cols.append(reduced() - base)
        pr["L0"] -= 1.0
    A = np.array(cols).T
    delta = np.linalg.lstsq(A, -base, rcond=None)[0]
    for e, d in zip(springs, delta):
        e.prims[0]["L0"] += d
    m._compiled = None
    res = np.abs(reduced()).max()
    if not res < 1e-6 * np.abs(base).max():
        raise RuntimeError(f"hmmwv: no static equilibrium found (residual {res:.3e} N).")


def _null_space(P):
    """Orthonormal basis of the null space of P (nc, nq), shape (nq, nq - rank)."""
    _, s, Vt = np.linalg.svd(P)
    rank = int(np.sum(s > 1e-10 * s[0]))
    return Vt[rank:].T
