/* Events of the driver (driver_run.h): roots of g(t, y) located by Brent's method
 * on each accepted step's dense output, SciPy's terminal/direction rules, and
 * switching events, which cut a step at their root so that the method restarts in
 * the new regime (driver.h).  Called by driver.c and driver_setup.c; calls only the
 * dense output (driver_dense.c) of the driver's files. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "driver_run.h"
#include "events.h"
#include "result.h"
#include "status.h"

int mb_drv_is_switching(const run *r, ptrdiff_t i)
{
    return r->o->switching && r->o->switching[i];
}

/* the dense output on a part [th0, th0 + dth] of the step, in its own theta */
typedef struct part_dense {
    run *r;
    double th0, dth;
} part_dense;

static int part_dense_fn(double theta, double *y, void *dctx)
{
    const part_dense *pd = dctx;
    return mb_drv_dense_fn(pd->th0 + theta * pd->dth, y, pd->r);
}

/* root theta of event i in [th0, th1] of the step [t, t+h] whose dense output is
 * built, given the sign change g0 -> g1 of g_i there; maps failures to statuses */
static int locate_in(run *r, ptrdiff_t i, double t, double h, double th0, double th1, double g0,
                     double g1, double *th)
{
    const mb_options *o = r->o;
    r->dense_rc = MB_OK;
    part_dense pd = {r, th0, th1 - th0};
    double th_part = 0.0;
    int rc = mb_event_locate(o->events, o->event_ctx, i, part_dense_fn, &pd, t + th0 * h,
                             (th1 - th0) * h, 1.0, g0, g1, r->g_buf, r->ybuf, &th_part);
    *th = th_part >= 1.0 ? th1 : th0 + th_part * (th1 - th0);
    if (rc == 0)
        return MB_OK;
    if (r->dense_rc != MB_OK)
        return r->dense_rc;
    if (rc == MB_ERR_CALLBACK)
        return rc;
    if (r->res->message[0] == '\0')
        mb_fail(&r->s, MB_ERR_EVENT_FAIL, "Event %td failed or returned a value that is not "
                "finite while its root was located in [%.17g, %.17g].", i, t, t + h);
    return MB_ERR_EVENT_FAIL;
}

/* root theta of event i in the step [t, t+h], bracketed by g_old[i] -> g_new[i] */
static int locate(run *r, ptrdiff_t i, double t, double h, double *th)
{
    return locate_in(r, i, t, h, 0.0, 1.0, r->g_old[i], r->g_new[i], th);
}

/* g(t, y) of every event; a failure, or a value that is not finite (an event that
 * is NaN would silently never fire), stops the run with a message */
int mb_drv_eval_events(run *r, double t, const double *y, double *g)
{
    int rc = r->o->events(t, y, g, r->o->event_ctx);
    if (rc != 0)
        return rc < 0 && rc == MB_ERR_CALLBACK ? rc : MB_ERR_EVENT_FAIL;
    for (ptrdiff_t i = 0; i < r->o->n_events; i++)
        if (!isfinite(g[i]))
            return mb_fail(&r->s, MB_ERR_EVENT_FAIL,
                           "Event %td returned %g at t = %.17g: event functions must return "
                           "finite values.", i, g[i], t);
    return MB_OK;
}

/* Moving a switching root past the switch (past_switch): g is tried at the root and
 * then at points PAST_SWITCH_ULPS ulps of t further, each move twice the last, at
 * most PAST_SWITCH_TRIES points. */
#define PAST_SWITCH_ULPS 4.0
enum { PAST_SWITCH_TRIES = 48 };

/* Move the root theta of switching event i forward (by a few ulps of t at a time,
 * not past the step's end) until g_i has strictly the sign it takes after the switch,
 * so that the restart sees the new regime: a right-hand side that tests g > 0 would
 * still take the old branch at g == 0. */
