/* Assembly of the planar model: loops over bodies, joints and forces, gathering
 * each element's pair state and scattering its local blocks into the global arrays
 * at the element's row offset (joint->row) and the bodies' column offsets 3 i, 3 j
 * (the ground's columns are dropped).  Also mb_planar_mech(), which presents the
 * model as an mb_mech (mech.h).
 *
 * Global layout: q = (x_0, y_0, phi_0, x_1, ...), nq = 3 nb; Phi has nc rows.
 * Column-major matrices with leading dimension ld; every kernel overwrites its
 * whole output block (rows x cols), so callers may pass sub-blocks of larger arrays.
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include "assemble.h"
#include "status.h"

/* cos, sin of every body's angle (cs[2 b], cs[2 b + 1]): the trigonometry of one
 * evaluation of the fused kernels, once per body */
static void body_trig(const mb_planar_model *m, const double *q, double *cs)
{
    for (int b = 0; b < m->nb; b++) {
        double th = q[3 * b + 2];
        cs[2 * b] = cos(th);
        cs[2 * b + 1] = sin(th);
    }
}

/* global column of local column c of pair (i, j); -1 for the ground */
static int gcol(int i, int j, int c)
{
    if (c < 3) return i < 0 ? -1 : 3 * i + c;
    return j < 0 ? -1 : 3 * j + c - 3;
}

static void zero_block(ptrdiff_t rows, ptrdiff_t cols, double *A, ptrdiff_t ld)
{
    if (rows <= 0) return;  /* (A may be NULL then: no constraints) */
    for (ptrdiff_t c = 0; c < cols; c++) memset(A + c * ld, 0, (size_t)rows * sizeof(double));
}

/* out[row0 + r, :] = local rows L[r][0..5] (out zeroed before) */
static void scatter_rows(int nr, const double L[][6], int i, int j, int row0, double *out,
                         ptrdiff_t ld)
{
    for (int c = 0; c < 6; c++) {
        int gc = gcol(i, j, c);
        if (gc < 0) continue;
        double *col = out + row0 + ld * gc;
        for (int r = 0; r < nr; r++) col[r] += L[r][c];
    }
}

/* out[gr(a), gc(b)] += L[a][b] */
static void scatter_66(const double L[6][6], int i, int j, double *out, ptrdiff_t ld)
{
    int g[6];
    for (int c = 0; c < 6; c++) g[c] = gcol(i, j, c);
    for (int b = 0; b < 6; b++) {
        if (g[b] < 0) continue;
        double *col = out + ld * g[b];
        for (int a = 0; a < 6; a++)
            if (g[a] >= 0) col[g[a]] += L[a][b];
    }
}

/* out[gr(a), gc(b)] += L[a][b] for a, b in mask (L is zero outside) */
static void scatter_66m(const double L[6][6], unsigned mask, int i, int j, double *out,
                        ptrdiff_t ld)
{
    int g[6], idx[6], n = 0;
    for (int c = 0; c < 6; c++)
        if ((mask >> c) & 1u) {
            g[n] = gcol(i, j, c);
            idx[n] = c;
            n += g[n] >= 0;
        }
    for (int v = 0; v < n; v++) {
        double *col = out + ld * g[v];
        for (int u = 0; u < n; u++) col[g[u]] += L[idx[u]][idx[v]];
    }
}

/* evaluate joint k at (t, q, qd) with the pair state gathered from (q, v) (rotations
 * from cs when given, see pair_gather) */
static int joint_at(const mb_planar_model *m, int k, double t, const double *q, const double *v,
                    unsigned what, mb_joint_local *L, const double *cs)
{
    const mb_planar_joint *J = &m->joints[k];
    mb_pair p;
    int rc = mb_pair_gather_ex(m, J->i, J->j, q, v, &p, 1, cs);
    if (rc != MB_OK)
        return rc;
    if ((rc = mb_joint_eval(J, t, &p, what, L)) != MB_OK)
        return rc;
    if (J->row < 0 || J->row + L->nr > m->nc)
        return MB_ERR_ILL_INPUT;
    return MB_OK;
}

