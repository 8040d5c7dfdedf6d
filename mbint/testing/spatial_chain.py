"""A 3-D chain of N rigid rods for the tests and the benchmark of the sparse index-1
path of spatial models (tests/test_spatial_sparse.py,
tests/benchmarks/bench_spatial_chain.py).

Rod k (mass 1 kg, length 0.5 m) hangs from rod k - 1 (rod 0 from the ground at the
origin) in a zig-zag that leaves the vertical plane.  The joints alternate: a
spherical joint at even k, a revolute joint at odd k whose axis alternates between
the global x and y directions (with a rotational spring-damper on it); every
``tsda_every``-th rod is tied to rod k - 2 by a translational spring-damper.  Points
and axes are given at the initial configuration, so every initial position is
consistent; the chain starts at rest (or with a consistent initial velocity field
when ``spin`` is non-zero: a rigid rotation of the whole chain about the vertical
axis through the origin, which every joint allows).
"""
from __future__ import annotations

import numpy as np

from ..mbs.spatial import SpatialModel

LENGTH = 0.5


def spatial_chain(n, spin=0.0, k_rot=20.0, c_rot=0.3, k_tsda=50.0, c_tsda=0.5, tsda_every=4,
                  gravity=(0.0, 0.0, -9.81), tip_scale=1.0):
    """The chain of ``n`` rods (nq = 7 n; see the module docstring); ``tip_scale``
    multiplies the mass and the inertia of the last rod (a heavy tip: a saddle-point
    matrix whose pivots span many decades while the problem stays well posed)."""
    m = SpatialModel(gravity=gravity, name=f"spatial_chain_{n}")
    w = np.array([0.0, 0.0, float(spin)])
    P = np.zeros(3)
    bodies = []
    for k in range(n):
        d = np.array([0.35 * np.cos(0.9 * k), 0.35 * np.sin(1.3 * k) + 0.2, -1.0])
        d *= LENGTH / np.linalg.norm(d)
        r = P + 0.5 * d
        f = float(tip_scale) if k == n - 1 else 1.0
        b = m.add_body(f, (0.021 * f, 0.022 * f, 0.002 * f), r=r, axis_angle=((1.0, 0.3 * k, 0.2), 0.1 * k),
                       v=np.cross(w, r), omega=w, name=f"rod{k}")
        prev = m.ground if k == 0 else bodies[-1]
        if k % 2 == 0:
            m.add_spherical(prev, b, P)
        else:
            axis = (1.0, 0.0, 0.0) if k % 4 == 1 else (0.0, 1.0, 0.0)
            m.add_revolute(prev, b, P, axis)
            m.add_rotational_spring_damper(prev, b, axis, k=k_rot, c=c_rot)
        if k >= 2 and k % tsda_every == 0:
            m.add_spring_damper(bodies[-2], (0.0, 0.0, 0.0), b, (0.0, 0.0, 0.0), k=k_tsda,
                                c=c_tsda, frame="body")
        bodies.append(b)
        P = P + d
    m.compile()
    return m
