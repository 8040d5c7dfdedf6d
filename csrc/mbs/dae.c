/* The index-1, index-2, index-3 and GGL DAE formulations of a constrained
 * mechanical system as  M_p y' = f(t, y)  (dae.h).
 *
 * Jacobian.  With a = M^-1 (Q - Phi_q^T lambda):
 *     da/dq      = M^-1 (Q_q - (Phi_q^T lambda)_q - (M a)_q)
 *     da/dv      = M^-1 Q_v
 *     da/dlambda = -M^-1 Phi_q^T
 * (the three blocks by one multi-column solve with the LU of M), and the algebraic rows
 *     index 3:  d Phi          = [Phi_q, 0, 0]
 *     index 2:  d(Phi_q v + Phi_t) = [(Phi_q v)_q + Phi_tq, Phi_q, 0]
 *     index 1:  d(Phi_q a - gamma) = [(Phi_q a)_q + Phi_q a_q - gamma_q,
 *                                     Phi_q a_v - gamma_v, Phi_q a_lambda]
 *     GGL:      the index-2 rows, then the index-3 rows; q' = v - Phi_q^T mu adds
 *               -(Phi_q^T mu)_q and -Phi_q^T (column mu) to the rows of q'.
 * Every block comes from mechderiv.c (the mechanism's derivative kernels or central
 * differences of the kernel they differentiate), Phi_tq by central differences of
 * Phi_q in t (zero for scleronomic constraints).  lambda(t0) comes from the index-1
 * formulation's saddle-point system (index1.c), the projection from project.c.
 */
#include "dae.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "carve.h"
#include "mbs_common.h"
#include "status.h"

/* Regularization of a singular M (mech.h, mass_reg): the DAE formulations factor
 *     M~ = M + Phi_R,q^T W Phi_R,q      (R: the first nreg rows of Phi, W = diag(w))
 * instead of M.  On the solution Phi_R,q q'' = gamma_R, so M~ q'' + Phi_q^T lam~ = Q with
 *     lam~_R = lam_R - W Phi_R,q q''       (lam~ = lam on every other row):
 * the same q(t) with other multipliers of the regularizing rows only (a spatial model's
 * normalizations); y carries lam~, the outputs give lam.  w_r is chosen once, at the
 * first factorization, so that w_r Phi_r,q^T Phi_r,q has the size of M's diagonal on
 * the row's columns: w_r = mean M_ii / |Phi_r,q|^2 over the columns where Phi_r,q is
 * nonzero (1 / |Phi_r,q|^2 when that mean is not positive). */
static void reg_weights(mb_dae *f, const double *M)
{
    ptrdiff_t nq = f->nq, nc = f->nc;
    for (ptrdiff_t r = 0; r < f->nreg; r++) {
        double g2 = 0.0, md = 0.0;
        ptrdiff_t cnt = 0;
        for (ptrdiff_t i = 0; i < nq; i++) {
            double g = f->Pq[r + nc * i];
            if (g != 0.0) {
                g2 += g * g;
                md += M[i + nq * i];
                cnt++;
            }
        }
        f->regw[r] = g2 > 0.0 ? (md > 0.0 ? md / (double)cnt : 1.0) / g2 : 0.0;
    }
    f->regw_ok = 1;
}

/* M += Phi_R,q^T W Phi_R,q (f->Pq holds Phi_q at q) */
static void reg_add(mb_dae *f, double *M)
{
    ptrdiff_t nq = f->nq, nc = f->nc;
    if (!f->regw_ok)
        reg_weights(f, M);
    for (ptrdiff_t r = 0; r < f->nreg; r++)
        for (ptrdiff_t j = 0; j < nq; j++) {
            double c = f->regw[r] * f->Pq[r + nc * j];
            if (c == 0.0) continue;
            for (ptrdiff_t i = 0; i < nq; i++) M[i + nq * j] += c * f->Pq[r + nc * i];
        }
}

/* lam_R += sign W Phi_R,q a (f->Pq holds Phi_q): sign = +1 turns lam~ into lam */
static void reg_shift(const mb_dae *f, const double *a, double sign, double *lam)
{
    ptrdiff_t nc = f->nc;
    for (ptrdiff_t r = 0; r < f->nreg; r++) {
        double s = 0.0;
        for (ptrdiff_t i = 0; i < f->nq; i++) s += f->Pq[r + nc * i] * a[i];
        lam[r] += sign * f->regw[r] * s;
    }
}

