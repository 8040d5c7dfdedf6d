/* Spatial model: Euler-parameter kinematics, the constraint kernels (the primitives of
 * RN section 3 and their derivatives up to third order: spatial_con.c), the model's
 * checks and the model as an mb_mech (spatial.h).
 *
 * Kinematics.  A(p) s = (p^T K_x(s) p, p^T K_y(s) p, p^T K_z(s) p) with
 * K_c(s) = sum_d N_cd s_d, A_cd = p^T N_cd p (the entries of A = E G^T):
 *   N_11 = diag(1, 1, -1, -1), N_22 = diag(1, -1, 1, -1), N_33 = diag(1, -1, -1, 1),
 *   N_12 = [(1,2) 1, (0,3) -1], N_21 = [(1,2) 1, (0,3) +1],
 *   N_13 = [(1,3) 1, (0,2) +1], N_31 = [(1,3) 1, (0,2) -1],
 *   N_23 = [(2,3) 1, (0,1) -1], N_32 = [(2,3) 1, (0,1) +1]
 * ((a,b) v: entries (a,b) and (b,a) equal v).
 *
 * A constraint row phi(ql, t) of an element carries phi, g = phi_q, H = phi_qq, the
 * direction quantities of spatial_elem.h for w = q' (or x), and the time terms
 * pt = phi_t, ptt = phi_tt, gt = phi_qt, gtt = phi_qtt, Htw = (phi_qt w)_q; then
 *   gamma    = -w^T H w - 2 gt . w - ptt                    (w = q')
 *   gamma_q  = -T - 2 Htw - gtt,   gamma_q' = -2 H w - 2 gt
 *   (Phi_q x)_q = H x,   (Phi_q^T lam)_q = sum_r lam_r H_r.
 * Only MB_SC_ANGLE has phi_qt != 0 (its coefficients cos f(t), sin f(t)); the other
 * rows subtract a function of t (f, or f^2 / 2 for the distance).
 *
 * Mass (per body): M = diag(m I3, 4 G^T J' G).  With u = J' G(p) x_p,
 *   (M x)_q   = 4 L(u) - 4 G^T J' G(x_p)   in the p-block,
 * where G(a)^T w = L(w) a, L(w) = [0 -w^T; w -w~] (4 x 4), G(a) b = -G(b) a. */
#include <math.h>
#include <string.h>
#include "spatial_elem.h"
#include "status.h"

/* ------------------------------------------------------------------ assembly */

/* out[row0 + r, gcol(c)] += L[r][c] for one local row vector */
static void scatter_row(const double L[SP_NL], int i, int j, ptrdiff_t row, double *out,
                        ptrdiff_t ld)
{
    for (int c = 0; c < SP_NL; c++) {
        int gc = sp_gcol(i, j, c);
        if (gc >= 0) out[row + ld * gc] += L[c];
    }
}

int mb_spatial_phi(double t, const double *q, double *phi, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sp_crow L[3];
    sp_pair p;
    int nr;
    for (int b = 0; b < m->nb; b++) {
        const double *pp = q + 7 * b + 3;
        phi[b] = pp[0] * pp[0] + pp[1] * pp[1] + pp[2] * pp[2] + pp[3] * pp[3] - 1.0;
    }
    for (int k = 0; k < m->ncon; k++) {
        int rc = sp_con_at(m, k, t, q, NULL, SP_PHI, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) phi[m->cons[k].row + r] = L[r].r.phi;
    }
    return MB_OK;
}

int mb_spatial_phi_q(double t, const double *q, double *Pq, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sp_crow L[3];
    sp_pair p;
    int nr;
    sp_zero_block(m->nc, 7 * (ptrdiff_t)m->nb, Pq, ld);
    for (int b = 0; b < m->nb; b++)
        for (int a = 0; a < 4; a++) Pq[b + ld * (7 * b + 3 + a)] = 2 * q[7 * b + 3 + a];
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = sp_con_at(m, k, t, q, NULL, SP_G, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) scatter_row(L[r].r.g, C->i, C->j, C->row + r, Pq, ld);
    }
    return MB_OK;
}

int mb_spatial_phi_t(double t, const double *q, double *pt, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sp_crow L[3];
    sp_pair p;
    int nr;
    memset(pt, 0, (size_t)m->nc * sizeof(double));
    for (int k = 0; k < m->ncon; k++) {
        int rc = sp_con_at(m, k, t, q, NULL, SP_PHI, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) pt[m->cons[k].row + r] = L[r].pt;
    }
    return MB_OK;
}

