/* Planar joints in body coordinates (Nikravesh, Planar Multibody Dynamics, ch. 4-6)
 * and rheonomic drivers: element kernels on a body pair (assemble.h).
 *
 * Each constraint row phi(ql, t) of a joint is described by
 *   phi, its gradient g = phi_ql (6), its Hessian H = phi_qlql (6 x 6),
 *   T = d/dql (qd' H qd) (third derivatives contracted twice with qd),
 *   pt = phi_t and ptt = phi_tt.
 * For every joint here phi_q does not depend on t (phi_qt = 0: drivers are affine in
 * q), so the kernels of mech.h follow from these by
 *   Phi_q = g,  (Phi_q x)_q = H x,  (Phi_q^T lam)_q = sum_r lam_r H_r,
 *   gamma = -(Phi_q qd)_q qd - 2 Phi_qt qd - Phi_tt = -qd' H qd - ptt,
 *   gamma_q = -T,  gamma_qd = -2 H qd.
 * gamma alone (MB_JL_GAMMA without the Hessian flags) takes qd' H qd from each row's
 * closed form (qHq) without forming H.
 * Notation: A(phi) the rotation, u = A s' a body-fixed vector in global
 * components, perp(u) = (-u_y, u_x) = dA/dphi s' (so d perp(u)/dphi = -u).
 * Local coordinates ql = (x_i, y_i, phi_i, x_j, y_j, phi_j): index 2 = phi_i, 5 = phi_j.
 */
#include <math.h>
#include <string.h>
#include "assemble.h"
#include "status.h"

enum { PI_ = 2, PJ_ = 5 };

void mb_timefn_eval(const mb_timefn *f, double t, double *f0, double *f1, double *f2)
{
    double arg = f->w * t + f->psi;
    double sn = f->a != 0 ? sin(arg) : 0.0, cs = f->a != 0 ? cos(arg) : 0.0;
    if (f0) *f0 = f->c0 + t * (f->c1 + t * f->c2) + f->a * sn;
    if (f1) *f1 = f->c1 + 2 * f->c2 * t + f->a * f->w * cs;
    if (f2) *f2 = 2 * f->c2 - f->a * f->w * f->w * sn;
}

int mb_joint_rows(int type)
{
    switch (type) {
    case MB_JOINT_REVOLUTE: return 2;
    case MB_JOINT_TRANSLATIONAL: return 2;
    case MB_JOINT_DISTANCE: return 1;
    case MB_JOINT_FIXED: return 3;
    case MB_JOINT_DRIVER_COORD: return 1;
    case MB_JOINT_DRIVER_ANGLE: return 1;
    default: return 0;
    }
}

/* one constraint row in local coordinates (see the header comment) */
typedef struct row_t {
    double phi, g[6], (*H)[6], T[6], pt, ptt;  /* H: 6 x 6, in the caller's output or scratch */
    double qHq;  /* qd' H qd, formed directly (without H) when curv: for gamma */
} row_t;

static void rot(double c, double s, const double v[2], double out[2])
{
    out[0] = c * v[0] - s * v[1];
    out[1] = s * v[0] + c * v[1];
}

static void perp(const double u[2], double out[2])
{
    out[0] = -u[1];
    out[1] = u[0];
}

static double dot2(const double a[2], const double b[2]) { return a[0] * b[0] + a[1] * b[1]; }

/* component a (0: x, 1: y) of r_i + A_i si - r_j - A_j sj */
static void revolute_row(const mb_pair *p, const double si[2], const double sj[2], int a, int hess,
                         int curv, int third, row_t *r)
{
    double ui[2], uj[2], pui[2], puj[2];
    rot(p->ci, p->si, si, ui);
    rot(p->cj, p->sj, sj, uj);
    perp(ui, pui);
    perp(uj, puj);
    double wi = p->qd[PI_], wj = p->qd[PJ_];
    r->phi = p->q[a] + ui[a] - p->q[3 + a] - uj[a];
    r->g[a] = 1;
    r->g[3 + a] = -1;
    r->g[PI_] = pui[a];
    r->g[PJ_] = -puj[a];
    if (hess) {
        r->H[PI_][PI_] = -ui[a];
        r->H[PJ_][PJ_] = uj[a];
    }
    if (curv)
        r->qHq = uj[a] * wj * wj - ui[a] * wi * wi;
    if (third) {
        r->T[PI_] = -pui[a] * wi * wi;
        r->T[PJ_] = puj[a] * wj * wj;
    }
}

