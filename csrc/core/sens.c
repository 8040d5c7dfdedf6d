/* mb_sens: forward parameter sensitivities as one wrapper problem (sens.h, issue 26).
 *
 * The wrapper lives in one work block (carved by layout(), the one size formula).
 * Every callback of the augmented problem gathers the base state y (and s_k) out of
 * the augmented vector Y through mb_sens_index (the first-order and the second-order
 * layouts of sens.h), calls the base, and scatters the result back.
 *
 * Difference quotients (CVODES' simultaneous DQ):
 *   rhs of s_k   centred  (f(y + e s_k, p + e) - f(y - e s_k, p - e)) / (2 e)
 *                forward  (f(y + e s_k, p + e) - f(y, p)) / e
 *                e = c / max(1 / pbar_k, rms(s_k / ysc)), c = eps^(1/3) or eps^(1/2)
 *   B_k (dense aug J)  with the base jac: (J(y + e s_k, p + e) - J(y - e s_k, p - e)) / (2 e)
 *                without: the mixed second difference of f in (y_j, (s_k, e_k)), steps
 *                eps^(1/4) (error O(eps^(1/2))), and J itself by centred differences.
 * The parameter *p[k] is always restored before a callback returns. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "carve.h"
#include "sens.h"
#include "status.h"
#include "../linalg/dense.h"

_Static_assert(_Alignof(double complex) <= _Alignof(double), "double complex alignment");

enum { NSLOT = 2 };  /* linsys.h: slots 0 and 1 */

struct mb_sens {
    const mb_problem *base;
    mb_problem aug;
    mb_linsys ls;
    ptrdiff_t n, nq, N;
    int np, dense, has_mass;
    mb_sens_options opts;
    double **p;         /* np parameter addresses (entries may be NULL) */
    double *pbar;       /* np scales */
    double *atol;       /* n */
    double *y, *f0, *yp, *ym, *fp, *fm, *sk, *col, *ga, *gb; /* n each */
    double *J, *Jp, *Jm;   /* n x n each (dense) */
    double *Jl;            /* n x n: the kept J of the block linsys (dense) */
    double *B;             /* np n x n: the kept B_k (block_newton 2, dense) */
    double *xr, *xi;       /* n each: the y part of a block solve */
    int lower;             /* block_newton 2 without a base linsys: B_k in the matrices */
    double *LU[NSLOT];     /* 2 n x n each (room for a complex LU) */
    int *ipiv;             /* NSLOT n */
    double *zx;            /* 2 n: one complex vector */
    int cplx[NSLOT], lu_ok[NSLOT], jl_ok;
    double *mass;          /* N x N block-diagonal (has_mass) */
    double *mass_diag;     /* N */
    unsigned char *dae_index; /* N */
    long nf, nj;
};

static size_t layout(mb_carver *c, ptrdiff_t n, ptrdiff_t nq, int np, int has_mass, int dense,
                     mb_sens *w)
{
    size_t un = (size_t)n, N = un * (size_t)(1 + np), nn = dense ? un * un : 0;
    (void)nq;
    mb_carve_bytes(c, sizeof(mb_sens));  /* the struct itself, at offset 0 */
    w->p = mb_carve_bytes(c, (size_t)np * sizeof(double *));
    w->pbar = mb_carve(c, (size_t)np);
    w->atol = mb_carve(c, un);
    double **v[] = {&w->y, &w->f0, &w->yp, &w->ym, &w->fp, &w->fm, &w->sk, &w->col, &w->ga,
                    &w->gb};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        *v[i] = mb_carve(c, un);
    w->J = mb_carve(c, nn);
    w->Jp = mb_carve(c, nn);
    w->Jm = mb_carve(c, nn);
    w->Jl = mb_carve(c, nn);
    w->B = mb_carve(c, (size_t)np * nn);
    w->xr = mb_carve(c, un);
    w->xi = mb_carve(c, un);
    for (int k = 0; k < NSLOT; k++)
        w->LU[k] = mb_carve(c, 2 * nn);
    w->ipiv = mb_carve_int(c, dense ? (size_t)NSLOT * un : 0);
    w->zx = mb_carve(c, 2 * un);
    w->mass = mb_carve(c, has_mass ? N * N : 0);
    w->mass_diag = mb_carve(c, N);
    w->dae_index = mb_carve_bytes(c, N);
    return c->off;
}

