/* Derivative kernels of an mb_mech with central-difference fallbacks (mechderiv.h).
 * The difference formulas are those of index1.c: steps cbrt(eps) max(1, |x|)
 * (relative accuracy eps^(2/3)), a larger step eps^(1/5) for differences of a gamma
 * that is itself formed by differences. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "../linalg/dense.h" /* gemv */
#include "mechderiv.h"
#include "mbs_common.h"
#include "status.h"

size_t mb_mechd_work_size(ptrdiff_t nq, ptrdiff_t nc)
{
    return (size_t)(4 * nq + 5 * nc + 2 * nc * nq + 2 * nq * nq);
}

void mb_mechd_init(mb_mechd *d, const mb_mech *me, double *w)
{
    ptrdiff_t nq = me->nq, nc = me->nc;
    d->me = me;
    d->nq = nq;
    d->nc = nc;
    d->xq = w; w += nq;
    d->vq1 = w; w += nq;
    d->vq2 = w; w += nq;
    d->gs = w; w += nq;
    d->vc1 = w; w += nc;
    d->vc2 = w; w += nc;
    d->vc3 = w; w += nc;
    d->vc4 = w; w += nc;
    d->vc5 = w; w += nc;
    d->P1 = w; w += nc * nq;
    d->P2 = w; w += nc * nq;
    d->M1 = w; w += nq * nq;
    d->M2 = w;
}

int mb_mechd_phi_t(mb_mechd *d, double t, const double *q, double *pt)
{
    const mb_mech *me = d->me;
    if (d->nc == 0)
        return MB_OK;
    if (me->phi_t)
        return me->phi_t(t, q, pt, me->ctx);
    if (me->autonomous) {
        memset(pt, 0, (size_t)d->nc * sizeof(double));
        return MB_OK;
    }
    double h = mb_fd_step(t);
    int rc = me->phi(t + h, q, d->vc1, me->ctx);
    if (rc == 0) rc = me->phi(t - h, q, d->vc2, me->ctx);
    if (rc != 0) return rc;
    for (ptrdiff_t k = 0; k < d->nc; k++) pt[k] = (d->vc1[k] - d->vc2[k]) / (2 * h);
    return MB_OK;
}

int mb_mechd_gamma(mb_mechd *d, double t, const double *q, const double *qd, double *g)
{
    const mb_mech *me = d->me;
    ptrdiff_t nq = d->nq, nc = d->nc;
    int rc;
    if (nc == 0)
        return MB_OK;
    if (me->gamma)
        return me->gamma(t, q, qd, g, me->ctx);
    double scale = fmax(1.0, mb_norm_inf(nq, q)) / fmax(1.0, mb_norm_inf(nq, qd));
    if (me->phi_t) {
        double h = cbrt(DBL_EPSILON) * scale;
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double *v = sgn > 0 ? d->vc3 : d->vc4;
            for (ptrdiff_t i = 0; i < nq; i++) d->gs[i] = q[i] + sgn * h * qd[i];
            if ((rc = me->phi_q(t + sgn * h, d->gs, d->P2, nc, me->ctx)) != 0) return rc;
            if ((rc = me->phi_t(t + sgn * h, d->gs, v, me->ctx)) != 0) return rc;
            mb_gemv(nc, nq, 1.0, d->P2, nc, qd, 1.0, v);
        }
        for (ptrdiff_t k = 0; k < nc; k++) g[k] = -(d->vc3[k] - d->vc4[k]) / (2 * h);
        return MB_OK;
    }
    /* second differences at h and h/2, Richardson-extrapolated (index1.c) */
    double h = pow(DBL_EPSILON, 1.0 / 6.0) * scale;
    if ((rc = me->phi(t, q, d->vc5, me->ctx)) != 0) return rc;
    memset(g, 0, (size_t)nc * sizeof(double));
    for (int half = 0; half < 2; half++) {
        double hh = half ? 0.5 * h : h, w = (half ? -4.0 : 1.0) / (3.0 * hh * hh);
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double *v = sgn > 0 ? d->vc3 : d->vc4;
            for (ptrdiff_t i = 0; i < nq; i++) d->gs[i] = q[i] + sgn * hh * qd[i];
            if ((rc = me->phi(t + sgn * hh, d->gs, v, me->ctx)) != 0) return rc;
        }
        for (ptrdiff_t k = 0; k < nc; k++) g[k] += w * (d->vc3[k] - 2 * d->vc5[k] + d->vc4[k]);
    }
    return MB_OK;
}

