/* Services the driver offers to methods: counted, checked f evaluations and the
 * run's message buffer. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "norm.h"
#include "method.h"
#include "status.h"

double mb_norm(const mb_stepper *s, const double *e, const double *y, const double *y_new)
{
    const unsigned char *ix = s->p ? s->p->dae_index : NULL;
    if (!ix || !(s->h_index > 0))
        return mb_wrms_norm_v(s->n, e, y, y_new, s->rtol, s->rtol_v, s->atol);
    double sum = 0.0, h = s->h_index;
    for (ptrdiff_t i = 0; i < s->n; i++) {
        double ay = fabs(y[i]);
        if (y_new && fabs(y_new[i]) > ay)
            ay = fabs(y_new[i]);
        double r = e[i] / (s->atol[i] + ay * (s->rtol_v ? s->rtol_v[i] : s->rtol));
        if (ix[i] >= 2)
            r *= ix[i] == 2 ? h : ix[i] == 3 ? h * h : pow(h, ix[i] - 1);
        sum += r * r;
    }
    return s->n > 0 ? sqrt(sum / (double)s->n) : 0.0;
}

int mb_fail(mb_stepper *s, int code, const char *fmt, ...)
{
    if (s->msg && s->msg_len > 0 && s->msg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->msg, s->msg_len, fmt, ap);
        va_end(ap);
    }
    return code;
}

static int map_callback(mb_stepper *s, int rc, const char *what, double t)
{
    if (rc == 0)
        return MB_OK;
    if (rc > 0)
        return MB_RECOVERABLE;
    if (rc == MB_ERR_CALLBACK)
        return MB_ERR_CALLBACK;
    s->rhs_singular = rc == MB_ERR_LINALG;
    return mb_fail(s, MB_ERR_RHS_FAIL, "%s returned failure code %d at t = %.17g", what, rc, t);
}

int mb_rhs(mb_stepper *s, double t, const double *y, double *ydot)
{
    const mb_problem *p = s->p;
    int rc = p->rhs(t, y, ydot, p->ctx);
    s->stats->nfev++;
    if (rc != 0)
        return map_callback(s, rc, "the right-hand side", t);
    for (ptrdiff_t i = 0; i < p->n; i++) {
        if (!isfinite(ydot[i]))
            return mb_fail(s, MB_ERR_NONFINITE,
                           "The right-hand side returned a non-finite value (component %td) at t = %.17g.",
                           i, t);
    }
    return MB_OK;
}

int mb_rhs_iterate(mb_stepper *s, double t, const double *y, double *ydot)
{
    int had_msg = s->msg && s->msg[0] != '\0';
    int rc = mb_rhs(s, t, y, ydot);
    if (rc == MB_ERR_NONFINITE || (rc == MB_ERR_RHS_FAIL && s->rhs_singular)) {
        s->rhs_singular = 0;
        if (!had_msg && s->msg)
            s->msg[0] = '\0';
        return MB_RECOVERABLE;
    }
    return rc;
}

int mb_acc(mb_stepper *s, double t, const double *q, const double *qd, double *qdd, double *tmp)
{
    const mb_problem *p = s->p;
    ptrdiff_t nq = p->nq;
    if (p->acc) {
        int rc = p->acc(t, q, qd, qdd, p->ctx);
        s->stats->nfev++;
        if (rc != 0)
            return map_callback(s, rc, "the acceleration function", t);
        for (ptrdiff_t i = 0; i < nq; i++)
            if (!isfinite(qdd[i]))
                return mb_fail(s, MB_ERR_NONFINITE,
                               "The acceleration returned a non-finite value (component %td) at t = %.17g.",
                               i, t);
        return MB_OK;
    }
    /* serve the second-order view from rhs: y = (q, qd), y' = (qd, qdd) */
    double *yy = tmp, *ydot = tmp + p->n;
    memcpy(yy, q, (size_t)nq * sizeof *yy);
    memcpy(yy + nq, qd, (size_t)nq * sizeof *yy);
    int rc = mb_rhs(s, t, yy, ydot);
    if (rc != MB_OK)
        return rc;
    memcpy(qdd, ydot + nq, (size_t)nq * sizeof *qdd);
    return MB_OK;
}
