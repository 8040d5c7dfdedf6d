/* The one step loop (see driver.h).  Methods supply step/dense/accept; the driver
 * owns acceptance, step-size selection, step bounds, step doubling, output and
 * statistics.  This file is the loop, in the phases of a step attempt (as ARKODE's
 * arkEvolve: choose a step, attempt it, check it, complete it), after phase 1, the
 * set-up of the run (mb_drv_set_up, driver_setup.c):
 *
 *   2 choose_step     the next attempt: the step-attempt limit and the monitor, the
 *                     smallest step, the problem's step bound, the fixed-step grid or
 *                     an aim at a switch or the adaptive |h|, the last step
 *   3 attempt_step    the method's step (or step doubling), classified as accepted,
 *                     rejected by the error test or failed (the method's step returned
 *                     > 0, or the problem's check rejected the step's end)
 *   4 switch_retry    the retry of a step that contains a switching event (its state:
 *                     switch_state in driver_run.h)
 *   5 control_step    the step-size factor after an attempt
 *   6 complete_step   the output, events, projection, history and accept() of an
 *                     accepted step, a restart at a switch, and the advance to its end
 *
 * Setting up and finishing a run: driver_setup.c; events: driver_events.c; dense
 * output: driver_dense.c (the run's state: driver_run.h). */
#include <float.h>
#include <math.h>
#include <string.h>
#include "driver_run.h"
#include "result.h"
#include "status.h"

/* The switching retry (driver.h "Switching events").  A switch at a distance d past
 * the start t of a step of size h (ulp: the spacing of numbers at max(|t|, |t + h|),
 * min_h: the smallest step at t) is crossed when it lies that close to the start:
 * d <= MB_SWITCH_NEAR_REL |h|, d <= MB_SWITCH_NEAR_ULPS ulp, or the step ending short
 * of it would be below min_h; then with a step of
 * max(MB_SWITCH_CROSS_FACTOR d, d + MB_SWITCH_CROSS_MIN_STEPS min_h).  Otherwise the
 * retry ends short of it by max(MB_SWITCH_STOP_REL d, MB_SWITCH_STOP_ULPS ulp). */
#define MB_SWITCH_NEAR_REL 1e-8
#define MB_SWITCH_NEAR_ULPS 64.0
#define MB_SWITCH_CROSS_FACTOR 2.0
#define MB_SWITCH_CROSS_MIN_STEPS 4.0
#define MB_SWITCH_STOP_REL 1e-10
#define MB_SWITCH_STOP_ULPS 16.0

/* MB_LU_REUSE (method.h): the driver keeps h, and so the method's LU, when the
 * controller proposes a growth factor in [1, MB_LU_REUSE_GROWTH] (as RADAU5). */
#define MB_LU_REUSE_GROWTH 1.2

/* The factor on h after a step that failed its error test when a variable-order
 * method's after_step proposes growth instead. */
#define MB_ORDER_REJECT_SHRINK 0.5

/* One step attempt from the current point (r->t, r->y). */
typedef struct attempt {
    double t_new;      /* the end aimed at */
    double h;          /* t_new - t */
    double min_h;      /* the smallest step at t */
    int last;          /* the step ends the run at tf */
    int on_grid;       /* a fixed step that ends on a point of the grid */
    double err_norm;   /* the normalized error (0: fixed steps) */
    int accepted;      /* the step passed the error test */
    double factor;     /* h_next / h from step-size control (1: none) */
    /* complete_step */
    double t_end;      /* the step's end: t_new, or a terminal or switching root */
    int terminated;    /* a terminal event ended the run at t_end */
    int cut;           /* a switching event cut the step at t_end: the method restarts */
    int recoord;       /* the projection changed the coordinates of y (problem.h) */
} attempt;

/* How an attempt ended (attempt_step). */
typedef enum { STEP_ACCEPTED, STEP_REJECTED, STEP_FAILED } step_outcome;

