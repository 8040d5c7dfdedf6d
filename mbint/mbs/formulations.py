"""How a mechanism is presented to an integrator: the formulations of :func:`mbint.simulate`.

A run is a point in model kind x formulation x method.  Each formulation is one row of
:data:`TABLE` (a :class:`Formulation`): what it integrates, which methods solve it, which
options it takes, and the layout of its absolute tolerances.  :func:`mbint.simulate`
reads its rules from here and nowhere else; the C side (``csrc/mbs/formulation.h``,
``formulations.def``) implements each one behind one interface, and the codes come from
there (``_core.formulations()``).

==============  ==========================  ===============================================
name            integrated state y          what it is
==============  ==========================  ===============================================
``index1``      (q, q')                     the index-1 ODE: q'' and lambda from the
                                            saddle-point system [M Phi_q^T; Phi_q 0] (LLM
                                            eqs 9-15), analytic Jacobian; optional Baumgarte
                                            terms and projection; dense or sparse (KLU)
``state_space`` (v, v')                     the reduced ODE M^(v) v'' = Q^(t, v, v') of the
                                            independent coordinates v (RN eqs 4-10), chosen
                                            by Gauss-Jordan with full pivoting and re-chosen
                                            when cond(Phi_u) grows by 25 %; the dependent
                                            ones by Newton after every step
``index1_dae``  (q, v, lambda)              M_p y' = f, M_p = diag(I, I, 0), with the
                                            acceleration constraint Phi_q v' = gamma (LS eqs
                                            3-4)
``index2``      (q, v, lambda)              ... with the velocity constraint Phi_q v + Phi_t
``index3``      (q, v, lambda)              ... with the position constraint Phi = 0 (LS eq 1)
``ggl``         (q, v, lambda, mu)          both of the last two, q' = v - Phi_q^T mu (Gear,
                                            Gupta, Leimkuhler 1985)
``joint``       (x, x'), x joint coords     the kinematic tree of a UrdfModel or of a
                                            PlanarModel (revolute and translational
                                            joints) in joint coordinates: x'' by the
                                            articulated-body algorithm, O(n)
                                            (csrc/mbs/joint_tree.c); outputs in body
                                            coordinates by forward kinematics
==============  ==========================  ===============================================

Which methods: every method runs ``index1``; mbint's own methods (not SUNDIALS, which
keep their own step loop) run ``state_space``; the methods with a mass matrix solve
``index1_dae``; those that solve DAEs of index 2 and 3 (``MethodInfo.dae``) also
``index2``, ``index3``, ``ggl``; SUNDIALS ``ida`` solves ``index1_dae`` and ``ggl``; every
method runs ``joint`` (an ODE: a URDF tree's Jacobian exact up to 400 joints, else central
differences of the ABA; a planar tree's by forward differences, its forces being the
model's own at the body coordinates of the forward kinematics).

``formulation="auto"`` is no row of the table: :func:`auto_formulation` picks ``joint``
or ``index1`` (``state_space`` with ``independent=``) by a measured rule.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from .. import _core
from ..methods import MethodInfo, method_info, methods as _all_methods
from ._model_types import Model

__all__ = ["Formulation", "TABLE", "formulations", "formulation", "supported_formulations",
           "auto_formulation", "AUTO_JOINT_MAX", "AUTO_JOINT_MAX_IMPLICIT"]


def _every_method(info):
    return True


def _own_methods(info):
    return info.backend == "mbint"


# Methods that take a mass matrix but not a nonlinear index-1 DAE: ros4's embedded
# formula is not damped at infinity (R^(inf) = -0.367, from its m^ and a: the stage
# values u = (-1, 1, 0.634, 0.634) y0 at z = inf), so its error estimate measures the
# multipliers' existing error, which no step size reduces, and the step collapses
# (a pendulum's index-1 DAE: h = 1e-17 at t = 1e-3 for every rtol from 1e-2 to 1e-8).
# It solves M y' = f where the algebraic equations are linear in y (tests/test_rosenbrock.py).
_NOT_FOR_DAE = ("ros4",)


def _mass_matrix(info):
    return ((info.backend == "mbint" and info.mass_matrix and info.name not in _NOT_FOR_DAE)
            or info.name == "ida")


def _high_index(info):
    return info.backend == "mbint" and bool(getattr(info, "dae", False))


def _ggl(info):
    return _high_index(info) or info.name == "ida"


@dataclass(frozen=True)
class Formulation:
    """One formulation of :func:`mbint.simulate`.

    Attributes
    ----------
    name : str
        The value of ``formulation=``.
    code : int
        Its code in the C core (``_core.formulations()``).
    state : str
        What it integrates.
    description : str
    solves : callable
        ``solves(MethodInfo) -> bool``: whether a method solves it.
    dae : bool
        A DAE in y = (q, v, lambda[, mu]) with M_p y' = f: ``atol`` is given per
        component of that y (a scalar, or n entries), lambda(t0) is computed, and
        ``traj.lam`` is the integrated lambda.
    multipliers : int
        Blocks of nc multipliers in y (0, 1, or 2 for GGL).
    baumgarte, project, independent, sparse : bool
        Whether ``baumgarte=``, ``project=True``, ``independent=`` and
        ``linear_algebra="sparse"`` apply (for every method that takes a sparse problem).
    sparse_dae : bool
        A DAE with a sparse mode (csrc/mbs/dae_sparse.c: KLU, iteration matrices
        a M - J through the problem) for the methods flagged MB_LINSYS_MASS (bdf,
        radau_iia, and ida on index1_dae and ggl: its cj M_p - df/dy is the problem's
        a M_p - J with a = cj); index2 and ggl: models without drivers or prescribed
        forces.
    tree : bool
        It integrates the joint coordinates of the model's kinematic tree
        (:class:`mbint.mbs.joint.JointTree` of a UrdfModel,
        :class:`mbint.mbs.joint.PlanarJointTree` of a PlanarModel).
    """

    name: str
    state: str
    description: str
    solves: Callable
    dae: bool = False
    multipliers: int = 0
    baumgarte: bool = False
    project: bool = True
    independent: bool = False
    sparse: bool = False
    sparse_dae: bool = False
    tree: bool = False

    @property
    def code(self) -> int:
        return _codes()[self.name]

    def size(self, model: Model) -> int:
        """The size of the integrated state for ``model``: 2 nq, or 2 nq + k nc for the
        DAEs with k blocks of multipliers (what ``atol`` is given over: the state space
        takes it over (q, q') too and carries it over to its coordinates)."""
        return 2 * model.nq + self.multipliers * model.nc

    def methods(self) -> list[str]:
        """Names of the methods that solve it."""
        return [m.name for m in _all_methods() if self.solves(m)]


@lru_cache(maxsize=None)
def _codes():
    """The C core's code of every formulation (csrc/mbs/formulations.def)."""
    return {name: int(code) for name, code in _core.formulations().items()}


_DAE_NOTE = "lambda(t0) from the saddle-point system; traj.lam is the integrated lambda"

#: the formulations by name, in the order :func:`formulations` lists them
TABLE = {f.name: f for f in (
    Formulation("index1", "(q, q')",
                "index-1 ODE: q'' and lambda from [M Phi_q^T; Phi_q 0] (LLM eqs 9-15)",
                _every_method, baumgarte=True, sparse=True),
    Formulation("state_space", "(v, v'), v independent",
                "reduced ODE of the independent coordinates (RN eqs 4-10), dependent ones by "
                "Newton after every step", _own_methods, project=False, independent=True,
                sparse=True),
    Formulation("index1_dae", "(q, v, lambda)",
                f"DAE with Phi_q v' = gamma (LS eqs 3-4); {_DAE_NOTE}", _mass_matrix, dae=True,
                multipliers=1, sparse_dae=True),
    Formulation("index2", "(q, v, lambda)",
                f"DAE with Phi_q v + Phi_t = 0 (LS eq 2); {_DAE_NOTE}", _high_index, dae=True,
                multipliers=1, sparse_dae=True),
    Formulation("index3", "(q, v, lambda)",
                f"DAE with Phi = 0 (LS eq 1); {_DAE_NOTE}", _high_index, dae=True,
                multipliers=1, sparse_dae=True),
    Formulation("ggl", "(q, v, lambda, mu)",
                f"stabilized index-2 DAE of Gear, Gupta and Leimkuhler; {_DAE_NOTE}", _ggl,
                dae=True, multipliers=2, sparse_dae=True),
    Formulation("joint", "(x, x'), x the joint coordinates",
                "the kinematic tree of a UrdfModel, or of a PlanarModel whose revolute and "
                "translational joints form a tree (no drivers, loops or contacts), in joint "
                "coordinates: x'' by the articulated-body algorithm (O(n); a planar model's "
                "forces evaluated at the body coordinates of the forward kinematics); the "
                "Jacobian exact (URDF, <= 400 joints) or by differences of it; outputs in "
                "body coordinates by forward kinematics; traj.lam and traj.qdd at each output "
                "from the index-1 saddle-point system at its (q, q'), on first use (no "
                "multipliers are integrated)",
                _every_method, project=False, tree=True),
)}


def formulations() -> list[Formulation]:
    """Every formulation of :func:`mbint.simulate`.

    Returns
    -------
    list of Formulation
    """
    return list(TABLE.values())


def formulation(name: str) -> Formulation:
    """The :class:`Formulation` called ``name`` (ValueError naming the choices)."""
    if name not in TABLE:
        raise ValueError(f"formulation: {name!r} is not available; simulate builds "
                         f"{tuple(TABLE)}.")
    return TABLE[name]


def supported_formulations(method: str | type | MethodInfo) -> tuple[str, ...]:
    """The formulations :func:`mbint.simulate` runs with a method.

    Every method integrates the index-1 ODE (``"index1"``) and every method of mbint's
    own driver the state-space ODE (``"state_space"``).  The methods with a mass matrix
    (``MethodInfo.mass_matrix``) also solve the index-1 DAE (``"index1_dae"``); those
    that solve DAEs of index 2 and 3 (``MethodInfo.dae``: ``radau_iia``, ``bdf``, the
    fixed-step ``radau_ia*``, ``radau_iia*``, ``lobatto_iiic*``, ``lstable_block``,
    ``astable_block``) also ``"index2"``, ``"index3"`` and ``"ggl"``; SUNDIALS ``ida``
    solves ``"index1_dae"`` and ``"ggl"`` (the multipliers of GGL left out of its error
    test).

    Parameters
    ----------
    method : str or MethodInfo

    Returns
    -------
    tuple of str
        In the order of :data:`TABLE`.
    """
    info = method if isinstance(method, MethodInfo) else method_info(method)
    return tuple(f.name for f in TABLE.values() if f.solves(info))


#: formulation="auto" with an explicit method: trees of up to this many joints run on
#: "joint".  Measured (docs/choosing.md, "formulation='auto'"): on the spatial hinge
#: chain "index1" (sparse) takes 4.4x, 9.4x the time of "joint" with dop853 at N = 100,
#: 300, on the planar pendulum chain 2.1x ... 4.3x from N = 10 to 1000; joint stays
#: ahead up to the largest N measured (1000), beyond which the rule does not guess.
AUTO_JOINT_MAX = 1000
#: ... with an implicit method (its Jacobian on "joint" is dense: O(n^3) a Newton
#: matrix, against O(n) on the sparse "index1"): the largest tree run on "joint", by the
#: model's kind.  Measured: URDF chain, index1 / joint 2.0-2.2 at N = 100 (radau_iia,
#: bdf), 1.05 at N = 300 (radau_iia); planar chain (Jacobian by forward differences)
#: 1.22 at N = 30, 0.41-0.46 at N = 100.  A hand-built SpatialModel tree (its Jacobian by
#: forward differences, as the planar one's was then) takes the planar value: not
#: measured on its own.
AUTO_JOINT_MAX_IMPLICIT = {"urdf": 200, "spatial": 50, "planar": 50}


def auto_formulation(model: Model, info: MethodInfo, baumgarte: Any = None,
                     project: bool = False, independent: Any = None,
                     linear_algebra: str | None = None) -> tuple[str, str, Any]:
    """What ``formulation="auto"`` of :func:`mbint.simulate` takes for ``model`` and the
    method ``info``: ``(name, why, tree)``.

    ``"joint"`` when the model's joints form a tree that the joint formulation accepts
    (:func:`mbint.mbs.joint.joint_tree`: a UrdfModel, a PlanarModel of revolute and
    translational joints, or a SpatialModel of revolute, translational and spherical
    joints, without drivers, loops or contacts) of at most
    :data:`AUTO_JOINT_MAX` joints (:data:`AUTO_JOINT_MAX_IMPLICIT` of the model's kind
    for an implicit method), and no option of another formulation is given (``baumgarte``,
    ``project=True``, ``independent``, ``linear_algebra="sparse"``); ``"index1"``
    otherwise (``"state_space"`` when ``independent`` is given).

    Parameters
    ----------
    model : PlanarModel, SpatialModel or MechanicalSystem
    info : MethodInfo
        The method of the run.
    baumgarte, project, independent, linear_algebra
        The run's options, as given to :func:`mbint.simulate`.

    Returns
    -------
    name : str
        ``"joint"``, ``"index1"`` or ``"state_space"``.
    why : str
        The rule that decided, in words (``traj.options["formulation_rule"]``).
    tree : JointTree, PlanarJointTree or None
        The model's tree when ``name`` is ``"joint"`` (built once).
    """
    if independent is not None:
        return "state_space", "independent= was given (state space only)", None
    given = [k for k, v in (("baumgarte", baumgarte is not None), ("project", bool(project)),
                            ("linear_algebra='sparse'", linear_algebra == "sparse")) if v]
    if given:
        return "index1", f"{', '.join(given)} given (index-1 options)", None
    from .joint import joint_tree
    try:
        tree = joint_tree(model)
    except ValueError as e:
        why = str(e).removeprefix("formulation='joint': ").split(";")[0]
        return "index1", f"not a tree the joint formulation takes: {why}", None
    from .urdf import UrdfModel
    kind_key = ("urdf" if isinstance(model, UrdfModel) else
                "planar" if model.kind == "planar" else "spatial")
    limit = AUTO_JOINT_MAX_IMPLICIT[kind_key] if info.implicit else AUTO_JOINT_MAX
    kind = "an implicit" if info.implicit else "an explicit"
    if tree.n > limit:
        return "index1", f"{tree.n} joints > {limit} for {kind} method", None
    return "joint", f"a tree of {tree.n} joints <= {limit} for {kind} method", tree