size_t mb_sens_work_size(ptrdiff_t n, ptrdiff_t nq, int np, int has_mass, int dense)
{
    mb_sens scratch;
    if (n < 0 || np < 0)
        return 0;
    return layout(&(mb_carver){NULL, 0}, n, nq, np, has_mass, dense, &scratch);
}

const mb_problem *mb_sens_problem(const mb_sens *s)
{
    return &s->aug;
}

ptrdiff_t mb_sens_index(const mb_sens *s, int b, ptrdiff_t i)
{
    if (!s->nq)
        return (ptrdiff_t)b * s->n + i;
    ptrdiff_t nq = s->nq;
    return i < nq ? (ptrdiff_t)b * nq + i : nq * (1 + s->np) + (ptrdiff_t)b * nq + (i - nq);
}

/* block b of Y into x (n) and back */
static void gather(const mb_sens *s, int b, const double *Y, double *x)
{
    for (ptrdiff_t i = 0; i < s->n; i++)
        x[i] = Y[mb_sens_index(s, b, i)];
}

static void scatter(const mb_sens *s, int b, const double *x, double *Y)
{
    for (ptrdiff_t i = 0; i < s->n; i++)
        Y[mb_sens_index(s, b, i)] = x[i];
}

void mb_sens_pack(const mb_sens *s, const double *y, const double *S, double *Y)
{
    scatter(s, 0, y, Y);
    for (int k = 0; k < s->np; k++)
        scatter(s, 1 + k, S + (ptrdiff_t)k * s->n, Y);
}

void mb_sens_unpack(const mb_sens *s, const double *Y, double *y, double *S)
{
    if (y)
        gather(s, 0, Y, y);
    for (int k = 0; S && k < s->np; k++)
        gather(s, 1 + k, Y, S + (ptrdiff_t)k * s->n);
}

long mb_sens_nf_base(const mb_sens *s)
{
    return s->nf;
}

long mb_sens_njac_base(const mb_sens *s)
{
    return s->nj;
}

/* ---- evaluations of the base ---- */

/* f (acc == 0: n values) or a (acc == 1: nq values, q = y, q' = y + nq) at (t, y) */
static int feval(mb_sens *s, int acc, double t, const double *y, double *out)
{
    const mb_problem *b = s->base;
    s->nf++;
    if (acc)
        return b->acc(t, y, y + s->nq, out, b->ctx);
    return b->rhs(t, y, out, b->ctx);
}

/* set *p[k] = p0 + d (when the parameter is one); returns the increment actually made */
static double pset(mb_sens *s, int k, double p0, double d)
{
    if (!s->p[k])
        return d;
    *s->p[k] = p0 + d;
    return *s->p[k] - p0;
}

static void prestore(mb_sens *s, int k, double p0)
{
    if (s->p[k])
        *s->p[k] = p0;
}

/* RHO: the largest ratio of the p step to the y step of one simultaneous difference
 * (CVODES' rhomax); beyond it the y and p directions are differenced separately, so
 * that the p increment never drowns in the round-off of p (a component of y near 0
 * with a tiny atol makes the y step tiny) */
#define RHO 100.0

/* the steps along s_k (ey = c / rms(s_k / ysc); inf for s_k = 0) and along e_k
 * (ep = c pbar_k); *sep = 1 when the two directions are differenced separately.
 * Simultaneous: both = min(ey, ep) = c / max(1 / pbar_k, rms(s_k / ysc)) (sens.h). */
static void dq_steps(const mb_sens *s, int k, const double *y, const double *sk, double c,
                     double *ey, double *ep, int *sep)
{
    double sum = 0.0;
    for (ptrdiff_t i = 0; i < s->n; i++) {
        double r = sk[i] / (fabs(y[i]) + s->atol[i]);
        sum += r * r;
    }
    double rms = s->n ? sqrt(sum / (double)s->n) : 0.0;
    *ey = rms > 0.0 ? c / rms : INFINITY;
    *ep = c * s->pbar[k];
    *sep = s->p[k] && *ey < INFINITY && *ep > RHO * *ey;
    if (!*sep)
        *ey = *ep = fmin(*ey, *ep);
}

