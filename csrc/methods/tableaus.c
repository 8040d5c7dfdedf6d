/* Explicit Runge-Kutta tableaus.  Sources: lecture notes (LN) sections 7.1-7.3 and
 * 7.8 (Butcher arrays, ode23 and ode45 listings); Bogacki & Shampine, Appl. Math.
 * Lett. 2 (1989); Dormand & Prince, J. Comput. Appl. Math. 6 (1980); the ode45
 * interpolant of Shampine, Math. Comp. 46 (1986) as printed in LN (ntrp45).
 * Order conditions are checked in tests/c/test_tableaus.c and tests/test_erk.py. */
#include "tableaus.h"

/* ---- forward Euler (LN 7.1) ---- */
static const double euler_c[] = {0.0};
static const double euler_A[] = {0.0};
static const double euler_b[] = {1.0};
const mb_erk_tableau mb_erk_euler = {"euler", 1, 1, 0, 0, 0, euler_c, euler_A, euler_b,
                                     0, 0, "LN 7.1", 0, 0, 0, 0, 0};

/* ---- Heun (LN 7.2, Butcher array with alpha = 1/2) ---- */
static const double heun_c[] = {0.0, 1.0};
static const double heun_A[] = {0.0, 0.0,
                                1.0, 0.0};
static const double heun_b[] = {0.5, 0.5};
const mb_erk_tableau mb_erk_heun = {"heun", 2, 2, 0, 0, 0, heun_c, heun_A, heun_b, 0, 0,
                                    "LN 7.2", 0, 0, 0, 0, 0};

/* ---- classical Runge-Kutta 4 (LN 7.3) ---- */
static const double rk4_c[] = {0.0, 0.5, 0.5, 1.0};
static const double rk4_A[] = {0.0, 0.0, 0.0, 0.0,
                               0.5, 0.0, 0.0, 0.0,
                               0.0, 0.5, 0.0, 0.0,
                               0.0, 0.0, 1.0, 0.0};
static const double rk4_b[] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
const mb_erk_tableau mb_erk_rk4 = {"rk4", 4, 4, 0, 0, 0, rk4_c, rk4_A, rk4_b, 0, 0, "LN 7.3",
                                   0, 0, 0, 0, 0};

/* ---- Bogacki-Shampine 3(2), ode23 (LN 7.8: A, B, E and ntrp23's BI) ---- */
static const double rk23_c[] = {0.0, 0.5, 0.75};
static const double rk23_A[] = {0.0, 0.0, 0.0,
                                0.5, 0.0, 0.0,
                                0.0, 0.75, 0.0};
static const double rk23_b[] = {2.0 / 9, 1.0 / 3, 4.0 / 9};
/* E = b - b_hat (b_hat = 7/24, 1/4, 1/3, 1/8), as printed in LN */
static const double rk23_e[] = {-5.0 / 72, 1.0 / 12, 1.0 / 9, -1.0 / 8};
static const double rk23_P[] = {1.0, -4.0 / 3, 5.0 / 9,
                                0.0, 1.0, -2.0 / 3,
                                0.0, 4.0 / 3, -8.0 / 9,
                                0.0, -1.0, 1.0};
const mb_erk_tableau mb_erk_rk23 = {"rk23", 3, 3, 2, 1, 3, rk23_c, rk23_A, rk23_b, rk23_e,
                                    rk23_P, "Bogacki-Shampine 1989; LN 7.8 (ode23)", 0, 0, 0, 0, 0};

/* ---- Dormand-Prince 5(4), ode45 (LN 7.8: A, B, E and ntrp45's BI) ---- */
static const double dp_c[] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0};
static const double dp_A[] = {
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    1.0 / 5, 0.0, 0.0, 0.0, 0.0, 0.0,
    3.0 / 40, 9.0 / 40, 0.0, 0.0, 0.0, 0.0,
    44.0 / 45, -56.0 / 15, 32.0 / 9, 0.0, 0.0, 0.0,
    19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0.0, 0.0,
    9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0.0};
static const double dp_b[] = {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784,
                              11.0 / 84};
/* E = b - b_hat (5th minus embedded 4th order weights), as printed in LN */
static const double dp_e[] = {71.0 / 57600, 0.0, -71.0 / 16695, 71.0 / 1920,
                              -17253.0 / 339200, 22.0 / 525, -1.0 / 40};
static const double dp_P[] = {
    1.0, -183.0 / 64, 37.0 / 12, -145.0 / 128,
    0.0, 0.0, 0.0, 0.0,
    0.0, 1500.0 / 371, -1000.0 / 159, 1000.0 / 371,
    0.0, -125.0 / 32, 125.0 / 12, -375.0 / 64,
    0.0, 9477.0 / 3392, -729.0 / 106, 25515.0 / 6784,
    0.0, -11.0 / 7, 11.0 / 3, -55.0 / 28,
    0.0, 3.0 / 2, -4.0, 5.0 / 2};
const mb_erk_tableau mb_erk_dopri5 = {"dopri5", 6, 5, 4, 1, 4, dp_c, dp_A, dp_b, dp_e, dp_P,
                                      "Dormand-Prince 1980; LN 7.8 (ode45, ntrp45)", 0, 0, 0,
                                      0, 0};
