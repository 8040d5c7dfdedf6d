"""Dense output of a run: the piecewise polynomials (or a method's dense records)
written by the C driver."""
from __future__ import annotations

import numpy as np

from . import _core
from ._typing import ArrayLike, FloatArray


class DenseOutput:
    """Continuous solution ``sol(t)`` over the integration interval.

    Each accepted step k covers [ts[k], ts[k+1]] and carries its method's
    interpolant as a polynomial in theta = (t - t_k) / h_k,
    ``y(theta) = sum_j C[k, j] theta^j``, or, for a method whose continuous
    output is not a polynomial (degree -1: ``llm``'s
    ``y_k + phi(t_k, y_k; t - t_k)``, LLM eq 18), the step's *dense record*,
    evaluated in C by ``_core.dense_record_eval``.

    Parameters
    ----------
    t0 : ndarray, shape (nseg,)
        Step starts.
    h : ndarray, shape (nseg,)
        Step sizes (signed).
    t_end : float
        End of the last segment (t_final, or a terminal event's time).
    deg, off : ndarray of int, shape (nseg,)
        Degree of each polynomial (-1: a dense record) and offset of its
        coefficients (or record) in ``c``.
    c : ndarray
        Coefficients, ``(deg+1) * n`` per segment, theta power major; a record
        takes the method's record length.
    n : int
        State size.
    method : str, optional
        The method that wrote the records (needed to evaluate segments of
        degree -1).
    """

    y_const: FloatArray | None
    t_min: float
    t_max: float

    def __init__(self, t0: ArrayLike, h: ArrayLike, t_end: float, deg: ArrayLike, off: ArrayLike,
                 c: ArrayLike, n: int, method: str | None = None) -> None:
        self.y_const = None
        self.n = int(n)
        self.method = method
        self.t_min_step = np.asarray(t0, float)
        self.h = np.asarray(h, float)
        self.ts = np.append(self.t_min_step, t_end)
        self.n_segments = len(self.h)
        deg = np.asarray(deg, dtype=np.int64)
        off = np.asarray(off, dtype=np.int64)
        self.deg = deg  # kept: the records are saved as written (mbint.mbs.dataset)
        c = np.asarray(c, float)
        dmax = int(deg.max()) if len(deg) else 0
        C = np.zeros((self.n_segments, max(dmax, 0) + 1, self.n))
        self.records = {}
        if self.n_segments:
            poly = deg >= 0
            if not poly.all():  # dense records (degree -1): kept as written
                ends = np.append(off[1:], len(c))
                for k in np.flatnonzero(~poly).tolist():
                    self.records[k] = c[off[k]:ends[k]]
            # the polynomials, gathered by degree (a run has a few distinct degrees)
            for d in np.unique(deg[poly]).tolist():
                ks = np.flatnonzero(deg == d)
                idx = off[ks, None] + np.arange((d + 1) * self.n)
                C[ks, : d + 1] = c[idx].reshape(len(ks), d + 1, self.n)
        self.C = C
        self.ascending = self.n_segments == 0 or self.h[0] >= 0
        self.t_min, self.t_max = (self.ts.min(), self.ts.max()) if len(self.ts) else (0.0, 0.0)

    @classmethod
    def constant(cls, t0: float, y0: ArrayLike) -> DenseOutput:
        """The dense output of a run that took no step (t_span of zero length, or an
        empty state): y0 at every t, as SciPy's ConstantDenseOutput."""
        y0 = np.array(y0, float).reshape(-1)
        out = cls(np.zeros(0), np.zeros(0), t0, np.zeros(0, int), np.zeros(0, int),
                  np.zeros(0), y0.size)
        out.y_const = y0
        out.ts = np.array([t0, t0], float)
        out.t_min = out.t_max = float(t0)
        return out

    def __call__(self, t: ArrayLike) -> FloatArray:
        """Evaluate the solution.

        Parameters
        ----------
        t : float or array_like, shape (m,)

        Returns
        -------
        ndarray, shape (n,) for scalar t, else (n, m)
        """
        t = np.asarray(t, float)
        scalar = t.ndim == 0
        tt = np.atleast_1d(t)
        if self.y_const is not None:
            y = np.repeat(self.y_const[:, None], tt.size, axis=1)
            return y[:, 0] if scalar else y
        if self.n_segments == 0:
            raise ValueError("the dense output is empty (no step was taken).")
        starts = self.t_min_step if self.ascending else -self.t_min_step
        key = tt if self.ascending else -tt
        k = np.clip(np.searchsorted(starts, key, side="right") - 1, 0, self.n_segments - 1)
        theta = (tt - self.t_min_step[k]) / self.h[k]
        C = self.C[k]  # (m, dmax+1, n)
        y = C[:, -1, :].copy()
        for j in range(C.shape[1] - 2, -1, -1):
            y = y * theta[:, None] + C[:, j, :]
        if self.records:
            if self.method is None:
                raise ValueError("DenseOutput: the segments hold dense records; set the method "
                                 "that wrote them (method=).")
            for seg in np.unique(k):
                rec = self.records.get(int(seg))
                if rec is None:
                    continue
                sel = k == seg
                y[sel] = _core.dense_record_eval(self.method, self.n, rec,
                                                 float(self.t_min_step[seg]),
                                                 float(self.h[seg]), theta[sel])
        return y[0] if scalar else y.T
