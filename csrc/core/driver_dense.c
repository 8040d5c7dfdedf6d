/* The dense output of the driver's steps (driver_run.h): f0 at a step's start, the
 * step's interpolant (the method's polynomial, cubic Hermite, or the method's dense
 * record), its evaluation, and the output at t_eval.  The lowest floor of the
 * driver: calls none of its other files. */
#include "driver_run.h"
#include "interp.h"
#include "result.h"
#include "status.h"

int mb_drv_ensure_f0(run *r, double t)
{
    if (r->s.f0_ok)
        return MB_OK;
    int rc = mb_rhs(&r->s, t, r->y, r->f0);
    if (rc == MB_OK)
        r->s.f0_ok = 1;
    return rc;
}

/* the dense output of the step [t, t+h] (r->C or r->rec) at theta */
int mb_drv_dense_at(run *r, double theta, double *y)
{
    if (r->record)
        return r->m->dense_record_eval(r->m, r->n, r->rec, r->t_dense, r->h_dense, theta, y,
                                       r->rec_work);
    mb_dense_eval(r->n, r->dense_deg, r->C, theta, y);
    return MB_OK;
}

/* dense_at as the root finder's mb_dense_fn; keeps the status of a failure */
int mb_drv_dense_fn(double theta, double *y, void *dctx)
{
    run *r = dctx;
    int rc = mb_drv_dense_at(r, theta, y);
    if (rc != MB_OK)
        r->dense_rc = rc;
    return rc;
}

/* the dense output (polynomial or record) of the step [t, t+h] */
static int build_dense_of(run *r, double t, double h)
{
    mb_stepper *s = &r->s;
    r->t_dense = t;
    r->h_dense = h;
    if (r->record) {
        r->dense_deg = -1;
        return s->m->dense_record(s, r->rec);
    }
    if (r->hermite) {
        if (!s->f1_ok) {
            int rc = mb_rhs(s, t + h, r->y_new, r->f1);
            if (rc != MB_OK)
                return rc;
            s->f1_ok = 1;
        }
        int rc = mb_drv_ensure_f0(r, t);
        if (rc != MB_OK)
            return rc;
        mb_dense_hermite(r->n, h, r->y, r->f0, r->y_new, r->f1, r->C);
        r->dense_deg = 3;
        return MB_OK;
    }
    r->dense_deg = s->m->dense_degree(s);
    return s->m->dense(s, r->C);
}

/* build_dense_of, remembered for the current attempt (r->dense_ok): the switching
 * test and the output of an accepted step share one build (a method's dense output
 * may cost evaluations of f) */
int mb_drv_build_dense(run *r, double t, double h)
{
    if (r->dense_ok && r->t_dense == t && r->h_dense == h)
        return MB_OK;
    int rc = build_dense_of(r, t, h);
    r->dense_ok = rc == MB_OK;
    return rc;
}

int mb_drv_emit_eval(run *r, double t, double h, double t_new, const double *y_new)
{
    const mb_options *o = r->o;
    while (r->next_eval < o->n_eval) {
        double te = o->t_eval[r->next_eval];
        if (r->dir * (te - t_new) > 0)
            break;
        int rc;
        if (te == t_new) {
            rc = mb_result_push_point(r->res, te, y_new);
        } else {
            rc = mb_drv_dense_at(r, (te - t) / h, r->ybuf);
            if (rc == MB_OK)
                rc = mb_result_push_point(r->res, te, r->ybuf);
        }
        if (rc != MB_OK)
            return rc;
        r->next_eval++;
    }
    return MB_OK;
}
