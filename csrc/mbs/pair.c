/* The pair of bodies a planar element acts on (assemble.h): its local state gathered
 * from the global coordinates, and the geometry of the segment between a point of each
 * body (used by the spring-dampers of forces.c and the contacts of contact.c). */
#include <math.h>
#include <string.h>
#include "assemble.h"
#include "status.h"

enum { PI_ = 2, PJ_ = 5 };

/* the pair state; the rotations (ci, si, cj, sj) from cs (body_trig) when given, else
 * computed when rot, else those of the identity (for elements that use the angles
 * only, e.g. the RSDA) */
int mb_pair_gather_ex(const mb_planar_model *m, int i, int j, const double *q, const double *qd,
                       mb_pair *p, int rot, const double *cs)
{
    if (i < -1 || i >= m->nb || j < -1 || j >= m->nb)
        return MB_ERR_ILL_INPUT;
    p->i = i;
    p->j = j;
    for (int s = 0; s < 2; s++) {  /* slot 0: body i, slot 1: body j */
        int b = s == 0 ? i : j;
        double *pq = p->q + 3 * s, *pv = p->qd + 3 * s, *c = s == 0 ? &p->ci : &p->cj;
        double *sn = s == 0 ? &p->si : &p->sj;
        if (b < 0) {  /* the ground: zeros, and the identity rotation (no trigonometry) */
            pq[0] = pq[1] = pq[2] = pv[0] = pv[1] = pv[2] = 0.0;
            *c = 1.0;
            *sn = 0.0;
            continue;
        }
        const double *qb = q + 3 * b;
        pq[0] = qb[0];
        pq[1] = qb[1];
        pq[2] = qb[2];
        if (qd) {
            pv[0] = qd[3 * b];
            pv[1] = qd[3 * b + 1];
            pv[2] = qd[3 * b + 2];
        } else {
            pv[0] = pv[1] = pv[2] = 0.0;
        }
        if (cs) {
            *c = cs[2 * b];
            *sn = cs[2 * b + 1];
        } else if (rot) {
            *c = cos(qb[2]);
            *sn = sin(qb[2]);
        } else {
            *c = 1.0;
            *sn = 0.0;
        }
    }
    return MB_OK;
}

int mb_pair_gather(const mb_planar_model *m, int i, int j, const double *q, const double *qd,
                   mb_pair *p)
{
    return mb_pair_gather_ex(m, i, j, q, qd, p, 1, NULL);
}

/* rotated attachment vectors and D = dd/dq_local (6 x 2) of d = r_j + A_j sj - r_i - A_i si */
void mb_pair_d(const mb_pair *p, const double si[2], const double sj[2], double ui[2],
                   double uj[2], double d[2], double D[6][2])
{
    ui[0] = p->ci * si[0] - p->si * si[1];
    ui[1] = p->si * si[0] + p->ci * si[1];
    uj[0] = p->cj * sj[0] - p->sj * sj[1];
    uj[1] = p->sj * sj[0] + p->cj * sj[1];
    d[0] = p->q[3] + uj[0] - p->q[0] - ui[0];
    d[1] = p->q[4] + uj[1] - p->q[1] - ui[1];
    /* perp(u) = (-u_y, u_x) */
    memset(D, 0, 12 * sizeof(double));
    D[0][0] = -1; D[1][1] = -1; D[2][0] = ui[1]; D[2][1] = -ui[0];
    D[3][0] = 1;  D[4][1] = 1;  D[5][0] = -uj[1]; D[5][1] = uj[0];
}

int mb_point_pair_geom(const mb_pair *p, const double si[2], const double sj[2], double *l,
                       double g[6], double Hl[6][6])
{
    double ui[2], uj[2], d[2], D[6][2];
    mb_pair_d(p, si, sj, ui, uj, d, D);
    *l = hypot(d[0], d[1]);
    if (!(*l > 0)) {
        memset(g, 0, 6 * sizeof(double));
        if (Hl) memset(Hl, 0, 36 * sizeof(double));
        return 1;
    }
    double e[2] = {d[0] / *l, d[1] / *l};
    for (int m = 0; m < 6; m++) g[m] = e[0] * D[m][0] + e[1] * D[m][1];
    if (Hl) {
        /* (D'D - g g') / l + e . d^2 d */
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++)
                Hl[a][b] = (D[a][0] * D[b][0] + D[a][1] * D[b][1] - g[a] * g[b]) / *l;
        Hl[PI_][PI_] += e[0] * ui[0] + e[1] * ui[1];
        Hl[PJ_][PJ_] -= e[0] * uj[0] + e[1] * uj[1];
    }
    return 0;
}

