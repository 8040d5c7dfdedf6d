/* Fixed-step implicit Runge-Kutta kernel over the tableaus of tableaus_irk.c
 * (Radau IA, Radau IIA, Lobatto IIIC; s = 2, 3, 4), and the helpers the family
 * shares with radau5.c (stability function, dense output).
 *
 * Step.  The stage increments Z = (Z_1, ..., Z_s) solve
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
 * by h, h^2 (mb_norm, as RADAU5).
 *
 * The methods have no error estimate and run with a fixed h only (MB_FIXED_ONLY).
 * Dense output: the polynomial through y, the interior stage values and y_new
 * (tableaus_irk.h), the collocation polynomial for Radau IIA.
 *
 * Workspace: a state struct, J (s Jacobians n x n), E (N x N, N = s n), its pivots
 * (N ints in N doubles), Z, F, dZ (N each), the last dense polynomial Q (N + n), two
 * vectors of size n.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "implicit_rk.h"
#include "newton.h"
#include "norm.h"
#include "status.h"

enum { IRK_SMAX = 8, NEWTON_MAXITER = 15 };

static const double THETA_REUSE_JAC = 1e-3; /* RADAU5's THET */

typedef struct irk_state {
    mb_newton nw;
    mb_jac_reuse jr; /* Jacobian reuse across steps (method.h) */
    int lu_ok;     /* E holds the LU of I (x) M - h_lu A (x) J (the one J) */
    int poly_ok;   /* Q holds the dense polynomial of the last accepted step */
    int stagewise; /* steps left that start with the stage Jacobians */
    double h_lu;
    double h_old;  /* size of the last accepted step */
} irk_state;

static size_t header_doubles(void)
{
    return (sizeof(irk_state) + sizeof(double) - 1) / sizeof(double);
}

static size_t irk_work_size(const mb_problem *p, const void *data)
{
    const mb_irk_tableau *T = data;
    size_t n = (size_t)p->n, N = (size_t)T->s * n;
    return header_doubles() + (size_t)T->s * n * n + N * N + 5 * N + 3 * n;
}

typedef struct irk_ws {
    double *J, *E, *Z, *F, *dZ, *Q, *yt, *v;
    int *ipiv;
} irk_ws;

static irk_ws workspace(mb_stepper *s)
{
    const mb_irk_tableau *T = s->m->data;
    ptrdiff_t n = s->n, N = (ptrdiff_t)T->s * n;
    irk_ws w;
    double *b = s->work + header_doubles();
    w.J = b; b += (ptrdiff_t)T->s * n * n;
    w.E = b; b += N * N;
    w.ipiv = (int *)(void *)b; b += N;
    w.Z = b; b += N;
    w.F = b; b += N;
    w.dZ = b; b += N;
    w.Q = b; b += N + n;
    w.yt = b; b += n;
    w.v = b;
    return w;
}

static irk_state *state(mb_stepper *s)
{
    return (irk_state *)(void *)s->work;
}

/* Newton tolerance relative to the run's tolerance (as SciPy's Radau) */
static double newton_kappa(double rtol)
{
    return fmax(10.0 * DBL_EPSILON / rtol, fmin(0.03, sqrt(rtol)));
}

static int irk_init(mb_stepper *s)
{
    irk_state *st = state(s);
    memset(st, 0, sizeof *st);
    mb_newton_init(&st->nw, newton_kappa(s->rtol), NEWTON_MAXITER);
    return MB_OK;
}


/* E = I_s (x) M - h (A (x) I) diag(J_i): the one J, or the stage Jacobians */
static int factor(mb_stepper *s, const irk_ws *w, double h, int per_stage)
{
    const mb_irk_tableau *T = s->m->data;
    s->stats->nlu++;
    return mb_newton_stage_factor(T->s, s->n, s->p->mass, T->A, h, w->J, per_stage, w->E,
                                  w->ipiv);
}

