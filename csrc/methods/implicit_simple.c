/* Implicit one-step theta methods on y' = f(t, y):
 *     y_{n+1} = y_n + h ((1 - g) f(t_n, y_n) + g f(t_{n+1}, y_{n+1})),
 *     backward Euler     g = 1    order 1, R(z) = 1 / (1 - z)          (L-stable)
 *     trapezoidal rule   g = 1/2  order 2, R(z) = (1 + z/2) / (1 - z/2) (A-stable)
 * (lecture notes 7.7).
 *
 * Newton: simplified Newton on the increment z = y_{n+1} - y_n,
 *     G(z) = z - h (1 - g) f_n - h g f(t_{n+1}, y_n + z) = 0,
 * iteration matrix I - h g J, under the shared monitor (linalg/newton.h; tolerance
 * max(10 eps / rtol, min(0.03, sqrt(rtol))) in the run's weighted RMS norm, at most
 * 7 iterations; a first correction above the tolerance is never accepted on the
 * previous solve's rate alone).  Predictor: the linearly implicit step z = (I - h g J)^{-1} h f_n
 * (one Rosenbrock-Euler step; the explicit-Euler predictor h f_n throws stiff
 * components far off the slow manifold and made Newton fail on Robertson).
 * J is evaluated at the step's start with f_n (no extra evaluation) and kept across
 * steps until Newton fails with a J older than the current step; then it is
 * re-evaluated and Newton restarted once (mb_jac_reuse, as bdf.c).  The LU of
 * I - h g J is kept while h g and J are unchanged (a fixed-step run on a linear
 * problem factors once).  A
 * failure with a current J returns > 0 with h_fail_factor = 0.5.  In fixed-step
 * runs rtol/atol still set the Newton tolerance.
 *
 * Adaptive runs use an EMBEDDED estimate of the method's own local error (not the
 * driver's step doubling), filtered by the factored iteration matrix so that it
 * stays bounded on stiff components (Hairer & Wanner IV.8; z = h lambda):
 *   backward Euler:  err = (I - h J)^{-1} (h/2) (f_{n+1} - f_n)
 *                    (BE minus the trapezoidal rule on the same f values;
 *                     -h^2/2 y'' is the local error of BE; on y' = lambda y the
 *                     estimate is z^2 / (2 (1 - z)^2) y_n, bounded by y_n / 2)
 *   trapezoid:       err = (I - h/2 J)^{-2} (h/3) (f_n - 2 f_m + f_{n+1})
 *                    (trapezoid minus Simpson's rule; f_m = f at the midpoint of the
 *                     cubic Hermite interpolant, one extra f evaluation;
 *                     -h^3/12 y''' is the local error of the trapezoidal rule; on
 *                     y' = lambda y the raw estimate is z^3 / (12 (1 - z/2)) y_n,
 *                     so the filter is applied twice to keep it bounded (-> -2/3 y_n,
 *                     while the true error of the A- but not L-stable rule -> y_n)).
 * error_order is set to order + 1 so that the driver's controller uses the exponent
 * 1/(order + 1) of these local error estimates.
 * The step returns f_{n+1} = f(t_{n+1}, y_{n+1}) (the next step's f_n; Hermite
 * dense output).  Per step: Newton iterations + 1 evaluations (+ 1 for f_m).
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "carve.h"
#include "implicit_simple.h"
#include "newton.h"
#include "norm.h"
#include "status.h"

enum { NEWTON_MAXITER = 7 };

const mb_theta_table mb_theta_backward_euler = { 1.0, MB_THETA_EST_BE };
const mb_theta_table mb_theta_trapezoid = { 0.5, MB_THETA_EST_SIMPSON };

typedef struct theta_state {
    mb_jac_reuse jr;  /* J kept across steps (method.h): fresh = evaluated in this step */
    int lu_ok;
    double c_lu;
    mb_newton nw;
} theta_state;

enum { V_Z, V_DZ, V_F, V_FP, V_Y, V_B, V_F0, NVEC };

typedef struct theta_work {
    theta_state *st;
    double *J, *LU;   /* n x n each */
    int *ipiv;
    double *v[NVEC];  /* vectors of n */
} theta_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, ptrdiff_t n, theta_work *w)
{
    size_t nn = (size_t)n;
    w->st = mb_carve_bytes(c, sizeof *w->st);
    w->J = mb_carve(c, nn * nn);
    w->LU = mb_carve(c, nn * nn);
    w->ipiv = mb_carve_int(c, nn);
    for (int v = 0; v < NVEC; v++)
        w->v[v] = mb_carve(c, nn);
    return c->off;
}

