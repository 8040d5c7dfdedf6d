/* The block implicit one-step method of the LS paper (Li, Ding, Li 2019, section 3):
 * lstable_block and astable_block.
 *
 * Method (LS eq 5).  With nodes t_k < c_1 < ... < c_r = t_k+1 = t_k + h and
 * Y = (y_1 ... y_r), y_i ~ y(c_i):
 *     Y = e (x) y_k + h d (x) y'_k + h B (x) Y'.
 * It is the (r+1)-stage Runge-Kutta method with the explicit first stage t_k,
 * A = [0 0; d B], c = (0, c), b = (d_r, B_r.) (stiffly accurate), whose stages are
 * exact for polynomials of degree r (LS eq 8: the Taylor terms up to y^(r)) and whose
 * constants mu_i set the term of y^(r+1): [B d] W = [H mu] (eq 9).
 *
 * B and d from the nodes.  Eq 9 in the monomial basis is ill-conditioned for r > 4;
 * the same matrices come from the collocation method on the r+1 nodes
 * tau = (0, c_1..c_r): with A_c[i][m] = int_0^{c_i} l_m (Lagrange basis on tau, by
 * Gauss-Legendre quadrature) and v_m = 1 / prod_{l != m} (tau_m - tau_l) (the weights
 * of the r-th divided difference, zero on polynomials of degree < r),
 *     [d B] = A_c + delta v^T,   mu_i = c_i^{r+1} + (r+1) delta_i,
 * is exact for degree <= r - 1 and gives mu_i on (r+1) t^r (eq 9's last column).
 * R(lambda) = e_r^T (I - lambda B)^{-1} (e + lambda d) (eq 7) is then P/Q with P, Q
 * polynomials of degree <= r that are affine in delta (B - B_c = delta v_B^T has rank
 * one: matrix determinant lemma and Sherman-Morrison, the lambda^2 delta delta terms
 * cancel).  R = N/D (the (k, j) Pade approximant) iff P D - Q N = 0, a polynomial of
 * degree <= r + j: we impose it at 2 (r + j + 1) points lambda_s = rho exp(i theta_s)
 * on the left half circle rho = 4 + 2r (the poles of the collocation R_c, 1 /
 * eig(B_c), lie in Re > 2 for every family: I - lambda B_c is well conditioned there),
 * divided by det(I - lambda B_c) D(lambda):
 *     lambda [D (v_0 g - x_r k + (v_B.x) g) + N k] . delta = N - x_r D,
 *     x = (I - lambda B_c)^{-1} (e + lambda d_c), g, k = (I - lambda B_c)^{-T} e_r, v_B,
 * and solve the 4 (r + j + 1) real equations in r unknowns by least squares (one-sided
 * Jacobi SVD): a singular value below 1e-10 of the largest means the approximant
 * leaves delta undetermined, a residual above 1e-8 that the node set cannot reach it;
 * both are errors.  The result is accurate to ~1e-13 in R for r <= 6 (checked against
 * 40-digit arithmetic while developing; tests/test_block.py checks R against the Pade
 * approximant and B, d against the paper's printed eqs 11, 14, 15, 16).
 *
 * Newton on the stacked system (LS section 4: Newton with tolerance 1e-3; the stage
 * solve of irk_newton.c, shared with implicit_rk.c).  Z_i =
 * y_i - y_k solve, for M y' = f with the constant mass matrix M (identity when NULL),
 *     (I_r (x) M) Z - h d (x) w_k - h (B (x) I) F(Z) = 0,   F_i = f(c_i, y_k + Z_i),
 * w_k = f(t_k, y_k) in the rows where M is not zero, 0 in its zero rows (algebraic
 * equations: the paper's lambda'_k, which enters nothing else, LS eq 5).  Simplified
 * Newton with the block matrix E = I_r (x) M - h B (x) J (size r n), J = df/dy(t_k, y_k)
 * from the problem's Jacobian (a DAE formulation's exact one), factored once per step
 * and kept, with J, while Newton converges fast (as implicit_rk.c: J is re-evaluated
 * after a failure or a rate theta > 1e-3); the shared monitor (newton.h) stops when
 * eta ||dZ|| <= newton_tol in the run's weighted RMS norm (index-2/3 components of a
 * DAE scaled as in RADAU5), at most 12 iterations; on an index-3 DAE it then goes on
 * until the positions are at round-off, as the paper's converged Newton (the position
 * constraint at 2.8e-15, LS Tables 4-5; irk_newton.c).  Starting values: the last step's
 * interpolant extrapolated.
 *
 * The split Newton system (issue 21; irk_newton.h, mb_irk_split).  E = I_r (x) M - h B (x) J
 * is a Kronecker form, so with B = T Lambda T^{-1} (computed once in init: eigenvalues of B,
 * the reciprocals of the zeros of the Pade denominator, from the real Schur form, vectors by
 * inverse iteration; cond(T) 5-210 for lstable_block, r = 2..6) each Newton iteration solves
 * one n x n system a block: a complex one per pair of eigenvalues, a real one for the real
 * eigenvalue of an odd r (r = 4: two complex n x n LUs instead of one 4n x 4n LU, ~8x fewer
 * flops, counted as two in nlu).  The iterates are the full system's up to rounding
 * (Newton's test stays on dZ); the stage Jacobians' attempt keeps the full system;
 * newton_full (Python newton="full") keeps it always.  When the problem offers a linsys
 * (the sparse DAE mode of dae_sparse.c, a M - J with real or complex a in two slots) block k
 * is its slot k: r <= 4; the stage Jacobians are not available there (a failed fresh J
 * halves h), and the estimate's filter M - h gamma0 J takes slot 1 (r = 2) or slot 0, whose
 * split LU is then refactored at the next step.  y_k+1 = y_k + Z_r.  A Newton failure is recoverable (h
 * halved when adaptive); with a fixed h the run stops with a message naming t, h and
 * the residual.
 *
 * Error estimate (not in the paper).  lstable_block: embedded, from the block's own node
 * values, filtered as RADAU5's (Hairer & Wanner II, IV.8, eq 8.19-8.20); astable_block:
 * the driver's step doubling with the order of the chosen coefficients (s->order).
 * The embedded estimate.  The stages of the RK form are exact for polynomials of degree
 * eta = r (stage order; mb_block_coeffs.stage_order), the step has order p.  With
 * p^ = min(r, p - 1) (so p^ < p and p^ <= eta) and gamma0 = 1 / r, weights e_i on the last
 * p^ nodes (i in S, e_i = 0 elsewhere) solve the p^ x p^ Vandermonde system
 *     gamma0 delta_{q1} + sum_{i in S} e_i c_i^q = 0,   q = 1..p^,
 * so that   est = h gamma0 y'(t) + sum_i e_i (y(t + c_i h) - y(t))
 *               = sum_q h^q / q! y^(q) (gamma0 q delta_{q1} + sum_i e_i c_i^q)
 * vanishes for polynomials of degree <= p^, and est = C h^(p^+1) y^(p^+1) / (p^+1)! +
 * O(h^(p^+2)) with C = sum_i e_i c_i^(p^+1) (mb_block_embedded; tests/test_lstable_error.py
 * checks the conditions and the slope).  On the step's values (Z_i = y_i - y_k, f0 =
 * f(t_k, y_k)) the estimate, filtered by the same kind of matrix as RADAU5's (which keeps
 * it bounded on stiff components, h gamma0 |lambda| >> 1), is
 *     err = (M - h gamma0 J)^{-1} (h gamma0 f0 + M sum_i e_i Z_i),
 * J the step's first Jacobian (an n x n LU more per step, counted in nlu); on the first
 * step and after a rejection, when ||err|| >= 1, RADAU5's refined estimate
 *     err = (M - h gamma0 J)^{-1} (h gamma0 f(t_k, y_k + err) + M sum_i e_i Z_i)
 * (it tends to 0, not to -y_k, as h lambda -> -inf).  The driver's controller uses the
 * order p^ of the estimate, and keeps h (and so the LU of the block matrix) for small
 * growth (MB_LU_REUSE), as for radau_iia.  Index-2/3 components of a DAE are scaled in
 * the norm by h, h^2 as RADAU5's (mb_norm, the same as radau_iia on that formulation).
 * A fixed-step run computes no estimate: it is bit for bit what it was.
 *
 * Dense output: the polynomial of degree r through y_k at theta = 0 and y_i at c_i.
 *
 * Workspace (layout(), for r up to MB_BLOCK_RMAX, N = MB_BLOCK_RMAX n): a state struct,
 * the stage solve's workspace (irk_newton.h, mb_irk_carve_split: J (MB_BLOCK_RMAX
 * Jacobians n x n), E (N x N), pivots, Z, F, dZ (N each), two vectors of size n; the
 * split's blocks ((MB_BLOCK_RMAX + 1) n x n), pivots (N), W (N) and a vector of size n),
 * the last interpolant Q (N), two more vectors of size n; for the embedded estimate an
 * n x n matrix, n pivots and two vectors of size n.  With the problem's linsys none of
 * the n x n or N x N arrays.
 */