static int is_zero(const double *x, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        if (x[i] != 0.0)
            return 0;
    return 1;
}

/* out += (g(y + ey sk, p + ep e_k) - g(y - ey sk, p - ep e_k)) / (2 e) (centred) or
 * (g(y + ey sk, p + ep e_k) - g0) / e (forward), g = f or a; sk NULL or ep 0: that part
 * not moved; e = ep when p moves (its representable increment), else ey */
static int dir_diff(mb_sens *s, int acc, int k, double t, const double *y, const double *sk,
                    double ey, double ep, const double *g0, double *out)
{
    ptrdiff_t n = s->n, m = acc ? s->nq : n;
    int fwd = s->opts.dq == MB_SENS_FORWARD, rc;
    double p0 = s->p[k] ? *s->p[k] : 0.0, e = ey;
    if (ep > 0.0 && s->p[k]) {
        ep = pset(s, k, p0, ep);  /* the representable increment of p_k */
        if (sk)
            ey *= ep / e;         /* the same e along s_k (simultaneous) */
        e = ep;
    }
    for (ptrdiff_t i = 0; i < n; i++)
        s->yp[i] = y[i] + (sk ? ey * sk[i] : 0.0);
    rc = feval(s, acc, t, s->yp, s->fp);
    if (rc == 0 && !fwd) {
        if (ep > 0.0)
            pset(s, k, p0, -ep);
        for (ptrdiff_t i = 0; i < n; i++)
            s->ym[i] = y[i] - (sk ? ey * sk[i] : 0.0);
        rc = feval(s, acc, t, s->ym, s->fm);
    }
    prestore(s, k, p0);
    if (rc != 0)
        return rc;
    const double *lo = fwd ? g0 : s->fm;
    double den = fwd ? e : 2.0 * e;
    for (ptrdiff_t i = 0; i < m; i++)
        out[i] += (s->fp[i] - lo[i]) / den;
    return 0;
}

/* out (m = n or nq values) <- d/de g(t, y + e sk, p + e e_k) at e = 0, g = f or a;
 * g0 = g(t, y) (used by the forward difference).  With dfdp the p-direction is its
 * column (the difference then runs along (sk, 0)). */
static int sens_dq(mb_sens *s, int acc, int k, double t, const double *y, const double *sk,
                   const double *g0, const double *Jy, double *out)
{
    ptrdiff_t n = s->n, m = acc ? s->nq : n, off = acc ? s->nq : 0;
    int fwd = s->opts.dq == MB_SENS_FORWARD, rc = 0, sep;
    int use_p = s->p[k] && !s->opts.dfdp, zs = is_zero(sk, n);
    memset(out, 0, (size_t)m * sizeof(double));
    if (s->opts.dfdp && s->p[k]) {
        if ((rc = s->opts.dfdp(t, y, k, s->col, s->base->ctx)) != 0)
            return rc;
        memcpy(out, s->col + off, (size_t)m * sizeof(double));
    }
    if (Jy) {  /* J s_k with the base's J (opts.jac_rhs), then the p part alone */
        for (ptrdiff_t j = 0; j < n; j++)
            for (ptrdiff_t i = 0; sk[j] != 0.0 && i < m; i++)
                out[i] += Jy[j * n + off + i] * sk[j];
        double ep = (fwd ? sqrt(DBL_EPSILON) : cbrt(DBL_EPSILON)) * s->pbar[k];
        return use_p ? dir_diff(s, acc, k, t, y, NULL, 0.0, ep, g0, out) : 0;
    }
    if (!use_p && zs)
        return 0;
    double ey, ep;
    dq_steps(s, k, y, sk, fwd ? sqrt(DBL_EPSILON) : cbrt(DBL_EPSILON), &ey, &ep, &sep);
    if (!use_p)
        return dir_diff(s, acc, k, t, y, sk, zs ? 0.0 : ey, 0.0, g0, out);
    if (!sep)
        return dir_diff(s, acc, k, t, y, zs ? NULL : sk, ey, ep, g0, out);
    rc = dir_diff(s, acc, k, t, y, sk, ey, 0.0, g0, out);
    return rc ? rc : dir_diff(s, acc, k, t, y, NULL, 0.0, ep, g0, out);
}