/* (d.d - L^2)/2 with d = r_j + A_j sj - r_i - A_i si */
static void distance_row(const mb_pair *p, const double si[2], const double sj[2], double L,
                         int hess, int curv, int third, row_t *r)
{
    double ui[2], uj[2], pui[2], puj[2], d[2], D[6][2];
    rot(p->ci, p->si, si, ui);
    rot(p->cj, p->sj, sj, uj);
    perp(ui, pui);
    perp(uj, puj);
    for (int a = 0; a < 2; a++) d[a] = p->q[3 + a] + uj[a] - p->q[a] - ui[a];
    /* D = dd/dql: columns */
    memset(D, 0, sizeof D);
    D[0][0] = -1; D[1][1] = -1; D[2][0] = -pui[0]; D[2][1] = -pui[1];
    D[3][0] = 1;  D[4][1] = 1;  D[5][0] = puj[0];  D[5][1] = puj[1];
    r->phi = 0.5 * (dot2(d, d) - L * L);
    for (int m = 0; m < 6; m++) r->g[m] = dot2(d, D[m]);
    if (hess) {
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) r->H[a][b] = dot2(D[a], D[b]);
        r->H[PI_][PI_] += dot2(d, ui);   /* d^2 d / dphi_i^2 = u_i */
        r->H[PJ_][PJ_] -= dot2(d, uj);   /* d^2 d / dphi_j^2 = -u_j */
    }
    if (curv || third) {
        double wi = p->qd[PI_], wj = p->qd[PJ_], dd[2] = {0, 0};
        for (int m = 0; m < 6; m++) {
            dd[0] += D[m][0] * p->qd[m];
            dd[1] += D[m][1] * p->qd[m];
        }
        /* qd'Hqd = |D qd|^2 + (d.u_i) wi^2 - (d.u_j) wj^2 */
        r->qHq = dot2(dd, dd) + wi * wi * dot2(d, ui) - wj * wj * dot2(d, uj);
        if (third) {
            for (int m = 0; m < 6; m++)
                r->T[m] = wi * wi * dot2(D[m], ui) - wj * wj * dot2(D[m], uj);
            r->T[PI_] += 2 * wi * dot2(dd, ui) + wi * wi * dot2(d, pui);
            r->T[PJ_] += -2 * wj * dot2(dd, uj) - wj * wj * dot2(d, puj);
        }
    }
}

/* (A_i ni)^perp . d, d = r_j + A_j sj - r_i - A_i si  (= w.e - perp(ni).si with
 * w = A_i perp(ni), e = r_j + A_j sj - r_i: the A_i si part is constant) */
static void translational_row(const mb_pair *p, const double si[2], const double sj[2],
                              const double ni[2], int hess, int curv, int third, row_t *r)
{
    double ui[2], uj[2], puj[2], np[2], w[2], wp[2], e[2], E[6][2];
    rot(p->ci, p->si, si, ui);
    rot(p->cj, p->sj, sj, uj);
    perp(uj, puj);
    perp(ni, np);
    rot(p->ci, p->si, np, w);
    perp(w, wp);
    for (int a = 0; a < 2; a++) e[a] = p->q[3 + a] + uj[a] - p->q[a];
    memset(E, 0, sizeof E);
    E[0][0] = -1; E[1][1] = -1;
    E[3][0] = 1;  E[4][1] = 1;  E[5][0] = puj[0]; E[5][1] = puj[1];
    r->phi = dot2(w, e) - dot2(w, ui);
    for (int m = 0; m < 6; m++) r->g[m] = dot2(w, E[m]);
    r->g[PI_] += dot2(wp, e);
    if (hess) {
        for (int m = 0; m < 6; m++) {
            if (m == PI_) continue;
            r->H[PI_][m] = r->H[m][PI_] = dot2(wp, E[m]);
        }
        r->H[PI_][PI_] = -dot2(w, e);
        r->H[PJ_][PJ_] = -dot2(w, uj);
    }
    if (curv || third) {
        /* qd'Hqd = 2 wi (w'.e') - wi^2 (w.e) - wj^2 (w.u_j), e' = E qd */
        double wi = p->qd[PI_], wj = p->qd[PJ_], ed[2] = {0, 0};
        for (int m = 0; m < 6; m++) {
            ed[0] += E[m][0] * p->qd[m];
            ed[1] += E[m][1] * p->qd[m];
        }
        r->qHq = 2 * wi * dot2(wp, ed) - wi * wi * dot2(w, e) - wj * wj * dot2(w, uj);
        if (third) {
            for (int m = 0; m < 6; m++) r->T[m] = -wi * wi * r->g[m];
            r->T[PI_] += -2 * wi * dot2(w, ed) - wj * wj * dot2(wp, uj);
            r->T[PJ_] += -2 * wi * wj * dot2(wp, uj) - wj * wj * dot2(w, puj);
        }
    }
}