int mb_planar_phi(double t, const double *q, double *phi, void *ctx)
{
    const mb_planar_model *m = ctx;
    mb_joint_local L;
    for (int k = 0; k < m->nj; k++) {
        int rc = joint_at(m, k, t, q, NULL, MB_JL_PHI, &L, NULL);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < L.nr; r++) phi[m->joints[k].row + r] = L.phi[r];
    }
    return MB_OK;
}

int mb_planar_phi_q(double t, const double *q, double *Pq, ptrdiff_t ld, void *ctx)
{
    const mb_planar_model *m = ctx;
    mb_joint_local L;
    zero_block(m->nc, 3 * (ptrdiff_t)m->nb, Pq, ld);
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        int rc = joint_at(m, k, t, q, NULL, MB_JL_PQ, &L, NULL);
        if (rc != MB_OK) return rc;
        scatter_rows(L.nr, L.Pq, J->i, J->j, J->row, Pq, ld);
    }
    return MB_OK;
}

int mb_planar_phi_t(double t, const double *q, double *pt, void *ctx)
{
    const mb_planar_model *m = ctx;
    memset(pt, 0, (size_t)m->nc * sizeof(double));
    mb_joint_local L;
    for (int k = 0; k < m->nj; k++) {
        int type = m->joints[k].type;
        if (type != MB_JOINT_DRIVER_COORD && type != MB_JOINT_DRIVER_ANGLE) {
            if (mb_joint_rows(type) == 0) return MB_ERR_ILL_INPUT;
            continue;  /* scleronomic */
        }
        int rc = joint_at(m, k, t, q, NULL, MB_JL_PT, &L, NULL);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < L.nr; r++) pt[m->joints[k].row + r] = L.pt[r];
    }
    return MB_OK;
}

int mb_planar_gamma(double t, const double *q, const double *qd, double *g, void *ctx)
{
    const mb_planar_model *m = ctx;
    mb_joint_local L;
    for (int k = 0; k < m->nj; k++) {
        int rc = joint_at(m, k, t, q, qd, MB_JL_GAMMA, &L, NULL);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < L.nr; r++) g[m->joints[k].row + r] = L.gamma[r];
    }
    return MB_OK;
}

int mb_planar_phiq_x_q(double t, const double *q, const double *x,
                       double *out, ptrdiff_t ld, void *ctx)
{
    const mb_planar_model *m = ctx;
    mb_joint_local L;
    double rows[3][6];
    zero_block(m->nc, 3 * (ptrdiff_t)m->nb, out, ld);
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        /* gather x like a velocity: p.qd holds the local x */
        mb_pair p;
        int rc = mb_pair_gather(m, J->i, J->j, q, x, &p);
        if (rc != MB_OK) return rc;
        if ((rc = mb_joint_eval(J, t, &p, MB_JL_HESS, &L)) != MB_OK) return rc;
        if (J->row < 0 || J->row + L.nr > m->nc) return MB_ERR_ILL_INPUT;
        for (int r = 0; r < L.nr; r++)
            for (int a = 0; a < 6; a++) {
                double s = 0;
                for (int b = 0; b < 6; b++) s += L.H[r][a][b] * p.qd[b];
                rows[r][a] = s;
            }
        scatter_rows(L.nr, rows, J->i, J->j, J->row, out, ld);
    }
    return MB_OK;
}

int mb_planar_phiqT_lam_q(double t, const double *q, const double *lam,
                          double *out, ptrdiff_t ld, void *ctx)
{
    const mb_planar_model *m = ctx;
    mb_joint_local L;
    double S[6][6];
    ptrdiff_t nq = 3 * (ptrdiff_t)m->nb;
    zero_block(nq, nq, out, ld);
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        int rc = joint_at(m, k, t, q, NULL, MB_JL_HESS, &L, NULL);
        if (rc != MB_OK) return rc;
        memset(S, 0, sizeof S);
        for (int r = 0; r < L.nr; r++) {
            double lr = lam[J->row + r];
            if (lr == 0) continue;
            for (int a = 0; a < 6; a++)
                for (int b = 0; b < 6; b++) S[a][b] += lr * L.H[r][a][b];
        }
        scatter_66(S, J->i, J->j, out, ld);
    }
    return MB_OK;
}

