"""What a model description must hold: the check behind ``from_description``.

:meth:`PlanarModel.describe` and :meth:`SpatialModel.describe` store a model as plain
data (JSON in a saved trajectory, ``model_json``); ``from_description`` rebuilds it.
The C tables take every parameter an element has from the description and fill the
others with 0, so a description with a parameter left out (a crafted or damaged
file) would load as a different mechanism, silently.  These tables list, for every
element kind, the parameters the ``add_*`` methods give it (tests/test_persistence.py
builds every kind and holds the tables to them), and :func:`check_planar` and
:func:`check_spatial` refuse a description that lacks one or has one more, naming the
element.
"""
from __future__ import annotations

import math
import numbers

__all__ = ["PLANAR_PARAMS", "SPATIAL_PRIMS", "check_planar", "check_spatial"]

#: the coefficients of a time function f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi)
#: (planar.py: _timefn), and of an actuator force (prefixed fa_)
_TF = ("c0", "c1", "c2", "a", "w", "psi")
_FA = tuple("fa_" + k for k in _TF)
_SI_SJ = ("si_x", "si_y", "sj_x", "sj_y")
_CONTACT = ("si_x", "si_y", "ri", "K", "cd", "e")

#: planar element kind -> its parameters (PlanarModel.add_*)
PLANAR_PARAMS = {
    "revolute": _SI_SJ,
    "translational": _SI_SJ + ("ni_x", "ni_y", "phi0"),
    "distance": _SI_SJ + ("L",),
    "fixed": _SI_SJ + ("phi0",),
    "driver_angle": _TF,
    "driver_coord": _TF + ("coord",),
    "tsda": _SI_SJ + ("k", "c", "L0") + _FA,
    "rsda": ("k", "c", "L0", "wrap"),
    "generalized": ("coord",) + _FA,
    "contact_line": _CONTACT + ("p0_x", "p0_y", "nrm_x", "nrm_y"),
    "contact_circles": _CONTACT + ("sj_x", "sj_y", "rj"),
}

#: spatial primitive type -> (required fields, optional fields): vectors (ai, bi, aj,
#: bj, si, sj) and numbers.  Optional: a value the joints built of primitives leave
#: at 0 (the hinge's dot-1 rows have no c0; only a driver has a time function).
SPATIAL_PRIMS = {
    "dot1": (("ai", "aj"), ("c0",)),
    "dot2": (("ai", "si", "sj"), _TF),
    "point": (("si", "sj"), ()),
    "dist": (("si", "sj", "c0"), ()),
    "angle": (("ai", "bi", "aj") + _TF, ()),
    "tsda": (("si", "sj", "k", "c", "L0") + _FA, ()),
    "rsda": (("ai", "bi", "aj", "k", "c", "L0") + _FA, ()),
    "bushing_t": (("ai", "si", "sj", "k", "c"), ()),
    "bushing_r": (("ai", "bi", "aj", "bj", "k", "c"), ()),
    "tire": (("si", "k", "c", "z0", "bump_x", "bump_r", "wheel_r", "unilateral", "L0"), ()),
}
_VECTORS = ("ai", "bi", "aj", "bj", "si", "sj")


def _fail(where, what):
    raise ValueError(f"model description: {where}: {what}; the description does not come "
                     f"from describe() (a crafted or damaged file?).")


def _keys(d, keys, where):
    if not isinstance(d, dict):
        _fail(where, f"expected a mapping, got {type(d).__name__}")
    missing = [k for k in keys if k not in d]
    if missing:
        _fail(where, f"missing {', '.join(missing)}")


def _fields(where, fields, required, optional=()):
    """Every required field present, nothing else, numbers finite (vectors: 3)."""
    missing = [k for k in required if k not in fields]
    unknown = sorted(k for k in fields if k not in required and k not in optional)
    parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
        ([f"unknown {', '.join(unknown)}"] if unknown else [])
    if parts:
        _fail(where, "; ".join(parts))
    for k, v in fields.items():
        vals = v if k in _VECTORS else [v]
        if k in _VECTORS and (not isinstance(v, (list, tuple)) or len(v) != 3):
            _fail(where, f"{k} must be a vector of 3 numbers, got {v!r}")
        if not all(isinstance(x, numbers.Real) and math.isfinite(x) for x in vals):
            _fail(where, f"{k} must be finite numbers, got {v!r}")


def _common(d, element_keys):
    _keys(d, ("name", "gravity", "bodies", "joints", "forces"), "the model")
    for k, b in enumerate(d["bodies"]):
        _keys(b, ("name", "mass", "inertia", "q0", "qd0"), f"body {k}")
    for group in ("joints", "forces"):
        for k, e in enumerate(d[group]):
            _keys(e, element_keys, f"{group}[{k}]")


def check_planar(d):
    """ValueError unless d is a complete description of a PlanarModel."""
    _common(d, ("kind", "name", "i", "j", "params"))
    for e in d["joints"] + d["forces"]:
        where = f"{e['kind']} {e['name']!r}"
        if e["kind"] not in PLANAR_PARAMS:
            _fail(where, f"unknown kind (known: {', '.join(PLANAR_PARAMS)})")
        _fields(where, e["params"], PLANAR_PARAMS[e["kind"]])


def check_spatial(d):
    """ValueError unless d is a complete description of a SpatialModel."""
    _common(d, ("kind", "name", "i", "j", "prims"))
    for e in d["joints"] + d["forces"]:
        for k, pr in enumerate(e["prims"]):
            where = f"{e['kind']} {e['name']!r}, primitive {k}"
            _keys(pr, ("type",), where)
            if pr["type"] not in SPATIAL_PRIMS:
                _fail(where, f"unknown type {pr['type']!r} (known: {', '.join(SPATIAL_PRIMS)})")
            required, optional = SPATIAL_PRIMS[pr["type"]]
            _fields(f"{where} ({pr['type']})", {k2: v for k2, v in pr.items() if k2 != "type"},
                    required, optional)
