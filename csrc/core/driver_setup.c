/* Setting up and finishing a run of the driver (driver_run.h): the options check,
 * the work block, the stepper, the output at t0 and the initial events, the
 * controller and the first step size; the smallest step (mb_min_step). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "carve.h"
#include "driver_run.h"
#include "norm.h"
#include "result.h"
#include "status.h"

/* Fixed steps: a span that exceeds a whole number k of steps h by at most 1e-9 h is
 * covered by k steps (the last one ends on tf), not by k + 1 with a sliver of a last
 * step.  mb_options_check counts the steps the same way. */
#define MB_FIXED_STEPS_SLACK 1e-9

/* The first step of a problem with a mass matrix, relative to max(1, |span|) (as
 * RADAU5: start small and let the controller grow the step). */
#define MB_MASS_FIRST_STEP 1e-6

/* The driver's work block: one layout, used both to size the block (c->base == NULL:
 * the pointers are NULL, the count of doubles is returned) and to carve it, so that
 * the size and the pointers handed out can never disagree. */
static size_t layout(mb_carver *c, ptrdiff_t n, ptrdiff_t ne, int degmax, size_t wsz,
                     size_t rec_len, size_t rec_work, run *r)
{
    r->y = mb_carve(c, (size_t)n);
    r->y_new = mb_carve(c, (size_t)n);
    r->err = mb_carve(c, (size_t)n);
    r->f0 = mb_carve(c, (size_t)n);
    r->f1 = mb_carve(c, (size_t)n);
    r->ybuf = mb_carve(c, (size_t)(2 * n));
    r->y_full = mb_carve(c, (size_t)n);
    r->y_mid = mb_carve(c, (size_t)n);
    r->f_mid = mb_carve(c, (size_t)n);
    r->C = mb_carve(c, (size_t)((degmax + 1) * n));
    r->s.jac_work = mb_carve(c, (size_t)(3 * n));
    r->g_old = mb_carve(c, (size_t)ne);
    r->g_new = mb_carve(c, (size_t)ne);
    r->g_buf = mb_carve(c, (size_t)(2 * ne));  /* values, then root thetas */
    r->g_smp = mb_carve(c, (size_t)(2 * ne));  /* interior samples of the switching test */
    r->ev_last = mb_carve(c, (size_t)ne);      /* time of the last reported root per event */
    r->rec = mb_carve(c, rec_len);
    r->rec_work = mb_carve(c, rec_work);
    r->s.work = mb_carve(c, wsz);
    return c->off;
}

/* The problem as method m sees it: without p->linsys when m does not use it or the
 * problem has a mass matrix (method.h MB_LINSYS); *copy holds the altered problem. */
static const mb_problem *method_view(const mb_method *m, const mb_problem *p, mb_problem *copy)
{
    if (!p->linsys || ((m->flags & MB_LINSYS) && !p->mass))
        return p;
    *copy = *p;
    copy->linsys = NULL;
    return copy;
}

/* the highest degree of a dense-output polynomial: the method's, at least Hermite's 3 */
static int max_dense_degree(const mb_method *m)
{
    return m->max_dense_degree > 3 ? m->max_dense_degree : 3;
}

/* The driver's work size in doubles for method m on problem p with ne events
 * (the formula of layout(); exposed for the tests of its extremes). */
size_t mb_driver_work_size(const mb_method *m, const mb_problem *p, ptrdiff_t ne, int record)
{
    run r;
    mb_problem copy;
    p = method_view(m, p, &copy);
    size_t wsz = m->work_size ? m->work_size(p, m->data) : 0;
    size_t rec_work = 0, rec_len = record ? m->dense_record_size(p->n, m->data, &rec_work) : 0;
    return layout(&(mb_carver){NULL, 0}, p->n, ne > 0 ? ne : 0, max_dense_degree(m), wsz,
                  rec_len, rec_work, &r);
}

/* the work block (r->block) carved by layout(), and the per-event counters */
static int alloc_work(run *r)
{
    const mb_method *m = r->m;
    const mb_problem *p = r->p;
    ptrdiff_t n = p->n, ne = r->o->n_events > 0 ? r->o->n_events : 0;
    int degmax = max_dense_degree(m);
    size_t wsz = m->work_size ? m->work_size(p, m->data) : 0;
    size_t rec_work = 0, rec_len = r->record ? m->dense_record_size(n, m->data, &rec_work) : 0;
    size_t nd = layout(&(mb_carver){NULL, 0}, n, ne, degmax, wsz, rec_len, rec_work, r);
    double *b = calloc(nd ? nd : 1, sizeof(double));
    ptrdiff_t *hits = calloc((size_t)ne + 1, sizeof(ptrdiff_t));
    int *found = calloc((size_t)ne + 1, sizeof(int));
    r->block = b;
    r->ev_hits = hits;
    r->ev_found = found;
    if (!b || !hits || !found)
        return MB_ERR_MEM;
    layout(&(mb_carver){b, 0}, n, ne, degmax, wsz, rec_len, rec_work, r);
    r->rec_len = (ptrdiff_t)rec_len;
    return MB_OK;
}

