"""The method registry as seen from Python: ``mbint.methods()``.

The list comes from the C registry (csrc/methods/methods.def); this module adds
the human-readable properties and references.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from . import _core

_DESCRIPTIONS = {
    "euler": ("Forward Euler", "Schwab & Delhaes, lecture notes 7.1"),
    "heun": ("Heun (explicit trapezoid)", "lecture notes 7.2"),
    "rk4": ("Classical 4-stage Runge-Kutta", "lecture notes 7.3"),
    "rk23": ("Bogacki-Shampine 3(2), FSAL, cubic dense output (ode23)", "lecture notes 7.8"),
    "dopri5": ("Dormand-Prince 5(4), FSAL, 4th-order dense output (ode45)", "lecture notes 7.8"),
    "dop853": ("Dormand-Prince 8(5,3) (Hairer's DOP853), FSAL, 12 evaluations per step; error "
               "|err5|^2 / sqrt(|err5|^2 + 0.01 |err3|^2), which behaves like an order-7 estimate "
               "(error_order 7: step-size exponent 1/8); 7th-order dense output from 3 more "
               "evaluations per output step",
               "Hairer, Norsett & Wanner I, II.5-II.6 (DOP853); Prince & Dormand 1981"),
    "nystrom_midpoint": ("One-evaluation Nystrom midpoint scheme ('Euler 2') for q'' = a(t, q, q')",
                         "lecture notes 7.4"),
    "adams": ("Variable-step variable-order Adams-Bashforth-Moulton PECE, orders 1-12 (ode113)",
              "lecture notes 7.8; Shampine & Gordon 1975"),
    "radau_iia": ("Radau IIA, 3 stages, order 5, adaptive as RADAU5 (transformed Newton, embedded "
                  "estimate, collocation dense output, mass matrix)", "Hairer & Wanner II, IV.8"),
    "radau_ia2": ("Radau IA, 2 stages, order 3, L-stable; fixed step h=, Newton to rtol/atol", "Hairer & Wanner II, IV.5"),
    "radau_ia3": ("Radau IA, 3 stages, order 5, L-stable; fixed step h=, Newton to rtol/atol", "Hairer & Wanner II, IV.5"),
    "radau_ia4": ("Radau IA, 4 stages, order 7, L-stable; fixed step h=, Newton to rtol/atol", "Hairer & Wanner II, IV.5"),
    "radau_iia2": ("Radau IIA, 2 stages, order 3, L-stable; fixed step h=, Newton to rtol/atol", "Hairer & Wanner II, IV.5"),
    "radau_iia3": ("Radau IIA, 3 stages, order 5, L-stable; fixed step h=, Newton to rtol/atol", "Hairer & Wanner II, IV.5"),
    "radau_iia4": ("Radau IIA, 4 stages, order 7, L-stable; fixed step h=, Newton to rtol/atol", "Hairer & Wanner II, IV.5"),
    "lobatto_iiic2": ("Lobatto IIIC, 2 stages, order 2, L-stable; fixed step h=, Newton to rtol/atol", "Hairer & Wanner II, IV.5"),
    "lobatto_iiic3": ("Lobatto IIIC, 3 stages, order 4, L-stable; fixed step h=, Newton to rtol/atol", "Hairer & Wanner II, IV.5"),
    "lobatto_iiic4": ("Lobatto IIIC, 4 stages, order 6, L-stable; fixed step h=, Newton to rtol/atol", "Hairer & Wanner II, IV.5"),
    "backward_euler": ("Backward Euler (implicit, L-stable), Newton with LU reuse", "lecture notes 7.7"),
    "trapezoid": ("Trapezoidal rule (implicit, A-stable), Newton with LU reuse", "lecture notes 7.7"),
    "bdf": ("Variable-order (1-5) BDF/NDF, quasi-constant step, mass matrix (ode15s)", "lecture notes 7.8; Shampine & Reichelt 1997"),
    "ros4": ("Rosenbrock 4(3), 4 stages (3 f evaluations), L-stable, gamma = 0.57281606, dense output, mass matrix", "RN paper section 4; Hairer & Wanner II, IV.7"),
    "ros2": ("Modified Rosenbrock 2(3) of ode23s, L-stable, FSAL, own dense output", "Shampine & Reichelt 1997"),
    "rodas4": ("RODAS 4(3), 6 stages, stiffly accurate, L-stable, dense output, mass matrix", "Hairer & Wanner II, IV.7 (rodas.f)"),
    "llm": ("Local Linearization Method: exponential integrator y + phi from exp of the block matrix [[f_y, f_t, f], [0, 0, 1], [0, 0, 0]] (Van Loan), order 2, exact on linear problems, R(z) = e^z; local error estimate of eqs 29-33, continuous output eq 18", "LLM paper, Gil, Sanfelice, Nikravesh, eqs 1-6, 18, 29-34"),
    "w2": ("W-method of order 2 (1), L-stable, keeps its Jacobian across steps", "RN paper section 4; Verwer et al. 1999"),
    # the RN paper's methods in Nystrom form (second-order view; the state-space formulation)
    "rosenbrock_nystrom": ("Rosenbrock-Nystrom 4(3) on q'' = a(t, q, q'): the RN paper's 4-stage, "
                           "L-stable method (gamma = 0.57281606) in the form of Theorem 2.1, 3 "
                           "evaluations per step, stage solves with Pi = M/gamma^2 - (h/gamma) M J2 "
                           "- h^2 M J1 (eqs 43-46; M, M J1, M J2 analytic on the state-space "
                           "formulation); options error_estimate ('plain' | 'scaled'), jacobian "
                           "('exact' | 'fd')",
                           "RN paper, Theorem 2.1, sections 3-4"),
    "w_nystrom": ("W-method of order 2 (1) in the same Nystrom form, with a Jacobian of finite "
                  "differences (jacobian='fd', the default) kept across steps; error estimate "
                  "filtered by (I - h gamma J)^-1 by default (error_estimate='scaled')",
                  "RN paper section 4 (Verwer et al. 1999)"),
    "auto": ("Automatic stiff/non-stiff switching in the spirit of LSODA: dopri5 while the problem "
             "is not stiff, rodas4 (L-stable; Jacobian from jac= or finite differences) while it "
             "is.  Goes stiff when DOPRI5's stiffness test finds the step held by stiffness "
             "(|h lambda| above min(3, 30 rtol^(1/5))) and h rho(J) confirms it; back when "
             "h rho(J) of rodas4's steps is below half of that.  result.nswitch counts the "
             "switches; no mass matrix",
             "Petzold 1983 (LSODA); Hairer & Wanner II, IV.2 (stiffness detection), IV.7 (RODAS)"),
    "singular_perturbation": (
        "Singular-perturbation multirate scheme: the fast variables (fast=) in their local "
        "linearization by block exponentials, RK4 on the linearized slow manifold for the slow "
        "ones; order 1, stable for any fast eigenvalue in the left half plane; error estimate "
        "(embedded slow stage, coupling terms, LLM estimate of the fast part) and a continuous "
        "output of its own (not in the paper)",
        "SP paper, Gil, Sanfelice, Nikravesh (DETC2013), eqs 17-47"),
    "lstable_block": (
        "L-stable block implicit one-step method of the LS paper: r nodes per step (r=2..6, "
        "nodes='equidistant', 'chebyshev' or 'legendre'), B and d of eq 5 computed from the "
        "nodes with R(z) matched to a subdiagonal Pade approximant (pade=(k, j); default "
        "(r-2, r): (1, 3) for r = 3 as the printed eqs 14, 15, 17, and (2, 4) for r = 4); "
        "simplified Newton on the stacked system (newton_tol=1e-3), split by B = T Lambda T^-1 "
        "into n x n systems as RADAU5's (newton='full': one rn x rn system); fixed h= as in the paper, or "
        "adaptive with an embedded error estimate of order min(r, p - 1) from the block's "
        "node values, filtered by (M - h J / r)^-1 as RADAU5's (not in the paper); mass "
        "matrix, DAEs of index 1-3",
        "LS paper, Li, Ding, Li (2019), eqs 5-16"),
    "astable_block": (
        "A-stable variant of lstable_block: R(z) the diagonal (r, r) Pade approximant (the "
        "paper's eq 16 for r = 4); the same options; adaptive by step doubling",
        "LS paper, Li, Ding, Li (2019), section 6, eq 16"),
    "cvode_bdf": ("SUNDIALS CVODE, variable-order BDF 1-5, Newton, dense direct linear solver", "Hindmarsh et al. 2005 (SUNDIALS)"),
    "cvode_adams": ("SUNDIALS CVODE, variable-order Adams-Moulton 1-12, Newton, dense direct linear solver", "Hindmarsh et al. 2005 (SUNDIALS)"),
    "ida": ("SUNDIALS IDA, variable-order BDF 1-5 on M y' - f = 0 (mass matrix; also mbint.solve_dae)", "Hindmarsh et al. 2005 (SUNDIALS)"),
    "arkode_erk": ("SUNDIALS ARKODE ERKStep, Zonneveld 5(3)4 table, cubic Hermite dense output", "Reynolds et al. 2023 (ARKODE)"),
    "arkode_dirk": ("SUNDIALS ARKODE ARKStep, ESDIRK ARK4(3)6L[2]SA, L-stable, Newton, dense direct linear solver", "Kennedy & Carpenter 2003; Reynolds et al. 2023 (ARKODE)"),
}

# SciPy and MATLAB names accepted as aliases (matched case-insensitively): a script
# written for scipy.integrate.solve_ivp or MATLAB's ode suite changes one word
ALIASES = {
    "rk45": "dopri5", "rk23": "rk23", "dop853": "dop853", "radau": "radau_iia", "bdf": "bdf",
    "lsoda": "auto",
    "ode45": "dopri5", "ode23": "rk23", "ode113": "adams", "ode15s": "bdf", "ode23s": "ros2",
}


@dataclass(frozen=True)
class MethodInfo:
    """Properties of one integrator.

    Attributes
    ----------
    name : str
        Name to pass as ``method=``.
    order : int
        Order of the propagated solution (for ``adams``: the maximum order).
    error_order : int
        Order of the embedded solution used for the error estimate (0: none).
    implicit : bool
    adaptive : str
        ``"embedded"`` (own error estimate), ``"step doubling"`` (Richardson
        estimate from two half steps), or ``"variable order"``.
    fixed_step : bool
        Runs with a fixed step ``h=``.
    needs_jacobian : bool
    mass_matrix : bool
        Accepts a constant mass matrix, ``M y' = f(t, y)`` (``mass=``).
    second_order : bool
        Works on the second-order view ``q'' = a(t, q, q')`` with ``y = (q, q')``.
    dense_output : str
        ``"own"`` interpolant or ``"hermite"`` (cubic Hermite from f at both ends).
    description, reference : str
    backend : str
        ``"mbint"`` (a step behind mbint's driver) or ``"sundials"`` (CVODE,
        IDA or ARKODE with its own time loop, see :mod:`mbint.dae`).
    controller : str or None
        The step-size controller used when ``controller=None`` (the default):
        ``"pi"`` (Gustafsson's PI, LLM eq 40) for most methods, ``"predictive"``
        (Gustafsson's predictive controller, as RADAU5) for ``radau_iia``; None for
        the SUNDIALS methods, which control their own steps.
    options : tuple of str
        Names of the method's own options (keywords of :func:`mbint.solve_ivp` and
        :func:`mbint.simulate` beyond the common ones), empty for most methods.
    dae : bool
        Solves semi-explicit DAEs of index 2 and 3 through a singular mass matrix
        (the DAE formulations of :func:`mbint.simulate`), with the index-2/3
        components of its norms scaled as in RADAU5.
    sparse : bool
        Solves its Newton systems through the problem's structured linear algebra
        when it has one (the sparse index-1 formulation of a large planar mechanism,
        :func:`mbint.simulate`): no n x n matrix is formed.  The other implicit
        methods form the dense Jacobian there, O(n^2) memory and O(n^3) time.
    """

    name: str
    order: int
    error_order: int
    implicit: bool
    adaptive: str
    fixed_step: bool
    needs_jacobian: bool
    mass_matrix: bool
    second_order: bool
    dense_output: str
    description: str
    reference: str
    backend: str = "mbint"
    controller: str | None = None
    options: tuple = ()
    dae: bool = False
    sparse: bool = False


def _info(d: Any) -> MethodInfo:
    f = d["flags"]
    if f & _core.MB_VARIABLE_ORDER:
        adaptive = "variable order"
    elif f & _core.MB_EMBEDDED:
        adaptive = "embedded"
    elif f & _core.MB_FIXED_ONLY:
        adaptive = "none"
    else:
        adaptive = "step doubling"
    desc, ref = _DESCRIPTIONS.get(d["name"], ("", ""))
    return MethodInfo(
        name=d["name"],
        order=12 if d["name"] == "adams" else d["order"],
        error_order=d["error_order"],
        implicit=bool(f & _core.MB_IMPLICIT),
        adaptive=adaptive,
        fixed_step=not (f & _core.MB_VARIABLE_ORDER),
        needs_jacobian=bool(f & _core.MB_NEEDS_JAC),
        mass_matrix=bool(f & _core.MB_MASS),
        second_order=bool(f & _core.MB_SECOND_ORDER),
        dense_output="hermite" if (f & _core.MB_DENSE_HERMITE) else "own",
        description=desc,
        reference=ref,
        backend=d.get("backend", "mbint"),
        controller={_core.MB_CONTROLLER_I: "i", _core.MB_CONTROLLER_PI: "pi",
                    _core.MB_CONTROLLER_PREDICTIVE: "predictive"}.get(d.get("controller")),
        options=tuple(d.get("options", ())),
        dae=bool(f & _core.MB_DAE),
        sparse=bool(f & _core.MB_LINSYS),
    )


@lru_cache(maxsize=None)
def _table() -> dict[str, MethodInfo]:
    # the registry is fixed at build time: read it once
    return {d["name"]: _info(d) for d in _core.methods()}


def methods() -> list[MethodInfo]:
    """Every registered integrator with its properties.

    Returns
    -------
    list of MethodInfo
    """
    return list(_table().values())


def method_info(name: str | type) -> MethodInfo:
    """Properties of one method (``ValueError`` naming ``method`` when unknown)."""
    return _table()[resolve(name)]


def resolve(name: str | type) -> str:
    """Canonical method name for ``name``.

    Aliases (case-insensitive): SciPy's ``RK45`` (dopri5), ``RK23``, ``DOP853``,
    ``Radau`` (radau_iia), ``BDF`` and ``LSODA`` (``auto``: dopri5, switching to rodas4
    while the problem is stiff; see :data:`ALIASES`), MATLAB's
    ``ode45``, ``ode23``, ``ode113`` (adams), ``ode15s`` (bdf), ``ode23s`` (ros2).
    SciPy's solver classes (``scipy.integrate.RK45`` ...) are accepted by name.
    """
    if isinstance(name, type) and name.__module__.startswith("scipy.integrate"):
        name = name.__name__  # method=scipy.integrate.RK45, as SciPy allows
    if not isinstance(name, str):
        raise ValueError(f"method must be a string naming one of mbint.methods(), got {name!r}.")
    key = name.lower()
    key = ALIASES.get(key, key)
    if key not in _table():
        raise ValueError(f"method: unknown method {name!r}; known methods: "
                         f"{', '.join(_table())}.")
    return key
