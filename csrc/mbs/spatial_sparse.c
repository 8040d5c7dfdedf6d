/* Sparse kernels of the spatial model (mb_mech_sparse, mech.h): the fixed patterns of
 * Phi_q, of the block-diagonal M(q) and of the derivative blocks of the index-1
 * formulation, built from the topology, and their values from the element level
 * (spatial_elem.h: sp_con_at, sp_force_at, sp_body_mass, sp_body_qv) -- every block
 * is a body's or an element's, never a dense nq x nq array.
 *
 * Pattern order (one walker per pattern writes the entries, the values or only counts
 * them, so that the patterns and the value kernels cannot disagree):
 *   Phi_q: every body: its normalization row x its 4 p columns (2 p^T); then every
 *          constraint element: its rows x its pair's 14 local columns (ground columns
 *          dropped), column by column.  phi_tq writes Phi_tq (phi_qt of the rheonomic
 *          angle rows, 0 elsewhere) on the same pattern.
 *   M:     every body: its 3 r-diagonal entries (m), then its 4 x 4 p-block
 *          (4 G^T J' G; (M x)_q's p-block for mass_x_q, 0 on the r-diagonal).
 *   C (rows 0..nq-1 force rows, nq..nq+nc-1 constraint rows), shared by C_q and C_v:
 *     1. every body: its p-block in the force rows (Q_q, Q_q' of the quadratic velocity
 *        term 8 G(p')^T J' G(p') p; -2 lam_b I from its normalization row's Hessian),
 *        then its normalization row x its p columns (gamma_q - (Phi_q x)_q = -2 x_p^T,
 *        gamma_q' = -4 p'^T);
 *     2. every force element (TSDA, RSDA, bushing, tire): its pair block (Q_q, Q_q');
 *     3. every constraint element: its pair block in the force rows
 *        (-(sum_r lam_r H_r), C_v = 0), then its rows x its pair's columns
 *        (gamma_q - (Phi_q x)_q = -T - 2 Htw - gtt - H x, gamma_q' = -2 H q' - 2 gt).
 * Entry counts, with w_e = 7 (bodies of the pair that are not the ground) and r_e the
 * rows of element e: nnz_pq = 4 nb + sum_con r_e w_e, nnz_m = 19 nb,
 * nnz_c = 20 nb + sum_force w_e^2 + sum_con (w_e^2 + r_e w_e).
 * Callback forces (Python or C functions of the whole state) have no element-level
 * derivatives: mb_spatial_mech leaves mech->sparse NULL for a model with them, and
 * these kernels refuse it (MB_ERR_NOT_SUPPORTED).
 */
#include <string.h>
#include "spatial_elem.h"
#include "status.h"

/* where the walkers write: the pattern (r, c non-NULL), one or two value arrays (a, b
 * non-NULL), or nothing (counting); n entries so far */
typedef struct sink {
    int *r, *c;
    double *a, *b;
    ptrdiff_t n;
} sink;

static void put(sink *s, int r, int c, double va, double vb)
{
    if (s->r) {
        s->r[s->n] = r;
        s->c[s->n] = c;
    }
    if (s->a) s->a[s->n] = va;
    if (s->b) s->b[s->n] = vb;
    s->n++;
}

/* the 4 x 4 block at (r0, c0), column by column (A, B NULL: zeros) */
static void put_4x4(sink *s, int r0, int c0, const double (*A)[4], const double (*B)[4])
{
    for (int c = 0; c < 4; c++)
        for (int a = 0; a < 4; a++)
            put(s, r0 + a, c0 + c, A ? A[a][c] : 0.0, B ? B[a][c] : 0.0);
}

/* the block of pair (i, j) in the force rows (local rows and columns, ground dropped) */
static void put_pair_block(sink *s, int i, int j, const double (*A)[SP_NL],
                           const double (*B)[SP_NL])
{
    for (int cl = 0; cl < SP_NL; cl++) {
        int gc = sp_gcol(i, j, cl);
        if (gc < 0) continue;
        for (int rl = 0; rl < SP_NL; rl++) {
            int gr = sp_gcol(i, j, rl);
            if (gr >= 0) put(s, gr, gc, A ? A[rl][cl] : 0.0, B ? B[rl][cl] : 0.0);
        }
    }
}

/* rows row0 .. row0 + nr - 1 x the local columns of pair (i, j) */
static void put_pair_rows(sink *s, int i, int j, int nr, int row0, const double (*A)[SP_NL],
                          const double (*B)[SP_NL])
{
    for (int cl = 0; cl < SP_NL; cl++) {
        int gc = sp_gcol(i, j, cl);
        if (gc < 0) continue;
        for (int r = 0; r < nr; r++)
            put(s, row0 + r, gc, A ? A[r][cl] : 0.0, B ? B[r][cl] : 0.0);
    }
}