double mb_min_step(double t)
{
    double sp = fabs(nextafter(t, t >= 0 ? INFINITY : -INFINITY) - t);
    return 10.0 * sp;
}

int mb_options_check(const mb_options *o, ptrdiff_t n, double t0, double tf, char *msg,
                     size_t msg_len)
{
#define BAD(...) do { snprintf(msg, msg_len, __VA_ARGS__); return MB_ERR_ILL_INPUT; } while (0)
    if (n < 0)
        BAD("The state size must not be negative (got %td).", n);
    if (!isfinite(t0) || isnan(tf))
        BAD("t0 must be finite and tf a number (got %g, %g).", t0, tf);
    if (!(o->rtol > 0) || !isfinite(o->rtol))
        BAD("rtol must be positive and finite (got %g).", o->rtol);
    for (ptrdiff_t i = 0; o->rtol_v && i < n; i++)
        if (!(o->rtol_v[i] > 0) || !isfinite(o->rtol_v[i]))
            BAD("rtol must be positive and finite (rtol[%td] = %g).", i, o->rtol_v[i]);
    for (ptrdiff_t i = 0; i < n; i++)
        if (!o->atol || !(o->atol[i] >= 0) || !isfinite(o->atol[i]))
            BAD("atol must be given, non-negative and finite (atol[%td] = %g).", i,
                o->atol ? o->atol[i] : NAN);
    if (o->safety != 0 && !(o->safety > 0 && o->safety <= 1))
        BAD("safety must satisfy 0 < safety <= 1 (got %g).", o->safety);
    if (o->fac_min != 0 && !(o->fac_min > 0 && o->fac_min < 1))
        BAD("fac_min must satisfy 0 < fac_min < 1 (got %g).", o->fac_min);
    if (o->fac_max != 0 && !(o->fac_max > 1 && isfinite(o->fac_max)))
        BAD("fac_max must satisfy 1 < fac_max < inf (got %g).", o->fac_max);
    if (!(o->h >= 0) || !isfinite(o->h))
        BAD("The fixed step h must be positive and finite (got %g).", o->h);
    if (!(o->first_step >= 0) || !isfinite(o->first_step))
        BAD("first_step must be positive and finite (got %g).", o->first_step);
    if (!(o->max_step >= 0) || !(o->min_step >= 0) || !isfinite(o->min_step))
        BAD("max_step and min_step must be non-negative (got %g, %g).", o->max_step,
            o->min_step);
    if (o->n_eval < 0 || (o->n_eval > 0 && !o->t_eval))
        BAD("t_eval: %td points but no array.", o->n_eval);
    double lo = fmin(t0, tf), hi = fmax(t0, tf), dir = tf >= t0 ? 1.0 : -1.0;
    for (ptrdiff_t k = 0; k < o->n_eval; k++) {
        double te = o->t_eval[k];
        if (!(te >= lo && te <= hi))
            BAD("t_eval[%td] = %g is not a finite time inside [%g, %g].", k, te, lo, hi);
        if (k > 0 && !(dir * (te - o->t_eval[k - 1]) > 0))
            BAD("t_eval must be strictly monotone in the direction of integration "
                "(t_eval[%td] = %.17g after %.17g).", k, te, o->t_eval[k - 1]);
    }
    if (o->h > 0 && t0 != tf) {
        long limit = o->max_steps > 0 ? o->max_steps : MB_DEFAULT_MAX_STEPS;
        double steps = ceil(fabs(tf - t0) / o->h - MB_FIXED_STEPS_SLACK);
        if (!(steps <= (double)limit))
            BAD("The fixed step h = %g needs %.3g steps over [%g, %g], more than max_steps = "
                "%ld; give a larger h or a larger max_steps.", o->h, steps, t0, tf, limit);
        double t1 = t0 + dir * o->h;
        if (t1 == t0)
            BAD("The fixed step h = %g cannot advance t0 = %.17g (below its spacing).", o->h,
                t0);
    }
    return MB_OK;
#undef BAD
}

/* Hairer-Norsett-Wanner initial step (Solving ODEs I, II.4, with its constants) */
/* f_mid = f at the explicit Euler step of h0 from (t0, y0): the probe of the first step
 * size.  Where the problem is not defined there (a non-finite f: the step is far too
 * long), h0 shrinks tenfold until it is, or until it cannot shrink (the failure then
 * stands). */
