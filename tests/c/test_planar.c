/* Tests of the planar kernels (csrc/mbs/planar.c, forces.c, contact.c, assemble.c).
 *
 * For every joint type (revolute, translational, distance, fixed, coordinate and
 * angle drivers), each placed between two bodies and between a body and the ground
 * in either slot, at random states:
 *   Phi_q, Phi_t against central differences of Phi;
 *   gamma against its definition -(Phi_q q')_q q' - 2 Phi_qt q' - Phi_tt, each term by
 *   central differences of Phi_q q' and Phi_t;
 *   (Phi_q x)_q, (Phi_q^T lam)_q, gamma_q, gamma_qd against central differences.
 * For every force type (gravity, TSDA with actuator, RSDA with and without wrap,
 * contact point/circle vs ground line, circle vs circle incl. a ground circle,
 * generalized time force, an extra callback force):
 *   Q_q, Q_qd against central differences of Q;  Q = -dV/dq for the conservative
 *   parts (signs of every element);  RSDA wrap (3 pi / 2 == -pi / 2);
 *   the two bouncing balls of the LLM paper (eqs 19-21) reproduced exactly;
 *   contact damping clamp (no pulling force).
 * Agreement is the max-norm relative error of each block, required <= 1e-6.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "assemble.h"
#include "check.h"
#include "model.h"
#include "status.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define NBMAX 4
#define NQMAX (3 * NBMAX)
#define NJMAX 8
#define NFMAX 12
#define NCMAX 24

/* ---- a tiny model builder ---- */
typedef struct tmodel {
    mb_planar_model m;
    double body[2 * NBMAX];
    mb_planar_joint j[NJMAX];
    mb_planar_force f[NFMAX];
} tmodel;

static void tm_init(tmodel *T, int nb)
{
    memset(T, 0, sizeof *T);
    T->m.nb = nb;
    for (int b = 0; b < nb; b++) {
        T->body[2 * b] = 1.0 + 0.7 * b;
        T->body[2 * b + 1] = 0.3 + 0.2 * b;
    }
    T->m.body = T->body;
    T->m.g[0] = 0.7;
    T->m.g[1] = -9.81;
    T->m.joints = T->j;
    T->m.forces = T->f;
}

static mb_planar_joint *tm_joint(tmodel *T, int type, int i, int j)
{
    mb_planar_joint *J = &T->j[T->m.nj++];
    J->type = type;
    J->i = i;
    J->j = j;
    J->row = T->m.nc;
    T->m.nc += mb_joint_rows(type);
    return J;
}

static mb_planar_force *tm_force(tmodel *T, int type, int i, int j)
{
    mb_planar_force *F = &T->f[T->m.nf++];
    F->type = type;
    F->i = i;
    F->j = j;
    F->e = 1.0;
    return F;
}

/* ---- random numbers (xorshift64*) ---- */
static unsigned long long rng_state = 88172645463325252ULL;
static double urand(void)  /* uniform in (-1, 1) */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    unsigned long long r = rng_state * 2685821657736338717ULL;
    return 2.0 * ((double)(r >> 11) / 9007199254740992.0) - 1.0;
}
static void rand_vec(int n, double *x, double s)
{
    for (int i = 0; i < n; i++) x[i] = s * urand();
}
static mb_timefn rand_timefn(void)
{
    mb_timefn f = {urand(), urand(), 0.5 * urand(), 0.3 + 0.2 * urand(), 2.0 + urand(), urand()};
    return f;
}

/* ---- comparison: max |A - B| / max(|A|, |B|) (absolute when both are ~0) ---- */
static double relerr(int n, const double *A, const double *B)
{
    double d = 0, s = 0;
    for (int i = 0; i < n; i++) {
        d = fmax(d, fabs(A[i] - B[i]));
        s = fmax(s, fmax(fabs(A[i]), fabs(B[i])));
    }
    return s > 1e-8 ? d / s : d;
}

static double fdh(double x) { return cbrt(DBL_EPSILON) * fmax(1.0, fabs(x)); }

/* ---- joints ---- */
static double worst_joint = 0, worst_force = 0;

static void pq_times(mb_planar_model *m, double t, const double *q, const double *x,
                     double *out)  /* out = Phi_q(q, t) x */
{
    int nq = 3 * m->nb, nc = m->nc;
    double P[NCMAX * NQMAX];
    mb_planar_phi_q(t, q, P, nc, m);
    for (int r = 0; r < nc; r++) {
        out[r] = 0;
        for (int c = 0; c < nq; c++) out[r] += P[r + nc * c] * x[c];
    }
}

static void pqT_times(mb_planar_model *m, double t, const double *q, const double *lam,
                      double *out)  /* out = Phi_q^T lam */
{
    int nq = 3 * m->nb, nc = m->nc;
    double P[NCMAX * NQMAX];
    mb_planar_phi_q(t, q, P, nc, m);
    for (int c = 0; c < nq; c++) {
        out[c] = 0;
        for (int r = 0; r < nc; r++) out[c] += P[r + nc * c] * lam[r];
    }
}

/* the fused kernels (mech.h fused_qpg, fused_lin: one pass, trigonometry once per body)
 * against the separate kernels they stand for: the same sums in another order, so
 * agreement to round-off; every output entry is overwritten (garbage before) */
