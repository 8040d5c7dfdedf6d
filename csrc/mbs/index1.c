/* The index-1 formulation of a constrained mechanical system (mech.h):
 *     y = (q, q'),  y' = f(t, y) = (q', q''),
 *     S [q''; lambda] = [Q; gt],  S = [ M  Phi_q^T ; Phi_q  0 ],
 *     gt = gamma - 2 alpha (Phi_q q' + Phi_t) - beta^2 Phi      (Baumgarte, optional).
 *
 * Sign convention.  mech.h writes M q'' + Phi_q^T lambda = Q, the LLM paper (eq 7,
 * 9) M q'' - D^T lambda = h: our lambda is the paper's -lambda (D = Phi_q, h = Q).
 *
 * Jacobian (LLM eqs 10-15).  Instead of forming D M^-1 D^T (eqs 13-15) we
 * differentiate the saddle-point system itself: with a = q'',
 *     S [a_q ; lambda_q ] = [ Q_q - (M a)_q - (Phi_q^T lambda)_q ; gt_q - (Phi_q a)_q ]
 *     S [a_q'; lambda_q'] = [ Q_q' ; gt_q' ]
 *     gt_q  = gamma_q  - 2 alpha ((Phi_q q')_q + Phi_tq) - beta^2 Phi_q
 *     gt_q' = gamma_q' - 2 alpha Phi_q
 * and solve all 2 nq right-hand sides with the LU of S already computed for f
 * (eq 10: df/dy = [0 I; a_q a_q']).  (M a)_q comes from mech->mass_x_q, or by
 * central differences of M when that is NULL (and mech->mass_constant == 0).  Every
 * derivative kernel that is NULL in the mb_mech table is replaced (mechderiv.c) by
 * central differences of the kernel it
 * differentiates (phi_t of phi in t, gamma by differences of Phi_q q' + Phi_t along
 * (q', 1), or the second difference of Phi when phi_t is NULL too).  Phi_tq, needed
 * only with alpha != 0, is formed by differences of Phi_q in t (zero for an autonomous
 * mechanism).
 *
 * Linear algebra.  S is scaled symmetrically (D S D, d_k = 1 / sqrt(max_l |S_kl|))
 * so that its pivots are comparable across bodies of very different mass, factored
 * with LAPACK (mb_lu_factor), and declared singular (MB_ERR_LINALG, f->msg names
 * the pivot) when a pivot falls below 64 N eps of the largest: redundant
 * constraints, a singular configuration or a singular mass matrix.  The factors
 * and the solution are cached with (t, y): a jac at the point of the last rhs costs
 * no new factorization.  All workspace is allocated once in mb_index1_init.
 *
 * Schur path.  When M is constant and diagonal with a positive diagonal (checked once
 * in mb_index1_init: every planar model), M is not assembled per call and S is never
 * formed: with W = Phi_q M^-1 Phi_q^T (nc x nc, symmetric positive definite when
 * Phi_q has full rank),
 *     W mu = Phi_q M^-1 r1 - r2,   x = M^-1 (r1 - Phi_q^T mu)     solves S [x; mu] = [r1; r2],
 * W factored by Cholesky; a pivot d_k <= 64 N eps W_kk (W_kk = 0: a zero row of
 * Phi_q) is reported as the singular saddle-point matrix, with pivot nq + k.  Phi_q
 * is kept by columns without its zeros (pv, pr, pc) for W and the solves; the
 * Jacobian's nonzero right-hand sides share the triangular solves.
 *
 * Fused kernels.  When the mechanism's table has fused_qpg (Q, Phi_q, gamma in one
 * pass) and fused_lin (the Jacobian's right-hand sides [Q_q - (Phi_q^T lam)_q;
 * gamma_q - (Phi_q a)_q] and [Q_q'; gamma_q']), and every separate kernel they stand
 * for (use_qpg, use_lin, decided in mb_index1_init), f and df/dy call those instead.
 *
 * Projection: Newton with minimum-norm corrections
 *     q <- q - Phi_q^T (Phi_q Phi_q^T)^-1 Phi   until |Phi|_inf <= proj_tol,
 * then q' <- q' - Phi_q^T (Phi_q Phi_q^T)^-1 (Phi_q q' + Phi_t).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "index1.h"
#include "index1_sparse.h"
#include "status.h"

static int fail(mb_index1 *f, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
    return code;
}

static double norm_inf(ptrdiff_t n, const double *x)
{
    double r = 0;
    for (ptrdiff_t i = 0; i < n; i++) r = fmax(r, fabs(x[i]));
    return r;
}

/* central-difference step for a variable of size x (relative accuracy eps^(2/3)) */
static double fd_step(double x) { return cbrt(DBL_EPSILON) * fmax(1.0, fabs(x)); }

/* ---- kernels with finite-difference fallbacks (mechderiv.c) ---- */

static int eval_phi_t(mb_index1 *f, double t, const double *q, double *pt)
{
    return mb_mechd_phi_t(&f->d, t, q, pt);
}

static int eval_gamma(mb_index1 *f, double t, const double *q, const double *qd, double *g)
{
    return mb_mechd_gamma(&f->d, t, q, qd, g);
}

