/* radau_iia: the 3-stage Radau IIA method of order 5 with the step of Hairer's
 * RADAU5 (Hairer & Wanner II, Sec. IV.8), over the one driver.
 *
 * Collocation system.  With the constant mass matrix M (identity when NULL) the
 * stage increments Z_i = Y_i - y solve (A^{-1} (x) M) Z = h F(Z).  With
 * A^{-1} = T Lambda TI (tableaus_irk.h) and W = (TI (x) I) Z, simplified Newton
 * with J = df/dy(t, y) splits into one real and one complex system of size n:
 *   (gamma/h M - J) dW_0          = TI_0 F - gamma/h M W_0
 *   (mu/h M - J) (dW_1 + i dW_2)  = (TI_1 + i TI_2) F - mu/h M (W_1 + i W_2)
 * (mb_lu_factor / mb_zlu_factor), Z = (T (x) I) W.  The iteration runs under the
 * shared monitor (newton.h) on ||dW|| in the run's weighted RMS norm (scale
 * atol + rtol |y|), tolerance kappa = max(10 eps/rtol, min(0.03, sqrt(rtol))),
 * at most 7 iterations.  Starting values: the collocation polynomial of the last
 * accepted step extrapolated to t + c_i h (zero on the first step and after a
 * step cut short by a terminal event).  y_new = y + Z_3.
 *
 * Error estimate (RADAU5's ESTRAD):
 *   err = (gamma/h M - J)^{-1} (f(t, y) + M sum_i E_i Z_i / h),
 * and on the first step and after a rejection, when ||err|| >= 1, the refined
 *   err = (gamma/h M - J)^{-1} (f(t, y + err) + M sum_i E_i Z_i / h).
 * The driver applies the norm and its controller with the order 4 = 3 + 1 of
 * the estimate.
 *
 * Jacobian and LU reuse.  J is evaluated at the start of a step and kept for the
 * next steps while Newton contracts fast (RADAU5's theta <= 1e-3, counted only
 * when Newton needed more than two iterations, as SciPy's Radau); after a
 * rejection or a Newton failure it is re-evaluated unless it is already current.
 * Both LUs are kept while h and J are unchanged.  A Newton failure with an old J
 * re-evaluates J and solves again with the same h (as SciPy's Radau); with a
 * current J the step returns a recoverable failure with h_fail_factor = 0.5
 * (divergence) or RADAU5's 0.8 q^(-1/(4 + k_left)) (too slow to converge in the
 * iterations left).  A singular iteration matrix also halves h (fatal after 5 in
 * a row).  nlu counts the real and the complex factorization (as SciPy does).
 *
 * DAEs of index 2 and 3 (MB_DAE): with a singular M and mb_problem.dae_index every
 * norm (Newton and error estimate) scales the index-2/3 components by h, h^2
 * (mb_norm), as RADAU5 does with NIND2, NIND3.
 *
 * Dense output: the collocation polynomial (degree 3, through y at theta = 0 and
 * y + Z_i at c_i, y_new at theta = 1).
 *
 * Structured linear algebra (MB_LINSYS): when the problem supplies mb_linsys
 * (linsys.h; a large sparse mechanism) J is the problem's own, E1 is its slot 0
 * (real a = gamma/h) and E2 its slot 1 (complex a = mu/h), and no n x n array exists.
 *
 * Workspace (layout()): a state struct, J, E1 (n x n), E2 (n x n complex), pivots (none of
 * these with a linsys), and the vectors Z, W, F, Q (3n each: stages, transformed
 * stages, f at the stages, the last accepted polynomial), ZE, v, yt (n each) and cv
 * (n complex) of scratch.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "controller.h"
#include "../linalg/dense.h" /* LU */
#include "carve.h"
#include "implicit_rk.h"
#include "irk_newton.h"
#include "status.h"

static const double THETA_REUSE_JAC = 1e-3; /* RADAU5's THET */
enum { NEWTON_MAXITER = 7, MAX_SINGULAR = 5 };
/* the complex blocks are carved from the double workspace */
_Static_assert(_Alignof(double complex) <= _Alignof(double), "double complex alignment");