/* Xq -= (Phi_R,q^T W Phi_R,q a)_q = (Phi_q^T mu)_q + Phi_R,q^T W (Phi_R,q a)_q at fixed
 * a = f->a, mu = W Phi_R,q a on the rows R and 0 elsewhere (uses T1, T2) */
static int reg_jac_add(mb_dae *f, double t, const double *q, double *Xq)
{
    ptrdiff_t nq = f->nq, nc = f->nc;
    double *mu = f->regmu;
    memset(mu, 0, (size_t)nc * sizeof(double));
    reg_shift(f, f->a, 1.0, mu);
    int rc = mb_mechd_phiq_jacs(&f->d, t, q, mu, f->T1, f->a, f->T2, NULL, NULL);
    if (rc != 0) return rc;
    for (ptrdiff_t l = 0; l < nq * nq; l++) Xq[l] -= f->T1[l];
    for (ptrdiff_t r = 0; r < f->nreg; r++)
        for (ptrdiff_t i = 0; i < nq; i++) {
            double c = f->regw[r] * f->Pq[r + nc * i];
            if (c == 0.0) continue;
            for (ptrdiff_t j = 0; j < nq; j++) Xq[i + nq * j] -= c * f->T2[r + nc * j];
        }
    return MB_OK;
}

/* the LU of M(q) (M~ when regularized) in f->ML (kept while q is unchanged, or always
 * when M is constant); f->Pq holds Phi_q at q */
static int mass_factor(mb_dae *f, const double *q)
{
    const mb_mech *me = f->mech;
    ptrdiff_t nq = f->nq;
    int constant = me->mass_constant && f->nreg == 0;
    if (f->mass_ok &&
        (constant || memcmp(q, f->qcache, (size_t)nq * sizeof(double)) == 0))
        return MB_OK;
    f->mass_ok = 0;
    int rc = me->mass(q, f->ML, nq, me->ctx);
    if (rc != 0)
        return rc;
    if (f->nreg > 0)
        reg_add(f, f->ML);
    if (mb_lu_factor(nq, f->ML, nq, f->ipiv) != MB_OK)
        return MB_FAIL(f, MB_ERR_LINALG, f->nreg > 0 ? "The regularized mass matrix M + "
                       "Phi_R,q^T W Phi_R,q is singular." : "The mass matrix M(q) is singular.");
    memcpy(f->qcache, q, (size_t)nq * sizeof(double));
    f->mass_ok = 1;
    return MB_OK;
}

/* f->a = M^-1 (Q - Phi_q^T lam), f->Pq = Phi_q at (t, q) */
static int accel(mb_dae *f, double t, const double *q, const double *v, const double *lam)
{
    const mb_mech *me = f->mech;
    ptrdiff_t nq = f->nq, nc = f->nc;
    int rc;
    if ((rc = me->forces(t, q, v, f->a, me->ctx)) != 0) return rc;
    if ((rc = me->phi_q(t, q, f->Pq, nc, me->ctx)) != 0) return rc;
    for (ptrdiff_t i = 0; i < nq; i++) {
        double s = 0.0;
        for (ptrdiff_t k = 0; k < nc; k++) s += f->Pq[k + nc * i] * lam[k];
        f->a[i] -= s;
    }
    if ((rc = mass_factor(f, q)) != MB_OK) return rc;
    return mb_lu_solve(nq, f->ML, nq, f->ipiv, f->a, 1);
}

/* out = Phi_q v + Phi_t (f->Pq holds Phi_q) */
static int velocity_constraint(mb_dae *f, double t, const double *q, const double *v, double *out)
{
    int rc = mb_mechd_phi_t(&f->d, t, q, out);
    if (rc != 0) return rc;
    mb_gemv(f->nc, f->nq, 1.0, f->Pq, f->nc, v, 1.0, out);
    return MB_OK;
}