static size_t theta_work_size(const mb_problem *p, const void *data)
{
    (void)data;
    theta_work w;
    return layout(&(mb_carver){NULL, 0}, p->n, &w);
}

static theta_work workspace(mb_stepper *s)
{
    theta_work w;
    layout(&(mb_carver){s->work, 0}, s->n, &w);
    return w;
}

static int theta_init(mb_stepper *s)
{
    theta_state *st = workspace(s).st;
    memset(st, 0, sizeof *st);
    double rtol = s->rtol > 0 ? s->rtol : 1e-3;
    mb_newton_init(&st->nw, fmax(10.0 * DBL_EPSILON / rtol, fmin(0.03, sqrt(rtol))),
                   NEWTON_MAXITER);
    return MB_OK;
}

/* LU of I - c J */
static int factor_matrix(mb_stepper *s, const theta_work *w, double c)
{
    theta_state *st = w->st;
    s->stats->nlu++;
    st->lu_ok = 0;
    int rc = mb_newton_matrix_factor(s->n, NULL, w->J, c, w->LU, w->ipiv);
    if (rc != MB_OK)
        return rc;
    st->lu_ok = 1;
    st->c_lu = c;
    return MB_OK;
}


/* simplified Newton on z from the predictor in V_Z; b = h (1 - g) f_n; fp = f at
 * the predictor.  Returns 1 if converged (*rc_out < 0: fatal). */
static int newton(mb_stepper *s, const theta_work *w, double tn, const double *y, double hg,
                  int *rc_out)
{
    theta_state *st = w->st;
    ptrdiff_t n = s->n;
    double *z = w->v[V_Z], *dz = w->v[V_DZ], *f = w->v[V_F], *fp = w->v[V_FP];
    double *yv = w->v[V_Y], *b = w->v[V_B];
    *rc_out = MB_OK;
    mb_newton_begin(&st->nw);
    for (int it = 0; it < NEWTON_MAXITER; it++) {
        const double *fv = fp;
        if (it > 0) {
            int rc = mb_rhs_iterate(s, tn, yv, f);
            if (rc < 0) { *rc_out = rc; return 0; }
            if (rc > 0) return 0;
            fv = f;
        }
        for (ptrdiff_t i = 0; i < n; i++)
            dz[i] = b[i] + hg * fv[i] - z[i];
        mb_lu_solve(n, w->LU, n, w->ipiv, dz, 1);
        double nrm = mb_norm(s, dz, y, NULL);
        int status = mb_newton_check(&st->nw, nrm);
        /* The first correction is accepted on the previous solve's contraction rate,
         * which says nothing about a correction larger than the tolerance itself: a
         * step that ends inside a stiff contact its J does not know (a penalty spring
         * entered during the step) made a huge first correction, accepted as converged,
         * and returned a non-solution with an error estimate of 0.  Such a correction
         * needs a second iteration to measure the rate. */
        if (status == MB_NEWTON_CONVERGED && it == 0 && nrm > 1.0)
            status = MB_NEWTON_CONTINUE;
        if (status == MB_NEWTON_FAILED)
            return 0;
        for (ptrdiff_t i = 0; i < n; i++) {
            z[i] += dz[i];
            yv[i] = y[i] + z[i];
        }
        if (status == MB_NEWTON_CONVERGED)
            return 1;
    }
    return 0;
}

