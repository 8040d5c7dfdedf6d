/* The Local Linearization Method (LLM paper, Gil, Sanfelice, Nikravesh).
 *
 * Step (eqs 1-6).  With J = f_y(t_n, y_n), f = f(t_n, y_n), f_t = df/dt(t_n, y_n),
 *   y_{n+1} = y_n + phi(tau = h),  phi(tau) = int_0^tau e^{J (tau - u)} (f + f_t u) du.
 * Substituting u = tau s, phi = int_0^1 e^{tau J (1 - s)} (tau f + tau^2 f_t s) ds, which
 * by Van Loan's theorem (eq 4, the block H_1) is the top-right column of exp(M) with
 *   M = [[tau J, tau^2 f_t / c, tau f / c], [0, 0, 1], [0, 0, 0]]  ((n+2) x (n+2)),
 * times c.  This is the paper's exp(h C_n) of eq 6 with the columns rescaled: the
 * chain entry is 1 instead of h and the vector columns are divided by the power of
 * two c >= max(|tau f|, |tau^2 f_t|), so that they do not inflate the norm that
 * sets the number of squarings of the exponential (phi is linear in them).  When
 * f_t = 0 (an autonomous problem: the finite-difference f_t is then exactly 0) the
 * f_t column is dropped and M = [[tau J, tau f / c], [0, 0]] is (n+1) x (n+1).
 *
 * Local error (eqs 29-33).  r(t) = f(t, y) - [f + J (y - y_n) + f_t (t - t_n)] is
 * approximated by v (t - t_n)^2 with v = r(t_{n+1}, y_{n+1}) / h^2 (eq 30; for
 * autonomous problems the f_t term vanishes and this is the paper's formula), and
 *   l_{n+1} = int_0^h e^{J (h - u)} v u^2 du = h^3 int_0^1 e^{hJ(1 - s)} v s^2 ds.
 * Van Loan's K_1 of the (n+3) x (n+3) matrix
 *   L = [[h J, w / c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]]
 * is int_0^1 e^{hJ(1-s)} w s^2 / 2 ds / c, so w = 2 h^3 v = 2 h r gives l (eqs 32-33
 * with the same rescaling).  l is written into err: the driver's norm, EPS/EPUS
 * (eq 39) and controllers (eqs 38, 40) apply.  l = O(h^3) (eq 34): the method has
 * order 2 and y_{n+1} + l order 3 (error_order).
 *
 * Work per step: J and f_t (mb_jac, mb_dfdt) once per (t_n, y_n) -- a rejected step
 * retried from the same point with a smaller h reuses them and recomputes only the
 * two exponentials --, f(t_{n+1}, y_{n+1}) (also the next step's f0), and the two
 * exponentials (one LU each, counted in nlu); a fixed-step run (s->err_wanted == 0)
 * skips the estimate and its exponential.
 *
 * Continuous output (eq 18): y(t_n + tau) = y_n + phi(tau) for tau in [0, h], exact
 * for the linearized problem, served as a dense record (method.h) holding
 * (y_n, f, f_t, J): 3n + n^2 doubles per step.
 */
#include <math.h>
#include <string.h>
#include "carve.h"
#include "llm.h"
#include "dense.h"
#include "expm.h"
#include "status.h"

typedef struct llm_state {
    int jac_ok;       /* J, f, f_t below belong to (tJ, yJ) */
    int autonomous;   /* f_t == 0: the (n+1) block matrix suffices */
    double tJ;
} llm_state;

/* the dense record of a step (eq 18): the linearization point and the linear model */
typedef struct llm_rec {
    double *yn, *f, *ft, *J;    /* n, n, n, n^2 */
} llm_rec;

/* The one layout of a record: counts it (c->base NULL) and carves it. */
static size_t rec_layout(mb_carver *c, ptrdiff_t n, llm_rec *r)
{
    size_t nn = (size_t)n;
    r->yn = mb_carve(c, nn);
    r->f = mb_carve(c, nn);
    r->ft = mb_carve(c, nn);
    r->J = mb_carve(c, nn * nn);
    return c->off;
}

typedef struct llm_ws {
    llm_state *st;
    llm_rec lin;        /* the linearization (yJ, fJ, ft, J): a record, as record() copies it */
    double *d, *Jd;     /* n each */
    mb_expm_scratch x;  /* size n + 3: the block matrices of phi and of the error estimate */
} llm_ws;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, ptrdiff_t n, llm_ws *w)
{
    w->st = mb_carve_bytes(c, sizeof *w->st);
    rec_layout(c, n, &w->lin);
    w->d = mb_carve(c, (size_t)n);
    w->Jd = mb_carve(c, (size_t)n);
    mb_expm_carve(c, n + 3, &w->x);
    return c->off;
}

static size_t llm_work_size(const mb_problem *p, const void *data)
{
    (void)data;
    llm_ws w;
    return layout(&(mb_carver){NULL, 0}, p->n, &w);
}

