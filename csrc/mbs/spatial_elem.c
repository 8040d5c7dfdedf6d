/* Element level of the spatial model (spatial_elem.h): Euler-parameter rotations, the
 * pair state of an element, the sp_vec quadratic vectors and the scalar rows built
 * from them (phi, gradient, Hessian and direction derivatives; the formulas are stated
 * in spatial.c's header comment). */
#include <math.h>
#include <string.h>
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