static double worst_fused = 0;
static void check_fused(mb_planar_model *m, const char *label, int nstates,
                        const double *q0, const double *qd0)
{
    int nq = 3 * m->nb, nc = m->nc, N = nq + nc, rcs = 0;
    double e = 0, work[2 * NBMAX];
    CHECK(mb_planar_fused_work(m) == 2 * m->nb, "%s: fused work = 2 nb", label);
    for (int s = 0; s < nstates; s++) {
        double q[NQMAX], qd[NQMAX], a[NQMAX], lam[NCMAX], t = 0.5 + 0.5 * urand();
        double Q1[NQMAX], Q2[NQMAX], P1[NCMAX * NQMAX], P2[NCMAX * NQMAX], g1[NCMAX], g2[NCMAX];
        double Rq[(NQMAX + NCMAX) * NQMAX], Rv[(NQMAX + NCMAX) * NQMAX];
        double Eq[(NQMAX + NCMAX) * NQMAX], Ev[(NQMAX + NCMAX) * NQMAX];
        double Fq[NQMAX * NQMAX], Fv[NQMAX * NQMAX], T1[NQMAX * NQMAX];
        double T2[NCMAX * NQMAX], Gq[NCMAX * NQMAX], Gv[NCMAX * NQMAX];
        rand_vec(nq, q, 2.0);
        rand_vec(nq, qd, 2.0);
        if (q0 && s == 0) {  /* the caller's state first (e.g. contacts closed) */
            memcpy(q, q0, sizeof(double) * nq);
            memcpy(qd, qd0, sizeof(double) * nq);
        }
        rand_vec(nq, a, 3.0);
        rand_vec(nc, lam, 3.0);
        for (int k = 0; k < N * nq; k++) Rq[k] = Rv[k] = 1e300;
        for (int k = 0; k < nc * nq; k++) P1[k] = 1e300;
        rcs |= mb_planar_qpg(t, q, qd, Q1, P1, nc, g1, work, m);
        rcs |= mb_planar_forces(t, q, qd, Q2, m);
        rcs |= mb_planar_phi_q(t, q, P2, nc, m);
        rcs |= mb_planar_gamma(t, q, qd, g2, m);
        e = fmax(e, fmax(relerr(nq, Q1, Q2), fmax(relerr(nc * nq, P1, P2), relerr(nc, g1, g2))));
        rcs |= mb_planar_lin(t, q, qd, a, lam, Rq, Rv, N, work, m);
        rcs |= mb_planar_forces_q(t, q, qd, Fq, nq, m);
        rcs |= mb_planar_forces_qd(t, q, qd, Fv, nq, m);
        rcs |= mb_planar_phiqT_lam_q(t, q, lam, T1, nq, m);
        rcs |= mb_planar_phiq_x_q(t, q, a, T2, nc, m);
        rcs |= mb_planar_gamma_q(t, q, qd, Gq, nc, m);
        rcs |= mb_planar_gamma_qd(t, q, qd, Gv, nc, m);
        for (int c = 0; c < nq; c++) {
            for (int r = 0; r < nq; r++) {
                Eq[r + N * c] = Fq[r + nq * c] - T1[r + nq * c];
                Ev[r + N * c] = Fv[r + nq * c];
            }
            for (int r = 0; r < nc; r++) {
                Eq[nq + r + N * c] = Gq[r + nc * c] - T2[r + nc * c];
                Ev[nq + r + N * c] = Gv[r + nc * c];
            }
        }
        e = fmax(e, fmax(relerr(N * nq, Rq, Eq), relerr(N * nq, Rv, Ev)));
    }
    CHECK(rcs == 0 && e <= 1e-12,
          "%-34s fused Q, Phi_q, gamma and Jacobian blocks = separate kernels (rel. %.1e)",
          label, e);
    worst_fused = fmax(worst_fused, e);
}

static void check_joints(mb_planar_model *m, const char *label, int nstates)
{
    int nq = 3 * m->nb, nc = m->nc;
    double e[8] = {0};
    int rcs = 0;
    for (int s = 0; s < nstates; s++) {
        double q[NQMAX], qd[NQMAX], x[NQMAX], lam[NCMAX], t = 0.5 + 0.5 * urand();
        double A[NCMAX * NQMAX], B[NCMAX * NQMAX], B2[NQMAX * NQMAX], A2[NQMAX * NQMAX];
        double v1[NCMAX], v2[NCMAX], v3[NCMAX], v4[NQMAX], v5[NQMAX], g[NCMAX], gd[NCMAX];
        double qp[NQMAX];
        rand_vec(nq, q, 2.0);
        rand_vec(nq, qd, 2.0);
        rand_vec(nq, x, 1.5);
        rand_vec(nc, lam, 3.0);

        /* Phi_q */
        rcs |= mb_planar_phi_q(t, q, A, nc, m);
        for (int c = 0; c < nq; c++) {
            double h = fdh(q[c]);
            memcpy(qp, q, sizeof(double) * nq);
            qp[c] = q[c] + h;
            mb_planar_phi(t, qp, v1, m);
            qp[c] = q[c] - h;
            mb_planar_phi(t, qp, v2, m);
            for (int r = 0; r < nc; r++) B[r + nc * c] = (v1[r] - v2[r]) / (2 * h);
        }
        e[0] = fmax(e[0], relerr(nc * nq, A, B));

        /* Phi_t */
        double h = fdh(t);
        rcs |= mb_planar_phi_t(t, q, v3, m);
        mb_planar_phi(t + h, q, v1, m);
        mb_planar_phi(t - h, q, v2, m);
        for (int r = 0; r < nc; r++) gd[r] = (v1[r] - v2[r]) / (2 * h);
        e[1] = fmax(e[1], relerr(nc, v3, gd));

        /* gamma = -(Phi_q q')_q q' - 2 Phi_qt q' - Phi_tt, every term by differences */
        rcs |= mb_planar_gamma(t, q, qd, g, m);
        double hs = fdh(1.0);
        for (int r = 0; r < nc; r++) gd[r] = 0;
        for (int sg = -1; sg <= 1; sg += 2) {
            for (int c = 0; c < nq; c++) qp[c] = q[c] + sg * hs * qd[c];
            pq_times(m, t, qp, qd, v1);        /* (Phi_q q')_q q' */
            pq_times(m, t + sg * hs, q, qd, v2); /* Phi_qt q' */
            mb_planar_phi_t(t + sg * hs, q, v3, m); /* Phi_tt */
            for (int r = 0; r < nc; r++) gd[r] -= sg * (v1[r] + 2 * v2[r] + v3[r]) / (2 * hs);
        }
        e[2] = fmax(e[2], relerr(nc, g, gd));

        /* (Phi_q x)_q */
        rcs |= mb_planar_phiq_x_q(t, q, x, A, nc, m);
        for (int c = 0; c < nq; c++) {
            double hc = fdh(q[c]);
            memcpy(qp, q, sizeof(double) * nq);
            qp[c] = q[c] + hc;
            pq_times(m, t, qp, x, v1);
            qp[c] = q[c] - hc;
            pq_times(m, t, qp, x, v2);
            for (int r = 0; r < nc; r++) B[r + nc * c] = (v1[r] - v2[r]) / (2 * hc);
        }
        e[3] = fmax(e[3], relerr(nc * nq, A, B));

        /* (Phi_q^T lam)_q */
        rcs |= mb_planar_phiqT_lam_q(t, q, lam, A2, nq, m);
        for (int c = 0; c < nq; c++) {
            double hc = fdh(q[c]);
            memcpy(qp, q, sizeof(double) * nq);
            qp[c] = q[c] + hc;
            pqT_times(m, t, qp, lam, v4);
            qp[c] = q[c] - hc;
            pqT_times(m, t, qp, lam, v5);
            for (int r = 0; r < nq; r++) B2[r + nq * c] = (v4[r] - v5[r]) / (2 * hc);
        }
        e[4] = fmax(e[4], relerr(nq * nq, A2, B2));

        /* gamma_q, gamma_qd */
        for (int wrt = 0; wrt < 2; wrt++) {
            const double *base = wrt == 0 ? q : qd;
            rcs |= wrt == 0 ? mb_planar_gamma_q(t, q, qd, A, nc, m)
                            : mb_planar_gamma_qd(t, q, qd, A, nc, m);
            for (int c = 0; c < nq; c++) {
                double hc = fdh(base[c]);
                memcpy(qp, base, sizeof(double) * nq);
                qp[c] = base[c] + hc;
                mb_planar_gamma(t, wrt == 0 ? qp : q, wrt == 0 ? qd : qp, v1, m);
                qp[c] = base[c] - hc;
                mb_planar_gamma(t, wrt == 0 ? qp : q, wrt == 0 ? qd : qp, v2, m);
                for (int r = 0; r < nc; r++) B[r + nc * c] = (v1[r] - v2[r]) / (2 * hc);
            }
            e[5 + wrt] = fmax(e[5 + wrt], relerr(nc * nq, A, B));
        }
    }
    const char *names[7] = {"Phi_q", "Phi_t", "gamma (definition)", "(Phi_q x)_q",
                            "(Phi_q^T lam)_q", "gamma_q", "gamma_qd"};
    CHECK(rcs == 0, "%s: kernels return MB_OK", label);
    for (int k = 0; k < 7; k++) {
        CHECK(e[k] <= 1e-6, "%-28s %-18s rel. err %.1e (%d random states)", label, names[k], e[k],
              nstates);
        worst_joint = fmax(worst_joint, e[k]);
    }
    check_fused(m, label, nstates, NULL, NULL);
}