/* ---- scaled LU with a pivot test ---- */

/* A <- D A D with d_k = 1/sqrt(max_l |A_kl|), LU; MB_ERR_LINALG (and *bad = index)
 * on a zero row or a pivot below 64 n eps of the largest */
static int factor_scaled(ptrdiff_t n, double *A, ptrdiff_t lda, double *d, int *ipiv,
                         ptrdiff_t *bad)
{
    for (ptrdiff_t k = 0; k < n; k++) {
        double r = 0;
        for (ptrdiff_t l = 0; l < n; l++) {
            double v = fabs(A[k + lda * l]);
            r = v > r ? v : r;
        }
        if (!(r > 0)) {
            *bad = k;
            return MB_ERR_LINALG;
        }
        d[k] = 1.0 / sqrt(r);
    }
    for (ptrdiff_t l = 0; l < n; l++)
        for (ptrdiff_t k = 0; k < n; k++) A[k + lda * l] *= d[k] * d[l];
    int rc = mb_lu_factor(n, A, lda, ipiv);
    double umax = 0, umin = INFINITY;
    ptrdiff_t kmin = 0;
    for (ptrdiff_t k = 0; k < n; k++) {
        double u = fabs(A[k + lda * k]);
        umax = u > umax ? u : umax;
        if (!(u >= umin)) {  /* also catches NaN */
            umin = u;
            kmin = k;
        }
    }
    if (rc != MB_OK || !(umin > 64.0 * (double)n * DBL_EPSILON * umax)) {
        *bad = kmin;
        return MB_ERR_LINALG;
    }
    return MB_OK;
}

/* solve A x = b (nrhs columns, ld n) with the factors of D A D */
static int solve_scaled(ptrdiff_t n, const double *LU, ptrdiff_t lda, const double *d,
                        const int *ipiv, double *B, ptrdiff_t nrhs)
{
    for (ptrdiff_t c = 0; c < nrhs; c++)
        for (ptrdiff_t k = 0; k < n; k++) B[k + n * c] *= d[k];
    int rc = mb_lu_solve(n, LU, lda, ipiv, B, nrhs);
    for (ptrdiff_t c = 0; c < nrhs; c++)
        for (ptrdiff_t k = 0; k < n; k++) B[k + n * c] *= d[k];
    return rc;
}

/* ---- the Schur path (M constant diagonal) ---- */

/* Phi_q (Pq, nc x nq) by columns without its zeros: column j holds the rows pr[n] and
 * values pv[n] for n in [pc[j], pc[j + 1]) (a planar joint touches at most 6 of the
 * nq columns, so most of Phi_q is zero) */
static void schur_compress(mb_index1 *f)
{
    ptrdiff_t nq = f->nq, nc = f->nc;
    const double *P = f->Pq;
    int n = 0;
    for (ptrdiff_t j = 0; j < nq; j++) {
        f->pc[j] = n;
        for (ptrdiff_t k = 0; k < nc; k++) {
            double v = P[k + nc * j];
            if (v != 0) {
                f->pv[n] = v;
                f->pr[n++] = (int)k;
            }
        }
    }
    f->pc[nq] = n;
}

/* W = Pq diag(minv) Pq^T (from the compressed Pq), its Cholesky factor (lower
 * triangle, ld nc) in place; MB_ERR_LINALG and *bad = k when pivot k is not above
 * 64 N eps of W_kk */
static int schur_factor(mb_index1 *f, ptrdiff_t *bad)
{
    ptrdiff_t nq = f->nq, nc = f->nc, N = nq + nc;
    const double *mi = f->minv, *pv = f->pv;
    const int *pc = f->pc, *pr = f->pr;
    double *W = f->W;
    schur_compress(f);
    for (ptrdiff_t b = 0; b < nc; b++)
        for (ptrdiff_t a = b; a < nc; a++) W[a + nc * b] = 0;
    /* W += mi_j p_j p_j^T over the nonzeros of column j (rows ascending: the lower
     * triangle is w >= u) */
    for (ptrdiff_t j = 0; j < nq; j++)
        for (int u = pc[j]; u < pc[j + 1]; u++) {
            double v = mi[j] * pv[u], *Wu = W + nc * pr[u];
            for (int w = u; w < pc[j + 1]; w++) Wu[pr[w]] += v * pv[w];
        }
    double tol = 64.0 * (double)N * DBL_EPSILON;
    for (ptrdiff_t j = 0; j < nc; j++) {
        double d = W[j + nc * j], wjj = d;
        for (ptrdiff_t k = 0; k < j; k++) d -= W[j + nc * k] * W[j + nc * k];
        if (!(d > tol * wjj) || !(wjj > 0)) {  /* also catches NaN */
            *bad = nq + j;
            return MB_ERR_LINALG;
        }
        double l = sqrt(d);
        W[j + nc * j] = l;
        for (ptrdiff_t i = j + 1; i < nc; i++) {
            double s = W[i + nc * j];
            for (ptrdiff_t k = 0; k < j; k++) s -= W[i + nc * k] * W[j + nc * k];
            W[i + nc * j] = s / l;
        }
    }
    return MB_OK;
}

