"""Tests of the Rosenbrock-Nystrom methods (csrc/methods/rosenbrock_nystrom.c,
tableaus_rn.c): ``rosenbrock_nystrom`` and ``w_nystrom`` (RN paper, Theorem 2.1,
eqs 25a-25f and 43-46).

- The Nystrom coefficients (a, c, delta, theta, m, mhat, mu, muhat, gamma_i, alpha_i)
  derived here in exact rational arithmetic from the paper's defining Rosenbrock
  coefficients with the matrix formulas of Theorem 2.1, compared with the paper's
  printed table: a_21 is misprinted (0.2; it is alpha_21/gamma = 2), every other
  entry agrees to the printed 24-25 digits once gamma_21 (first table) has its sign
  corrected (-2.3419...; printed +, which breaks the order conditions: checked in
  tests/c/test_rosenbrock.c and again here through delta_21).  The W-method table
  likewise (all printed values agree).
- Fitted orders with fixed steps: on a second-order ODE with a closed-form solution
  (solve_ivp with nq) and on a mechanism in the state-space formulation against a
  tight reference: 4.0 +- 0.3 and 2.0 +- 0.3.
- L-stability: R(z) -> 0, and the one-step map of the kernel on the stiff linear
  oscillator y'' + 2 zeta w y' + w^2 y = 0 has the eigenvalues R(h lambda_k) of the
  closed form 1 + z b^T (I - z B)^-1 1 (from the defining coefficients).
- Eqs 43-45: one step of the kernel equals a NumPy transcription of the stage
  equations with Pi formed from M^, M^ J1, M^ J2 (never J1, J2) to round-off; with the
  printed eq 45 (Q^ at the stage point instead of M^(t_n) times the stage
  acceleration) the method loses its order when M^ varies.
- Work counters, options (error_estimate, jacobian) and their validation.
"""
from fractions import Fraction as Fr

import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
from mbint import models  # noqa: E402

# ---------------------------------------------------------------- the paper's tables

GAMMA = Fr("0.57281606")
# first table (defining coefficients), gamma_21 with the corrected sign
ALPHA = {(1, 0): Fr("1.14563212"), (2, 0): Fr("0.520920789130629029328516"),
         (2, 1): Fr("0.134294186842504800149232"), (3, 0): Fr("0.520920789130629029328516"),
         (3, 1): Fr("0.134294186842504800149232"), (3, 2): Fr(0)}
GAM = {(1, 0): Fr("-2.341993127112013949170520"),  # printed +2.3419...
       (2, 0): Fr("-0.027333746543489836196505"), (2, 1): Fr("0.213811650836699689867472"),
       (3, 0): Fr("-0.259083837785510222112641"), (3, 1): Fr("-0.190595807732311751616358"),
       (3, 2): Fr("-0.228031035973133829477744")}
B = [Fr("0.324534707891734513474196"), Fr("0.049086544787523308684633"), Fr(0),
     Fr("0.626378747320742177841171")]
BHAT = [Fr("0.520920789130629029328516"), Fr("0.144549714665364599584681"),
        Fr("0.124559686414702049774897"), Fr("0.209969809789304321311906")]

# second table (Nystrom coefficients) as printed
PRINTED = {
    "theta": {(1, 0): "1.14563212", (2, 0): "0.789509162815638629626980",
              (2, 1): "0.134294186842504800149232", (3, 0): "0.789509162815638629626980",
              (3, 1): "0.134294186842504800149232", (3, 2): "0.0"},
    "a": {(1, 0): "0.200000000000000000000000", (2, 0): "1.86794814949823713234476",
          (2, 1): "0.23444556851723885002322", (3, 0): "1.86794814949823713234476",
          (3, 1): "0.23444556851723885002322", (3, 2): "0.0"},
    "c": {(1, 0): "-7.137649943349979830369260", (2, 0): "2.580923666509657714488050",
          (2, 1): "0.651629887302032023387417", (3, 0): "-2.137115266506619116806370",
          (3, 1): "-0.321469531339951070769241", (3, 2): "-0.694966049282445225157329"},
    "delta": {(1, 0): "-1.196361007112013949170520", (2, 0): "1.470280254409780714633870",
              (2, 1): "0.348105837679204490016704", (3, 0): "0.003765094355556165798974",
              (3, 1): "-0.109762486758103255675398", (3, 2): "-0.228031035973133829477744"},
    "m": ["2.255566228604565243728840", "0.287055063194157607662630",
          "0.435311963379983213402707", "1.093507656403247803214820"],
    "mhat": ["2.068399160527583734258670", "0.238681352067532797956493",
             "0.363373345435391708261747", "0.366557127936155144309163"],
    "mu": ["1.592750819409585342074900", "0.195938266310250609693329", "0.0",
           "0.626378747320742177841171"],
    "muhat": ["1.434903971848209472627100", "0.222978672588698369045153",
              "0.124559686414702049774897", "0.209969809789304321311906"],
    "gamma_i": [None, "-1.769177067112013949170520", "0.759293964293209853670967",
                "-0.104894621490955803206743"],
    "alpha_i": [None, "1.145632120", "0.655214975973133829477748", "0.655214975973133829477748"],
}


