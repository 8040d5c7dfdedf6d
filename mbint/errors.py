"""Global error by step halving (Richardson, LN eq 7.9) and the truncation versus
round-off study of LN sections 7.5-7.6."""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ._validate import DEFAULT_MAX_STEPS
from .ivp import solve_ivp
from .methods import method_info
from ._typing import ArrayLike, FloatArray, RhsFun, TSpan


def richardson(fun: RhsFun, t_span: TSpan, y0: ArrayLike, method: str, h: float,
               **kwargs: Any) -> tuple[FloatArray, FloatArray]:
    """Global error estimate at t_span[1] by integrating with h and h/2 (LN eq 7.9).

    E = |y_{h/2} - y_h| / (2^p - 1), p the method's order.

    Parameters
    ----------
    fun, t_span, y0 : as in :func:`mbint.solve_ivp`
    method : str
        A fixed-step method.
    h : float
        The coarse step.
    **kwargs
        Passed to :func:`mbint.solve_ivp`.

    Returns
    -------
    y_half : ndarray, shape (n,)
        The solution with step h/2 (the best result).
    estimate : ndarray, shape (n,)
        Componentwise estimate of |y_exact - y_half|.
    """
    p = method_info(method).order
    r1 = solve_ivp(fun, t_span, y0, method=method, h=h, t_eval=[t_span[1]], **kwargs)
    r2 = solve_ivp(fun, t_span, y0, method=method, h=h / 2.0, t_eval=[t_span[1]], **kwargs)
    for r in (r1, r2):
        if not r.success:
            raise RuntimeError(f"richardson: integration failed: {r.message}")
    y1, y2 = r1.y[:, -1], r2.y[:, -1]
    return y2, np.abs(y2 - y1) / (2.0 ** p - 1.0)


def step_size_study(fun: RhsFun, t_span: TSpan, y0: ArrayLike, method: str,
                    levels: Iterable[int] = range(4, 18), exact: ArrayLike | None = None,
                    **kwargs: Any) -> dict[str, Any]:
    """Integrate with h = T / 2^k for k in ``levels`` (LN 7.6).

    Returns a dict with ``h``, the end values ``y`` (len(levels), n), the
    successive differences ``D`` (D_k = max|y_k - y_{k-1}|, NaN for the first),
    and, when ``exact`` (the exact end value) is given, the true ``error``.
    On a log-log plot the truncation branch falls with slope p and the
    round-off branch rises with slope about 1 (E = C1 h^p + C2 / h).
    """
    T = t_span[1] - t_span[0]
    hs: list[float] = []
    ys: Any = []
    for k in levels:
        h = abs(T) / 2.0 ** k
        kw = dict(kwargs)
        kw.setdefault("max_steps", max(DEFAULT_MAX_STEPS, 2 ** k + 8))  # the study asks for them
        r = solve_ivp(fun, t_span, y0, method=method, h=h, t_eval=[t_span[1]], **kw)
        if not r.success:
            raise RuntimeError(f"step_size_study: integration failed at h = {h}: {r.message}")
        hs.append(h)
        ys.append(r.y[:, -1])
    ys = np.array(ys)
    D = np.full(len(hs), np.nan)
    D[1:] = np.max(np.abs(np.diff(ys, axis=0)), axis=1)
    out = {"h": np.array(hs), "y": ys, "D": D}
    if exact is not None:
        out["error"] = np.max(np.abs(ys - np.asarray(exact)[None, :]), axis=1)
    return out