/* B (N x nrhs, ld N, nrhs <= 2 nq) <- S^-1 B through the Schur complement
 * (schur_factor done); zero columns are left as they are.  The triangular solves run
 * over all columns at once (independent chains of divisions side by side). */
static void schur_solve(const mb_index1 *f, double *B, ptrdiff_t nrhs)
{
    ptrdiff_t nq = f->nq, nc = f->nc, N = nq + nc;
    const double *mi = f->minv, *W = f->W, *pv = f->pv;
    const int *pc = f->pc, *pr = f->pr;
    int *cols = f->cols, m = 0;
    for (ptrdiff_t c = 0; c < nrhs; c++) {
        double *x = B + N * c, *mu = x + nq;
        ptrdiff_t nz = 0;
        while (nz < N && x[nz] == 0) nz++;
        if (nz == N)
            continue;  /* a zero column (df/dx of a coordinate f does not depend on) */
        cols[m++] = (int)c;
        for (ptrdiff_t k = 0; k < nc; k++) mu[k] = -mu[k];
        for (ptrdiff_t j = 0; j < nq; j++) {                       /* M^-1 r1, + Phi_q M^-1 r1 */
            double v = x[j] * mi[j];
            x[j] = v;
            if (v != 0)
                for (int u = pc[j]; u < pc[j + 1]; u++) mu[pr[u]] += pv[u] * v;
        }
    }
    if (m == 1) {  /* one right-hand side (f): the plain substitutions */
        double *mu = B + N * cols[0] + nq;
        for (ptrdiff_t i = 0; i < nc; i++) {
            double s = mu[i];
            for (ptrdiff_t k = 0; k < i; k++) s -= W[i + nc * k] * mu[k];
            mu[i] = s / W[i + nc * i];
        }
        for (ptrdiff_t i = nc - 1; i >= 0; i--) {
            double s = mu[i];
            for (ptrdiff_t k = i + 1; k < nc; k++) s -= W[k + nc * i] * mu[k];
            mu[i] = s / W[i + nc * i];
        }
    }
    for (ptrdiff_t i = 0; i < nc && m > 1; i++) {                  /* L L^T mu = . */
        const double *Wi = W + i, d = W[i + nc * i];
        for (int v = 0; v < m; v++) {
            double *mu = B + N * cols[v] + nq, s = mu[i];
            for (ptrdiff_t k = 0; k < i; k++) s -= Wi[nc * k] * mu[k];
            mu[i] = s / d;
        }
    }
    for (ptrdiff_t i = nc - 1; i >= 0 && m > 1; i--) {
        const double *Wi = W + nc * i, d = W[i + nc * i];
        for (int v = 0; v < m; v++) {
            double *mu = B + N * cols[v] + nq, s = mu[i];
            for (ptrdiff_t k = i + 1; k < nc; k++) s -= Wi[k] * mu[k];
            mu[i] = s / d;
        }
    }
    for (int v = 0; v < m; v++) {                                  /* - M^-1 Phi_q^T mu */
        double *x = B + N * cols[v], *mu = x + nq;
        for (ptrdiff_t j = 0; j < nq; j++) {
            double s = 0;
            for (int u = pc[j]; u < pc[j + 1]; u++) s += pv[u] * mu[pr[u]];
            x[j] -= mi[j] * s;
        }
    }
}

/* S^-1 B with the factors of the cached point, either path */
static int saddle_solve(mb_index1 *f, double *B, ptrdiff_t nrhs)
{
    ptrdiff_t N = f->nq + f->nc;
    if (f->schur) {
        for (ptrdiff_t c0 = 0; c0 < nrhs; c0 += 2 * f->nq)  /* at most 2 nq at a time */
            schur_solve(f, B + N * c0, nrhs - c0 < 2 * f->nq ? nrhs - c0 : 2 * f->nq);
        return MB_OK;
    }
    return solve_scaled(N, f->S, N, f->dsc, f->ipiv, B, nrhs);
}

/* ---- the saddle-point solve, cached on (t, y) ---- */

