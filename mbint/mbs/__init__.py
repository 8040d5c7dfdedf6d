"""Mechanisms: describe them, simulate them, look at the result.

- :class:`PlanarModel` (:mod:`mbint.mbs.planar`): bodies in body coordinates
  (x, y, theta), joints, drivers, forces and penalty contacts, compiled into C tables;
- :class:`SpatialModel` (:mod:`mbint.mbs.spatial`): 3-D bodies with Euler parameters
  (x, y, z, e0..e3), the four constraint primitives of the RN paper and the joints built
  from them, drivers, TSDA/RSDA/bushing/tire forces, compiled into C tables;
- :class:`MechanicalSystem` (:mod:`mbint.mbs.mechanical`): a mechanism from your own
  equations M(q) q'' + Phi_q^T lambda = Q(t, q, q'), Phi(t, q) = 0 (Python or C kernels);
- :func:`simulate` (:mod:`mbint.mbs.simulate`): run a mechanism with any method of
  :func:`mbint.methods` on any of its formulations in C;
- :func:`formulations` (:mod:`mbint.mbs.formulations`): the formulations, one row each
  (the index-1 ODE, the state space, the index-1/2/3 DAEs and GGL): what each integrates,
  which methods solve it, which options it takes;
- :class:`StateSpace` (:mod:`mbint.mbs.statespace`): the partitioned (state-space)
  view of a mechanism at a state: independent coordinates, v'', J1, J2;
- :class:`Trajectory` (:mod:`mbint.mbs.trajectory`): the result, with energy,
  constraint violation, dense output, plots and animation.

The papers' mechanisms are in :mod:`mbint.models`.
"""
from .mechanical import MechanicalSystem
from .planar import PlanarModel
from .spatial import SpatialModel
from .formulations import formulations
from .simulate import check_initial_conditions, simulate
from .statespace import StateSpace
from .trajectory import Trajectory

__all__ = ["PlanarModel", "SpatialModel", "MechanicalSystem", "simulate", "check_initial_conditions",
           "formulations", "Trajectory", "StateSpace"]