static int past_switch(run *r, ptrdiff_t i, double t, double h, double *th)
{
    double go = r->g_old[i], gn = r->g_new[i];
    double sign = gn != 0.0 ? (gn > 0 ? 1.0 : -1.0) : (go > 0 ? -1.0 : 1.0);
    double dth = PAST_SWITCH_ULPS * DBL_EPSILON * fmax(fabs(t), fabs(t + h)) / fabs(h);
    double th_k = *th;
    for (int k = 0; k < PAST_SWITCH_TRIES; k++) {
        const double *y = r->y_new;
        if (th_k < 1.0) {
            int rc = mb_drv_dense_at(r, th_k, r->ybuf);
            if (rc != MB_OK)
                return rc;
            y = r->ybuf;
        }
        int rc = mb_drv_eval_events(r, t + th_k * h, y, r->g_buf);
        if (rc != MB_OK)
            return rc;
        if (r->g_buf[i] * sign > 0.0) {
            *th = th_k;
            return MB_OK;
        }
        if (th_k >= 1.0)
            break;
        th_k = fmin(1.0, th_k + dth);
        dth *= 2.0;
    }
    return MB_OK;  /* no such point inside the step: keep the root */
}

/* events in the accepted step [t, t+h]; may shorten it to a terminal root
 * (*terminated) or to a switching root (*cut: the run restarts there) */
int mb_drv_handle_events(run *r, double t, double h, double *t_end, int *terminated, int *cut)
{
    const mb_options *o = r->o;
    ptrdiff_t ne = o->n_events, n = r->n;
    *terminated = 0;
    *cut = 0;
    if (ne <= 0)
        return MB_OK;
    int rc;
    if (!r->g_new_ok && (rc = mb_drv_eval_events(r, t + h, r->y_new, r->g_new)) != MB_OK)
        return rc;
    double th_stop = 1.0;
    /* roots found, processed in time order: simple selection over at most ne roots */
    double *roots = r->g_buf + ne;  /* ne thetas */
    int *found = r->ev_found;
    for (ptrdiff_t i = 0; i < ne; i++) {
        found[i] = 0;
        if (!mb_event_active(r->g_old[i], r->g_new[i], o->direction ? o->direction[i] : 0))
            continue;
        double th;
        if ((rc = locate(r, i, t, h, &th)) != MB_OK)
            return rc;
        /* a root at the step's start was reported by the last step; a switching
         * event still restarts just past it (the last step ended on g == 0) */
        int again = th == 0.0 && r->ev_last[i] == t;
        if (again && !mb_drv_is_switching(r, i))
            continue;
        if (mb_drv_is_switching(r, i) && (rc = past_switch(r, i, t, h, &th)) != MB_OK)
            return rc;
        if (again && th == 0.0)
            continue;
        found[i] = again ? 2 : 1;  /* 2: restart only, already reported */
        roots[i] = th;
    }
    for (;;) {
        ptrdiff_t best = -1;
        for (ptrdiff_t i = 0; i < ne; i++)
            if (found[i] && (best < 0 || roots[i] < roots[best]))
                best = i;
        if (best < 0 || roots[best] > th_stop)
            break;
        int report = found[best] == 1;
        found[best] = 0;
        double th = roots[best], te = t + th * h;
        if (report) {
            if (th == 1.0)
                memcpy(r->ybuf, r->y_new, (size_t)n * sizeof(double));
            else if ((rc = mb_drv_dense_at(r, th, r->ybuf)) != MB_OK)
                return rc;
            if ((rc = mb_result_push_event(r->res, best, te, r->ybuf)) != MB_OK)
                return rc;
            r->ev_last[best] = te;
            r->ev_hits[best]++;
        }
        int term = report && o->terminal ? o->terminal[best] : 0;
        if (term > 0 && r->ev_hits[best] >= term) {
            th_stop = th;
            *terminated = 1;
        } else if (mb_drv_is_switching(r, best) && !*terminated) {
            /* a switch strictly inside the step ends it there; one at its end (or
             * too close to its start to make progress) restarts at the end */
            *cut = 1;
            if (te != t && th < 1.0)
                th_stop = th;
        }
    }
    if (*terminated || (*cut && th_stop < 1.0)) {
        *t_end = t + th_stop * h;
        if (th_stop < 1.0 && (rc = mb_drv_dense_at(r, th_stop, r->y_new)) != MB_OK)
            return rc;
        r->s.f1_ok = 0;
    }
    return MB_OK;
}