static int saddle(mb_index1 *f, double t, const double *q, const double *qd)
{
    if (f->sp)
        return mb_index1_sparse_saddle(f, t, q, qd);
    const mb_mech *me = f->mech;
    ptrdiff_t nq = f->nq, nc = f->nc, N = nq + nc;
    size_t bytes = (size_t)nq * sizeof(double);
    if (f->cache_ok && t == f->tcache && memcmp(f->ycache, q, bytes) == 0 &&
        memcmp(f->ycache + nq, qd, bytes) == 0)
        return MB_OK;
    f->cache_ok = 0;
    double *S = f->S, *b = f->sol;
    /* Phi_q: into S (LU path) or Pq (Schur path, M not assembled) */
    double *Pq = f->schur ? f->Pq : S + nq;
    ptrdiff_t ldp = f->schur ? nc : N;
    int rc;
    double *g = b + nq;
    if (!f->schur && (rc = me->mass(q, S, N, me->ctx)) != 0) return rc;
    if (f->use_qpg) {  /* Q, Phi_q and gamma in one pass */
        if ((rc = me->fused_qpg(t, q, qd, b, Pq, ldp, g, f->kwork, me->ctx)) != 0) return rc;
    } else {
        if ((rc = me->forces(t, q, qd, b, me->ctx)) != 0) return rc;
        if (nc > 0 && (rc = me->phi_q(t, q, Pq, ldp, me->ctx)) != 0) return rc;
        if (nc > 0 && (rc = eval_gamma(f, t, q, qd, g)) != 0) return rc;
    }
    if (nc > 0) {
        if (!f->schur)
            for (ptrdiff_t r = 0; r < nc; r++) {
                for (ptrdiff_t c = 0; c < nq; c++) S[c + N * (nq + r)] = S[nq + r + N * c];
                for (ptrdiff_t c = 0; c < nc; c++) S[nq + c + N * (nq + r)] = 0.0;
            }
        if (f->alpha != 0) {  /* - 2 alpha (Phi_q q' + Phi_t) */
            if ((rc = eval_phi_t(f, t, q, f->vc1)) != 0) return rc;
            mb_gemv(nc, nq, 1.0, Pq, ldp, qd, 1.0, f->vc1);
            for (ptrdiff_t k = 0; k < nc; k++) g[k] -= 2 * f->alpha * f->vc1[k];
        }
        if (f->beta != 0) {   /* - beta^2 Phi */
            if ((rc = me->phi(t, q, f->vc2, me->ctx)) != 0) return rc;
            for (ptrdiff_t k = 0; k < nc; k++) g[k] -= f->beta * f->beta * f->vc2[k];
        }
    }
    ptrdiff_t bad = 0;
    if ((rc = f->schur ? schur_factor(f, &bad) : factor_scaled(N, S, N, f->dsc, f->ipiv, &bad))
        != MB_OK)
        return fail(f, rc,
                    "The saddle-point matrix [M Phi_q^T; Phi_q 0] is singular at t = %.17g "
                    "(pivot %td of %td): redundant constraints, a singular configuration or a "
                    "singular mass matrix.", t, bad, N);
    if ((rc = saddle_solve(f, b, 1)) != MB_OK) return rc;
    memcpy(f->ycache, q, bytes);
    memcpy(f->ycache + nq, qd, bytes);
    f->tcache = t;
    f->cache_ok = 1;
    return MB_OK;
}

int mb_index1_solve(mb_index1 *f, double t, const double *q, const double *qd, double *qdd,
                    double *lam)
{
    int rc = saddle(f, t, q, qd);
    if (rc != MB_OK) return rc;
    if (qdd) memcpy(qdd, f->sol, (size_t)f->nq * sizeof(double));
    if (lam) memcpy(lam, f->sol + f->nq, (size_t)f->nc * sizeof(double));
    return MB_OK;
}

static int index1_rhs(double t, const double *y, double *ydot, void *ctx)
{
    mb_index1 *f = ctx;
    ptrdiff_t nq = f->nq;
    int rc = saddle(f, t, y, y + nq);
    if (rc != MB_OK) return rc;
    memcpy(ydot, y + nq, (size_t)nq * sizeof(double));
    memcpy(ydot + nq, f->sol, (size_t)nq * sizeof(double));
    return MB_OK;
}

static int index1_acc(double t, const double *q, const double *qd, double *qdd, void *ctx)
{
    return mb_index1_solve(ctx, t, q, qd, qdd, NULL);
}

/* the mechanism's step bound (mech.h) with q'' from f = (q', q'') */
static int index1_step_bound(double t, const double *y, const double *fy, double *h_max,
                             void *ctx)
{
    mb_index1 *f = ctx;
    const mb_mech *me = f->mech;
    return me->step_bound(t, y, y + f->nq, fy + f->nq, h_max, me->ctx);
}

/* ---- the Jacobian ---- */

/* ---- derivative blocks (shared with the DAE formulations, dae.c) ---- */

int mb_index1_phi_t(mb_index1 *f, double t, const double *q, double *pt)
{
    return eval_phi_t(f, t, q, pt);
}

int mb_index1_gamma(mb_index1 *f, double t, const double *q, const double *qd, double *g)
{
    return eval_gamma(f, t, q, qd, g);
}

int mb_index1_forces_jac(mb_index1 *f, double t, const double *q, const double *qd, double *Qq,
                         double *Qv, ptrdiff_t ld)
{
    int rc = Qq ? mb_mechd_forces_q(&f->d, t, q, qd, Qq, ld) : 0;
    if (rc == 0 && Qv)
        rc = mb_mechd_forces_qd(&f->d, t, q, qd, Qv, ld);
    return rc;
}

int mb_index1_gamma_jac(mb_index1 *f, double t, const double *q, const double *qd, double *Gq,
                        double *Gv, ptrdiff_t ld)
{
    int rc = Gq ? mb_mechd_gamma_q(&f->d, t, q, qd, Gq, ld) : 0;
    if (rc == 0 && Gv)
        rc = mb_mechd_gamma_qd(&f->d, t, q, qd, Gv, ld);
    return rc;
}