typedef struct radau_state {
    mb_newton nw;
    mb_jac_reuse jr; /* Jacobian reuse across steps (method.h) */
    int lu_ok;     /* E1, E2 hold the LUs for h_lu and J */
    int first;     /* no step accepted yet */
    int pending;   /* an attempt waits for accept() (else: it was rejected) */
    int poly_ok;   /* Q holds the polynomial of the last accepted step */
    int nsing;     /* singular iteration matrices in a row */
    double h_lu;
    double h_old;  /* size of the last accepted step */
    double theta;  /* contraction rate of the last Newton solve */
} radau_state;

typedef struct radau_ws {
    radau_state *st;
    double *J, *E1, *Z, *W, *F, *Q, *ZE, *v, *yt;
    double complex *E2, *cv;
    int *ip1, *ip2;
} radau_ws;

/* The one layout of the workspace: counts it (c->base NULL) and carves it.  The dense
 * matrices J, E1, E2 and the pivots are absent with the problem's linsys. */
static size_t layout(mb_carver *c, const mb_problem *p, radau_ws *w)
{
    size_t n = (size_t)p->n, nn = p->linsys ? 0 : n * n;
    w->st = mb_carve_bytes(c, sizeof *w->st);
    w->E2 = mb_carve_bytes(c, nn * sizeof(double complex));
    w->cv = mb_carve_bytes(c, n * sizeof(double complex));
    w->J = mb_carve(c, nn);
    w->E1 = mb_carve(c, nn);
    w->Z = mb_carve(c, 3 * n);
    w->W = mb_carve(c, 3 * n);
    w->F = mb_carve(c, 3 * n);
    w->Q = mb_carve(c, 3 * n);
    w->ZE = mb_carve(c, n);
    w->v = mb_carve(c, n);
    w->yt = mb_carve(c, n);
    w->ip1 = mb_carve_int(c, nn ? n : 0);
    w->ip2 = mb_carve_int(c, nn ? n : 0);
    return c->off;
}

static size_t radau_work_size(const mb_problem *p, const void *data)
{
    (void)data;
    radau_ws w;
    return layout(&(mb_carver){NULL, 0}, p, &w);
}

static radau_ws workspace(mb_stepper *s)
{
    radau_ws w;
    layout(&(mb_carver){s->work, 0}, s->p, &w);
    return w;
}

static radau_state *state(mb_stepper *s)
{
    return workspace(s).st;
}

static const mb_radau5_constants *K5(const mb_stepper *s)
{
    return s->m->data;
}

static int radau_init(mb_stepper *s)
{
    radau_state *st = state(s);
    memset(st, 0, sizeof *st);
    st->first = 1;
    mb_newton_init(&st->nw, fmax(10.0 * DBL_EPSILON / s->rtol, fmin(0.03, sqrt(s->rtol))),
                   NEWTON_MAXITER);
    return MB_OK;
}


/* E1 = gamma/h M - J, E2 = mu/h M - J, both factored */
static int factor(mb_stepper *s, const radau_ws *w, double h)
{
    const mb_radau5_constants *k = K5(s);
    const double *M = s->p->mass;
    ptrdiff_t n = s->n;
    double g = k->gamma / h;
    double complex mu = (k->mu_re + I * k->mu_im) / h;
    if (s->p->linsys) {
        s->stats->nlu += 2;
        int rc = mb_linsys_factor(s, 0, g, 0.0);
        return rc == MB_OK ? mb_linsys_factor(s, 1, creal(mu), cimag(mu)) : rc;
    }
    for (ptrdiff_t c = 0; c < n; c++)
        for (ptrdiff_t r = 0; r < n; r++) {
            double m = M ? M[c * n + r] : (double)(r == c);
            double j = w->J[c * n + r];
            w->E1[c * n + r] = g * m - j;
            w->E2[c * n + r] = mu * m - j;
        }
    s->stats->nlu += 2;
    int rc = mb_lu_factor(n, w->E1, n, w->ip1);
    if (rc == MB_OK)
        rc = mb_zlu_factor(n, w->E2, n, w->ip2);
    return rc;
}