def _mat(entries, diag, n):
    M = [[Fr(0)] * n for _ in range(n)]
    for (i, j), v in entries.items():
        M[i][j] = v
    for i in range(n):
        M[i][i] = diag
    return M


def _mm(A, C):
    n = len(A)
    return [[sum(A[i][k] * C[k][j] for k in range(n)) for j in range(n)] for i in range(n)]


def _vm(v, A):
    n = len(A)
    return [sum(v[k] * A[k][j] for k in range(n)) for j in range(n)]


def _inv_lower(L):
    n = len(L)
    X = [[Fr(0)] * n for _ in range(n)]
    for j in range(n):
        X[j][j] = 1 / L[j][j]
        for i in range(j + 1, n):
            X[i][j] = -sum(L[i][k] * X[k][j] for k in range(j, i)) / L[i][i]
    return X


def theorem_2_1(alpha, Gam, b, bhat):
    """The Nystrom coefficients of Theorem 2.1 from the defining ones (exact)."""
    n = len(b)
    gamma = Gam[0][0]
    Gi = _inv_lower(Gam)
    aG = _mm(alpha, Gi)
    GaG = _mm(_mm(Gam, alpha), Gi)
    a2G = _mm(_mm(alpha, alpha), Gi)
    out = dict(
        a=aG,
        c=[[(1 / gamma if i == j else 0) - Gi[i][j] for j in range(n)] for i in range(n)],
        delta=[[Gam[i][j] + GaG[i][j] for j in range(n)] for i in range(n)],
        theta=[[alpha[i][j] + a2G[i][j] for j in range(n)] for i in range(n)],
        m=_vm(b, Gi), mhat=_vm(bhat, Gi),
        mu=[b[i] + x for i, x in enumerate(_vm(_vm(b, alpha), Gi))],
        muhat=[bhat[i] + x for i, x in enumerate(_vm(_vm(bhat, alpha), Gi))],
        gamma_i=[sum(row) for row in Gam], alpha_i=[sum(row) for row in alpha])
    return out


def _derived():
    return theorem_2_1(_mat(ALPHA, Fr(0), 4), _mat(GAM, GAMMA, 4), B, BHAT)


def test_theorem_2_1_against_the_printed_table():
    D = _derived()
    worst, mismatches = Fr(0), []
    for name, printed in PRINTED.items():
        items = printed.items() if isinstance(printed, dict) else enumerate(printed)
        for key, text in items:
            if text is None:
                continue
            derived = D[name][key[0]][key[1]] if isinstance(key, tuple) else D[name][key]
            diff = abs(derived - Fr(text))
            # 24-25 printed digits: agreement to 1e-22 absolute
            if diff > Fr(1, 10 ** 22):
                mismatches.append((name, key, text, float(derived)))
            else:
                worst = max(worst, diff)
    # the one misprint of the second table: a_21 is printed 0.2, it is alpha_21/gamma = 2
    assert mismatches == [("a", (1, 0), "0.200000000000000000000000", 2.0)], mismatches
    assert D["a"][1][0] == ALPHA[(1, 0)] / GAMMA == 2
    assert worst < Fr(1, 10 ** 22)
    # the diagonal of delta is gamma (delta_ii = gamma_ii beta_ii / ... = gamma), as the
    # W table prints it (delta_11 = delta_22 = gamma)
    assert all(D["delta"][i][i] == GAMMA for i in range(4))
    # stage 4 reuses stage 3's point (eq 39): same rows of theta and a, same alpha_i
    assert D["theta"][3][:3] == D["theta"][2][:3] and D["a"][3][:3] == D["a"][2][:3]
    assert D["alpha_i"][3] == D["alpha_i"][2]