/* the stage Jacobians J_i = df/dy(t + c_i h, y + Z_i) at the Z in w->Z */
static int stage_jacobians(mb_stepper *s, const irk_ws *w, double t, double h, const double *y)
{
    const mb_irk_tableau *T = s->m->data;
    ptrdiff_t n = s->n;
    for (int i = 0; i < T->s; i++) {
        for (ptrdiff_t l = 0; l < n; l++)
            w->yt[l] = y[l] + w->Z[i * n + l];
        int rc = mb_rhs_iterate(s, t + T->c[i] * h, w->yt, w->F + i * n);
        if (rc == MB_OK)
            rc = mb_jac(s, t + T->c[i] * h, w->yt, w->F + i * n, w->J + i * n * n);
        if (rc != MB_OK)
            return rc;
    }
    return MB_OK;
}

/* weighted RMS norm over the s stage blocks of x (scale from y) */
static double stage_norm(const mb_stepper *s, int ns, const double *x, const double *y)
{
    ptrdiff_t n = s->n;
    double sum = 0.0;
    for (int i = 0; i < ns; i++) {
        double e = mb_norm(s, x + (ptrdiff_t)i * n, y, NULL);
        sum += e * e;
    }
    return sqrt(sum / ns);
}

/* starting values: the last accepted step's dense polynomial u extrapolated,
 * Z_i = u(1 + c_i h / h_old) - u(1); zero on the first step */
static void start_values(mb_stepper *s, const irk_ws *w, double h)
{
    const mb_irk_tableau *T = s->m->data;
    irk_state *st = state(s);
    ptrdiff_t n = s->n;
    if (!st->poly_ok) {
        memset(w->Z, 0, (size_t)(T->s * n) * sizeof(double));
        return;
    }
    for (int i = 0; i < T->s; i++) {
        double sg = 1.0 + T->c[i] * h / st->h_old, pk = 1.0;
        double *z = w->Z + (ptrdiff_t)i * n;
        memset(z, 0, (size_t)n * sizeof(double));
        for (int k = 1; k <= T->m; k++) {
            pk *= sg;
            const double *q = w->Q + (ptrdiff_t)k * n;
            for (ptrdiff_t l = 0; l < n; l++)
                z[l] += (pk - 1.0) * q[l];
        }
    }
}

/* Simplified Newton from the starting values (start) or the Z in w->Z.  *conv = 1 when
 * converged.  Returns MB_OK or the code of a failed f evaluation. */
static int newton(mb_stepper *s, const irk_ws *w, double t, double h, const double *y, int start,
                  int *conv)
{
    const mb_irk_tableau *T = s->m->data;
    irk_state *st = state(s);
    ptrdiff_t n = s->n, ns = T->s, N = ns * n;
    *conv = 0;
    if (start)
        start_values(s, w, h);
    mb_newton_begin(&st->nw);
    for (;;) {
        for (ptrdiff_t i = 0; i < ns; i++) {
            for (ptrdiff_t l = 0; l < n; l++)
                w->yt[l] = y[l] + w->Z[i * n + l];
            int rc = mb_rhs(s, t + T->c[i] * h, w->yt, w->F + i * n);
            if (rc != MB_OK)
                return rc;
        }
        /* dZ = G(Z) = h (A (x) I) F - (I (x) M) Z */
        for (ptrdiff_t i = 0; i < ns; i++) {
            double *g = w->dZ + i * n;
            mb_mass_apply(n, s->p->mass, w->Z + i * n, w->v);
            for (ptrdiff_t l = 0; l < n; l++) {
                double acc = 0.0;
                for (ptrdiff_t j = 0; j < ns; j++)
                    acc += T->A[i * ns + j] * w->F[j * n + l];
                g[l] = h * acc - w->v[l];
            }
        }
        int rc = mb_lu_solve(N, w->E, N, w->ipiv, w->dZ, 1);
        if (rc != MB_OK)
            return rc;
        int nc = mb_newton_check(&st->nw, stage_norm(s, (int)ns, w->dZ, y));
        if (nc == MB_NEWTON_FAILED)
            return MB_OK;
        for (ptrdiff_t k = 0; k < N; k++)
            w->Z[k] += w->dZ[k];
        if (nc == MB_NEWTON_CONVERGED) {
            *conv = 1;
            return MB_OK;
        }
    }
}