/* E1 x = b in place */
static int solve_real(mb_stepper *s, const radau_ws *w, double *x)
{
    if (s->p->linsys)
        return mb_linsys_solve(s, 0, x, NULL);
    return mb_lu_solve(s->n, w->E1, s->n, w->ip1, x, 1);
}

/* out_k = sum_j R[k][j] x_j for the three blocks (R row-major 3 x 3) */
static void transform(ptrdiff_t n, const double *R, const double *x, double *out)
{
    for (ptrdiff_t l = 0; l < n; l++) {
        double x0 = x[l], x1 = x[n + l], x2 = x[2 * n + l];
        for (int k = 0; k < 3; k++)
            out[k * n + l] = R[3 * k] * x0 + R[3 * k + 1] * x1 + R[3 * k + 2] * x2;
    }
}

/* starting values: the last accepted collocation polynomial at t + c_i h */
static void start_values(mb_stepper *s, const radau_ws *w, double h)
{
    const mb_irk_tableau *T = K5(s)->tab;
    radau_state *st = state(s);
    ptrdiff_t n = s->n;
    if (!st->poly_ok) {
        memset(w->Z, 0, 3 * (size_t)n * sizeof(double));
        return;
    }
    for (int i = 0; i < 3; i++) {
        double sg = 1.0 + T->c[i] * h / st->h_old;
        double p1 = sg - 1.0, p2 = sg * sg - 1.0, p3 = sg * sg * sg - 1.0;
        for (ptrdiff_t l = 0; l < n; l++)
            w->Z[i * n + l] = p1 * w->Q[l] + p2 * w->Q[n + l] + p3 * w->Q[2 * n + l];
    }
}

/* Simplified Newton on the transformed system from the Z in w->Z.  *conv = 1 on
 * convergence; on failure *hfac is the suggested factor on h.  Returns MB_OK or
 * the code of a failed f evaluation or solve. */
static int newton(mb_stepper *s, const radau_ws *w, double t, double h, const double *y,
                  int *conv, double *hfac)
{
    const mb_radau5_constants *k = K5(s);
    const mb_irk_tableau *T = k->tab;
    radau_state *st = state(s);
    mb_newton *nw = &st->nw;
    ptrdiff_t n = s->n;
    double g = k->gamma / h, mr = k->mu_re / h, mi = k->mu_im / h;
    double *W0 = w->W, *W1 = w->W + n, *W2 = w->W + 2 * n;
    double *dW = w->F;  /* the transformed residuals overwrite F in place */
    *conv = 0;
    *hfac = 0.5;
    transform(n, k->TI, w->Z, w->W);
    mb_newton_begin(nw);
    for (;;) {
        for (int i = 0; i < 3; i++) {
            for (ptrdiff_t l = 0; l < n; l++)
                w->yt[l] = y[l] + w->Z[i * n + l];
            int rc = mb_rhs(s, t + T->c[i] * h, w->yt, w->F + i * n);
            if (rc != MB_OK)
                return rc;
        }
        transform(n, k->TI, w->F, w->F);
        /* real system */
        mb_stepper_mass_apply(s, W0, w->v);
        for (ptrdiff_t l = 0; l < n; l++)
            dW[l] = w->F[l] - g * w->v[l];
        int rc = solve_real(s, w, dW);
        if (rc != MB_OK)
            return rc;
        /* complex system: mu/h M (W1 + i W2) */
        mb_stepper_mass_apply(s, W1, w->v);
        mb_stepper_mass_apply(s, W2, w->yt);
        if (s->p->linsys) {  /* solved in place as the pair (dW_1, dW_2) */
            for (ptrdiff_t l = 0; l < n; l++) {
                dW[n + l] = w->F[n + l] - (mr * w->v[l] - mi * w->yt[l]);
                dW[2 * n + l] = w->F[2 * n + l] - (mi * w->v[l] + mr * w->yt[l]);
            }
            if ((rc = mb_linsys_solve(s, 1, dW + n, dW + 2 * n)) != MB_OK)
                return rc;
        } else {
            for (ptrdiff_t l = 0; l < n; l++) {
                double re = w->F[n + l] - (mr * w->v[l] - mi * w->yt[l]);
                double im = w->F[2 * n + l] - (mi * w->v[l] + mr * w->yt[l]);
                w->cv[l] = re + I * im;
            }
            if ((rc = mb_zlu_solve(n, w->E2, n, w->ip2, w->cv, 1)) != MB_OK)
                return rc;
            for (ptrdiff_t l = 0; l < n; l++) {
                dW[n + l] = creal(w->cv[l]);
                dW[2 * n + l] = cimag(w->cv[l]);
            }
        }
        double dw = mb_irk_norm(s, 3, dW, y);  /* the three blocks, scale from y */
        int nc = mb_newton_check(nw, dw);
        if (nc == MB_NEWTON_FAILED) {
            int left = nw->max_iter - nw->iter;
            if (nw->iter > 1 && nw->theta > 0.0 && nw->theta < 1.0 && left > 0) {
                /* too slow for the iterations left: RADAU5's reduction */
                double dyth = nw->theta / (1.0 - nw->theta) * pow(nw->theta, left) * dw / nw->kappa;
                double q = fmax(1e-4, fmin(20.0, dyth));
                *hfac = 0.8 * pow(q, -1.0 / (4.0 + left));
            }
            return MB_OK;
        }
        for (ptrdiff_t l = 0; l < 3 * n; l++)
            w->W[l] += dW[l];
        transform(n, k->T, w->W, w->Z);
        if (nc == MB_NEWTON_CONVERGED) {
            *conv = 1;
            return MB_OK;
        }
    }
}