static int jac_base(mb_sens *s, double t, const double *y, const double *f0, int centred,
                    double *J);

/* with opts.jac_rhs: the base J at (t, y) into s->Jm (one Jacobian evaluation), else NULL */
static int jac_for_rhs(mb_sens *s, double t, const double *y, const double **Jy)
{
    *Jy = NULL;
    if (!(s->opts.jac_rhs && s->base->jac && s->dense && s->np))
        return 0;
    *Jy = s->Jm;
    return jac_base(s, t, y, NULL, 1, s->Jm);
}

static int aug_rhs(double t, const double *Y, double *F, void *ctx)
{
    mb_sens *s = ctx;
    const double *Jy;
    gather(s, 0, Y, s->y);
    int rc = feval(s, 0, t, s->y, s->f0);
    if (rc == 0)
        rc = jac_for_rhs(s, t, s->y, &Jy);
    if (rc != 0)
        return rc;
    scatter(s, 0, s->f0, F);
    for (int k = 0; k < s->np; k++) {
        gather(s, 1 + k, Y, s->sk);
        if ((rc = sens_dq(s, 0, k, t, s->y, s->sk, s->f0, Jy, s->ga)) != 0)
            return rc;
        scatter(s, 1 + k, s->ga, F);
    }
    return 0;
}

/* second-order view: Qdd = (a, a_s_0, .., a_s_{np-1}) from Q = (q, s^q..), Qd */
static int aug_acc(double t, const double *Q, const double *Qd, double *Qdd, void *ctx)
{
    mb_sens *s = ctx;
    ptrdiff_t nq = s->nq;
    const double *Jy = NULL;
    for (int b = 0; b <= s->np; b++) {
        double *dst = b ? s->sk : s->y;
        memcpy(dst, Q + (ptrdiff_t)b * nq, (size_t)nq * sizeof(double));
        memcpy(dst + nq, Qd + (ptrdiff_t)b * nq, (size_t)nq * sizeof(double));
        int rc = b ? sens_dq(s, 1, b - 1, t, s->y, s->sk, s->f0, Jy, Qdd + (ptrdiff_t)b * nq)
                   : feval(s, 1, t, s->y, s->f0);
        if (rc == 0 && !b)
            rc = jac_for_rhs(s, t, s->y, &Jy);
        if (rc != 0)
            return rc;
        if (!b)
            memcpy(Qdd, s->f0, (size_t)nq * sizeof(double));
    }
    return 0;
}

static int aug_step_bound(double t, const double *Y, const double *F, double *h_max, void *ctx)
{
    mb_sens *s = ctx;
    gather(s, 0, Y, s->y);
    gather(s, 0, F, s->ga);
    return s->base->step_bound(t, s->y, s->ga, h_max, s->base->ctx);
}

/* ---- Jacobians ---- */

/* the difference increment of y_j for a derivative with relative step c */
static double y_incr(double yj, double c)
{
    return c * fmax(fabs(yj), 1e-5);
}

/* J = df/dy at (t, y): the base jac, else differences of f (centred: 2 n f; forward
 * from f0 = f(t, y): n f).  One Jacobian evaluation (counted). */
static int jac_base(mb_sens *s, double t, const double *y, const double *f0, int centred,
                    double *J)
{
    const mb_problem *b = s->base;
    ptrdiff_t n = s->n;
    s->nj++;
    if (b->jac)
        return b->jac(t, y, J, n, b->ctx);
    double c = centred ? cbrt(DBL_EPSILON) : sqrt(DBL_EPSILON);
    memcpy(s->yp, y, (size_t)n * sizeof(double));
    for (ptrdiff_t j = 0; j < n; j++) {
        s->yp[j] = y[j] + y_incr(y[j], c);
        double d = s->yp[j] - y[j];
        int rc = feval(s, 0, t, s->yp, s->fp);
        if (rc == 0 && centred) {
            s->yp[j] = y[j] - d;
            rc = feval(s, 0, t, s->yp, s->fm);
        }
        s->yp[j] = y[j];
        if (rc != 0)
            return rc;
        const double *lo = centred ? s->fm : f0;
        double den = centred ? 2.0 * d : d;
        for (ptrdiff_t i = 0; i < n; i++)
            J[j * n + i] = (s->fp[i] - lo[i]) / den;
    }
    return 0;
}

