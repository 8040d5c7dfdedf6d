/* Fixed-step implicit Runge-Kutta kernel over the tableaus of tableaus_irk.c
 * (Radau IA, Radau IIA, Lobatto IIIC; s = 2, 3, 4), and the helpers the family
 * shares with radau5.c (stability function, dense output).
 *
 * Step (the stage solve of irk_newton.c, shared with the block methods).  The stage
 * increments Z = (Z_1, ..., Z_s) solve
 *     G(Z) = h (A (x) I) F(Z) - (I (x) M) Z = 0,  F_i = f(t + c_i h, y + Z_i),
 * by simplified Newton with the frozen real matrix E = I_s (x) M - h A (x) J of
 * size s n (one LU, mb_lu_factor):  E dZ = G(Z_k), Z_{k+1} = Z_k + dZ, from the
 * last step's dense polynomial extrapolated to t + c_i h (Z_0 = 0 on the first
 * step), under the shared monitor (newton.h), at most 15 iterations (a fixed
 * step cannot be shortened, so the iteration gets more room than RADAU5's 7),
 * with tolerance
 * kappa = max(10 eps / rtol, min(0.03, sqrt(rtol))) in the run's weighted RMS
 * norm: a fixed-step run iterates to the rtol/atol it is given.  Then
 * y_new = y + sum_i d_i Z_i (d^T = b^T A^{-1}; = Z_s for the stiffly accurate
 * families).  M is the problem's mass matrix (identity when NULL).
 *
 * Jacobian and LU reuse.  J = df/dy(t, y) is kept across steps while Newton
 * contracts fast (rate theta <= 1e-3 when more than two iterations were needed,
 * as RADAU5 and SciPy's Radau) and the LU while h and J are
 * unchanged (a fixed-step run factors once per Jacobian).  When Newton fails with
 * an old J, the step re-evaluates J at (t, y) and solves again; when it fails
 * with a fresh J, it solves once more with the stage Jacobians J_i = df/dy(t + c_i h,
 * y + Z_i) at the starting values (the exact block matrix I_s (x) M - h (A (x) I)
 * diag(J_i) of the stacked system, newton.h; needed where J changes much within a step,
 * e.g. the multipliers of a mechanism's DAE at the LS paper's h = 0.01) and keeps doing
 * so for the next 20 steps; a failure then is recoverable.
 *
 * DAEs of index 2 and 3 (MB_DAE): the Newton norm scales their index-2/3 components
 * by h, h^2 (mb_norm, as RADAU5).  On index 3 that test alone lets the velocities'
 * Newton error grow like 1/h, so the stage solve goes on to round-off in the positions
 * and fails when it cannot get there (irk_newton.c: "Newton to round-off"); a failed
 * stage solve ends a fixed-step run with a message naming Newton, t and the residual.
 *
 * The methods have no error estimate and run with a fixed h only (MB_FIXED_ONLY).
 * Dense output: the polynomial through y, the interior stage values and y_new
 * (tableaus_irk.h), the collocation polynomial for Radau IIA.
 *
 * Workspace (layout()): the stage solve's state and workspace (irk_newton.h: J (s
 * Jacobians n x n), E (N x N, N = s n), its pivots, Z, F, dZ (N each), two vectors of
 * size n), the last dense polynomial Q (N + n).
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "carve.h"
#include "implicit_rk.h"
#include "irk_newton.h"
#include "status.h"

enum { IRK_SMAX = 8, NEWTON_MAXITER = 15 };

typedef struct irk_work {
    mb_irk_state *st; /* Newton, Jacobian and LU reuse, interpolant (irk_newton.h) */
    mb_irk_work sw;   /* the stage solve's workspace */
    double *Q;        /* the last accepted step's dense polynomial, theta^0 .. theta^m */
} irk_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, const mb_irk_tableau *T, ptrdiff_t n, irk_work *w)
{
    w->st = mb_carve_bytes(c, sizeof *w->st);
    mb_irk_carve(c, T->s, n, &w->sw);
    w->Q = mb_carve(c, (size_t)(T->s + 1) * (size_t)n);
    w->sw.Q = w->Q ? w->Q + n : NULL;
    w->sw.w = NULL;
    return c->off;
}

static size_t irk_work_size(const mb_problem *p, const void *data)
{
    irk_work w;
    return layout(&(mb_carver){NULL, 0}, data, p->n, &w);
}