static int radau_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                      double *err)
{
    const mb_radau5_constants *k = K5(s);
    radau_ws w = workspace(s);
    radau_state *st = w.st;
    ptrdiff_t n = s->n;
    int rc;

    int reject = st->pending;  /* the last attempt was not accepted */
    st->pending = 1;
    if (reject && !st->jr.fresh)
        st->jr.need = 1;

    for (int attempt = 0;; attempt++) {
        int jac_new;
        if ((rc = mb_jac_refresh(s, &st->jr, t, y, s->f0, w.J, &jac_new)) != MB_OK)
            return rc;
        if (jac_new)
            st->lu_ok = 0;
        /* h of a fixed-step run varies in its last bits (t0 + k h - t) */
        if (!st->lu_ok || fabs(h - st->h_lu) > 1e-12 * fabs(h)) {
            st->lu_ok = 0;
            if ((rc = factor(s, &w, h)) != MB_OK) {
                if (rc != MB_ERR_LINALG)
                    return rc;
                if (++st->nsing >= MAX_SINGULAR)
                    return mb_fail(s, MB_ERR_LINALG,
                                   "radau_iia: the iteration matrix is singular (%d times in a row) at t = %.17g.",
                                   st->nsing, t);
                s->h_fail_factor = 0.5;
                return MB_RECOVERABLE;
            }
            st->nsing = 0;
            st->lu_ok = 1;
            st->h_lu = h;
        }
        start_values(s, &w, h);
        int conv;
        double hfac;
        if ((rc = newton(s, &w, t, h, y, &conv, &hfac)) != MB_OK)
            return rc;
        if (conv)
            break;
        st->jr.need = 1;
        if (st->jr.fresh || attempt > 0) {
            s->h_fail_factor = hfac;
            return MB_RECOVERABLE;
        }
    }
    st->theta = st->nw.iter > 2 ? st->nw.theta : 0.0;  /* for the J decision */
    /* RADAU5's safety: SAFE (1 + 2 NIT) / (NEWT + 2 NIT) after NEWT iterations */
    s->safety_scale = fmin(1.0, (1.0 + 2.0 * NEWTON_MAXITER) / (st->nw.iter + 2.0 * NEWTON_MAXITER));
    for (ptrdiff_t l = 0; l < n; l++)
        y_new[l] = y[l] + w.Z[2 * n + l];

    /* error estimate */
    for (ptrdiff_t l = 0; l < n; l++)
        w.ZE[l] = (k->E[0] * w.Z[l] + k->E[1] * w.Z[n + l] + k->E[2] * w.Z[2 * n + l]) / h;
    mb_stepper_mass_apply(s, w.ZE, w.v);
    for (ptrdiff_t l = 0; l < n; l++) {
        w.ZE[l] = w.v[l];          /* keep M ZE for the refined estimate */
        err[l] = s->f0[l] + w.v[l];
    }
    if ((rc = solve_real(s, &w, err)) != MB_OK)
        return rc;
    if ((st->first || reject) && mb_norm(s, err, y, y_new) >= 1.0) {
        for (ptrdiff_t l = 0; l < n; l++)
            w.yt[l] = y[l] + err[l];
        if ((rc = mb_rhs(s, t, w.yt, err)) != MB_OK)
            return rc;
        for (ptrdiff_t l = 0; l < n; l++)
            err[l] += w.ZE[l];
        if ((rc = solve_real(s, &w, err)) != MB_OK)
            return rc;
    }
    return MB_OK;
}