static void test_joint_types(void)
{
    int slots[3][2] = {{0, 1}, {-1, 0}, {1, -1}};
    const char *slotname[3] = {"body-body", "ground-body", "body-ground"};
    char label[96];
    for (int type = MB_JOINT_REVOLUTE; type <= MB_JOINT_DRIVER_ANGLE; type++) {
        for (int s = 0; s < 3; s++) {
            tmodel T;
            tm_init(&T, 2);
            const char *tn = "";
            mb_planar_joint *J;
            if (type == MB_JOINT_DRIVER_COORD) {
                /* coordinate drivers on each coordinate of body 1, then body 0 */
                if (s == 2) continue;
                for (int c = 0; c < 3; c++) {
                    J = tm_joint(&T, type, s == 1 ? 0 : 1, -1);
                    J->coord = c;
                    J->f = rand_timefn();
                }
                tn = "driver (coordinate)";
                snprintf(label, sizeof label, "%s x,y,phi of body %d", tn, s == 1 ? 0 : 1);
                check_joints(&T.m, label, 6);
                continue;
            }
            J = tm_joint(&T, type, slots[s][0], slots[s][1]);
            rand_vec(2, J->si, 1.0);
            rand_vec(2, J->sj, 1.0);
            double a = M_PI * urand();
            J->ni[0] = cos(a);
            J->ni[1] = sin(a);
            J->L = 1.3;
            J->phi0 = urand();
            J->f = rand_timefn();
            switch (type) {
            case MB_JOINT_REVOLUTE: tn = "revolute"; break;
            case MB_JOINT_TRANSLATIONAL: tn = "translational"; break;
            case MB_JOINT_DISTANCE: tn = "distance"; break;
            case MB_JOINT_FIXED: tn = "fixed"; break;
            case MB_JOINT_DRIVER_ANGLE: tn = "driver (angle)"; break;
            }
            snprintf(label, sizeof label, "%s %s", tn, slotname[s]);
            check_joints(&T.m, label, 6);
        }
    }
    /* everything together in one model of 3 bodies (offsets and overlaps) */
    tmodel T;
    tm_init(&T, 3);
    mb_planar_joint *J;
    J = tm_joint(&T, MB_JOINT_REVOLUTE, -1, 0);
    J->si[0] = 0.1; J->sj[0] = -0.5;
    J = tm_joint(&T, MB_JOINT_TRANSLATIONAL, 0, 1);
    J->ni[0] = 0.6; J->ni[1] = 0.8; J->si[1] = 0.2; J->sj[0] = -0.3; J->phi0 = 0.2;
    J = tm_joint(&T, MB_JOINT_DISTANCE, 1, 2);
    J->si[0] = 0.4; J->sj[1] = 0.7; J->L = 0.9;
    J = tm_joint(&T, MB_JOINT_FIXED, 2, 0);
    J->si[0] = 0.3; J->sj[1] = -0.2; J->phi0 = -0.4;
    J = tm_joint(&T, MB_JOINT_DRIVER_COORD, 2, -1);
    J->coord = 1; J->f = rand_timefn();
    J = tm_joint(&T, MB_JOINT_DRIVER_ANGLE, 1, 2);
    J->f = rand_timefn();
    check_joints(&T.m, "all joints, 3 bodies", 10);

    /* values at a configuration that satisfies the revolute joint */
    tm_init(&T, 2);
    J = tm_joint(&T, MB_JOINT_REVOLUTE, 0, 1);
    J->si[0] = 1.0; J->sj[0] = -1.5;
    double q[6] = {1, 0, 0, 2 + 1.5 * cos(-M_PI / 12), 1.5 * sin(-M_PI / 12), -M_PI / 12}, phi[2];
    mb_planar_phi(0.0, q, phi, &T.m);
    CHECK(fabs(phi[0]) < 1e-15 && fabs(phi[1]) < 1e-15, "revolute Phi = 0 at a closed joint");
    /* invalid input is a status, not a crash */
    J->i = 7;
    CHECK(mb_planar_phi(0.0, q, phi, &T.m) == MB_ERR_ILL_INPUT, "unknown body -> MB_ERR_ILL_INPUT");
    J->i = 0;
    J->row = 1;
    CHECK(mb_planar_phi(0.0, q, phi, &T.m) == MB_ERR_ILL_INPUT, "row out of range -> MB_ERR_ILL_INPUT");
}

