/* Constraint elements of the spatial model (spatial.h): the four primitives of RN
 * section 3 and the two rheonomic rows, each evaluated on its pair's 14 local
 * coordinates with its time terms (the formulas in spatial.c's header comment).  The
 * dense kernels (spatial.c) and the sparse ones (spatial_sparse.c) scatter them. */
#include <math.h>
#include <string.h>
#include "assemble.h" /* mb_timefn_eval */
#include "spatial_elem.h"
#include "status.h"

int mb_spatial_con_rows(int type)
{
    switch (type) {
    case MB_SC_DOT1: case MB_SC_DOT2: case MB_SC_DIST: case MB_SC_ANGLE: return 1;
    case MB_SC_POINT: return 3;
    default: return 0;
    }
}

static int con_eval(const mb_spatial_con *C, double t, const sp_pair *p, unsigned what,
                    sp_crow out[3])
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

int sp_con_at(const mb_spatial_model *m, int k, double t, const double *q, const double *w,
              unsigned what, sp_pair *p, sp_crow out[3], int *nr)
{
    const mb_spatial_con *C = &m->cons[k];
    int rc = sp_pair_gather(m, C->i, C->j, q, w, p);
    if (rc != MB_OK) return rc;
    *nr = mb_spatial_con_rows(C->type);
    if (*nr == 0 || C->row < m->nb || C->row + *nr > m->nc) return MB_ERR_ILL_INPUT;
    return con_eval(C, t, p, what, out);
}
