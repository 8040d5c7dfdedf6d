"""A planar chain of N pendulums: the model of the scaling benchmark of the sparse linear
algebra (tests/benchmarks/bench_chain.py; not from a paper)."""
from __future__ import annotations

import math

from ..mbs.planar import PlanarModel

__all__ = ["pendulum_chain"]


def pendulum_chain(n: int, link: float = 0.5, mass: float = 1.0, k: float = 0.0, c: float = 0.0,
                   angle: float = 0.0, gravity: float = 9.81) -> PlanarModel:
    """A chain of ``n`` uniform bars hanging from a ground pin, joined by revolute joints.

    Bar i (length ``link`` m, mass ``mass`` kg, inertia m L^2 / 12 kg m^2 about its
    centre) is pinned to bar i - 1 (bar 0 to the ground at the origin); all bars start
    at rest, straight, at ``angle`` rad from the horizontal (0: horizontal, the chain
    falls under ``gravity`` m/s^2).  With ``k`` > 0 (N m/rad) and ``c`` (N m s/rad) a
    rotational spring-damper acts across every joint, zero-tension at the initial
    angle: a stiff chain for large k.  nq = 3 n coordinates, nc = 2 n constraints.

    This is the model of the scaling benchmark (``tests/benchmarks/bench_chain.py``):
    above :data:`mbint.SPARSE_MIN_NQ` coordinates the index-1 formulation solves its
    saddle-point systems and the implicit methods their Newton systems with sparse LU
    (SuiteSparse KLU), at a cost that grows linearly with n.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"pendulum_chain: n must be at least 1, got {n}")
    if not (link > 0 and mass > 0):
        raise ValueError("pendulum_chain: link and mass must be positive")
    m = PlanarModel(gravity=(0.0, -float(gravity)), name=f"pendulum_chain_{n}")
    ca, sa = math.cos(angle), math.sin(angle)
    J = mass * link ** 2 / 12.0
    prev = m.ground
    for i in range(n):
        cx, cy = (i + 0.5) * link * ca, (i + 0.5) * link * sa
        b = m.add_body(mass, J, q=(cx, cy, angle), name=f"bar{i}")
        if prev is m.ground:
            m.add_revolute(m.ground, (0.0, 0.0), b, (-0.5 * link, 0.0))
        else:
            m.add_revolute(prev, (0.5 * link, 0.0), b, (-0.5 * link, 0.0))
        if k > 0 or c > 0:
            m.add_rotational_spring_damper(prev, b, k, c)
        prev = b
    m.description = f"planar chain of {n} pendulums (bars of {link} m, {mass} kg)"
    m.reference = "scaling model of the sparse index-1 formulation (not from a paper)"
    m.t_span = (0.0, 1.0)
    return m