/* ---- choose the next attempt ---- */

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

/* Whether the run may attempt another step: within the step-attempt limit (a
 * fixed-step run counts the attempts off its grid, at switches, its n_fixed grid
 * steps being within the limit already), and the monitor (Ctrl-C) lets it go on. */
static int check_budget(run *r)
{
    const mb_options *o = r->o;
    mb_result *res = r->res;
    long used = res->stats.nsteps + res->stats.nreject + res->stats.nfail -
                (r->fixed ? r->k_fixed : 0);
    if (used >= r->limit)
        return mb_fail(&r->s, MB_ERR_MAX_STEPS,
                       "The maximum number of steps (%ld) was reached at t = %.17g.", r->limit,
                       r->t);
    int rc;
    if (o->monitor && (rc = o->monitor(r->t, o->monitor_ctx)) != MB_OK) {
        if (rc > 0)
            rc = MB_ERR_INTERRUPTED;
        if (res->message[0] == '\0')
            mb_fail(&r->s, rc, "%s (at t = %.17g)", mb_status_str(rc), r->t);
        return rc;
    }
    return MB_OK;
}

/* a fixed step: to the point aimed at (a switch), else to the next grid point */
static int choose_fixed(run *r, attempt *a)
{
    if (r->sw.h_aim > 0.0) {
        a->t_new = r->t + r->dir * r->sw.h_aim;
        r->sw.h_aim = 0.0;
        return MB_OK;
    }
    r->k_fixed++;
    a->on_grid = 1;
    a->last = r->k_fixed >= r->n_fixed;
    a->t_new = a->last ? r->tf : r->t0 + r->dir * (double)r->k_fixed * r->o->h;
    if (a->t_new == r->t)
        return mb_fail(&r->s, MB_ERR_STEP_TOO_SMALL,
                       "The fixed step h = %.3g cannot advance t = %.17g (below the spacing "
                       "of numbers there).", r->o->h, r->t);
    return MB_OK;
}

/* A fixed step longer than the problem's bound h_max: equal steps within the bound
 * up to the point aimed at, off the grid. */
static void split_fixed(run *r, attempt *a, double h_max)
{
    double d = fabs(a->t_new - r->t), k = ceil(d / fmax(h_max, a->min_h));
    a->t_new = r->t + r->dir * (d / k);
    if (a->on_grid)
        r->k_fixed--;  /* the grid point is still ahead */
    a->on_grid = 0;
    a->last = 0;
}

/* an adaptive step of r->h_abs within the bound h_max, the last one ending on tf */
static int choose_adaptive(run *r, attempt *a, double h_max)
{
    if (r->h_abs > h_max)
        r->h_abs = fmax(h_max, a->min_h);
    if (r->h_abs < a->min_h)
        return r->nonfinite && r->nonfinite_t == r->t
                   ? mb_fail(&r->s, r->nonfinite_singular ? MB_ERR_RHS_FAIL : MB_ERR_NONFINITE,
                             "Every attempt from t = %.17g met a %s, down to h = %.3g below the "
                             "spacing of numbers there; the last: %s", r->t,
                             r->nonfinite_singular ? "singular linear system inside the "
                             "right-hand side" : "non-finite value", r->h_abs, r->nonfinite_msg)
                   : mb_fail(&r->s, MB_ERR_STEP_TOO_SMALL, "Required step size is less than "
                             "spacing between numbers (h = %.3g at t = %.17g).", r->h_abs, r->t);
    a->t_new = r->t + r->dir * r->h_abs;
    if (r->dir * (a->t_new - r->tf) >= 0 ||
        fabs(r->tf - a->t_new) < fmax(a->min_h, mb_min_step(r->tf))) {
        a->t_new = r->tf;
        a->last = 1;
    }
    return MB_OK;
}