int mb_planar_gamma_q(double t, const double *q, const double *qd,
                      double *out, ptrdiff_t ld, void *ctx)
{
    const mb_planar_model *m = ctx;
    mb_joint_local L;
    zero_block(m->nc, 3 * (ptrdiff_t)m->nb, out, ld);
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        int rc = joint_at(m, k, t, q, qd, MB_JL_GQ, &L, NULL);
        if (rc != MB_OK) return rc;
        scatter_rows(L.nr, L.gq, J->i, J->j, J->row, out, ld);
    }
    return MB_OK;
}

int mb_planar_gamma_qd(double t, const double *q, const double *qd,
                       double *out, ptrdiff_t ld, void *ctx)
{
    const mb_planar_model *m = ctx;
    mb_joint_local L;
    zero_block(m->nc, 3 * (ptrdiff_t)m->nb, out, ld);
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        int rc = joint_at(m, k, t, q, qd, MB_JL_GQD, &L, NULL);
        if (rc != MB_OK) return rc;
        scatter_rows(L.nr, L.gqd, J->i, J->j, J->row, out, ld);
    }
    return MB_OK;
}

int mb_planar_mass(const double *q, double *M, ptrdiff_t ld, void *ctx)
{
    const mb_planar_model *m = ctx;
    ptrdiff_t nq = 3 * (ptrdiff_t)m->nb;
    zero_block(nq, nq, M, ld);
    for (int b = 0; b < m->nb; b++) {
        ptrdiff_t o = 3 * (ptrdiff_t)b;
        M[o + ld * o] = m->body[2 * b];
        M[o + 1 + ld * (o + 1)] = m->body[2 * b];
        M[o + 2 + ld * (o + 2)] = m->body[2 * b + 1];
    }
    return MB_OK;
}

/* pair force element k (rotations from cs when given, see pair_gather) */
static int force_at(const mb_planar_model *m, int k, double t, const double *q, const double *qd,
                    unsigned what, mb_force_local *L, const double *cs)
{
    const mb_planar_force *F = &m->forces[k];
    mb_pair p;
    /* an RSDA acts on the angles alone: no trigonometry */
    int rc = mb_pair_gather_ex(m, F->i, F->j, q, qd, &p, F->type != MB_FORCE_RSDA, cs);
    if (rc != MB_OK) return rc;
    return mb_force_eval(F, t, &p, what, L);
}

static int check_generalized(const mb_planar_model *m, const mb_planar_force *F)
{
    return (F->coord >= 0 && F->coord < 3 * m->nb) ? MB_OK : MB_ERR_ILL_INPUT;
}

static int forces_eval(const mb_planar_model *m, double t, const double *q, const double *qd,
                       double *Q, const double *cs)
{
    mb_force_local L;
    for (int b = 0; b < m->nb; b++) {  /* gravity */
        Q[3 * b] = m->body[2 * b] * m->g[0];
        Q[3 * b + 1] = m->body[2 * b] * m->g[1];
        Q[3 * b + 2] = 0;
    }
    for (int k = 0; k < m->nf; k++) {
        const mb_planar_force *F = &m->forces[k];
        if (F->type == MB_FORCE_GENERALIZED) {
            if (check_generalized(m, F) != MB_OK) return MB_ERR_ILL_INPUT;
            double f;
            mb_timefn_eval(&F->fa, t, &f, NULL, NULL);
            Q[F->coord] += f;
            continue;
        }
        int rc = force_at(m, k, t, q, qd, MB_FL_Q, &L, cs);
        if (rc != MB_OK) return rc;
        for (int c = 0; c < 6; c++) {
            int gc = gcol(F->i, F->j, c);
            if (gc >= 0) Q[gc] += L.Q[c];
        }
    }
    if (m->extra)
        return m->extra(t, q, qd, Q, m->extra_ctx);
    return MB_OK;
}

int mb_planar_forces(double t, const double *q, const double *qd, double *Q, void *ctx)
{
    const mb_planar_model *m = ctx;
    return forces_eval(m, t, q, qd, Q, NULL);
}

