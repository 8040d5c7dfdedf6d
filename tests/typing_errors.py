"""Misuses of mbint's public API that its annotations reject: tests/test_typing.py runs
mypy on this file and expects an error on exactly the lines marked ``# error: <code>``
(the file is never run)."""
from __future__ import annotations

import mbint

model = mbint.models.mass_spring_damper()
mbint.simulate(model, (0.0, 1.0), rtol="tight")  # error: arg-type
mbint.simulate("pendulum", (0.0, 1.0))  # error: arg-type
mbint.solve_ivp(lambda t, y: -y, (0.0, 1.0), [1.0], max_steps=1.5)  # error: arg-type
traj = mbint.simulate(model, (0.0, 1.0))
traj.plot_energy(relative="yes")  # error: arg-type
n: str = model.nq  # error: assignment
model.add_body(1.0, 1.0, name=3)  # error: arg-type
mbint.stability.region("rk4", n=1.5)  # error: arg-type