#include "block_lstable.h"
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "carve.h"
#include "controller.h"
#include "irk_newton.h"
#include "status.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum { RMAX = MB_BLOCK_RMAX, NEWTON_MAXITER = 12, NS_MAX = 4 * (2 * RMAX + 1) };
static const double NEWTON_TOL_DEFAULT = 1e-3;

/* ------------------------------------------------------------ the coefficients */

int mb_block_default_pade(int variant, int r, int *k, int *j)
{
    if (r < 2 || r > RMAX)
        return MB_ERR_ILL_INPUT;
    *j = r;
    *k = variant == MB_BLOCK_ASTABLE ? r : r - 2;
    return MB_OK;
}

/* the m zeros of P_m in (-1, 1), ascending, and the Gauss-Legendre weights (w may be
 * NULL); Newton from Tricomi's initial guesses */
static void legendre_roots(int m, double *x, double *w)
{
    for (int i = 0; i < m; i++) {
        double z = cos(M_PI * (m - i - 0.25) / (m + 0.5)), dp = 1.0;
        for (int it = 0; it < 100; it++) {
            double p0 = 1.0, p1 = z;
            for (int l = 2; l <= m; l++) {
                double p2 = ((2 * l - 1) * z * p1 - (l - 1) * p0) / l;
                p0 = p1;
                p1 = p2;
            }
            if (m == 1) p0 = 1.0;
            dp = m * (z * p1 - p0) / (z * z - 1.0);
            double dz = p1 / dp;
            z -= dz;
            if (fabs(dz) <= 4 * DBL_EPSILON)
                break;
        }
        x[i] = z;
        if (w) w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
}

int mb_block_nodes_fill(int r, int nodes, double *c)
{
    if (r < 2 || r > RMAX)
        return MB_ERR_ILL_INPUT;
    int m = r - 1;
    switch (nodes) {
    case MB_BLOCK_EQUIDISTANT:
        for (int i = 0; i < r; i++) c[i] = (double)(i + 1) / r;
        break;
    case MB_BLOCK_CHEBYSHEV: /* eq 12, ascending */
        for (int i = 0; i < m; i++) c[i] = 0.5 * (1.0 + cos((2.0 * (m - i) - 1.0) * M_PI / (2.0 * m)));
        break;
    case MB_BLOCK_LEGENDRE: {
        double x[RMAX];
        legendre_roots(m, x, NULL);
        for (int i = 0; i < m; i++) c[i] = 0.5 * (1.0 + x[i]);
        break;
    }
    default:
        return MB_ERR_ILL_INPUT;
    }
    c[r - 1] = 1.0;
    return MB_OK;
}

static double factorial(int n)
{
    double f = 1.0;
    for (int i = 2; i <= n; i++) f *= i;
    return f;
}

/* coefficients of the numerator (k+1) and denominator (j+1) of the (k, j) Pade
 * approximant of e^z, in powers of z */
static void pade(int k, int j, double *N, double *D)
{
    for (int i = 0; i <= k; i++)
        N[i] = factorial(k + j - i) * factorial(k) / (factorial(k + j) * factorial(i) * factorial(k - i));
    for (int i = 0; i <= j; i++)
        D[i] = (i % 2 ? -1.0 : 1.0) * factorial(k + j - i) * factorial(j) /
               (factorial(k + j) * factorial(i) * factorial(j - i));
}

static double complex cpoly(int deg, const double *a, double complex z)
{
    double complex s = 0.0;
    for (int i = deg; i >= 0; i--) s = s * z + a[i];
    return s;
}

/* solve the complex n x n system A x = b (A row-major, destroyed) by Gaussian
 * elimination with partial pivoting; MB_ERR_LINALG when singular */
static int csolve(int n, double complex *A, double complex *b)
{
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (cabs(A[i * n + k]) > cabs(A[p * n + k])) p = i;
        if (cabs(A[p * n + k]) == 0.0) return MB_ERR_LINALG;
        if (p != k) {
            for (int c = 0; c < n; c++) {
                double complex tmp = A[k * n + c];
                A[k * n + c] = A[p * n + c];
                A[p * n + c] = tmp;
            }
            double complex tb = b[k];
            b[k] = b[p];
            b[p] = tb;
        }
        for (int i = k + 1; i < n; i++) {
            double complex f = A[i * n + k] / A[k * n + k];
            for (int c = k; c < n; c++) A[i * n + c] -= f * A[k * n + c];
            b[i] -= f * b[k];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double complex s = b[i];
        for (int c = i + 1; c < n; c++) s -= A[i * n + c] * b[c];
        b[i] = s / A[i * n + i];
    }
    return MB_OK;
}

/* least squares min |A x - b| for A (m x n, column-major, destroyed), n <= RMAX, by
 * one-sided Jacobi SVD; sv: the singular values (descending not guaranteed); *res: the
 * residual norm */
static void lstsq(int m, int n, double *A, const double *b, double *x, double *sv, double *res,
                  double *Asave)
{
    double V[RMAX * RMAX];
    memcpy(Asave, A, (size_t)(m * n) * sizeof(double));
    for (int i = 0; i < n * n; i++) V[i] = 0.0;
    for (int i = 0; i < n; i++) V[i * n + i] = 1.0;
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0.0;
        for (int p = 0; p < n - 1; p++)
            for (int q = p + 1; q < n; q++) {
                double a = 0, bb = 0, g = 0;
                for (int i = 0; i < m; i++) {
                    a += A[p * m + i] * A[p * m + i];
                    bb += A[q * m + i] * A[q * m + i];
                    g += A[p * m + i] * A[q * m + i];
                }
                if (fabs(g) <= 1e-15 * sqrt(a * bb) || g == 0.0) continue;
                off = fmax(off, fabs(g) / sqrt(a * bb));
                double zeta = (bb - a) / (2 * g);
                double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1 + zeta * zeta));
                double cs = 1 / sqrt(1 + t * t), sn = cs * t;
                for (int i = 0; i < m; i++) {
                    double u = A[p * m + i], v = A[q * m + i];
                    A[p * m + i] = cs * u - sn * v;
                    A[q * m + i] = sn * u + cs * v;
                }
                for (int i = 0; i < n; i++) {
                    double u = V[p * n + i], v = V[q * n + i];
                    V[p * n + i] = cs * u - sn * v;
                    V[q * n + i] = sn * u + cs * v;
                }
            }
        if (off <= 1e-15) break;
    }
    double smax = 0;
    for (int p = 0; p < n; p++) {
        double s = 0;
        for (int i = 0; i < m; i++) s += A[p * m + i] * A[p * m + i];
        sv[p] = sqrt(s);
        smax = fmax(smax, sv[p]);
    }
    for (int i = 0; i < n; i++) x[i] = 0.0;
    for (int p = 0; p < n; p++) {
        if (!(sv[p] > 1e-300 && sv[p] > 1e-14 * smax)) continue;
        double ub = 0;
        for (int i = 0; i < m; i++) ub += A[p * m + i] * b[i];
        ub /= sv[p] * sv[p];
        for (int i = 0; i < n; i++) x[i] += V[p * n + i] * ub;
    }
    double r2 = 0;
    for (int i = 0; i < m; i++) {
        double s = -b[i];
        for (int p = 0; p < n; p++) s += Asave[p * m + i] * x[p];
        r2 += s * s;
    }
    *res = sqrt(r2);
}

