"""Forward parameter sensitivities of :func:`mbint.solve_ivp` (issue 26).

The C wrapper ``csrc/core/sens.c`` presents ``(y, s_0, .., s_{np-1})`` as one augmented
problem that the chosen method integrates with its own steps and error control; this
module checks the ``sensitivities=`` argument, builds the augmented ``y0``, tolerances
and the ``sens`` tuple of ``_core.solve``, and splits the result."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import numpy as np

#: methods that take the block-diagonal iteration matrices diag(a M - J, ..): one n x n
#: factorization for y and every s_k (CVODES' simultaneous corrector)
BLOCK_NEWTON = frozenset({"bdf", "radau_iia", "lstable_block", "cvode_bdf"})


@dataclasses.dataclass
class Sensitivities:
    """What :func:`mbint.solve_ivp` differentiates (``sensitivities=``).

    ``sensitivities=True`` (every entry of ``p = args[0]``), a sequence of indices into
    p, a dict of these fields, or an instance.  The sensitivity equations
    ``s_k' = J s_k + df/dp_k``, ``s_k(t0) = dy0/dp_k`` are integrated with the same method
    and steps as y (csrc/core/sens.c), in its error test by default (CVODES' ``errconS``;
    y keeps the error control of the plain run), their right-hand side by one directional
    difference of f per parameter (centred: 2 f; CVODES' DQ).  The Newton methods
    (``bdf``, ``radau_iia``, ``lstable_block``, ``cvode_bdf``) share one n x n
    factorization between y and every s_k (the exact block lower-triangular iteration
    matrix; ``cvode_bdf`` on the augmented problem is CVODES' simultaneous corrector with
    DQ sensitivity right-hand sides); the Rosenbrock, exponential and other methods that
    need J get the exact Jacobian of the augmented system; explicit methods just its
    right-hand side.  Not with ``events``, complex ``y0``, ``ida``, or a LowLevelCallable
    ``fun`` for parameters of p.  Result: ``sens`` (n, np, n_points); with
    ``dense_output`` ``sens_sol(t)`` ((n, np) or (n, np, m)) and ``sol(t)`` of y alone;
    ``nfev_base``, ``njev_base`` (calls of fun and jac; ``nfev`` counts the augmented
    right-hand sides).  At tight tolerances (rtol below about 1e-7) the Newton methods
    need ``jac`` and ``dfdp`` (see ``jac_products``).

    Parameters
    ----------
    params : sequence of int or None
        Entries of the parameter array ``p = args[0]`` (a 1-D float array that ``fun``,
        ``jac`` and ``dfdp`` receive and must read at every call: the solver perturbs
        that very buffer and restores it); None: every entry of ``p``.
    initial : sequence of int
        Components ``i`` of ``y0`` that are parameters themselves (``s(t0) = e_i``):
        ``dy/dy0_i``.  They follow ``params`` in the parameter order.
    dy0dp : array_like, shape (n, np), optional
        The initial sensitivities ``dy0/dp`` of all ``np`` parameters (columns: ``params``,
        then ``initial``, then any further column: a parameter entering ``y0`` only).
        Default: 0 for ``params``, the unit vectors for ``initial``.
    dfdp : callable, optional
        ``dfdp(t, y, *args) -> (n, len(params))``, the partial derivative df/dp; default: a
        directional difference quotient.
    errcon : bool
        Include the sensitivities in the error test (CVODES' ``errconS``, default True);
        False: only y is controlled (the sensitivities then follow the steps of y).
    dq : {"centered", "forward"}
        Difference quotient of the sensitivity right-hand side ``J s_k + df/dp_k``
        (centred: 2 evaluations of f per parameter, error O(eps^(2/3)); forward: 1, O(eps^(1/2))).
    pbar : array_like, shape (np,), optional
        Typical magnitudes of the parameters (the difference steps' scale; default
        ``|p_k|``, ``|y0_i|``, or 1 where that is 0).
    jac_products : bool or None
        Form ``J s_k`` with the user's ``jac`` (one call a right-hand side, shared by all
        parameters; only the p part is then a difference, or ``dfdp``) instead of one
        directional difference of f along ``(s_k, e_k)``.  A difference quotient loses
        about eps^(2/3) of f's terms to round-off (amplified by rms(s_k / (|y| + atol))
        along s_k), which a Newton method's convergence test on s (asking ~sqrt(rtol)
        rtol of it) cannot pass at tight tolerances (Robertson at rtol 1e-9): there give
        ``jac`` and ``dfdp``, and the sensitivity right-hand side is exact.  The products
        cost one jac a right-hand side.  None (default): products when ``jac`` and
        ``dfdp`` are both given.
    """

    params: Sequence[int] | None = None
    initial: Sequence[int] = ()
    dy0dp: Any = None
    dfdp: Callable[..., Any] | None = None
    errcon: bool = True
    dq: str = "centered"
    pbar: Any = None
    jac_products: bool | None = None


def _jac_products(flag, has_jac, has_dfdp):
    """whether J s_k is formed with the user's jac (sens.h jac_rhs)"""
    if flag is None:
        return has_jac and has_dfdp
    if flag and not has_jac:
        raise ValueError("sensitivities: jac_products=True needs jac= (a callable, matrix or "
                         "LowLevelCallable).")
    return bool(flag)