/* ---- forces ---- */
typedef struct state {
    double q[NQMAX], qd[NQMAX], t;
} state;

static int extra_force(double t, const double *q, const double *qd, double *Q, void *ctx)
{
    (void)ctx;
    Q[0] += sin(q[1]) * qd[0] - 0.3 * qd[2] * qd[2] + t;
    Q[4] += q[0] * q[5] - cos(qd[4]);
    return 0;
}

static void check_forces(mb_planar_model *m, const char *label, const state *st, int ns,
                         int conservative)
{
    int nq = 3 * m->nb, rcs = 0;
    double e[3] = {0};
    for (int s = 0; s < ns; s++) {
        const double *q = st[s].q, *qd = st[s].qd;
        double t = st[s].t;
        double A[NQMAX * NQMAX], B[NQMAX * NQMAX], qp[NQMAX], v1[NQMAX], v2[NQMAX];
        for (int wrt = 0; wrt < 2; wrt++) {
            const double *base = wrt == 0 ? q : qd;
            rcs |= wrt == 0 ? mb_planar_forces_q(t, q, qd, A, nq, m)
                            : mb_planar_forces_qd(t, q, qd, A, nq, m);
            for (int c = 0; c < nq; c++) {
                double h = fdh(base[c]);
                memcpy(qp, base, sizeof(double) * nq);
                qp[c] = base[c] + h;
                rcs |= mb_planar_forces(t, wrt == 0 ? qp : q, wrt == 0 ? qd : qp, v1, m);
                qp[c] = base[c] - h;
                rcs |= mb_planar_forces(t, wrt == 0 ? qp : q, wrt == 0 ? qd : qp, v2, m);
                for (int r = 0; r < nq; r++) B[r + nq * c] = (v1[r] - v2[r]) / (2 * h);
            }
            e[wrt] = fmax(e[wrt], relerr(nq * nq, A, B));
        }
        if (conservative) {  /* Q = -dV/dq */
            double Q[NQMAX], G[NQMAX], T, Vp, Vm;
            rcs |= mb_planar_forces(t, q, qd, Q, m);
            for (int c = 0; c < nq; c++) {
                double h = fdh(q[c]);
                memcpy(qp, q, sizeof(double) * nq);
                qp[c] = q[c] + h;
                mb_planar_energy(t, qp, qd, &T, &Vp, m);
                qp[c] = q[c] - h;
                mb_planar_energy(t, qp, qd, &T, &Vm, m);
                G[c] = -(Vp - Vm) / (2 * h);
            }
            e[2] = fmax(e[2], relerr(nq, Q, G));
        }
    }
    check_fused(m, label, ns, st[0].q, st[0].qd);
    CHECK(rcs == 0, "%s: kernels return MB_OK", label);
    CHECK(e[0] <= 1e-6, "%-34s Q_q  rel. err %.1e", label, e[0]);
    CHECK(e[1] <= 1e-6, "%-34s Q_qd rel. err %.1e", label, e[1]);
    worst_force = fmax(worst_force, fmax(e[0], e[1]));
    if (conservative) {
        CHECK(e[2] <= 1e-6, "%-34s Q = -dV/dq rel. err %.1e", label, e[2]);
        worst_force = fmax(worst_force, e[2]);
    }
}

static void random_states(int nq, state *st, int ns)
{
    for (int s = 0; s < ns; s++) {
        rand_vec(nq, st[s].q, 2.0);
        rand_vec(nq, st[s].qd, 2.0);
        st[s].t = 0.5 + 0.5 * urand();
    }
}