int mb_spatial_gamma(double t, const double *q, const double *qd,
                     double *g, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sp_crow L[3];
    sp_pair p;
    int nr;
    for (int b = 0; b < m->nb; b++) {
        const double *v = qd + 7 * b + 3;
        g[b] = -2 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
    }
    for (int k = 0; k < m->ncon; k++) {
        int rc = sp_con_at(m, k, t, q, qd, SP_G | SP_W, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) {
            double gw = 0;
            for (int c = 0; c < SP_NL; c++) gw += L[r].gt[c] * p.w[c];
            g[m->cons[k].row + r] = -L[r].r.wHw - 2 * gw - L[r].ptt;
        }
    }
    return MB_OK;
}

int mb_spatial_phiq_x_q(double t, const double *q, const double *x,
                        double *out, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sp_crow L[3];
    sp_pair p;
    int nr;
    sp_zero_block(m->nc, 7 * (ptrdiff_t)m->nb, out, ld);
    for (int b = 0; b < m->nb; b++)
        for (int a = 0; a < 4; a++) out[b + ld * (7 * b + 3 + a)] = 2 * x[7 * b + 3 + a];
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = sp_con_at(m, k, t, q, x, SP_G | SP_W, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) scatter_row(L[r].r.Hw, C->i, C->j, C->row + r, out, ld);
    }
    return MB_OK;
}

int mb_spatial_phiqT_lam_q(double t, const double *q,
                           const double *lam, double *out, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sp_crow L[3];
    sp_pair p;
    int nr;
    ptrdiff_t nq = 7 * (ptrdiff_t)m->nb;
    sp_zero_block(nq, nq, out, ld);
    for (int b = 0; b < m->nb; b++)
        for (int a = 0; a < 4; a++) {
            ptrdiff_t c = 7 * b + 3 + a;
            out[c + ld * c] = 2 * lam[b];
        }
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = sp_con_at(m, k, t, q, NULL, SP_H, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) {
            double lr = lam[C->row + r];
            if (lr == 0) continue;
            for (int b = 0; b < SP_NL; b++) {
                int gb = sp_gcol(C->i, C->j, b);
                if (gb < 0) continue;
                for (int a = 0; a < SP_NL; a++) {
                    int ga = sp_gcol(C->i, C->j, a);
                    if (ga >= 0) out[ga + ld * gb] += lr * L[r].r.H[a][b];
                }
            }
        }
    }
    return MB_OK;
}

int mb_spatial_gamma_q(double t, const double *q, const double *qd,
                       double *out, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sp_crow L[3];
    sp_pair p;
    int nr;
    double row[SP_NL];
    sp_zero_block(m->nc, 7 * (ptrdiff_t)m->nb, out, ld);  /* normalization rows: 0 */
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = sp_con_at(m, k, t, q, qd, SP_G | SP_W | SP_T, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) {
            for (int c = 0; c < SP_NL; c++)
                row[c] = -L[r].r.T[c] - 2 * L[r].Htw[c] - L[r].gtt[c];
            scatter_row(row, C->i, C->j, C->row + r, out, ld);
        }
    }
    return MB_OK;
}

int mb_spatial_gamma_qd(double t, const double *q, const double *qd,
                        double *out, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sp_crow L[3];
    sp_pair p;
    int nr;
    double row[SP_NL];
    sp_zero_block(m->nc, 7 * (ptrdiff_t)m->nb, out, ld);
    for (int b = 0; b < m->nb; b++)
        for (int a = 0; a < 4; a++) out[b + ld * (7 * b + 3 + a)] = -4 * qd[7 * b + 3 + a];
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = sp_con_at(m, k, t, q, qd, SP_G | SP_W, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) {
            for (int c = 0; c < SP_NL; c++) row[c] = -2 * L[r].r.Hw[c] - 2 * L[r].gt[c];
            scatter_row(row, C->i, C->j, C->row + r, out, ld);
        }
    }
    return MB_OK;
}

/* ------------------------------------------------------------------ checks, mech */

