/* Spatial model: Euler-parameter kinematics, the constraint primitives of RN section 3
 * and their derivatives up to third order, the constraint kernels, the mass matrix and
 * the model as an mb_mech (spatial.h).
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
#include "assemble.h" /* mb_timefn_eval */
#include "spatial_elem.h"
#include "status.h"

/* ------------------------------------------------------------------ rotations */

void sp_G(const double p[4], double G[3][4])
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    G[0][0] = -e1; G[0][1] = e0;  G[0][2] = e3;  G[0][3] = -e2;
    G[1][0] = -e2; G[1][1] = -e3; G[1][2] = e0;  G[1][3] = e1;
    G[2][0] = -e3; G[2][1] = e2;  G[2][2] = -e1; G[2][3] = e0;
}

void sp_E(const double p[4], double E[3][4])
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    E[0][0] = -e1; E[0][1] = e0;  E[0][2] = -e3; E[0][3] = e2;
    E[1][0] = -e2; E[1][1] = e3;  E[1][2] = e0;  E[1][3] = -e1;
    E[2][0] = -e3; E[2][1] = -e2; E[2][2] = e1;  E[2][3] = e0;
}

/* K_c(s) for c = 0, 1, 2 */
static void kmat(const double s[3], double K[3][4][4])
{
    double x = s[0], y = s[1], z = s[2];
    memset(K, 0, 3 * 16 * sizeof(double));
    /* component x: s_x N11 + s_y N12 + s_z N13 */
    K[0][0][0] = x; K[0][1][1] = x; K[0][2][2] = -x; K[0][3][3] = -x;
    K[0][1][2] = K[0][2][1] = y; K[0][0][3] = K[0][3][0] = -y;
    K[0][1][3] = K[0][3][1] = z; K[0][0][2] = K[0][2][0] = z;
    /* component y: s_x N21 + s_y N22 + s_z N23 */
    K[1][1][2] = K[1][2][1] = x; K[1][0][3] = K[1][3][0] = x;
    K[1][0][0] = y; K[1][1][1] = -y; K[1][2][2] = y; K[1][3][3] = -y;
    K[1][2][3] = K[1][3][2] = z; K[1][0][1] = K[1][1][0] = -z;
    /* component z: s_x N31 + s_y N32 + s_z N33 */
    K[2][1][3] = K[2][3][1] = x; K[2][0][2] = K[2][2][0] = -x;
    K[2][2][3] = K[2][3][2] = y; K[2][0][1] = K[2][1][0] = y;
    K[2][0][0] = z; K[2][1][1] = -z; K[2][2][2] = -z; K[2][3][3] = z;
}

/* ------------------------------------------------------------------ element level */

int sp_pair_gather(const mb_spatial_model *m, int i, int j, const double *q, const double *w,
                   sp_pair *p)
{
    if (i < -1 || i >= m->nb || j < -1 || j >= m->nb)
        return MB_ERR_ILL_INPUT;
    p->i = i;
    p->j = j;
    for (int mem = 0; mem < 2; mem++) {
        int b = mem ? j : i;
        double *ql = p->q + 7 * mem, *wl = p->w + 7 * mem;
        if (b < 0) {
            memset(ql, 0, 7 * sizeof(double));
            ql[3] = 1.0;
            memset(wl, 0, 7 * sizeof(double));
        } else {
            memcpy(ql, q + 7 * b, 7 * sizeof(double));
            if (w)
                memcpy(wl, w + 7 * b, 7 * sizeof(double));
            else
                memset(wl, 0, 7 * sizeof(double));
        }
    }
    return MB_OK;
}

/* J w, H_c w, w^T H_c w of v */
static void vec_dir(const sp_pair *p, sp_vec *v)
{
    for (int c = 0; c < 3; c++) {
        double s = 0;
        for (int k = 0; k < SP_NL; k++) s += v->J[c][k] * p->w[k];
        v->Jw[c] = s;
        memset(v->Hw[c], 0, sizeof v->Hw[c]);
        double q2 = 0;
        for (int m = 0; m < 2; m++) {
            if (!v->has[m]) continue;
            const double *wp = p->w + 7 * m + 3;
            for (int a = 0; a < 4; a++) {
                double h = 0;
                for (int b = 0; b < 4; b++) h += v->K[m][c][a][b] * wp[b];
                v->Hw[c][7 * m + 3 + a] = h;
                q2 += wp[a] * h;
            }
        }
        v->wHw[c] = q2;
    }
}

