/* One explicit Runge-Kutta kernel over the tableaus of tableaus.c.
 * Workspace: K ((s + fsal) x n stages) and one stage vector. */
#include <string.h>
#include "erk.h"
#include "status.h"

static size_t erk_work_size(const mb_problem *p, const void *data)
{
    const mb_erk_tableau *T = data;
    return (size_t)(T->s + 2) * (size_t)p->n;
}

static int erk_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                    double *err)
{
    const mb_erk_tableau *T = s->m->data;
    ptrdiff_t n = s->n;
    int ns = T->s, nk = T->s + T->fsal;
    double *K = s->work, *yt = s->work + (ptrdiff_t)(ns + 1) * n;
    int rc;

    memcpy(K, s->f0, (size_t)n * sizeof(double));
    for (int i = 1; i < ns; i++) {
        const double *a = T->A + (ptrdiff_t)i * ns;
        for (ptrdiff_t l = 0; l < n; l++) {
            double acc = 0.0;
            for (int j = 0; j < i; j++)
                acc += a[j] * K[(ptrdiff_t)j * n + l];
            yt[l] = y[l] + h * acc;
        }
        if ((rc = mb_rhs(s, t + T->c[i] * h, yt, K + (ptrdiff_t)i * n)) != MB_OK)
            return rc;
    }
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0;
        for (int j = 0; j < ns; j++)
            acc += T->b[j] * K[(ptrdiff_t)j * n + l];
        y_new[l] = y[l] + h * acc;
    }
    if (T->fsal) {
        double *kl = K + (ptrdiff_t)ns * n;
        if ((rc = mb_rhs(s, t + h, y_new, kl)) != MB_OK)
            return rc;
        memcpy(s->f1, kl, (size_t)n * sizeof(double));
        s->f1_ok = 1;
    }
    if (T->e) {
        for (ptrdiff_t l = 0; l < n; l++) {
            double acc = 0.0;
            for (int j = 0; j < nk; j++)
                acc += T->e[j] * K[(ptrdiff_t)j * n + l];
            err[l] = h * acc;
        }
    }
    return MB_OK;
}

static int erk_dense(mb_stepper *s, double *C)
{
    const mb_erk_tableau *T = s->m->data;
    ptrdiff_t n = s->n;
    int nk = T->s + T->fsal, d = T->dense_deg;
    const double *K = s->work;
    double h = s->h_last;
    memcpy(C, s->y_last, (size_t)n * sizeof(double));
    for (int j = 0; j < d; j++) {
        double *Cj = C + (ptrdiff_t)(j + 1) * n;
        for (ptrdiff_t l = 0; l < n; l++) {
            double acc = 0.0;
            for (int i = 0; i < nk; i++)
                acc += T->P[i * d + j] * K[(ptrdiff_t)i * n + l];
            Cj[l] = h * acc;
        }
    }
    return MB_OK;
}

static int erk_dense_degree(const mb_stepper *s)
{
    const mb_erk_tableau *T = s->m->data;
    return T->dense_deg;
}

/* R(z) = 1 + sum_i b_i g_i, g_i = z (1 + sum_{j<i} a_ij g_j) (explicit tableau) */
static int erk_amplification(const mb_method *m, double zr, double zi, double *Rr, double *Ri)
{
    const mb_erk_tableau *T = m->data;
    double gr[16], gi[16];
    double rr = 1.0, ri = 0.0;
    for (int i = 0; i < T->s; i++) {
        double ar = 1.0, ai = 0.0;
        for (int j = 0; j < i; j++) {
            ar += T->A[i * T->s + j] * gr[j];
            ai += T->A[i * T->s + j] * gi[j];
        }
        gr[i] = zr * ar - zi * ai;
        gi[i] = zr * ai + zi * ar;
        rr += T->b[i] * gr[i];
        ri += T->b[i] * gi[i];
    }
    *Rr = rr;
    *Ri = ri;
    return MB_OK;
}

/* C initializers cannot read another object's fields: name and orders are repeated
 * here and tests/c/test_tableaus.c checks they equal the tableau's. */
#define ERK_FIXED(var, T, name, p)                                                       \
    const mb_method var = {name, p, 0, MB_USES_F0 | MB_DENSE_HERMITE, 3, &T,             \
                           erk_work_size, 0, erk_step, 0, 0, 0, 0, erk_amplification, 0, 0, 0}
#define ERK_EMBEDDED(var, T, name, p, q)                                                 \
    const mb_method var = {name, p, q, MB_USES_F0 | MB_EMBEDDED | MB_FSAL, 13, &T,        \
                           erk_work_size, 0, erk_step, 0, 0, erk_dense, erk_dense_degree,     \
                           erk_amplification, 0, 0, 0}

ERK_FIXED(mb_method_euler, mb_erk_euler, "euler", 1);
ERK_FIXED(mb_method_heun, mb_erk_heun, "heun", 2);
ERK_FIXED(mb_method_rk4, mb_erk_rk4, "rk4", 4);
ERK_EMBEDDED(mb_method_rk23, mb_erk_rk23, "rk23", 3, 2);
ERK_EMBEDDED(mb_method_dopri5, mb_erk_dopri5, "dopri5", 5, 4);