/* Interior samples of the switching test: a step of a switching event's g of the
 * same sign at both ends may still have entered and left the other side (a penalty
 * contact passed through within one step, scipy#9228).  The problem's step bound
 * (problem.h) prevents that where it is known; as a second line of defence the
 * switching events are sampled on the dense output at theta = k / SWITCH_SAMPLES,
 * k = 1 .. SWITCH_SAMPLES - 1, and the first sign change between samples is
 * treated like one between the ends. */
enum { SWITCH_SAMPLES = 8 };

/* the earliest root of a switching event inside the step [t, t+h] (dense output
 * built) from a sign change between two interior samples, as theta; -1: none */
static int sampled_switch(run *r, double t, double h, double *th_out)
{
    const mb_options *o = r->o;
    ptrdiff_t ne = o->n_events;
    double *gp = r->g_smp, *gc = r->g_smp + ne;
    memcpy(gp, r->g_old, (size_t)ne * sizeof(double));
    *th_out = -1.0;
    for (int k = 1; k < SWITCH_SAMPLES; k++) {
        double th0 = (double)(k - 1) / SWITCH_SAMPLES, th1 = (double)k / SWITCH_SAMPLES;
        int rc = mb_drv_dense_at(r, th1, r->y_mid);
        if (rc == MB_OK)
            rc = mb_drv_eval_events(r, t + th1 * h, r->y_mid, gc);
        if (rc != MB_OK)
            return rc;
        for (ptrdiff_t i = 0; i < ne; i++) {
            if (!mb_drv_is_switching(r, i) ||
                !mb_event_active(gp[i], gc[i], o->direction ? o->direction[i] : 0))
                continue;
            double th;
            if ((rc = locate_in(r, i, t, h, th0, th1, gp[i], gc[i], &th)) != MB_OK)
                return rc;
            if (th > 0.0 && (*th_out < 0.0 || th < *th_out))
                *th_out = th;
        }
        if (*th_out > 0.0)
            return MB_OK;
        double *tmp = gp; gp = gc; gc = tmp;
    }
    return MB_OK;
}

/* The earliest switching root inside the step [t, t+h] just computed, as theta, or
 * -1 when no switching event changes sign there (between the ends, or, when
 * sample is set, between interior samples: sampled_switch).  Leaves g at the
 * step's end in g_new; builds the step's dense output when there is a root or it
 * samples. */
int mb_drv_switching_root(run *r, double t, double h, int sample, double *th_out)
{
    const mb_options *o = r->o;
    ptrdiff_t ne = o->n_events;
    *th_out = -1.0;
    int rc = mb_drv_eval_events(r, t + h, r->y_new, r->g_new);
    if (rc != MB_OK)
        return rc;
    r->g_new_ok = 1;
    int built = 0;
    for (ptrdiff_t i = 0; i < ne; i++) {
        if (!mb_drv_is_switching(r, i) ||
            !mb_event_active(r->g_old[i], r->g_new[i], o->direction ? o->direction[i] : 0))
            continue;
        if (!built) {
            if ((rc = mb_drv_build_dense(r, t, h)) != MB_OK)
                return rc;
            built = 1;
        }
        double th;
        if ((rc = locate(r, i, t, h, &th)) != MB_OK)
            return rc;
        if (th > 0.0 && (*th_out < 0.0 || th < *th_out))
            *th_out = th;
    }
    if (*th_out < 0.0 && sample) {
        if (!built && (rc = mb_drv_build_dense(r, t, h)) != MB_OK)
            return rc;
        return sampled_switch(r, t, h, th_out);
    }
    return MB_OK;
}