/* check B(p), C(eta), D(zeta) of the (r+1)-stage form: the order and stage order */
static void rk_orders(mb_block_coeffs *co)
{
    int r = co->r, s = r + 1;
    double A[(RMAX + 1) * (RMAX + 1)], tau[RMAX + 1], b[RMAX + 1];
    memset(A, 0, sizeof A);
    tau[0] = 0.0;
    for (int i = 0; i < r; i++) {
        tau[i + 1] = co->c[i];
        A[(i + 1) * s] = co->d[i];
        for (int l = 0; l < r; l++) A[(i + 1) * s + l + 1] = co->B[i * r + l];
    }
    for (int m = 0; m < s; m++) b[m] = A[r * s + m];
    const double tol = 1e-10;
    int pB = 0, eta = 0, zeta = 0;
    for (int q = 1; q <= 3 * s; q++) {
        double e = -1.0 / q;
        for (int m = 0; m < s; m++) e += b[m] * pow(tau[m], q - 1);
        if (fabs(e) > tol) break;
        pB = q;
    }
    for (int q = 1; q <= 2 * s; q++) {
        double e = 0;
        for (int i = 0; i < s; i++) {
            double v = -pow(tau[i], q) / q;
            for (int m = 0; m < s; m++) v += A[i * s + m] * pow(tau[m], q - 1);
            e = fmax(e, fabs(v));
        }
        if (e > tol) break;
        eta = q;
    }
    for (int q = 1; q <= 2 * s; q++) {
        double e = 0;
        for (int m = 0; m < s; m++) {
            double v = -b[m] * (1.0 - pow(tau[m], q)) / q;
            for (int i = 0; i < s; i++) v += b[i] * pow(tau[i], q - 1) * A[i * s + m];
            e = fmax(e, fabs(v));
        }
        if (e > tol) break;
        zeta = q;
    }
    int p = pB;
    if (eta + zeta + 1 < p) p = eta + zeta + 1;
    if (2 * eta + 2 < p) p = 2 * eta + 2;
    co->order = p;
    co->stage_order = eta;
}