int mb_index1_phiq_jac(mb_index1 *f, double t, const double *q, const double *lam, double *T1,
                       const double *x, double *T2, const double *x3, double *T3)
{
    const mb_mech *me = f->mech;
    ptrdiff_t nq = f->nq, nc = f->nc;
    void *c = me->ctx;
    int rc;
    int want1 = lam && T1, want2 = x && T2, want3 = x3 && T3;
    if (want1 && me->phiqT_lam_q && (rc = me->phiqT_lam_q(t, q, lam, T1, nq, c)) != 0) return rc;
    if (me->phiq_x_q) {
        if (want2 && (rc = me->phiq_x_q(t, q, x, T2, nc, c)) != 0) return rc;
        if (want3 && (rc = me->phiq_x_q(t, q, x3, T3, nc, c)) != 0) return rc;
    }
    if ((want1 && !me->phiqT_lam_q) || ((want2 || want3) && !me->phiq_x_q)) {
        /* differences of Phi_q in q */
        double *xq = f->vq1;
        memcpy(xq, q, (size_t)nq * sizeof(double));
        for (ptrdiff_t j = 0; j < nq; j++) {
            double h = fd_step(q[j]), s = 1.0 / (2 * h);
            xq[j] = q[j] + h;
            if ((rc = me->phi_q(t, xq, f->P1, nc, c)) != 0) return rc;
            xq[j] = q[j] - h;
            if ((rc = me->phi_q(t, xq, f->P2, nc, c)) != 0) return rc;
            xq[j] = q[j];
            for (ptrdiff_t l = 0; l < nc * nq; l++) f->P1[l] = (f->P1[l] - f->P2[l]) * s;
            if (want1 && !me->phiqT_lam_q)
                for (ptrdiff_t i = 0; i < nq; i++) {
                    double v = 0;
                    for (ptrdiff_t k = 0; k < nc; k++) v += f->P1[k + nc * i] * lam[k];
                    T1[i + nq * j] = v;
                }
            if (!me->phiq_x_q) {
                if (want2) mb_gemv(nc, nq, 1.0, f->P1, nc, x, 0.0, T2 + nc * j);
                if (want3) mb_gemv(nc, nq, 1.0, f->P1, nc, x3, 0.0, T3 + nc * j);
            }
        }
    }
    return MB_OK;
}

int mb_index1_mass_jac(mb_index1 *f, const double *q, const double *a, double alpha, double *out,
                       ptrdiff_t ld)
{
    const mb_mech *me = f->mech;
    ptrdiff_t nq = f->nq;
    int rc;
    if (me->mass_constant)
        return MB_OK;
    if (me->mass_x_q) {  /* the mechanism's kernel (spatial models: analytic) */
        if ((rc = me->mass_x_q(q, a, f->M1, nq, me->ctx)) != 0) return rc;
        for (ptrdiff_t j = 0; j < nq; j++)
            for (ptrdiff_t i = 0; i < nq; i++) out[i + ld * j] += alpha * f->M1[i + nq * j];
        return MB_OK;
    }
    double *x = f->vq1;
    memcpy(x, q, (size_t)nq * sizeof(double));
    for (ptrdiff_t j = 0; j < nq; j++) {
        double h = fd_step(q[j]);
        x[j] = q[j] + h;
        if ((rc = me->mass(x, f->M1, nq, me->ctx)) != 0) return rc;
        x[j] = q[j] - h;
        if ((rc = me->mass(x, f->M2, nq, me->ctx)) != 0) return rc;
        x[j] = q[j];
        for (ptrdiff_t l = 0; l < nq * nq; l++) f->M1[l] -= f->M2[l];
        mb_gemv(nq, nq, alpha / (2 * h), f->M1, nq, a, 1.0, out + ld * j);
    }
    return MB_OK;
}

int mb_index1_phi_tq(mb_index1 *f, double t, const double *q, double *out)
{
    return mb_mechd_phi_tq(&f->d, t, q, out, f->nc);
}