/* the point (y + sg (ey sk + dj e_j), p0 + sg ep) into yp and *p[k] (sk NULL: y not
 * moved along it; j < 0: no e_j); returns the increment of p made (sg ep rounded) */
static double move(mb_sens *s, int k, const double *y, const double *sk, double ey, double ep,
                   ptrdiff_t j, double dj, double sg)
{
    for (ptrdiff_t i = 0; i < s->n; i++)
        s->yp[i] = y[i] + (sk ? sg * ey * sk[i] : 0.0);
    if (j >= 0)
        s->yp[j] += dj;
    double p0 = s->p[k] ? *s->p[k] : 0.0;
    return ep > 0.0 ? pset(s, k, p0, sg * ep) : 0.0;
}

/* B += (J(y + ey sk, p + ep) - J(y - ey sk, p - ep)) / (2 e), e = ep (rounded) or ey */
static int jac_dir(mb_sens *s, int k, double t, const double *y, const double *sk, double ey,
                   double ep, double *B)
{
    ptrdiff_t n = s->n, nn = n * n;
    const mb_problem *b = s->base;
    double p0 = s->p[k] ? *s->p[k] : 0.0, e = ey;
    if (ep > 0.0 && s->p[k]) {
        double dp = pset(s, k, p0, ep);
        prestore(s, k, p0);
        ey *= sk ? dp / ep : 1.0;
        e = ep = dp;
    }
    s->nj += 2;
    move(s, k, y, sk, ey, ep, -1, 0.0, 1.0);
    int rc = b->jac(t, s->yp, s->Jp, n, b->ctx);
    prestore(s, k, p0);
    if (rc == 0) {
        move(s, k, y, sk, ey, ep, -1, 0.0, -1.0);
        rc = b->jac(t, s->yp, s->Jm, n, b->ctx);
    }
    prestore(s, k, p0);
    if (rc != 0)
        return rc;
    for (ptrdiff_t i = 0; i < nn; i++)
        B[i] += (s->Jp[i] - s->Jm[i]) / (2.0 * e);
    return 0;
}

/* B += the mixed second difference of f in (y_j, (ey sk, ep e_k)): column j is
 * (f(+d,+e) - f(+d,-e) - f(-d,+e) + f(-d,-e)) / (4 d e) */
static int f_mixed(mb_sens *s, int k, double t, const double *y, const double *sk, double ey,
                   double ep, double *B)
{
    ptrdiff_t n = s->n;
    double c = sqrt(sqrt(DBL_EPSILON)), p0 = s->p[k] ? *s->p[k] : 0.0, e = ey;
    if (ep > 0.0 && s->p[k]) {
        double dp = pset(s, k, p0, ep);
        prestore(s, k, p0);
        ey *= sk ? dp / ep : 1.0;
        e = ep = dp;
    }
    double *out[4] = {s->fp, s->fm, s->ga, s->gb};
    for (ptrdiff_t j = 0; j < n; j++) {
        double d = (y[j] + y_incr(y[j], c)) - y[j];
        int rc = 0;
        for (int q = 0; q < 4 && rc == 0; q++) {
            move(s, k, y, sk, ey, ep, j, q < 2 ? d : -d, q % 2 ? -1.0 : 1.0);
            rc = feval(s, 0, t, s->yp, out[q]);
            prestore(s, k, p0);
        }
        if (rc != 0)
            return rc;
        for (ptrdiff_t i = 0; i < n; i++)
            B[j * n + i] += (s->fp[i] - s->fm[i] - s->ga[i] + s->gb[i]) / (4.0 * d * e);
    }
    return 0;
}

/* B_k = d/de J(t, y + e s_k, p + e e_k): centred differences of the base jac, or the
 * mixed second differences of f (steps eps^(1/4)); simultaneous or separate (RHO) */