/* the collocation weights Ac[i][m] = int_0^{c_i} l_m on tau = (0, c) (r x (r+1),
 * row-major) and the weights v of the r-th divided difference on tau */
static void collocation(const mb_block_coeffs *co, double *Ac, double *v)
{
    int r = co->r, s = r + 1, ng = 5;  /* 5-point Gauss-Legendre: exact for degree 9 >= r */
    double tau[RMAX + 1], xg[RMAX], wg[RMAX];
    tau[0] = 0.0;
    for (int i = 0; i < r; i++) tau[i + 1] = co->c[i];
    legendre_roots(ng, xg, wg);
    for (int m = 0; m < s; m++) {
        double p = 1.0;
        for (int l = 0; l < s; l++)
            if (l != m) p *= tau[m] - tau[l];
        v[m] = 1.0 / p;
    }
    for (int i = 0; i < r; i++)
        for (int m = 0; m < s; m++) {
            double acc = 0.0;
            for (int g = 0; g < ng; g++) {
                double t = 0.5 * co->c[i] * (1.0 + xg[g]), lm = 1.0;
                for (int l = 0; l < s; l++)
                    if (l != m) lm *= (t - tau[l]) / (tau[m] - tau[l]);
                acc += wg[g] * lm;
            }
            Ac[i * s + m] = 0.5 * co->c[i] * acc;
        }
}

/* The linear conditions on delta at the ns = 2 (r + j + 1) sample points (see the top of
 * the file): Ls (2 ns x r, column-major) delta = rhs.  MB_ERR_LINALG when the collocation
 * matrix is singular at a sample point. */
static int sample_conditions(const mb_block_coeffs *co, const double *Ac, const double *v,
                             double *Ls, double *rhs)
{
    int r = co->r, s = r + 1, k = co->k, j = co->j;
    double N[RMAX + 1], D[RMAX + 1];
    pade(k, j, N, D);
    int ns = 2 * (r + j + 1), mrows = 2 * ns;
    double rho = 4.0 + 2.0 * r;
    for (int q = 0; q < ns; q++) {
        double th = 0.5 * M_PI + M_PI * (q + 0.5) / ns;
        double complex lam = rho * cexp(I * th);
        double complex A0[RMAX * RMAX], At[RMAX * RMAX], x[RMAX], g[RMAX], kk[RMAX];
        for (int i = 0; i < r; i++)
            for (int l = 0; l < r; l++) {
                A0[i * r + l] = (i == l ? 1.0 : 0.0) - lam * Ac[i * s + l + 1];
                At[l * r + i] = A0[i * r + l];
            }
        for (int i = 0; i < r; i++) x[i] = 1.0 + lam * Ac[i * s];
        double complex T[RMAX * RMAX];  /* csolve reads its first r x r entries */
        size_t rr = (size_t)(r * r) * sizeof *T;
        memcpy(T, A0, rr);
        if (csolve(r, T, x) != MB_OK)
            return MB_ERR_LINALG;
        for (int i = 0; i < r; i++) {
            g[i] = i == r - 1 ? 1.0 : 0.0;
            kk[i] = v[i + 1];
        }
        memcpy(T, At, rr);
        csolve(r, T, g);
        memcpy(T, At, rr);
        csolve(r, T, kk);
        double complex Nz = cpoly(k, N, lam), Dz = cpoly(j, D, lam), vx = 0.0;
        for (int i = 0; i < r; i++) vx += v[i + 1] * x[i];
        double sc = 1.0 / fmax(cabs(Nz), cabs(Dz));
        for (int i = 0; i < r; i++) {
            double complex a = lam * (Dz * (v[0] * g[i] - x[r - 1] * kk[i] + vx * g[i]) + Nz * kk[i]);
            Ls[i * mrows + 2 * q] = creal(a) * sc;
            Ls[i * mrows + 2 * q + 1] = cimag(a) * sc;
        }
        double complex bz = Nz - x[r - 1] * Dz;
        rhs[2 * q] = creal(bz) * sc;
        rhs[2 * q + 1] = cimag(bz) * sc;
    }
    return MB_OK;
}