static int index1_jac(double t, const double *y, double *J, ptrdiff_t ldJ, void *ctx)
{
    mb_index1 *f = ctx;
    const mb_mech *me = f->mech;
    ptrdiff_t nq = f->nq, nc = f->nc, N = nq + nc;
    const double *q = y, *qd = y + nq;
    int rc = saddle(f, t, q, qd);
    if (rc != MB_OK) return rc;
    const double *a = f->sol, *lam = f->sol + nq;
    double *R = f->R;
    double *RTL = R, *RTR = R + N * nq, *RBL = R + nq, *RBR = R + N * nq + nq;
    void *c = me->ctx;

    if (f->use_lin) {
        /* [Q_q - (Phi_q^T lam)_q; gamma_q - (Phi_q a)_q] and [Q_q'; gamma_q'] in one pass */
        if ((rc = me->fused_lin(t, q, qd, a, lam, RTL, RTR, N, f->kwork, c)) != 0) return rc;
    } else {
        /* force derivatives */
        if ((rc = mb_index1_forces_jac(f, t, q, qd, RTL, RTR, N)) != 0) return rc;
        if (nc > 0) {
            if ((rc = mb_index1_gamma_jac(f, t, q, qd, RBL, RBR, N)) != 0) return rc;
            /* T1 = (Phi_q^T lam)_q, T2 = (Phi_q a)_q, T3 = (Phi_q q')_q (Baumgarte) */
            const double *x3 = f->alpha != 0 ? qd : NULL;
            if ((rc = mb_index1_phiq_jac(f, t, q, lam, f->T1, a, f->T2, x3, f->T3)) != 0)
                return rc;
            for (ptrdiff_t j = 0; j < nq; j++) {
                for (ptrdiff_t i = 0; i < nq; i++) RTL[i + N * j] -= f->T1[i + nq * j];
                for (ptrdiff_t k = 0; k < nc; k++) RBL[k + N * j] -= f->T2[k + nc * j];
            }
        }
    }
    /* - (M a)_q (differences of M when it is not constant) */
    if ((rc = mb_index1_mass_jac(f, q, a, -1.0, RTL, N)) != 0) return rc;

    if (nc > 0 && (f->alpha != 0 || f->beta != 0)) {
        /* Baumgarte: - 2 alpha ((Phi_q q')_q + Phi_tq) - beta^2 Phi_q, - 2 alpha Phi_q */
        double a2 = 2 * f->alpha, b2 = f->beta * f->beta;
        /* Phi_q at the cached point: kept by the Schur path, overwritten by the LU's */
        const double *P = f->Pq;
        if (!f->schur) {
            if ((rc = me->phi_q(t, q, f->P1, nc, c)) != 0) return rc;
            P = f->P1;
        }
        if (f->alpha != 0) {  /* T3 = (Phi_q q')_q, Phi_tq = (Phi_q)_t by differences in t */
            if (f->use_lin &&
                (rc = mb_index1_phiq_jac(f, t, q, NULL, NULL, NULL, NULL, qd, f->T3)) != 0)
                return rc;
            if ((rc = mb_index1_phi_tq(f, t, q, f->Pg)) != 0) return rc;
            for (ptrdiff_t l = 0; l < nc * nq; l++)
                f->T3[l] += f->Pg[l];
        }
        for (ptrdiff_t j = 0; j < nq; j++)
            for (ptrdiff_t k = 0; k < nc; k++) {
                double p = P[k + nc * j];
                RBL[k + N * j] -= b2 * p + (f->alpha != 0 ? a2 * f->T3[k + nc * j] : 0.0);
                RBR[k + N * j] -= a2 * p;
            }
    }

    if ((rc = saddle_solve(f, R, 2 * nq)) != MB_OK) return rc;

    for (ptrdiff_t j = 0; j < nq; j++) {
        double *c0 = J + ldJ * j, *c1 = J + ldJ * (nq + j);
        memset(c0, 0, (size_t)nq * sizeof(double));
        memset(c1, 0, (size_t)nq * sizeof(double));
        c1[j] = 1.0;
        memcpy(c0 + nq, R + N * j, (size_t)nq * sizeof(double));
        memcpy(c1 + nq, R + N * (nq + j), (size_t)nq * sizeof(double));
    }
    return MB_OK;
}

/* ---- projection ---- */

/* G = P P^T (nc x nc) for P (nc x nq, ld nc), then its scaled LU */
static int gram_factor(mb_index1 *f, const double *P, ptrdiff_t *bad)
{
    ptrdiff_t nq = f->nq, nc = f->nc;
    for (ptrdiff_t a = 0; a < nc; a++)
        for (ptrdiff_t b = 0; b <= a; b++) {
            double s = 0;
            for (ptrdiff_t k = 0; k < nq; k++) s += P[a + nc * k] * P[b + nc * k];
            f->G[a + nc * b] = f->G[b + nc * a] = s;
        }
    return factor_scaled(nc, f->G, nc, f->gsc, f->ipiv_g, bad);
}

/* x <- x - P^T G^-1 r (r is overwritten) */
static int min_norm_correct(mb_index1 *f, const double *P, double *r, double *x)
{
    ptrdiff_t nq = f->nq, nc = f->nc;
    int rc = solve_scaled(nc, f->G, nc, f->gsc, f->ipiv_g, r, 1);
    if (rc != MB_OK) return rc;
    for (ptrdiff_t i = 0; i < nq; i++) {
        double s = 0;
        for (ptrdiff_t k = 0; k < nc; k++) s += P[k + nc * i] * r[k];
        x[i] -= s;
    }
    return MB_OK;
}

/* The projection's linear algebra, dense (Phi_q and the LU of Phi_q Phi_q^T in f) or
 * sparse (KLU of [I Phi_q^T; Phi_q 0], index1_sparse.c), at the point of the last
 * proj_setup: the minimum-norm correction x -= Phi_q^T (Phi_q Phi_q^T)^-1 r (r may be
 * overwritten) and the residual r = Phi_q x + pt. */
static int proj_setup(mb_index1 *f, double t, const double *q)
{
    if (f->sp)
        return mb_index1_sparse_proj_factor(f, t, q);
    ptrdiff_t bad = 0;
    int rc = f->mech->phi_q(t, q, f->P1, f->nc, f->mech->ctx);
    if (rc != 0) return rc;
    if ((rc = gram_factor(f, f->P1, &bad)) != MB_OK)
        return fail(f, rc,
                    "Phi_q Phi_q^T is singular at t = %.17g (constraint row %td): redundant "
                    "constraints or a singular configuration.", t, bad);
    return MB_OK;
}