static int theta_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                      double *err)
{
    theta_work w = workspace(s);
    theta_state *st = w.st;
    const mb_theta_table *T = s->m->data;
    ptrdiff_t n = s->n;
    double g = T->g, hg = h * g, tn = t + h;
    double *z = w.v[V_Z], *fp = w.v[V_FP], *yv = w.v[V_Y], *b = w.v[V_B];
    const double *f0 = s->f0;
    int rc;
    if (!s->f0_ok) {
        double *f0w = w.v[V_F0];
        if ((rc = mb_rhs(s, t, y, f0w)) != MB_OK)
            return rc;
        f0 = f0w;
    }
    for (ptrdiff_t i = 0; i < n; i++)
        b[i] = h * (1.0 - g) * f0[i];
    int converged = 0;
    for (;;) {
        /* J at the step's start, where f is known: no extra evaluation */
        int jac_new;
        if ((rc = mb_jac_refresh(s, &st->jr, t, y, f0, w.J, &jac_new)) != MB_OK)
            return rc;
        if (jac_new)
            st->lu_ok = 0;
        if (!st->lu_ok || fabs(hg - st->c_lu) > 1e-10 * fabs(hg)) {
            rc = factor_matrix(s, &w, hg);
            if (rc == MB_ERR_LINALG) break;
            if (rc != MB_OK) return rc;
        }
        /* linearly implicit predictor z = (I - h g J)^{-1} h f_n (one Rosenbrock-Euler
         * step: stays near the slow manifold of stiff problems) */
        for (ptrdiff_t i = 0; i < n; i++)
            z[i] = h * f0[i];
        mb_lu_solve(n, w.LU, n, w.ipiv, z, 1);
        for (ptrdiff_t i = 0; i < n; i++)
            yv[i] = y[i] + z[i];
        rc = mb_rhs_iterate(s, tn, yv, fp);
        if (rc < 0)
            return rc;
        if (rc > 0)
            break;
        converged = newton(s, &w, tn, y, hg, &rc);
        if (rc < 0)
            return rc;
        if (converged || st->jr.fresh)
            break;
        st->jr.need = 1;   /* J from an earlier step: re-evaluate and retry */
    }
    if (!converged) {
        s->h_fail_factor = 0.5;
        return MB_RECOVERABLE;
    }
    for (ptrdiff_t i = 0; i < n; i++)
        y_new[i] = y[i] + z[i];
    double *f1 = s->f1 ? s->f1 : w.v[V_F];
    if ((rc = mb_rhs(s, tn, y_new, f1)) != MB_OK)
        return rc;
    if (s->f1)
        s->f1_ok = 1;

    /* embedded estimate, filtered by (I - h g J)^{-1} */
    if (T->estimate == MB_THETA_EST_BE) {
        for (ptrdiff_t i = 0; i < n; i++)
            err[i] = 0.5 * h * (f1[i] - f0[i]);
    } else {
        double *ym = w.v[V_Y], *fm = w.v[V_FP];
        for (ptrdiff_t i = 0; i < n; i++)
            ym[i] = 0.5 * (y[i] + y_new[i]) + 0.125 * h * (f0[i] - f1[i]);
        if ((rc = mb_rhs(s, t + 0.5 * h, ym, fm)) != MB_OK)
            return rc;
        for (ptrdiff_t i = 0; i < n; i++)
            err[i] = h / 3.0 * (f0[i] - 2.0 * fm[i] + f1[i]);
    }
    mb_lu_solve(n, w.LU, n, w.ipiv, err, 1);
    if (T->estimate == MB_THETA_EST_SIMPSON)
        mb_lu_solve(n, w.LU, n, w.ipiv, err, 1);
    return MB_OK;
}

static int theta_accept(mb_stepper *s, double t_new, const double *y_new)
{
    (void)t_new;
    (void)y_new;
    workspace(s).st->jr.fresh = 0;
    return MB_OK;
}

/* R(z) = (1 + (1 - g) z) / (1 - g z) */
static int theta_amplification(const mb_method *m, double zr, double zi, double *Rr,
                               double *Ri)
{
    const mb_theta_table *T = m->data;
    double g = T->g;
    double nr = 1.0 + (1.0 - g) * zr, ni = (1.0 - g) * zi;
    double dr = 1.0 - g * zr, di = -g * zi;
    double d2 = dr * dr + di * di;
    *Rr = (nr * dr + ni * di) / d2;
    *Ri = (ni * dr - nr * di) / d2;
    return MB_OK;
}

#define THETA_METHOD(var, T, nm, p, q)                                                   \
    const mb_method var = {                                                                \
        .name = nm,                                                                        \
        .order = p,                                                                        \
        .error_order = q,                                                                  \
        .flags = MB_NEEDS_JAC | MB_EMBEDDED | MB_USES_F0 | MB_FSAL | MB_IMPLICIT |        \
                 MB_DENSE_HERMITE | MB_LU_REUSE,                                           \
        .max_dense_degree = 3,                                                             \
        .data = &T,                                                                        \
        .work_size = theta_work_size,                                                      \
        .init = theta_init,                                                                \
        .step = theta_step,                                                                \
        .accept = theta_accept,                                                            \
        .amplification = theta_amplification,                                              \
    }

THETA_METHOD(mb_method_backward_euler, mb_theta_backward_euler, "backward_euler", 1, 2);
THETA_METHOD(mb_method_trapezoid, mb_theta_trapezoid, "trapezoid", 2, 3);