def wanted(sensitivities) -> bool:
    """whether solve_ivp's sensitivities= asks for any (None and False do not)"""
    return sensitivities is not None and sensitivities is not False


def parse(sensitivities) -> Sensitivities:
    """``sensitivities=`` of solve_ivp as a :class:`Sensitivities`."""
    s = sensitivities
    if isinstance(s, Sensitivities):
        return s
    if s is True:
        return Sensitivities()
    if isinstance(s, dict):
        bad = set(s) - {f.name for f in dataclasses.fields(Sensitivities)}
        if bad:
            raise ValueError(f"sensitivities: unknown keys {sorted(bad)}; known: "
                             f"{[f.name for f in dataclasses.fields(Sensitivities)]}.")
        return Sensitivities(**s)
    if isinstance(s, (list, tuple, range, np.ndarray)):
        return Sensitivities(params=list(s))
    raise TypeError("sensitivities must be True, a sequence of indices into p = args[0], a dict "
                    "or mbint.ivp.Sensitivities.")


def _indices(name, v, size, what):
    out = []
    for i in v:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"sensitivities: {name} must hold integers, got {i!r}.")
        if not -size <= int(i) < size:
            raise ValueError(f"sensitivities: {name} index {int(i)} is out of range for {what} "
                             f"of size {size}.")
        out.append(int(i) % size)
    if len(set(out)) != len(out):
        raise ValueError(f"sensitivities: {name} has repeated entries {out}.")
    return out


def param_array(args, need):
    """(args with p = args[0] as a writeable contiguous float64 1-D array, p)."""
    if not args:
        if need:
            raise ValueError("sensitivities: parameters of p need args=(p, ...): p = args[0] is "
                             "a 1-D float array that fun reads at every call.")
        return args, None
    p = args[0]
    if not (isinstance(p, np.ndarray) and p.dtype == np.float64 and p.ndim == 1
            and p.flags.c_contiguous and p.flags.writeable):
        try:
            p = np.array(p, dtype=np.float64)
        except (TypeError, ValueError):
            if need:
                raise ValueError("sensitivities: args[0] must be the parameter array p (1-D "
                                 "floats).") from None
            return args, None
        if p.ndim != 1:
            if need:
                raise ValueError(f"sensitivities: args[0] = p must be 1-D, got shape {p.shape}.")
            return args, None
        args = (p,) + tuple(args[1:])
    return args, p


def sens_index(n, nq, npar):
    """(1 + np, n): the index in the augmented state of component i of block b
    (0: y, 1 + k: s_k); the layouts of csrc/core/sens.h."""
    b = np.arange(1 + npar)[:, None]
    i = np.arange(n)[None, :]
    if not nq:
        return b * n + i
    return np.where(i < nq, b * nq + i, nq * (1 + npar) + b * nq + (i - nq))


@dataclasses.dataclass
class Setup:
    """The checked sensitivity problem: what _core.solve takes and how to split it."""
    npar: int
    args: tuple
    sens: tuple            # the sens= tuple of _core.solve (without nq-dependent parts)
    y0: np.ndarray         # augmented
    atol: np.ndarray       # augmented
    rtol: np.ndarray       # augmented
    index: np.ndarray      # (1 + np, n)