static int probe(run *r, double t0, double *h0)
{
    for (;;) {
        for (ptrdiff_t i = 0; i < r->n; i++)
            r->y_mid[i] = r->y[i] + r->dir * *h0 * r->f0[i];
        int rc = mb_rhs(&r->s, t0 + r->dir * *h0, r->y_mid, r->f_mid);
        if (rc != MB_ERR_NONFINITE && !(rc == MB_ERR_RHS_FAIL && r->s.rhs_singular))
            return rc;
        r->res->message[0] = '\0';
        if (*h0 / 10 < mb_min_step(t0))
            return mb_fail(&r->s, rc, "Every probe of the first step from t = %.17g met a "
                           "non-finite value of (or a singular system inside) the right-hand "
                           "side, down to h = %.3g below the "
                           "spacing of numbers there.", t0, *h0);
        *h0 /= 10;
    }
}

static int initial_step(run *r, double t0, double tf, int order, double *h_out)
{
    ptrdiff_t n = r->n;
    const double *atol = r->o->atol;
    double rtol = r->o->rtol;
    double span = fabs(tf - t0);
    if (r->p->mass || r->p->mass_diag) {
        /* f is M y', not y': the derivative-based estimate does not apply (tf may be
         * infinite: a terminal event ends the run) */
        *h_out = fmin(MB_MASS_FIRST_STEP * fmax(1.0, isfinite(span) ? span : fabs(t0)), span);
        return MB_OK;
    }
    int rc = mb_drv_ensure_f0(r, t0);
    if (rc != MB_OK)
        return rc;
    const double *rv = r->o->rtol_v;
    double d0 = mb_wrms_norm_v(n, r->y, r->y, NULL, rtol, rv, atol);
    double d1 = mb_wrms_norm_v(n, r->f0, r->y, NULL, rtol, rv, atol);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > span) h0 = span;
    if ((rc = probe(r, t0, &h0)) != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < n; i++)
        r->ybuf[i] = r->f_mid[i] - r->f0[i];
    double d2 = mb_wrms_norm_v(n, r->ybuf, r->y, NULL, rtol, rv, atol) / h0;
    double dm = fmax(d1, d2);
    double h1 = dm <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 1.0 / (order + 1));
    double h = fmin(100.0 * h0, h1);
    if (h > span) h = span;
    *h_out = h;
    return MB_OK;
}

/* the run's fields, the options check and the work block */
static int init_run(run *r, const mb_method *m, const mb_problem *p, double t0, double tf,
                    const mb_options *o, mb_result *res)
{
    memset(r, 0, sizeof *r);
    r->res = res;
    p = method_view(m, p, &r->view);
    ptrdiff_t n = p->n;
    int rc = mb_result_init(res, n, o->n_events > 0 ? o->n_events : 0);
    if (rc != MB_OK)
        return rc;
    res->status = MB_OK;
    res->message[0] = '\0';
    r->m = m; r->p = p; r->o = o; r->n = n;
    r->t0 = t0; r->tf = tf; r->t = t0;
    r->dir = tf >= t0 ? 1.0 : -1.0;
    r->fixed = o->h > 0;
    r->doubling = !r->fixed && !(m->flags & MB_EMBEDDED);
    r->record = !r->doubling && m->dense_record_size && m->dense_record && m->dense_record_eval;
    r->hermite = !r->record && (r->doubling || (m->flags & MB_DENSE_HERMITE) || !m->dense);
    for (ptrdiff_t i = 0; o->switching && i < o->n_events; i++)
        r->n_switch += o->switching[i] != 0;
    if ((rc = mb_options_check(o, n, t0, tf, res->message, sizeof res->message)) != MB_OK)
        return rc;
    if ((rc = alloc_work(r)) != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < o->n_events; i++)
        r->ev_last[i] = NAN;
    return MB_OK;
}

/* the stepper (method.h) at y0, checked against what the method supports, and the
 * method's init() */
