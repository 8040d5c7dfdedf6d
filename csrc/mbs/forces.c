/* Planar force elements on a body pair (assemble.h): translational and rotational
 * spring-damper-actuators, with their generalized forces Q, Q_q, Q_qd and
 * potential energies.  Gravity and generalized time forces are global (assemble.c).
 *
 * TSDA: l = |P_j - P_i| (P = r + A s'), l' = dl/dq qd,
 *       F = k (l - L0) + c l' + fa(t)   (tension positive: pulls the points together),
 *       Q = -F dl/dq,  V = k/2 (l - L0)^2  (fa and c do no conservative work).
 *       At l = 0 the direction is undefined: the element then contributes nothing.
 * RSDA: theta = phi_j - phi_i (phi = 0 for the ground), T = k (theta - theta0) + c theta',
 *       with (theta - theta0) wrapped to (-pi, pi] when wrap;
 *       Q_phi_i = +T, Q_phi_j = -T (a restoring torque), V = k/2 (theta - theta0)^2.
 */
#include <math.h>
#include <string.h>
#include "assemble.h"
#include "status.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum { PI_ = 2, PJ_ = 5 };

int mb_force_is_pair(int type)
{
    return type == MB_FORCE_TSDA || type == MB_FORCE_RSDA || type == MB_FORCE_CONTACT_LINE ||
           type == MB_FORCE_CONTACT_CIRCLES;
}

int mb_force_is_contact(int type)
{
    return type == MB_FORCE_CONTACT_LINE || type == MB_FORCE_CONTACT_CIRCLES;
}

/* TSDA with coincident points (l = 0): the direction is undefined, so the force is 0
 * by convention; the potential is still k/2 L0^2, and with L0 = 0 the elastic force
 * -k D' d is smooth there with stiffness -k D' D (the damper and actuator have no
 * direction and contribute nothing). */
static void tsda_coincident(const mb_planar_force *F, const mb_pair *p, unsigned what,
                            mb_force_local *out)
{
    if ((what & MB_FL_QQ) && F->L0 == 0.0) {
        double ui[2], uj[2], d[2], D[6][2];
        mb_pair_d(p, F->si, F->sj, ui, uj, d, D);
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++)
                out->Qq[a][b] = -F->k * (D[a][0] * D[b][0] + D[a][1] * D[b][1]);
    }
    if (what & MB_FL_V)
        out->V = 0.5 * F->k * F->L0 * F->L0;
}

static int tsda(const mb_planar_force *F, double t, const mb_pair *p, unsigned what,
                mb_force_local *out)
{
    double l, g[6], Hl[6][6];
    int need_h = (what & MB_FL_QQ) != 0;
    if (mb_point_pair_geom(p, F->si, F->sj, &l, g, need_h ? Hl : NULL)) {
        tsda_coincident(F, p, what, out);
        return MB_OK;
    }
    double ld = 0, fa;
    for (int m = 0; m < 6; m++) ld += g[m] * p->qd[m];
    mb_timefn_eval(&F->fa, t, &fa, NULL, NULL);
    double f = F->k * (l - F->L0) + F->c * ld + fa;
    if (what & MB_FL_Q)
        for (int a = 0; a < 6; a++) out->Q[a] = -f * g[a];
    if (what & MB_FL_QQ) {
        double dF[6];  /* dF/dql = k g + c Hl qd */
        for (int b = 0; b < 6; b++) {
            double s = 0;
            for (int m = 0; m < 6; m++) s += Hl[b][m] * p->qd[m];
            dF[b] = F->k * g[b] + F->c * s;
        }
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) out->Qq[a][b] = -g[a] * dF[b] - f * Hl[a][b];
    }
    if (what & MB_FL_QQD)
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) out->Qqd[a][b] = -F->c * g[a] * g[b];
    if (what & MB_FL_V)
        out->V = 0.5 * F->k * (l - F->L0) * (l - F->L0);
    return MB_OK;
}

/* x wrapped to (-pi, pi] */
static double wrap_pi(double x)
{
    return x - 2 * M_PI * ceil((x - M_PI) / (2 * M_PI));
}

static int rsda(const mb_planar_force *F, const mb_pair *p, unsigned what, mb_force_local *out)
{
    double delta = p->q[PJ_] - p->q[PI_] - F->L0;
    if (F->wrap) delta = wrap_pi(delta);
    double thd = p->qd[PJ_] - p->qd[PI_];
    double T = F->k * delta + F->c * thd;
    if (what & MB_FL_Q) {
        out->Q[PI_] = T;
        out->Q[PJ_] = -T;
    }
    if (what & MB_FL_QQ) {
        out->Qq[PI_][PI_] = -F->k;
        out->Qq[PI_][PJ_] = F->k;
        out->Qq[PJ_][PI_] = F->k;
        out->Qq[PJ_][PJ_] = -F->k;
    }
    if (what & MB_FL_QQD) {
        out->Qqd[PI_][PI_] = -F->c;
        out->Qqd[PI_][PJ_] = F->c;
        out->Qqd[PJ_][PI_] = F->c;
        out->Qqd[PJ_][PJ_] = -F->c;
    }
    if (what & MB_FL_V)
        out->V = 0.5 * F->k * delta * delta;
    return MB_OK;
}

int mb_force_eval(const mb_planar_force *F, double t, const mb_pair *p, unsigned what,
                  mb_force_local *out)
{
    /* clear only what is asked for, the derivative blocks only on mask x mask (the
     * elements write their nonzeros) */
    unsigned mask = F->type == MB_FORCE_RSDA ? (1u << PI_) | (1u << PJ_) : 0x3Fu;
    out->mask = mask;
    if (what & MB_FL_Q) memset(out->Q, 0, sizeof out->Q);
    if (what & (MB_FL_QQ | MB_FL_QQD))
        for (int a = 0; a < 6; a++) {
            if (!((mask >> a) & 1u)) continue;
            for (int b = 0; b < 6; b++)
                if ((mask >> b) & 1u) {
                    if (what & MB_FL_QQ) out->Qq[a][b] = 0;
                    if (what & MB_FL_QQD) out->Qqd[a][b] = 0;
                }
        }
    out->V = 0;
    switch (F->type) {
    case MB_FORCE_TSDA: return tsda(F, t, p, what, out);
    case MB_FORCE_RSDA: return rsda(F, p, what, out);
    case MB_FORCE_CONTACT_LINE:
    case MB_FORCE_CONTACT_CIRCLES: return mb_contact_eval(F, t, p, what, out);
    default: return MB_ERR_ILL_INPUT;
    }
}
