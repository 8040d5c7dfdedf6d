/* Jacobian and df/dt services for implicit, Rosenbrock and exponential methods:
 * the problem's own derivatives, or finite differences (with column grouping when
 * a sparsity pattern is known, Curtis-Powell-Reid). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "method.h"
#include "../linalg/newton.h" /* mb_mass_apply */
#include "status.h"

static int check_finite(mb_stepper *s, const double *x, ptrdiff_t m, const char *what, double t)
{
    for (ptrdiff_t i = 0; i < m; i++)
        if (!isfinite(x[i]))
            return mb_fail(s, MB_ERR_NONFINITE, "%s returned a non-finite value (entry %td) at t = %.17g.",
                           what, i, t);
    return MB_OK;
}

/* The difference increment of column j: RADAU5's sqrt(eps max(1e-5, |y_j|)) up to
 * |y_j| = 1, the relative sqrt(eps) |y_j| above (continuous at 1).  RADAU5's form alone
 * shrinks relative to y_j as |y_j| grows (sqrt(eps / |y_j|): a relative 1e-12 at
 * |y_j| = 1e8, whose f difference is round-off) and vanishes below the spacing of y_j
 * beyond |y_j| ~ 1e16 (y_j + d == y_j: the quotient divides by 0; y' = -y from 1e200
 * failed in every method with a difference Jacobian). */
double mb_fd_increment(double yj)
{
    double a = fabs(yj);
    return a > 1.0 ? sqrt(DBL_EPSILON) * a : sqrt(DBL_EPSILON * fmax(1e-5, a));
}

int mb_jac(mb_stepper *s, double t, const double *y, const double *fy, double *J)
{
    const mb_problem *p = s->p;
    ptrdiff_t n = p->n;
    if (!(p->jac && p->jac_constant))
        s->stats->njev++;
    if (p->linsys) {
        int rc = p->linsys->jac(t, y, fy, p->linsys->ctx);
        if (rc == MB_ERR_CALLBACK)
            return rc;
        if (rc < 0)
            return mb_fail(s, MB_ERR_RHS_FAIL, "the Jacobian returned failure code %d at t = %.17g", rc, t);
        return rc > 0 ? MB_RECOVERABLE : MB_OK;
    }
    if (p->jac) {
        int rc = p->jac(t, y, J, n, p->ctx);
        if (rc == MB_ERR_CALLBACK)
            return rc;
        if (rc < 0)
            return mb_fail(s, MB_ERR_RHS_FAIL, "the Jacobian returned failure code %d at t = %.17g", rc, t);
        if (rc > 0)
            return MB_RECOVERABLE;
        return check_finite(s, J, n * n, "The Jacobian", t);
    }
    double *yp = s->jac_work, *fp = s->jac_work + n, *del = s->jac_work + 2 * n;
    memcpy(yp, y, (size_t)n * sizeof(double));
    if (!s->jac_groups) {
        for (ptrdiff_t j = 0; j < n; j++) {
            double d = mb_fd_increment(y[j]);
            yp[j] = y[j] + d;
            d = yp[j] - y[j];  /* exactly representable increment */
            int rc = mb_rhs(s, t, yp, fp);
            yp[j] = y[j];
            if (rc != MB_OK)
                return rc;
            for (ptrdiff_t i = 0; i < n; i++)
                J[j * n + i] = (fp[i] - fy[i]) / d;
        }
        return MB_OK;
    }
    /* grouped columns: perturb every column of group g at once */
    memset(J, 0, (size_t)(n * n) * sizeof(double));
    for (int g = 0; g < s->n_groups; g++) {
        for (ptrdiff_t j = 0; j < n; j++) {
            if (s->jac_groups[j] == g) {
                double d = mb_fd_increment(y[j]);
                yp[j] = y[j] + d;
                del[j] = yp[j] - y[j];
            }
        }
        int rc = mb_rhs(s, t, yp, fp);
        for (ptrdiff_t j = 0; j < n; j++)
            if (s->jac_groups[j] == g)
                yp[j] = y[j];
        if (rc != MB_OK)
            return rc;
        for (ptrdiff_t j = 0; j < n; j++) {
            if (s->jac_groups[j] != g)
                continue;
            for (ptrdiff_t i = 0; i < n; i++)
                if (p->jac_sparsity[j * n + i])
                    J[j * n + i] = (fp[i] - fy[i]) / del[j];
        }
    }
    return MB_OK;
}

int mb_linsys_factor(mb_stepper *s, int slot, double ar, double ai)
{
    const mb_linsys *ls = s->p->linsys;
    int rc = ls->factor(slot, ar, ai, ls->ctx);
    if (rc == MB_ERR_CALLBACK)
        return rc;
    if (rc < 0)
        return mb_fail(s, MB_ERR_LINALG, "the factorization of the iteration matrix failed (code %d).", rc);
    return rc > 0 ? MB_ERR_LINALG : MB_OK;
}

void mb_stepper_mass_apply(const mb_stepper *s, const double *x, double *out)
{
    const double *d = s->p->mass_diag;
    if (!d) {
        mb_mass_apply(s->n, s->p->mass, x, out);
        return;
    }
    for (ptrdiff_t i = 0; i < s->n; i++)
        out[i] = d[i] * x[i];
}