static void test_force_types(void)
{
    int slots[3][2] = {{0, 1}, {-1, 0}, {1, -1}};
    const char *slotname[3] = {"body-body", "ground-body", "body-ground"};
    char label[96];
    state st[6];

    /* gravity alone */
    tmodel T;
    tm_init(&T, 2);
    random_states(6, st, 6);
    check_forces(&T.m, "gravity", st, 6, 1);

    for (int s = 0; s < 3; s++) {
        for (int damped = 0; damped < 2; damped++) {
            /* TSDA (damped: with damper and actuator) */
            tm_init(&T, 2);
            mb_planar_force *F = tm_force(&T, MB_FORCE_TSDA, slots[s][0], slots[s][1]);
            rand_vec(2, F->si, 1.0);
            rand_vec(2, F->sj, 1.0);
            F->k = 50;
            F->L0 = 0.8;
            if (damped) {
                F->c = 3;
                F->fa = rand_timefn();
            }
            random_states(6, st, 6);
            snprintf(label, sizeof label, "TSDA %s%s", slotname[s], damped ? " damped+actuator" : "");
            check_forces(&T.m, label, st, 6, !damped);

            /* RSDA */
            tm_init(&T, 2);
            F = tm_force(&T, MB_FORCE_RSDA, slots[s][0], slots[s][1]);
            F->k = 400;
            F->L0 = 0.3;
            F->c = damped ? 15 : 0;
            F->wrap = damped;  /* wrap also exercised (states keep |theta - theta0| < pi - 0.3) */
            random_states(6, st, 6);
            for (int k = 0; k < 6; k++) {  /* keep away from the wrap discontinuity */
                st[k].q[2] = 0.6 * urand();
                st[k].q[5] = 0.6 * urand();
            }
            snprintf(label, sizeof label, "RSDA %s%s", slotname[s], damped ? " damped, wrap" : "");
            check_forces(&T.m, label, st, 6, !damped);
        }
    }

    /* RSDA wrap: theta0 = 3 pi / 2 acts as -pi / 2 */
    {
        tmodel T1, T2;
        tm_init(&T1, 1);
        tm_init(&T2, 1);
        mb_planar_force *F1 = tm_force(&T1, MB_FORCE_RSDA, -1, 0), *F2 = tm_force(&T2, MB_FORCE_RSDA, -1, 0);
        F1->k = F2->k = 400;
        F1->c = F2->c = 15;
        F1->wrap = F2->wrap = 1;
        F1->L0 = 1.5 * M_PI;
        F2->L0 = -0.5 * M_PI;
        double q[3] = {1, 0, 0.1}, qd[3] = {0, 0, 0.5}, Q1[3], Q2[3], V1, V2, Tk;
        mb_planar_forces(0, q, qd, Q1, &T1.m);
        mb_planar_forces(0, q, qd, Q2, &T2.m);
        mb_planar_energy(0, q, qd, &Tk, &V1, &T1.m);
        mb_planar_energy(0, q, qd, &Tk, &V2, &T2.m);
        double Texp = -(400 * (0.1 + 0.5 * M_PI) + 15 * 0.5);  /* -T on body j */
        CHECK(fabs(Q1[2] - Q2[2]) < 1e-12 && fabs(Q1[2] - Texp) < 1e-9 && fabs(V1 - V2) < 1e-9,
              "RSDA wrap: theta0 = 3pi/2 == -pi/2 (torque %.6f, expected %.6f)", Q1[2], Texp);
    }

    /* contact: circle on body vs ground line (normal not vertical), and point (r = 0) */
    for (int pt = 0; pt < 2; pt++) {
        tm_init(&T, 1);
        mb_planar_force *F = tm_force(&T, MB_FORCE_CONTACT_LINE, 0, -1);
        F->si[0] = 0.2;
        F->si[1] = -0.1;
        F->ri = pt ? 0.0 : 0.3;
        F->p0[0] = 0.1;
        F->p0[1] = -0.4;
        double a = 1.3;
        F->nrm[0] = cos(a);
        F->nrm[1] = sin(a);
        F->K = 1e3;
        F->cd = 0.5;
        F->e = pt ? 1.0 : 1.5;
        for (int k = 0; k < 6; k++) {
            rand_vec(3, st[k].q, 1.0);
            rand_vec(3, st[k].qd, 1.0);
            st[k].t = 0;
            double psi;
            mb_planar_contact_gaps(&T.m, st[k].q, &psi);
            double shift = psi - 0.05;  /* move along the normal to penetration 0.05 */
            st[k].q[0] += shift * F->nrm[0];
            st[k].q[1] += shift * F->nrm[1];
            mb_planar_contact_gaps(&T.m, st[k].q, &psi);
            if (k == 0)
                CHECK(fabs(psi - 0.05) < 1e-12, "contact line gap %.15f", psi);
        }
        snprintf(label, sizeof label, "contact %s vs line (e = %.1f)", pt ? "point" : "circle", F->e);
        check_forces(&T.m, label, st, 6, 0);
        F->cd = 0;
        snprintf(label, sizeof label, "contact %s vs line undamped", pt ? "point" : "circle");
        check_forces(&T.m, label, st, 6, 1);
    }

    /* contact: circle vs circle, body-body and ground circle-body */
    for (int s = 0; s < 2; s++) {
        tm_init(&T, 2);
        int i = s == 0 ? 0 : -1, j = 1;
        mb_planar_force *F = tm_force(&T, MB_FORCE_CONTACT_CIRCLES, i, j);
        F->si[0] = 0.1; F->si[1] = 0.2; F->sj[0] = -0.1;
        F->ri = 0.4; F->rj = 0.3;
        F->K = 1e3; F->cd = 0.5; F->e = 1.5;
        for (int k = 0; k < 6; k++) {
            rand_vec(6, st[k].q, 1.0);
            rand_vec(6, st[k].qd, 1.0);
            st[k].t = 0;
            if (i < 0) st[k].q[0] = st[k].q[1] = st[k].q[2] = 0;
            double ci = cos(st[k].q[2]), si = sin(st[k].q[2]);
            double Pi[2] = {st[k].q[0] + ci * F->si[0] - si * F->si[1],
                            st[k].q[1] + si * F->si[0] + ci * F->si[1]};
            if (i < 0) { Pi[0] = F->si[0]; Pi[1] = F->si[1]; }
            double a = M_PI * urand(), dist = F->ri + F->rj - 0.05;
            double cj = cos(st[k].q[5]), sj = sin(st[k].q[5]);
            st[k].q[3] = Pi[0] + dist * cos(a) - (cj * F->sj[0] - sj * F->sj[1]);
            st[k].q[4] = Pi[1] + dist * sin(a) - (sj * F->sj[0] + cj * F->sj[1]);
        }
        double psi;
        mb_planar_contact_gaps(&T.m, st[0].q, &psi);
        CHECK(fabs(psi - 0.05) < 1e-12, "circle-circle gap %.15f", psi);
        snprintf(label, sizeof label, "contact circles %s", s == 0 ? "body-body" : "ground-body");
        check_forces(&T.m, label, st, 6, 0);
        F->cd = 0;
        snprintf(label, sizeof label, "contact circles %s undamped", s == 0 ? "body-body" : "ground-body");
        check_forces(&T.m, label, st, 6, 1);
    }

    /* generalized time force and an extra (callback) force: Q_q by differences inside */
    tm_init(&T, 2);
    mb_planar_force *F = tm_force(&T, MB_FORCE_GENERALIZED, -1, -1);
    F->coord = 4;
    F->fa = rand_timefn();
    T.m.extra = extra_force;
    random_states(6, st, 6);
    check_forces(&T.m, "generalized f(t) + extra callback", st, 6, 0);
    {
        double Q[6], Q0[6], q[6] = {0}, qd[6] = {0}, f0;
        T.m.extra = NULL;
        mb_planar_forces(0.7, q, qd, Q, &T.m);
        F->coord = 0;
        mb_planar_forces(0.7, q, qd, Q0, &T.m);
        mb_timefn_eval(&F->fa, 0.7, &f0, NULL, NULL);
        CHECK(fabs(Q[4] - (T.body[2] * -9.81 + f0)) < 1e-12 && fabs(Q0[0] - (T.body[0] * 0.7 + f0)) < 1e-12,
              "generalized force adds f(t) at its coordinate");
        F->coord = 6;
        CHECK(mb_planar_forces(0.7, q, qd, Q, &T.m) == MB_ERR_ILL_INPUT,
              "generalized force on coordinate 6 of 6 -> MB_ERR_ILL_INPUT");
    }

    /* all force types together */
    tm_init(&T, 3);
    F = tm_force(&T, MB_FORCE_TSDA, 0, 2);
    F->si[0] = 0.3; F->sj[1] = -0.2; F->k = 30; F->c = 2; F->L0 = 0.5; F->fa = rand_timefn();
    F = tm_force(&T, MB_FORCE_RSDA, 1, 2);
    F->k = 100; F->c = 1; F->L0 = 0.2;
    F = tm_force(&T, MB_FORCE_RSDA, -1, 1);
    F->k = 50; F->c = 2; F->L0 = -0.1;
    F = tm_force(&T, MB_FORCE_GENERALIZED, -1, -1);
    F->coord = 7; F->fa = rand_timefn();
    random_states(9, st, 6);
    for (int k = 0; k < 6; k++)
        for (int b = 0; b < 3; b++) st[k].q[3 * b + 2] = 0.4 * urand();
    check_forces(&T.m, "TSDA + 2 RSDA + generalized, 3 bodies", st, 6, 0);
}

