#ifndef MB_TESTS_PLANAR_FIXTURE_H
#define MB_TESTS_PLANAR_FIXTURE_H
/* Planar test models for the C tests of the formulations (test_index1.c,
 * test_statespace.c, test_dae.c): a model in fixed-size tables (tmodel), its joints and
 * forces added one by one, the consistent state of a chain of bars, the RN double
 * pendulum and a rheonomic (driven) mechanism.  NBMAX, NQMAX
 * and NMAX may be defined before inclusion (default 3 bodies). */
#include <math.h>
#include <string.h>
#include "model.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#ifndef NBMAX
#define NBMAX 3
#endif
#ifndef NQMAX
#define NQMAX (3 * NBMAX)
#endif
#ifndef NMAX
#define NMAX (2 * NQMAX)
#endif

typedef struct tmodel {
    mb_planar_model m;
    double body[2 * NBMAX];
    mb_planar_joint j[8];
    mb_planar_force f[8];
} tmodel;

static inline void tm_init(tmodel *T, int nb)
{
    memset(T, 0, sizeof *T);
    T->m.nb = nb;
    T->m.body = T->body;
    T->m.g[1] = -9.81;
    T->m.joints = T->j;
    T->m.forces = T->f;
}

static inline mb_planar_joint *tm_joint(tmodel *T, int type, int i, int j)
{
    mb_planar_joint *J = &T->j[T->m.nj++];
    J->type = type;
    J->i = i;
    J->j = j;
    J->row = T->m.nc;
    T->m.nc += mb_joint_rows(type);
    return J;
}

static inline mb_planar_force *tm_force(tmodel *T, int type, int i, int j)
{
    mb_planar_force *F = &T->f[T->m.nf++];
    F->type = type;
    F->i = i;
    F->j = j;
    F->e = 1.0;
    return F;
}

/* a chain of bars hanging from a ground pin at the origin: body k has its pin at
 * (-a_k, 0) and the next joint at (b_k, 0) in its frame; angles th, rates w */
static inline void chain_state(int nb, const double *a, const double *b, const double *th,
                        const double *w, double *q, double *qd)
{
    double P[2] = {0, 0}, V[2] = {0, 0};
    for (int k = 0; k < nb; k++) {
        double c = cos(th[k]), s = sin(th[k]);
        double u[2] = {-a[k] * c, -a[k] * s};  /* A (-a, 0) */
        q[3 * k] = P[0] - u[0];
        q[3 * k + 1] = P[1] - u[1];
        q[3 * k + 2] = th[k];
        qd[3 * k] = V[0] + u[1] * w[k];   /* V - perp(u) w */
        qd[3 * k + 1] = V[1] - u[0] * w[k];
        qd[3 * k + 2] = w[k];
        double un[2] = {b[k] * c, b[k] * s};
        P[0] = q[3 * k] + un[0];
        P[1] = q[3 * k + 1] + un[1];
        V[0] = qd[3 * k] - un[1] * w[k];
        V[1] = qd[3 * k + 1] + un[0] * w[k];
    }
}

/* double pendulum of two bars: pins at (-a_k, 0), joint at (b_0, 0) */
static inline void build_double(tmodel *T, const double *mass, const double *J, const double *a,
                         const double *b)
{
    tm_init(T, 2);
    for (int k = 0; k < 2; k++) {
        T->body[2 * k] = mass[k];
        T->body[2 * k + 1] = J[k];
    }
    mb_planar_joint *R = tm_joint(T, MB_JOINT_REVOLUTE, -1, 0);
    R->sj[0] = -a[0];
    R = tm_joint(T, MB_JOINT_REVOLUTE, 0, 1);
    R->si[0] = b[0];
    R->sj[0] = -a[1];
}

/* the RN paper's double pendulum (section 5.1): uniform bars of length 2 and 3 (L1 = 1, L2 = 1.5 joint to CM) */
static const double RN_M[2] = {3, 0.3}, RN_J[2] = {3 * 4.0 / 12, 0.3 * 9.0 / 12};
static const double RN_A[2] = {1, 1.5}, RN_B[2] = {1, 1.5};
static inline void build_rn(tmodel *T, double k1, double c1, double k2, double c2)
{
    build_double(T, RN_M, RN_J, RN_A, RN_B);
    mb_planar_force *F = tm_force(T, MB_FORCE_RSDA, -1, 0);
    F->k = k1;
    F->c = c1;
    F->L0 = 1.5 * M_PI;  /* printed 3 pi / 2, acting on the wrapped difference (= -pi/2) */
    F->wrap = 1;
    F = tm_force(T, MB_FORCE_RSDA, 0, 1);
    F->k = k2;
    F->c = c2;
    F->L0 = 0;
    F->wrap = 1;
}
static inline void rn_state(double *q, double *qd)
{
    double th[2] = {0, -M_PI / 12}, w[2] = {0, 10};
    chain_state(2, RN_A, RN_B, th, w, q, qd);
}

/* a rheonomic mechanism: a carrier driven in x, y and angle, a pendulum on it,
 * a spring to the ground */
static inline void build_driven(tmodel *T)
{
    tm_init(T, 2);
    T->body[0] = 2; T->body[1] = 0.5; T->body[2] = 0.7; T->body[3] = 0.1;
    mb_planar_joint *J = tm_joint(T, MB_JOINT_DRIVER_COORD, 0, -1);
    J->coord = 0;
    J->f = (mb_timefn){0, 0.1, 0, 0.2, 2.0, 0};
    J = tm_joint(T, MB_JOINT_DRIVER_COORD, 0, -1);
    J->coord = 1;
    J->f = (mb_timefn){0.1, 0, 0.05, 0, 0, 0};
    J = tm_joint(T, MB_JOINT_DRIVER_ANGLE, -1, 0);
    J->f = (mb_timefn){0, 0.3, 0, 0.1, 3.0, 0.5};
    J = tm_joint(T, MB_JOINT_REVOLUTE, 0, 1);
    J->si[0] = 0.1;
    J->sj[0] = -0.6;
    J->sj[1] = 0.05;
    mb_planar_force *F = tm_force(T, MB_FORCE_TSDA, -1, 1);
    F->si[0] = 1;
    F->sj[0] = 0.3;
    F->k = 20;
    F->c = 0.5;
    F->L0 = 0.5;
}

#endif