int mb_block_coefficients(int r, int nodes, int k, int j, mb_block_coeffs *co, char *msg,
                          size_t msg_len)
{
#define BAD(...) do { if (msg && msg_len) snprintf(msg, msg_len, __VA_ARGS__); return MB_ERR_ILL_INPUT; } while (0)
    memset(co, 0, sizeof *co);
    if (r < 2 || r > RMAX)
        BAD("r must be an integer from 2 to %d, got %d.", RMAX, r);
    if (nodes != MB_BLOCK_EQUIDISTANT && nodes != MB_BLOCK_CHEBYSHEV && nodes != MB_BLOCK_LEGENDRE)
        BAD("nodes: unknown node family %d.", nodes);
    if (k < 0 || j < 1 || k > r || j > r)
        BAD("pade: the (k, j) Pade approximant needs 0 <= k <= r and 1 <= j <= r (R(lambda) "
            "of %d nodes has degree %d), got (%d, %d).", r, r, k, j);
    if (k + j < r)
        BAD("pade: (%d, %d) has order %d, below the order r = %d the nodes already give R(lambda).",
            k, j, k + j, r);
    co->r = r;
    co->nodes = nodes;
    co->k = k;
    co->j = j;
    mb_block_nodes_fill(r, nodes, co->c);

    /* collocation weights on tau = (0, c) and the divided-difference weights v */
    double Ac[RMAX * (RMAX + 1)], v[RMAX + 1];
    int s = r + 1;
    collocation(co, Ac, v);
    /* the linear conditions on delta at the sample points, solved by least squares */
    int mrows = 4 * (r + j + 1);
    double Ls[NS_MAX * 2 * RMAX], rhs[NS_MAX * 2], Lsave[NS_MAX * 2 * RMAX];
    if (sample_conditions(co, Ac, v, Ls, rhs) != MB_OK)
        BAD("nodes: the collocation matrix is singular at a sample point.");
    double delta[RMAX], sv[RMAX], res;
    lstsq(mrows, r, Ls, rhs, delta, sv, &res, Lsave);
    double smax = 0, smin = INFINITY, bn = 0;
    for (int i = 0; i < r; i++) {
        smax = fmax(smax, sv[i]);
        smin = fmin(smin, sv[i]);
    }
    for (int i = 0; i < mrows; i++) bn += rhs[i] * rhs[i];
    if (!(smin > 1e-10 * smax))
        BAD("pade: the (%d, %d) Pade approximant does not determine the constants mu of eq 8 "
            "for %d nodes (a family of B, d has that R(lambda)).", k, j, r);
    if (!(res <= 1e-8 * fmax(1.0, sqrt(bn))))
        BAD("pade: no choice of the constants mu of eq 8 gives R(lambda) = the (%d, %d) Pade "
            "approximant for %d nodes of this family.", k, j, r);
    for (int i = 0; i < r; i++) {
        co->mu[i] = pow(co->c[i], r + 1) + (r + 1) * delta[i];
        co->d[i] = Ac[i * s] + delta[i] * v[0];
        for (int l = 0; l < r; l++) co->B[i * r + l] = Ac[i * s + l + 1] + delta[i] * v[l + 1];
    }
    rk_orders(co);
    return MB_OK;
#undef BAD
}

int mb_block_stability(const mb_block_coeffs *co, double zr, double zi, double *Rr, double *Ri)
{
    int r = co->r;
    double complex z = zr + I * zi, A[RMAX * RMAX], y[RMAX];
    for (int i = 0; i < r; i++) {
        for (int l = 0; l < r; l++) A[i * r + l] = (i == l ? 1.0 : 0.0) - z * co->B[i * r + l];
        y[i] = 1.0 + z * co->d[i];
    }
    int rc = csolve(r, A, y);
    if (rc != MB_OK) return rc;
    *Rr = creal(y[r - 1]);
    *Ri = cimag(y[r - 1]);
    return MB_OK;
}

int mb_block_resolve(int variant, const mb_block_options *opt, mb_block_coeffs *co,
                     double *newton_tol, char *msg, size_t msg_len)
{
    int r = opt && opt->r > 0 ? opt->r : 4;
    int nodes = opt ? opt->nodes : MB_BLOCK_EQUIDISTANT;
    int k, j;
    if (mb_block_default_pade(variant, r, &k, &j) != MB_OK) {
        if (msg && msg_len)
            snprintf(msg, msg_len, "r must be an integer from 2 to %d, got %d.", RMAX, r);
        return MB_ERR_ILL_INPUT;
    }
    if (opt && opt->pade_j > 0) {
        k = opt->pade_k;
        j = opt->pade_j;
        int ok = variant == MB_BLOCK_ASTABLE ? k == j : (k < j && j <= k + 2);
        if (!ok) {
            if (msg && msg_len)
                snprintf(msg, msg_len, variant == MB_BLOCK_ASTABLE
                         ? "pade: astable_block matches a diagonal Pade approximant (k, k), got (%d, %d)."
                         : "pade: lstable_block matches an L-stable Pade approximant (k, j) with "
                           "k < j <= k + 2 (Ehle), got (%d, %d).", k, j);
            return MB_ERR_ILL_INPUT;
        }
    }
    if (newton_tol) {
        double tol = opt && opt->newton_tol != 0.0 ? opt->newton_tol : NEWTON_TOL_DEFAULT;
        if (!(tol > 0.0) || !isfinite(tol)) {
            if (msg && msg_len)
                snprintf(msg, msg_len, "newton_tol must be positive and finite, got %g.", tol);
            return MB_ERR_ILL_INPUT;
        }
        *newton_tol = tol;
    }
    return mb_block_coefficients(r, nodes, k, j, co, msg, msg_len);
}

/* ------------------------------------------------------------ the method */

typedef struct block_data {
    int variant;
    int embedded;          /* 1: the embedded error estimate (else: step doubling) */
} block_data;

typedef struct block_state {
    mb_block_coeffs co;
    double P[RMAX * RMAX]; /* interpolant: C_k = sum_i P[i r + (k-1)] Z_i */
    mb_irk_state ns;       /* Newton, Jacobian and LU reuse, interpolant (irk_newton.h) */
    mb_irk_split sp;       /* B = T Lambda T^{-1} (the split Newton system) */
    mb_irk_split_work spw; /* its state and arrays (the arrays carved by layout()) */
    double e[RMAX];        /* embedded weights on Z_1..Z_r (zero outside S) */
    double gamma0;         /* the weight of h f(t_k, y_k) in the estimate */
    int p_hat;             /* order of the estimate */
    int first, pending;    /* no step accepted yet; an attempt waits for accept() */
} block_state;