/* Phase 2: the next attempt, its end a->t_new and size a->h. */
static int choose_step(run *r, attempt *a)
{
    int rc = check_budget(r);
    if (rc != MB_OK)
        return rc;
    a->last = 0;
    a->on_grid = 0;
    /* spacing of floats at t (not at the span's end: a run from 0 to 1e11 must be
     * able to take small steps near 0) */
    a->min_h = mb_min_step(r->t);
    if (r->o->min_step > a->min_h) a->min_h = r->o->min_step;
    /* continuous collision detection: no step longer than the problem admits from
     * (t, y) (problem.h step_bound); not the short step across a switch */
    double h_max = INFINITY;
    if (!r->sw.phase2 && (rc = step_bound_at(r, r->t, &h_max)) != MB_OK)
        return rc;
    rc = r->fixed ? choose_fixed(r, a) : choose_adaptive(r, a, h_max);
    if (rc != MB_OK)
        return rc;
    if (r->fixed && fabs(a->t_new - r->t) > h_max)
        split_fixed(r, a, h_max);
    a->h = a->t_new - r->t;
    return MB_OK;
}

/* ---- attempt the step ---- */

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

/* the method's step (or step doubling) from (t, y) to y_new, with its error in err:
 * < 0 fatal, > 0 a recoverable failure */
static int take_step(run *r, const attempt *a)
{
    mb_stepper *s = &r->s;
    double t = r->t, h = a->h;
    s->f1_ok = 0;
    s->safety_scale = 1.0;
    s->h_index = fabs(h);
    s->t_last = t; s->h_last = h; s->y_last = r->y;
    r->g_new_ok = 0;
    r->dense_ok = 0;
    return r->doubling ? step_doubled(r, t, h) : r->m->step(s, t, h, r->y, r->y_new, r->err);
}

/* A failed attempt (the method's step or the problem's check of its end): a fixed
 * step cannot shrink and ends the run (the message ends with why); an adaptive one
 * is retried with |h| = h_next. */
static int step_failed(run *r, const attempt *a, double h_next, const char *why)
{
    r->res->stats.nfail++;
    if (r->fixed)
        return mb_fail(&r->s, MB_ERR_CONV, "A fixed step of size %.3g failed at t = %.17g%s.",
                       a->h, r->t, why);
    r->h_abs = h_next;
    r->after_reject = 1;
    r->sw.phase2 = 0;
    return MB_OK;
}

/* the recoverable failure of the method's step: shrink by the method's factor, if it
 * set one, else by MB_FAIL_SHRINK */
static int method_failed(run *r, const attempt *a)
{
    mb_stepper *s = &r->s;
    double shrink = s->h_fail_factor > 0 && s->h_fail_factor < 1 ? s->h_fail_factor
                                                                 : MB_FAIL_SHRINK;
    int rc = step_failed(r, a, r->h_abs * shrink, "");
    s->h_fail_factor = MB_FAIL_SHRINK;
    return rc;
}

/* An adaptive attempt whose stages met a non-finite f or Jacobian (an explicit stage
 * or a Newton iterate outside the region where the problem is defined, an exp that
 * overflows for a step far too long), or a singular linear system inside f (the
 * saddle-point matrix of a mechanism at the stage state of a step too long), is rejected and retried smaller, as SciPy and
 * SUNDIALS do; its message is kept for the report when h cannot shrink further
 * (choose_adaptive).  A fixed step cannot shrink: the failure ends the run. */
static int nonfinite_attempt(run *r)
{
    mb_result *res = r->res;
    r->nonfinite = 1;
    r->nonfinite_singular = r->s.rhs_singular;
    r->s.rhs_singular = 0;
    r->nonfinite_t = r->t;
    size_t len = 0;
    while (len + 1 < sizeof r->nonfinite_msg && res->message[len]) len++;
    memcpy(r->nonfinite_msg, res->message, len);
    r->nonfinite_msg[len] = '\0';
    res->message[0] = '\0';
    return MB_RECOVERABLE;
}

