/* The one step loop (see driver.h).  Methods supply step/dense/accept; this file
 * owns acceptance, step-size selection, step bounds, step doubling, output and
 * statistics; events and switching events are in driver_events.c, the dense output
 * in driver_dense.c (the state of a run they share: driver_run.h). */
#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "driver_run.h"
#include "events.h"
#include "norm.h"
#include "result.h"
#include "status.h"

/* The problem's step bound at the current point (t, r->y) (problem.h), evaluated
 * once per point with f0 = f(t, y), or, for a method that never needs f0, the
 * derivative of the last step's polynomial at its end when there is one (else an
 * evaluation of f); +inf without a bound. */
static int step_bound_at(run *r, double t, double *h_max)
{
    *h_max = INFINITY;
    if (!r->p->step_bound)
        return MB_OK;
    if (!r->h_bound_ok) {
        const double *f = r->f0;
        if (!r->s.f0_ok && !(r->m->flags & MB_USES_F0) && r->deriv_ok && r->dense_deg >= 1) {
            /* a method that does not need f(t, y) (bdf): the derivative of the last
             * step's interpolant at its end, f to the method's Newton tolerance,
             * instead of an evaluation of f per step */
            ptrdiff_t n = r->n;
            for (ptrdiff_t i = 0; i < n; i++) {
                double v = 0.0;
                for (int k = r->dense_deg; k >= 1; k--)
                    v += k * r->C[(ptrdiff_t)k * n + i];
                r->f_mid[i] = v / r->h_dense;
            }
            f = r->f_mid;
        } else {
            int rc = mb_drv_ensure_f0(r, t);
            if (rc != MB_OK)
                return rc;
        }
        double hb = INFINITY;
        int rc = r->p->step_bound(t, r->y, f, &hb, r->p->ctx);
        if (rc != 0)
            return mb_fail(&r->s, rc == MB_ERR_CALLBACK ? rc : MB_ERR_RHS_FAIL,
                           "The step bound of the problem failed (code %d) at t = %.17g.", rc,
                           t);
        if (!(hb > 0))
            return mb_fail(&r->s, MB_ERR_RHS_FAIL,
                           "The step bound of the problem is %g at t = %.17g: it must be "
                           "positive (+inf: none).", hb, t);
        r->h_bound = hb;
        r->h_bound_ok = 1;
    }
    *h_max = r->h_bound;
    return MB_OK;
}