static void carve(mb_stepper *s, llm_ws *w)
{
    layout(&(mb_carver){s->work, 0}, s->n, w);
}

/* the exponent e of the power of two 2^e >= x (x > 0).  The vector columns are scaled
 * by ldexp(., -e), not by a reciprocal 1 / 2^e: that overflows once 2^e is subnormal
 * (y' = -y from 1e-300: the residual of the error estimate is ~1e-316, its reciprocal
 * inf, and every step failed down to the smallest h).  In the normal range the two are
 * the same exact scaling. */
static int pow2_exponent(double x)
{
    int e;
    frexp(x, &e);
    return e;
}

static double max_abs(ptrdiff_t n, const double *x, double scale)
{
    double m = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        m = fmax(m, fabs(scale * x[i]));
    return m;
}

static int all_zero(ptrdiff_t n, const double *x)
{
    for (ptrdiff_t i = 0; i < n; i++)
        if (x[i] != 0.0)
            return 0;
    return 1;
}

/* M (N x N, ld N) = [[tau J, 0...], [0...]]: the top-left block, zeros elsewhere */
static void put_jacobian(ptrdiff_t n, ptrdiff_t N, const double *J, double tau, double *M)
{
    memset(M, 0, (size_t)(N * N) * sizeof(double));
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++)
            M[j * N + i] = tau * J[j * n + i];
}

/* phi(tau) of the step (see the top of the file); x: the scratch of an exponential of
 * size n + 2 at least, the block matrix exponentiated in place.  Returns MB_OK or
 * mb_expm's status. */
static int llm_phi(ptrdiff_t n, const double *J, const double *f, const double *ft,
                   int autonomous, double tau, double *phi, const mb_expm_scratch *x)
{
    double *M = x->M;
    double mx = max_abs(n, f, tau);
    if (!autonomous)
        mx = fmax(mx, max_abs(n, ft, tau * tau));
    if (mx == 0.0) {  /* an equilibrium of the linear model */
        memset(phi, 0, (size_t)n * sizeof(double));
        return MB_OK;
    }
    int e = pow2_exponent(mx);
    ptrdiff_t N = autonomous ? n + 1 : n + 2;
    put_jacobian(n, N, J, tau, M);
    double *last = M + (N - 1) * N;
    for (ptrdiff_t i = 0; i < n; i++)
        last[i] = tau * ldexp(f[i], -e);
    if (!autonomous) {
        double *col = M + n * N, tau2 = tau * tau;
        for (ptrdiff_t i = 0; i < n; i++)
            col[i] = tau2 * ldexp(ft[i], -e);
        last[n] = 1.0;
    }
    int rc = mb_expm(N, M, N, M, N, x->work, x->ipiv, NULL);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < n; i++)
        phi[i] = ldexp(last[i], e);
    return MB_OK;
}

/* l = K_1 of the (n+3) matrix of the error estimate with w = 2 h r (top of the file) */
static int llm_error(ptrdiff_t n, const double *J, const double *r, double h, double *l,
                     const mb_expm_scratch *x)
{
    double *M = x->M;
    double mx = max_abs(n, r, 2.0 * h);
    if (mx == 0.0) {  /* the linear model is exact at the step's end */
        memset(l, 0, (size_t)n * sizeof(double));
        return MB_OK;
    }
    int ex = pow2_exponent(mx);
    ptrdiff_t N = n + 3;
    put_jacobian(n, N, J, h, M);
    for (ptrdiff_t i = 0; i < n; i++)
        M[n * N + i] = 2.0 * h * ldexp(r[i], -ex);
    M[(n + 1) * N + n] = 1.0;
    M[(n + 2) * N + n + 1] = 1.0;
    int rc = mb_expm(N, M, N, M, N, x->work, x->ipiv, NULL);
    if (rc != MB_OK)
        return rc;
    const double *e = M + (N - 1) * N;
    for (ptrdiff_t i = 0; i < n; i++)
        l[i] = ldexp(e[i], ex);
    return MB_OK;
}

static int llm_init(mb_stepper *s)
{
    if (s->p->mass)
        return mb_fail(s, MB_ERR_NOT_SUPPORTED,
                       "Method 'llm' does not take a mass matrix (use radau_iia, bdf or rodas4).");
    llm_ws w;
    carve(s, &w);
    memset(w.st, 0, sizeof *w.st);  /* also after a restart: no linearization kept */
    return MB_OK;
}