/* The error test of an adaptive step (scaled for DAEs: dae_index); a fixed step
 * passes it. */
static void error_test(run *r, attempt *a)
{
    a->err_norm = 0.0;
    a->factor = 1.0;
    a->accepted = 1;
    if (r->fixed)
        return;
    a->err_norm = mb_norm(&r->s, r->err, r->y, r->y_new);
    if (r->o->error_per_unit_step)
        a->err_norm /= fabs(a->h);
    a->accepted = a->err_norm <= 1.0;
}

/* The problem's check of the step's end (problem.h): < 0 ends the run, > 0 rejects
 * the step as a failure (*failed). */
static int check_end(run *r, const attempt *a, int *failed)
{
    const mb_problem *p = r->p;
    *failed = 0;
    if (!p->check)
        return MB_OK;
    int rc = p->check(a->t_new, r->y_new, p->ctx);
    if (rc < 0)
        return mb_fail(&r->s, rc == MB_ERR_CALLBACK ? rc : MB_ERR_RHS_FAIL,
                       "The check of the step's end at t = %.17g failed (code %d).", a->t_new,
                       rc);
    if (rc == 0)
        return MB_OK;
    *failed = 1;
    return step_failed(r, a, fabs(a->h) * MB_FAIL_SHRINK, " (the check of its end)");
}

/* ---- the switching retry ---- */

/* The exponent k of the error test (q + 1 per step, q per unit step) with the order q
 * of the method's estimate; a variable-order method's current order */
static double switch_error_exponent(const run *r)
{
    const mb_method *m = r->m;
    int q = m->error_order > 0 ? m->error_order : m->order;
    if (m->order < q) q = m->order;
    if ((m->flags & MB_VARIABLE_ORDER) && r->s.order >= 1) q = r->s.order;
    return r->o->error_per_unit_step ? q : q + 1;
}

/* Phase 4, on a step that contains a switch (*retry): its stages (and its error
 * estimate) mix the two regimes, with an error O(h |jump of f|) however little of
 * the step lies past the switch.  Retry ending just before the switch; when the
 * switch is that close to the start, cross it with a step short enough for any
 * error (sw.phase2), which complete_step cuts at the switch.  The retry counts as a
 * rejected step. */
static int switch_retry(run *r, const attempt *a, int *retry)
{
    switch_state *sw = &r->sw;
    double t = r->t, h = a->h, th;
    *retry = 0;
    if (r->n_switch == 0 || sw->phase2)
        return MB_OK;
    /* interior samples on a step that passed its error test, also on a method's dense
     * records (llm: an exponential per sample, 2.6x the run time on the bouncing
     * balls): a problem's step bound limits how far a step enters a contact, not how
     * far it runs inside one, and the LLM, exact on each linear piece, sees no error
     * in a step that left a contact and entered it again (its linear spring model
     * pulls the body back) */
    int sample = a->accepted;
    int rc = mb_drv_switching_root(r, t, h, sample, &th);
    if (rc != MB_OK || !(th > 0.0))
        return rc;
    double d = th * fabs(h), ulp = DBL_EPSILON * fmax(fabs(t), fabs(a->t_new)), h_try;
    double margin = fmax(MB_SWITCH_STOP_REL * d, MB_SWITCH_STOP_ULPS * ulp);
    if (d <= MB_SWITCH_NEAR_REL * fabs(h) || d <= MB_SWITCH_NEAR_ULPS * ulp ||
        d - margin < a->min_h) {
        /* too close to stop short of it: cross it */
        h_try = fmax(MB_SWITCH_CROSS_FACTOR * d, d + MB_SWITCH_CROSS_MIN_STEPS * a->min_h);
        sw->phase2 = 1;
        sw->h_resume = fabs(h);  /* after the switch, go on with this step */
    } else {
        h_try = d - margin;
        /* A retry from t that again contains a switch and fails its error test: its
         * dense output cannot place the root.  (A BDF step far into a stiff contact
         * ends on the contact's equilibrium, just past the switch, and its
         * interpolant through that end puts the root just before the end: each retry
         * was 1e-2..1e-10 of a step shorter, up to 1e6 retries per contact.)  Retry
         * no longer than the error test allows. */
        if (!r->fixed && !a->accepted && t == sw->t_retry)
            h_try = fmin(h_try, fabs(h) * mb_controller_factor(&r->ctl, h, a->err_norm,
                                                               switch_error_exponent(r), 0, 1));
        /* An accepted retry from t that again contains a switch: the same, below the
         * error test (a BDF step at rtol 1e-2 into a contact passes it, and each
         * retry was 1e-3..1e-4 of a step shorter: 20,989 retries for one contact).
         * Bisect: the switch is then bracketed in log2(h / d) retries. */
        if (!r->fixed && a->accepted && t == sw->t_retry)
            h_try = fmin(h_try, 0.5 * fabs(h));
        sw->t_retry = t;
    }
    r->res->stats.nreject++;
    if (r->fixed) {
        sw->h_aim = h_try;
        if (a->on_grid)
            r->k_fixed--;  /* the grid point is still ahead */
    } else {
        r->h_abs = h_try;
        r->after_reject = 1;
    }
    *retry = 1;
    return MB_OK;
}