/* out (rows x nq) = d kern / d x by central differences, x = q (wrt 0) or qd (wrt 1);
 * kern: forces (which 0, rows nq) or gamma (which 1, rows nc) */
static int fd_cols(mb_mechd *d, int which, double t, const double *q, const double *qd, int wrt,
                   double *out, ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    ptrdiff_t nq = d->nq, rows = which == 0 ? nq : d->nc;
    double *x = d->xq;
    /* forces: vq1/vq2; gamma: vc1/vc2 (mb_mechd_gamma's own scratch is vc3..vc5, gs, P2) */
    double *vp = which == 0 ? d->vq1 : d->vc1, *vm = which == 0 ? d->vq2 : d->vc2;
    const double *base = wrt == 0 ? q : qd;
    double step = (which == 1 && !me->gamma) ? pow(DBL_EPSILON, 0.2) : cbrt(DBL_EPSILON);
    memcpy(x, base, (size_t)nq * sizeof(double));
    for (ptrdiff_t c = 0; c < nq; c++) {
        double h = step * fmax(1.0, fabs(base[c]));
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double *v = sgn > 0 ? vp : vm;
            const double *qq = wrt == 0 ? x : q, *vv = wrt == 0 ? qd : x;
            x[c] = base[c] + sgn * h;
            int rc = which == 0 ? me->forces(t, qq, vv, v, me->ctx) : mb_mechd_gamma(d, t, qq, vv, v);
            if (rc != 0) return rc;
        }
        x[c] = base[c];
        for (ptrdiff_t r = 0; r < rows; r++) out[r + ld * c] = (vp[r] - vm[r]) / (2 * h);
    }
    return MB_OK;
}

int mb_mechd_forces_q(mb_mechd *d, double t, const double *q, const double *qd, double *out,
                      ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    return me->forces_q ? me->forces_q(t, q, qd, out, ld, me->ctx)
                        : fd_cols(d, 0, t, q, qd, 0, out, ld);
}

int mb_mechd_forces_qd(mb_mechd *d, double t, const double *q, const double *qd, double *out,
                       ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    return me->forces_qd ? me->forces_qd(t, q, qd, out, ld, me->ctx)
                         : fd_cols(d, 0, t, q, qd, 1, out, ld);
}

int mb_mechd_gamma_q(mb_mechd *d, double t, const double *q, const double *qd, double *out,
                     ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    if (d->nc == 0) return MB_OK;
    return me->gamma_q ? me->gamma_q(t, q, qd, out, ld, me->ctx)
                       : fd_cols(d, 1, t, q, qd, 0, out, ld);
}

int mb_mechd_gamma_qd(mb_mechd *d, double t, const double *q, const double *qd, double *out,
                      ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    if (d->nc == 0) return MB_OK;
    return me->gamma_qd ? me->gamma_qd(t, q, qd, out, ld, me->ctx)
                        : fd_cols(d, 1, t, q, qd, 1, out, ld);
}

/* P1 <- (Phi_q(q + h e_j) - Phi_q(q - h e_j)) / (2 h), the j-th derivative of Phi_q */
static int dphiq(mb_mechd *d, double t, const double *q, ptrdiff_t j)
{
    const mb_mech *me = d->me;
    ptrdiff_t nq = d->nq, nc = d->nc;
    double *x = d->xq, h = mb_fd_step(q[j]);
    int rc;
    memcpy(x, q, (size_t)nq * sizeof(double));
    x[j] = q[j] + h;
    if ((rc = me->phi_q(t, x, d->P1, nc, me->ctx)) != 0) return rc;
    x[j] = q[j] - h;
    if ((rc = me->phi_q(t, x, d->P2, nc, me->ctx)) != 0) return rc;
    for (ptrdiff_t l = 0; l < nc * nq; l++) d->P1[l] = (d->P1[l] - d->P2[l]) / (2 * h);
    return MB_OK;
}

