#ifndef MB_METHODS_TABLEAUS_IRK_H
#define MB_METHODS_TABLEAUS_IRK_H
/* Implicit Runge-Kutta tableaus from node sets, as data (tableaus_irk.c).
 *
 * s stages Z_i = Y_i - y with  M Z_i = h sum_j A[i][j] f(t + c_j h, y + Z_j)
 * (A row-major s x s, invertible), and y_new = y + sum_i d_i Z_i with
 * d^T = b^T A^{-1}: on an ODE (M = I) this is y + h sum_i b_i f(Y_i); with a
 * singular mass matrix it is the form that stays defined.  For the stiffly
 * accurate families (Radau IIA, Lobatto IIIC) d = e_s.
 *
 * Families and their simplifying assumptions (Hairer & Wanner II, IV.5):
 *   Radau IA      c = zeros of P_s(2x-1) + P_{s-1}(2x-1) (c_1 = 0),
 *                 B(2s-1), C(s-1), D(s): order 2s-1
 *   Radau IIA     c = zeros of P_s(2x-1) - P_{s-1}(2x-1) (c_s = 1),
 *                 B(2s-1), C(s), D(s-1): order 2s-1, collocation
 *   Lobatto IIIC  c = 0, 1 and the zeros of P'_{s-1}(2x-1), a_i1 = b_1,
 *                 B(2s-2), C(s-1), D(s-1): order 2s-2
 * where B(p): sum_i b_i c_i^{k-1} = 1/k (k <= p); C(q): sum_j a_ij c_j^{k-1} =
 * c_i^k / k (k <= q); D(r): sum_i b_i c_i^{k-1} a_ij = b_j (1 - c_j^k) / k
 * (k <= r).  All are L-stable: R(z) is the (s-1, s) Pade approximant of e^z for
 * Radau IA and IIA, the (s-2, s) one for Lobatto IIIC.
 *
 * Dense output: the polynomial u of degree m with u(0) = y that interpolates
 * the values V_j at nodes theta_j, j = 1..m: the stages with 0 < c_i < 1
 * (V = Z_i, dense_stage[j] = i) and the end point theta = 1 (V = y_new - y,
 * dense_stage[j] = -1):  u(theta) = y + sum_k theta^k sum_j P[j][k-1] V_j.  For
 * Radau IIA this is the collocation polynomial.
 *
 * The coefficients were computed from the node sets in 50-digit arithmetic
 * (nodes as polynomial roots, then B, C, D solved as linear systems) and are
 * written with 21 significant digits or as exact fractions;
 * tests/c/test_implicit_rk.c checks every simplifying assumption to 1e-12.
 */

typedef enum {
    MB_IRK_RADAU_IA = 0,
    MB_IRK_RADAU_IIA = 1,
    MB_IRK_LOBATTO_IIIC = 2
} mb_irk_family;

typedef struct mb_irk_tableau {
    const char *name;
    mb_irk_family family;
    int s;
    int order;    /* p: B(p) and classical order */
    int c_order;  /* q of C(q) (stage order) */
    int d_order;  /* r of D(r) */
    const double *c, *A, *b, *d;
    int m;                    /* dense-output degree (number of values) */
    const int *dense_stage;   /* m entries: stage index, -1 = end point */
    const double *P;          /* m x m, row-major */
} mb_irk_tableau;

extern const mb_irk_tableau mb_irk_radau_ia2, mb_irk_radau_ia3, mb_irk_radau_ia4,
    mb_irk_radau_iia2, mb_irk_radau_iia3, mb_irk_radau_iia4, mb_irk_lobatto_iiic2,
    mb_irk_lobatto_iiic3, mb_irk_lobatto_iiic4;

/* RADAU5 (Hairer & Wanner II, IV.8): the 3-stage Radau IIA tableau and the
 * eigen-decomposition of A^{-1} that splits the Newton system in one real and
 * one complex system of size n:
 *   TI A^{-1} = Lambda TI,  rows: TI[0] A^{-1} = gamma TI[0] and
 *   (TI[1] + i TI[2]) A^{-1} = mu (TI[1] + i TI[2]), mu = mu_re + i mu_im,
 *   T = TI^{-1} (W = TI Z, Z = T W per component; T, TI row-major 3 x 3).
 * E: the error estimate err = (gamma/h M - J)^{-1} (f(t, y) + M sum_i E_i Z_i / h)
 * (E = -P[:, 0]: f(t, y) minus the derivative of the collocation polynomial
 * at t, filtered). */
typedef struct mb_radau5_constants {
    const mb_irk_tableau *tab;
    double gamma, mu_re, mu_im;
    const double *T, *TI, *E;
} mb_radau5_constants;

extern const mb_radau5_constants mb_radau5_constants_iia3;

#endif
