/* One explicit Runge-Kutta kernel over the tableaus of tableaus.c and
 * tableaus_dop853.c.
 * Workspace (layout()): K (s stages, the FSAL stage, the s_extra dense-output stages,
 * k_1 in row 0) and one stage vector. */
#include <math.h>
#include <string.h>
#include "carve.h"
#include "erk.h"
#include "norm.h"
#include "status.h"

/* rows of K: a slot for the FSAL stage whether used or not, then the dense stages */
static int erk_rows(const mb_erk_tableau *T)
{
    return T->s + 1 + T->s_extra;
}

typedef struct erk_work {
    double *K;   /* erk_rows(T) stage vectors, k_1 first */
    double *yt;  /* the argument of a stage */
} erk_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, const mb_erk_tableau *T, ptrdiff_t n, erk_work *w)
{
    w->K = mb_carve(c, (size_t)erk_rows(T) * (size_t)n);
    w->yt = mb_carve(c, (size_t)n);
    return c->off;
}

static size_t erk_work_size(const mb_problem *p, const void *data)
{
    erk_work w;
    return layout(&(mb_carver){NULL, 0}, data, p->n, &w);
}

static erk_work workspace(const mb_stepper *s)
{
    erk_work w;
    layout(&(mb_carver){s->work, 0}, s->m->data, s->n, &w);
    return w;
}

/* yt = y + h sum_{j < i} a[j] K_j, the argument of stage i */
static void erk_stage_arg(ptrdiff_t n, const double *y, double h, const double *a, int i,
                          const double *K, double *yt)
{
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0;
        for (int j = 0; j < i; j++)
            acc += a[j] * K[(ptrdiff_t)j * n + l];
        yt[l] = y[l] + h * acc;
    }
}

/* out = h sum_{j < nk} w_j K_j */
static void erk_combine(ptrdiff_t n, double h, const double *w, int nk, const double *K,
                        double *out)
{
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0;
        for (int j = 0; j < nk; j++)
            acc += w[j] * K[(ptrdiff_t)j * n + l];
        out[l] = h * acc;
    }
}

/* DOP853's error (Hairer, Norsett & Wanner I, II.5, and the code DOP853; tableaus.h):
 * with the driver's weighted RMS norm |.| (same weights: y, y_new, rtol, atol),
 *   |err| = |err5|^2 / sqrt(|err5|^2 + 0.01 |err3|^2),
 * returned as the vector err5 * |err5| / sqrt(|err5|^2 + 0.01 |err3|^2), so that the
 * driver's norm of it is that number.  The factor is a ratio of norms (free of h), so
 * under error per unit step (the driver divides the norm by |h|) the run controls
 * DOP853's estimate per unit step, O(h^7), and the driver's exponent is then 1/7
 * (error_order 7) instead of 1/8.  The factor is computed as
 * 1 / sqrt(1 + 0.01 (|err3| / |err5|)^2) so that no square overflows; err5 is left
 * unscaled when a norm is not finite (the driver's norm is then |err5|). */
static void erk_err_combined(mb_stepper *s, const double *y, const double *y_new,
                             double *err5, const double *err3)
{
    ptrdiff_t n = s->n;
    double n5 = mb_norm(s, err5, y, y_new);
    double n3 = mb_norm(s, err3, y, y_new);
    if (!isfinite(n5) || !isfinite(n3))
        return;
    double r = n5 > 0.0 ? n3 / n5 : 0.0;
    double fac = 1.0 / sqrt(1.0 + 0.01 * r * r);
    for (ptrdiff_t l = 0; l < n; l++)
        err5[l] *= fac;
}

static int erk_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                    double *err)
{
    const mb_erk_tableau *T = s->m->data;
    ptrdiff_t n = s->n;
    int ns = T->s, nk = T->s + T->fsal;
    erk_work w = workspace(s);
    double *K = w.K, *yt = w.yt;
    int rc;

    memcpy(K, s->f0, (size_t)n * sizeof(double));
    for (int i = 1; i < ns; i++) {
        erk_stage_arg(n, y, h, T->A + (ptrdiff_t)i * ns, i, K, yt);
        if ((rc = mb_rhs(s, t + T->c[i] * h, yt, K + (ptrdiff_t)i * n)) != MB_OK)
            return rc;
    }
    erk_combine(n, h, T->b, ns, K, y_new);
    for (ptrdiff_t l = 0; l < n; l++)
        y_new[l] += y[l];
    if (T->fsal) {
        double *kl = K + (ptrdiff_t)ns * n;
        if ((rc = mb_rhs(s, t + h, y_new, kl)) != MB_OK)
            return rc;
        memcpy(s->f1, kl, (size_t)n * sizeof(double));
        s->f1_ok = 1;
    }
    if (T->e) {
        erk_combine(n, h, T->e, nk, K, err);
        if (T->e3) {
            erk_combine(n, h, T->e3, nk, K, yt);
            erk_err_combined(s, y, y_new, err, yt);
        }
    }
    return MB_OK;
}

