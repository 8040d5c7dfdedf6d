/* Sparse kernels of the planar model (mb_mech_sparse, mech.h): the fixed sparsity
 * patterns of Phi_q and of the derivative blocks of the index-1 formulation, built
 * from the topology, and their values from the element level (assemble.h).
 *
 * Pattern order (the value kernels walk the same loops):
 *   Phi_q: for every joint, its rows r x the 6 local columns (ground columns dropped).
 *   C (rows 0..nq-1: force rows, nq..nq+nc-1: constraint rows), shared by C_q and C_v:
 *     1. every pair force (TSDA, RSDA, contacts): its 6 x 6 block (Q_q, Q_q');
 *     2. every joint: its 6 x 6 block in the force rows (-(Phi_q^T lam)_q, C_v = 0),
 *        then its rows x 6 columns in the constraint rows (gamma_q - (Phi_q x)_q,
 *        gamma_q').
 *   Generalized forces depend on t only and have no entries.  The (constant) mass
 *   matrix contributes nothing ((M a)_q = 0).
 * A model with Python (extra) forces has no element-level derivatives: mb_planar_mech
 * leaves mech->sparse NULL for it, and these kernels refuse it (MB_ERR_NOT_SUPPORTED).
 */
#include <string.h>
#include "assemble.h"
#include "status.h"

/* global column of local column c of pair (i, j); -1 for the ground */
static int gcol(int i, int j, int c)
{
    int b = c < 3 ? i : j;
    return b < 0 ? -1 : 3 * b + c % 3;
}

static int check_model(const mb_planar_model *m)
{
    if (m->extra)
        return MB_ERR_NOT_SUPPORTED;
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        int nr = mb_joint_rows(J->type);
        if (nr == 0 || J->row < 0 || J->row + nr > m->nc || J->i < -1 || J->i >= m->nb ||
            J->j < -1 || J->j >= m->nb)
            return MB_ERR_ILL_INPUT;
    }
    for (int k = 0; k < m->nf; k++) {
        const mb_planar_force *F = &m->forces[k];
        if (F->type == MB_FORCE_GENERALIZED) {
            if (F->coord < 0 || F->coord >= 3 * m->nb) return MB_ERR_ILL_INPUT;
            continue;
        }
        if (!mb_force_is_pair(F->type) || F->i < -1 || F->i >= m->nb || F->j < -1 ||
            F->j >= m->nb)
            return MB_ERR_ILL_INPUT;
    }
    return MB_OK;
}

/* number of non-ground local columns of pair (i, j) */
static int ncols(int i, int j) { return 3 * (i >= 0) + 3 * (j >= 0); }

static int sp_sizes(ptrdiff_t *nnz_pq, ptrdiff_t *nnz_c, void *ctx)
{
    const mb_planar_model *m = ctx;
    int rc = check_model(m);
    if (rc != MB_OK) return rc;
    ptrdiff_t npq = 0, nc = 0;
    for (int k = 0; k < m->nf; k++) {
        const mb_planar_force *F = &m->forces[k];
        if (F->type == MB_FORCE_GENERALIZED) continue;
        nc += (ptrdiff_t)ncols(F->i, F->j) * ncols(F->i, F->j);
    }
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        ptrdiff_t w = ncols(J->i, J->j), nr = mb_joint_rows(J->type);
        npq += nr * w;
        nc += w * w + nr * w;
    }
    *nnz_pq = npq;
    *nnz_c = nc;
    return MB_OK;
}

/* the 6 x 6 block of pair (i, j) at row offset r0 (pattern) */
static ptrdiff_t put_66(int i, int j, int *r, int *c, ptrdiff_t n)
{
    for (int b = 0; b < 6; b++) {
        int gc = gcol(i, j, b);
        if (gc < 0) continue;
        for (int a = 0; a < 6; a++) {
            int gr = gcol(i, j, a);
            if (gr < 0) continue;
            r[n] = gr;
            c[n] = gc;
            n++;
        }
    }
    return n;
}

/* rows row0 .. row0 + nr - 1 x the 6 local columns of pair (i, j) (pattern) */
static ptrdiff_t put_rows(int i, int j, int nr, int row0, int *r, int *c, ptrdiff_t n)
{
    for (int b = 0; b < 6; b++) {
        int gc = gcol(i, j, b);
        if (gc < 0) continue;
        for (int a = 0; a < nr; a++) {
            r[n] = row0 + a;
            c[n] = gc;
            n++;
        }
    }
    return n;
}

