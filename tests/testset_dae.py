"""DAE problems of the Test Set for IVP Solvers with their published reference solutions.

F. Mazzia, C. Magherini (eds.), Test Set for IVP Solvers, Release 2.4, University of
Bari and INdAM, 2008 (https://archimede.uniba.it/~testset/, formerly
http://www.dm.uniba.it/~testset/).  Each problem is written here from the test set's
description (its Fortran source transamp.f, revision 1.3 of 2006/10/25) in mbint's form
M y' = f(t, y) with a constant mass matrix, for ``mbint.solve_ivp(..., mass=M)``.

Transistor amplifier (``transamp``): an electrical circuit of two transistor stages,
8 node voltages, index 1, t in [0, 0.2] s (Hairer, Lubich, Roche, *The numerical solution
of differential-algebraic systems by Runge-Kutta methods*, LNM 1409, 1989; Hairer &
Wanner, *Solving ODEs II*, section VI.1).  The mass matrix is singular and not diagonal:
the capacitors C1, C3, C5 couple pairs of nodes, so no single variable is algebraic
(the null space of M is the common mode of each pair).  The exponential transistor law
beta (exp(U / UF) - 1) with UF = 26 mV makes it stiff where a transistor conducts.
The reference solution at t = 0.2 is the test set's (PSIDE, rtol = atol = 1e-14, Cray
double precision); y(0) and y'(0) are consistent (the test set's ``init``: y'(0) of the
coupled pairs determined numerically to 8-9 digits, the others in closed form).
"""
import numpy as np

UB, UF, ALPHA, BETA = 6.0, 0.026, 0.99, 1e-6
R0 = 1000.0
R = 9000.0            # R1 .. R9
C = (1e-6, 2e-6, 3e-6, 4e-6, 5e-6)
T_SPAN = (0.0, 0.2)


def transamp_mass():
    """M of M y' = f (the test set's ``meval``, banded there): C1 couples y1, y2; C3
    couples y4, y5; C5 couples y7, y8; C2, C4 ground y3, y6."""
    c1, c2, c3, c4, c5 = C
    M = np.zeros((8, 8))
    for (i, j), c in (((0, 1), c1), ((3, 4), c3), ((6, 7), c5)):
        M[i, i], M[i, j], M[j, i], M[j, j] = -c, c, c, -c
    M[2, 2], M[5, 5] = -c2, -c4
    return M


def _emitter(u):
    """The transistor law beta (exp(u / UF) - 1) and its derivative."""
    e = np.exp(u / UF)
    return BETA * (e - 1.0), BETA * e / UF


def transamp_fun(t, y):
    """f of M y' = f (the test set's ``feval``); U_e(t) = 0.1 sin(200 pi t)."""
    ue = 0.1 * np.sin(200.0 * np.pi * t)
    f1, _ = _emitter(y[1] - y[2])
    f2, _ = _emitter(y[4] - y[5])
    return np.array([(y[0] - ue) / R0,
                     y[1] / R + (y[1] - UB) / R + (1.0 - ALPHA) * f1,
                     y[2] / R - f1,
                     (y[3] - UB) / R + ALPHA * f1,
                     y[4] / R + (y[4] - UB) / R + (1.0 - ALPHA) * f2,
                     y[5] / R - f2,
                     (y[6] - UB) / R + ALPHA * f2,
                     y[7] / R])


def transamp_jac(t, y):
    """df/dy (the test set's ``jeval``)."""
    _, g1 = _emitter(y[1] - y[2])
    _, g2 = _emitter(y[4] - y[5])
    J = np.zeros((8, 8))
    J[0, 0] = 1.0 / R0
    for k, g in ((1, g1), (4, g2)):   # the two stages: base k, emitter k+1, collector k+2
        J[k, k], J[k, k + 1] = 2.0 / R + (1.0 - ALPHA) * g, -(1.0 - ALPHA) * g
        J[k + 1, k], J[k + 1, k + 1] = -g, 1.0 / R + g
        J[k + 2, k], J[k + 2, k + 1], J[k + 2, k + 2] = ALPHA * g, -ALPHA * g, 1.0 / R
    J[7, 7] = 1.0 / R
    return J


TRANSAMP_Y0 = np.array([0.0, UB / 2, UB / 2, UB, UB / 2, UB / 2, UB, 0.0])
#: y'(0) of the test set's ``init`` (consistent with y(0))
TRANSAMP_YP0 = np.array([51.338775, 51.338775, -UB / 2 / (C[1] * R), -24.9757667,
                         -24.9757667, -UB / 2 / (C[3] * R), -10.00564453, -10.00564453])
#: y(0.2), the test set's ``solut`` (PSIDE at rtol = atol = 1e-14)
TRANSAMP_REF = np.array([-0.5562145012262709e-02, 0.3006522471903042e+01,
                         0.2849958788608128e+01, 0.2926422536206241e+01,
                         0.2704617865010554e+01, 0.2761837778393145e+01,
                         0.4770927631616772e+01, 0.1236995868091548e+01])