/* the step size after a step cut at a switch: that of the step the retry shortened
 * (sw.h_resume), once; else h_next */
static double switch_resume(switch_state *sw, int cut, double h_next)
{
    if (!cut)
        return h_next;
    double h = sw->h_resume > 0.0 ? sw->h_resume : h_next;
    sw->h_resume = 0.0;
    return h;
}

/* ---- step-size control ---- */

/* Phase 5: the factor h_next / h after an adaptive attempt (not the short step
 * across a switch), by the variable-order method's after_step or the controller. */
static int control_step(run *r, attempt *a)
{
    const mb_method *m = r->m;
    mb_stepper *s = &r->s;
    if (m->after_step && (m->flags & MB_VARIABLE_ORDER)) {
        int rc = m->after_step(s, a->h, a->err_norm, a->accepted, &a->factor);
        if (rc < 0)
            return rc;
        if (!a->accepted && a->factor > 1.0) a->factor = MB_ORDER_REJECT_SHRINK;
        return MB_OK;
    }
    int eo = s->error_order > 0 ? s->error_order : m->error_order;
    int q = eo > 0 ? eo : m->order;
    if (m->order < q) q = m->order;
    double k = r->o->error_per_unit_step ? q : q + 1;
    r->ctl.safety_scale = s->safety_scale;
    a->factor = mb_controller_factor(&r->ctl, a->h, a->err_norm, k, a->accepted,
                                     r->after_reject);
    r->ctl.safety_scale = 1.0;
    /* keep h (and so the method's LU) for small growth, as RADAU5 does */
    if (a->accepted && (m->flags & MB_LU_REUSE) && a->factor >= 1.0 &&
        a->factor <= MB_LU_REUSE_GROWTH)
        a->factor = 1.0;
    return MB_OK;
}

/* Phase 3: attempt the step chosen and classify it (*outcome), with the switching
 * retry (phase 4) and step-size control (phase 5); a rejected or failed attempt
 * leaves the size of the next one in r->h_abs (or the switching retry's aim).
 * Returns a status that ends the run, or MB_OK. */