static int proj_correct(mb_index1 *f, double *r, double *x)
{
    return f->sp ? mb_index1_sparse_min_norm(f, r, x) : min_norm_correct(f, f->P1, r, x);
}

static void proj_residual(mb_index1 *f, const double *pt, const double *x, double *r)
{
    memcpy(r, pt, (size_t)f->nc * sizeof(double));
    if (f->sp)
        mb_index1_sparse_phiq_gemv(f, x, r);
    else
        mb_gemv(f->nc, f->nq, 1.0, f->P1, f->nc, x, 1.0, r);
}

int mb_index1_project(mb_index1 *f, double t, double *q, double *qd, double *res_pos,
                      double *res_vel)
{
    const mb_mech *me = f->mech;
    ptrdiff_t nq = f->nq, nc = f->nc;
    double *phi, *r, *dq, *pt, rp = 0, rv = 0;
    if (f->sp) {
        mb_index1_sparse_scratch(f, &phi, &r, &dq);
        pt = phi;  /* phi is not used after the position loop */
    } else {
        phi = f->vc1, r = f->vc2, dq = f->vq1, pt = f->vc3;
    }
    int rc, it;
    f->msg[0] = '\0';
    if (nc == 0) {
        if (res_pos) *res_pos = 0;
        if (res_vel) *res_vel = 0;
        return MB_OK;
    }
    for (it = 0;; it++) {
        if ((rc = me->phi(t, q, phi, me->ctx)) != 0) return rc;
        rp = norm_inf(nc, phi);
        if (!isfinite(rp))
            return fail(f, MB_ERR_NONFINITE, "Phi is not finite at t = %.17g.", t);
        if (rp <= f->proj_tol) break;
        if (it >= f->proj_max_iter)
            return fail(f, MB_ERR_CONV,
                        "Projection onto Phi = 0 did not converge in %d iterations "
                        "(|Phi| = %.3e > %.3e at t = %.17g).", it, rp, f->proj_tol, t);
        if ((rc = proj_setup(f, t, q)) != MB_OK) return rc;
        double qn = norm_inf(nq, q);
        memset(dq, 0, (size_t)nq * sizeof(double));
        memcpy(r, phi, (size_t)nc * sizeof(double));
        if ((rc = proj_correct(f, r, dq)) != MB_OK) return rc;
        for (ptrdiff_t i = 0; i < nq; i++) q[i] += dq[i];
        if (norm_inf(nq, dq) <= 8 * DBL_EPSILON * fmax(1.0, qn)) {  /* at round-off level */
            if ((rc = me->phi(t, q, phi, me->ctx)) != 0) return rc;
            rp = norm_inf(nc, phi);
            break;
        }
    }
    /* velocities: Phi_q q' + Phi_t = 0 (linear: one correction, one refinement) */
    if ((rc = proj_setup(f, t, q)) != MB_OK) return rc;
    /* sparse mode: the mechanism's phi_t (the sparse kernels exist only for planar
     * models, which have it); dense: with its difference fallback */
    if ((rc = f->sp ? me->phi_t(t, q, pt, me->ctx) : eval_phi_t(f, t, q, pt)) != 0) return rc;
    for (int pass = 0; pass < 2; pass++) {
        proj_residual(f, pt, qd, r);
        rv = norm_inf(nc, r);
        if (rv <= f->proj_tol && pass > 0) break;
        if ((rc = proj_correct(f, r, qd)) != MB_OK) return rc;
        proj_residual(f, pt, qd, r);
        rv = norm_inf(nc, r);
        if (rv <= f->proj_tol) break;
    }
    if (res_pos) *res_pos = rp;
    if (res_vel) *res_vel = rv;
    return MB_OK;
}

int mb_index1_project_hook(double t, double *y, void *ctx)
{
    mb_index1 *f = ctx;
    return mb_index1_project(f, t, y, y + f->nq, NULL, NULL);
}

/* ---- set-up ---- */

int mb_index1_init(mb_index1 *f, const mb_mech *mech, double alpha, double beta)
{
    return mb_index1_init_ex(f, mech, alpha, beta, -1);
}