void sp_vec_body(const sp_pair *p, int member, const double s[3], int point, sp_vec *out)
{
    double K[3][4][4];
    const double *pp = p->q + 7 * member + 3;
    memset(out, 0, sizeof *out);
    kmat(s, K);
    for (int c = 0; c < 3; c++) {
        double val = 0;
        for (int a = 0; a < 4; a++) {
            double kp = 0;
            for (int b = 0; b < 4; b++) kp += K[c][a][b] * pp[b];
            out->J[c][7 * member + 3 + a] = 2 * kp;
            val += pp[a] * kp;
            for (int b = 0; b < 4; b++) out->K[member][c][a][b] = 2 * K[c][a][b];
        }
        out->v[c] = val;
        if (point) {
            out->v[c] += p->q[7 * member + c];
            out->J[c][7 * member + c] = 1.0;
        }
    }
    out->has[member] = 1;
    vec_dir(p, out);
}

void sp_vec_sub(const sp_vec *a, const sp_vec *b, sp_vec *out)
{
    for (int c = 0; c < 3; c++) {
        out->v[c] = a->v[c] - b->v[c];
        out->Jw[c] = a->Jw[c] - b->Jw[c];
        out->wHw[c] = a->wHw[c] - b->wHw[c];
        for (int k = 0; k < SP_NL; k++) {
            out->J[c][k] = a->J[c][k] - b->J[c][k];
            out->Hw[c][k] = a->Hw[c][k] - b->Hw[c][k];
        }
    }
    for (int m = 0; m < 2; m++) {
        out->has[m] = a->has[m] || b->has[m];
        for (int c = 0; c < 3; c++)
            for (int x = 0; x < 4; x++)
                for (int y = 0; y < 4; y++)
                    out->K[m][c][x][y] = (a->has[m] ? a->K[m][c][x][y] : 0.0) -
                                         (b->has[m] ? b->K[m][c][x][y] : 0.0);
    }
}

void sp_row_zero(sp_row *r, unsigned what)
{
    r->phi = 0;
    r->wHw = 0;
    if (what & (SP_G | SP_H | SP_W | SP_T)) memset(r->g, 0, sizeof r->g);
    if (what & SP_H) memset(r->H, 0, sizeof r->H);
    if (what & (SP_W | SP_T)) memset(r->Hw, 0, sizeof r->Hw);
    if (what & SP_T) memset(r->T, 0, sizeof r->T);
}

/* add alpha times the Hessian blocks of component c of v, scaled by s, into H */
static void add_blocks(double H[SP_NL][SP_NL], double s, const sp_vec *v, int c)
{
    if (s == 0.0) return;
    for (int m = 0; m < 2; m++) {
        if (!v->has[m]) continue;
        int o = 7 * m + 3;
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) H[o + a][o + b] += s * v->K[m][c][a][b];
    }
}

void sp_row_dot(sp_row *r, double al, const sp_vec *u, const sp_vec *v, unsigned what)
{
    double uv = u->v[0] * v->v[0] + u->v[1] * v->v[1] + u->v[2] * v->v[2];
    r->phi += al * uv;
    if (what & (SP_G | SP_H | SP_W | SP_T))
        for (int k = 0; k < SP_NL; k++) {
            double s = 0;
            for (int c = 0; c < 3; c++) s += u->J[c][k] * v->v[c] + v->J[c][k] * u->v[c];
            r->g[k] += al * s;
        }
    if (what & SP_H) {
        for (int a = 0; a < SP_NL; a++)
            for (int b = 0; b < SP_NL; b++) {
                double s = 0;
                for (int c = 0; c < 3; c++) s += u->J[c][a] * v->J[c][b] + v->J[c][a] * u->J[c][b];
                r->H[a][b] += al * s;
            }
        for (int c = 0; c < 3; c++) {
            add_blocks(r->H, al * u->v[c], v, c);
            add_blocks(r->H, al * v->v[c], u, c);
        }
    }
    if (what & (SP_W | SP_T)) {
        double q2 = 0;
        for (int c = 0; c < 3; c++)
            q2 += 2 * u->Jw[c] * v->Jw[c] + u->v[c] * v->wHw[c] + v->v[c] * u->wHw[c];
        r->wHw += al * q2;
        for (int k = 0; k < SP_NL; k++) {
            double s = 0;
            for (int c = 0; c < 3; c++)
                s += u->J[c][k] * v->Jw[c] + v->J[c][k] * u->Jw[c] + u->v[c] * v->Hw[c][k] +
                     v->v[c] * u->Hw[c][k];
            r->Hw[k] += al * s;
        }
    }
    if (what & SP_T)
        for (int k = 0; k < SP_NL; k++) {
            double s = 0;
            for (int c = 0; c < 3; c++)
                s += 2 * (v->Jw[c] * u->Hw[c][k] + u->Jw[c] * v->Hw[c][k]) +
                     v->wHw[c] * u->J[c][k] + u->wHw[c] * v->J[c][k];
            r->T[k] += al * s;
        }
}

