"""The source papers' mechanisms, with the papers' parameters.

Each function returns a fresh :class:`mbint.PlanarModel` with a consistent
initial state, named ``outputs`` ``fn(t, q, qd)`` (angles in rad, heights in m;
they index the coordinate first, ``q[2]``, so they take one state (nq,) or a
trajectory's (nq, m)), a ``reference_energy(q, qd)`` in J written from the
paper's own formulas, a suggested ``t_span`` and recommended ``settings``
(tolerances, max_step) that :func:`mbint.simulate` applies unless the caller
gives its own; its docstring lists every parameter the paper prints and every
choice made where it does not.

==============================  ======  ===========================================
function                        paper   mechanism
==============================  ======  ===========================================
double_pendulum_stiff_spring    LLM 2   double pendulum, torsional spring 3000 N m/deg
bouncing_balls                  LLM 3   two balls, penalty contacts K = 1e5 (eqs 19-21)
bouncing_balls_ode              LLM 3   the same as the paper's ODE (eq 21)
stiff_double_pendulum           RN 5.1  double pendulum with RSDAs k2 = 3e5, c2 = 5e4
pendulum_particle               SP      bar pendulum + particle m2 = 1e-5 on a spring
two_link_manipulator            LS 4    planar two-link manipulator
mass_spring_damper              LN 7.7  mass-spring-damper on a slider
hmmwv                           RN 5.2  14-body vehicle over a bump (a SpatialModel)
pendulum_chain                  --      chain of N pendulums (the scaling model)
==============================  ======  ===========================================

``hmmwv`` returns a :class:`mbint.SpatialModel` and is not in ``PAPER_MODELS``
(the planar models); neither is ``pendulum_chain(n)``, which is no paper's.
"""
from typing import Callable

from ..mbs.planar import PlanarModel
from .llm import OdeForm, bouncing_balls, bouncing_balls_ode, double_pendulum_stiff_spring
from .chain import pendulum_chain
from .hmmwv import hmmwv
from .ln import mass_spring_damper
from .ls import two_link_manipulator
from .rn import stiff_double_pendulum
from .sp import pendulum_particle

__all__ = ["double_pendulum_stiff_spring", "bouncing_balls", "bouncing_balls_ode",
           "stiff_double_pendulum", "pendulum_particle", "two_link_manipulator",
           "mass_spring_damper", "hmmwv", "pendulum_chain", "OdeForm", "PAPER_MODELS"]

#: name -> constructor of every PlanarModel of the papers
PAPER_MODELS: dict[str, Callable[..., PlanarModel]] = {
    "double_pendulum_stiff_spring": double_pendulum_stiff_spring,
    "bouncing_balls": bouncing_balls,
    "stiff_double_pendulum": stiff_double_pendulum,
    "pendulum_particle": pendulum_particle,
    "two_link_manipulator": two_link_manipulator,
    "mass_spring_damper": mass_spring_damper,
}
