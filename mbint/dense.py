"""Dense output of a run: the piecewise polynomials written by the C driver."""
from __future__ import annotations

import numpy as np


class DenseOutput:
    """Continuous solution ``sol(t)`` over the integration interval.

    Each accepted step k covers [ts[k], ts[k+1]] and carries its method's
    interpolant as a polynomial in theta = (t - t_k) / h_k,
    ``y(theta) = sum_j C[k, j] theta^j``.

    Parameters
    ----------
    t0 : ndarray, shape (nseg,)
        Step starts.
    h : ndarray, shape (nseg,)
        Step sizes (signed).
    t_end : float
        End of the last segment (t_final, or a terminal event's time).
    deg, off : ndarray of int, shape (nseg,)
        Degree of each polynomial and offset of its coefficients in ``c``.
    c : ndarray
        Coefficients, ``(deg+1) * n`` per segment, theta power major.
    n : int
        State size.
    """

    def __init__(self, t0, h, t_end, deg, off, c, n):
        self.n = int(n)
        self.t_min_step = np.asarray(t0, float)
        self.h = np.asarray(h, float)
        self.ts = np.append(self.t_min_step, t_end)
        self.n_segments = len(self.h)
        dmax = int(deg.max()) if len(deg) else 0
        C = np.zeros((self.n_segments, dmax + 1, self.n))
        for k in range(self.n_segments):
            d = int(deg[k])
            C[k, : d + 1] = c[off[k] : off[k] + (d + 1) * self.n].reshape(d + 1, self.n)
        self.C = C
        self.ascending = self.n_segments == 0 or self.h[0] >= 0
        self.t_min, self.t_max = (self.ts.min(), self.ts.max()) if len(self.ts) else (0.0, 0.0)

    def __call__(self, t):
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
        return y[0] if scalar else y.T