/* ---------------------------------------------------------------- walkers */

/* Phi_q (tq = 0) or Phi_tq (tq = 1) at (t, q); q NULL: the pattern */
static int walk_pq(const mb_spatial_model *m, double t, const double *q, int tq, sink *s)
{
    for (int b = 0; b < m->nb; b++)
        for (int c = 0; c < 4; c++) {
            int col = 7 * b + 3 + c;
            put(s, b, col, q && !tq ? 2 * q[col] : 0.0, 0.0);
        }
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int nr = mb_spatial_con_rows(C->type);
        double G[3][SP_NL];
        if (q) {
            sp_crow L[3];
            sp_pair p;
            int rc = sp_con_at(m, k, t, q, NULL, SP_G, &p, L, &nr);
            if (rc != MB_OK) return rc;
            for (int r = 0; r < nr; r++) memcpy(G[r], tq ? L[r].gt : L[r].r.g, sizeof G[r]);
        }
        put_pair_rows(s, C->i, C->j, nr, C->row, q ? G : NULL, NULL);
    }
    return MB_OK;
}

/* M(q) (x NULL) or (M x)_q at q; q NULL: the pattern */
static void walk_m(const mb_spatial_model *m, const double *q, const double *x, sink *s)
{
    for (int b = 0; b < m->nb; b++) {
        double B[4][4];
        for (int a = 0; a < 3; a++) put(s, 7 * b + a, 7 * b + a, x ? 0.0 : m->body[7 * b], 0.0);
        if (q) sp_body_mass(m, b, q, x, x ? NULL : B, x ? B : NULL);
        put_4x4(s, 7 * b + 3, 7 * b + 3, q ? B : NULL, NULL);
    }
}

/* the point of the C blocks */
typedef struct jac_at {
    double t;
    const double *q, *qd, *x, *lam;
} jac_at;

/* part 1 of C: body b's blocks */
static void body_blocks(const mb_spatial_model *m, int b, const jac_at *at, sink *s)
{
    int o = 7 * b + 3, nq = 7 * m->nb;
    double Dq[4][4], Dv[4][4];
    if (at) {
        sp_body_qv(m, b, at->q, at->qd, NULL, Dq, Dv);
        for (int a = 0; a < 4; a++) Dq[a][a] -= 2 * at->lam[b];
    }
    put_4x4(s, o, o, at ? Dq : NULL, at ? Dv : NULL);
    for (int c = 0; c < 4; c++)
        put(s, nq + b, o + c, at ? -2 * at->x[o + c] : 0.0, at ? -4 * at->qd[o + c] : 0.0);
}

/* part 3 of C: constraint element k's blocks */
static int con_blocks(const mb_spatial_model *m, int k, const jac_at *at, sink *s)
{
    const mb_spatial_con *C = &m->cons[k];
    int nr = mb_spatial_con_rows(C->type);
    double H[SP_NL][SP_NL], Rq[3][SP_NL], Rv[3][SP_NL];
    if (at) {
        sp_crow L[3];
        sp_pair p, px;
        int rc = sp_con_at(m, k, at->t, at->q, at->qd, SP_G | SP_H | SP_W | SP_T, &p, L, &nr);
        if (rc != MB_OK || (rc = sp_pair_gather(m, C->i, C->j, at->q, at->x, &px)) != MB_OK)
            return rc;
        memset(H, 0, sizeof H);
        for (int r = 0; r < nr; r++) {
            const sp_crow *R = &L[r];
            double lr = at->lam[C->row + r];
            for (int c = 0; c < SP_NL; c++) {
                double hx = 0;  /* (Phi_q x)_q of the row: sum_a x_a H_ac */
                for (int a = 0; a < SP_NL; a++) {
                    hx += px.w[a] * R->r.H[a][c];
                    H[a][c] -= lr * R->r.H[a][c];
                }
                Rq[r][c] = -R->r.T[c] - 2 * R->Htw[c] - R->gtt[c] - hx;
                Rv[r][c] = -2 * R->r.Hw[c] - 2 * R->gt[c];
            }
        }
    }
    put_pair_block(s, C->i, C->j, at ? H : NULL, NULL);
    put_pair_rows(s, C->i, C->j, nr, 7 * m->nb + C->row, at ? Rq : NULL, at ? Rv : NULL);
    return MB_OK;
}