static int dae_rhs(double t, const double *y, double *ydot, void *ctx)
{
    mb_dae *f = ctx;
    const mb_mech *me = f->mech;
    ptrdiff_t nq = f->nq, nc = f->nc;
    const double *q = y, *v = y + nq, *lam = y + 2 * nq, *mu = y + 2 * nq + nc;
    double *alg = ydot + 2 * nq;
    int rc = accel(f, t, q, v, lam);
    if (rc != MB_OK) return rc;
    memcpy(ydot, v, (size_t)nq * sizeof(double));
    if (f->kind == MB_DAE_GGL)  /* q' = v - Phi_q^T mu */
        for (ptrdiff_t i = 0; i < nq; i++) {
            double s = 0.0;
            for (ptrdiff_t k = 0; k < nc; k++) s += f->Pq[k + nc * i] * mu[k];
            ydot[i] -= s;
        }
    memcpy(ydot + nq, f->a, (size_t)nq * sizeof(double));
    switch (f->kind) {
    case MB_DAE_INDEX3:
        return me->phi(t, q, alg, me->ctx);
    case MB_DAE_INDEX2:
        return velocity_constraint(f, t, q, v, alg);
    case MB_DAE_INDEX1:
        if ((rc = mb_mechd_gamma(&f->d, t, q, v, alg)) != 0) return rc;
        for (ptrdiff_t k = 0; k < nc; k++) alg[k] = -alg[k];
        mb_gemv(nc, nq, 1.0, f->Pq, nc, f->a, 1.0, alg);
        return MB_OK;
    default: /* GGL */
        if ((rc = velocity_constraint(f, t, q, v, alg)) != MB_OK) return rc;
        return me->phi(t, q, alg + nc, me->ctx);
    }
}

/* df/dy into J (n x n, ld) */
static int dae_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    mb_dae *f = ctx;
    ptrdiff_t nq = f->nq, nc = f->nc, n = f->n;
    const double *q = y, *v = y + nq, *lam = y + 2 * nq, *mu = y + 2 * nq + nc;
    mb_mechd *d = &f->d;
    int rc = accel(f, t, q, v, lam);
    if (rc != MB_OK) return rc;
    for (ptrdiff_t c = 0; c < n; c++)
        memset(J + ld * c, 0, (size_t)n * sizeof(double));

    /* X = [Q_q - (Phi_q^T lam)_q - (M a)_q | Q_v | -Phi_q^T] -> M^-1 X = [a_q | a_v | a_lam] */
    double *X = f->X, *Xq = X, *Xv = X + nq * nq, *Xl = X + 2 * nq * nq;
    if ((rc = mb_mechd_forces_jac(d, t, q, v, Xq, Xv, nq)) != 0) return rc;
    if ((rc = mb_mechd_mass_jac_add(d, q, f->a, -1.0, Xq, nq)) != 0) return rc;
    if (f->nreg > 0 && (rc = reg_jac_add(f, t, q, Xq)) != MB_OK) return rc;
    const double *xv = f->kind == MB_DAE_INDEX1 ? f->a : v;  /* (Phi_q x)_q of the alg. rows */
    int need_T2 = f->kind != MB_DAE_INDEX3;
    if ((rc = mb_mechd_phiq_jacs(d, t, q, lam, f->T1, need_T2 ? xv : NULL, f->T2, NULL, NULL)) != 0)
        return rc;
    for (ptrdiff_t l = 0; l < nq * nq; l++) Xq[l] -= f->T1[l];
    for (ptrdiff_t k = 0; k < nc; k++)
        for (ptrdiff_t i = 0; i < nq; i++) Xl[i + nq * k] = -f->Pq[k + nc * i];
    if ((rc = mb_lu_solve(nq, f->ML, nq, f->ipiv, X, 2 * nq + nc)) != MB_OK) return rc;

    /* rows of q' */
    for (ptrdiff_t i = 0; i < nq; i++) J[i + ld * (nq + i)] = 1.0;
    if (f->kind == MB_DAE_GGL) {
        if ((rc = mb_mechd_phiq_jacs(d, t, q, mu, f->T1, NULL, NULL, NULL, NULL)) != 0) return rc;
        for (ptrdiff_t j = 0; j < nq; j++)
            for (ptrdiff_t i = 0; i < nq; i++) J[i + ld * j] = -f->T1[i + nq * j];
        for (ptrdiff_t k = 0; k < nc; k++)
            for (ptrdiff_t i = 0; i < nq; i++) J[i + ld * (2 * nq + nc + k)] = -f->Pq[k + nc * i];
    }
    /* rows of v' = a */
    for (ptrdiff_t c = 0; c < 2 * nq + nc; c++)
        memcpy(J + nq + ld * c, X + nq * c, (size_t)nq * sizeof(double));

    /* algebraic rows */
    double *A = J + 2 * nq;  /* row offset */
    if (f->kind == MB_DAE_INDEX2 || f->kind == MB_DAE_GGL) {
        if ((rc = mb_mechd_phi_tq(d, t, q, f->Ptq, nc)) != 0) return rc;
        for (ptrdiff_t j = 0; j < nq; j++)
            for (ptrdiff_t k = 0; k < nc; k++) {
                A[k + ld * j] = f->T2[k + nc * j] + f->Ptq[k + nc * j];
                A[k + ld * (nq + j)] = f->Pq[k + nc * j];
            }
        if (f->kind == MB_DAE_GGL)
            for (ptrdiff_t j = 0; j < nq; j++)
                for (ptrdiff_t k = 0; k < nc; k++) A[nc + k + ld * j] = f->Pq[k + nc * j];
    } else if (f->kind == MB_DAE_INDEX3) {
        for (ptrdiff_t j = 0; j < nq; j++)
            for (ptrdiff_t k = 0; k < nc; k++) A[k + ld * j] = f->Pq[k + nc * j];
    } else {  /* index 1: (Phi_q a)_q + Phi_q [a_q a_v a_lam] - [gamma_q gamma_v 0] */
        if ((rc = mb_mechd_gamma_jac(d, t, q, v, f->Gq, f->Gv, nc)) != 0) return rc;
        mb_gemm(nc, 2 * nq + nc, nq, 1.0, f->Pq, nc, X, nq, 0.0, f->Y, nc);
        for (ptrdiff_t c = 0; c < 2 * nq + nc; c++)
            for (ptrdiff_t k = 0; k < nc; k++) {
                double val = f->Y[k + nc * c];
                if (c < nq) val += f->T2[k + nc * c] - f->Gq[k + nc * c];
                else if (c < 2 * nq) val -= f->Gv[k + nc * (c - nq)];
                A[k + ld * c] = val;
            }
    }
    return MB_OK;
}