/* ---- the two bouncing balls of the LLM paper, eqs 19-21 ---- */
static void test_bouncing_balls(void)
{
    tmodel T;
    tm_init(&T, 2);
    T.body[0] = T.body[2] = 1.0;  /* unit masses */
    T.m.g[0] = 0;
    T.m.g[1] = -9.81;
    double R = 0.5, K = 1e5;
    /* ball-ball (body 0 above body 1) and ball 2 - ground (line y = 0, normal +y) */
    mb_planar_force *F = tm_force(&T, MB_FORCE_CONTACT_CIRCLES, 0, 1);
    F->ri = F->rj = R;
    F->K = K;
    F = tm_force(&T, MB_FORCE_CONTACT_LINE, 1, -1);
    F->ri = R;
    F->nrm[1] = 1.0;
    F->K = K;
    double cases[4][2] = {{2.0, 1.0}, {1.4, 0.5}, {1.3, 0.49}, {1.6, 0.45}};
    double emax = 0, gmax = 0;
    for (int c = 0; c < 4; c++) {
        double y1 = cases[c][0], y2 = cases[c][1];
        double q[6] = {0, y1, 0, 0, y2, 0}, qd[6] = {0, -1, 0, 0, 0.5, 0}, Q[6], psi[2];
        mb_planar_forces(0, q, qd, Q, &T.m);
        mb_planar_contact_gaps(&T.m, q, psi);
        double P1 = 2 * R - (y1 - y2), P2 = R - y2;           /* eq 19 */
        double F1 = P1 > 0 ? -K * (y1 - y2 - 2 * R) : 0;      /* eq 21 */
        double F2 = P2 > 0 ? -K * (y2 - R) : 0;
        emax = fmax(emax, fmax(fabs(Q[1] - (-9.81 + F1)), fabs(Q[4] - (-9.81 - F1 + F2))));
        emax = fmax(emax, fabs(Q[0]) + fabs(Q[2]) + fabs(Q[3]) + fabs(Q[5]));
        gmax = fmax(gmax, fmax(fabs(psi[0] - P1), fabs(psi[1] - P2)));
    }
    CHECK(emax < 1e-9, "bouncing balls: Q equals LLM eq 21 (max diff %.1e)", emax);
    CHECK(gmax < 1e-15, "bouncing balls: gaps equal Psi of LLM eq 19 (max diff %.1e)", gmax);
    double q[6] = {0, 1.4, 0, 0, 0.5, 0}, qd[6] = {0}, Tk, V;
    mb_planar_energy(0, q, qd, &Tk, &V, &T.m);
    double Vexp = 9.81 * (1.4 + 0.5) + 0.5 * K * 0.1 * 0.1;
    CHECK(fabs(V - Vexp) < 1e-9, "bouncing balls: potential %.6f = gravity + K delta^2/2 (%.6f)", V, Vexp);
}

/* contact damping never pulls */
static void test_contact_clamp(void)
{
    tmodel T;
    tm_init(&T, 1);
    T.m.g[0] = T.m.g[1] = 0;
    mb_planar_force *F = tm_force(&T, MB_FORCE_CONTACT_LINE, 0, -1);
    F->ri = 0.5;
    F->nrm[1] = 1;
    F->K = 1e3;
    F->cd = 100;
    double q[3] = {0, 0.49, 0}, Q[3], Qq[9], Qv[9];
    double qd_in[3] = {0, -1, 0}, qd_out[3] = {0, 1, 0};  /* approaching / separating fast */
    mb_planar_forces(0, q, qd_in, Q, &T.m);
    CHECK(fabs(Q[1] - (1e3 * 0.01 + 100 * 1)) < 1e-9, "contact: K delta + c delta' while approaching (%.3f)", Q[1]);
    mb_planar_forces(0, q, qd_out, Q, &T.m);
    mb_planar_forces_q(0, q, qd_out, Qq, 3, &T.m);
    mb_planar_forces_qd(0, q, qd_out, Qv, 3, &T.m);
    double s = 0;
    for (int k = 0; k < 9; k++) s += fabs(Qq[k]) + fabs(Qv[k]);
    CHECK(Q[1] == 0 && s == 0, "contact: damping would pull -> force and derivatives clamped to 0");
    q[1] = 0.51;
    mb_planar_forces(0, q, qd_in, Q, &T.m);
    CHECK(Q[1] == 0, "contact: no force without penetration");
}