typedef struct block_work {
    block_state *st;
    mb_irk_work sw;        /* the stage solve's workspace, for up to RMAX stages */
    double *Q;             /* the last interpolant: theta^1 .. theta^r (N) */
    double *w;             /* f(t_k, y_k) in the rows where M is not zero, else 0 */
    double *mrow;          /* 1 in the rows where M is not zero, else 0 */
    double *Ee;            /* n x n: M - h gamma0 J and its LU (the estimate's filter; none
                              with the problem's linsys) */
    int *ipe;              /* n: its pivots */
    double *ze, *ve;       /* n each: sum_i e_i Z_i, and scratch */
} block_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it.  With the
 * problem's linsys no n x n array exists. */
static size_t layout(mb_carver *c, const mb_problem *p, block_work *w)
{
    ptrdiff_t n = p->n;
    size_t dn = p->linsys ? 0 : (size_t)n;
    w->st = mb_carve_bytes(c, sizeof *w->st);
    mb_irk_carve_split(c, RMAX, n, !p->linsys, &w->sw, w->st ? &w->st->spw : NULL);
    w->Q = mb_carve(c, (size_t)RMAX * (size_t)n);
    w->w = mb_carve(c, (size_t)n);
    w->mrow = mb_carve(c, (size_t)n);
    w->Ee = mb_carve(c, dn * dn);
    w->ipe = mb_carve_int(c, dn);
    w->ze = mb_carve(c, (size_t)n);
    w->ve = mb_carve(c, (size_t)n);
    w->sw.Q = w->Q;
    w->sw.w = w->w;
    return c->off;
}

static size_t block_work_size(const mb_problem *p, const void *data)
{
    (void)data;
    block_work w;
    return layout(&(mb_carver){NULL, 0}, p, &w);
}

static block_work workspace(mb_stepper *s)
{
    block_work w;
    layout(&(mb_carver){s->work, 0}, s->p, &w);
    return w;
}

/* the stage system (LS eq 5): B and the explicit term d (x) w, F by mb_rhs_iterate, at
 * least two Newton iterations, a request for a new J outlives a converged step */
static mb_irk_system block_system(const block_state *st)
{
    const mb_block_coeffs *co = &st->co;
    mb_irk_system sys = {.s = co->r, .A = co->B, .c = co->c, .d = co->d, .degree = co->r,
                         .iterate_rhs = 1, .min_iter = 2, .keep_need = 1};
    return sys;
}

/* The embedded weights of the error estimate (see the top of the file): p^ = min(r, p - 1),
 * gamma0 = 1 / r, e_i on the last p^ nodes from the Vandermonde system
 * sum_{i in S} e_i c_i^q = -gamma0 delta_{q1}, q = 1..p^.  MB_OK or MB_ERR_LINALG. */
static int block_embedded(const mb_block_coeffs *co, double *e, double *gamma0, int *p_hat)
{
    int r = co->r, m = co->order - 1 < r ? co->order - 1 : r, ip[RMAX];
    double V[RMAX * RMAX], x[RMAX];
    if (m < 1) m = 1;
    *p_hat = m;
    *gamma0 = 1.0 / r;
    for (int q = 0; q < m; q++) {
        x[q] = q == 0 ? -*gamma0 : 0.0;
        for (int i = 0; i < m; i++)
            V[i * m + q] = pow(co->c[r - m + i], q + 1);  /* column-major: row q, column i */
    }
    if (mb_lu_factor(m, V, m, ip) != MB_OK || mb_lu_solve(m, V, m, ip, x, 1) != MB_OK)
        return MB_ERR_LINALG;
    for (int i = 0; i < r; i++) e[i] = i < r - m ? 0.0 : x[i - (r - m)];
    return MB_OK;
}

/* The split Newton system (irk_newton.h): B = T Lambda T^{-1} unless the options ask
 * for the full one.  With the problem's linsys (no dense matrix: the split is the only
 * way) at most two blocks, its two slots, and r <= 4 (r = 2: one complex pair, 3: a
 * real eigenvalue and a pair, 4: two pairs).  MB_OK or a failure with a message. */
static int block_split_init(mb_stepper *s, const block_work *w)
{
    block_state *st = w->st;
    const mb_block_options *opt = s->method_options;
    int full = opt && opt->newton_full, ok = 0;
    st->spw.sp = NULL;
    if (!full)
        ok = mb_irk_split_setup(st->co.r, st->co.B, &st->sp) == MB_OK;
    if (ok)
        st->spw.sp = &st->sp;
    if (!s->p->linsys)
        return MB_OK;
    if (!ok || st->sp.nb > 2)
        return mb_fail(s, MB_ERR_NOT_SUPPORTED, "%s: the sparse linear algebra of this "
                       "problem solves through the Newton system split by the eigenvalues of "
                       "B into at most two n x n systems: r <= 4 and newton = 'split' (got r = "
                       "%d%s).", s->m->name, st->co.r, full ? ", newton = 'full'" : "");
    return MB_OK;
}