static int dae_res(double t, const double *y, const double *yp, double *r, void *ctx)
{
    mb_dae *f = ctx;
    int rc = dae_rhs(t, y, r, ctx);
    if (rc != MB_OK) return rc;
    ptrdiff_t nd = 2 * f->nq;
    for (ptrdiff_t i = 0; i < f->n; i++)
        r[i] = (i < nd ? yp[i] : 0.0) - r[i];
    return MB_OK;
}

int mb_dae_ida_jac(double t, double cj, const double *y, const double *yp, double *J,
                   ptrdiff_t ld, void *ctx)
{
    (void)yp;
    mb_dae *f = ctx;
    int rc = dae_jac(t, y, J, ld, ctx);
    if (rc != MB_OK) return rc;
    for (ptrdiff_t c = 0; c < f->n; c++)
        for (ptrdiff_t i = 0; i < f->n; i++) J[i + ld * c] = -J[i + ld * c];
    for (ptrdiff_t i = 0; i < 2 * f->nq; i++) J[i + ld * i] += cj;
    return MB_OK;
}

/* the mechanism's step bound (mech.h) with q'' from f = (q', q'', ...) */
static int dae_step_bound(double t, const double *y, const double *fy, double *h_max, void *ctx)
{
    mb_dae *f = ctx;
    const mb_mech *me = f->mech;
    return me->step_bound(t, y, y + f->nq, fy + f->nq, h_max, me->ctx);
}