int mb_mechd_phiq_x_q(mb_mechd *d, double t, const double *q, const double *x, double *out,
                      ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    ptrdiff_t nq = d->nq, nc = d->nc;
    if (nc == 0) return MB_OK;
    if (me->phiq_x_q)
        return me->phiq_x_q(t, q, x, out, ld, me->ctx);
    for (ptrdiff_t j = 0; j < nq; j++) {
        int rc = dphiq(d, t, q, j);
        if (rc != MB_OK) return rc;
        for (ptrdiff_t k = 0; k < nc; k++) {
            double s = 0;
            for (ptrdiff_t i = 0; i < nq; i++) s += d->P1[k + nc * i] * x[i];
            out[k + ld * j] = s;
        }
    }
    return MB_OK;
}

int mb_mechd_phiqT_lam_q(mb_mechd *d, double t, const double *q, const double *lam,
                         double *out, ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    ptrdiff_t nq = d->nq, nc = d->nc;
    if (nc == 0) {
        for (ptrdiff_t j = 0; j < nq; j++) memset(out + ld * j, 0, (size_t)nq * sizeof(double));
        return MB_OK;
    }
    if (me->phiqT_lam_q)
        return me->phiqT_lam_q(t, q, lam, out, ld, me->ctx);
    for (ptrdiff_t j = 0; j < nq; j++) {
        int rc = dphiq(d, t, q, j);
        if (rc != MB_OK) return rc;
        for (ptrdiff_t i = 0; i < nq; i++) {
            double s = 0;
            for (ptrdiff_t k = 0; k < nc; k++) s += d->P1[k + nc * i] * lam[k];
            out[i + ld * j] = s;
        }
    }
    return MB_OK;
}

int mb_mechd_mass_x_q(mb_mechd *d, const double *q, const double *x, double *out, ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    ptrdiff_t nq = d->nq;
    if (me->mass_constant) {
        for (ptrdiff_t j = 0; j < nq; j++) memset(out + ld * j, 0, (size_t)nq * sizeof(double));
        return MB_OK;
    }
    if (me->mass_x_q)
        return me->mass_x_q(q, x, out, ld, me->ctx);
    double *y = d->xq;
    memcpy(y, q, (size_t)nq * sizeof(double));
    for (ptrdiff_t j = 0; j < nq; j++) {
        double h = mb_fd_step(q[j]);
        int rc;
        y[j] = q[j] + h;
        if ((rc = me->mass(y, d->M1, nq, me->ctx)) != 0) return rc;
        y[j] = q[j] - h;
        if ((rc = me->mass(y, d->M2, nq, me->ctx)) != 0) return rc;
        y[j] = q[j];
        for (ptrdiff_t l = 0; l < nq * nq; l++) d->M1[l] -= d->M2[l];
        mb_gemv(nq, nq, 1.0 / (2 * h), d->M1, nq, x, 0.0, out + ld * j);
    }
    return MB_OK;
}

int mb_mechd_phi_tq(mb_mechd *d, double t, const double *q, double *out, ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    ptrdiff_t nq = d->nq, nc = d->nc;
    if (nc == 0) return MB_OK;
    if (me->autonomous) {
        for (ptrdiff_t j = 0; j < nq; j++) memset(out + ld * j, 0, (size_t)nc * sizeof(double));
        return MB_OK;
    }
    double h = mb_fd_step(t);
    int rc;
    if ((rc = me->phi_q(t + h, q, d->P1, nc, me->ctx)) != 0) return rc;
    if ((rc = me->phi_q(t - h, q, d->P2, nc, me->ctx)) != 0) return rc;
    for (ptrdiff_t j = 0; j < nq; j++)
        for (ptrdiff_t k = 0; k < nc; k++)
            out[k + ld * j] = (d->P1[k + nc * j] - d->P2[k + nc * j]) / (2 * h);
    return MB_OK;
}

int mb_mechd_forces_jac(mb_mechd *d, double t, const double *q, const double *qd, double *Qq,
                        double *Qv, ptrdiff_t ld)
{
    int rc = Qq ? mb_mechd_forces_q(d, t, q, qd, Qq, ld) : 0;
    if (rc == 0 && Qv)
        rc = mb_mechd_forces_qd(d, t, q, qd, Qv, ld);
    return rc;
}

