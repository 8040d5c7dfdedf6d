"""The method registry as seen from Python: ``mbint.methods()``.

The list comes from the C registry (csrc/methods/methods.def); this module adds
the human-readable properties and references.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from . import _core

_DESCRIPTIONS = {
    "euler": ("Forward Euler", "Schwab & Delhaes, lecture notes 7.1"),
    "heun": ("Heun (explicit trapezoid)", "lecture notes 7.2"),
    "rk4": ("Classical 4-stage Runge-Kutta", "lecture notes 7.3"),
    "rk23": ("Bogacki-Shampine 3(2), FSAL, cubic dense output (ode23)", "lecture notes 7.8"),
    "dopri5": ("Dormand-Prince 5(4), FSAL, 4th-order dense output (ode45)", "lecture notes 7.8"),
    "nystrom_midpoint": ("One-evaluation Nystrom midpoint scheme ('Euler 2') for q'' = a(t, q, q')",
                         "lecture notes 7.4"),
    "adams": ("Variable-step variable-order Adams-Bashforth-Moulton PECE, orders 1-12 (ode113)",
              "lecture notes 7.8; Shampine & Gordon 1975"),
}

# SciPy / MATLAB names accepted as aliases
ALIASES = {"rk45": "dopri5", "ode45": "dopri5", "ode23": "rk23", "ode113": "adams"}


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


def _info(d):
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
    )


@lru_cache(maxsize=None)
def _table():
    # the registry is fixed at build time: read it once
    return {d["name"]: _info(d) for d in _core.methods()}


def methods():
    """Every registered integrator with its properties.

    Returns
    -------
    list of MethodInfo
    """
    return list(_table().values())


def method_info(name):
    """Properties of one method (``ValueError`` naming ``method`` when unknown)."""
    return _table()[resolve(name)]


def resolve(name):
    """Canonical method name for ``name`` (aliases: RK45, RK23, ode45, ode23, ode113)."""
    if not isinstance(name, str):
        raise ValueError(f"method must be a string naming one of mbint.methods(), got {name!r}.")
    key = name.lower()
    key = ALIASES.get(key, key)
    if key not in _table():
        raise ValueError(f"method: unknown method {name!r}; known methods: "
                         f"{', '.join(_table())}.")
    return key