static irk_work workspace(mb_stepper *s)
{
    irk_work w;
    layout(&(mb_carver){s->work, 0}, s->m->data, s->n, &w);
    return w;
}

/* the stage system: y' = f alone (no explicit term), F by mb_rhs */
static mb_irk_system irk_system(const mb_irk_tableau *T)
{
    mb_irk_system sys = {.s = T->s, .A = T->A, .c = T->c, .d = NULL, .degree = T->m,
                         .iterate_rhs = 0, .min_iter = 1, .keep_need = 0};
    return sys;
}

/* Newton tolerance relative to the run's tolerance (as SciPy's Radau) */
static double newton_kappa(double rtol)
{
    return fmax(10.0 * DBL_EPSILON / rtol, fmin(0.03, sqrt(rtol)));
}

static int irk_init(mb_stepper *s)
{
    irk_work w = workspace(s);
    memset(w.st, 0, sizeof *w.st);
    mb_newton_init(&w.st->nw, newton_kappa(s->rtol), NEWTON_MAXITER);
    return MB_OK;
}

static int irk_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                    double *err)
{
    (void)err;
    const mb_irk_tableau *T = s->m->data;
    irk_work w = workspace(s);
    mb_irk_system sys = irk_system(T);
    ptrdiff_t n = s->n;
    int why;
    double gmax;
    int rc = mb_irk_solve(s, &sys, w.st, &w.sw, t, h, y, &why, &gmax);
    /* the run keeps the first message: the driver's generic one ("A fixed step ...
     * failed") would not say why */
    if (rc == MB_RECOVERABLE && why == MB_IRK_SINGULAR)
        mb_fail(s, MB_ERR_LINALG, "%s: the iteration matrix I (x) M - h (A (x) I) J is "
                "singular at t = %.17g (h = %g).", s->m->name, t, h);
    if (rc == MB_RECOVERABLE && why == MB_IRK_NO_CONV)
        mb_fail(s, MB_ERR_CONV, "%s: Newton did not converge at t = %.12g (h = %g): max "
                "|residual| %.3e, last correction %.3e (weighted norm, tolerance %.1e) after "
                "%d iterations with the stage Jacobians.", s->m->name, t, h, gmax,
                w.st->nw.dz_prev, w.st->nw.kappa, w.st->nw.iter);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0;
        for (int i = 0; i < T->s; i++)
            acc += T->d[i] * w.sw.Z[(ptrdiff_t)i * n + l];
        y_new[l] = y[l] + acc;
    }
    return MB_OK;
}

static int irk_accept(mb_stepper *s, double t_new, const double *y_new)
{
    const mb_irk_tableau *T = s->m->data;
    irk_work w = workspace(s);
    if (mb_irk_accepted(s, w.st, t_new))  /* else a terminal event cut the step */
        mb_irk_dense_coeffs(T, s->n, s->y_last, y_new, w.sw.Z, w.Q);
    return MB_OK;
}

void mb_irk_dense_coeffs(const mb_irk_tableau *T, ptrdiff_t n, const double *y,
                         const double *y_new, const double *Z, double *C)
{
    int m = T->m;
    memcpy(C, y, (size_t)n * sizeof(double));
    for (ptrdiff_t l = 0; l < n; l++) {
        double tot = 0.0;
        for (int k = 1; k <= m; k++) {
            double acc = 0.0;
            for (int j = 0; j < m; j++) {
                int i = T->dense_stage[j];
                double v = i < 0 ? y_new[l] - y[l] : Z[(ptrdiff_t)i * n + l];
                acc += T->P[j * m + (k - 1)] * v;
            }
            if (k == m)
                acc = (y_new[l] - y[l]) - tot;  /* u(1) = y_new up to rounding */
            C[(ptrdiff_t)k * n + l] = acc;
            tot += acc;
        }
    }
}

static int irk_dense(mb_stepper *s, double *C)
{
    const mb_irk_tableau *T = s->m->data;
    irk_work w = workspace(s);
    /* y_new of the last step, recomputed from Z (the driver keeps its own copy) */
    ptrdiff_t n = s->n;
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0;
        for (int i = 0; i < T->s; i++)
            acc += T->d[i] * w.sw.Z[(ptrdiff_t)i * n + l];
        w.sw.yt[l] = s->y_last[l] + acc;
    }
    mb_irk_dense_coeffs(T, n, s->y_last, w.sw.yt, w.sw.Z, C);
    return MB_OK;
}