/* Hairer's nested dense form (tableaus.h, D) as the monomial coefficients C_1..C_7:
 *   theta F0 + theta(1-theta) F1 + theta^2(1-theta) F2 + theta^2(1-theta)^2 F3
 *   + theta^3(1-theta)^2 F4 + theta^3(1-theta)^3 F5 + theta^4(1-theta)^3 F6
 * expanded: C1 = F0 + F1, C2 = -F1 + F2 + F3, C3 = -F2 - 2 F3 + F4 + F5,
 * C4 = F3 - 2 F4 - 3 F5 + F6, C5 = F4 + 3 F5 - 3 F6, C6 = -F5 + 3 F6, C7 = -F6. */
static void erk_dense_hairer(const mb_erk_tableau *T, ptrdiff_t n, double h, const double *y,
                             const double *K, int nk, double *C)
{
    const double *k1 = K, *kn = K + (ptrdiff_t)T->s * n;  /* f(t, y), f(t + h, y_new) */
    double F[7];
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0;
        for (int j = 0; j < T->s; j++)
            acc += T->b[j] * K[(ptrdiff_t)j * n + l];
        double delta = h * acc;
        F[0] = delta;
        F[1] = h * k1[l] - delta;
        F[2] = 2.0 * delta - h * (k1[l] + kn[l]);
        for (int r = 0; r < 4; r++) {
            const double *d = T->D + (ptrdiff_t)r * nk;
            acc = 0.0;
            for (int j = 0; j < nk; j++)
                acc += d[j] * K[(ptrdiff_t)j * n + l];
            F[3 + r] = h * acc;
        }
        C[l] = y[l];
        C[1 * n + l] = F[0] + F[1];
        C[2 * n + l] = -F[1] + F[2] + F[3];
        C[3 * n + l] = -F[2] - 2.0 * F[3] + F[4] + F[5];
        C[4 * n + l] = F[3] - 2.0 * F[4] - 3.0 * F[5] + F[6];
        C[5 * n + l] = F[4] + 3.0 * F[5] - 3.0 * F[6];
        C[6 * n + l] = -F[5] + 3.0 * F[6];
        C[7 * n + l] = -F[6];
    }
}

/* The dense output of the last step.  Dense-output stages (s_extra > 0) are evaluated
 * here, from the step's K (intact until the next step), and count in nfev; calling
 * this twice for one step evaluates them twice and gives the same C. */
static int erk_dense(mb_stepper *s, double *C)
{
    const mb_erk_tableau *T = s->m->data;
    ptrdiff_t n = s->n;
    int nk = T->s + T->fsal, d = T->dense_deg;
    erk_work w = workspace(s);
    double *K = w.K, *yt = w.yt;
    double h = s->h_last, t = s->t_last;
    const double *y = s->y_last;
    int rc;

    for (int r = 0; r < T->s_extra; r++) {
        const double *a = T->A_extra + (ptrdiff_t)r * (nk + T->s_extra);
        erk_stage_arg(n, y, h, a, nk + r, K, yt);
        if ((rc = mb_rhs(s, t + T->c_extra[r] * h, yt, K + (ptrdiff_t)(nk + r) * n)) != MB_OK)
            return rc;
    }
    if (T->D) {
        erk_dense_hairer(T, n, h, y, K, nk + T->s_extra, C);
        return MB_OK;
    }
    memcpy(C, y, (size_t)n * sizeof(double));
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
    const double *K = workspace(s).K, *a = T->A + (ptrdiff_t)(ns - 1) * ns;
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
 * here and tests/c/test_core.c and test_dop853.c check they equal the tableau's. */
#define ERK_FIXED(var, T, name, p)                                                       \
    const mb_method var = {name, p, 0, MB_USES_F0 | MB_DENSE_HERMITE, 3, &T,             \
                           erk_work_size, 0, erk_step, 0, 0, 0, 0, erk_amplification, 0, 0, 0, 0}
#define ERK_EMBEDDED(var, T, name, p, q)                                                 \
    const mb_method var = {name, p, q, MB_USES_F0 | MB_EMBEDDED | MB_FSAL, 13, &T,        \
                           erk_work_size, 0, erk_step, 0, 0, erk_dense, erk_dense_degree,     \
                           erk_amplification, 0, 0, 0, 0}

ERK_FIXED(mb_method_euler, mb_erk_euler, "euler", 1);
ERK_FIXED(mb_method_heun, mb_erk_heun, "heun", 2);
ERK_FIXED(mb_method_rk4, mb_erk_rk4, "rk4", 4);
ERK_EMBEDDED(mb_method_rk23, mb_erk_rk23, "rk23", 3, 2);
ERK_EMBEDDED(mb_method_dopri5, mb_erk_dopri5, "dopri5", 5, 4);
/* error order 7: the exponent of the step-size control is 1/8 (1/7 per unit step),
 * as in Hairer's DOP853 and SciPy (tableaus_dop853.c) */
ERK_EMBEDDED(mb_method_dop853, mb_erk_dop853, "dop853", 8, 7);