int mb_index1_init_ex(mb_index1 *f, const mb_mech *mech, double alpha, double beta, int sparse)
{
    memset(f, 0, sizeof *f);
    if (!mech || mech->nq <= 0 || mech->nc < 0 || !mech->mass || !mech->forces ||
        (mech->nc > 0 && (!mech->phi || !mech->phi_q)))
        return fail(f, MB_ERR_ILL_INPUT,
                    "mb_index1_init: the mechanism needs nq > 0, mass, forces, and phi and "
                    "phi_q when it has constraints.");
    if (!isfinite(alpha) || !isfinite(beta))
        return fail(f, MB_ERR_ILL_INPUT, "mb_index1_init: Baumgarte parameters must be finite.");
    ptrdiff_t nq = mech->nq, nc = mech->nc, N = nq + nc;
    f->mech = mech;
    f->alpha = alpha;
    f->beta = beta;
    f->nq = nq;
    f->nc = nc;
    f->proj_tol = 1e-12;
    f->proj_max_iter = 20;
    if (sparse > 0 || (sparse < 0 && nq >= MB_INDEX1_SPARSE_MIN_NQ &&
                       !mb_index1_sparse_unavailable(mech)))
        return mb_index1_sparse_init(f);  /* index1_sparse.c */
    ptrdiff_t nmass = mech->mass_constant ? 0 : nq * nq;
    struct { double **p; ptrdiff_t n; } parts[] = {
        {&f->S, N * N}, {&f->dsc, N}, {&f->sol, N}, {&f->ycache, 2 * nq}, {&f->R, N * 2 * nq},
        {&f->T1, nq * nq}, {&f->T2, nc * nq}, {&f->T3, nc * nq}, {&f->P1, nc * nq},
        {&f->P2, nc * nq}, {&f->M1, nmass}, {&f->M2, nmass},
        {&f->G, nc * nc}, {&f->gsc, nc}, {&f->vq1, nq}, {&f->vq2, nq}, {&f->vq3, nq},
        {&f->vc1, nc}, {&f->vc2, nc}, {&f->vc3, nc}, {&f->Pg, nc * nq}, {&f->minv, nq},
        {&f->W, nc * nc}, {&f->Pq, nc * nq}, {&f->pv, nc * nq},
        {&f->dwork, (ptrdiff_t)mb_mechd_work_size(nq, nc)},
        {&f->kwork, (mech->fused_qpg || mech->fused_lin) && mech->fused_work > 0
                        ? mech->fused_work : 0}};
    size_t np = sizeof parts / sizeof parts[0], total = 0;
    for (size_t k = 0; k < np; k++) total += (size_t)parts[k].n;
    f->work = calloc(total + 1, sizeof(double));
    f->ipiv = calloc((size_t)(N + nc + nc * nq + nq + 1 + 2 * nq) + 1, sizeof(int));
    if (!f->work || !f->ipiv) {
        mb_index1_free(f);
        return fail(f, MB_ERR_MEM, "mb_index1_init: out of memory.");
    }
    double *w = f->work;
    for (size_t k = 0; k < np; k++) {
        *parts[k].p = parts[k].n > 0 ? w : NULL;
        w += parts[k].n;
    }
    f->ipiv_g = f->ipiv + N;
    f->pr = f->ipiv_g + nc;
    f->pc = f->pr + nc * nq;
    f->cols = f->pc + nq + 1;
    /* the fused kernels only while every separate kernel they stand for is there */
    f->use_qpg = mech->fused_qpg && mech->fused_work >= 0 && mech->gamma;
    f->use_lin = mech->fused_lin && mech->fused_work >= 0 && mech->forces_q && mech->forces_qd &&
                 mech->gamma_q && mech->gamma_qd && mech->phiq_x_q && mech->phiqT_lam_q;
    mb_mechd_init(&f->d, mech, f->dwork);
    f->cache_ok = 0;
    /* the Schur path when M is constant, diagonal and positive (M at q = 0: vq1) */
    if (mech->mass_constant && mech->mass(f->vq1, f->S, N, mech->ctx) == 0) {
        int diag = 1;
        for (ptrdiff_t j = 0; j < nq && diag; j++)
            for (ptrdiff_t i = 0; i < nq && diag; i++) {
                double v = f->S[i + N * j];
                diag = i == j ? (v > 0 && isfinite(v)) : v == 0;
            }
        if (diag)
            for (ptrdiff_t k = 0; k < nq; k++) f->minv[k] = 1.0 / f->S[k + N * k];
        f->schur = diag;
    }
    return MB_OK;
}

void mb_index1_free(mb_index1 *f)
{
    mb_index1_sparse_free(f);
    free(f->work);
    free(f->ipiv);
    f->work = NULL;
    f->ipiv = NULL;
    f->cache_ok = 0;
}

/* df/dt of an autonomous mechanism (mb_mech.autonomous: no driver moves, no force
 * depends on t): exactly zero, so that Rosenbrock methods and the LLM spend no
 * evaluation of f on a finite-difference df/dt. */
static int index1_dfdt_zero(double t, const double *y, double *ft, void *ctx)
{
    (void)t; (void)y;
    const mb_index1 *f = ctx;
    memset(ft, 0, (size_t)(2 * f->nq) * sizeof(double));
    return MB_OK;
}

void mb_index1_problem(mb_index1 *f, mb_problem *p)
{
    memset(p, 0, sizeof *p);
    p->n = 2 * f->nq;
    p->nq = f->nq;
    p->rhs = index1_rhs;
    p->jac = index1_jac;
    p->acc = index1_acc;
    if (f->mech->autonomous)
        p->dfdt = index1_dfdt_zero;
    if (f->mech->step_bound)
        p->step_bound = index1_step_bound;
    p->ctx = f;
    if (f->sp)
        mb_index1_sparse_problem(f, p);  /* p->jac, p->linsys */
}