/* TSDA direction and sign; the mb_mech table */
static void test_tsda_sign_and_mech(void)
{
    tmodel T;
    tm_init(&T, 1);
    T.m.g[0] = T.m.g[1] = 0;
    mb_planar_force *F = tm_force(&T, MB_FORCE_TSDA, -1, 0);
    F->k = 10;
    F->L0 = 1;
    double q[3] = {3, 0, 0}, qd[3] = {0}, Q[3];
    mb_planar_forces(0, q, qd, Q, &T.m);
    CHECK(fabs(Q[0] + 20) < 1e-12 && fabs(Q[1]) < 1e-12,
          "TSDA in tension pulls the body towards the ground point (Q_x = %.3f)", Q[0]);
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    CHECK(me.nq == 3 && me.nc == 0 && me.mass_constant && me.mass && me.forces && me.phi &&
          me.phi_q && me.phi_t && me.gamma && me.forces_q && me.forces_qd && me.phiq_x_q &&
          me.phiqT_lam_q && me.gamma_q && me.gamma_qd && me.energy,
          "mb_planar_mech fills every kernel");
    double Q2[3];
    me.forces(0, q, qd, Q2, me.ctx);
    CHECK(Q2[0] == Q[0], "mb_mech forces = mb_planar_forces");
}

/* ---- continuous collision detection: the step bound against closed forms ---- */

/* relative error, with inf == inf */
static double rel_err(double a, double b)
{
    if (isinf(a) || isinf(b))
        return a == b ? 0.0 : INFINITY;
    return fabs(a - b) / fabs(b);
}

/* bound of a model of circles i (at qi, radius 0.1) and j (body 1 or the ground) */
static double circles_bound(int j_ground, const double qj[3], const double vj[3],
                            const double aj[3], const double sj[2])
{
    tmodel T;
    tm_init(&T, 2);
    mb_planar_force *F = tm_force(&T, MB_FORCE_CONTACT_CIRCLES, 0, j_ground ? -1 : 1);
    F->ri = F->rj = 0.1;
    F->K = 1e5;
    if (sj) {
        F->sj[0] = sj[0];
        F->sj[1] = sj[1];
    }
    double q[6] = {0, 0, 0.3, qj[0], qj[1], qj[2]}, qd[6] = {0, 0, 0, vj[0], vj[1], vj[2]};
    double qdd[6] = {0, 0, 0, aj[0], aj[1], aj[2]}, h = -1;
    if (j_ground) {  /* the circle sits on body 0 instead: swap roles, ground circle at qj */
        F->i = -1;
        F->j = 0;
        F->si[0] = qj[0];
        F->si[1] = qj[1];
        memcpy(q, (double[6]){0, 0, 0.3, 0, 0, 0}, sizeof q);
        for (int k = 0; k < 3; k++) { qd[k] = -vj[k]; qdd[k] = -aj[k]; }
    }
    int rc = mb_planar_step_bound(0.0, q, qd, qdd, &h, &T.m);
    return rc == MB_OK ? h : NAN;
}

