/* One explicit Runge-Kutta kernel over the tableaus of tableaus.c.
 * Workspace: K ((s + fsal) x n stages) and one stage vector. */
#include <math.h>
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

int mb_erk_stiffness(const mb_stepper *s, const double *scale, double *h_lambda)
{
    const mb_erk_tableau *T = s->m->data;
    ptrdiff_t n = s->n;
    int ns = T->s;
    *h_lambda = 0.0;
    if (!T->fsal || ns < 2 || T->c[ns - 1] != 1.0)
        return MB_ERR_ILL_INPUT;
    const double *K = s->work, *a = T->A + (ptrdiff_t)(ns - 1) * ns;
    const double *g_s = K + (ptrdiff_t)(ns - 1) * n, *g_new = K + (ptrdiff_t)ns * n;
    double num = 0.0, den = 0.0;
    for (ptrdiff_t l = 0; l < n; l++) {
        /* y_new - y_s = h sum_j (b_j - a_sj) k_j, without the cancellation */
        double dy = 0.0, df = g_new[l] - g_s[l], w = scale ? 1.0 / scale[l] : 1.0;
        for (int j = 0; j < ns; j++)
            dy += (T->b[j] - a[j]) * K[(ptrdiff_t)j * n + l];
        num += (w * df) * (w * df);
        den += (w * dy) * (w * dy);
    }
    /* dy lacks the factor h of y_new - y_s: h |lambda| = sqrt(num / den) */
    if (den > 0.0)
        *h_lambda = sqrt(num / den);
    return MB_OK;
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