def setup(s: Sensitivities, mname, info, fun_is_capsule, args, y0, rtol, atol_a, nq,
          events, has_jac) -> Setup:
    """Check the sensitivity request of a run of method mname and build its augmented
    initial state, tolerances and the sens tuple of _core.solve."""
    n = y0.size
    if events is not None:
        raise ValueError("sensitivities: events are not supported with sensitivities (the "
                         "sensitivities jump at an event); integrate up to the event and restart.")
    if info.backend == "sundials" and mname == "ida":
        raise ValueError("sensitivities: method 'ida' solves residual DAEs; use solve_ivp with "
                         "cvode_bdf, bdf or radau_iia.")
    # params=None: every entry of p, and p required unless initial values are selected
    need = (len(s.params) > 0) if s.params is not None else \
        (not len(s.initial) and s.dy0dp is None)
    args, p = param_array(args, need)
    params = (list(range(p.size)) if p is not None else []) if s.params is None else \
        _indices("params", s.params, 0 if p is None else p.size, "p = args[0]")
    initial = _indices("initial", s.initial, n, "y0")
    if params and fun_is_capsule:
        raise ValueError("sensitivities: parameters of p need a Python callable fun (a "
                         "LowLevelCallable cannot be seen to read p); initial-condition "
                         "parameters (initial=, dy0dp=) work with either.")
    S0 = _initial_sens(s.dy0dp, n, len(params), initial)
    npar = S0.shape[1]
    if npar == 0:
        raise ValueError("sensitivities: no parameter selected (p = args[0] is empty and "
                         "neither initial nor dy0dp is given).")
    pbar = _pbar(s.pbar, npar, p, params, y0, initial)
    dq = {"centered": 0, "centred": 0, "forward": 1}.get(s.dq)
    if dq is None:
        raise ValueError(f"sensitivities: dq must be 'centered' or 'forward', got {s.dq!r}.")
    dfdp = _dfdp(s.dfdp, n, len(params), npar, params)
    index = sens_index(n, nq, npar)
    N = n * (1 + npar)
    Y0 = np.empty(N)
    Y0[index[0]] = y0
    for k in range(npar):
        Y0[index[1 + k]] = S0[:, k]
    # y keeps its plain run's error control: its weights scaled by sqrt(1 + np) so that
    # the RMS norm over the N components bounds the RMS norm over y as in the plain run
    c = math.sqrt(1.0 + npar)
    rv = np.broadcast_to(np.asarray(rtol, float), (n,))
    A, R = np.empty(N), np.empty(N)
    A[index[0]], R[index[0]] = atol_a / c, rv / c
    for k in range(npar):
        A[index[1 + k]] = atol_a / pbar[k] if s.errcon else 1e300
        R[index[1 + k]] = rv
    idx = np.array([params[k] if k < len(params) else -1 for k in range(npar)], dtype=np.intp)
    # the exact block lower-triangular iteration matrix (sens.h block_newton 2): the
    # block-diagonal one ignores B_k, whose error hγ|J| |δy| / |y| on s makes a stiff
    # run's Newton iterations fail (Robertson)
    block = 2 if mname in BLOCK_NEWTON else 0
    floor = np.maximum(atol_a, 1e-6 * max(float(np.max(np.abs(y0))), 1e-300))
    jp = _jac_products(s.jac_products, has_jac, dfdp is not None)
    sens = (p if params else None, npar, idx, pbar, dq, block, dfdp, floor, int(jp))
    return Setup(npar, args, sens, Y0, A, R, index)


def _initial_sens(dy0dp, n, nparams, initial):
    m = nparams + len(initial)
    if dy0dp is None:
        S0 = np.zeros((n, m))
        for j, i in enumerate(initial):
            S0[i, nparams + j] = 1.0
        return S0
    S0 = np.array(dy0dp, dtype=float)
    if S0.ndim == 1 and n == 1:
        S0 = S0[None, :]
    if S0.ndim != 2 or S0.shape[0] != n or S0.shape[1] < m:
        raise ValueError(f"sensitivities: dy0dp must have shape (n, np) = ({n}, >= {m}) "
                         f"(params, then initial, then parameters of y0 only), got {S0.shape}.")
    if not np.isfinite(S0).all():
        raise ValueError("sensitivities: dy0dp must be finite.")
    return S0


def _pbar(pbar, npar, p, params, y0, initial):
    if pbar is None:
        v = np.ones(npar)
        for k, j in enumerate(params):
            v[k] = abs(p[j])
        for j, i in enumerate(initial):
            v[len(params) + j] = abs(y0[i])
        v[~(v > 0) | ~np.isfinite(v)] = 1.0
        return v
    v = np.array(pbar, dtype=float).reshape(-1)
    if v.shape != (npar,) or not (np.isfinite(v).all() and (v > 0).all()):
        raise ValueError(f"sensitivities: pbar must hold {npar} positive finite values.")
    return v


def _dfdp(dfdp, n, nparams, npar, params):
    if dfdp is None:
        return None
    if not callable(dfdp):
        raise TypeError("sensitivities: dfdp must be callable dfdp(t, y, *args) -> (n, np).")
    if not params:
        raise ValueError("sensitivities: dfdp is given but no parameter of p is selected.")

    def full(t, y, *args):
        d = np.asarray(dfdp(t, y, *args), dtype=float)
        if d.shape != (n, nparams):
            raise ValueError(f"dfdp(t, y, p) must return shape (n, np) = ({n}, {nparams}), got "
                             f"{d.shape}.")
        if npar == nparams:
            return np.ascontiguousarray(d)
        out = np.zeros((n, npar))
        out[:, :nparams] = d
        return out
    return full


class SensDense:
    """``sens_sol(t)``: the sensitivities (n, np) or (n, np, m) from the run's dense output."""

    def __init__(self, sol, index):
        self._sol, self._index = sol, index

    def __call__(self, t):
        Y = self._sol(t)
        S = Y[self._index[1:].T]  # (n, np) or (n, np, m)
        return S


class BaseDense:
    """``sol(t)`` of y alone (the augmented run's dense output restricted to y)."""

    def __init__(self, sol, index):
        self._sol, self._rows = sol, index[0]

    def __call__(self, t):
        return self._sol(t)[self._rows]

    def __getattr__(self, name):
        return getattr(self._sol, name)