/* Hairer-Norsett-Wanner initial step (Solving ODEs I, II.4) */
static int initial_step(run *r, double t0, double tf, int order, double *h_out)
{
    ptrdiff_t n = r->n;
    const double *atol = r->o->atol;
    double rtol = r->o->rtol;
    double span = fabs(tf - t0);
    if (r->p->mass) {
        /* f is M y', not y': the derivative-based estimate does not apply; start
         * small as RADAU5 does and let the controller grow the step (tf may be
         * infinite: a terminal event ends the run) */
        *h_out = fmin(1e-6 * fmax(1.0, isfinite(span) ? span : fabs(t0)), span);
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
    for (ptrdiff_t i = 0; i < n; i++)
        r->y_mid[i] = r->y[i] + r->dir * h0 * r->f0[i];
    rc = mb_rhs(&r->s, t0 + r->dir * h0, r->y_mid, r->f_mid);
    if (rc != MB_OK)
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

/* step-doubling: one step of h and two of h/2; err = (y2 - y1)/(2^p - 1) */
static int step_doubled(run *r, double t, double h)
{
    mb_stepper *s = &r->s;
    ptrdiff_t n = r->n;
    int rc = s->m->step(s, t, h, r->y, r->y_full, r->err);
    if (rc != MB_OK)
        return rc;
    rc = s->m->step(s, t, 0.5 * h, r->y, r->y_mid, r->err);
    if (rc != MB_OK)
        return rc;
    double *f0_save = s->f0;
    int f0ok_save = s->f0_ok;
    if (s->m->flags & MB_USES_F0) {
        if (s->f1_ok) {
            memcpy(r->f_mid, s->f1, (size_t)n * sizeof(double));
        } else {
            rc = mb_rhs(s, t + 0.5 * h, r->y_mid, r->f_mid);
            if (rc != MB_OK)
                return rc;
        }
        s->f0 = r->f_mid;
        s->f0_ok = 1;
    }
    s->f1_ok = 0;
    rc = s->m->step(s, t + 0.5 * h, 0.5 * h, r->y_mid, r->y_new, r->err);
    s->f0 = f0_save;
    s->f0_ok = f0ok_save;
    if (rc != MB_OK)
        return rc;
    double c = 1.0 / (ldexp(1.0, s->order) - 1.0);  /* s->order: init() may set it */
    for (ptrdiff_t i = 0; i < n; i++)
        r->err[i] = (r->y_new[i] - r->y_full[i]) * c;
    return MB_OK;
}

static int want_dense(const run *r)
{
    return r->o->dense_output || r->o->t_eval || r->o->n_events > 0;
}

/* The driver's work block: one layout, used both to size the block (b == NULL:
 * nothing is assigned, the count of doubles is returned) and to carve it, so that
 * the size and the pointers handed out can never disagree. */
static size_t layout(run *r, double *b, ptrdiff_t n, ptrdiff_t ne, int degmax, size_t wsz,
                     size_t rec_len, size_t rec_work)
{
    size_t off = 0;
#define CARVE(ptr, count)                        \
    do {                                         \
        size_t c_ = (size_t)(count);             \
        if (b) (ptr) = c_ ? b + off : NULL;      \
        off += c_;                               \
    } while (0)
    CARVE(r->y, n);
    CARVE(r->y_new, n);
    CARVE(r->err, n);
    CARVE(r->f0, n);
    CARVE(r->f1, n);
    CARVE(r->ybuf, 2 * n);
    CARVE(r->y_full, n);
    CARVE(r->y_mid, n);
    CARVE(r->f_mid, n);
    CARVE(r->C, (degmax + 1) * n);
    CARVE(r->s.jac_work, 3 * n);
    CARVE(r->g_old, ne);
    CARVE(r->g_new, ne);
    CARVE(r->g_buf, 2 * ne);   /* values, then root thetas */
    CARVE(r->g_smp, 2 * ne);   /* interior samples of the switching test */
    CARVE(r->ev_last, ne);     /* time of the last reported root per event */
    CARVE(r->rec, rec_len);
    CARVE(r->rec_work, rec_work);
    CARVE(r->s.work, wsz);
#undef CARVE
    return off;
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

/* The driver's work size in doubles for method m on problem p with ne events
 * (the formula of layout(); exposed for the tests of its extremes). */
size_t mb_driver_work_size(const mb_method *m, const mb_problem *p, ptrdiff_t ne, int record)
{
    run r;
    mb_problem copy;
    p = method_view(m, p, &copy);
    int degmax = m->max_dense_degree > 3 ? m->max_dense_degree : 3;
    size_t wsz = m->work_size ? m->work_size(p, m->data) : 0;
    size_t rec_work = 0, rec_len = record ? m->dense_record_size(p->n, m->data, &rec_work) : 0;
    return layout(&r, NULL, p->n, ne > 0 ? ne : 0, degmax, wsz, rec_len, rec_work);
}

static int setup(run *r, const mb_method *m, const mb_problem *p, const mb_options *o,
                 void **block)
{
    ptrdiff_t n = p->n, ne = o->n_events > 0 ? o->n_events : 0;
    int degmax = m->max_dense_degree > 3 ? m->max_dense_degree : 3;
    size_t wsz = m->work_size ? m->work_size(p, m->data) : 0;
    size_t rec_work = 0, rec_len = r->record ? m->dense_record_size(n, m->data, &rec_work) : 0;
    size_t nd = layout(r, NULL, n, ne, degmax, wsz, rec_len, rec_work);
    double *b = calloc(nd ? nd : 1, sizeof(double));
    ptrdiff_t *hits = calloc((size_t)ne + 1, sizeof(ptrdiff_t));
    int *found = calloc((size_t)ne + 1, sizeof(int));
    *block = b;
    r->ev_hits = hits;
    r->ev_found = found;
    if (!b || !hits || !found)
        return MB_ERR_MEM;
    layout(r, b, n, ne, degmax, wsz, rec_len, rec_work);
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
        double steps = ceil(fabs(tf - t0) / o->h - 1e-9);
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

int mb_driver_run(const mb_method *m, const mb_problem *p, double t0, double tf,
                  const double *y0, const mb_options *o, mb_result *res)
{
    run r;
    memset(&r, 0, sizeof r);
    void *block = NULL;
    mb_problem copy;
    p = method_view(m, p, &copy);
    ptrdiff_t n = p->n;
    int rc = mb_result_init(res, n, o->n_events > 0 ? o->n_events : 0);
    if (rc != MB_OK)
        goto done;
    res->status = MB_OK;
    res->message[0] = '\0';
    r.m = m; r.p = p; r.o = o; r.res = res; r.n = n;
    r.dir = tf >= t0 ? 1.0 : -1.0;
    int fixed = o->h > 0;
    int doubling = !fixed && !(m->flags & MB_EMBEDDED);
    r.record = !doubling && m->dense_record_size && m->dense_record && m->dense_record_eval;
    r.hermite = !r.record && (doubling || (m->flags & MB_DENSE_HERMITE) || !m->dense);
    for (ptrdiff_t i = 0; o->switching && i < o->n_events; i++)
        r.n_switch += o->switching[i] != 0;
    if ((rc = mb_options_check(o, n, t0, tf, res->message, sizeof res->message)) != MB_OK)
        goto done;
    rc = setup(&r, m, p, o, &block);
    if (rc != MB_OK)
        goto done;
    for (ptrdiff_t i = 0; i < o->n_events; i++)
        r.ev_last[i] = NAN;

    mb_stepper *s = &r.s;
    s->m = m; s->p = p; s->n = n;
    s->f0 = r.f0; s->f1 = r.f1;
    s->order = m->order;
    s->h_fail_factor = 0.25;
    s->err_wanted = !fixed;
    if (p->jac_sparsity) {
        r.jac_groups = malloc((size_t)n * sizeof(int));
        if (!r.jac_groups) { rc = MB_ERR_MEM; goto done; }
        s->n_groups = mb_jac_groups(n, p->jac_sparsity, r.jac_groups);
        if (s->n_groups < 0) { rc = MB_ERR_MEM; goto done; }
        s->jac_groups = r.jac_groups;
    }
    s->atol = o->atol; s->rtol = o->rtol; s->rtol_v = o->rtol_v;
    s->stats = &res->stats;
    s->method_options = o->method_options;
    s->msg = res->message; s->msg_len = sizeof res->message;
    memcpy(r.y, y0, (size_t)n * sizeof(double));

    for (ptrdiff_t i = 0; p->dae_index && !(m->flags & MB_DAE) && i < n; i++)
        if (p->dae_index[i] >= 2) {
            rc = mb_fail(s, MB_ERR_NOT_SUPPORTED,
                         "Method '%s' does not solve DAEs of index 2 or 3 (component %td has "
                         "index %d).", m->name, i, (int)p->dae_index[i]);
            goto done;
        }
    if (!fixed && (m->flags & MB_FIXED_ONLY)) {
        rc = mb_fail(s, MB_ERR_NOT_SUPPORTED, "Method '%s' runs with a fixed step only: give h.", m->name);
        goto done;
    }
    if (m->init && (rc = m->init(s)) != MB_OK)
        goto done;

    /* output of the initial point */
    if (o->t_eval) {
        while (r.next_eval < o->n_eval && o->t_eval[r.next_eval] == t0) {
            if ((rc = mb_result_push_point(res, t0, r.y)) != MB_OK) goto done;
            r.next_eval++;
        }
    } else if ((rc = mb_result_push_point(res, t0, r.y)) != MB_OK) {
        goto done;
    }
    if (o->n_events > 0 && (rc = mb_drv_eval_events(&r, t0, r.y, r.g_old)) != MB_OK)
        goto done;
    if (t0 == tf)
        goto done;

    mb_controller ctl;
    mb_controller_kind kind = o->controller != MB_CONTROLLER_DEFAULT ? o->controller
                              : m->controller ? (mb_controller_kind)m->controller
                                              : MB_CONTROLLER_PI;
    mb_controller_init(&ctl, kind, o->safety, o->fac_min, o->fac_max);
    double span = fabs(tf - t0);
    double max_step = o->max_step > 0 ? o->max_step : INFINITY;
    double h_abs;
    long n_fixed = 0, k_fixed = 0;
    long limit = o->max_steps > 0 ? o->max_steps : MB_DEFAULT_MAX_STEPS;
    if (fixed) {
        /* at most limit steps (mb_options_check): no overflow */
        n_fixed = (long)ceil(span / o->h - 1e-9);
        if (n_fixed < 1) n_fixed = 1;
        h_abs = o->h;
    } else if (o->first_step > 0) {
        h_abs = fmin(o->first_step, span);
    } else {
        /* the order of the error estimate sets the scale, as SciPy's
         * select_initial_step (error_estimator_order); variable-order methods start
         * at their initial order s->order */
        int q0 = s->order;
        if (!(m->flags & MB_VARIABLE_ORDER) && m->error_order > 0 && m->error_order < q0)
            q0 = m->error_order;
        if ((rc = initial_step(&r, t0, tf, q0, &h_abs)) != MB_OK)
            goto done;
    }
    h_abs = fmin(h_abs, max_step);

    double t = t0;
    /* switching events (driver.h): a step that contains a switch is retried, first
     * ending just before it, then with a short step across it (phase2), which is
     * accepted without the error test and cut at the switch */
    int phase2 = 0;
    double h_aim = 0.0;     /* fixed steps: size of the next attempt when aiming at a switch */
    double h_resume = 0.0;  /* adaptive: step size to go on with after the switch */
    int after_reject = 0;
    double t_sw_retry = NAN;  /* start of the last step retried to end before a switch */
    for (;;) {
        /* step attempts; a fixed-step run counts those off its grid (at switches),
         * its n_fixed grid steps being within the limit already */
        long used = res->stats.nsteps + res->stats.nreject + res->stats.nfail -
                    (fixed ? k_fixed : 0);
        if (used >= limit) {
            rc = mb_fail(s, MB_ERR_MAX_STEPS,
                         "The maximum number of steps (%ld) was reached at t = %.17g.", limit, t);
            goto done;
        }
        if (o->monitor && (rc = o->monitor(t, o->monitor_ctx)) != MB_OK) {
            if (rc > 0)
                rc = MB_ERR_INTERRUPTED;
            if (res->message[0] == '\0')
                mb_fail(s, rc, "%s (at t = %.17g)", mb_status_str(rc), t);
            goto done;
        }
        double t_new;
        int last = 0, on_grid = 0;
        /* spacing of floats at t (not at the span's end: a run from 0 to 1e11
         * must be able to take small steps near 0) */
        double min_h = mb_min_step(t);
        if (o->min_step > min_h) min_h = o->min_step;
        /* continuous collision detection: no step longer than the problem admits
         * from (t, y) (problem.h step_bound); not the short step across a switch */
        double h_max_pt = INFINITY;
        if (!phase2 && (rc = step_bound_at(&r, t, &h_max_pt)) != MB_OK)
            goto done;
        if (fixed && h_aim > 0.0) {
            t_new = t + r.dir * h_aim;
            h_aim = 0.0;
        } else if (fixed) {
            k_fixed++;
            on_grid = 1;
            last = k_fixed >= n_fixed;
            t_new = last ? tf : t0 + r.dir * (double)k_fixed * o->h;
            if (t_new == t) {
                rc = mb_fail(s, MB_ERR_STEP_TOO_SMALL,
                             "The fixed step h = %.3g cannot advance t = %.17g (below the spacing "
                             "of numbers there).", o->h, t);
                goto done;
            }
        } else {
            if (h_abs > h_max_pt)
                h_abs = fmax(h_max_pt, min_h);
            if (h_abs < min_h) {
                rc = mb_fail(s, MB_ERR_STEP_TOO_SMALL,
                             "Required step size is less than spacing between numbers (h = %.3g at t = %.17g).",
                             h_abs, t);
                goto done;
            }
            t_new = t + r.dir * h_abs;
            if (r.dir * (t_new - tf) >= 0 || fabs(tf - t_new) < fmax(min_h, mb_min_step(tf))) {
                t_new = tf;
                last = 1;
            }
        }
        if (fixed && fabs(t_new - t) > h_max_pt) {
            /* off the grid: equal steps within the bound up to the point aimed at */
            double d = fabs(t_new - t), k = ceil(d / fmax(h_max_pt, min_h));
            t_new = t + r.dir * (d / k);
            if (on_grid)
                k_fixed--;  /* the grid point is still ahead */
            on_grid = 0;
            last = 0;
        }
        double h = t_new - t;

        if ((m->flags & MB_USES_F0) && (rc = mb_drv_ensure_f0(&r, t)) != MB_OK)
            goto done;
        s->f1_ok = 0;
        s->safety_scale = 1.0;
        s->h_index = fabs(h);
        s->t_last = t; s->h_last = h; s->y_last = r.y;
        r.g_new_ok = 0;
        r.dense_ok = 0;
        rc = doubling ? step_doubled(&r, t, h) : m->step(s, t, h, r.y, r.y_new, r.err);
        if (rc < 0)
            goto done;
        if (rc > 0) {
            res->stats.nfail++;
            if (fixed) {
                rc = mb_fail(s, MB_ERR_CONV, "A fixed step of size %.3g failed at t = %.17g.", h, t);
                goto done;
            }
            h_abs *= s->h_fail_factor > 0 && s->h_fail_factor < 1 ? s->h_fail_factor : 0.25;
            s->h_fail_factor = 0.25;
            after_reject = 1;
            phase2 = 0;
            rc = MB_OK;
            continue;
        }

        double err_norm = 0.0, factor = 1.0;
        int accepted = 1;
        if (!fixed) {
            err_norm = mb_norm(s, r.err, r.y, r.y_new);  /* scaled for DAEs (dae_index) */
            if (o->error_per_unit_step)
                err_norm /= fabs(h);
            accepted = err_norm <= 1.0;
        }
        if (r.n_switch > 0 && !phase2) {
            /* A switch inside the step: its stages (and its error estimate) mix the two
             * regimes, with an error O(h |jump of f|) however little of the step lies
             * past the switch.  Retry ending just before the switch; when the switch
             * is that close to the start, cross it with a step of twice the distance,
             * short enough for any error, and cut that step at the switch. */
            double th;
            /* interior samples on a step that passed its error test; on a method's
             * dense records (llm: an exponential per sample, 3x the run time) only
             * when the problem has no step bound to rely on */
            int sample = accepted && !(r.record && p->step_bound);
            if ((rc = mb_drv_switching_root(&r, t, h, sample, &th)) != MB_OK)
                goto done;
            if (th > 0.0) {
                double d = th * fabs(h), ulp = DBL_EPSILON * fmax(fabs(t), fabs(t_new)), h_try;
                /* cross the switch when it is too close to stop short of it: within
                 * a few ulps, or so close that the shortened step would fall below the
                 * driver's minimum step size */
                if (d <= 1e-8 * fabs(h) || d <= 64.0 * ulp ||
                    d - fmax(1e-10 * d, 16.0 * ulp) < min_h) {
                    h_try = fmax(2.0 * d, d + 4.0 * min_h);
                    phase2 = 1;
                    h_resume = fabs(h);  /* after the switch, go on with this step */
                } else {
                    h_try = d - fmax(1e-10 * d, 16.0 * ulp);
                    /* A retry from t that again contains a switch and fails its error
                     * test: its dense output cannot place the root.  (A BDF step far
                     * into a stiff contact ends on the contact's equilibrium, just past
                     * the switch, and its interpolant through that end puts the root
                     * just before the end: each retry was 1e-2..1e-10 of a step shorter,
                     * up to 1e6 retries per contact.)  Retry no longer than the error
                     * test allows. */
                    if (!fixed && !accepted && t == t_sw_retry) {
                        int q = m->error_order > 0 ? m->error_order : m->order;
                        if (m->order < q) q = m->order;
                        if ((m->flags & MB_VARIABLE_ORDER) && s->order >= 1) q = s->order;
                        double k = o->error_per_unit_step ? q : q + 1;
                        h_try = fmin(h_try, fabs(h) * mb_controller_factor(&ctl, h, err_norm, k, 0, 1));
                    }
                    t_sw_retry = t;
                }
                res->stats.nreject++;
                if (fixed) {
                    h_aim = h_try;
                    if (on_grid)
                        k_fixed--;  /* the grid point is still ahead */
                } else {
                    h_abs = h_try;
                    after_reject = 1;
                }
                continue;
            }
        }
        if (!fixed && !phase2) {
            if (m->after_step && (m->flags & MB_VARIABLE_ORDER)) {
                rc = m->after_step(s, h, err_norm, accepted, &factor);
                if (rc < 0) goto done;
                if (!accepted && factor > 1.0) factor = 0.5;
            } else {
                int eo = s->error_order > 0 ? s->error_order : m->error_order;
                int q = eo > 0 ? eo : m->order;
                if (m->order < q) q = m->order;
                double k = o->error_per_unit_step ? q : q + 1;
                ctl.safety_scale = s->safety_scale;
                factor = mb_controller_factor(&ctl, h, err_norm, k, accepted, after_reject);
                ctl.safety_scale = 1.0;
                /* keep h (and so the method's LU) for small growth, as RADAU5 does */
                if (accepted && (m->flags & MB_LU_REUSE) && factor >= 1.0 && factor <= 1.2)
                    factor = 1.0;
            }
            if (!accepted) {
                res->stats.nreject++;
                h_abs = fabs(h) * factor;
                after_reject = 1;
                continue;
            }
        }

        /* the problem's check of the step's end (problem.h): > 0 rejects the step */
        if (p->check) {
            rc = p->check(t_new, r.y_new, p->ctx);
            if (rc < 0) {
                rc = mb_fail(s, rc == MB_ERR_CALLBACK ? rc : MB_ERR_RHS_FAIL,
                             "The check of the step's end at t = %.17g failed (code %d).", t_new,
                             rc);
                goto done;
            }
            if (rc > 0) {
                res->stats.nfail++;
                if (fixed) {
                    rc = mb_fail(s, MB_ERR_CONV, "A fixed step of size %.3g failed at t = %.17g "
                                 "(the check of its end).", h, t);
                    goto done;
                }
                h_abs = fabs(h) * 0.25;
                after_reject = 1;
                phase2 = 0;
                rc = MB_OK;
                continue;
            }
        }

        /* accepted */
        after_reject = 0;
        phase2 = 0;
        int terminated = 0, cut = 0;
        double t_end = t_new;
        if (want_dense(&r)) {
            if ((rc = mb_drv_build_dense(&r, t, h)) != MB_OK) goto done;
            if ((rc = mb_drv_handle_events(&r, t, h, &t_end, &terminated, &cut)) != MB_OK) goto done;
            if (o->dense_output) {
                rc = r.record ? mb_result_push_record(res, t, h, r.rec, r.rec_len)
                              : mb_result_push_dense(res, t, h, r.dense_deg, r.C);
                if (rc != MB_OK)
                    goto done;
            }
            if (o->t_eval && (rc = mb_drv_emit_eval(&r, t, h, t_end, r.y_new)) != MB_OK) goto done;
        }
        if (t_end != t_new) {  /* cut short: not the last step, and keep the fixed grid */
            last = terminated;
            if (on_grid && !terminated)
                k_fixed--;
        }
        int recoord = 0;   /* the projection changed the coordinates of y (problem.h) */
        if (p->project) {  /* e.g. back onto a mechanism's constraints */
            rc = p->project(t_end, r.y_new, p->ctx);
            if (rc == MB_NEW_COORDINATES) {
                recoord = 1;
                rc = 0;
            }
            if (rc != 0) {
                rc = mb_fail(s, rc == MB_ERR_CALLBACK ? rc : MB_ERR_CONV,
                             "The projection after the step to t = %.17g failed (code %d).", t_end, rc);
                goto done;
            }
            s->f1_ok = 0;  /* f(t_end, y) changed with y */
        }
        if (!o->t_eval && (rc = mb_result_push_point(res, t_end, r.y_new)) != MB_OK)
            goto done;
        if ((rc = mb_result_push_hist(res, t_end, cut ? t_end - t : h, err_norm)) != MB_OK)
            goto done;
        if (m->accept && (rc = m->accept(s, t_end, r.y_new)) != MB_OK)
            goto done;
        res->stats.nsteps++;
        if (cut && !terminated) {  /* restart at the switch: drop histories and caches */
            res->stats.nrestart++;
            s->order = m->order;
            if (m->init && (rc = m->init(s)) != MB_OK)
                goto done;
            ctl.has_prev = 0;
        } else if (recoord) {  /* new coordinates: histories and kept Jacobians are void */
            s->order = m->order;
            if (m->init && (rc = m->init(s)) != MB_OK)
                goto done;
        }

        /* advance */
        double *tmp = r.y; r.y = r.y_new; r.y_new = tmp;
        t = t_end;
        r.h_bound_ok = 0;
        r.deriv_ok = r.dense_ok && !r.record && t_end == t_new && !cut && !recoord;
        if (s->f1_ok) {
            tmp = r.f0; r.f0 = r.f1; r.f1 = tmp;
            s->f0 = r.f0; s->f1 = r.f1;
            s->f0_ok = 1;
        } else {
            s->f0_ok = 0;
        }
        s->f1_ok = 0;
        if (o->n_events > 0) {
            tmp = r.g_old; r.g_old = r.g_new; r.g_new = tmp;
            /* g at a point inside the step (terminal or switching root) */
            if ((terminated || t != t_new) && (rc = mb_drv_eval_events(&r, t, r.y, r.g_old)) != MB_OK)
                goto done;
        }
        if (terminated) {
            rc = MB_TERMINATED;
            goto done;
        }
        if (last)
            break;
        if (!fixed)
            h_abs = fmin(cut && h_resume > 0.0 ? h_resume : fabs(h) * factor, max_step);
        if (cut)
            h_resume = 0.0;
    }
    rc = MB_OK;

done:
    res->status = rc;
    if (rc != MB_OK && res->message[0] == '\0')
        strncpy(res->message, mb_status_str(rc), sizeof res->message - 1);
    if (rc == MB_OK)
        strncpy(res->message, mb_status_str(rc), sizeof res->message - 1);
    free(block);
    free(r.ev_hits);
    free(r.ev_found);
    free(r.jac_groups);
    return rc;
}
