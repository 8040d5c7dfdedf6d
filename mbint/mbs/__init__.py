"""Mechanisms: describe them, simulate them, look at the result.

- :class:`PlanarModel` (:mod:`mbint.mbs.planar`): bodies in body coordinates
  (x, y, theta), joints, drivers, forces and penalty contacts, compiled into C tables;
- :class:`MechanicalSystem` (:mod:`mbint.mbs.mechanical`): a mechanism from your own
  equations M(q) q'' + Phi_q^T lambda = Q(t, q, q'), Phi(t, q) = 0 (Python or C kernels);
- :func:`simulate` (:mod:`mbint.mbs.simulate`): run a mechanism with any method of
  :func:`mbint.methods` on the index-1 or the state-space formulation in C;
- :class:`StateSpace` (:mod:`mbint.mbs.statespace`): the partitioned (state-space)
  view of a mechanism at a state: independent coordinates, v'', J1, J2;
- :class:`Trajectory` (:mod:`mbint.mbs.trajectory`): the result, with energy,
  constraint violation, dense output, plots and animation.

The papers' mechanisms are in :mod:`mbint.models`.
"""
from .mechanical import MechanicalSystem
from .planar import PlanarModel
from .simulate import check_initial_conditions, simulate
from .statespace import StateSpace
from .trajectory import Trajectory

__all__ = ["PlanarModel", "MechanicalSystem", "simulate", "check_initial_conditions",
           "Trajectory", "StateSpace"]