/* central differences of the extra (Python) forces with respect to q (wrt = 0)
 * or qd (wrt = 1), added into out (nq x nq, ld); the slow path */
static int extra_fd(const mb_planar_model *m, double t, const double *q, const double *qd, int wrt,
                    double *out, ptrdiff_t ld)
{
    ptrdiff_t nq = 3 * (ptrdiff_t)m->nb;
    double buf[4 * nq + 1];  /* VLA: nq is small; keeps the kernel allocation-free */
    double *x = buf, *Qp = buf + nq, *Qm = buf + 2 * nq, *qd0 = buf + 3 * nq;
    const double *base = wrt == 0 ? q : qd;
    for (ptrdiff_t c = 0; c < nq; c++) qd0[c] = qd[c];
    memcpy(x, base, (size_t)nq * sizeof(double));
    for (ptrdiff_t c = 0; c < nq; c++) {
        double h = cbrt(DBL_EPSILON) * fmax(1.0, fabs(base[c]));
        int rc;
        memset(Qp, 0, (size_t)nq * sizeof(double));
        memset(Qm, 0, (size_t)nq * sizeof(double));
        x[c] = base[c] + h;
        rc = m->extra(t, wrt == 0 ? x : q, wrt == 0 ? qd0 : x, Qp, m->extra_ctx);
        if (rc != 0) return rc;
        x[c] = base[c] - h;
        rc = m->extra(t, wrt == 0 ? x : q, wrt == 0 ? qd0 : x, Qm, m->extra_ctx);
        if (rc != 0) return rc;
        x[c] = base[c];
        for (ptrdiff_t r = 0; r < nq; r++) out[r + ld * c] += (Qp[r] - Qm[r]) / (2 * h);
    }
    return MB_OK;
}

/* Qq = dQ/dq and Qv = dQ/dqd (nq x nq, ld; either may be NULL), one evaluation per
 * element (rotations from cs when given) */
static int forces_deriv(const mb_planar_model *m, double t, const double *q, const double *qd,
                        double *Qq, double *Qv, ptrdiff_t ld, const double *cs)
{
    mb_force_local L;
    ptrdiff_t nq = 3 * (ptrdiff_t)m->nb;
    unsigned what = (Qq ? MB_FL_QQ : 0u) | (Qv ? MB_FL_QQD : 0u);
    if (Qq) zero_block(nq, nq, Qq, ld);
    if (Qv) zero_block(nq, nq, Qv, ld);
    for (int k = 0; k < m->nf; k++) {
        const mb_planar_force *F = &m->forces[k];
        if (F->type == MB_FORCE_GENERALIZED) {
            if (check_generalized(m, F) != MB_OK) return MB_ERR_ILL_INPUT;
            continue;  /* depends on t only */
        }
        int rc = force_at(m, k, t, q, qd, what, &L, cs);
        if (rc != MB_OK) return rc;
        if (Qq) scatter_66m(L.Qq, L.mask, F->i, F->j, Qq, ld);
        if (Qv) scatter_66m(L.Qqd, L.mask, F->i, F->j, Qv, ld);
    }
    int rc = MB_OK;
    if (m->extra && Qq) rc = extra_fd(m, t, q, qd, 0, Qq, ld);
    if (m->extra && Qv && rc == MB_OK) rc = extra_fd(m, t, q, qd, 1, Qv, ld);
    return rc;
}

int mb_planar_forces_q(double t, const double *q, const double *qd,
                       double *Qq, ptrdiff_t ld, void *ctx)
{
    const mb_planar_model *m = ctx;
    return forces_deriv(m, t, q, qd, Qq, NULL, ld, NULL);
}

int mb_planar_forces_qd(double t, const double *q, const double *qd,
                        double *Qv, ptrdiff_t ld, void *ctx)
{
    const mb_planar_model *m = ctx;
    return forces_deriv(m, t, q, qd, NULL, Qv, ld, NULL);
}

/* ---- fused kernels (mech.h fused_qpg, fused_lin): one pass, trigonometry once per body ---- */