static int attempt_step(run *r, attempt *a, step_outcome *outcome)
{
    *outcome = STEP_FAILED;
    int rc;
    if ((r->m->flags & MB_USES_F0) && (rc = mb_drv_ensure_f0(r, r->t)) != MB_OK)
        return rc;
    rc = take_step(r, a);
    if ((rc == MB_ERR_NONFINITE || (rc == MB_ERR_RHS_FAIL && r->s.rhs_singular)) && !r->fixed)
        rc = nonfinite_attempt(r);
    if (rc < 0)
        return rc;
    if (rc > 0)
        return method_failed(r, a);
    error_test(r, a);
    int retry, failed;
    if ((rc = switch_retry(r, a, &retry)) != MB_OK || retry) {
        *outcome = STEP_REJECTED;
        return rc;
    }
    if (!r->fixed && !r->sw.phase2) {
        if ((rc = control_step(r, a)) != MB_OK)
            return rc;
        if (!a->accepted) {
            *outcome = STEP_REJECTED;
            r->res->stats.nreject++;
            r->h_abs = fabs(a->h) * a->factor;
            r->after_reject = 1;
            return MB_OK;
        }
    }
    if ((rc = check_end(r, a, &failed)) != MB_OK || failed)
        return rc;
    *outcome = STEP_ACCEPTED;
    return MB_OK;
}

/* ---- complete the step ---- */

static int want_dense(const run *r)
{
    return r->o->dense_output || r->o->t_eval || r->o->n_events > 0 || r->keep_dense;
}

/* The dense output of the accepted step, its events (a terminal or switching root
 * may end it early: a->t_end), its dense record and its t_eval points. */
static int step_output(run *r, attempt *a)
{
    const mb_options *o = r->o;
    double t = r->t, h = a->h;
    a->terminated = 0;
    a->cut = 0;
    a->t_end = a->t_new;
    if (!want_dense(r))
        return MB_OK;
    int rc = mb_drv_build_dense(r, t, h);
    if (rc == MB_OK)
        rc = mb_drv_handle_events(r, t, h, &a->t_end, &a->terminated, &a->cut);
    if (rc == MB_OK && o->dense_output)
        rc = r->record ? mb_result_push_record(r->res, t, h, r->rec, r->rec_len)
                       : mb_result_push_dense(r->res, t, h, r->dense_deg, r->C);
    if (rc == MB_OK && o->t_eval)
        rc = mb_drv_emit_eval(r, t, h, a->t_end, r->y_new);
    return rc;
}

/* the problem's projection of the step's end (problem.h), e.g. back onto a
 * mechanism's constraints; a->recoord when it changed the coordinates of y */
static int project_end(run *r, attempt *a)
{
    const mb_problem *p = r->p;
    a->recoord = 0;
    if (!p->project)
        return MB_OK;
    int rc = p->project(a->t_end, r->y_new, p->ctx);
    if (rc == MB_NEW_COORDINATES) {
        a->recoord = 1;
        rc = 0;
    }
    if (rc != 0)
        return mb_fail(&r->s, rc == MB_ERR_CALLBACK ? rc : MB_ERR_CONV,
                       "The projection after the step to t = %.17g failed (code %d).",
                       a->t_end, rc);
    r->s.f1_ok = 0;  /* f(t_end, y) changed with y */
    return MB_OK;
}

/* The method restarts (method.h "Restarts") at a switch that cut the step, dropping
 * histories and caches and the controller's memory, or after new coordinates, which
 * void histories and kept Jacobians. */
static int restart(run *r, const attempt *a)
{
    if (a->cut && !a->terminated)
        return mb_drv_restart_method(r);
    if (a->recoord) {
        r->s.order = r->m->order;
        return r->m->init ? r->m->init(&r->s) : MB_OK;
    }
    return MB_OK;
}

int mb_drv_restart_method(run *r)
{
    int rc;
    r->res->stats.nrestart++;
    r->s.order = r->m->order;
    if (r->m->init && (rc = r->m->init(&r->s)) != MB_OK)
        return rc;
    r->ctl.has_prev = 0;
    return MB_OK;
}

/* The current point moves to the step's end: y and f0 (FSAL: f1 of the step), the
 * events' g (evaluated anew at a root inside the step). */