void sp_row_comp(sp_row *r, double al, const sp_vec *u, int c, unsigned what)
{
    r->phi += al * u->v[c];
    if (what & (SP_G | SP_H | SP_W | SP_T))
        for (int k = 0; k < SP_NL; k++) r->g[k] += al * u->J[c][k];
    if (what & SP_H) add_blocks(r->H, al, u, c);
    if (what & (SP_W | SP_T)) {
        r->wHw += al * u->wHw[c];
        for (int k = 0; k < SP_NL; k++) r->Hw[k] += al * u->Hw[c][k];
    }
    /* T: the third derivatives of a component vanish */
}

void sp_row_axpy(sp_row *r, double al, const sp_row *s, unsigned what)
{
    r->phi += al * s->phi;
    if (what & (SP_G | SP_H | SP_W | SP_T))
        for (int k = 0; k < SP_NL; k++) r->g[k] += al * s->g[k];
    if (what & SP_H)
        for (int a = 0; a < SP_NL; a++)
            for (int b = 0; b < SP_NL; b++) r->H[a][b] += al * s->H[a][b];
    if (what & (SP_W | SP_T)) {
        r->wHw += al * s->wHw;
        for (int k = 0; k < SP_NL; k++) r->Hw[k] += al * s->Hw[k];
    }
    if (what & SP_T)
        for (int k = 0; k < SP_NL; k++) r->T[k] += al * s->T[k];
}

/* ------------------------------------------------------------------ constraint elements */

int mb_spatial_con_rows(int type)
{
    switch (type) {
    case MB_SC_DOT1: case MB_SC_DOT2: case MB_SC_DIST: case MB_SC_ANGLE: return 1;
    case MB_SC_POINT: return 3;
    default: return 0;
    }
}

/* one row with its time terms (see the header comment) */
typedef struct crow {
    sp_row r;
    double pt, ptt;
    double gt[SP_NL], gtt[SP_NL], Htw[SP_NL];
    int timed;  /* gt, gtt, Htw nonzero */
} crow;