static int block_init(mb_stepper *s)
{
    const block_data *bd = s->m->data;
    block_work w = workspace(s);
    block_state *st = w.st;
    memset(st, 0, sizeof *st);
    double tol;
    char msg[256];
    if (mb_block_resolve(bd->variant, s->method_options, &st->co, &tol, msg, sizeof msg) != MB_OK)
        return mb_fail(s, MB_ERR_ILL_INPUT, "%s: %s", s->m->name, msg);
    mb_newton_init(&st->ns.nw, tol, NEWTON_MAXITER);
    int r = st->co.r;
    if (st->co.order < s->order)
        s->order = st->co.order;
    s->error_order = s->order;  /* step doubling estimates the error of order s->order */
    st->first = 1;
    if (bd->embedded) {
        if (block_embedded(&st->co, st->e, &st->gamma0, &st->p_hat) != MB_OK)
            return mb_fail(s, MB_ERR_LINALG, "%s: the node set is degenerate.", s->m->name);
        s->error_order = st->p_hat;
    }
    /* interpolant through the nodes: P = V^{-1}, V[i][k] = c_i^(k+1) */
    double V[RMAX * RMAX];
    int ip[RMAX];
    for (int i = 0; i < r; i++)
        for (int k = 0; k < r; k++) V[k * r + i] = pow(st->co.c[i], k + 1);  /* column-major */
    for (int i = 0; i < r * r; i++) st->P[i] = 0.0;
    for (int i = 0; i < r; i++) st->P[i * r + i] = 1.0;
    if (mb_lu_factor(r, V, r, ip) != MB_OK || mb_lu_solve(r, V, r, ip, st->P, r) != MB_OK)
        return mb_fail(s, MB_ERR_LINALG, "%s: the node set is degenerate.", s->m->name);
    /* column i of P (V^{-1} e_i) holds the monomial coefficients of the i-th Lagrange-like
     * basis: C_k = sum_i P[i r + (k-1)] Z_i */
    const double *M = s->p->mass, *Md = s->p->mass_diag;
    ptrdiff_t n = s->n;
    for (ptrdiff_t i = 0; i < n; i++) {
        int nz = !M && !Md;
        for (ptrdiff_t c = 0; M && c < n && !nz; c++) nz = M[c * n + i] != 0.0;
        w.mrow[i] = nz || (Md && Md[i] != 0.0) ? 1.0 : 0.0;
    }
    return block_split_init(s, &w);
}

/* err = (M - h gamma0 J)^{-1} (h gamma0 f(t, y) + M sum_i e_i Z_i), refined on the first
 * step and after a rejection (see the top of the file).  MB_OK, MB_RECOVERABLE (a
 * singular filter: h halved) or the code of a failed evaluation. */
/* the estimate through the problem's linsys: (a M - J) err = f0 + M ze / (h gamma0),
 * a = 1 / (h gamma0), in slot 1 when the split holds one block, else in slot 0 (the
 * split's LU is then due again for the next step) */
static int block_estimate_linsys(mb_stepper *s, const block_work *w, double t, double h,
                                 const double *y, const double *y_new, double *err, int reject)
{
    block_state *st = w->st;
    ptrdiff_t n = s->n;
    double hg = h * st->gamma0;
    int slot = st->sp.nb < 2 ? 1 : 0, rc;
    if (slot == 0) {
        st->ns.lu_ok = 0;
        st->spw.active = 0;
    }
    s->stats->nlu++;
    if ((rc = mb_linsys_factor(s, slot, 1.0 / hg, 0.0)) != MB_OK) {
        if (rc != MB_ERR_LINALG)
            return rc;
        s->h_fail_factor = 0.5;
        return MB_RECOVERABLE;
    }
    memset(w->ze, 0, (size_t)n * sizeof(double));
    for (int i = 0; i < st->co.r; i++) {
        const double *Zi = w->sw.Z + (ptrdiff_t)i * n;
        for (ptrdiff_t l = 0; st->e[i] != 0.0 && l < n; l++) w->ze[l] += st->e[i] * Zi[l] / hg;
    }
    mb_stepper_mass_apply(s, w->ze, w->ve);  /* M sum_i e_i Z_i / (h gamma0) */
    for (ptrdiff_t l = 0; l < n; l++) err[l] = s->f0[l] + w->ve[l];
    rc = mb_linsys_solve(s, slot, err, NULL);
    if (rc != MB_OK || !((st->first || reject) && mb_norm(s, err, y, y_new) >= 1.0))
        return rc;
    for (ptrdiff_t l = 0; l < n; l++) w->ze[l] = y[l] + err[l];
    if ((rc = mb_rhs(s, t, w->ze, err)) != MB_OK)
        return rc;
    for (ptrdiff_t l = 0; l < n; l++) err[l] += w->ve[l];
    return mb_linsys_solve(s, slot, err, NULL);
}

static int block_estimate(mb_stepper *s, const block_work *w, double t, double h,
                          const double *y, const double *y_new, double *err, int reject)
{
    const block_state *st = w->st;
    if (s->p->linsys)
        return block_estimate_linsys(s, w, t, h, y, y_new, err, reject);
    const double *M = s->p->mass, *J = w->sw.J;
    ptrdiff_t n = s->n;
    double hg = h * st->gamma0;
    for (ptrdiff_t c = 0; c < n; c++)
        for (ptrdiff_t i = 0; i < n; i++)
            w->Ee[c * n + i] = (M ? M[c * n + i] : (double)(i == c)) - hg * J[c * n + i];
    s->stats->nlu++;
    if (mb_lu_factor(n, w->Ee, n, w->ipe) != MB_OK) {
        s->h_fail_factor = 0.5;
        return MB_RECOVERABLE;
    }
    memset(w->ze, 0, (size_t)n * sizeof(double));
    for (int i = 0; i < st->co.r; i++) {
        const double *Zi = w->sw.Z + (ptrdiff_t)i * n;
        for (ptrdiff_t l = 0; st->e[i] != 0.0 && l < n; l++) w->ze[l] += st->e[i] * Zi[l];
    }
    mb_mass_apply(n, M, w->ze, w->ve);  /* M sum_i e_i Z_i */
    for (ptrdiff_t l = 0; l < n; l++) err[l] = hg * s->f0[l] + w->ve[l];
    int rc = mb_lu_solve(n, w->Ee, n, w->ipe, err, 1);
    if (rc != MB_OK || !((st->first || reject) && mb_norm(s, err, y, y_new) >= 1.0))
        return rc;
    for (ptrdiff_t l = 0; l < n; l++) w->ze[l] = y[l] + err[l];
    if ((rc = mb_rhs(s, t, w->ze, err)) != MB_OK)
        return rc;
    for (ptrdiff_t l = 0; l < n; l++) err[l] = hg * err[l] + w->ve[l];
    return mb_lu_solve(n, w->Ee, n, w->ipe, err, 1);
}