/* C_q (in s->a) and C_v (in s->b) at *at; at NULL: the pattern */
static int walk_c(const mb_spatial_model *m, const jac_at *at, sink *s)
{
    for (int b = 0; b < m->nb; b++) body_blocks(m, b, at, s);
    for (int k = 0; k < m->nf; k++) {
        const mb_spatial_force *F = &m->forces[k];
        sp_flocal L;
        if (at) {
            int rc = sp_force_at(m, k, at->t, at->q, at->qd, SP_FQQ | SP_FQQD, &L);
            if (rc != MB_OK) return rc;
        }
        put_pair_block(s, F->i, F->j, at ? L.Qq : NULL, at ? L.Qqd : NULL);
    }
    for (int k = 0; k < m->ncon; k++) {
        int rc = con_blocks(m, k, at, s);
        if (rc != MB_OK) return rc;
    }
    return MB_OK;
}

/* ---------------------------------------------------------------- the table */

static int pair_ok(const mb_spatial_model *m, int i, int j)
{
    return i >= -1 && i < m->nb && j >= -1 && j < m->nb;
}

/* what the walkers index with (mb_spatial_check checks the rest) */
static int check_model(const mb_spatial_model *m)
{
    if (m->ncb > 0) return MB_ERR_NOT_SUPPORTED;
    if (m->nb < 1) return MB_ERR_ILL_INPUT;
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int nr = mb_spatial_con_rows(C->type);
        if (nr == 0 || !pair_ok(m, C->i, C->j) || C->row < m->nb || C->row + nr > m->nc)
            return MB_ERR_ILL_INPUT;
    }
    for (int k = 0; k < m->nf; k++)
        if (!pair_ok(m, m->forces[k].i, m->forces[k].j)) return MB_ERR_ILL_INPUT;
    return MB_OK;
}

static int sp_sizes(ptrdiff_t *nnz_pq, ptrdiff_t *nnz_c, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sink a = {0}, b = {0};
    int rc = check_model(m);
    if (rc != MB_OK || (rc = walk_pq(m, 0.0, NULL, 0, &a)) != MB_OK ||
        (rc = walk_c(m, NULL, &b)) != MB_OK)
        return rc;
    *nnz_pq = a.n;
    *nnz_c = b.n;
    return MB_OK;
}

static int sp_pattern(int *pq_row, int *pq_col, int *c_row, int *c_col, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sink a = {pq_row, pq_col, NULL, NULL, 0}, b = {c_row, c_col, NULL, NULL, 0};
    int rc = check_model(m);
    if (rc != MB_OK || (rc = walk_pq(m, 0.0, NULL, 0, &a)) != MB_OK) return rc;
    return walk_c(m, NULL, &b);
}

static int sp_phi_q(double t, const double *q, double *pq, void *ctx)
{
    sink s = {NULL, NULL, pq, NULL, 0};
    return walk_pq(ctx, t, q, 0, &s);
}

static int sp_phi_tq(double t, const double *q, double *ptq, void *ctx)
{
    sink s = {NULL, NULL, ptq, NULL, 0};
    return walk_pq(ctx, t, q, 1, &s);
}

static int sp_jac(double t, const double *q, const double *qd, const double *x,
                  const double *lam, double *cq, double *cv, void *ctx)
{
    const mb_spatial_model *m = ctx;
    if (m->ncb > 0) return MB_ERR_NOT_SUPPORTED;
    jac_at at = {t, q, qd, x, lam};
    sink s = {NULL, NULL, cq, cv, 0};
    return walk_c(m, &at, &s);
}

static int sp_mass_pattern(ptrdiff_t *nnz_m, int *m_row, int *m_col, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sink s = {m_row, m_col, NULL, NULL, 0};
    int rc = check_model(m);
    if (rc != MB_OK) return rc;
    if (m_row && m_col) walk_m(m, NULL, NULL, &s);
    *nnz_m = 19 * (ptrdiff_t)m->nb;
    return MB_OK;
}

static int sp_mass(const double *q, double *mv, void *ctx)
{
    sink s = {NULL, NULL, mv, NULL, 0};
    walk_m(ctx, q, NULL, &s);
    return MB_OK;
}

static int sp_mass_x_q(const double *q, const double *x, double *mq, void *ctx)
{
    sink s = {NULL, NULL, mq, NULL, 0};
    walk_m(ctx, q, x, &s);
    return MB_OK;
}

const mb_mech_sparse mb_spatial_sparse = {
    sp_sizes, sp_pattern, NULL, sp_phi_q, sp_jac,
    sp_mass_pattern, sp_mass, sp_mass_x_q, sp_phi_tq,
};