static int bk(mb_sens *s, int k, double t, const double *y, const double *sk, double *B)
{
    int has_jac = s->base->jac != NULL, sep, zs = is_zero(sk, s->n), rc;
    double ey, ep, c = has_jac ? cbrt(DBL_EPSILON) : sqrt(sqrt(DBL_EPSILON));
    memset(B, 0, (size_t)(s->n * s->n) * sizeof(double));
    dq_steps(s, k, y, sk, c, &ey, &ep, &sep);
    if (!s->p[k])
        ep = 0.0;
    const double *d1 = zs ? NULL : sk;
    if (!sep)
        return has_jac ? jac_dir(s, k, t, y, d1, ey, ep, B) : f_mixed(s, k, t, y, d1, ey, ep, B);
    rc = has_jac ? jac_dir(s, k, t, y, sk, ey, 0.0, B) : f_mixed(s, k, t, y, sk, ey, 0.0, B);
    if (rc != 0)
        return rc;
    return has_jac ? jac_dir(s, k, t, y, NULL, 0.0, ep, B) : f_mixed(s, k, t, y, NULL, 0.0, ep, B);
}

/* block (rb, cb) of the aug Jacobian JA (ld ldJ) <- A (n x n) */
static void put_block(const mb_sens *s, int rb, int cb, const double *A, double *JA, ptrdiff_t ldJ)
{
    ptrdiff_t n = s->n;
    for (ptrdiff_t j = 0; j < n; j++) {
        ptrdiff_t cj = mb_sens_index(s, cb, j);
        for (ptrdiff_t i = 0; i < n; i++)
            JA[cj * ldJ + mb_sens_index(s, rb, i)] = A[j * n + i];
    }
}

/* the exact Jacobian of aug (sens.h): J on the diagonal blocks, B_k below */
static int aug_jac(double t, const double *Y, double *JA, ptrdiff_t ldJ, void *ctx)
{
    mb_sens *s = ctx;
    ptrdiff_t N = s->N;
    gather(s, 0, Y, s->y);
    int rc = jac_base(s, t, s->y, NULL, 1, s->J);
    if (rc != 0)
        return rc;
    for (ptrdiff_t j = 0; j < N; j++)
        memset(JA + j * ldJ, 0, (size_t)N * sizeof(double));
    for (int b = 0; b <= s->np; b++)
        put_block(s, b, b, s->J, JA, ldJ);
    for (int k = 0; k < s->np; k++) {
        gather(s, 1 + k, Y, s->sk);
        if (!s->p[k] && is_zero(s->sk, s->n))
            continue;  /* B_k = 0 */
        rc = bk(s, k, t, s->y, s->sk, s->J);  /* J is placed: free now */
        if (rc != 0)
            return rc;
        put_block(s, 1 + k, 0, s->J, JA, ldJ);
    }
    return 0;
}

/* ---- the block-diagonal linsys: diag(a M - J, .., a M - J) ---- */

static int ls_jac(double t, const double *Y, const double *FY, void *ctx)
{
    mb_sens *s = ctx;
    const mb_linsys *bl = s->base->linsys;
    gather(s, 0, Y, s->y);
    gather(s, 0, FY, s->f0);
    if (bl) {
        s->nj++;
        return bl->jac(t, s->y, s->f0, bl->ctx);
    }
    int rc = jac_base(s, t, s->y, s->f0, 0, s->Jl);
    for (int k = 0; rc == 0 && s->lower && k < s->np; k++) {
        gather(s, 1 + k, Y, s->sk);
        if (!s->p[k] && is_zero(s->sk, s->n))
            memset(s->B + (ptrdiff_t)k * s->n * s->n, 0, (size_t)(s->n * s->n) * sizeof(double));
        else
            rc = bk(s, k, t, s->y, s->sk, s->B + (ptrdiff_t)k * s->n * s->n);
    }
    s->jl_ok = rc == 0;
    s->lu_ok[0] = s->lu_ok[1] = 0;
    return rc;
}