static int irk_dense_degree(const mb_stepper *s)
{
    const mb_irk_tableau *T = s->m->data;
    return T->m;
}

int mb_irk_stability(const mb_irk_tableau *T, double zr, double zi, double *Rr, double *Ri)
{
    int ns = T->s;
    double complex z = zr + I * zi, K[IRK_SMAX][IRK_SMAX + 1], x[IRK_SMAX];
    if (ns > IRK_SMAX)
        return MB_ERR_ILL_INPUT;
    /* (I - z A) x = 1 */
    for (int i = 0; i < ns; i++) {
        for (int j = 0; j < ns; j++)
            K[i][j] = (i == j ? 1.0 : 0.0) - z * T->A[i * ns + j];
        K[i][ns] = 1.0;
    }
    for (int k = 0; k < ns; k++) {
        int p = k;
        for (int i = k + 1; i < ns; i++)
            if (cabs(K[i][k]) > cabs(K[p][k]))
                p = i;
        if (cabs(K[p][k]) == 0.0)
            return MB_ERR_LINALG;
        if (p != k)
            for (int j = 0; j <= ns; j++) {
                double complex tmp = K[k][j];
                K[k][j] = K[p][j];
                K[p][j] = tmp;
            }
        for (int i = k + 1; i < ns; i++) {
            double complex f = K[i][k] / K[k][k];
            for (int j = k; j <= ns; j++)
                K[i][j] -= f * K[k][j];
        }
    }
    for (int i = ns - 1; i >= 0; i--) {
        double complex acc = K[i][ns];
        for (int j = i + 1; j < ns; j++)
            acc -= K[i][j] * x[j];
        x[i] = acc / K[i][i];
    }
    double complex R = 0.0;
    for (int i = 0; i < ns; i++)
        R += T->b[i] * x[i];
    R = 1.0 + z * R;
    *Rr = creal(R);
    *Ri = cimag(R);
    return MB_OK;
}

static int irk_amplification(const mb_method *m, double zr, double zi, double *Rr, double *Ri)
{
    return mb_irk_stability(m->data, zr, zi, Rr, Ri);
}

/* C initializers cannot read the tableau: name and order are repeated here and
 * tests/c/test_implicit_rk.c checks they equal the tableau's. */
#define IRK_FIXED(var, T, nm, p)                                                       \
    const mb_method var = {                                                              \
        .name = nm,                                                                      \
        .order = p,                                                                      \
        .error_order = 0,                                                                \
        .flags = MB_NEEDS_JAC | MB_USES_F0 | MB_IMPLICIT | MB_FIXED_ONLY | MB_MASS | MB_DAE, \
        .max_dense_degree = 4,                                                           \
        .data = &T,                                                                      \
        .work_size = irk_work_size,                                                      \
        .init = irk_init,                                                                \
        .step = irk_step,                                                                \
        .accept = irk_accept,                                                            \
        .dense = irk_dense,                                                              \
        .dense_degree = irk_dense_degree,                                                \
        .amplification = irk_amplification}

IRK_FIXED(mb_method_radau_ia2, mb_irk_radau_ia2, "radau_ia2", 3);
IRK_FIXED(mb_method_radau_ia3, mb_irk_radau_ia3, "radau_ia3", 5);
IRK_FIXED(mb_method_radau_ia4, mb_irk_radau_ia4, "radau_ia4", 7);
IRK_FIXED(mb_method_radau_iia2, mb_irk_radau_iia2, "radau_iia2", 3);
IRK_FIXED(mb_method_radau_iia3, mb_irk_radau_iia3, "radau_iia3", 5);
IRK_FIXED(mb_method_radau_iia4, mb_irk_radau_iia4, "radau_iia4", 7);
IRK_FIXED(mb_method_lobatto_iiic2, mb_irk_lobatto_iiic2, "lobatto_iiic2", 2);
IRK_FIXED(mb_method_lobatto_iiic3, mb_irk_lobatto_iiic3, "lobatto_iiic3", 4);
IRK_FIXED(mb_method_lobatto_iiic4, mb_irk_lobatto_iiic4, "lobatto_iiic4", 6);
