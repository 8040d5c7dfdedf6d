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
 * W factored as L D L^T (L unit lower triangular: no square root, one division per
 * column, 1/D kept for the substitutions; the chain of dependent operations of a
 * small W is half that of a Cholesky factor with divisions); a pivot
 * d_k <= 64 N eps W_kk (W_kk = 0: a zero row of
 * Phi_q) is reported as the singular saddle-point matrix, with pivot nq + k.  Phi_q
 * is kept by columns without its zeros (pv, pr, pc) for W and the solves; the
 * Jacobian's nonzero right-hand sides share the triangular solves.
 *
 * Fused kernels.  When the mechanism's table has fused_qpg (Q, Phi_q, gamma in one
 * pass) and fused_lin (the Jacobian's right-hand sides [Q_q - (Phi_q^T lam)_q;
 * gamma_q - (Phi_q a)_q] and [Q_q'; gamma_q']), and every separate kernel they stand
 * for (use_qpg, use_lin, decided in mb_index1_init), f and df/dy call those instead.
 *
 * Projection: project.c (Newton with minimum-norm corrections), with the dense
 * linear algebra there or, in the sparse mode, KLU of [I Phi_q^T; Phi_q 0].
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "carve.h"
#include "index1.h"
#include "index1_sparse.h"
#include "mbs_common.h"
#include "status.h"

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