static int con_eval(const mb_spatial_con *C, double t, const sp_pair *p, unsigned what, crow out[3])
{
    int nr = mb_spatial_con_rows(C->type);
    if (nr == 0) return MB_ERR_ILL_INPUT;
    for (int k = 0; k < nr; k++) {
        sp_row_zero(&out[k].r, what);
        out[k].pt = out[k].ptt = 0;
        out[k].timed = 0;
    }
    double f0, f1, f2;
    mb_timefn_eval(&C->f, t, &f0, &f1, &f2);
    sp_vec u, v, Pi, Pj, d;
    switch (C->type) {
    case MB_SC_DOT1:
        sp_vec_body(p, 0, C->ai, 0, &u);
        sp_vec_body(p, 1, C->aj, 0, &v);
        sp_row_dot(&out[0].r, 1.0, &u, &v, what);
        out[0].r.phi -= f0;
        out[0].pt = -f1;
        out[0].ptt = -f2;
        break;
    case MB_SC_DOT2:
        sp_vec_body(p, 0, C->ai, 0, &u);
        sp_vec_body(p, 0, C->si, 1, &Pi);
        sp_vec_body(p, 1, C->sj, 1, &Pj);
        sp_vec_sub(&Pj, &Pi, &d);
        sp_row_dot(&out[0].r, 1.0, &u, &d, what);
        out[0].r.phi -= f0;
        out[0].pt = -f1;
        out[0].ptt = -f2;
        break;
    case MB_SC_POINT:
        sp_vec_body(p, 0, C->si, 1, &Pi);
        sp_vec_body(p, 1, C->sj, 1, &Pj);
        sp_vec_sub(&Pj, &Pi, &d);
        for (int c = 0; c < 3; c++) sp_row_comp(&out[c].r, 1.0, &d, c, what);
        break;
    case MB_SC_DIST:
        sp_vec_body(p, 0, C->si, 1, &Pi);
        sp_vec_body(p, 1, C->sj, 1, &Pj);
        sp_vec_sub(&Pj, &Pi, &d);
        sp_row_dot(&out[0].r, 0.5, &d, &d, what);
        out[0].r.phi -= 0.5 * f0 * f0;
        out[0].pt = -f0 * f1;
        out[0].ptt = -(f1 * f1 + f0 * f2);
        break;
    case MB_SC_ANGLE: {
        /* cos f (b_i . a_j) - sin f (a_i . a_j) */
        sp_vec bi, aj;
        sp_row r1, r2;
        sp_row_zero(&r1, what);
        sp_row_zero(&r2, what);
        sp_vec_body(p, 0, C->ai, 0, &u);
        sp_vec_body(p, 0, C->bi, 0, &bi);
        sp_vec_body(p, 1, C->aj, 0, &aj);
        sp_row_dot(&r1, 1.0, &bi, &aj, what);
        sp_row_dot(&r2, 1.0, &u, &aj, what);
        double cs = cos(f0), sn = sin(f0);
        double c1 = -sn * f1, s1 = cs * f1;
        double c2 = -cs * f1 * f1 - sn * f2, s2 = -sn * f1 * f1 + cs * f2;
        sp_row_axpy(&out[0].r, cs, &r1, what);
        sp_row_axpy(&out[0].r, -sn, &r2, what);
        out[0].pt = c1 * r1.phi - s1 * r2.phi;
        out[0].ptt = c2 * r1.phi - s2 * r2.phi;
        out[0].timed = 1;
        for (int k = 0; k < SP_NL; k++) {
            out[0].gt[k] = c1 * r1.g[k] - s1 * r2.g[k];
            out[0].gtt[k] = c2 * r1.g[k] - s2 * r2.g[k];
            out[0].Htw[k] = (what & (SP_W | SP_T)) ? c1 * r1.Hw[k] - s1 * r2.Hw[k] : 0.0;
        }
        break;
    }
    }
    if (!out[0].timed)
        for (int k = 0; k < nr; k++) {
            memset(out[k].gt, 0, sizeof out[k].gt);
            memset(out[k].gtt, 0, sizeof out[k].gtt);
            memset(out[k].Htw, 0, sizeof out[k].Htw);
        }
    return MB_OK;
}

/* ------------------------------------------------------------------ assembly */

static void zero_block(ptrdiff_t rows, ptrdiff_t cols, double *A, ptrdiff_t ld)
{
    for (ptrdiff_t c = 0; c < cols; c++) memset(A + c * ld, 0, (size_t)rows * sizeof(double));
}

static int elem_at(const mb_spatial_model *m, int k, double t, const double *q, const double *w,
                   unsigned what, sp_pair *p, crow out[3], int *nr)
{
    const mb_spatial_con *C = &m->cons[k];
    int rc = sp_pair_gather(m, C->i, C->j, q, w, p);
    if (rc != MB_OK) return rc;
    *nr = mb_spatial_con_rows(C->type);
    if (*nr == 0 || C->row < m->nb || C->row + *nr > m->nc) return MB_ERR_ILL_INPUT;
    return con_eval(C, t, p, what, out);
}

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
    crow L[3];
    sp_pair p;
    int nr;
    for (int b = 0; b < m->nb; b++) {
        const double *pp = q + 7 * b + 3;
        phi[b] = pp[0] * pp[0] + pp[1] * pp[1] + pp[2] * pp[2] + pp[3] * pp[3] - 1.0;
    }
    for (int k = 0; k < m->ncon; k++) {
        int rc = elem_at(m, k, t, q, NULL, SP_PHI, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) phi[m->cons[k].row + r] = L[r].r.phi;
    }
    return MB_OK;
}

int mb_spatial_phi_q(double t, const double *q, double *Pq, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    crow L[3];
    sp_pair p;
    int nr;
    zero_block(m->nc, 7 * (ptrdiff_t)m->nb, Pq, ld);
    for (int b = 0; b < m->nb; b++)
        for (int a = 0; a < 4; a++) Pq[b + ld * (7 * b + 3 + a)] = 2 * q[7 * b + 3 + a];
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = elem_at(m, k, t, q, NULL, SP_G, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) scatter_row(L[r].r.g, C->i, C->j, C->row + r, Pq, ld);
    }
    return MB_OK;
}