static void test_step_bound(void)
{
    const double g = 9.81, R = 0.2, z[3] = {0, 0, 0};
    /* head-on at 2 m/s from 1 m: the step ends where |d| = 3/4 R */
    double h = circles_bound(0, (double[3]){1, 0, 0}, (double[3]){-2, 0, 0}, z, NULL);
    CHECK(rel_err(h, (1 - 0.75 * R) / 2) < 1e-12, "step bound: head-on, %.15g = (1 - 3R/4)/v", h);
    /* the same against a circle of the ground (roles swapped, relative motion equal) */
    double hg = circles_bound(1, (double[3]){1, 0, 0}, (double[3]){-2, 0, 0}, z, NULL);
    CHECK(rel_err(hg, h) < 1e-12, "step bound: a ground circle gives the same (%.15g)", hg);
    /* falling from rest onto a circle below, a = -g: 1 - g tau^2 / 2 = 3/4 R */
    h = circles_bound(0, (double[3]){0, 1, 0}, z, (double[3]){0, -g, 0}, NULL);
    double tf = sqrt(2 * (1 - 0.75 * R) / g);
    CHECK(rel_err(h, tf) < 1e-9, "step bound: falling from rest, %.15g = sqrt(2 (1 - 3R/4) / g)", h);
    /* thrown up against gravity: the model turns back before the contact (no bound),
     * or reaches it and returns (the bound at 3/4 R on the way in) */
    h = circles_bound(0, (double[3]){0, 1, 0}, (double[3]){0, -2, 0}, (double[3]){0, 3, 0}, NULL);
    CHECK(isinf(h), "step bound: decelerated before the contact (%g)", h);
    h = circles_bound(0, (double[3]){0, 1, 0}, (double[3]){0, -4, 0}, (double[3]){0, 3, 0}, NULL);
    double tq = (4 - sqrt(16 - 2 * 3 * (1 - 0.75 * R))) / 3;  /* 1 - 4 t + 3/2 t^2 = 3R/4 */
    CHECK(rel_err(h, tq) < 1e-9, "step bound: decelerated pass, %.15g = %.15g", h, tq);
    /* oblique passes, impact parameter b: the closest approach tau = 0.5 when
     * 3/4 R <= b < 1.1 R, the depth 3/4 R when b < 3/4 R, no bound when b >= 1.1 R */
    h = circles_bound(0, (double[3]){1, 0.17, 0}, (double[3]){-2, 0, 0}, z, NULL);
    CHECK(rel_err(h, 0.5) < 1e-12, "step bound: pass at b = 0.85 R ends at the closest point (%.15g)", h);
    h = circles_bound(0, (double[3]){1, 0.21, 0}, (double[3]){-2, 0, 0}, z, NULL);
    CHECK(rel_err(h, 0.5) < 1e-12, "step bound: near miss at b = 1.05 R too (%.15g)", h);
    h = circles_bound(0, (double[3]){1, 0.23, 0}, (double[3]){-2, 0, 0}, z, NULL);
    CHECK(isinf(h), "step bound: a miss at b = 1.15 R is not bounded (%g)", h);
    h = circles_bound(0, (double[3]){1, 0.1, 0}, (double[3]){-2, 0, 0}, z, NULL);
    double te = (1 - sqrt(0.75 * R * 0.75 * R - 0.01)) / 2;
    CHECK(rel_err(h, te) < 1e-9, "step bound: pass at b = R/2 ends 3/4 R from the centre (%.15g)", h);
    h = circles_bound(0, (double[3]){1, 0, 0}, (double[3]){2, 0, 0}, z, NULL);
    CHECK(isinf(h), "step bound: receding pair, no bound (%g)", h);
    /* in contact: relative displacement half of max(|d|, R/4) */
    h = circles_bound(0, (double[3]){0.18, 0, 0}, (double[3]){-1, 0, 0}, z, NULL);
    CHECK(rel_err(h, 0.09) < 1e-12, "step bound: in contact, |v| h = |d| / 2 (%.15g)", h);
    h = circles_bound(0, (double[3]){0.01, 0, 0}, (double[3]){-1, 0, 0}, z, NULL);
    CHECK(rel_err(h, 0.025) < 1e-12, "step bound: near the centre, |v| h = R / 8 (%.15g)", h);
    /* a circle off the centre of a rotating body: the same bound as the translating
     * circle with the point's velocity omega perp(A s) and acceleration -omega^2 A s */
    /* phi = pi/2: A s = (0, 0.5), the circle at (0.6, 0.1); omega = 2: velocity
     * (-1, 0) + 2 (-0.5, 0), acceleration -4 (0, 0.5) */
    double sj[2] = {0.5, 0};
    double hr = circles_bound(0, (double[3]){0.6, -0.4, M_PI / 2}, (double[3]){-1, 0, 2}, z, sj);
    double ht = circles_bound(0, (double[3]){0.6, 0.1, 0}, (double[3]){-2, 0, 0},
                              (double[3]){0, -2, 0}, NULL);
    CHECK(rel_err(hr, ht) < 1e-9 && isfinite(ht), "step bound: rotating body %.15g = translating %.15g", hr, ht);

    /* lines: a ball (r = 0.1) falling onto the ground ends r/4 deep */
    tmodel T;
    tm_init(&T, 1);
    mb_planar_force *F = tm_force(&T, MB_FORCE_CONTACT_LINE, 0, -1);
    F->ri = 0.1;
    F->nrm[1] = 1.0;
    F->K = 1e5;
    double q[3] = {0, 1, 0}, qd[3] = {0, -3, 0}, qdd[3] = {0, -g, 0};
    mb_planar_step_bound(0, q, qd, qdd, &h, &T.m);
    double tl = (-3 + sqrt(9 + 2 * g * (1 - 0.075))) / g;  /* 1 - 3 t - g t^2/2 = 0.075 */
    CHECK(rel_err(h, tl) < 1e-12, "step bound: ball onto the ground, %.15g = %.15g", h, tl);
    q[1] = 0.09;
    mb_planar_step_bound(0, q, qd, qdd, &h, &T.m);
    CHECK(isinf(h), "step bound: a circle in contact with a line is not bounded (%g)", h);
    /* a point (r = 0) that moves down but accelerates up dips below the line and comes
     * back when its lowest clearance 0.1 - vn^2 / (2 an) < 0: bound at its lowest point */
    F->ri = 0;
    q[1] = 0.1;
    qd[1] = -1;
    qdd[1] = 4;
    mb_planar_step_bound(0, q, qd, qdd, &h, &T.m);
    CHECK(rel_err(h, 0.25) < 1e-12, "step bound: a dipping point ends at its lowest point (%.15g)", h);
    qdd[1] = 20;
    mb_planar_step_bound(0, q, qd, qdd, &h, &T.m);
    CHECK(isinf(h), "step bound: a point turning back above the line is not bounded (%g)", h);
    qdd[1] = -g;
    mb_planar_step_bound(0, q, qd, qdd, &h, &T.m);
    CHECK(isinf(h), "step bound: a point that stays in once in is not bounded (%g)", h);

    /* the model's bound is the smallest over its contacts; the mech table has it only
     * with contacts */
    tmodel B;
    tm_init(&B, 2);
    mb_mech me;
    mb_planar_mech(&B.m, &me);
    CHECK(me.step_bound == NULL, "mb_planar_mech: no contacts, no step bound");
    F = tm_force(&B, MB_FORCE_CONTACT_CIRCLES, 0, 1);
    F->ri = F->rj = 0.1;
    F = tm_force(&B, MB_FORCE_CONTACT_LINE, 1, -1);
    F->ri = 0.1;
    F->nrm[1] = 1.0;
    mb_planar_mech(&B.m, &me);
    double qb[6] = {0, 2, 0, 0, 1, 0}, vb[6] = {0, -2, 0, 0, 2, 0}, ab[6] = {0, -g, 0, 0, -g, 0};
    me.step_bound(0, qb, vb, ab, &h, me.ctx);
    CHECK(rel_err(h, (1 - 0.75 * R) / 4) < 1e-12, "mb_mech step_bound: the balls' bound %.15g", h);
}

int main(void)
{
    test_joint_types();
    test_force_types();
    test_bouncing_balls();
    test_contact_clamp();
    test_tsda_sign_and_mech();
    test_step_bound();
    printf("worst relative error: joints %.1e, forces %.1e, fused vs separate %.1e\n",
           worst_joint, worst_force, worst_fused);
    return check_summary();
}