static int ls_factor(int slot, double ar, double ai, void *ctx)
{
    mb_sens *s = ctx;
    const mb_linsys *bl = s->base->linsys;
    if (bl)
        return bl->factor(slot, ar, ai, bl->ctx);
    if (slot < 0 || slot >= NSLOT || !s->jl_ok)
        return MB_ERR_ILL_INPUT;
    ptrdiff_t n = s->n, nn = n * n;
    int *ip = s->ipiv + slot * n, rc;
    s->cplx[slot] = ai != 0.0;
    if (ai == 0.0) {
        double *A = s->LU[slot];
        for (ptrdiff_t i = 0; i < nn; i++)
            A[i] = -s->Jl[i];
        for (ptrdiff_t i = 0; i < n; i++)
            A[i * n + i] += ar;
        rc = mb_lu_factor(n, A, n, ip);
    } else {
        double complex *A = (double complex *)(void *)s->LU[slot];
        for (ptrdiff_t i = 0; i < nn; i++)
            A[i] = -s->Jl[i];
        for (ptrdiff_t i = 0; i < n; i++)
            A[i * n + i] += ar + I * ai;
        rc = mb_zlu_factor(n, A, n, ip);
    }
    s->lu_ok[slot] = rc == MB_OK;
    return rc == MB_OK ? 0 : 1;  /* singular: recoverable (linsys.h) */
}

/* x <- (a M - J)^-1 x for one block (xr, xi of size n; xi NULL for a real slot) */
static int ls_solve_block(mb_sens *s, int slot, double *xr, double *xi)
{
    const mb_linsys *bl = s->base->linsys;
    ptrdiff_t n = s->n;
    if (bl)
        return bl->solve(slot, xr, xi, bl->ctx);
    const int *ip = s->ipiv + slot * n;
    if (!s->cplx[slot])
        return mb_lu_solve(n, s->LU[slot], n, ip, xr, 1) == MB_OK ? 0 : 1;
    double complex *z = (double complex *)(void *)s->zx;
    for (ptrdiff_t i = 0; i < n; i++)
        z[i] = xr[i] + I * (xi ? xi[i] : 0.0);
    int rc = mb_zlu_solve(n, (const double complex *)(const void *)s->LU[slot], n, ip, z, 1);
    for (ptrdiff_t i = 0; i < n; i++) {
        xr[i] = creal(z[i]);
        if (xi)
            xi[i] = cimag(z[i]);
    }
    return rc == MB_OK ? 0 : 1;
}

/* block_newton 2: the s_k rows of (a M - J_aug) x = r are -B_k x_y + (a M - J) x_k = r_k:
 * r_k += B_k x_y (real and imaginary parts) before the block's solve */
static void add_coupling(mb_sens *s, int k, double *r, double *ri)
{
    ptrdiff_t n = s->n;
    const double *B = s->B + (ptrdiff_t)k * n * n;
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++) {
            r[i] += B[j * n + i] * s->xr[j];
            if (ri)
                ri[i] += B[j * n + i] * s->xi[j];
        }
}

static int ls_solve(int slot, double *xr, double *xi, void *ctx)
{
    mb_sens *s = ctx;
    if (!s->base->linsys && (slot < 0 || slot >= NSLOT || !s->lu_ok[slot]))
        return MB_ERR_ILL_INPUT;
    for (int b = 0; b <= s->np; b++) {
        gather(s, b, xr, s->ga);
        if (xi)
            gather(s, b, xi, s->gb);
        if (b && s->lower)
            add_coupling(s, b - 1, s->ga, xi ? s->gb : NULL);
        int rc = ls_solve_block(s, slot, s->ga, xi ? s->gb : NULL);
        if (rc == 0 && !b && s->lower) {
            memcpy(s->xr, s->ga, (size_t)s->n * sizeof(double));
            if (xi)
                memcpy(s->xi, s->gb, (size_t)s->n * sizeof(double));
        }
        if (rc != 0)
            return rc;
        scatter(s, b, s->ga, xr);
        if (xi)
            scatter(s, b, s->gb, xi);
    }
    return 0;
}

/* ---- set-up ---- */