int mb_dae_initial(mb_dae *f, double t0, const double *q0, const double *v0, double *y0,
                   double *yp0)
{
    ptrdiff_t nq = f->nq, nc = f->nc;
    double *qdd = f->rq, *lam = f->rc1;
    /* lambda(t0) and q''(t0) from the saddle-point system of the index-1 formulation: in
     * the sparse mode by KLU, else dense and by the scaled LU (not its Schur path), as
     * before the Schur path existed: kept so that every DAE run stays what it was.  (The
     * reason it was kept, bdf on the index1_dae form of the two-link manipulator
     * collapsing its step when lambda(t0) changed in its last bit, was bdf's: a first
     * Newton correction passing on an old rate, fixed in bdf.c; tests/test_bdf_dae.py
     * perturbs lambda(t0) by ulps.) */
    mb_index1 i1;
    int rc = mb_index1_init_ex(&i1, f->mech, 0.0, 0.0, f->sp ? 1 : 0);
    if (rc == MB_OK) {
        if (!f->sp)
            i1.schur = 0;
        rc = mb_index1_solve(&i1, t0, q0, v0, qdd, lam);
    }
    if (rc != MB_OK)
        MB_FAIL(f, rc, "%s", i1.msg[0] ? i1.msg : "The consistent multipliers lambda(t0) "
                "could not be computed.");
    mb_index1_free(&i1);
    if (rc != MB_OK)
        return rc;
    memcpy(y0, q0, (size_t)nq * sizeof(double));
    memcpy(y0 + nq, v0, (size_t)nq * sizeof(double));
    memcpy(y0 + 2 * nq, lam, (size_t)nc * sizeof(double));
    if (f->nreg > 0 && f->sp) {  /* y carries lam~; Phi_q, M~ and W at q0 */
        if ((rc = mb_dae_sparse_accel(f, t0, q0, v0, lam)) != MB_OK) return rc;
        mb_dae_sparse_reg_shift(f, qdd, -1.0, y0 + 2 * nq);
    } else if (f->nreg > 0) {  /* y carries lam~ (above) */
        if ((rc = f->mech->phi_q(t0, q0, f->Pq, nc, f->mech->ctx)) != 0) return rc;
        if ((rc = mass_factor(f, q0)) != MB_OK) return rc;
        reg_shift(f, qdd, -1.0, y0 + 2 * nq);
    }
    for (ptrdiff_t i = 2 * nq + nc; i < f->n; i++) y0[i] = 0.0;  /* GGL: mu = 0 */
    if (yp0) {
        memcpy(yp0, v0, (size_t)nq * sizeof(double));
        memcpy(yp0 + nq, qdd, (size_t)nq * sizeof(double));
        for (ptrdiff_t i = 2 * nq; i < f->n; i++) yp0[i] = 0.0;
    }
    return MB_OK;
}

int mb_dae_accel(mb_dae *f, double t, const double *y, double *qdd, double *lam)
{
    ptrdiff_t nq = f->nq, nc = f->nc;
    int rc = f->sp ? mb_dae_sparse_accel(f, t, y, y + nq, y + 2 * nq)
                   : accel(f, t, y, y + nq, y + 2 * nq);
    if (rc != MB_OK) return rc;
    if (qdd) memcpy(qdd, f->a, (size_t)nq * sizeof(double));
    if (lam) {
        memcpy(lam, y + 2 * nq, (size_t)nc * sizeof(double));
        if (f->sp) mb_dae_sparse_reg_shift(f, f->a, 1.0, lam);
        else reg_shift(f, f->a, 1.0, lam);  /* lam~ -> lam */
    }
    return MB_OK;
}

int mb_dae_project_hook(double t, double *y, void *ctx)
{
    mb_dae *f = ctx;
    return mb_proj_run(&f->proj, t, y, y + f->nq, NULL, NULL);
}

/* the work block: one layout both sizes and carves it (carve.h) */
static size_t layout(mb_carver *c, mb_dae *f, ptrdiff_t nq, ptrdiff_t nc, ptrdiff_t n,
                     ptrdiff_t w, ptrdiff_t nreg, int dense)
{
    size_t d = dense ? 1 : 0;  /* the sparse mode has none of the dense arrays */
    f->Mp = mb_carve(c, d * (size_t)(n * n));
    f->ML = mb_carve(c, d * (size_t)(nq * nq));
    f->qcache = mb_carve(c, (size_t)nq);
    f->a = mb_carve(c, (size_t)nq);
    f->rq = mb_carve(c, (size_t)nq);
    f->rc1 = mb_carve(c, (size_t)nc);
    f->Pq = mb_carve(c, d * (size_t)(nc * nq));
    f->Gq = mb_carve(c, d * (size_t)(nc * nq));
    f->Gv = mb_carve(c, d * (size_t)(nc * nq));
    f->T1 = mb_carve(c, d * (size_t)(nq * nq));
    f->T2 = mb_carve(c, d * (size_t)(nc * nq));
    f->Ptq = mb_carve(c, d * (size_t)(nc * nq));
    f->X = mb_carve(c, d * (size_t)(nq * w));
    f->Y = mb_carve(c, d * (size_t)(nc * w));
    f->regw = mb_carve(c, (size_t)nreg);
    f->regmu = mb_carve(c, (size_t)(nreg > 0 ? nc : 0));
    f->dwork = mb_carve(c, d * mb_mechd_work_size(nq, nc));
    f->ipiv = mb_carve_int(c, d * (size_t)nq);
    f->index = mb_carve_bytes(c, (size_t)n);
    return c->off;
}