/* phi_j - phi_i - c(t) (c = phi0, or a driver's f(t)) */
static void angle_row(const mb_pair *p, double c, double c1, double c2, row_t *r)
{
    r->phi = p->q[PJ_] - p->q[PI_] - c;
    r->g[PI_] = -1;
    r->g[PJ_] = 1;
    r->pt = -c1;
    r->ptt = -c2;
}

int mb_joint_eval(const mb_planar_joint *J, double t, const mb_pair *p, unsigned what,
                  mb_joint_local *out)
{
    row_t rows[3];
    double Hs[3][6][6];  /* the Hessians when they are not an output */
    int nr = mb_joint_rows(J->type);
    if (nr == 0)
        return MB_ERR_ILL_INPUT;
    /* the Hessian only where it is read; gamma alone takes qd' H qd formed directly */
    int hess = (what & (MB_JL_HESS | MB_JL_GQ | MB_JL_GQD)) != 0;
    int curv = (what & MB_JL_GAMMA) != 0;
    int third = (what & MB_JL_GQ) != 0;
    for (int k = 0; k < nr; k++) {  /* clear only what will be read */
        row_t *r = &rows[k];
        r->phi = r->pt = r->ptt = r->qHq = 0;
        memset(r->g, 0, sizeof r->g);
        r->H = (what & MB_JL_HESS) ? out->H[k] : Hs[k];  /* written in place */
        if (hess) memset(r->H, 0, sizeof Hs[k]);
        if (third) memset(r->T, 0, sizeof r->T);
    }
    double f0, f1, f2;
    switch (J->type) {
    case MB_JOINT_REVOLUTE:
        revolute_row(p, J->si, J->sj, 0, hess, curv, third, &rows[0]);
        revolute_row(p, J->si, J->sj, 1, hess, curv, third, &rows[1]);
        break;
    case MB_JOINT_TRANSLATIONAL:
        angle_row(p, J->phi0, 0, 0, &rows[0]);
        translational_row(p, J->si, J->sj, J->ni, hess, curv, third, &rows[1]);
        break;
    case MB_JOINT_DISTANCE:
        distance_row(p, J->si, J->sj, J->L, hess, curv, third, &rows[0]);
        break;
    case MB_JOINT_FIXED:
        revolute_row(p, J->si, J->sj, 0, hess, curv, third, &rows[0]);
        revolute_row(p, J->si, J->sj, 1, hess, curv, third, &rows[1]);
        angle_row(p, J->phi0, 0, 0, &rows[2]);
        break;
    case MB_JOINT_DRIVER_COORD:
        if (J->coord < 0 || J->coord > 2 || J->i < 0)
            return MB_ERR_ILL_INPUT;
        mb_timefn_eval(&J->f, t, &f0, &f1, &f2);
        rows[0].phi = p->q[J->coord] - f0;
        rows[0].g[J->coord] = 1;
        rows[0].pt = -f1;
        rows[0].ptt = -f2;
        break;
    case MB_JOINT_DRIVER_ANGLE:
        mb_timefn_eval(&J->f, t, &f0, &f1, &f2);
        angle_row(p, f0, f1, f2, &rows[0]);
        break;
    }
    out->nr = nr;
    switch (J->type) {  /* where the curvature terms live */
    case MB_JOINT_REVOLUTE:
    case MB_JOINT_FIXED: out->hmask = (1u << PI_) | (1u << PJ_); break;
    case MB_JOINT_TRANSLATIONAL:
    case MB_JOINT_DISTANCE: out->hmask = 0x3Fu; break;
    default: out->hmask = 0; break;  /* drivers: affine in q */
    }
    for (int k = 0; k < nr; k++) {
        const row_t *r = &rows[k];
        if (what & MB_JL_PHI) out->phi[k] = r->phi;
        if (what & MB_JL_PT) out->pt[k] = r->pt;
        if (what & MB_JL_PQ) memcpy(out->Pq[k], r->g, sizeof r->g);
        /* (rows without curvature, e.g. angle rows, have H = 0 and qHq = 0) */
        if (what & MB_JL_GAMMA) out->gamma[k] = -r->qHq - r->ptt;
        if (what & MB_JL_GQD)  /* H vanishes outside hmask x hmask */
            for (int a = 0; a < 6; a++) {
                double s = 0;
                if ((out->hmask >> a) & 1u)
                    for (int b = 0; b < 6; b++)
                        if ((out->hmask >> b) & 1u) s += r->H[a][b] * p->qd[b];
                out->gqd[k][a] = -2 * s;
            }
        if (what & MB_JL_GQ)
            for (int a = 0; a < 6; a++) out->gq[k][a] = -r->T[a];
    }
    return MB_OK;
}
