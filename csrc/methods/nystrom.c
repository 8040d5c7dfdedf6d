/* Nystrom midpoint scheme for q'' = a(t, q, q') (LN 7.4, "Euler 2"):
 *   k1     = a(t + h/2, q + h/2 q', q')
 *   q_new  = q + h q' + h^2/2 k1
 *   q'_new = q' + h k1
 * One evaluation per step, at the midpoint.  Local error O(h^2) in general
 * (order 1) and O(h^3) (order 2) when a does not depend on q'.
 * Dense output: the quadratic q(th) = q + th h q' + th^2 h^2/2 k1,
 * q'(th) = q' + th h k1 (exact at th = 0 and 1).
 * The state is y = (q, q'), n = 2 nq. */
#include <string.h>
#include "carve.h"
#include "nystrom.h"
#include "status.h"

typedef struct nys_work {
    double *k1, *qm;  /* nq each: the midpoint acceleration and position */
    double *tmp;      /* 2n: scratch of mb_acc */
} nys_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, const mb_problem *p, nys_work *w)
{
    size_t nq = (size_t)(p->nq > 0 ? p->nq : 0);
    w->k1 = mb_carve(c, nq);
    w->qm = mb_carve(c, nq);
    w->tmp = mb_carve(c, 2 * (size_t)p->n);
    return c->off;
}

static size_t nys_work_size(const mb_problem *p, const void *data)
{
    (void)data;
    nys_work w;
    return layout(&(mb_carver){NULL, 0}, p, &w);
}

static nys_work workspace(const mb_stepper *s)
{
    nys_work w;
    layout(&(mb_carver){s->work, 0}, s->p, &w);
    return w;
}

static int nys_init(mb_stepper *s)
{
    const mb_problem *p = s->p;
    if (p->nq <= 0 || 2 * p->nq != p->n)
        return mb_fail(s, MB_ERR_NOT_SUPPORTED,
                       "nystrom_midpoint needs a second-order problem y = (q, q') with n = 2 nq "
                       "(got n = %td, nq = %td).", p->n, p->nq);
    return MB_OK;
}

static int nys_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                    double *err)
{
    (void)err;
    ptrdiff_t nq = s->p->nq;
    const double *q = y, *qd = y + nq;
    nys_work w = workspace(s);
    double *k1 = w.k1, *qm = w.qm, *tmp = w.tmp;
    for (ptrdiff_t i = 0; i < nq; i++)
        qm[i] = q[i] + 0.5 * h * qd[i];
    int rc = mb_acc(s, t + 0.5 * h, qm, qd, k1, tmp);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < nq; i++) {
        y_new[i] = q[i] + h * qd[i] + 0.5 * h * h * k1[i];
        y_new[nq + i] = qd[i] + h * k1[i];
    }
    return MB_OK;
}

static int nys_dense(mb_stepper *s, double *C)
{
    ptrdiff_t nq = s->p->nq, n = s->n;
    const double *y = s->y_last, *k1 = workspace(s).k1;
    double h = s->h_last;
    memcpy(C, y, (size_t)n * sizeof(double));
    for (ptrdiff_t i = 0; i < nq; i++) {
        C[n + i] = h * y[nq + i];
        C[n + nq + i] = h * k1[i];
        C[2 * n + i] = 0.5 * h * h * k1[i];
        C[2 * n + nq + i] = 0.0;
    }
    return MB_OK;
}

static int nys_dense_degree(const mb_stepper *s)
{
    (void)s;
    return 2;
}

const mb_method mb_method_nystrom_midpoint = {
    "nystrom_midpoint", 1, 0, MB_SECOND_ORDER, 2, 0, nys_work_size, nys_init, nys_step,
    0, 0, nys_dense, nys_dense_degree, 0, 0, 0, 0, 0};