ptrdiff_t mb_planar_fused_work(const mb_planar_model *m)
{
    return 2 * (ptrdiff_t)m->nb;
}

int mb_planar_qpg(double t, const double *q, const double *qd,
                  double *Q, double *Pq, ptrdiff_t ld, double *g, double *work, void *ctx)
{
    const mb_planar_model *m = ctx;
    mb_joint_local L;
    body_trig(m, q, work);
    int rc = forces_eval(m, t, q, qd, Q, work);
    if (rc != MB_OK) return rc;
    zero_block(m->nc, 3 * (ptrdiff_t)m->nb, Pq, ld);
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        if ((rc = joint_at(m, k, t, q, qd, MB_JL_PQ | MB_JL_GAMMA, &L, work)) != MB_OK) return rc;
        scatter_rows(L.nr, L.Pq, J->i, J->j, J->row, Pq, ld);
        for (int r = 0; r < L.nr; r++) g[J->row + r] = L.gamma[r];
    }
    return MB_OK;
}

int mb_planar_lin(double t, const double *q, const double *qd,
                  const double *a, const double *lam, double *Rq, double *Rv, ptrdiff_t ld,
                  double *work, void *ctx)
{
    const mb_planar_model *m = ctx;
    mb_joint_local L;
    ptrdiff_t nq = 3 * (ptrdiff_t)m->nb;
    body_trig(m, q, work);
    /* the force blocks zero the top rows; the constraint rows are zeroed here */
    int rc = forces_deriv(m, t, q, qd, Rq, Rv, ld, work);
    if (rc != MB_OK) return rc;
    zero_block(m->nc, nq, Rq + nq, ld);
    zero_block(m->nc, nq, Rv + nq, ld);
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        rc = joint_at(m, k, t, q, qd, MB_JL_HESS | MB_JL_GQ | MB_JL_GQD, &L, work);
        if (rc != MB_OK) return rc;
        /* - (Phi_q^T lam)_q = - sum_r lam_r H_r;  gamma_q - (Phi_q a)_q = gq - H a;
         * H, gq and gqd vanish outside the joint's hmask */
        double al[6];
        int idx[6], gi[6], n = 0;
        for (int c = 0; c < 6; c++) {
            if (!((L.hmask >> c) & 1u)) continue;
            int gc = gcol(J->i, J->j, c);
            if (gc < 0) continue;  /* the ground's columns are dropped (and its a is 0) */
            idx[n] = c;
            gi[n] = gc;
            al[n++] = a[gc];       /* a gathered like a velocity */
        }
        for (int v = 0; v < n; v++) {
            int cv = idx[v];
            double *colq = Rq + ld * gi[v], *colv = Rv + ld * gi[v];
            for (int u = 0; u < n; u++) {
                double s = 0;
                for (int r = 0; r < L.nr; r++) s += lam[J->row + r] * L.H[r][idx[u]][cv];
                colq[gi[u]] -= s;
            }
            for (int r = 0; r < L.nr; r++) {
                double s = 0;
                for (int u = 0; u < n; u++) s += L.H[r][cv][idx[u]] * al[u];
                colq[nq + J->row + r] += L.gq[r][cv] - s;
                colv[nq + J->row + r] += L.gqd[r][cv];
            }
        }
    }
    return MB_OK;
}

int mb_planar_energy(double t, const double *q, const double *qd,
                     double *kinetic, double *potential, void *ctx)
{
    const mb_planar_model *m = ctx;
    double T = 0, V = 0;
    mb_force_local L;
    for (int b = 0; b < m->nb; b++) {
        const double *v = qd + 3 * b, *r = q + 3 * b;
        double mass = m->body[2 * b], J = m->body[2 * b + 1];
        T += 0.5 * (mass * (v[0] * v[0] + v[1] * v[1]) + J * v[2] * v[2]);
        V -= mass * (m->g[0] * r[0] + m->g[1] * r[1]);
    }
    for (int k = 0; k < m->nf; k++) {
        if (!mb_force_is_pair(m->forces[k].type)) continue;
        int rc = force_at(m, k, t, q, qd, MB_FL_V, &L, NULL);
        if (rc != MB_OK) return rc;
        V += L.V;
    }
    if (kinetic) *kinetic = T;
    if (potential) *potential = V;
    return MB_OK;
}

