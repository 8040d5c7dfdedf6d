"""A pure-NumPy oracle for the spatial multibody kernels:
``mbint.testing.spatial_reference``.

:class:`SpatialReference` evaluates the equations of motion of a
:class:`mbint.SpatialModel`

    M(q) q'' + Phi_q^T lambda = Q(t, q, q'),   Phi(t, q) = 0

in Cartesian coordinates with Euler parameters (RN paper eq 1; Haug, ch. 9-11):
Phi, Phi_q, Phi_t, gamma, M, Q, the energies and the index-1 right-hand side
f(t, y), y = (q, q'), with q'' and lambda from the saddle-point system (LLM eq 9)
solved by ``numpy.linalg.solve``.

It is written from the formulation, not from the C code, and reads only the
Python-side description of the model (``bodies``, ``gravity``,
``joint_elements``, ``force_elements`` and their primitive dicts); it never calls
``mbint._core``.  The C kernels take every derivative from constant 4 x 4 matrices
K_c(s) of the quadratic form A(p) s; this oracle uses the product
A(p) = E(p) G(p)^T and its bilinearity instead:

    d(A s)/dp_k        = E(e_k) G(p)^T s + E(p) G(e_k)^T s
    d(A s)/dt          = E(p') G(p)^T s + E(p) G(p')^T s
    d^2(A s)/dt^2      = 2 E(p') G(p')^T s + (terms in p''),

so that gamma = -(d^2 Phi / dt^2 at q'' = 0) is formed from the second time
derivative of every primitive (a_i . a_j: a_i'' . a_j + 2 a_i' . a_j' + a_i . a_j''),
never from a Hessian.  Forces are generalized by their gradients (Q = -F grad s for
a spring law on s; a vertical tire force F at P: Q = F grad P_z; a point force and
global torque (F, n) at P: Q_r = F, Q_p = (dP/dp)^T F + 2 E(p)^T n), the quadratic
velocity term 8 G(p')^T J' G(p') p by its formula.

Every public method has the signature and layout of the kernel method of
:class:`mbint.SpatialModel` of the same name (time first; one point (nq,) or m
points along the last axis (nq, m)).  Slow by design (a loop over points and
elements): use it to check the C kernels, not to integrate.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["SpatialReference"]

_TIMEFN = ("c0", "c1", "c2", "a", "w", "psi")
_ROWS = {"dot1": 1, "dot2": 1, "point": 3, "dist": 1, "angle": 1}


def _E(p):
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]])


def _G(p):
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


_UNIT4 = np.eye(4)


def _tf(pr, t, prefix=""):
    """f, f', f'' of the time function c0 + c1 t + c2 t^2 + a sin(w t + psi) of a primitive."""
    c0, c1, c2, a, w, psi = (float(pr.get(prefix + k, 0.0)) for k in _TIMEFN)
    arg = w * t + psi
    return (c0 + c1 * t + c2 * t * t + a * math.sin(arg), c1 + 2 * c2 * t + a * w * math.cos(arg),
            2 * c2 - a * w * w * math.sin(arg))


def _wrap(x):
    """x wrapped to (-pi, pi]."""
    return math.pi - (math.pi - x) % (2 * math.pi)


class _Vec:
    """A body-fixed vector or point in global components at one state: value v (3,),
    Jacobian J (3, nq), rate vd (3,) and the second time derivative at q'' = 0, vdd."""

    def __init__(self, v, J, vd, vdd):
        self.v, self.J, self.vd, self.vdd = v, J, vd, vdd

    def __sub__(self, o):
        return _Vec(self.v - o.v, self.J - o.J, self.vd - o.vd, self.vdd - o.vdd)


def _dot(u, w):
    """value, gradient (nq,), rate and second derivative (q'' = 0) of u . w"""
    return (u.v @ w.v, u.v @ w.J + w.v @ u.J, u.vd @ w.v + u.v @ w.vd,
            u.vdd @ w.v + 2 * u.vd @ w.vd + u.v @ w.vdd)