static int advance(run *r, const attempt *a)
{
    mb_stepper *s = &r->s;
    double *tmp = r->y; r->y = r->y_new; r->y_new = tmp;
    r->t = a->t_end;
    r->h_bound_ok = 0;
    r->deriv_ok = r->dense_ok && !r->record && a->t_end == a->t_new && !a->cut && !a->recoord;
    if (s->f1_ok) {
        tmp = r->f0; r->f0 = r->f1; r->f1 = tmp;
        s->f0 = r->f0; s->f1 = r->f1;
        s->f0_ok = 1;
    } else {
        s->f0_ok = 0;
    }
    s->f1_ok = 0;
    if (r->o->n_events > 0) {
        tmp = r->g_old; r->g_old = r->g_new; r->g_new = tmp;
        /* g at a point inside the step (terminal or switching root) */
        if (a->terminated || a->t_end != a->t_new)
            return mb_drv_eval_events(r, r->t, r->y, r->g_old);
    }
    return MB_OK;
}

/* Phase 6: complete an accepted step.  Returns MB_TERMINATED when a terminal event
 * ended the run. */
static int complete_step(run *r, attempt *a)
{
    const mb_method *m = r->m;
    mb_result *res = r->res;
    r->after_reject = 0;
    r->sw.phase2 = 0;
    int rc = step_output(r, a);
    if (rc != MB_OK)
        return rc;
    if (a->t_end != a->t_new) {  /* cut short: not the last step, and keep the fixed grid */
        a->last = a->terminated;
        if (a->on_grid && !a->terminated)
            r->k_fixed--;
    }
    if ((rc = project_end(r, a)) != MB_OK)
        return rc;
    if (!r->o->t_eval && (rc = mb_result_push_point(res, a->t_end, r->y_new)) != MB_OK)
        return rc;
    double h_taken = a->cut ? a->t_end - r->t : a->h;
    if ((rc = mb_result_push_hist(res, a->t_end, h_taken, a->err_norm)) != MB_OK)
        return rc;
    if (m->accept && (rc = m->accept(&r->s, a->t_end, r->y_new)) != MB_OK)
        return rc;
    res->stats.nsteps++;
    if ((rc = restart(r, a)) != MB_OK || (rc = advance(r, a)) != MB_OK)
        return rc;
    return a->terminated ? MB_TERMINATED : MB_OK;
}

/* ---- the loop ---- */

/* One accepted step (with the attempts it takes), or a status that ends the run;
 * *last: the step ended the run (tf or a terminal event).  The loop of mb_driver_run
 * and the piecewise runs of driver_step.c. */
int mb_drv_step(run *r, int *last)
{
    *last = 0;
    for (;;) {
        attempt a;
        step_outcome outcome = STEP_FAILED;
        int rc = choose_step(r, &a);
        if (rc == MB_OK)
            rc = attempt_step(r, &a, &outcome);
        if (rc != MB_OK)
            return rc;
        if (outcome != STEP_ACCEPTED)
            continue;
        rc = complete_step(r, &a);
        *last = a.last;
        if (rc != MB_OK || a.last)
            return rc;
        double h_next = switch_resume(&r->sw, a.cut, fabs(a.h) * a.factor);
        if (!r->fixed)
            r->h_abs = fmin(h_next, r->max_step);
        return MB_OK;
    }
}

/* steps from t0 to tf (or a terminal event) */
static int evolve(run *r)
{
    for (;;) {
        int last, rc = mb_drv_step(r, &last);
        if (rc != MB_OK || last)
            return rc;
    }
}

int mb_driver_run(const mb_method *m, const mb_problem *p, double t0, double tf,
                  const double *y0, const mb_options *o, mb_result *res)
{
    run r;
    int rc = mb_drv_set_up(&r, m, p, t0, tf, y0, o, res);
    if (rc == MB_OK && t0 != tf)
        rc = evolve(&r);
    return mb_drv_finish(&r, rc);
}
