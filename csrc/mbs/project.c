/* Projection onto the constraint manifold (project.h). */
#include "project.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../linalg/dense.h" /* gemv */
#include "carve.h"
#include "mbs_common.h"
#include "status.h"

/* ---- the dense linear algebra: Phi_q and the scaled LU of G = Phi_q Phi_q^T ---- */

static int dense_setup(double t, const double *q, void *ctx)
{
    mb_proj *pr = ctx;
    const mb_mech *me = pr->mech;
    ptrdiff_t nq = pr->nq, nc = pr->nc, bad = 0;
    const double *P = pr->P;
    int rc = me->phi_q(t, q, pr->P, nc, me->ctx);
    if (rc != 0) return rc;
    for (ptrdiff_t a = 0; a < nc; a++)
        for (ptrdiff_t b = 0; b <= a; b++) {
            double s = 0;
            for (ptrdiff_t k = 0; k < nq; k++) s += P[a + nc * k] * P[b + nc * k];
            pr->G[a + nc * b] = pr->G[b + nc * a] = s;
        }
    if ((rc = mb_lu_factor_scaled(nc, pr->G, nc, pr->gsc, pr->ipiv, &bad)) != MB_OK)
        return MB_FAIL(pr, rc,
                       "Phi_q Phi_q^T is singular at t = %.17g (constraint row %td): redundant "
                       "constraints or a singular configuration.", t, bad);
    return MB_OK;
}

static int dense_correct(double *r, double *x, void *ctx)
{
    mb_proj *pr = ctx;
    ptrdiff_t nq = pr->nq, nc = pr->nc;
    int rc = mb_lu_solve_scaled(nc, pr->G, nc, pr->gsc, pr->ipiv, r, 1);
    if (rc != MB_OK) return rc;
    for (ptrdiff_t i = 0; i < nq; i++) {
        double s = 0;
        for (ptrdiff_t k = 0; k < nc; k++) s += pr->P[k + nc * i] * r[k];
        x[i] -= s;
    }
    return MB_OK;
}

static void dense_residual(const double *pt, const double *x, double *r, void *ctx)
{
    mb_proj *pr = ctx;
    memcpy(r, pt, (size_t)pr->nc * sizeof(double));
    mb_gemv(pr->nc, pr->nq, 1.0, pr->P, pr->nc, x, 1.0, r);
}

/* ---- set-up ---- */

static size_t layout(mb_carver *c, mb_proj *pr, ptrdiff_t nq, ptrdiff_t nc, int dense)
{
    ptrdiff_t nd = dense ? nc : 0;  /* the dense linear algebra's rows */
    pr->phi = mb_carve(c, (size_t)nc);
    pr->r = mb_carve(c, (size_t)nc);
    pr->pt = mb_carve(c, (size_t)nc);
    pr->dq = mb_carve(c, (size_t)nq);
    pr->P = mb_carve(c, (size_t)(nd * nq));
    pr->G = mb_carve(c, (size_t)(nd * nd));
    pr->gsc = mb_carve(c, (size_t)nd);
    pr->ipiv = mb_carve_int(c, (size_t)nd);
    return c->off;
}

int mb_proj_init(mb_proj *pr, const mb_mech *mech, mb_mechd *d, int dense)
{
    memset(pr, 0, sizeof *pr);
    ptrdiff_t nq = mech->nq, nc = mech->nc;
    pr->mech = mech;
    pr->d = d;
    pr->nq = nq;
    pr->nc = nc;
    pr->tol = 1e-12;
    pr->max_iter = 20;
    mb_proj scratch;
    size_t size = layout(&(mb_carver){NULL, 0}, &scratch, nq, nc, dense);
    pr->work = calloc(size + 1, sizeof(double));
    if (!pr->work)
        return MB_FAIL(pr, MB_ERR_MEM, "mb_proj_init: out of memory.");
    layout(&(mb_carver){pr->work, 0}, pr, nq, nc, dense);
    if (dense)
        pr->la = (mb_proj_la){dense_setup, dense_correct, dense_residual, pr};
    return MB_OK;
}