static int radau_accept(mb_stepper *s, double t_new, const double *y_new)
{
    const mb_irk_tableau *T = K5(s)->tab;
    radau_ws w = workspace(s);
    radau_state *st = w.st;
    ptrdiff_t n = s->n;
    (void)y_new;
    st->pending = 0;
    st->first = 0;
    st->jr.fresh = 0;
    st->jr.need = st->jr.need || st->theta > THETA_REUSE_JAC;
    double t_end = s->t_last + s->h_last;
    if (fabs(t_new - t_end) > 4.0 * DBL_EPSILON * (fabs(t_end) + fabs(s->h_last))) {
        st->poly_ok = 0;  /* a terminal event cut the step: no extrapolation */
        return MB_OK;
    }
    /* the collocation polynomial in theta: Q_k = sum_j P[j][k] Z_j */
    for (ptrdiff_t l = 0; l < n; l++)
        for (int kk = 0; kk < 3; kk++)
            w.Q[kk * n + l] = T->P[kk] * w.Z[l] + T->P[3 + kk] * w.Z[n + l] +
                              T->P[6 + kk] * w.Z[2 * n + l];
    st->h_old = s->h_last;
    st->poly_ok = 1;
    return MB_OK;
}

static int radau_dense(mb_stepper *s, double *C)
{
    const mb_irk_tableau *T = K5(s)->tab;
    radau_ws w = workspace(s);
    ptrdiff_t n = s->n;
    for (ptrdiff_t l = 0; l < n; l++)
        w.yt[l] = s->y_last[l] + w.Z[2 * n + l];
    mb_irk_dense_coeffs(T, n, s->y_last, w.yt, w.Z, C);
    return MB_OK;
}

static int radau_dense_degree(const mb_stepper *s)
{
    (void)s;
    return 3;
}

static int radau_amplification(const mb_method *m, double zr, double zi, double *Rr, double *Ri)
{
    const mb_radau5_constants *k = m->data;
    return mb_irk_stability(k->tab, zr, zi, Rr, Ri);
}

const mb_method mb_method_radau_iia = {
    .name = "radau_iia",
    .order = 5,
    .error_order = 3,
    .flags = MB_NEEDS_JAC | MB_EMBEDDED | MB_USES_F0 | MB_IMPLICIT | MB_MASS | MB_LU_REUSE | MB_DAE | MB_LINSYS_MASS |
             MB_LINSYS,
    .controller = MB_CONTROLLER_PREDICTIVE,  /* as RADAU5 (Gustafsson 1994) */
    .max_dense_degree = 3,
    .data = &mb_radau5_constants_iia3,
    .work_size = radau_work_size,
    .init = radau_init,
    .step = radau_step,
    .accept = radau_accept,
    .dense = radau_dense,
    .dense_degree = radau_dense_degree,
    .amplification = radau_amplification,
};