int mb_spatial_phi_t(double t, const double *q, double *pt, void *ctx)
{
    const mb_spatial_model *m = ctx;
    crow L[3];
    sp_pair p;
    int nr;
    memset(pt, 0, (size_t)m->nc * sizeof(double));
    for (int k = 0; k < m->ncon; k++) {
        int rc = elem_at(m, k, t, q, NULL, SP_PHI, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) pt[m->cons[k].row + r] = L[r].pt;
    }
    return MB_OK;
}

int mb_spatial_gamma(double t, const double *q, const double *qd,
                     double *g, void *ctx)
{
    const mb_spatial_model *m = ctx;
    crow L[3];
    sp_pair p;
    int nr;
    for (int b = 0; b < m->nb; b++) {
        const double *v = qd + 7 * b + 3;
        g[b] = -2 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
    }
    for (int k = 0; k < m->ncon; k++) {
        int rc = elem_at(m, k, t, q, qd, SP_G | SP_W, &p, L, &nr);
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
    crow L[3];
    sp_pair p;
    int nr;
    zero_block(m->nc, 7 * (ptrdiff_t)m->nb, out, ld);
    for (int b = 0; b < m->nb; b++)
        for (int a = 0; a < 4; a++) out[b + ld * (7 * b + 3 + a)] = 2 * x[7 * b + 3 + a];
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = elem_at(m, k, t, q, x, SP_G | SP_W, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) scatter_row(L[r].r.Hw, C->i, C->j, C->row + r, out, ld);
    }
    return MB_OK;
}

int mb_spatial_phiqT_lam_q(double t, const double *q,
                           const double *lam, double *out, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    crow L[3];
    sp_pair p;
    int nr;
    ptrdiff_t nq = 7 * (ptrdiff_t)m->nb;
    zero_block(nq, nq, out, ld);
    for (int b = 0; b < m->nb; b++)
        for (int a = 0; a < 4; a++) {
            ptrdiff_t c = 7 * b + 3 + a;
            out[c + ld * c] = 2 * lam[b];
        }
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = elem_at(m, k, t, q, NULL, SP_H, &p, L, &nr);
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
    crow L[3];
    sp_pair p;
    int nr;
    double row[SP_NL];
    zero_block(m->nc, 7 * (ptrdiff_t)m->nb, out, ld);  /* normalization rows: 0 */
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = elem_at(m, k, t, q, qd, SP_G | SP_W | SP_T, &p, L, &nr);
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
    crow L[3];
    sp_pair p;
    int nr;
    double row[SP_NL];
    zero_block(m->nc, 7 * (ptrdiff_t)m->nb, out, ld);
    for (int b = 0; b < m->nb; b++)
        for (int a = 0; a < 4; a++) out[b + ld * (7 * b + 3 + a)] = -4 * qd[7 * b + 3 + a];
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int rc = elem_at(m, k, t, q, qd, SP_G | SP_W, &p, L, &nr);
        if (rc != MB_OK) return rc;
        for (int r = 0; r < nr; r++) {
            for (int c = 0; c < SP_NL; c++) row[c] = -2 * L[r].r.Hw[c] - 2 * L[r].gt[c];
            scatter_row(row, C->i, C->j, C->row + r, out, ld);
        }
    }
    return MB_OK;
}

/* ------------------------------------------------------------------ mass */

/* the body-frame inertia tensor of body b */
static void inertia(const mb_spatial_model *m, int b, double J[3][3])
{
    const double *x = m->body + 7 * b;
    J[0][0] = x[1]; J[1][1] = x[2]; J[2][2] = x[3];
    J[0][1] = J[1][0] = x[4];
    J[0][2] = J[2][0] = x[5];
    J[1][2] = J[2][1] = x[6];
}

/* out (4 x 4) = s A^T J B for A, B (3 x 4) */
static void atjb(double s, const double A[3][4], const double J[3][3], const double B[3][4],
                 double out[4][4])
{
    double JB[3][4];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            JB[r][c] = J[r][0] * B[0][c] + J[r][1] * B[1][c] + J[r][2] * B[2][c];
    for (int a = 0; a < 4; a++)
        for (int c = 0; c < 4; c++)
            out[a][c] = s * (A[0][a] * JB[0][c] + A[1][a] * JB[1][c] + A[2][a] * JB[2][c]);
}