static int block_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                      double *err)
{
    block_work w = workspace(s);
    block_state *st = w.st;
    const block_data *bd = s->m->data;
    mb_irk_system sys = block_system(st);
    int r = st->co.r, why, embedded = bd->embedded && s->err_wanted;
    int reject = embedded && st->pending;  /* the last attempt was not accepted */
    ptrdiff_t n = s->n;
    double gmax;
    if (embedded) {
        st->pending = 1;
        if (reject && !st->ns.jr.fresh)
            st->ns.jr.need = 1;  /* as RADAU5: a new J after a rejection */
    }
    for (ptrdiff_t l = 0; l < n; l++) w.w[l] = w.mrow[l] != 0.0 ? s->f0[l] : 0.0;
    /* attempts (irk_newton.h): the one J (kept across steps while Newton converges fast),
     * a fresh one at (t, y), then the stage Jacobians at the starting values (or the last
     * iterate when there are none): the block Jacobian of the stacked system */
    int rc = mb_irk_solve(s, &sys, &st->ns, &w.sw, t, h, y, &why, &gmax);
    if (rc == MB_RECOVERABLE && why == MB_IRK_SINGULAR && !s->err_wanted)
        mb_fail(s, MB_ERR_LINALG, "%s: the iteration matrix I (x) M - h (B (x) I) "
                "diag(J) is singular at t = %.17g (h = %g).", s->m->name, t, h);
    if (rc == MB_RECOVERABLE && why == MB_IRK_NO_CONV && !s->err_wanted)
        mb_fail(s, MB_ERR_CONV, "%s: Newton did not converge at t = %.12g (h = %g): max "
                "|residual| %.3e, last correction %.3e (weighted norm, tolerance %.1e) after "
                "%d iterations with the stage Jacobians.", s->m->name, t, h, gmax,
                st->ns.nw.dz_prev, st->ns.nw.kappa, st->ns.nw.iter);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t l = 0; l < n; l++) y_new[l] = y[l] + w.sw.Z[(ptrdiff_t)(r - 1) * n + l];
    return embedded ? block_estimate(s, &w, t, h, y, y_new, err, reject) : MB_OK;
}

/* Q_k (k = 1..r) of u(theta) = y + sum_k theta^k Q_k through the stages */
static void interp_coeffs(const block_state *st, ptrdiff_t n, const double *Z, double *Q)
{
    int r = st->co.r;
    for (int k = 0; k < r; k++) {
        double *q = Q + (ptrdiff_t)k * n;
        memset(q, 0, (size_t)n * sizeof(double));
        for (int i = 0; i < r; i++) {
            double p = st->P[i * r + k];
            for (ptrdiff_t l = 0; l < n; l++) q[l] += p * Z[(ptrdiff_t)i * n + l];
        }
    }
}

static int block_accept(mb_stepper *s, double t_new, const double *y_new)
{
    (void)y_new;
    block_work w = workspace(s);
    w.st->pending = 0;
    w.st->first = 0;
    if (mb_irk_accepted(s, &w.st->ns, t_new))
        interp_coeffs(w.st, s->n, w.sw.Z, w.Q);
    return MB_OK;
}

static int block_dense(mb_stepper *s, double *C)
{
    block_work w = workspace(s);
    ptrdiff_t n = s->n;
    memcpy(C, s->y_last, (size_t)n * sizeof(double));
    interp_coeffs(w.st, n, w.sw.Z, C + n);
    return MB_OK;
}

static int block_dense_degree(const mb_stepper *s)
{
    return ((const block_state *)(const void *)s->work)->co.r;
}

static int block_amplification(const mb_method *m, double zr, double zi, double *Rr, double *Ri)
{
    const block_data *bd = m->data;
    mb_block_coeffs co;
    int rc = mb_block_resolve(bd->variant, NULL, &co, NULL, NULL, 0);
    if (rc != MB_OK) return rc;
    return mb_block_stability(&co, zr, zi, Rr, Ri);
}

static const block_data lstable_data = {MB_BLOCK_LSTABLE, 1}, astable_data = {MB_BLOCK_ASTABLE, 0};

/* order: the largest over the options (r = 6, Legendre nodes: 10); a run uses the order of
 * its coefficients (mb_block_coeffs.order) */
#define BLOCK_METHOD(var, nm, dat, fl, ctl)                                               \
    const mb_method var = {                                                                  \
        .name = nm,                                                                          \
        .order = 10,                                                                         \
        .error_order = 0,                                                                    \
        .flags = MB_NEEDS_JAC | MB_USES_F0 | MB_IMPLICIT | MB_MASS | MB_DAE | (fl),          \
        .controller = (ctl),                                                                 \
        .max_dense_degree = RMAX,                                                            \
        .data = &dat,                                                                        \
        .work_size = block_work_size,                                                        \
        .init = block_init,                                                                  \
        .step = block_step,                                                                  \
        .accept = block_accept,                                                              \
        .dense = block_dense,                                                                \
        .dense_degree = block_dense_degree,                                                  \
        .amplification = block_amplification}

/* lstable_block: the embedded estimate (MB_EMBEDDED), h kept for small growth so that the
 * LU of the block matrix is reused (MB_LU_REUSE), RADAU5's predictive controller (on the
 * manipulator 5-20 % faster than PI at matched error, bench_ls.py); astable_block: step
 * doubling and the driver's default controller, as before */
BLOCK_METHOD(mb_method_lstable_block, "lstable_block", lstable_data,
             MB_EMBEDDED | MB_LU_REUSE | MB_LINSYS | MB_LINSYS_MASS, MB_CONTROLLER_PREDICTIVE);
BLOCK_METHOD(mb_method_astable_block, "astable_block", astable_data, 0u, MB_CONTROLLER_DEFAULT);