static int sp_pattern(int *pq_row, int *pq_col, int *c_row, int *c_col, void *ctx)
{
    const mb_planar_model *m = ctx;
    int rc = check_model(m);
    if (rc != MB_OK) return rc;
    int nq = 3 * m->nb;
    ptrdiff_t np = 0, n = 0;
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        np = put_rows(J->i, J->j, mb_joint_rows(J->type), J->row, pq_row, pq_col, np);
    }
    for (int k = 0; k < m->nf; k++) {
        const mb_planar_force *F = &m->forces[k];
        if (F->type != MB_FORCE_GENERALIZED) n = put_66(F->i, F->j, c_row, c_col, n);
    }
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        n = put_66(J->i, J->j, c_row, c_col, n);
        n = put_rows(J->i, J->j, mb_joint_rows(J->type), nq + J->row, c_row, c_col, n);
    }
    return MB_OK;
}

static int sp_mass_diag(double *d, void *ctx)
{
    const mb_planar_model *m = ctx;
    for (int b = 0; b < m->nb; b++) {
        d[3 * b] = d[3 * b + 1] = m->body[2 * b];
        d[3 * b + 2] = m->body[2 * b + 1];
    }
    return MB_OK;
}

static int sp_phi_q(double t, const double *q, double *pq, void *ctx)
{
    const mb_planar_model *m = ctx;
    ptrdiff_t n = 0;
    mb_joint_local L;
    mb_pair p;
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        int rc = mb_pair_gather(m, J->i, J->j, q, NULL, &p);
        if (rc != MB_OK || (rc = mb_joint_eval(J, t, &p, MB_JL_PQ, &L)) != MB_OK) return rc;
        for (int b = 0; b < 6; b++) {
            if (gcol(J->i, J->j, b) < 0) continue;
            for (int a = 0; a < L.nr; a++) pq[n++] = L.Pq[a][b];
        }
    }
    return MB_OK;
}

static int sp_jac(double t, const double *q, const double *qd, const double *x,
                  const double *lam, double *cq, double *cv, void *ctx)
{
    const mb_planar_model *m = ctx;
    if (m->extra) return MB_ERR_NOT_SUPPORTED;
    ptrdiff_t n = 0;
    mb_pair p, px;
    mb_force_local FL;
    mb_joint_local L;
    for (int k = 0; k < m->nf; k++) {
        const mb_planar_force *F = &m->forces[k];
        if (F->type == MB_FORCE_GENERALIZED) continue;
        int rc = mb_pair_gather(m, F->i, F->j, q, qd, &p);
        if (rc != MB_OK || (rc = mb_force_eval(F, t, &p, MB_FL_QQ | MB_FL_QQD, &FL)) != MB_OK)
            return rc;
        for (int b = 0; b < 6; b++) {
            if (gcol(F->i, F->j, b) < 0) continue;
            for (int a = 0; a < 6; a++) {
                if (gcol(F->i, F->j, a) < 0) continue;
                int in = (FL.mask >> a) & (FL.mask >> b) & 1u; /* written only there */
                cq[n] = in ? FL.Qq[a][b] : 0.0;
                cv[n] = in ? FL.Qqd[a][b] : 0.0;
                n++;
            }
        }
    }
    /* joints: the Hessian block in the force rows, then the constraint rows */
    for (int k = 0; k < m->nj; k++) {
        const mb_planar_joint *J = &m->joints[k];
        int rc = mb_pair_gather(m, J->i, J->j, q, qd, &p);
        if (rc != MB_OK || (rc = mb_pair_gather(m, J->i, J->j, q, x, &px)) != MB_OK) return rc;
        if ((rc = mb_joint_eval(J, t, &p, MB_JL_HESS | MB_JL_GQ | MB_JL_GQD, &L)) != MB_OK)
            return rc;
        for (int b = 0; b < 6; b++) {
            if (gcol(J->i, J->j, b) < 0) continue;
            for (int a = 0; a < 6; a++) {
                if (gcol(J->i, J->j, a) < 0) continue;
                double s = 0;  /* H is written only on hmask x hmask (assemble.h) */
                if ((L.hmask >> a) & (L.hmask >> b) & 1u)
                    for (int r = 0; r < L.nr; r++) s += lam[J->row + r] * L.H[r][a][b];
                cq[n] = -s;
                cv[n] = 0.0;
                n++;
            }
        }
        for (int b = 0; b < 6; b++) {
            if (gcol(J->i, J->j, b) < 0) continue;
            int in_b = (L.hmask >> b) & 1u;  /* H, gq, gqd vanish outside hmask */
            for (int r = 0; r < L.nr; r++) {
                double s = 0;  /* (H_r x)_b, H symmetric */
                for (int a = 0; a < 6 && in_b; a++)
                    if ((L.hmask >> a) & 1u) s += L.H[r][b][a] * px.qd[a];
                cq[n] = in_b ? L.gq[r][b] - s : 0.0;
                cv[n] = in_b ? L.gqd[r][b] : 0.0;
                n++;
            }
        }
    }
    return MB_OK;
}

const mb_mech_sparse mb_planar_sparse = {
    sp_sizes, sp_pattern, sp_mass_diag, sp_phi_q, sp_jac, NULL, NULL, NULL, NULL,
};