int mb_linsys_solve(mb_stepper *s, int slot, double *xr, double *xi)
{
    const mb_linsys *ls = s->p->linsys;
    int rc = ls->solve(slot, xr, xi, ls->ctx);
    if (rc == MB_ERR_CALLBACK)
        return rc;
    if (rc < 0)
        return mb_fail(s, MB_ERR_LINALG, "the solve with the iteration matrix failed (code %d).", rc);
    return rc > 0 ? MB_RECOVERABLE : MB_OK;
}

int mb_jac_refresh(mb_stepper *s, mb_jac_reuse *r, double t, const double *y, const double *fy,
                   double *J, int *evaluated)
{
    *evaluated = 0;
    if (r->ok && !(r->need && !r->fresh))
        return MB_OK;
    int rc = mb_jac(s, t, y, fy, J);
    if (rc != MB_OK)
        return rc;
    r->ok = 1;
    r->fresh = 1;
    r->need = 0;
    *evaluated = 1;
    return MB_OK;
}

/* W-method: re-evaluate J when h / h_jac leaves [1/W_JAC_RATIO, W_JAC_RATIO], or when
 * the secant residual exceeds W_SECANT_TOL times the change of f (method.h) */
static const double W_JAC_RATIO = 4.0;
static const double W_SECANT_TOL = 0.2;

/* the secant test of a W-method's first attempt from (t, y); then (t, y, f) become the
 * previous point */
static int secant_stale(mb_stepper *s, mb_wjac *w, double t, const double *y, double *prev,
                        mb_wjac_secant_fn secant, void *ctx)
{
    ptrdiff_t n = s->n;
    double *y_prev = prev, *f_prev = prev + n;
    int stale = 0;
    if (w->have_prev && w->ok) {
        double rr = 0.0, ff = 0.0;
        secant(s, y, y_prev, f_prev, t - w->t_prev, &rr, &ff, ctx);
        stale = rr > W_SECANT_TOL * W_SECANT_TOL * ff;
    }
    memcpy(y_prev, y, (size_t)n * sizeof(double));
    memcpy(f_prev, s->f0, (size_t)n * sizeof(double));
    w->t_prev = t;
    w->have_prev = 1;
    return stale;
}

int mb_wjac_due(mb_stepper *s, mb_wjac *w, double t, const double *y, double h, double *prev,
                mb_wjac_secant_fn secant, void *ctx)
{
    int rejected = w->pending, due;
    w->pending = 1;
    if (!w->w_method) {
        due = !w->here;
    } else {
        int stale = !rejected && secant_stale(s, w, t, y, prev, secant, ctx);
        if (!w->ok || stale || (rejected && !w->here)) {
            due = 1;
        } else {
            double r = fabs(h / w->h_jac);
            due = r > W_JAC_RATIO || r < 1.0 / W_JAC_RATIO;
        }
    }
    if (due)
        w->ok = w->here = 0;
    return due;
}

void mb_wjac_taken(mb_wjac *w, double h)
{
    w->ok = w->here = 1;
    w->h_jac = h;
}

void mb_wjac_accept(mb_wjac *w)
{
    w->pending = 0;
    w->here = 0;
}

int mb_dfdt(mb_stepper *s, double t, const double *y, const double *fy, double *ft)
{
    const mb_problem *p = s->p;
    ptrdiff_t n = p->n;
    if (p->dfdt) {
        int rc = p->dfdt(t, y, ft, p->ctx);
        if (rc == MB_ERR_CALLBACK)
            return rc;
        if (rc < 0)
            return mb_fail(s, MB_ERR_RHS_FAIL, "df/dt returned failure code %d at t = %.17g", rc, t);
        if (rc > 0)
            return MB_RECOVERABLE;
        return check_finite(s, ft, n, "df/dt", t);
    }
    /* increment relative to the time scale 1 (|t| near 0 would make it vanish) */
    double d = sqrt(DBL_EPSILON) * fmax(1.0, fabs(t));
    volatile double tp = t + d;
    d = tp - t;
    int rc = mb_rhs(s, tp, y, ft);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < n; i++)
        ft[i] = (ft[i] - fy[i]) / d;
    return MB_OK;
}

int mb_jac_groups(ptrdiff_t n, const unsigned char *pattern, int *groups)
{
    /* greedy column grouping: a column joins the first group whose rows it does not
     * share; rows used by group g are tracked in a n x (groups so far) bitmap */
    unsigned char *used = calloc((size_t)(n * n), 1);
    if (!used)
        return -1;
    int ng = 0;
    for (ptrdiff_t j = 0; j < n; j++) {
        int g;
        for (g = 0; g < ng; g++) {
            int clash = 0;
            for (ptrdiff_t i = 0; i < n && !clash; i++)
                clash = pattern[j * n + i] && used[(ptrdiff_t)g * n + i];
            if (!clash)
                break;
        }
        if (g == ng)
            ng++;
        groups[j] = g;
        for (ptrdiff_t i = 0; i < n; i++)
            if (pattern[j * n + i])
                used[(ptrdiff_t)g * n + i] = 1;
    }
    free(used);
    return ng;
}
