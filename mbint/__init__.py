"""mbint: integrators for multibody dynamics with a C core.

Public API
----------
solve_ivp   SciPy-compatible initial value problem solver over mbint's methods
solve_dae   implicit DAEs F(t, y, y') = 0 with SUNDIALS IDA
methods     every method with its properties
stability   stability functions and regions
multirate   the fast/slow split of the singular_perturbation method (propose_split)
errors      global error by step halving (Richardson) and the truncation/round-off study
problems    standard test problems (Python callables and C LowLevelCallables)
PlanarModel, SpatialModel, MechanicalSystem
            mechanisms (planar body coordinates, 3-D bodies with Euler parameters,
            or your own equations)
simulate, Trajectory            run a mechanism with any method; its motion, energy, violation
Simulator, OdeSimulator         a run of simulate / solve_ivp in pieces (step, advance,
                                set_input): controllers, co-simulation
formulations                    how a mechanism is presented to a method (index-1 ODE, state
                                space, index-1/2/3 DAEs, GGL): what each takes and who solves it
StateSpace                      the partitioned (state-space) view of a mechanism (RN paper)
equilibrium, linearize, modes   statics, (A, B, C, D) in the independent coordinates, vibration modes
models      the source papers' mechanisms
load        a trajectory saved by Trajectory.save (NetCDF)
load_urdf   a robot's URDF file as a SpatialModel (needs yourdfpy: pip install mbint[urdf])
ensemble, SimulationTask   parameter sweeps on a local pool or a Dask cluster
view3d, View3D  an interactive 3-D view of a model or trajectory (K3D / three.js; Jupyter and
            standalone HTML; needs k3d: pip install mbint[view3d])

Conventions (SciPy's)
---------------------
Every callback and kernel that depends on time takes it first, as ``f(t, y)``:
``constraints(t, q)``, ``gamma(t, q, qd)``, ``forces(t, q, qd)``, events
``g(t, q, qd)``, outputs ``fn(t, q, qd)``.  Every time series is component-major,
as ``res.y``: ``Trajectory.q`` has shape (nq, m), and the kernels evaluate m points
given along the last axis.  SI units throughout (m, rad, kg, N, s, J).
"""
from . import _status, errors, multirate, problems, stability
from .dense import DenseOutput
from ._interrupt import IntegrationInterrupted
from .ivp import OdeResult, solve_ivp
from .dae import solve_dae
from .methods import MethodInfo, methods
from .mbs import (MechanicalSystem, PlanarModel, SpatialModel, StateSpace, Trajectory,
                  formulations, simulate)
from .mbs.dataset import load
from .simulator import OdeSimulator, SimulationFailed, Simulator
from .mbs.urdf import load_urdf
from .mbs.linear import equilibrium, linearize, modes
from . import mbs, models
from .ensemble import EnsembleInterrupted, EnsembleResult, MemberError, SimulationTask, ensemble
from .scene3d import View3D, view3d

__all__ = ["solve_ivp", "solve_dae", "methods", "MethodInfo", "OdeResult", "DenseOutput", "stability",
           "errors", "multirate", "problems", "_status", "PlanarModel", "SpatialModel",
           "MechanicalSystem",
           "simulate", "formulations", "Trajectory", "models", "mbs", "IntegrationInterrupted", "load",
           "ensemble", "EnsembleResult", "EnsembleInterrupted", "MemberError", "SimulationTask",
           "StateSpace", "load_urdf", "equilibrium", "linearize", "modes",
           "Simulator", "OdeSimulator", "SimulationFailed", "view3d", "View3D",
           "SPARSE_MIN_NQ"]
__version__ = "0.2.0"

#: planar models with at least this many coordinates run the index-1 formulation on
#: sparse linear algebra (SuiteSparse KLU) when ``linear_algebra="auto"``
from . import _core as _core_module  # noqa: E402

SPARSE_MIN_NQ = _core_module.MB_INDEX1_SPARSE_MIN_NQ