int mb_planar_contact_gaps(const mb_planar_model *m, const double *q, double *psi)
{
    int n = 0;
    for (int k = 0; k < m->nf; k++) {
        const mb_planar_force *F = &m->forces[k];
        if (!mb_force_is_contact(F->type)) continue;
        mb_pair p;
        int rc = mb_pair_gather(m, F->i, F->j, q, NULL, &p);
        if (rc != MB_OK) return rc;
        psi[n++] = mb_contact_gap(F, &p);
    }
    return MB_OK;
}

int mb_planar_step_bound(double t, const double *q, const double *qd,
                         const double *qdd, double *h_max, void *ctx)
{
    const mb_planar_model *m = ctx;
    (void)t;
    double h = INFINITY;
    for (int k = 0; k < m->nf; k++) {
        const mb_planar_force *F = &m->forces[k];
        if (!mb_force_is_contact(F->type)) continue;
        mb_pair p;
        int rc = mb_pair_gather(m, F->i, F->j, q, qd, &p);
        if (rc != MB_OK) return rc;
        double acc[6];
        for (int a = 0; a < 3; a++) {
            acc[a] = F->i >= 0 ? qdd[3 * F->i + a] : 0.0;
            acc[3 + a] = F->j >= 0 ? qdd[3 * F->j + a] : 0.0;
        }
        double hk = mb_contact_step_bound(F, &p, acc);
        if (hk < h) h = hk;
    }
    *h_max = h;
    return MB_OK;
}

/* ---- the model as an mb_mech ---- */

static int timefn_constant(const mb_timefn *f)
{
    return f->c1 == 0.0 && f->c2 == 0.0 && f->a == 0.0;
}

int mb_planar_autonomous(const mb_planar_model *model)
{
    if (model->extra)
        return 0;  /* the user's Python forces may depend on t */
    for (int k = 0; k < model->nj; k++) {
        const mb_planar_joint *J = &model->joints[k];
        if ((J->type == MB_JOINT_DRIVER_COORD || J->type == MB_JOINT_DRIVER_ANGLE) &&
            !timefn_constant(&J->f))
            return 0;
    }
    for (int k = 0; k < model->nf; k++) {
        const mb_planar_force *F = &model->forces[k];
        if ((F->type == MB_FORCE_TSDA || F->type == MB_FORCE_GENERALIZED) &&
            !timefn_constant(&F->fa))
            return 0;
    }
    return 1;
}

void mb_planar_mech(const mb_planar_model *model, mb_mech *mech)
{
    memset(mech, 0, sizeof *mech);
    mech->nq = 3 * (ptrdiff_t)model->nb;
    mech->nc = model->nc;
    mech->mass_constant = 1;
    mech->ctx = (void *)model;  /* kernels only read it */
    mech->mass = mb_planar_mass;
    mech->forces = mb_planar_forces;
    mech->phi = mb_planar_phi;
    mech->phi_q = mb_planar_phi_q;
    mech->phi_t = mb_planar_phi_t;
    mech->gamma = mb_planar_gamma;
    mech->forces_q = mb_planar_forces_q;
    mech->forces_qd = mb_planar_forces_qd;
    mech->phiq_x_q = mb_planar_phiq_x_q;
    mech->phiqT_lam_q = mb_planar_phiqT_lam_q;
    mech->gamma_q = mb_planar_gamma_q;
    mech->gamma_qd = mb_planar_gamma_qd;
    mech->energy = mb_planar_energy;
    mech->fused_work = mb_planar_fused_work(model);
    mech->fused_qpg = mb_planar_qpg;
    mech->fused_lin = mb_planar_lin;
    mech->autonomous = mb_planar_autonomous(model);
    mech->sparse = model->extra ? NULL : &mb_planar_sparse;  /* assemble_sparse.c */
    /* only a model with contacts has something to bound */
    for (int k = 0; k < model->nf; k++)
        if (mb_force_is_contact(model->forces[k].type))
            mech->step_bound = mb_planar_step_bound;
}
