"""A pure-NumPy oracle for the planar multibody kernels: ``mbint.testing.reference``.

:class:`NumpyReference` evaluates the equations of motion of a
:class:`mbint.PlanarModel`

    M q'' + Phi_q^T lambda = Q(t, q, q'),   Phi(t, q) = 0

in the body-coordinate formulation of Nikravesh [1]_ (body k has q_k = (x, y,
phi), its centre of mass r_k = (x, y) and rotation matrix A(phi_k)); Phi, Phi_q,
Phi_t, gamma, M, Q, the energies and the index-1 right-hand side f(t, y),
y = (q, q'), with q'' and lambda from the saddle-point system of LLM eq 9

    [ M      Phi_q^T ] [ q''    ]   [ Q                                ]
    [ Phi_q  0       ] [ lambda ] = [ gamma - 2 alpha Phi' - beta^2 Phi ],

solved by ``numpy.linalg.solve``, and df/dy by central differences of that f.

It is written from the formulation, not from the C code, and reads only the
Python-side description of the model (``bodies``, ``gravity``,
``joint_elements``, ``force_elements``); it never calls ``mbint._core``.  It is
the oracle of ``tests/test_reference.py`` (a check of the C kernels independent
of the finite-difference tests) and the NumPy side of
``tests/benchmarks/bench_models.py``.  It is slow by design of its job: no
derivative kernels, no caching, plain NumPy.  Do not integrate with it.

Every public method has the signature and layout of the kernel method of the
same name of :class:`mbint.PlanarModel`: time first (``phi(t, q)``,
``forces(t, q, qd)``), one point (q of shape (nq,)) or a batch of m points along
the last axis (q of shape (nq, m), t a scalar or of shape (m,)); vectors come
back as (rows, m), matrices as (rows, cols, m).  The work is vectorized over the
elements of each type and over the points (internally the points are on the
leading axes).  Python forces (:meth:`PlanarModel.add_force`) are called once per
point.

Formulas, with A s the global vector of a body point s', B s = d(A s)/dphi =
perp(A s), perp(v) = (-v_y, v_x), the ground being a body with r = 0, phi = 0
and no coordinates, P = r + A s a point and d = P_j - P_i:

=================  =========================================================
element            Phi / force
=================  =========================================================
revolute           r_i + A_i s_i - r_j - A_j s_j                     (2 rows)
translational      phi_j - phi_i - phi0;  (B_i n_i) . d              (2 rows)
distance           (d . d - L^2) / 2                                 (1 row)
fixed              revolute rows;  phi_j - phi_i - phi0              (3 rows)
coordinate driver  q_(3 i + coord) - f(t)                            (1 row)
angle driver       phi_j - phi_i - f(t)                              (1 row)
gravity            Q_r += m g
TSDA               F = k (l - L0) + c l' + fa(t), l = |d|: +F d/l at P_i,
                   -F d/l at P_j
RSDA               T = k e + c theta', theta = phi_j - phi_i, e = theta - theta0
                   (wrapped to (-pi, pi] when ``wrap``): +T on i, -T on j
contact, line      delta = r - (P_i - p0) . n; F = max(K delta^e + c delta', 0)
                   when delta > 0, along +n on body i
contact, circles   delta = r_i + r_j - l; F as above, -F d/l on i, +F d/l on j
generalized        Q_coord += f(t)
=================  =========================================================

where f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi).  gamma is
-(Phi_q q')_q q' - 2 Phi_qt q' - Phi_tt, derived by hand for each joint.

References
----------
.. [1] P. E. Nikravesh, Planar Multibody Dynamics: Formulation, Programming with
   MATLAB, and Applications, 2nd ed., CRC Press, 2018, chs. 4-7.
.. [2] J. Gil, R. Sanfelice, P. E. Nikravesh, Local Linearization Method in the
   Integration of Multibody Equations (the LLM paper), eq 9.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["NumpyReference", "wrap_angle"]

_TIMEFN_KEYS = ("c0", "c1", "c2", "a", "w", "psi")
_JOINT_ROWS = {"revolute": 2, "translational": 2, "distance": 1, "fixed": 3,
               "driver_coord": 1, "driver_angle": 1}
_FORCE_KINDS = ("tsda", "rsda", "contact_line", "contact_circles", "generalized", "python")


def wrap_angle(a):
    """Angle wrapped to (-pi, pi]."""
    return np.pi - np.mod(np.pi - np.asarray(a, float), 2.0 * np.pi)


def _rot(phi, s):
    """A(phi) s for phi of shape (..., K) and s of shape (K, 2): shape (..., K, 2)."""
    c, sn = np.cos(phi), np.sin(phi)
    return np.stack([c * s[:, 0] - sn * s[:, 1], sn * s[:, 0] + c * s[:, 1]], -1)


def _perp(v):
    """v rotated by +90 degrees: (-v_y, v_x)."""
    return np.stack([-v[..., 1], v[..., 0]], -1)


def _dot(a, b):
    return (a * b).sum(-1)


def _timefn(coef, t):
    """f, f', f'' of f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi).

    Parameters
    ----------
    coef : ndarray, shape (K, 6)
    t : ndarray, shape (...)

    Returns
    -------
    f, fd, fdd : ndarray, shape (..., K)
    """
    t = np.asarray(t, float)[..., None]
    c0, c1, c2, a, w, psi = coef.T
    arg = w * t + psi
    f = c0 + c1 * t + c2 * t * t + a * np.sin(arg)
    fd = c1 + 2.0 * c2 * t + a * w * np.cos(arg)
    fdd = 2.0 * c2 - a * w * w * np.sin(arg) + 0.0 * t
    return f, fd, fdd


class _Group:
    """The elements of one kind as arrays (one row per element)."""

    def __init__(self, kind, elements):
        self.kind = kind
        self.elements = elements
        self.n = len(elements)
        self.i = np.array([e.i for e in elements], dtype=int)
        self.j = np.array([e.j for e in elements], dtype=int)

        def vec(kx, ky):
            return np.array([[e.params.get(kx, 0.0), e.params.get(ky, 0.0)] for e in elements],
                            dtype=float).reshape(-1, 2)

        def col(key, default=0.0):
            return np.array([e.params.get(key, default) for e in elements], dtype=float)

        self.si, self.sj = vec("si_x", "si_y"), vec("sj_x", "sj_y")
        self.ni = vec("ni_x", "ni_y")
        self.p0, self.nrm = vec("p0_x", "p0_y"), vec("nrm_x", "nrm_y")
        self.L, self.phi0 = col("L"), col("phi0")
        self.coord = col("coord").astype(int)
        self.tf = np.array([[e.params.get(k, 0.0) for k in _TIMEFN_KEYS] for e in elements],
                           dtype=float).reshape(-1, 6)
        self.fa = np.array([[e.params.get("fa_" + k, 0.0) for k in _TIMEFN_KEYS]
                            for e in elements], dtype=float).reshape(-1, 6)
        self.k, self.c, self.L0 = col("k"), col("c"), col("L0")
        self.wrap = col("wrap").astype(bool)
        self.K, self.cd, self.e = col("K"), col("cd"), col("e", 1.0)
        self.ri, self.rj = col("ri"), col("rj")
        self.row = np.array([e.row for e in elements], dtype=int)


class NumpyReference:
    """The physics of a :class:`mbint.PlanarModel` in plain NumPy (the oracle).

    Parameters
    ----------
    model : PlanarModel
        Read once: later changes to the model are not seen.

    Attributes
    ----------
    nq, nc : int
        Numbers of coordinates (3 per body) and constraint rows.
    joint_groups, force_groups : dict of str -> _Group
        The elements of each kind as parameter arrays (one row per element).
    contact_elements : list of Element
        The contacts, in the order of :meth:`contact_gaps`.

    Notes
    -----
    Slow on purpose of being obvious: use it to check the C kernels
    (``tests/test_reference.py``) and as the NumPy side of the benchmarks, not to
    integrate.  See the module docstring for the formulas.
    """

    def __init__(self, model):
        self.nb = len(model.bodies)
        self.nq = 3 * self.nb
        self.g = np.array(model.gravity, dtype=float)
        self.mass_vec = np.array([[b.mass, b.mass, b.inertia] for b in model.bodies],
                                 dtype=float).reshape(-1)
        self.body_mass = self.mass_vec[0::3].copy()
        # rows of Phi: in the order the joints were added
        row = 0
        for e in model.joint_elements:
            if e.kind not in _JOINT_ROWS:
                raise ValueError(f"NumpyReference: unknown joint kind {e.kind!r} ({e.name}).")
            if e.row != row:
                raise ValueError(f"NumpyReference: joint {e.name!r} starts at row {e.row}, "
                                 f"expected {row}.")
            row += _JOINT_ROWS[e.kind]
        self.nc = row
        self.joint_groups = {k: _Group(k, [e for e in model.joint_elements if e.kind == k])
                       for k in _JOINT_ROWS}
        for e in model.force_elements:
            if e.kind not in _FORCE_KINDS:
                raise ValueError(f"NumpyReference: unknown force kind {e.kind!r} ({e.name}).")
        self.force_groups = {k: _Group(k, [e for e in model.force_elements if e.kind == k])
                        for k in _FORCE_KINDS}
        self.contact_elements = [e for e in model.force_elements
                                 if e.kind in ("contact_line", "contact_circles")]
        self._joints_used = [G for G in self.joint_groups.values() if G.n]
        self._loads_used = [self.force_groups[k] for k in ("tsda", "rsda", "contact_line",
                                                       "contact_circles") if self.force_groups[k].n]
        self._scatter = self._force_scatter()
        G = self.force_groups["generalized"]
        self._scatter_gen = np.zeros((G.n, self.nq))
        self._scatter_gen[np.arange(G.n), G.coord] = 1.0

    # ------------------------------------------------------------ helpers
    def _ext(self, q):
        """Body states (..., nb + 1, 3) with the ground (zeros) as the last body,
        so that body index -1 picks the ground."""
        q = np.asarray(q, float)
        z = np.zeros(q.shape[:-1] + (3,))
        return np.concatenate([q, z], -1).reshape(q.shape[:-1] + (self.nb + 1, 3))

    def _cols(self, idx):
        """Columns (K, 3) of the bodies idx in the extended q (ground: the last 3)."""
        return np.mod(3 * idx[:, None] + np.arange(3), self.nq + 3)

    def _force_scatter(self):
        """Matrix (6 k, nq) adding the per-element body loads (i then j of every
        element, in the order of :meth:`_force_loads`) into Q."""
        blocks = []
        for G in self._loads_used:
            blocks += [self._cols(G.i), self._cols(G.j)]
        cols = np.concatenate([b.reshape(-1) for b in blocks]) if blocks else np.zeros(0, int)
        S = np.zeros((cols.size, self.nq + 3))
        S[np.arange(cols.size), cols] = 1.0
        return S[:, :self.nq]

    @staticmethod
    def _states(G, qb, vb=None):
        """r, phi (and rates) of bodies i and j of group G from the extended body
        states qb, vb of :meth:`_ext`: a dict of arrays."""
        out = dict(ri=qb[..., G.i, :2], phii=qb[..., G.i, 2],
                   rj=qb[..., G.j, :2], phij=qb[..., G.j, 2])
        if vb is not None:
            out.update(vi=vb[..., G.i, :2], wi=vb[..., G.i, 2],
                       vj=vb[..., G.j, :2], wj=vb[..., G.j, 2])
        return out

    @staticmethod
    def _blocks(shape, r):
        """Zero Jacobian blocks (..., K, r, 3) for bodies i and j."""
        return np.zeros(shape + (r, 3)), np.zeros(shape + (r, 3))

    # ------------------------------------------------------------ joints
    def _joint_terms(self, G, qb, vb, t):
        """Phi (..., K, r), Jacobian blocks Ji, Jj (..., K, r, 3), Phi_t (..., K, r)
        and gamma (..., K, r) of the joints of group G at the extended body states
        qb, vb (gamma only when vb is given)."""
        s = self._states(G, qb, vb)
        shape = s["phii"].shape
        kind, r = G.kind, _JOINT_ROWS[G.kind]
        Ji, Jj = self._blocks(shape, r)
        phi_t = np.zeros(shape + (r,))
        gam = np.zeros(shape + (r,)) if vb is not None else None
        if kind in ("revolute", "fixed", "translational", "distance"):
            Asi, Asj = _rot(s["phii"], G.si), _rot(s["phij"], G.sj)
            Bsi, Bsj = _perp(Asi), _perp(Asj)
            d = s["rj"] + Asj - s["ri"] - Asi
            if vb is not None:
                dd = s["vj"] + Bsj * s["wj"][..., None] - s["vi"] - Bsi * s["wi"][..., None]
                # dq: the velocity-quadratic part of d'' (d'' = ... + A_i s_i wi^2 - A_j s_j wj^2)
                dq = Asi * s["wi"][..., None] ** 2 - Asj * s["wj"][..., None] ** 2
        if kind in ("revolute", "fixed"):
            phi = np.zeros(shape + (r,))
            phi[..., :2] = -d
            Ji[..., 0, 0] = Ji[..., 1, 1] = 1.0
            Ji[..., :2, 2] = Bsi
            Jj[..., 0, 0] = Jj[..., 1, 1] = -1.0
            Jj[..., :2, 2] = -Bsj
            if vb is not None:
                gam[..., :2] = dq
            if kind == "fixed":
                phi[..., 2] = s["phij"] - s["phii"] - G.phi0
                Ji[..., 2, 2] = -1.0
                Jj[..., 2, 2] = 1.0
        elif kind == "translational":
            u = _rot(s["phii"], _perp(G.ni))     # B_i n_i = A_i perp(n_i)
            An = _rot(s["phii"], G.ni)           # -du/dphi_i
            phi = np.stack([s["phij"] - s["phii"] - G.phi0, _dot(u, d)], -1)
            Ji[..., 0, 2] = -1.0
            Jj[..., 0, 2] = 1.0
            Ji[..., 1, :2] = -u
            Ji[..., 1, 2] = -_dot(An, d) - _dot(u, Bsi)
            Jj[..., 1, :2] = u
            Jj[..., 1, 2] = _dot(u, Bsj)
            if vb is not None:
                wi = s["wi"]
                ud = -An * wi[..., None]
                # (u.d)'' = u''.d + 2 u'.d' + u.d'', u'' = -u wi^2 - An wi'
                gam[..., 1] = _dot(u, d) * wi ** 2 - 2.0 * _dot(ud, dd) - _dot(u, dq)
        elif kind == "distance":
            phi = (0.5 * (_dot(d, d) - G.L ** 2))[..., None]
            Ji[..., 0, :2] = -d
            Ji[..., 0, 2] = -_dot(d, Bsi)
            Jj[..., 0, :2] = d
            Jj[..., 0, 2] = _dot(d, Bsj)
            if vb is not None:
                gam[..., 0] = -_dot(dd, dd) - _dot(d, dq)
        elif kind == "driver_coord":
            f, fd, fdd = _timefn(G.tf, t)
            phi = (qb[..., G.i, G.coord] - f)[..., None] + np.zeros(shape + (1,))
            Ji[..., 0, :] = np.eye(3)[G.coord]
            phi_t = (-fd + np.zeros(shape))[..., None]
            if vb is not None:
                gam[..., 0] = fdd
        else:  # driver_angle
            f, fd, fdd = _timefn(G.tf, t)
            phi = (s["phij"] - s["phii"] - f)[..., None]
            Ji[..., 0, 2] = -1.0
            Jj[..., 0, 2] = 1.0
            phi_t = (-fd + np.zeros(shape))[..., None]
            if vb is not None:
                gam[..., 0] = fdd
        return phi, Ji, Jj, phi_t, gam

    def _joint_all(self, q, qd, t):
        """Phi, Phi_q, Phi_t and gamma (None without qd) assembled over all joints."""
        q = np.asarray(q, float)
        lead = q.shape[:-1]
        ext = self.nq + 3
        phi = np.zeros(lead + (self.nc,))
        P = np.zeros(lead + (self.nc, ext))
        pt = np.zeros(lead + (self.nc,))
        gam = np.zeros(lead + (self.nc,)) if qd is not None else None
        qb = self._ext(q)
        vb = None if qd is None else self._ext(qd)
        for G in self._joints_used:
            ph, Ji, Jj, ptk, gk = self._joint_terms(G, qb, vb, t)
            r = _JOINT_ROWS[G.kind]
            rows = G.row[:, None] + np.arange(r)                 # (K, r)
            phi[..., rows] = ph
            pt[..., rows] = ptk
            if gam is not None:
                gam[..., rows] = gk
            for idx, J in ((G.i, Ji), (G.j, Jj)):
                cols = self._cols(idx)                           # (K, 3)
                P[..., rows[:, :, None], cols[:, None, :]] = J
        return phi, P[..., :self.nq], pt, gam

    # ------------------------------------------------------------ mass and forces
    def _mass(self, q):
        """M = diag(m_k, m_k, J_k), shape (..., nq, nq)."""
        q = np.asarray(q, float)
        return np.zeros(q.shape[:-1] + (self.nq, self.nq)) + np.diag(self.mass_vec)

    def _force_loads(self, t, q, qd):
        """Per-element loads (f_x, f_y, n) on bodies i and j of every TSDA, RSDA and
        contact, concatenated as in :meth:`_force_scatter`: shape (..., 6 k)."""
        loads = []
        qb, vb = self._ext(q), self._ext(qd)
        for G in self._loads_used:
            kind = G.kind
            s = self._states(G, qb, vb)
            shape = s["phii"].shape
            Li, Lj = np.zeros(shape + (3,)), np.zeros(shape + (3,))
            if kind == "rsda":
                e = s["phij"] - s["phii"] - G.L0
                e = np.where(G.wrap, wrap_angle(e), e)
                T = G.k * e + G.c * (s["wj"] - s["wi"])
                Li[..., 2], Lj[..., 2] = T, -T
            elif kind == "contact_line":
                Asi = _rot(s["phii"], G.si)
                Bsi = _perp(Asi)
                delta = G.ri - _dot(s["ri"] + Asi - G.p0, G.nrm)
                ddelta = -_dot(s["vi"] + Bsi * s["wi"][..., None], G.nrm)
                F = self._contact_law(G, delta, ddelta)
                Fv = F[..., None] * G.nrm
                Li[..., :2], Li[..., 2] = Fv, _dot(Bsi, Fv)
            else:  # tsda, contact_circles: along the line between P_i and P_j
                Asi, Asj = _rot(s["phii"], G.si), _rot(s["phij"], G.sj)
                Bsi, Bsj = _perp(Asi), _perp(Asj)
                d = s["rj"] + Asj - s["ri"] - Asi
                dd = s["vj"] + Bsj * s["wj"][..., None] - s["vi"] - Bsi * s["wi"][..., None]
                ln = np.sqrt(_dot(d, d))
                u = d / np.where(ln > 0, ln, 1.0)[..., None]
                lnd = _dot(u, dd)
                if kind == "tsda":
                    fa = _timefn(G.fa, t)[0]
                    # k (l - L0) u written as k (d - L0 u): smooth through l = 0 when L0 = 0
                    Fv = G.k[:, None] * (d - G.L0[:, None] * u) \
                        + (G.c * lnd + fa)[..., None] * u
                else:
                    F = self._contact_law(G, G.ri + G.rj - ln, -lnd)
                    Fv = -F[..., None] * u
                Li[..., :2], Li[..., 2] = Fv, _dot(Bsi, Fv)
                Lj[..., :2], Lj[..., 2] = -Fv, -_dot(Bsj, Fv)
            loads += [Li.reshape(Li.shape[:-2] + (-1,)), Lj.reshape(Lj.shape[:-2] + (-1,))]
        return np.concatenate(loads, -1)

    @staticmethod
    def _contact_law(G, delta, ddelta):
        """Penalty normal force: max(K delta^e + c delta', 0) in contact, else 0."""
        on = delta > 0
        F = G.K * np.where(on, delta, 0.0) ** G.e + G.cd * ddelta
        return np.where(on, np.maximum(F, 0.0), 0.0)

    def _forces(self, t, q, qd):
        """Generalized forces Q(t, q, q'), shape (..., nq)."""
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        lead = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1], np.shape(t))
        Q = np.zeros(lead + (self.nq,))
        Q[..., 0::3] += self.body_mass * self.g[0]
        Q[..., 1::3] += self.body_mass * self.g[1]
        if self._scatter.shape[0]:
            Q += self._force_loads(t, q, qd) @ self._scatter
        G = self.force_groups["generalized"]
        if G.n:
            Q += _timefn(G.fa, t)[0] @ self._scatter_gen
        py = self.force_groups["python"]
        if py.n:
            Q += self._python_forces(t, q, qd, py)
        return Q

    def _python_forces(self, t, q, qd, G):
        lead = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1], np.shape(t))
        qf = np.broadcast_to(q, lead + (self.nq,)).reshape(-1, self.nq)
        vf = np.broadcast_to(qd, lead + (self.nq,)).reshape(-1, self.nq)
        tf = np.broadcast_to(np.asarray(t, float), lead).reshape(-1)
        out = np.zeros_like(qf)
        for p in range(qf.shape[0]):
            for e in G.elements:
                v = np.asarray(e.fn(float(tf[p]), qf[p].copy(), vf[p].copy()), float).reshape(-1)
                if e.i < 0:
                    out[p] += v
                else:
                    out[p, 3 * e.i:3 * e.i + 3] += v
        return out.reshape(lead + (self.nq,))

    # ------------------------------------------------------------ energy, gaps
    def _contact_gaps(self, q):
        """Penetration of every contact (> 0 in contact), in the model's order, shape (..., n)."""
        q = np.asarray(q, float)
        qb = self._ext(q)
        out = []
        for e in self.contact_elements:
            p = e.params
            Pi = qb[..., e.i, :2] + _rot(qb[..., e.i, 2][..., None],
                                         np.array([[p["si_x"], p["si_y"]]]))[..., 0, :]
            if e.kind == "contact_line":
                out.append(p["ri"] - _dot(Pi - np.array([p["p0_x"], p["p0_y"]]),
                                          np.array([p["nrm_x"], p["nrm_y"]])))
            else:
                Pj = qb[..., e.j, :2] + _rot(qb[..., e.j, 2][..., None],
                                             np.array([[p["sj_x"], p["sj_y"]]]))[..., 0, :]
                out.append(p["ri"] + p["rj"] - np.sqrt(_dot(Pj - Pi, Pj - Pi)))
        return np.stack(out, -1) if out else np.zeros(q.shape[:-1] + (0,))

    def _energy(self, t, q, qd):
        """Kinetic and potential energy (gravity, TSDA and RSDA springs, contacts),
        shape (...) each."""
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        kin = 0.5 * (self.mass_vec * qd * qd).sum(-1)
        pot = -(self.body_mass * (q[..., 0::3] * self.g[0] + q[..., 1::3] * self.g[1])).sum(-1)
        G = self.force_groups["tsda"]
        if G.n:
            s = self._states(G, self._ext(q))
            d = s["rj"] + _rot(s["phij"], G.sj) - s["ri"] - _rot(s["phii"], G.si)
            pot = pot + (0.5 * G.k * (np.sqrt(_dot(d, d)) - G.L0) ** 2).sum(-1)
        G = self.force_groups["rsda"]
        if G.n:
            s = self._states(G, self._ext(q))
            e = s["phij"] - s["phii"] - G.L0
            e = np.where(G.wrap, wrap_angle(e), e)
            pot = pot + (0.5 * G.k * e * e).sum(-1)
        if self.contact_elements:
            delta = np.maximum(self._contact_gaps(q), 0.0)
            K = np.array([e.params["K"] for e in self.contact_elements])
            ex = np.array([e.params.get("e", 1.0) for e in self.contact_elements])
            pot = pot + (K * delta ** (ex + 1.0) / (ex + 1.0)).sum(-1)
        return kin, pot

    # ------------------------------------------------------------ index-1 formulation
    def _accelerations(self, t, q, qd, baumgarte=None):
        """q'' (..., nq) and lambda (..., nc) from the saddle-point system (LLM eq 9)."""
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        alpha, beta = _baumgarte(baumgarte)
        phi, P, pt, gam = self._joint_all(q, qd, t)
        Q = self._forces(t, q, qd)
        lead = Q.shape[:-1]
        nq, nc = self.nq, self.nc
        rhs_c = gam
        if alpha:
            rhs_c = rhs_c - 2.0 * alpha * (np.einsum("...ij,...j->...i", P, qd) + pt)
        if beta:
            rhs_c = rhs_c - beta * beta * phi
        S = np.zeros(lead + (nq + nc, nq + nc))
        S[..., :nq, :nq] = self._mass(q)
        S[..., :nq, nq:] = np.swapaxes(P, -1, -2)
        S[..., nq:, :nq] = P
        b = np.concatenate([Q, np.broadcast_to(rhs_c, lead + (nc,))], -1)
        x = np.linalg.solve(S, b[..., None])[..., 0]
        return x[..., :nq], x[..., nq:]

    def _rhs(self, t, y, baumgarte=None):
        """f(t, y) = (q', q'') of the index-1 ODE, y = (q, q') of shape (..., 2 nq)."""
        y = np.asarray(y, float)
        qdd, _ = self._accelerations(t, y[..., :self.nq], y[..., self.nq:], baumgarte)
        return np.concatenate([y[..., self.nq:], qdd], -1)

    # ------------------------------------------------------------ public methods
    # Time first, points along the last axis (as the kernel methods of PlanarModel);
    # the private methods above put the points on the leading axes.
    def phi(self, t, q):
        """Constraint residuals Phi(t, q).

        Parameters
        ----------
        t : float or array_like, shape (m,)
            Time [s].
        q : array_like, shape (nq,) or (nq, m)

        Returns
        -------
        ndarray, shape (nc,) or (nc, m)
        """
        return _vec_out(self._joint_all(_tm(q), None, t)[0])

    def constraint_jacobian(self, t, q):
        """Phi_q(t, q), shape (nc, nq) or (nc, nq, m)."""
        return _mat_out(self._joint_all(_tm(q), None, t)[1])

    phi_q = constraint_jacobian

    def phi_t(self, t, q):
        """dPhi/dt at fixed q, shape (nc,) or (nc, m) (nonzero for drivers only)."""
        return _vec_out(self._joint_all(_tm(q), None, t)[2])

    def gamma(self, t, q, qd):
        """gamma = -(Phi_q q')_q q' - 2 Phi_qt q' - Phi_tt, shape (nc,) or (nc, m)."""
        return _vec_out(self._joint_all(_tm(q), _tm(qd), t)[3])

    def mass(self, q):
        """M = diag(m_k, m_k, J_k) in kg and kg m^2, shape (nq, nq) or (nq, nq, m)."""
        return _mat_out(self._mass(_tm(q)))

    def forces(self, t, q, qd):
        """Generalized forces Q(t, q, q') in N and N m, shape (nq,) or (nq, m)."""
        return _vec_out(self._forces(t, _tm(q), _tm(qd)))

    def contact_gaps(self, q):
        """Penetration in m of every contact (> 0 in contact), in the model's order,
        shape (n_contacts,) or (n_contacts, m)."""
        return _vec_out(self._contact_gaps(_tm(q)))

    def energy(self, t, q, qd):
        """Kinetic and potential energy in J (gravity, TSDA and RSDA springs, contacts).

        Parameters
        ----------
        t : float or array_like, shape (m,)
        q, qd : array_like, shape (nq,) or (nq, m)

        Returns
        -------
        kinetic, potential : ndarray, shape () or (m,)
        """
        return self._energy(t, _tm(q), _tm(qd))

    def accelerations(self, t, q, qd, baumgarte=None):
        """q'' and lambda from the saddle-point system (LLM eq 9).

        Parameters
        ----------
        t : float or array_like, shape (m,)
            Time [s].
        q, qd : array_like, shape (nq,) or (nq, m)
        baumgarte : None, float or (alpha, beta)
            gamma - 2 alpha (Phi_q q' + Phi_t) - beta^2 Phi on the right-hand side.

        Returns
        -------
        qdd : ndarray, shape (nq,) or (nq, m)
        lam : ndarray, shape (nc,) or (nc, m)
        """
        qdd, lam = self._accelerations(t, _tm(q), _tm(qd), baumgarte)
        return _vec_out(qdd), _vec_out(lam)

    def rhs(self, t, y, baumgarte=None):
        """f(t, y) = (q', q'') of the index-1 ODE, y = (q, q') of shape (2 nq,) or
        (2 nq, m); the result has the shape of y."""
        return _vec_out(self._rhs(t, _tm(y), baumgarte))

    def jacobian(self, t, y, baumgarte=None, rel_step=None):
        """df/dy at one point by central differences of :meth:`rhs`, shape (2 nq, 2 nq).

        The 4 nq perturbed states are evaluated in one vectorized call; step
        ``rel_step * max(1, |y_j|)`` with ``rel_step`` = eps^(1/3) by default.
        """
        y = np.asarray(y, float)
        n = y.size
        if y.shape != (n,):
            raise ValueError("jacobian: y must have shape (2 nq,).")
        h = (np.finfo(float).eps ** (1.0 / 3.0) if rel_step is None else rel_step) \
            * np.maximum(1.0, np.abs(y))
        E = np.diag(h)
        F = self._rhs(t, np.concatenate([y + E, y - E]), baumgarte)
        return ((F[:n] - F[n:]) / (2.0 * h[:, None])).T


def _tm(a):
    """Points along the last axis (n, ...) -> points on the leading axes (..., n)."""
    return np.moveaxis(np.asarray(a, float), 0, -1)


def _vec_out(a):
    """(..., n) -> (n, ...)."""
    return np.moveaxis(a, -1, 0)


def _mat_out(a):
    """(..., r, c) -> (r, c, ...)."""
    return np.moveaxis(a, (-2, -1), (0, 1))


def _baumgarte(b):
    """(alpha, beta) from None, a number or a pair."""
    if b is None:
        return 0.0, 0.0
    if isinstance(b, numbers.Real):
        return float(b), float(b)
    a, c = (float(v) for v in b)
    if not (a >= 0 and c >= 0 and math.isfinite(a) and math.isfinite(c)):
        raise ValueError(f"baumgarte: alpha and beta must be non-negative and finite, got {b}.")
    return a, c
