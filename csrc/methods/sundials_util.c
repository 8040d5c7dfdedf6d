/* The floor under the SUNDIALS run (sundials_common.c), the adapters and the linsys
 * solver (sundials_linsys.c): the callbacks into the problem in the SUNDIALS
 * conventions and the recording of failures (a callback's sticky status and message,
 * SUNDIALS' own error messages, a failed set-up call).  Nothing here calls back into
 * the files above it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include "status.h"
#include "sundials_impl.h"

static int set_message(sun_run *r, const char *fmt, va_list ap)
{
    if (r->res->message[0] == '\0')
        vsnprintf(r->res->message, sizeof r->res->message, fmt, ap);
    return 0;
}

int mb_sun_cb_fail(sun_run *r, int code, const char *fmt, ...)
{
    if (!r->cb_status) {
        r->cb_status = code;
        if (fmt) {
            va_list ap;
            va_start(ap, fmt);
            set_message(r, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* x - x is 0 for a finite x and NaN otherwise, so one pass of adds (no branch per
 * entry; two sums, which the processor adds side by side) tells whether all are */
static int all_finite(const double *out, ptrdiff_t m)
{
    double acc0 = 0.0, acc1 = 0.0;
    ptrdiff_t i = 0;
    for (; i + 1 < m; i += 2) {
        acc0 += out[i] - out[i];
        acc1 += out[i + 1] - out[i + 1];
    }
    if (i < m)
        acc0 += out[i] - out[i];
    return acc0 + acc1 == 0.0;
}

int mb_sun_check(sun_run *r, int rc, double t, const double *out, ptrdiff_t m, const char *what,
                 const char *item)
{
    if (rc > 0)
        return 1;
    if (rc == MB_ERR_CALLBACK)
        return mb_sun_cb_fail(r, MB_ERR_CALLBACK, NULL);
    if (rc < 0)
        return mb_sun_cb_fail(r, MB_ERR_RHS_FAIL, "The %s returned failure code %d at t = %.17g.",
                              what, rc, t);
    /* fatal, as in the driver (mb_rhs) */
    if (all_finite(out, m))
        return 0;
    for (ptrdiff_t i = 0; i < m; i++)
        if (!isfinite(out[i]))
            return mb_sun_cb_fail(r, MB_ERR_NONFINITE,
                                  "The %s returned a non-finite value (%s %td) at t = %.17g.", what,
                                  item, i, t);
    return 0;
}

int mb_sun_rhs(realtype t, N_Vector y, N_Vector ydot, void *ud)
{
    sun_run *r = ud;
    if (r->cb_status)
        return -1;
    double *f = NV_DATA_S(ydot);  /* serial vectors only (sundials_common.c) */
    int rc = r->p->rhs(t, NV_DATA_S(y), f, r->p->ctx);
    if (rc == 0 && all_finite(f, (ptrdiff_t)r->n))  /* the common case, without a call */
        return 0;
    return mb_sun_check(r, rc, t, f, (ptrdiff_t)r->n, "right-hand side", "component");
}

int mb_sun_events(realtype t, N_Vector y, realtype *g, void *ud)
{
    sun_run *r = ud;
    if (r->cb_status)
        return -1;
    int rc = r->o->events(t, N_VGetArrayPointer(y), g, r->o->event_ctx);
    if (rc == MB_ERR_CALLBACK)
        return mb_sun_cb_fail(r, MB_ERR_CALLBACK, NULL);
    if (rc != 0)
        return mb_sun_cb_fail(r, MB_ERR_EVENT_FAIL,
                              "An event function returned failure code %d at t = %.17g.", rc, t);
    for (ptrdiff_t i = 0; i < r->o->n_events; i++)
        if (!isfinite(g[i]))
            return mb_sun_cb_fail(r, MB_ERR_EVENT_FAIL,
                                  "Event %td returned %g at t = %.17g: event functions must "
                                  "return finite values.", i, g[i], t);
    return 0;
}

int mb_sun_jac(sun_run *r, double t, N_Vector y, SUNMatrix J)
{
    if (r->cb_status)
        return -1;
    double *Jd = SUNDenseMatrix_Data(J);
    sunindextype ld = SUNDenseMatrix_Rows(J);
    int rc = r->p->jac(t, N_VGetArrayPointer(y), Jd, (ptrdiff_t)ld, r->p->ctx);
    return mb_sun_check(r, rc, t, Jd, (ptrdiff_t)(r->n * ld), "Jacobian", "entry");
}

int mb_sun_dq_columns(sun_run *r, double t, N_Vector y, const double *f0, double *J,
                      ptrdiff_t ld, N_Vector yt, N_Vector ft)
{
    sunindextype n = r->n;
    double *yv = N_VGetArrayPointer(yt);
    const double *fv = N_VGetArrayPointer(ft);
    N_VScale(1.0, y, yt);
    for (sunindextype j = 0; j < n; j++) {
        double yj = yv[j];
        yv[j] = yj + mb_fd_increment(yj);
        double d = yv[j] - yj;  /* exactly representable */
        r->extra_nfev++;
        int rc = mb_sun_rhs(t, yt, ft, r);
        yv[j] = yj;
        if (rc != 0)
            return rc;
        for (sunindextype i = 0; i < n; i++)
            J[j * ld + i] = (fv[i] - f0[i]) / d;
    }
    return 0;
}

int mb_sun_ode_jac(realtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud, N_Vector tmp1,
                   N_Vector tmp2, N_Vector tmp3)
{
    (void)fy; (void)tmp1; (void)tmp2; (void)tmp3;
    return mb_sun_jac(ud, t, y, J);
}

void mb_sun_err_handler(int error_code, const char *module, const char *function, char *msg,
                        void *eh_data)
{
    sun_run *r = eh_data;
    if (error_code >= 0)  /* warnings (e.g. t + h == t) are not failures */
        return;
    snprintf(r->sun_msg, sizeof r->sun_msg, "%s, %s: %s", module ? module : "SUNDIALS",
             function ? function : "?", msg ? msg : "");
}

int mb_sun_setup_fail(sun_run *r, int code, const char *call)
{
    int st = r->cb_status ? r->cb_status : r->b->status(code);
    if (r->res->message[0] == '\0') {
        if (r->sun_msg[0])
            snprintf(r->res->message, sizeof r->res->message, "%s failed [%s]", call, r->sun_msg);
        else
            snprintf(r->res->message, sizeof r->res->message, "%s failed (flag %d).", call, code);
    }
    return st;
}
