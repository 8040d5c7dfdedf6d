/* The driver in pieces (driver.h "Piecewise runs"): the run of mb_driver_run, set up
 * once and kept in an mb_driver_state, advanced one accepted step at a time
 * (mb_drv_step, the body of mb_driver_run's loop) or up to a stop time, with the
 * state at the stop time from the last step's dense output, exactly as the driver
 * outputs a t_eval point.  Every step's dense output is built (run.keep_dense), as in
 * a run with t_eval.  Between calls the caller may move the run back to a point inside
 * the last step and change the problem there (mb_driver_restart_at): the method
 * restarts, as at a switching event. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "driver_run.h"
#include "result.h"
#include "status.h"

struct mb_driver_state {
    run r;
    int status;     /* MB_OK while the run can go on, else what ended it */
    int finished;   /* the run reached tf or a terminal event */
};

int mb_driver_open(mb_driver_state **out, const mb_method *m, const mb_problem *p, double t0,
                   double tf, const double *y0, const mb_options *o, mb_result *res)
{
    mb_driver_state *st = calloc(1, sizeof *st);
    *out = st;
    if (!st) {
        res->status = MB_ERR_MEM;
        return MB_ERR_MEM;
    }
    int rc = mb_drv_set_up(&st->r, m, p, t0, tf, y0, o, res);
    st->r.keep_dense = 1;
    st->finished = rc == MB_OK && t0 == tf;
    st->status = rc;
    if (rc != MB_OK)
        res->status = rc;
    return rc;
}

/* a status that ends the run: in the result, with its message */
static int stop(mb_driver_state *st, int rc, int last)
{
    mb_result *res = st->r.res;
    if (rc == MB_TERMINATED || (rc == MB_OK && last)) {
        st->finished = 1;
        res->status = rc;
        return MB_TERMINATED;
    }
    if (rc != MB_OK) {
        st->status = rc;
        res->status = rc;
        if (res->message[0] == '\0')
            strncpy(res->message, mb_status_str(rc), sizeof res->message - 1);
    }
    return rc;
}

/* MB_OK when another step may be taken */
static int can_go_on(mb_driver_state *st)
{
    if (st->status != MB_OK)
        return st->status;
    return st->finished ? MB_TERMINATED : MB_OK;
}

int mb_driver_step(mb_driver_state *st)
{
    int rc = can_go_on(st);
    if (rc != MB_OK)
        return rc;
    int last = 0;
    rc = mb_drv_step(&st->r, &last);
    return stop(st, rc, last);
}

int mb_driver_advance(mb_driver_state *st, double t_stop, double *y)
{
    run *r = &st->r;
    if (!(r->dir * (t_stop - r->tf) <= 0) || isnan(t_stop))
        return MB_ERR_ILL_INPUT;
    int rc = MB_OK;
    while (r->dir * (t_stop - r->t) > 0) {
        if ((rc = can_go_on(st)) != MB_OK)
            return rc;
        int last = 0;
        rc = mb_drv_step(r, &last);
        rc = stop(st, rc, last);
        if (rc != MB_OK && rc != MB_TERMINATED)
            return rc;
        if (rc == MB_TERMINATED && r->dir * (t_stop - r->t) > 0)
            return rc;  /* a terminal event before t_stop */
    }
    if (t_stop == r->t) {
        memcpy(y, r->y, (size_t)r->n * sizeof(double));
        return MB_OK;
    }
    /* t_stop inside the last accepted step, [t_dense, t]: its dense output, as the
     * driver's t_eval output (mb_drv_emit_eval) */
    if (!r->dense_ok || r->dir * (t_stop - r->t_dense) < 0)
        return MB_ERR_ILL_INPUT;
    rc = mb_drv_dense_at(r, (t_stop - r->t_dense) / r->h_dense, y);
    return rc == MB_OK ? MB_OK : stop(st, rc, 0);
}

int mb_driver_restart_at(mb_driver_state *st, double t, const double *y)
{
    run *r = &st->r;
    int rc = st->status;
    if (rc != MB_OK)
        return rc;
    if (r->dir * (t - r->t) > 0 || r->dir * (t - r->t0) < 0 ||
        (t != r->t && (!r->dense_ok || r->dir * (t - r->t_dense) < 0)))
        return MB_ERR_ILL_INPUT;  /* only back into the last step */
    mb_result *res = r->res;
    mb_stepper *s = &r->s;
    int moved = t != r->t;
    if (moved) {
        /* the history entry of the last step, which now ends at t */
        double err = res->n_hist > 0 ? res->hist_err[res->n_hist - 1] : 0.0;
        mb_result_truncate(res, t, r->dir, r->ev_hits);
        if ((rc = mb_result_push_point(res, t, y)) != MB_OK ||
            (rc = mb_result_push_hist(res, t, t - r->t_dense, err)) != MB_OK)
            return stop(st, rc, 0);
        memcpy(r->y, y, (size_t)r->n * sizeof(double));
        r->t = t;
        if (r->fixed)  /* the next grid point after t */
            while (r->k_fixed > 0 &&
                   r->dir * (r->t0 + r->dir * (double)r->k_fixed * r->o->h - t) > 0)
                r->k_fixed--;
    }
    /* the method restarts at (t, y) (method.h "Restarts") */
    if ((rc = mb_drv_restart_method(r)) != MB_OK)
        return stop(st, rc, 0);
    s->f0_ok = 0;
    s->f1_ok = 0;
    r->h_bound_ok = 0;
    r->deriv_ok = 0;
    r->dense_ok = 0;
    r->after_reject = 0;
    r->nonfinite = 0;
    r->sw = (switch_state){.phase2 = 0, .h_aim = 0.0, .h_resume = 0.0, .t_retry = NAN};
    st->finished = 0;
    if (r->o->n_events > 0 && (rc = mb_drv_eval_events(r, t, r->y, r->g_old)) != MB_OK)
        return stop(st, rc, 0);
    return MB_OK;
}

double mb_driver_t(const mb_driver_state *st) { return st->r.t; }
const double *mb_driver_y(const mb_driver_state *st) { return st->r.y; }
int mb_driver_status(const mb_driver_state *st)
{
    return st->status != MB_OK ? st->status : st->finished ? MB_TERMINATED : MB_OK;
}

int mb_driver_close(mb_driver_state *st)
{
    if (!st)
        return MB_OK;
    int rc = st->status;
    mb_result *res = st->r.res;
    int keep = res->status;
    char msg[sizeof res->message];
    memcpy(msg, res->message, sizeof msg);
    mb_drv_finish(&st->r, rc);
    if (rc == MB_OK) {  /* a run that stopped where the caller stopped it */
        res->status = keep == MB_TERMINATED ? MB_TERMINATED : MB_OK;
        if (keep == MB_TERMINATED) memcpy(res->message, msg, sizeof msg);
    }
    free(st);
    return rc;
}