void mb_proj_free(mb_proj *pr)
{
    free(pr->work);
    pr->work = NULL;
}

/* ---- the projection ---- */

/* Newton on Phi(t, q) = 0 with minimum-norm corrections; *rp: |Phi| after */
static int positions(mb_proj *pr, double t, double *q, double *rp)
{
    const mb_mech *me = pr->mech;
    const mb_proj_la *la = &pr->la;
    ptrdiff_t nq = pr->nq, nc = pr->nc;
    double *phi = pr->phi, *r = pr->r, *dq = pr->dq;
    int rc;
    for (int it = 0;; it++) {
        if ((rc = me->phi(t, q, phi, me->ctx)) != 0) return rc;
        *rp = mb_norm_inf(nc, phi);
        if (!isfinite(*rp))
            return MB_FAIL(pr, MB_ERR_NONFINITE, "Phi is not finite at t = %.17g.", t);
        if (*rp <= pr->tol) return MB_OK;
        if (it >= pr->max_iter)
            return MB_FAIL(pr, MB_ERR_CONV,
                           "Projection onto Phi = 0 did not converge in %d iterations "
                           "(|Phi| = %.3e > %.3e at t = %.17g).", it, *rp, pr->tol, t);
        if ((rc = la->setup(t, q, la->ctx)) != MB_OK) return rc;
        double qn = mb_norm_inf(nq, q);
        memset(dq, 0, (size_t)nq * sizeof(double));
        memcpy(r, phi, (size_t)nc * sizeof(double));
        if ((rc = la->correct(r, dq, la->ctx)) != MB_OK) return rc;
        for (ptrdiff_t i = 0; i < nq; i++) q[i] += dq[i];
        if (mb_norm_inf(nq, dq) <= 8 * DBL_EPSILON * fmax(1.0, qn)) {  /* at round-off level */
            if ((rc = me->phi(t, q, phi, me->ctx)) != 0) return rc;
            *rp = mb_norm_inf(nc, phi);
            return MB_OK;
        }
    }
}

/* Phi_q q' + Phi_t = 0 at the projected q (linear: one correction, one refinement);
 * *rv: the residual after */
static int velocities(mb_proj *pr, double t, const double *q, double *qd, double *rv)
{
    const mb_proj_la *la = &pr->la;
    ptrdiff_t nc = pr->nc;
    double *r = pr->r, *pt = pr->pt;
    int rc;
    if ((rc = la->setup(t, q, la->ctx)) != MB_OK) return rc;
    rc = pr->d ? mb_mechd_phi_t(pr->d, t, q, pt) : pr->mech->phi_t(t, q, pt, pr->mech->ctx);
    if (rc != 0) return rc;
    for (int pass = 0; pass < 2; pass++) {
        la->residual(pt, qd, r, la->ctx);
        *rv = mb_norm_inf(nc, r);
        if (*rv <= pr->tol && pass > 0) break;
        if ((rc = la->correct(r, qd, la->ctx)) != MB_OK) return rc;
        la->residual(pt, qd, r, la->ctx);
        *rv = mb_norm_inf(nc, r);
        if (*rv <= pr->tol) break;
    }
    return MB_OK;
}

int mb_proj_run(mb_proj *pr, double t, double *q, double *qd, double *res_pos, double *res_vel)
{
    double rp = 0, rv = 0;
    int rc;
    pr->msg[0] = '\0';
    if (pr->nc > 0) {
        if ((rc = positions(pr, t, q, &rp)) != MB_OK) return rc;
        if ((rc = velocities(pr, t, q, qd, &rv)) != MB_OK) return rc;
    }
    if (res_pos) *res_pos = rp;
    if (res_vel) *res_vel = rv;
    return MB_OK;
}