/* W = Pq diag(minv) Pq^T (from the compressed Pq), factored L D L^T in place (ld nc:
 * L below the diagonal, 1/D on it); MB_ERR_LINALG and *bad = k when pivot k is not
 * above 64 N eps of W_kk */
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
    /* W = L D L^T, L unit lower (below the diagonal of W), 1/D on the diagonal: no
     * square root, one division per column (D_k in vc2 meanwhile) */
    double tol = 64.0 * (double)N * DBL_EPSILON, *D = f->vc2;
    for (ptrdiff_t j = 0; j < nc; j++) {
        double d = W[j + nc * j], wjj = d;
        for (ptrdiff_t k = 0; k < j; k++) d -= W[j + nc * k] * W[j + nc * k] * D[k];
        if (!(d > tol * wjj) || !(wjj > 0)) {  /* also catches NaN */
            *bad = nq + j;
            return MB_ERR_LINALG;
        }
        double id = 1.0 / d;
        D[j] = d;
        W[j + nc * j] = id;
        for (ptrdiff_t i = j + 1; i < nc; i++) {
            double s = W[i + nc * j];
            for (ptrdiff_t k = 0; k < j; k++) s -= W[i + nc * k] * W[j + nc * k] * D[k];
            W[i + nc * j] = s * id;
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
        for (ptrdiff_t i = 0; i < nc; i++) {                       /* L y = . */
            double s = mu[i];
            for (ptrdiff_t k = 0; k < i; k++) s -= W[i + nc * k] * mu[k];
            mu[i] = s;
        }
        for (ptrdiff_t i = nc - 1; i >= 0; i--) {                  /* L^T mu = D^-1 y */
            double s = mu[i] * W[i + nc * i];
            for (ptrdiff_t k = i + 1; k < nc; k++) s -= W[k + nc * i] * mu[k];
            mu[i] = s;
        }
    }
    for (ptrdiff_t i = 0; i < nc && m > 1; i++) {                  /* L y = . */
        const double *Wi = W + i;
        for (int v = 0; v < m; v++) {
            double *mu = B + N * cols[v] + nq, s = mu[i];
            for (ptrdiff_t k = 0; k < i; k++) s -= Wi[nc * k] * mu[k];
            mu[i] = s;
        }
    }
    for (ptrdiff_t i = nc - 1; i >= 0 && m > 1; i--) {             /* L^T mu = D^-1 y */
        const double *Wi = W + nc * i, id = W[i + nc * i];
        for (int v = 0; v < m; v++) {
            double *mu = B + N * cols[v] + nq, s = mu[i] * id;
            for (ptrdiff_t k = i + 1; k < nc; k++) s -= Wi[k] * mu[k];
            mu[i] = s;
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
    return mb_lu_solve_scaled(N, f->S, N, f->dsc, f->ipiv, B, nrhs);
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
        if (nc > 0 && (rc = mb_mechd_gamma(&f->d, t, q, qd, g)) != 0) return rc;
    }
    if (nc > 0) {
        if (!f->schur)
            for (ptrdiff_t r = 0; r < nc; r++) {
                for (ptrdiff_t c = 0; c < nq; c++) S[c + N * (nq + r)] = S[nq + r + N * c];
                for (ptrdiff_t c = 0; c < nc; c++) S[nq + c + N * (nq + r)] = 0.0;
            }
        if (f->alpha != 0) {  /* - 2 alpha (Phi_q q' + Phi_t) */
            if ((rc = mb_mechd_phi_t(&f->d, t, q, f->vc1)) != 0) return rc;
            mb_gemv(nc, nq, 1.0, Pq, ldp, qd, 1.0, f->vc1);
            for (ptrdiff_t k = 0; k < nc; k++) g[k] -= 2 * f->alpha * f->vc1[k];
        }
        if (f->beta != 0) {   /* - beta^2 Phi */
            if ((rc = me->phi(t, q, f->vc2, me->ctx)) != 0) return rc;
            for (ptrdiff_t k = 0; k < nc; k++) g[k] -= f->beta * f->beta * f->vc2[k];
        }
    }
    ptrdiff_t bad = 0;
    if ((rc = f->schur ? schur_factor(f, &bad) : mb_lu_factor_scaled(N, S, N, f->dsc, f->ipiv, &bad))
        != MB_OK)
        return MB_FAIL(f, rc,
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
        if ((rc = mb_mechd_forces_jac(&f->d, t, q, qd, RTL, RTR, N)) != 0) return rc;
        if (nc > 0) {
            if ((rc = mb_mechd_gamma_jac(&f->d, t, q, qd, RBL, RBR, N)) != 0) return rc;
            /* T1 = (Phi_q^T lam)_q, T2 = (Phi_q a)_q, T3 = (Phi_q q')_q (Baumgarte) */
            const double *x3 = f->alpha != 0 ? qd : NULL;
            if ((rc = mb_mechd_phiq_jacs(&f->d, t, q, lam, f->T1, a, f->T2, x3, f->T3)) != 0)
                return rc;
            for (ptrdiff_t j = 0; j < nq; j++) {
                for (ptrdiff_t i = 0; i < nq; i++) RTL[i + N * j] -= f->T1[i + nq * j];
                for (ptrdiff_t k = 0; k < nc; k++) RBL[k + N * j] -= f->T2[k + nc * j];
            }
        }
    }
    /* - (M a)_q (differences of M when it is not constant) */
    if ((rc = mb_mechd_mass_jac_add(&f->d, q, a, -1.0, RTL, N)) != 0) return rc;

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
                (rc = mb_mechd_phiq_jacs(&f->d, t, q, NULL, NULL, NULL, NULL, qd, f->T3)) != 0)
                return rc;
            if ((rc = mb_mechd_phi_tq(&f->d, t, q, f->Pg, f->nc)) != 0) return rc;
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

/* ---- projection (project.c; the sparse mode supplies its linear algebra) ---- */

int mb_index1_project(mb_index1 *f, double t, double *q, double *qd, double *res_pos,
                      double *res_vel)
{
    f->msg[0] = '\0';
    int rc = mb_proj_run(&f->proj, t, q, qd, res_pos, res_vel);
    if (rc != MB_OK && f->proj.msg[0])
        memcpy(f->msg, f->proj.msg, sizeof f->msg);
    return rc;
}

int mb_index1_project_hook(double t, double *y, void *ctx)
{
    mb_index1 *f = ctx;
    return mb_index1_project(f, t, y, y + f->nq, NULL, NULL);
}

/* ---- set-up ---- */

/* the dense mode's work block: one layout both sizes and carves it (carve.h) */
static size_t layout(mb_carver *c, mb_index1 *f, const mb_mech *mech)
{
    size_t nq = (size_t)mech->nq, nc = (size_t)mech->nc, N = nq + nc;
    f->S = mb_carve(c, N * N);
    f->dsc = mb_carve(c, N);
    f->sol = mb_carve(c, N);
    f->ycache = mb_carve(c, 2 * nq);
    f->R = mb_carve(c, N * 2 * nq);
    f->T1 = mb_carve(c, nq * nq);
    f->T2 = mb_carve(c, nc * nq);
    f->T3 = mb_carve(c, nc * nq);
    f->P1 = mb_carve(c, nc * nq);
    f->vq1 = mb_carve(c, nq);
    f->vc1 = mb_carve(c, nc);
    f->vc2 = mb_carve(c, nc);
    f->Pg = mb_carve(c, nc * nq);
    f->minv = mb_carve(c, nq);
    f->W = mb_carve(c, nc * nc);
    f->Pq = mb_carve(c, nc * nq);
    f->pv = mb_carve(c, nc * nq);
    f->dwork = mb_carve(c, mb_mechd_work_size(mech->nq, mech->nc));
    f->kwork = mb_carve(c, (mech->fused_qpg || mech->fused_lin) && mech->fused_work > 0
                               ? (size_t)mech->fused_work : 0);
    f->ipiv = mb_carve_int(c, N);
    f->pr = mb_carve_int(c, nc * nq);
    f->pc = mb_carve_int(c, nq + 1);
    f->cols = mb_carve_int(c, 2 * nq);
    return c->off;
}

int mb_index1_init(mb_index1 *f, const mb_mech *mech, double alpha, double beta)
{
    return mb_index1_init_ex(f, mech, alpha, beta, -1);
}

/* 1 when M is constant, diagonal and positive (the Schur path), its inverse diagonal
 * then in f->minv (M at q = vq1: any q, M being constant); else 0 */
static int schur_setup(mb_index1 *f)
{
    const mb_mech *mech = f->mech;
    ptrdiff_t nq = f->nq, N = nq + f->nc;
    if (!mech->mass_constant || mech->mass(f->vq1, f->S, N, mech->ctx) != 0)
        return 0;
    int diag = 1;
    for (ptrdiff_t j = 0; j < nq && diag; j++)
        for (ptrdiff_t i = 0; i < nq && diag; i++) {
            double v = f->S[i + N * j];
            diag = i == j ? (v > 0 && isfinite(v)) : v == 0;
        }
    if (diag)
        for (ptrdiff_t k = 0; k < nq; k++) f->minv[k] = 1.0 / f->S[k + N * k];
    return diag;
}

int mb_index1_init_ex(mb_index1 *f, const mb_mech *mech, double alpha, double beta, int sparse)
{
    memset(f, 0, sizeof *f);
    if (!mech || mech->nq <= 0 || mech->nc < 0 || !mech->mass || !mech->forces ||
        (mech->nc > 0 && (!mech->phi || !mech->phi_q)))
        return MB_FAIL(f, MB_ERR_ILL_INPUT,
                    "mb_index1_init: the mechanism needs nq > 0, mass, forces, and phi and "
                    "phi_q when it has constraints.");
    if (!isfinite(alpha) || !isfinite(beta))
        return MB_FAIL(f, MB_ERR_ILL_INPUT, "mb_index1_init: Baumgarte parameters must be finite.");
    ptrdiff_t nq = mech->nq, nc = mech->nc;
    f->mech = mech;
    f->alpha = alpha;
    f->beta = beta;
    f->nq = nq;
    f->nc = nc;
    if (sparse > 0 || (sparse < 0 && nq >= MB_INDEX1_SPARSE_MIN_NQ &&
                       !mb_index1_sparse_unavailable(mech))) {
        int rc = mb_index1_sparse_init(f);  /* index1_sparse.c */
        if (rc == MB_OK && (rc = mb_proj_init(&f->proj, mech, NULL, 0)) != MB_OK) {
            mb_index1_free(f);
            return MB_FAIL(f, rc, "mb_index1_init: out of memory.");
        }
        if (rc == MB_OK)
            mb_index1_sparse_proj_la(f, &f->proj.la);
        return rc;
    }
    mb_index1 scratch;
    size_t size = layout(&(mb_carver){NULL, 0}, &scratch, mech);
    f->work = calloc(size + 1, sizeof(double));
    if (!f->work) {
        mb_index1_free(f);
        return MB_FAIL(f, MB_ERR_MEM, "mb_index1_init: out of memory.");
    }
    layout(&(mb_carver){f->work, 0}, f, mech);
    /* the fused kernels only while every separate kernel they stand for is there */
    f->use_qpg = mech->fused_qpg && mech->fused_work >= 0 && mech->gamma;
    f->use_lin = mech->fused_lin && mech->fused_work >= 0 && mech->forces_q && mech->forces_qd &&
                 mech->gamma_q && mech->gamma_qd && mech->phiq_x_q && mech->phiqT_lam_q;
    mb_mechd_init(&f->d, mech, f->dwork);
    if (mb_proj_init(&f->proj, mech, &f->d, 1) != MB_OK) {
        mb_index1_free(f);
        return MB_FAIL(f, MB_ERR_MEM, "mb_index1_init: out of memory.");
    }
    f->cache_ok = 0;
    memset(f->vq1, 0, (size_t)nq * sizeof(double));
    f->schur = schur_setup(f);
    return MB_OK;
}

int mb_index1_params_changed(mb_index1 *f)
{
    f->cache_ok = 0;
    if (!f->schur)
        return MB_OK;
    if (!schur_setup(f))
        return MB_FAIL(f, MB_ERR_ILL_INPUT, "The mass matrix is no longer diagonal and positive.");
    return MB_OK;
}

void mb_index1_free(mb_index1 *f)
{
    mb_index1_sparse_free(f);
    mb_proj_free(&f->proj);
    free(f->work);
    f->work = NULL;
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