class SpatialReference:
    """The physics of a :class:`mbint.SpatialModel` in plain NumPy (the oracle).

    Parameters
    ----------
    model : SpatialModel
        Read once; Python point forces are called as given (C point forces are
        not supported).
    """

    def __init__(self, model):
        self.nb = len(model.bodies)
        self.nq = 7 * self.nb
        self.g = np.array(model.gravity, float)
        self.mass_ = np.array([b.mass for b in model.bodies], float)
        self.J = [np.array(b.inertia, float) for b in model.bodies]
        self.joints = []
        row = self.nb
        for e in model.joint_elements:
            for pr in e.prims:
                self.joints.append((e.i, e.j, pr, row))
                row += _ROWS[pr["type"]]
        self.nc = row
        self.forces_ = []
        self.callbacks = []
        for e in model.force_elements:
            if e.kind == "python":
                self.callbacks.append((e.i, np.array(e.point, float), e.fn))
            elif e.kind == "cforce":
                raise ValueError("SpatialReference: C point forces are not supported.")
            else:
                for pr in e.prims:
                    self.forces_.append((e.i, e.j, pr))

    # ------------------------------------------------------------ kinematics
    def _vec(self, b, s, q, qd, point):
        """A s (point: r + A s) of body b (-1: the ground) as a _Vec."""
        nq = self.nq
        s = np.asarray(s, float)
        J = np.zeros((3, nq))
        if b < 0:
            z = np.zeros(3)
            return _Vec(s.copy() if point else s.copy(), J, z, z.copy())
        o = 7 * b
        p, pd = q[o + 3:o + 7], qd[o + 3:o + 7]
        Ep, Gp, Ed, Gd = _E(p), _G(p), _E(pd), _G(pd)
        v = Ep @ (Gp.T @ s)
        for k in range(4):
            J[:, o + 3 + k] = _E(_UNIT4[k]) @ (Gp.T @ s) + Ep @ (_G(_UNIT4[k]).T @ s)
        vd = Ed @ (Gp.T @ s) + Ep @ (Gd.T @ s)
        vdd = 2 * Ed @ (Gd.T @ s)
        if point:
            v = v + q[o:o + 3]
            J[:, o:o + 3] += np.eye(3)
            vd = vd + qd[o:o + 3]
        return _Vec(v, J, vd, vdd)

    # ------------------------------------------------------------ constraints
    def _constraints(self, t, q, qd):
        """Phi, Phi_q, Phi_t and gamma at one point."""
        nq, nc = self.nq, self.nc
        phi, P, pt, gam = np.zeros(nc), np.zeros((nc, nq)), np.zeros(nc), np.zeros(nc)
        for b in range(self.nb):
            o = 7 * b + 3
            p, pd = q[o:o + 4], qd[o:o + 4]
            phi[b] = p @ p - 1
            P[b, o:o + 4] = 2 * p
            gam[b] = -2 * pd @ pd
        for i, j, pr, r in self.joints:
            ty = pr["type"]
            f0, f1, f2 = _tf(pr, t)
            V = self._vec
            if ty == "point":
                d = V(j, pr["sj"], q, qd, True) - V(i, pr["si"], q, qd, True)
                phi[r:r + 3], P[r:r + 3] = d.v, d.J
                gam[r:r + 3] = -d.vdd
                continue
            if ty == "dot1":
                val, grad, _, dd = _dot(V(i, pr["ai"], q, qd, False), V(j, pr["aj"], q, qd, False))
                phi[r], P[r], pt[r], gam[r] = val - f0, grad, -f1, -(dd - f2)
            elif ty == "dot2":
                d = V(j, pr["sj"], q, qd, True) - V(i, pr["si"], q, qd, True)
                val, grad, _, dd = _dot(V(i, pr["ai"], q, qd, False), d)
                phi[r], P[r], pt[r], gam[r] = val - f0, grad, -f1, -(dd - f2)
            elif ty == "dist":
                d = V(j, pr["sj"], q, qd, True) - V(i, pr["si"], q, qd, True)
                val, grad, _, dd = _dot(d, d)
                phi[r], P[r] = 0.5 * (val - f0 * f0), 0.5 * grad
                pt[r] = -f0 * f1
                gam[r] = -(0.5 * dd - (f1 * f1 + f0 * f2))
            elif ty == "angle":
                ai, bi = V(i, pr["ai"], q, qd, False), V(i, pr["bi"], q, qd, False)
                aj = V(j, pr["aj"], q, qd, False)
                A, gA, Ad, Add = _dot(bi, aj)
                B, gB, Bd, Bdd = _dot(ai, aj)
                c, s = math.cos(f0), math.sin(f0)
                c1, s1 = -s * f1, c * f1
                c2, s2 = -c * f1 * f1 - s * f2, -s * f1 * f1 + c * f2
                phi[r], P[r] = c * A - s * B, c * gA - s * gB
                pt[r] = c1 * A - s1 * B
                # total second derivative at q'' = 0, explicit t included
                d2 = c2 * A + 2 * c1 * Ad + c * Add - (s2 * B + 2 * s1 * Bd + s * Bdd)
                gam[r] = -d2
            else:
                raise ValueError(f"SpatialReference: unknown primitive {ty!r}.")
        return phi, P, pt, gam

    # ------------------------------------------------------------ mass, forces
    def _mass(self, q):
        M = np.zeros((self.nq, self.nq))
        for b in range(self.nb):
            o = 7 * b
            M[o:o + 3, o:o + 3] = self.mass_[b] * np.eye(3)
            G = _G(q[o + 3:o + 7])
            M[o + 3:o + 7, o + 3:o + 7] = 4 * G.T @ self.J[b] @ G
        return M

    @staticmethod
    def _road(pr, x):
        z0, r, R = pr["z0"], pr["bump_r"], pr["wheel_r"]
        if r > 0:
            S, dx = R + r, x - pr["bump_x"]
            if abs(dx) < math.sqrt(S * S - R * R):
                s = math.sqrt(S * S - dx * dx)
                return z0 + s - R, -dx / s
        return z0, 0.0

    def _forces(self, t, q, qd):
        """Q and the potential energy of the force elements at one point."""
        Q = np.zeros(self.nq)
        Vpot = 0.0
        for b in range(self.nb):
            o = 7 * b
            Q[o:o + 3] += self.mass_[b] * self.g
            p, pd = q[o + 3:o + 7], qd[o + 3:o + 7]
            Gd = _G(pd)
            Q[o + 3:o + 7] += 8 * Gd.T @ self.J[b] @ Gd @ p
        V = self._vec
        for i, j, pr in self.forces_:
            ty = pr["type"]
            fa = _tf(pr, t, "fa_")[0]
            if ty == "tsda":
                d = V(j, pr["sj"], q, qd, True) - V(i, pr["si"], q, qd, True)
                ln = np.linalg.norm(d.v)
                Vpot += 0.5 * pr["k"] * (ln - pr["L0"]) ** 2
                if ln == 0:
                    continue
                grad = d.v @ d.J / ln
                F = pr["k"] * (ln - pr["L0"]) + pr["c"] * (d.v @ d.vd / ln) + fa
                Q -= F * grad
            elif ty == "rsda":
                ai, bi = V(i, pr["ai"], q, qd, False), V(i, pr["bi"], q, qd, False)
                aj = V(j, pr["aj"], q, qd, False)
                a, ga, ad, _ = _dot(aj, bi)
                b_, gb, bd, _ = _dot(aj, ai)
                rho = a * a + b_ * b_
                th = math.atan2(a, b_)
                x = _wrap(th - pr["L0"])
                Vpot += 0.5 * pr["k"] * x * x
                F = pr["k"] * x + pr["c"] * (b_ * ad - a * bd) / rho + fa
                Q -= F * (b_ * ga - a * gb) / rho
            elif ty in ("bushing_t", "bushing_r"):
                if ty == "bushing_t":
                    d = V(j, pr["sj"], q, qd, True) - V(i, pr["si"], q, qd, True)
                    val, grad, rate, _ = _dot(V(i, pr["ai"], q, qd, False), d)
                else:
                    v1, g1, r1, _ = _dot(V(i, pr["bi"], q, qd, False), V(j, pr["aj"], q, qd, False))
                    v2, g2, r2, _ = _dot(V(i, pr["ai"], q, qd, False), V(j, pr["bj"], q, qd, False))
                    val, grad, rate = 0.5 * (v1 - v2), 0.5 * (g1 - g2), 0.5 * (r1 - r2)
                x = val - pr.get("L0", 0.0)
                Vpot += 0.5 * pr["k"] * x * x
                Q -= (pr["k"] * x + pr["c"] * rate) * grad
            elif ty == "tire":
                P = V(i, pr["si"], q, qd, True)
                h, h1 = self._road(pr, P.v[0])
                x = P.v[2] - h - pr["L0"]
                Vpot += 0.5 * pr["k"] * x * x
                F = -(pr["k"] * x + pr["c"] * (P.vd[2] - h1 * P.vd[0]))
                if pr.get("unilateral", 0.0) and not F > 0:
                    continue
                Q += F * P.J[2]
            else:
                raise ValueError(f"SpatialReference: unknown force {ty!r}.")
        for b, s, fn in self.callbacks:
            out = np.asarray(fn(t, q.copy(), qd.copy()), float).reshape(6)
            P = V(b, s, q, qd, True)
            o = 7 * b
            Q += P.J.T @ out[:3]
            Q[o + 3:o + 7] += 2 * _E(q[o + 3:o + 7]).T @ out[3:]
        return Q, Vpot

    def _kinetic(self, q, qd):
        T = 0.0
        for b in range(self.nb):
            o = 7 * b
            w = 2 * _G(q[o + 3:o + 7]) @ qd[o + 3:o + 7]  # body-frame angular velocity
            T += 0.5 * self.mass_[b] * qd[o:o + 3] @ qd[o:o + 3] + 0.5 * w @ self.J[b] @ w
        return T

    def _acc(self, t, q, qd):
        phi, P, pt, gam = self._constraints(t, q, qd)
        M = self._mass(q)
        Q, _ = self._forces(t, q, qd)
        n, m = self.nq, self.nc
        S = np.zeros((n + m, n + m))
        S[:n, :n], S[:n, n:], S[n:, :n] = M, P.T, P
        x = np.linalg.solve(S, np.concatenate([Q, gam]))
        return x[:n], x[n:]

    # ------------------------------------------------------------ public (batch) API
    def _batch(self, fn, t, *arrays):
        arrays = [np.asarray(a, float) for a in arrays]
        tt = np.asarray(t, float)
        batch = arrays[0].ndim == 2 or tt.ndim == 1
        if not batch:
            return fn(float(tt), *arrays)
        m = max([a.shape[1] for a in arrays if a.ndim == 2] + [tt.size if tt.ndim else 1])
        outs = []
        for k in range(m):
            tk = float(tt[k] if tt.ndim else tt)
            outs.append(fn(tk, *[a[:, k] if a.ndim == 2 else a for a in arrays]))
        if isinstance(outs[0], tuple):
            return tuple(np.moveaxis(np.array([o[c] for o in outs]), 0, -1)
                         for c in range(len(outs[0])))
        return np.moveaxis(np.array(outs), 0, -1)

    def phi(self, t, q):
        """Phi(t, q), (nc,) or (nc, m)."""
        return self._batch(lambda t, q: self._constraints(t, q, np.zeros_like(q))[0], t, q)

    def constraint_jacobian(self, t, q):
        """Phi_q, (nc, nq) or (nc, nq, m)."""
        return self._batch(lambda t, q: self._constraints(t, q, np.zeros_like(q))[1], t, q)

    def phi_t(self, t, q):
        """Phi_t, (nc,) or (nc, m)."""
        return self._batch(lambda t, q: self._constraints(t, q, np.zeros_like(q))[2], t, q)

    def gamma(self, t, q, qd):
        """gamma = -(Phi_q qd)_q qd - 2 Phi_qt qd - Phi_tt, (nc,) or (nc, m)."""
        return self._batch(lambda t, q, v: self._constraints(t, q, v)[3], t, q, qd)

    def mass(self, q):
        """M(q), (nq, nq) or (nq, nq, m)."""
        return self._batch(lambda t, q: self._mass(q), 0.0, q)

    def forces(self, t, q, qd):
        """Q(t, q, qd), (nq,) or (nq, m)."""
        return self._batch(lambda t, q, v: self._forces(t, q, v)[0], t, q, qd)

    def energy(self, t, q, qd):
        """(kinetic, potential) in J: floats, or arrays (m,)."""
        out = self._batch(lambda t, q, v: np.array([self._kinetic(q, v), self._forces(t, q, v)[1]
                                                     - self.mass_ @ np.array(
                                                         [q[7 * b:7 * b + 3] @ self.g
                                                          for b in range(self.nb)])]), t, q, qd)
        return out[0], out[1]

    def accelerations(self, t, q, qd):
        """(q'', lambda) of the index-1 system (no Baumgarte terms)."""
        return self._batch(self._acc, t, q, qd)

    def rhs(self, t, y):
        """f(t, y) = (q', q'') of the index-1 ODE, y = (q, q')."""
        y = np.asarray(y, float)
        n = self.nq
        return self._batch(lambda t, y: np.concatenate([y[n:], self._acc(t, y[:n], y[n:])[0]]),
                           t, y)