static int check_base(const mb_problem *b, int np, double *const *p, const double *pbar,
                      const double *atol, const mb_sens_options *o, int dense)
{
    if (!b || !b->rhs || b->n <= 0 || np < 0 || (np > 0 && (!p || !pbar)) || !atol || !o)
        return MB_ERR_ILL_INPUT;
    if (b->nq < 0 || (b->nq > 0 && b->n != 2 * b->nq))
        return MB_ERR_ILL_INPUT;
    if (b->project || b->check || b->acc_mjac || b->res)
        return MB_ERR_NOT_SUPPORTED;
    if (o->dq != MB_SENS_CENTERED && o->dq != MB_SENS_FORWARD)
        return MB_ERR_ILL_INPUT;
    for (int k = 0; k < np; k++)
        if (!(pbar[k] > 0.0) || !isfinite(pbar[k]))
            return MB_ERR_ILL_INPUT;
    for (ptrdiff_t i = 0; i < b->n; i++)
        if (!(atol[i] >= 0.0))
            return MB_ERR_ILL_INPUT;
    /* without n x n parts: the linsys must be the base's, and a dense mass needs aug.jac */
    if (!dense && ((o->block_newton && !b->linsys) || b->mass))
        return MB_ERR_ILL_INPUT;
    if (b->mass_diag && !(o->block_newton && b->linsys))
        return MB_ERR_NOT_SUPPORTED;
    return MB_OK;
}

/* the repeated mass (dense block-diagonal or diagonal) and DAE indices of aug */
static void repeat_structure(mb_sens *s)
{
    const mb_problem *b = s->base;
    ptrdiff_t n = s->n, N = s->N;
    if (b->mass) {
        memset(s->mass, 0, (size_t)(N * N) * sizeof(double));
        for (int k = 0; k <= s->np; k++)
            for (ptrdiff_t j = 0; j < n; j++)
                for (ptrdiff_t i = 0; i < n; i++)
                    s->mass[mb_sens_index(s, k, j) * N + mb_sens_index(s, k, i)] = b->mass[j * n + i];
        s->aug.mass = s->mass;
    }
    for (int k = 0; k <= s->np; k++)
        for (ptrdiff_t i = 0; i < n; i++) {
            ptrdiff_t r = mb_sens_index(s, k, i);
            s->mass_diag[r] = b->mass_diag ? b->mass_diag[i] : 1.0;
            s->dae_index[r] = b->dae_index ? b->dae_index[i] : 0;
        }
    s->aug.mass_diag = b->mass_diag ? s->mass_diag : NULL;
    s->aug.dae_index = b->dae_index ? s->dae_index : NULL;
}

int mb_sens_init(const mb_problem *base, int np, double *const *p, const double *pbar,
                 const double *atol, const mb_sens_options *opts, int dense,
                 double *work, mb_sens **out)
{
    int rc = check_base(base, np, p, pbar, atol, opts, dense);
    if (rc != MB_OK)
        return rc;
    if (!work || !out)
        return MB_ERR_ILL_INPUT;
    ptrdiff_t n = base->n;
    mb_sens *s = (mb_sens *)(void *)work;
    memset(s, 0, sizeof *s);
    layout(&(mb_carver){work, 0}, n, base->nq, np, base->mass != NULL, dense, s);
    s->base = base;
    s->n = n;
    s->nq = base->nq;
    s->np = np;
    s->N = n * (1 + np);
    s->dense = dense;
    s->has_mass = base->mass != NULL;
    s->opts = *opts;
    s->lower = opts->block_newton == 2 && !base->linsys && dense;
    for (int k = 0; k < np; k++) {
        s->p[k] = p[k];
        s->pbar[k] = pbar[k];
    }
    memcpy(s->atol, atol, (size_t)n * sizeof(double));
    s->ls = (mb_linsys){ls_jac, ls_factor, ls_solve, s};
    s->aug = (mb_problem){
        .n = s->N, .rhs = aug_rhs, .jac = dense ? aug_jac : NULL, .nq = s->nq * (1 + np),
        .acc = base->acc ? aug_acc : NULL, .ctx = s,
        .step_bound = base->step_bound ? aug_step_bound : NULL,
        .linsys = opts->block_newton ? &s->ls : NULL,
    };
    repeat_structure(s);
    *out = s;
    return MB_OK;
}