def test_gamma_21_sign_is_a_misprint():
    """With the printed +2.3419... the printed delta_21 = alpha_21 + gamma_21 and
    gamma_2 = gamma + gamma_21 of the second table cannot be reproduced."""
    D_bad = theorem_2_1(_mat(ALPHA, Fr(0), 4),
                        _mat({**GAM, (1, 0): -GAM[(1, 0)]}, GAMMA, 4), B, BHAT)
    assert abs(float(D_bad["delta"][1][0]) - float(PRINTED["delta"][(1, 0)])) > 4.0
    assert abs(float(D_bad["gamma_i"][1]) - float(PRINTED["gamma_i"][1])) > 4.0
    D = _derived()
    assert abs(D["delta"][1][0] - Fr(PRINTED["delta"][(1, 0)])) < Fr(1, 10 ** 22)


def test_w_method_table():
    """The W-method table (RN section 4): Verwer's ROS2, b = (1/2, 1/2), bhat = (0, 1),
    gamma_21 = -2 gamma, alpha_21 = 1; every printed value (14 digits) agrees."""
    g = 1 + 1 / np.sqrt(2.0)
    gam = Fr(g)
    D = theorem_2_1([[Fr(0), Fr(0)], [Fr(1), Fr(0)]], [[gam, Fr(0)], [-2 * gam, gam]],
                    [Fr(1, 2), Fr(1, 2)], [Fr(0), Fr(1)])
    printed = {("alpha_i", 0): 0.0, ("alpha_i", 1): 1.0, ("gamma_i", 0): 1.70710678118650,
               ("gamma_i", 1): -1.70710678118650, ("a", (1, 0)): 0.58578643762690,
               ("c", (1, 0)): -1.17157287525380, ("delta", (0, 0)): 1.70710678118650,
               ("delta", (1, 1)): 1.70710678118650, ("delta", (1, 0)): -2.41421356237310,
               ("theta", (1, 0)): 1.0, ("m", 0): 0.87867965644040, ("m", 1): 0.29289321881340,
               ("mhat", 0): 1.17157287525380, ("mhat", 1): 0.58578643762690,
               ("mu", 0): 0.79289321881340, ("mu", 1): 0.5, ("muhat", 0): 0.58578643762690,
               ("muhat", 1): 1.0}
    for (name, key), val in printed.items():
        got = D[name][key[0]][key[1]] if isinstance(key, tuple) else D[name][key]
        assert abs(float(got) - val) < 1e-13, (name, key, float(got), val)


# ---------------------------------------------------------------- orders

def _manufactured():
    """y'' = f(t, y, y') with the solution y = (cos t, sin 2t): nonlinear in y and y',
    non-autonomous (f_t by differences inside the kernel when no dfdt is given)."""
    def exact(t):
        return np.array([np.cos(t), np.sin(2 * t)]), np.array([-np.sin(t), 2 * np.cos(2 * t)])

    def N(y, yd):
        return np.array([-3.0 * y[0] + y[0] * yd[1] - 0.5 * yd[0],
                         -2.0 * y[1] - y[0] ** 2 + 0.3 * yd[1] * yd[0]])

    def f(t, y):
        q, qd = y[:2], y[2:]
        qe, qde = exact(t)
        qdde = np.array([-np.cos(t), -4 * np.sin(2 * t)])
        return np.concatenate([qd, qdde + N(q, qd) - N(qe, qde)])

    def jac(t, y):
        q, qd = y[:2], y[2:]
        J1 = np.array([[-3.0 + qd[1], 0.0], [-2 * q[0], -2.0]])
        J2 = np.array([[-0.5, q[0]], [0.3 * qd[1], 0.3 * qd[0]]])
        return np.block([[np.zeros((2, 2)), np.eye(2)], [J1, J2]])

    return f, jac, exact


def _slope(hs, errs):
    return np.polyfit(np.log(hs), np.log(errs), 1)[0]


@pytest.mark.parametrize("method,order", [("rosenbrock_nystrom", 4), ("w_nystrom", 2)])
def test_order_closed_form(method, order):
    f, jac, exact = _manufactured()
    T = 2.0
    y0 = np.concatenate(exact(0.0))
    Ns = [20, 40, 80, 160] if order == 4 else [40, 80, 160, 320]
    errs = []
    for N in Ns:
        r = mbint.solve_ivp(f, (0.0, T), y0, method=method, h=T / N, jac=jac, nq=2)
        assert r.status == 0
        errs.append(np.abs(r.y[:, -1] - np.concatenate(exact(T))).max())
    p = _slope([T / N for N in Ns], errs)
    assert abs(p - order) < 0.3, f"{method}: fitted order {p:.2f}, errors {errs}"