enum { STAGEWISE_STEPS = 20 };

static int irk_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                    double *err)
{
    (void)err;
    const mb_irk_tableau *T = s->m->data;
    irk_state *st = state(s);
    irk_ws w = workspace(s);
    ptrdiff_t n = s->n, N = (ptrdiff_t)T->s * n;
    int rc, conv = 0;

    /* attempts: the one J (kept across steps), a fresh one at (t, y), the stage Jacobians */
    for (int attempt = st->stagewise > 0 ? 2 : 0; attempt < 3; attempt++) {
        int per_stage = attempt == 2;
        if (per_stage) {
            if (st->poly_ok) {
                start_values(s, &w, h);
            } else {
                int finite = attempt > 0;
                for (ptrdiff_t k = 0; finite && k < N; k++)
                    finite = isfinite(w.Z[k]);
                if (!finite)
                    memset(w.Z, 0, (size_t)N * sizeof(double));
            }
            if ((rc = stage_jacobians(s, &w, t, h, y)) != MB_OK)
                return rc;
            st->lu_ok = 0;
            st->jr.need = 1;
        } else {
            int jac_new;
            if (attempt == 1 && st->jr.fresh)
                continue;  /* J at (t, y) already failed */
            if (attempt == 1)
                st->jr.need = 1;
            if ((rc = mb_jac_refresh(s, &st->jr, t, y, s->f0, w.J, &jac_new)) != MB_OK)
                return rc;
            if (jac_new)
                st->lu_ok = 0;
        }
        /* h of a fixed-step run varies in its last bits (t0 + k h - t) */
        if (per_stage || !st->lu_ok || fabs(h - st->h_lu) > 1e-12 * fabs(h)) {
            st->lu_ok = 0;
            if (factor(s, &w, h, per_stage) != MB_OK) {
                s->h_fail_factor = 0.5;
                return MB_RECOVERABLE;  /* singular iteration matrix: smaller h */
            }
            if (!per_stage) {
                st->lu_ok = 1;
                st->h_lu = h;
            }
        }
        if ((rc = newton(s, &w, t, h, y, !per_stage, &conv)) != MB_OK)
            return rc;
        if (conv) {
            if (per_stage)
                st->stagewise = st->stagewise > 0 ? st->stagewise - 1 : STAGEWISE_STEPS;
            break;
        }
        if (per_stage)
            st->stagewise = 0;
    }
    if (!conv) {
        st->jr.need = 1;
        s->h_fail_factor = 0.5;
        return MB_RECOVERABLE;
    }
    if (st->stagewise == 0)
        st->jr.need = st->nw.iter > 2 && st->nw.theta > THETA_REUSE_JAC;
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0;
        for (int i = 0; i < T->s; i++)
            acc += T->d[i] * w.Z[(ptrdiff_t)i * n + l];
        y_new[l] = y[l] + acc;
    }
    return MB_OK;
}

static int irk_accept(mb_stepper *s, double t_new, const double *y_new)
{
    const mb_irk_tableau *T = s->m->data;
    irk_state *st = state(s);
    irk_ws w = workspace(s);
    st->jr.fresh = 0;
    double t_end = s->t_last + s->h_last;
    st->poly_ok = fabs(t_new - t_end) <= 4.0 * DBL_EPSILON * (fabs(t_end) + fabs(s->h_last));
    if (st->poly_ok) {  /* else a terminal event cut the step: no extrapolation */
        mb_irk_dense_coeffs(T, s->n, s->y_last, y_new, w.Z, w.Q);
        st->h_old = s->h_last;
    }
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
    irk_ws w = workspace(s);
    /* y_new of the last step, recomputed from Z (the driver keeps its own copy) */
    ptrdiff_t n = s->n;
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0;
        for (int i = 0; i < T->s; i++)
            acc += T->d[i] * w.Z[(ptrdiff_t)i * n + l];
        w.yt[l] = s->y_last[l] + acc;
    }
    mb_irk_dense_coeffs(T, n, s->y_last, w.yt, w.Z, C);
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