static int llm_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                    double *err)
{
    llm_ws w;
    carve(s, &w);
    llm_state *st = w.st;
    ptrdiff_t n = s->n;
    size_t bytes = (size_t)n * sizeof(double);
    int rc;
    const llm_rec *L = &w.lin;
    if (!(st->jac_ok && st->tJ == t && memcmp(L->yn, y, bytes) == 0)) {
        st->jac_ok = 0;
        if ((rc = mb_jac(s, t, y, s->f0, L->J)) != MB_OK)
            return rc;
        if ((rc = mb_dfdt(s, t, y, s->f0, L->ft)) != MB_OK)
            return rc;
        memcpy(L->yn, y, bytes);
        memcpy(L->f, s->f0, bytes);
        st->tJ = t;
        st->autonomous = all_zero(n, L->ft);
        st->jac_ok = 1;
    }
    /* y_{n+1} = y_n + phi(h) (eq 1) */
    s->stats->nlu++;
    /* an exponential that overflows (or a singular Pade denominator) is a failed
     * step: a smaller h may do */
    rc = llm_phi(n, L->J, L->f, L->ft, st->autonomous, h, w.d, &w.x);
    if (rc != MB_OK)
        return rc == MB_ERR_LINALG ? MB_RECOVERABLE : rc;
    for (ptrdiff_t i = 0; i < n; i++) {
        y_new[i] = y[i] + w.d[i];
        if (!isfinite(y_new[i]))
            return MB_RECOVERABLE;
    }
    /* f(t_{n+1}, y_{n+1}): the residual of eq 30 and the next step's f0 */
    if ((rc = mb_rhs(s, t + h, y_new, s->f1)) != MB_OK)
        return rc;
    s->f1_ok = 1;
    if (!s->err_wanted)  /* a fixed-step run: no estimate needed */
        return MB_OK;
    /* r = f(t_{n+1}, y_{n+1}) - f - J (y_{n+1} - y_n) - f_t h, into d */
    mb_gemv(n, n, 1.0, L->J, n, w.d, 0.0, w.Jd);
    for (ptrdiff_t i = 0; i < n; i++)
        w.d[i] = s->f1[i] - L->f[i] - w.Jd[i] - (st->autonomous ? 0.0 : h * L->ft[i]);
    s->stats->nlu++;
    rc = llm_error(n, L->J, w.d, h, err, &w.x);
    if (rc != MB_OK)
        return rc == MB_ERR_LINALG ? MB_RECOVERABLE : rc;
    return MB_OK;
}

/* ---- continuous output (eq 18) as a dense record ---- */

/* the scratch of record_eval: one exponential of size n + 2 */
static size_t eval_layout(mb_carver *c, ptrdiff_t n, mb_expm_scratch *x)
{
    mb_expm_carve(c, n + 2, x);
    return c->off;
}

static size_t llm_record_size(ptrdiff_t n, const void *data, size_t *work_size)
{
    (void)data;
    mb_expm_scratch x;
    llm_rec r;
    *work_size = eval_layout(&(mb_carver){NULL, 0}, n, &x);
    return rec_layout(&(mb_carver){NULL, 0}, n, &r);
}

static int llm_record(mb_stepper *s, double *rec)
{
    llm_ws w;
    carve(s, &w);
    if (!w.st->jac_ok)
        return mb_fail(s, MB_ERR_ILL_INPUT, "llm: dense output requested before any step.");
    /* the linearization is laid out as a record in the workspace */
    llm_rec r;
    size_t len = rec_layout(&(mb_carver){NULL, 0}, s->n, &r);
    memcpy(rec, w.lin.yn, len * sizeof(double));
    return MB_OK;
}

static int llm_record_eval(const mb_method *m, ptrdiff_t n, const double *rec, double t0,
                           double h, double theta, double *y, double *work)
{
    (void)m;
    (void)t0;
    llm_rec r;  /* read only */
    rec_layout(&(mb_carver){(double *)rec, 0}, n, &r);
    double tau = theta * h;
    if (tau == 0.0) {
        memcpy(y, r.yn, (size_t)n * sizeof(double));
        return MB_OK;
    }
    mb_expm_scratch x;
    eval_layout(&(mb_carver){work, 0}, n, &x);
    int rc = llm_phi(n, r.J, r.f, r.ft, all_zero(n, r.ft), tau, y, &x);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < n; i++)
        y[i] += r.yn[i];
    return MB_OK;
}

/* R(z) = e^z: the LLM is exact on y' = lambda y */
static int llm_amplification(const mb_method *m, double zr, double zi, double *Rr, double *Ri)
{
    (void)m;
    double a = exp(zr);
    *Rr = a * cos(zi);
    *Ri = a * sin(zi);
    return MB_OK;
}

const mb_method mb_method_llm = {
    .name = "llm",
    .order = 2,
    .error_order = 3,
    .flags = MB_NEEDS_JAC | MB_EMBEDDED | MB_USES_F0 | MB_FSAL,
    .max_dense_degree = 0,
    .data = NULL,
    .work_size = llm_work_size,
    .init = llm_init,
    .step = llm_step,
    .amplification = llm_amplification,
    .dense_record_size = llm_record_size,
    .dense_record = llm_record,
    .dense_record_eval = llm_record_eval,
};
