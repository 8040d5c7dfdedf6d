/* Penalty contact (LLM paper section 3, eqs 17-21) as a pair element (assemble.h).
 *
 * Gap functions (delta > 0: penetration, the LLM's Psi of eq 19):
 *   MB_FORCE_CONTACT_LINE     circle of radius ri (0: a point) at si on body i against
 *                             the ground line through p0 with unit normal nrm:
 *                             delta = ri - (P_i - p0) . nrm.
 *                             (If i is the ground and j a body, the circle (sj, rj)
 *                             on body j is used instead.)
 *   MB_FORCE_CONTACT_CIRCLES  circles (si, ri) on i and (sj, rj) on j (either may be
 *                             the ground): delta = ri + rj - |P_j - P_i|.
 * Law:  F = K delta^e + cd delta'  for delta > 0, else 0,
 *       clamped to F >= 0: when the damping term would make the contact pull
 *       (F < 0, separating fast) the force is zero, as are its derivatives.
 * The force acts along the gap gradient, Q = -F d(delta)/dq (it pushes the bodies
 * apart); potential V = K delta^(e+1) / (e+1) for delta > 0 (damping is not part of it).
 * Derivatives:  Q_q = -g (K e delta^(e-1) g + cd H qd)' - F H,  Q_qd = -cd g g',
 * with g = d(delta)/dql and H = d^2(delta)/dql^2.
 * At delta = 0 the law is continuous (e > 0) but Q_q jumps; exponents e < 1
 * make Q_q unbounded at first contact.
 */
#include <math.h>
#include <string.h>
#include "assemble.h"
#include "status.h"

/* gap, its gradient g and (when H != NULL) Hessian H in local coordinates */
static void gap_geom(const mb_planar_force *F, const mb_pair *p, double *delta, double g[6],
                     double H[6][6])
{
    memset(g, 0, 6 * sizeof(double));
    if (H) memset(H, 0, 36 * sizeof(double));
    if (F->type == MB_FORCE_CONTACT_LINE) {
        int o = (F->i >= 0 || F->j < 0) ? 0 : 3;
        const double *s = o == 0 ? F->si : F->sj;
        double rad = o == 0 ? F->ri : F->rj;
        double c = o == 0 ? p->ci : p->cj, sn = o == 0 ? p->si : p->sj;
        double u[2] = {c * s[0] - sn * s[1], sn * s[0] + c * s[1]};
        const double *n = F->nrm;
        double P[2] = {p->q[o] + u[0], p->q[o + 1] + u[1]};
        *delta = rad - ((P[0] - F->p0[0]) * n[0] + (P[1] - F->p0[1]) * n[1]);
        g[o] = -n[0];
        g[o + 1] = -n[1];
        g[o + 2] = -(n[0] * -u[1] + n[1] * u[0]);  /* -n . perp(u) */
        if (H) H[o + 2][o + 2] = n[0] * u[0] + n[1] * u[1];
    } else {
        double l, gl[6], Hl[6][6];
        mb_point_pair_geom(p, F->si, F->sj, &l, gl, H ? Hl : NULL);
        *delta = F->ri + F->rj - l;
        for (int a = 0; a < 6; a++) g[a] = -gl[a];
        if (H)
            for (int a = 0; a < 6; a++)
                for (int b = 0; b < 6; b++) H[a][b] = -Hl[a][b];
    }
}

double mb_contact_gap(const mb_planar_force *F, const mb_pair *p)
{
    double delta, g[6];
    gap_geom(F, p, &delta, g, NULL);
    return delta;
}

int mb_contact_eval(const mb_planar_force *F, double t, const mb_pair *p, unsigned what,
                    mb_force_local *out)
{
    double delta, g[6], H[6][6];
    int need_h = (what & MB_FL_QQ) != 0;
    gap_geom(F, p, &delta, g, need_h ? H : NULL);
    if (!(delta > 0))
        return MB_OK;
    double dd = 0;
    for (int m = 0; m < 6; m++) dd += g[m] * p->qd[m];
    double e = F->e > 0 ? F->e : 1.0;
    double de = pow(delta, e);
    if (what & MB_FL_V)
        out->V = F->K * de * delta / (e + 1);
    double f = F->K * de + F->cd * dd;
    if (!(f > 0))
        return MB_OK;  /* damping would pull: clamped to zero */
    if (what & MB_FL_Q)
        for (int a = 0; a < 6; a++) out->Q[a] = -f * g[a];
    if (what & MB_FL_QQ) {
        double ks = F->K * e * pow(delta, e - 1), dF[6];
        for (int b = 0; b < 6; b++) {
            double s = 0;
            for (int m = 0; m < 6; m++) s += H[b][m] * p->qd[m];
            dF[b] = ks * g[b] + F->cd * s;
        }
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) out->Qq[a][b] = -g[a] * dF[b] - f * H[a][b];
    }
    if (what & MB_FL_QQD)
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) out->Qqd[a][b] = -F->cd * g[a] * g[b];
    return MB_OK;
}