static int init_stepper(run *r, const double *y0)
{
    const mb_method *m = r->m;
    const mb_problem *p = r->p;
    const mb_options *o = r->o;
    ptrdiff_t n = r->n;
    mb_stepper *s = &r->s;
    s->m = m; s->p = p; s->n = n;
    s->f0 = r->f0; s->f1 = r->f1;
    s->order = m->order;
    s->h_fail_factor = MB_FAIL_SHRINK;
    s->err_wanted = !r->fixed;
    if (p->jac_sparsity) {
        r->jac_groups = malloc((size_t)n * sizeof(int));
        if (!r->jac_groups)
            return MB_ERR_MEM;
        s->n_groups = mb_jac_groups(n, p->jac_sparsity, r->jac_groups);
        if (s->n_groups < 0)
            return MB_ERR_MEM;
        s->jac_groups = r->jac_groups;
    }
    s->atol = o->atol; s->rtol = o->rtol; s->rtol_v = o->rtol_v;
    s->stats = &r->res->stats;
    s->method_options = o->method_options;
    s->msg = r->res->message; s->msg_len = sizeof r->res->message;
    memcpy(r->y, y0, (size_t)n * sizeof(double));

    for (ptrdiff_t i = 0; p->dae_index && !(m->flags & MB_DAE) && i < n; i++)
        if (p->dae_index[i] >= 2)
            return mb_fail(s, MB_ERR_NOT_SUPPORTED,
                           "Method '%s' does not solve DAEs of index 2 or 3 (component %td has "
                           "index %d).", m->name, i, (int)p->dae_index[i]);
    if (p->mass_diag && !(p->linsys && (m->flags & MB_LINSYS_MASS)))
        return mb_fail(s, MB_ERR_NOT_SUPPORTED,
                       "Method '%s' does not take the structured iteration matrices a M - J of "
                       "a problem with a diagonal mass matrix (sparse linear algebra of a DAE "
                       "formulation); use bdf, or dense linear algebra.", m->name);
    if (!r->fixed && (m->flags & MB_FIXED_ONLY))
        return mb_fail(s, MB_ERR_NOT_SUPPORTED,
                       "Method '%s' runs with a fixed step only: give h.", m->name);
    if (m->init)
        return m->init(s);
    return MB_OK;
}

/* the output at t0 (a point, or the t_eval points at t0) and the events' g there */
static int first_output(run *r)
{
    const mb_options *o = r->o;
    int rc;
    if (o->t_eval) {
        while (r->next_eval < o->n_eval && o->t_eval[r->next_eval] == r->t0) {
            if ((rc = mb_result_push_point(r->res, r->t0, r->y)) != MB_OK)
                return rc;
            r->next_eval++;
        }
    } else if ((rc = mb_result_push_point(r->res, r->t0, r->y)) != MB_OK) {
        return rc;
    }
    if (o->n_events > 0)
        return mb_drv_eval_events(r, r->t0, r->y, r->g_old);
    return MB_OK;
}

/* the controller, the bounds of the step loop and the first step size */
static int first_step(run *r)
{
    const mb_method *m = r->m;
    const mb_options *o = r->o;
    mb_controller_kind kind = o->controller != MB_CONTROLLER_DEFAULT ? o->controller
                              : m->controller ? (mb_controller_kind)m->controller
                                              : MB_CONTROLLER_PI;
    mb_controller_init(&r->ctl, kind, o->safety, o->fac_min, o->fac_max);
    double span = fabs(r->tf - r->t0);
    r->max_step = o->max_step > 0 ? o->max_step : INFINITY;
    r->limit = o->max_steps > 0 ? o->max_steps : MB_DEFAULT_MAX_STEPS;
    r->sw = (switch_state){.phase2 = 0, .h_aim = 0.0, .h_resume = 0.0, .t_retry = NAN};
    double h_abs;
    if (r->fixed) {
        /* at most limit steps (mb_options_check): no overflow */
        r->n_fixed = (long)ceil(span / o->h - MB_FIXED_STEPS_SLACK);
        if (r->n_fixed < 1) r->n_fixed = 1;
        h_abs = o->h;
    } else if (o->first_step > 0) {
        h_abs = fmin(o->first_step, span);
    } else {
        /* the order of the error estimate sets the scale, as SciPy's
         * select_initial_step (error_estimator_order); variable-order methods start
         * at their initial order s->order */
        int q0 = r->s.order;
        if (!(m->flags & MB_VARIABLE_ORDER) && m->error_order > 0 && m->error_order < q0)
            q0 = m->error_order;
        int rc = initial_step(r, r->t0, r->tf, q0, &h_abs);
        if (rc != MB_OK)
            return rc;
    }
    r->h_abs = fmin(h_abs, r->max_step);
    return MB_OK;
}

/* Phase 1 of a run (the step loop's phases: driver.c) */
int mb_drv_set_up(run *r, const mb_method *m, const mb_problem *p, double t0, double tf,
                  const double *y0, const mb_options *o, mb_result *res)
{
    int rc = init_run(r, m, p, t0, tf, o, res);
    if (rc == MB_OK)
        rc = init_stepper(r, y0);
    if (rc == MB_OK)
        rc = first_output(r);
    if (rc == MB_OK && t0 != tf)
        rc = first_step(r);
    return rc;
}

int mb_drv_finish(run *r, int rc)
{
    mb_result *res = r->res;
    res->status = rc;
    if (rc != MB_OK && res->message[0] == '\0')
        strncpy(res->message, mb_status_str(rc), sizeof res->message - 1);
    if (rc == MB_OK)
        strncpy(res->message, mb_status_str(rc), sizeof res->message - 1);
    free(r->block);
    free(r->ev_hits);
    free(r->ev_found);
    free(r->jac_groups);
    return rc;
}