int mb_dae_init(mb_dae *f, const mb_mech *mech, int kind)
{
    return mb_dae_init_ex(f, mech, kind, 0);
}

int mb_dae_init_ex(mb_dae *f, const mb_mech *mech, int kind, int sparse)
{
    memset(f, 0, sizeof *f);
    if (kind != MB_DAE_INDEX1 && kind != MB_DAE_INDEX2 && kind != MB_DAE_INDEX3 &&
        kind != MB_DAE_GGL)
        return MB_FAIL(f, MB_ERR_ILL_INPUT, "mb_dae_init: unknown formulation %d.", kind);
    if (!mech || mech->nc <= 0)
        return MB_FAIL(f, MB_ERR_ILL_INPUT, "mb_dae_init: the DAE formulations need a mechanism "
                    "with constraints (nc > 0); without constraints use the ODE.");
    if (mech->nq <= 0 || !mech->mass || !mech->forces || !mech->phi || !mech->phi_q)
        return MB_FAIL(f, MB_ERR_ILL_INPUT, "mb_index1_init: the mechanism needs nq > 0, mass, "
                       "forces, and phi and phi_q when it has constraints.");
    ptrdiff_t nq = mech->nq, nc = mech->nc;
    ptrdiff_t n = 2 * nq + nc + (kind == MB_DAE_GGL ? nc : 0), w = 2 * nq + nc;
    f->mech = mech;
    f->kind = kind;
    f->nq = nq;
    f->nc = nc;
    f->n = n;
    f->nreg = mech->mass_reg > 0 ? (mech->mass_reg < nc ? mech->mass_reg : nc) : 0;
    int dense = !(sparse > 0 || (sparse < 0 && nq >= MB_INDEX1_SPARSE_MIN_NQ &&
                                 !mb_dae_sparse_unavailable(mech, kind)));
    mb_dae scratch;
    size_t size = layout(&(mb_carver){NULL, 0}, &scratch, nq, nc, n, w, f->nreg, dense);
    f->work = calloc(size + 1, sizeof(double));
    if (!f->work || mb_proj_init(&f->proj, mech, dense ? &f->d : NULL, dense) != MB_OK) {
        mb_dae_free(f);
        return MB_FAIL(f, MB_ERR_MEM, "mb_dae_init: out of memory.");
    }
    layout(&(mb_carver){f->work, 0}, f, nq, nc, n, w, f->nreg, dense);
    if (dense) {
        mb_mechd_init(&f->d, mech, f->dwork);
        for (ptrdiff_t i = 0; i < 2 * nq; i++) f->Mp[i + n * i] = 1.0;
    } else {
        int rc = mb_dae_sparse_init(f);  /* f->msg says why not */
        if (rc != MB_OK) {
            char msg[sizeof f->msg];
            memcpy(msg, f->msg, sizeof msg);
            mb_dae_free(f);
            memcpy(f->msg, msg, sizeof msg);
            return rc;
        }
        mb_dae_sparse_proj_la(f, &f->proj.la);
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        unsigned char ix = 1;
        if (kind == MB_DAE_INDEX3) ix = i < nq ? 1 : i < 2 * nq ? 2 : 3;
        else if (kind == MB_DAE_INDEX2 || kind == MB_DAE_GGL) ix = i < 2 * nq ? 1 : 2;
        f->index[i] = ix;
    }
    return MB_OK;
}

void mb_dae_free(mb_dae *f)
{
    mb_dae_sparse_free(f);
    mb_proj_free(&f->proj);
    free(f->work);
    f->work = NULL;
    f->mass_ok = 0;
}

void mb_dae_problem(mb_dae *f, mb_problem *p)
{
    memset(p, 0, sizeof *p);
    p->n = f->n;
    p->rhs = dae_rhs;
    p->jac = dae_jac;
    p->res = dae_res;
    p->mass = f->Mp;
    p->dae_index = f->index;
    if (f->mech->step_bound)
        p->step_bound = dae_step_bound;
    p->ctx = f;
    if (f->sp)
        mb_dae_sparse_problem(f, p);  /* rhs, linsys, mass_diag; no jac, mass, res */
}
