"""The mass-spring-damper of the lecture notes: Schwab, Delhaes, *Multibody
Dynamics B*, chapter 7, eq 7.7."""
from __future__ import annotations

from functools import partial

import numpy as np

from .. import problems
from ..mbs.outputs import Coordinate
from ..mbs.planar import PlanarModel

__all__ = ["mass_spring_damper"]


def _energy(q, qd, m, k):
    """Total energy [J] in the notes' coordinate x (downwards)."""
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    x, v = -q[1], -qd[1]
    return 0.5 * m * v ** 2 - m * problems.G * x + 0.5 * k * x ** 2


def mass_spring_damper(m: float = problems.MSD_M, k: float = problems.MSD_K,
                       c: float = problems.MSD_C, x0: float = 0.0, v0: float = 0.0) -> PlanarModel:
    """LN eq 7.7: m x'' = m g - k x - c x', x measured downwards, from rest.

    The notes print the equation and the initial state (x = 0, x' = 0) but no
    numbers; the parameters are those of :mod:`mbint.problems` (m = 1 kg,
    k = 100 N/m, c = 1 N s/m, g = 9.81), so the closed form
    :func:`mbint.problems.mass_spring_damper_exact` applies.

    As a planar mechanism: one body on a vertical translational joint with the
    ground (its angle and x fixed), hanging from a TSDA (k, c) anchored 1 m
    above it with free length 1 m, so the spring is relaxed at x = 0; x = -y.
    (The body's inertia, 1 kg m^2, never matters: the joint fixes its angle.)

    Returns
    -------
    PlanarModel
        Output ``x`` (the notes' coordinate, downwards).
    """
    L0 = 1.0
    model = PlanarModel(gravity=(0.0, -problems.G), name="ln_mass_spring_damper")
    b = model.add_body(m, 1.0, q=(0.0, -x0, 0.0), qd=(0.0, -v0, 0.0), name="mass")
    model.add_translational(model.ground, (0.0, 0.0), b, (0.0, 0.0), axis=(0.0, 1.0), phi0=0.0,
                            name="slider")
    model.add_spring_damper(model.ground, (0.0, L0), b, (0.0, 0.0), k=k, c=c, length0=L0,
                            name="spring")
    model.add_output("x", Coordinate(1, -1.0), unit="m")
    model.reference_energy = partial(_energy, m=m, k=k)
    model.description = (f"Mass-spring-damper m = {m:g}, k = {k:g}, c = {c:g} on a vertical "
                         f"slider (lecture notes eq 7.7).")
    model.reference = "Schwab & Delhaes, lecture notes ch. 7, eq 7.7"
    model.t_span = (0.0, 5.0)
    model.settings = dict(rtol=1e-8, atol=1e-10)
    return model