static int all_finite(const double *v, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

static int timefn_finite(const mb_timefn *f)
{
    const double v[6] = {f->c0, f->c1, f->c2, f->a, f->w, f->psi};
    return all_finite(v, 6);
}

int mb_spatial_check(const mb_spatial_model *m)
{
    if (m->nb < 1 || !m->body || !all_finite(m->body, 7 * m->nb) || !all_finite(m->g, 3))
        return MB_ERR_ILL_INPUT;
    for (int b = 0; b < m->nb; b++)
        if (!(m->body[7 * b] > 0)) return MB_ERR_ILL_INPUT;
    int rows = m->nb;
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int nr = mb_spatial_con_rows(C->type);
        if (nr == 0 || C->i < -1 || C->i >= m->nb || C->j < -1 || C->j >= m->nb ||
            C->row < m->nb || C->row + nr > m->nc)
            return MB_ERR_ILL_INPUT;
        if (!all_finite(C->ai, 3) || !all_finite(C->bi, 3) || !all_finite(C->aj, 3) ||
            !all_finite(C->si, 3) || !all_finite(C->sj, 3) || !timefn_finite(&C->f))
            return MB_ERR_ILL_INPUT;
        rows += nr;
    }
    if (rows != m->nc) return MB_ERR_ILL_INPUT;
    for (int k = 0; k < m->nf; k++) {
        const mb_spatial_force *F = &m->forces[k];
        if (F->type < MB_SF_TSDA || F->type > MB_SF_TIRE || F->i < -1 || F->i >= m->nb ||
            F->j < -1 || F->j >= m->nb || (F->type == MB_SF_TIRE && F->i < 0))
            return MB_ERR_ILL_INPUT;
        const double v[7] = {F->k, F->c, F->L0, F->z0, F->bump_x, F->bump_r, F->wheel_r};
        if (!all_finite(F->si, 3) || !all_finite(F->sj, 3) || !all_finite(F->ai, 3) ||
            !all_finite(F->bi, 3) || !all_finite(F->aj, 3) || !all_finite(F->bj, 3) ||
            !all_finite(v, 7) || !timefn_finite(&F->fa))
            return MB_ERR_ILL_INPUT;
    }
    for (int k = 0; k < m->ncb; k++)
        if (m->cb[k].body < 0 || m->cb[k].body >= m->nb || !m->cb[k].fn) return MB_ERR_ILL_INPUT;
    return MB_OK;
}

static int timefn_constant(const mb_timefn *f)
{
    return f->c1 == 0.0 && f->c2 == 0.0 && f->a == 0.0;
}

int mb_spatial_autonomous(const mb_spatial_model *m)
{
    if (m->ncb > 0) return 0;  /* callbacks may depend on t */
    for (int k = 0; k < m->ncon; k++)
        if (!timefn_constant(&m->cons[k].f)) return 0;
    for (int k = 0; k < m->nf; k++)
        if ((m->forces[k].type == MB_SF_TSDA || m->forces[k].type == MB_SF_RSDA) &&
            !timefn_constant(&m->forces[k].fa))
            return 0;
    return 1;
}


void mb_spatial_mech(const mb_spatial_model *m, mb_mech *mech)
{
    memset(mech, 0, sizeof *mech);
    mech->nq = 7 * (ptrdiff_t)m->nb;
    mech->nc = m->nc;
    mech->mass_constant = 0;
    mech->ctx = (void *)m;  /* kernels only read it */
    mech->mass = mb_spatial_mass;
    mech->mass_x_q = mb_spatial_mass_x_q;
    mech->forces = mb_spatial_forces;
    mech->phi = mb_spatial_phi;
    mech->phi_q = mb_spatial_phi_q;
    mech->phi_t = mb_spatial_phi_t;
    mech->gamma = mb_spatial_gamma;
    mech->forces_q = mb_spatial_forces_q;
    mech->forces_qd = mb_spatial_forces_qd;
    mech->phiq_x_q = mb_spatial_phiq_x_q;
    mech->phiqT_lam_q = mb_spatial_phiqT_lam_q;
    mech->gamma_q = mb_spatial_gamma_q;
    mech->gamma_qd = mb_spatial_gamma_qd;
    mech->energy = mb_spatial_energy;
    mech->sparse = m->ncb > 0 ? NULL : &mb_spatial_sparse;  /* spatial_sparse.c */
    mech->autonomous = mb_spatial_autonomous(m);
    mech->mass_reg = m->nb;  /* the normalization rows (dae.c) */
    for (int k = 0; k < m->nf; k++)  /* only a road with a bump bounds the step */
        if (m->forces[k].type == MB_SF_TIRE && m->forces[k].bump_r > 0)
            mech->step_bound = mb_spatial_step_bound;
}