int mb_mechd_gamma_jac(mb_mechd *d, double t, const double *q, const double *qd, double *Gq,
                       double *Gv, ptrdiff_t ld)
{
    int rc = Gq ? mb_mechd_gamma_q(d, t, q, qd, Gq, ld) : 0;
    if (rc == 0 && Gv)
        rc = mb_mechd_gamma_qd(d, t, q, qd, Gv, ld);
    return rc;
}

int mb_mechd_phiq_jacs(mb_mechd *d, double t, const double *q, const double *lam, double *T1,
                       const double *x, double *T2, const double *x3, double *T3)
{
    const mb_mech *me = d->me;
    ptrdiff_t nq = d->nq, nc = d->nc;
    void *c = me->ctx;
    int rc;
    int want1 = lam && T1, want2 = x && T2, want3 = x3 && T3;
    if (want1 && me->phiqT_lam_q && (rc = me->phiqT_lam_q(t, q, lam, T1, nq, c)) != 0) return rc;
    if (me->phiq_x_q) {
        if (want2 && (rc = me->phiq_x_q(t, q, x, T2, nc, c)) != 0) return rc;
        if (want3 && (rc = me->phiq_x_q(t, q, x3, T3, nc, c)) != 0) return rc;
    }
    if (!((want1 && !me->phiqT_lam_q) || ((want2 || want3) && !me->phiq_x_q)))
        return MB_OK;
    /* differences of Phi_q in q, one pair of evaluations per column for all three */
    double *xq = d->xq;
    memcpy(xq, q, (size_t)nq * sizeof(double));
    for (ptrdiff_t j = 0; j < nq; j++) {
        double h = mb_fd_step(q[j]), s = 1.0 / (2 * h);
        xq[j] = q[j] + h;
        if ((rc = me->phi_q(t, xq, d->P1, nc, c)) != 0) return rc;
        xq[j] = q[j] - h;
        if ((rc = me->phi_q(t, xq, d->P2, nc, c)) != 0) return rc;
        xq[j] = q[j];
        for (ptrdiff_t l = 0; l < nc * nq; l++) d->P1[l] = (d->P1[l] - d->P2[l]) * s;
        if (want1 && !me->phiqT_lam_q)
            for (ptrdiff_t i = 0; i < nq; i++) {
                double v = 0;
                for (ptrdiff_t k = 0; k < nc; k++) v += d->P1[k + nc * i] * lam[k];
                T1[i + nq * j] = v;
            }
        if (!me->phiq_x_q) {
            if (want2) mb_gemv(nc, nq, 1.0, d->P1, nc, x, 0.0, T2 + nc * j);
            if (want3) mb_gemv(nc, nq, 1.0, d->P1, nc, x3, 0.0, T3 + nc * j);
        }
    }
    return MB_OK;
}

int mb_mechd_mass_jac_add(mb_mechd *d, const double *q, const double *a, double alpha,
                          double *out, ptrdiff_t ld)
{
    const mb_mech *me = d->me;
    ptrdiff_t nq = d->nq;
    int rc;
    if (me->mass_constant)
        return MB_OK;
    if (me->mass_x_q) {  /* the mechanism's kernel (spatial models: analytic) */
        if ((rc = me->mass_x_q(q, a, d->M1, nq, me->ctx)) != 0) return rc;
        for (ptrdiff_t j = 0; j < nq; j++)
            for (ptrdiff_t i = 0; i < nq; i++) out[i + ld * j] += alpha * d->M1[i + nq * j];
        return MB_OK;
    }
    double *x = d->xq;
    memcpy(x, q, (size_t)nq * sizeof(double));
    for (ptrdiff_t j = 0; j < nq; j++) {
        double h = mb_fd_step(q[j]);
        x[j] = q[j] + h;
        if ((rc = me->mass(x, d->M1, nq, me->ctx)) != 0) return rc;
        x[j] = q[j] - h;
        if ((rc = me->mass(x, d->M2, nq, me->ctx)) != 0) return rc;
        x[j] = q[j];
        for (ptrdiff_t l = 0; l < nq * nq; l++) d->M1[l] -= d->M2[l];
        mb_gemv(nq, nq, alpha / (2 * h), d->M1, nq, a, 1.0, out + ld * j);
    }
    return MB_OK;
}