/* L(w) = [0 -w^T; w -w~], G(a)^T w = L(w) a */
static void lmat(const double w[3], double L[4][4])
{
    L[0][0] = 0;    L[0][1] = -w[0]; L[0][2] = -w[1]; L[0][3] = -w[2];
    L[1][0] = w[0]; L[1][1] = 0;     L[1][2] = w[2];  L[1][3] = -w[1];
    L[2][0] = w[1]; L[2][1] = -w[2]; L[2][2] = 0;     L[2][3] = w[0];
    L[3][0] = w[2]; L[3][1] = w[1];  L[3][2] = -w[0]; L[3][3] = 0;
}

static void mat3x4_vec(const double A[3][4], const double x[4], double y[3])
{
    for (int r = 0; r < 3; r++) y[r] = A[r][0] * x[0] + A[r][1] * x[1] + A[r][2] * x[2] + A[r][3] * x[3];
}

static void mat3_vec(const double J[3][3], const double x[3], double y[3])
{
    for (int r = 0; r < 3; r++) y[r] = J[r][0] * x[0] + J[r][1] * x[1] + J[r][2] * x[2];
}

int mb_spatial_mass(const double *q, double *M, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    ptrdiff_t nq = 7 * (ptrdiff_t)m->nb;
    zero_block(nq, nq, M, ld);
    for (int b = 0; b < m->nb; b++) {
        ptrdiff_t o = 7 * b;
        double J[3][3], G[3][4], B[4][4];
        inertia(m, b, J);
        sp_G(q + o + 3, G);
        atjb(4.0, G, J, G, B);
        for (int a = 0; a < 3; a++) M[o + a + ld * (o + a)] = m->body[7 * b];
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) M[o + 3 + a + ld * (o + 3 + c)] = B[a][c];
    }
    return MB_OK;
}

int mb_spatial_mass_x_q(const double *q, const double *x, double *out,
                        ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    ptrdiff_t nq = 7 * (ptrdiff_t)m->nb;
    zero_block(nq, nq, out, ld);
    for (int b = 0; b < m->nb; b++) {
        ptrdiff_t o = 7 * b + 3;
        double J[3][3], G[3][4], Gx[3][4], B[4][4], Lu[4][4], gx[3], u[3];
        inertia(m, b, J);
        sp_G(q + o, G);
        sp_G(x + o, Gx);
        mat3x4_vec(G, x + o, gx);
        mat3_vec(J, gx, u);
        lmat(u, Lu);
        atjb(4.0, G, J, Gx, B);
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) out[o + a + ld * (o + c)] = 4 * Lu[a][c] - B[a][c];
    }
    return MB_OK;
}

/* quadratic velocity term of body b: Q_p += 8 G(p')^T J' G(p') p and, when wanted,
 * its derivatives in p (Dq) and p' (Dv) (4 x 4); see spatial.h */
void sp_body_qv(const mb_spatial_model *m, int b, const double *q, const double *qd,
                double Qp[4], double Dq[4][4], double Dv[4][4]);
void sp_body_qv(const mb_spatial_model *m, int b, const double *q, const double *qd,
                double Qp[4], double Dq[4][4], double Dv[4][4])
{
    const double *p = q + 7 * b + 3, *v = qd + 7 * b + 3;
    double J[3][3], Gv[3][4], Gp[3][4], gp[3], w[3], L[4][4];
    inertia(m, b, J);
    sp_G(v, Gv);
    mat3x4_vec(Gv, p, gp);  /* G(p') p */
    mat3_vec(J, gp, w);     /* w = J' G(p') p */
    if (Qp)
        for (int a = 0; a < 4; a++)
            Qp[a] = 8 * (Gv[0][a] * w[0] + Gv[1][a] * w[1] + Gv[2][a] * w[2]);
    if (Dq) atjb(8.0, Gv, J, Gv, Dq);
    if (Dv) {
        double B[4][4];
        sp_G(p, Gp);
        lmat(w, L);
        atjb(8.0, Gv, J, Gp, B);
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) Dv[a][c] = 8 * L[a][c] - B[a][c];
    }
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
    mech->autonomous = mb_spatial_autonomous(m);
    for (int k = 0; k < m->nf; k++)  /* only a road with a bump bounds the step */
        if (m->forces[k].type == MB_SF_TIRE && m->forces[k].bump_r > 0)
            mech->step_bound = mb_spatial_step_bound;
}
