"""Typed use of mbint's public API: tests/test_typing.py runs mypy on this file (no error
allowed, and every ``assert_type`` must hold) and then runs it, checking that the values
have the types the annotations promise."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

import mbint
from mbint.ivp import OdeResult
from mbint.mbs.planar import Body, Element
from mbint.mbs.reactions import JointReaction

if TYPE_CHECKING:
    from typing_extensions import assert_type
else:  # at run time (any Python): the check is the test's, against VALUES
    def assert_type(value, typ):
        return value

# a pendulum of length 1 m built through the typed builder API
model = mbint.PlanarModel(gravity=(0.0, -9.81), name="pendulum")
bar = model.add_body(mass=1.0, inertia=1.0 / 12.0, q=(0.5, 0.0, 0.0), name="bar")
pin = model.add_revolute("ground", (0.0, 0.0), bar, (-0.5, 0.0), name="pin")
assert_type(bar, Body)
assert_type(pin, Element)
assert_type(model.nq, int)
assert_type(model.q0, NDArray[np.float64])

traj = mbint.simulate(model, (0.0, 0.5), method="dopri5", rtol=1e-8, atol=1e-10)
assert_type(traj, mbint.Trajectory)
assert_type(traj.q, NDArray[np.float64])
assert_type(traj.t, NDArray[np.float64])
assert_type(traj.success, bool)
assert_type(traj.violation(), mbint.mbs.trajectory.Violation)
kinetic, potential = model.energy(0.0)
pin_reaction = traj.reactions("pin")
assert_type(pin_reaction, JointReaction)
assert_type(traj.reactions(), dict[str, JointReaction])

res = mbint.solve_ivp(lambda t, y: -y, (0.0, 1.0), [1.0], method="rk45", rtol=1e-9,
                      atol=1e-12, dense_output=True)
assert_type(res, OdeResult)
assert res.sol is not None
y_half: Any = res.sol(0.5)

infos = mbint.methods()
assert_type(infos, list[mbint.MethodInfo])
assert_type(mbint.stability.real_axis_limit("rk4"), float)
assert_type(mbint.stability.amplification("rk4", 1j), NDArray[np.complex128])

#: what the test compares at run time with what the annotations say
VALUES: dict[str, Any] = dict(bar=bar, pin=pin, nq=model.nq, q0=model.q0, traj=traj,
                              q=traj.q, success=traj.success, res=res, infos=infos,
                              limit=mbint.stability.real_axis_limit("rk4"),
                              amplification=mbint.stability.amplification("rk4", 1j),
                              y_half=y_half, kinetic=kinetic, pin_reaction=pin_reaction,
                              all_reactions=traj.reactions())
