/* Tests of the spatial kernels (csrc/mbs/spatial.c, spatial_forces.c) from C, under
 * AddressSanitizer when available:
 *
 *  - a model with one row of every constraint type (dot-1, dot-2, point, distance,
 *    a prescribed angle with a time function) and one force of every type (TSDA with
 *    an actuator, RSDA, bushing components, a tire over a bump, a C callback force),
 *    between three bodies and the ground: Phi_q, Phi_t, gamma, (Phi_q x)_q,
 *    (Phi_q^T lam)_q, gamma_q, gamma_q', Q_q, Q_q', (M x)_q against central
 *    differences of the kernels they differentiate (relative error <= 1e-6);
 *  - the mass matrix is symmetric, p is its null vector in every body's p-block;
 *  - mb_spatial_check refuses a bad element type, a body index out of range, a row
 *    out of range and a non-finite value; mb_spatial_autonomous sees time functions;
 *  - the mb_mech table has the sizes and the analytic kernels.
 * Prints one line per check and "N passed, M failed". */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "mech.h"
#include "spatial.h"
#include "status.h"

#define NB 3
#define NQ (7 * NB)
#define NC (NB + 1 + 1 + 3 + 1 + 1)

static double body[NB * 7] = {
    2.0, 0.3, 0.4, 0.5, 0.01, 0.02, 0.03,
    1.5, 0.2, 0.25, 0.3, 0.0, 0.0, 0.0,
    1.0, 0.1, 0.15, 0.12, -0.01, 0.0, 0.02,
};

static int cb_force(void *ud, double t, const double *q, const double *qd, double *out6)
{
    (void)ud;
    out6[0] = sin(t) + q[0];
    out6[1] = qd[8];
    out6[2] = q[15] * q[16];
    out6[3] = 0.1 * q[3];
    out6[4] = -0.2;
    out6[5] = qd[2];
    return 0;
}

static void setv(double *d, double x, double y, double z) { d[0] = x; d[1] = y; d[2] = z; }

static mb_spatial_con cons[5];
static mb_spatial_force forces[6];
static mb_spatial_cbforce cbs[1];
static mb_spatial_model M;

static void build(void)
{
    memset(cons, 0, sizeof cons);
    memset(forces, 0, sizeof forces);
    int row = NB;
    cons[0].type = MB_SC_DOT1; cons[0].i = 0; cons[0].j = 1;
    setv(cons[0].ai, 1, 0, 0); setv(cons[0].aj, 0, 0.6, 0.8);
    cons[1].type = MB_SC_DOT2; cons[1].i = -1; cons[1].j = 2;
    setv(cons[1].ai, 0, 0, 1); setv(cons[1].si, 0.1, 0.2, 0.0); setv(cons[1].sj, 0.3, -0.1, 0.2);
    cons[1].f.c1 = 0.3; cons[1].f.a = 0.1; cons[1].f.w = 3.0;
    cons[2].type = MB_SC_POINT; cons[2].i = 1; cons[2].j = 2;
    setv(cons[2].si, 0.2, 0.1, -0.3); setv(cons[2].sj, -0.1, 0.0, 0.25);
    cons[3].type = MB_SC_DIST; cons[3].i = 0; cons[3].j = 2;
    setv(cons[3].si, 0.1, 0.0, 0.0); setv(cons[3].sj, 0.0, 0.2, 0.1);
    cons[3].f.c0 = 0.7; cons[3].f.c2 = 0.1;
    cons[4].type = MB_SC_ANGLE; cons[4].i = 0; cons[4].j = 1;
    setv(cons[4].ai, 1, 0, 0); setv(cons[4].bi, 0, 1, 0); setv(cons[4].aj, 0.6, 0.8, 0);
    cons[4].f.c1 = 0.5; cons[4].f.a = 0.2; cons[4].f.w = 2.0; cons[4].f.psi = 0.3;
    for (int k = 0; k < 5; k++) {
        cons[k].row = row;
        row += mb_spatial_con_rows(cons[k].type);
    }
    forces[0].type = MB_SF_TSDA; forces[0].i = 0; forces[0].j = 1;
    setv(forces[0].si, 0.1, 0.2, 0.0); setv(forces[0].sj, 0.5, 0.0, 0.3);
    forces[0].k = 300; forces[0].c = 7; forces[0].L0 = 0.3;
    forces[0].fa.c0 = 1.0; forces[0].fa.a = 0.5; forces[0].fa.w = 4.0;
    forces[1].type = MB_SF_RSDA; forces[1].i = 1; forces[1].j = 2;
    setv(forces[1].ai, 1, 0, 0); setv(forces[1].bi, 0, 1, 0); setv(forces[1].aj, 0.8, 0.6, 0);
    forces[1].k = 40; forces[1].c = 3; forces[1].L0 = 0.2;
    forces[2].type = MB_SF_BUSHING_T; forces[2].i = -1; forces[2].j = 0;
    setv(forces[2].ai, 0, 0.6, 0.8); setv(forces[2].si, 0.2, 0.1, 0.0);
    setv(forces[2].sj, 0.0, 0.1, 0.05);
    forces[2].k = 1e3; forces[2].c = 10;
    forces[3].type = MB_SF_BUSHING_R; forces[3].i = 0; forces[3].j = 2;
    setv(forces[3].ai, 1, 0, 0); setv(forces[3].bi, 0, 1, 0);
    setv(forces[3].aj, 1, 0, 0); setv(forces[3].bj, 0, 1, 0);
    forces[3].k = 50; forces[3].c = 0.5;
    forces[4].type = MB_SF_TIRE; forces[4].i = 2; forces[4].j = -1;
    setv(forces[4].si, 0.1, 0.0, -0.1);
    forces[4].k = 2e4; forces[4].c = 300; forces[4].L0 = 0.5;
    forces[4].bump_x = 0.75; forces[4].bump_r = 0.05; forces[4].wheel_r = 0.3;
    cbs[0].body = 1; setv(cbs[0].s, 0.1, 0.2, 0.3); cbs[0].fn = cb_force; cbs[0].ud = NULL;
    memset(&M, 0, sizeof M);
    M.nb = NB;
    M.body = body;
    setv(M.g, 0.3, -0.2, -9.81);
    M.ncon = 5;
    M.cons = cons;
    M.nc = row;
    M.nf = 5;
    M.forces = forces;
    M.ncb = 1;
    M.cb = cbs;
}

/* a deterministic, not consistent state: bodies near (0.6 k, 0.1, 0.4), unit-ish p */
static void state(double *q, double *qd, double *x, double *lam)
{
    unsigned s = 12345u;
    for (int k = 0; k < NQ; k++) {
        s = s * 1103515245u + 12345u;
        double r = ((s >> 8) & 0xffff) / 65535.0 - 0.5;
        int c = k % 7;
        q[k] = c < 3 ? (c == 0 ? 0.6 * (k / 7) : 0.3) + 0.2 * r : (c == 3 ? 0.9 : 0.3) + 0.2 * r;
        qd[k] = 2.0 * r + 0.1 * c;
        x[k] = r - 0.25 * c / 7.0;
    }
    for (int k = 0; k < NC; k++) lam[k] = 0.3 * k - 1.0;
}

static double relerr(const double *a, const double *b, int n)
{
    double d = 0, s = 0;
    for (int k = 0; k < n; k++) {
        d = fmax(d, fabs(a[k] - b[k]));
        s = fmax(s, fabs(b[k]));
    }
    return d / fmax(s, 1e-12);
}

/* vector-valued f(z) of n outputs at z of size m: central differences, column-major */
typedef void (*vfun)(const double *z, double *out);
static void cd(vfun f, const double *z0, int m, int n, double h, double *J)
{
    double z[2 * NQ + 1], a[NQ * NQ], b[NQ * NQ];
    for (int j = 0; j < m; j++) {
        memcpy(z, z0, (size_t)m * sizeof(double));
        z[j] = z0[j] + h;
        f(z, a);
        z[j] = z0[j] - h;
        f(z, b);
        for (int i = 0; i < n; i++) J[i + (ptrdiff_t)n * j] = (a[i] - b[i]) / (2 * h);
    }
}

static double T0 = 0.37;
static double Q0[NQ], QD0[NQ], X0[NQ], LAM0[NC];

static void f_phi(const double *q, double *o) { mb_spatial_phi(T0, q, o, &M); }
static void f_phi_time(const double *t, double *o) { mb_spatial_phi(t[0], Q0, o, &M); }
static void f_vel(const double *s, double *o)
{   /* Phi_q(t + s, q + s qd) qd + Phi_t(t + s, q + s qd) */
    double q[NQ], P[NC * NQ], pt[NC];
    for (int k = 0; k < NQ; k++) q[k] = Q0[k] + s[0] * QD0[k];
    mb_spatial_phi_q(T0 + s[0], q, P, NC, &M);
    mb_spatial_phi_t(T0 + s[0], q, pt, &M);
    for (int i = 0; i < NC; i++) {
        o[i] = pt[i];
        for (int j = 0; j < NQ; j++) o[i] += P[i + NC * j] * QD0[j];
    }
}
static void f_phiq_x(const double *q, double *o)
{
    double P[NC * NQ];
    mb_spatial_phi_q(T0, q, P, NC, &M);
    for (int i = 0; i < NC; i++) {
        o[i] = 0;
        for (int j = 0; j < NQ; j++) o[i] += P[i + NC * j] * X0[j];
    }
}
static void f_phiqT_lam(const double *q, double *o)
{
    double P[NC * NQ];
    mb_spatial_phi_q(T0, q, P, NC, &M);
    for (int j = 0; j < NQ; j++) {
        o[j] = 0;
        for (int i = 0; i < NC; i++) o[j] += P[i + NC * j] * LAM0[i];
    }
}
static void f_gamma_q(const double *q, double *o) { mb_spatial_gamma(T0, q, QD0, o, &M); }
static void f_gamma_qd(const double *qd, double *o) { mb_spatial_gamma(T0, Q0, qd, o, &M); }
static void f_Q_q(const double *q, double *o) { mb_spatial_forces(T0, q, QD0, o, &M); }
static void f_Q_qd(const double *qd, double *o) { mb_spatial_forces(T0, Q0, qd, o, &M); }
static void f_Mx(const double *q, double *o)
{
    double Mm[NQ * NQ];
    mb_spatial_mass(q, Mm, NQ, &M);
    for (int i = 0; i < NQ; i++) {
        o[i] = 0;
        for (int j = 0; j < NQ; j++) o[i] += Mm[i + NQ * j] * X0[j];
    }
}

static void test_derivatives(void)
{
    static double A[NQ * NQ], B[NQ * NQ];
    double h = 1e-6;
    CHECK(mb_spatial_phi_q(T0, Q0, A, NC, &M) == MB_OK, "phi_q runs");
    cd(f_phi, Q0, NQ, NC, h, B);
    CHECK(relerr(A, B, NC * NQ) < 1e-6, "Phi_q against central differences (%.1e)",
          relerr(A, B, NC * NQ));
    double t[1] = {T0}, pt[NC];
    mb_spatial_phi_t(T0, Q0, pt, &M);
    cd(f_phi_time, t, 1, NC, h, B);
    CHECK(relerr(pt, B, NC) < 1e-6, "Phi_t against central differences (%.1e)", relerr(pt, B, NC));
    double g[NC], s0[1] = {0.0};
    mb_spatial_gamma(T0, Q0, QD0, g, &M);
    cd(f_vel, s0, 1, NC, 1e-5, B);
    for (int i = 0; i < NC; i++) B[i] = -B[i];
    CHECK(relerr(g, B, NC) < 1e-6, "gamma = -d/ds (Phi_q qd + Phi_t) along (qd, 1) (%.1e)",
          relerr(g, B, NC));
    mb_spatial_phiq_x_q(T0, Q0, X0, A, NC, &M);
    cd(f_phiq_x, Q0, NQ, NC, h, B);
    CHECK(relerr(A, B, NC * NQ) < 1e-6, "(Phi_q x)_q (%.1e)", relerr(A, B, NC * NQ));
    mb_spatial_phiqT_lam_q(T0, Q0, LAM0, A, NQ, &M);
    cd(f_phiqT_lam, Q0, NQ, NQ, h, B);
    CHECK(relerr(A, B, NQ * NQ) < 1e-6, "(Phi_q^T lam)_q (%.1e)", relerr(A, B, NQ * NQ));
    mb_spatial_gamma_q(T0, Q0, QD0, A, NC, &M);
    cd(f_gamma_q, Q0, NQ, NC, h, B);
    CHECK(relerr(A, B, NC * NQ) < 1e-6, "gamma_q (third derivatives) (%.1e)",
          relerr(A, B, NC * NQ));
    mb_spatial_gamma_qd(T0, Q0, QD0, A, NC, &M);
    cd(f_gamma_qd, QD0, NQ, NC, h, B);
    CHECK(relerr(A, B, NC * NQ) < 1e-6, "gamma_qd (%.1e)", relerr(A, B, NC * NQ));
    mb_spatial_forces_q(T0, Q0, QD0, A, NQ, &M);
    cd(f_Q_q, Q0, NQ, NQ, h, B);
    CHECK(relerr(A, B, NQ * NQ) < 1e-6, "Q_q (%.1e)", relerr(A, B, NQ * NQ));
    mb_spatial_forces_qd(T0, Q0, QD0, A, NQ, &M);
    cd(f_Q_qd, QD0, NQ, NQ, h, B);
    CHECK(relerr(A, B, NQ * NQ) < 1e-6, "Q_qd (%.1e)", relerr(A, B, NQ * NQ));
    mb_spatial_mass_x_q(Q0, X0, A, NQ, &M);
    cd(f_Mx, Q0, NQ, NQ, h, B);
    CHECK(relerr(A, B, NQ * NQ) < 1e-6, "(M x)_q (%.1e)", relerr(A, B, NQ * NQ));
}

static void test_mass(void)
{
    static double Mm[NQ * NQ];
    mb_spatial_mass(Q0, Mm, NQ, &M);
    double asym = 0, null = 0;
    for (int i = 0; i < NQ; i++)
        for (int j = 0; j < NQ; j++) asym = fmax(asym, fabs(Mm[i + NQ * j] - Mm[j + NQ * i]));
    for (int b = 0; b < NB; b++)
        for (int i = 0; i < 4; i++) {
            double s = 0;
            for (int j = 0; j < 4; j++) s += Mm[(7 * b + 3 + i) + NQ * (7 * b + 3 + j)] * Q0[7 * b + 3 + j];
            null = fmax(null, fabs(s));
        }
    CHECK(asym < 1e-14, "M(q) symmetric (%.1e)", asym);
    CHECK(null < 1e-13, "4 G^T J G p = 0: p spans the null space of each p-block (%.1e)", null);
}

static void test_check(void)
{
    CHECK(mb_spatial_check(&M) == MB_OK, "the test model passes mb_spatial_check");
    CHECK(!mb_spatial_autonomous(&M), "time functions and a callback: not autonomous");
    mb_spatial_con c = cons[0];
    cons[0].type = 99;
    CHECK(mb_spatial_check(&M) == MB_ERR_ILL_INPUT, "unknown constraint type refused");
    cons[0] = c;
    cons[0].j = NB;
    CHECK(mb_spatial_check(&M) == MB_ERR_ILL_INPUT, "body index out of range refused");
    cons[0] = c;
    cons[0].row = NC;
    CHECK(mb_spatial_check(&M) == MB_ERR_ILL_INPUT, "row out of range refused");
    cons[0] = c;
    cons[0].ai[1] = NAN;
    CHECK(mb_spatial_check(&M) == MB_ERR_ILL_INPUT, "non-finite vector refused");
    cons[0] = c;
    mb_spatial_force f = forces[0];
    forces[0].k = INFINITY;
    CHECK(mb_spatial_check(&M) == MB_ERR_ILL_INPUT, "non-finite stiffness refused");
    forces[0] = f;
    body[7] = -1.5;
    CHECK(mb_spatial_check(&M) == MB_ERR_ILL_INPUT, "non-positive mass refused");
    body[7] = 1.5;
    cons[1].f.w = NAN;
    CHECK(mb_spatial_check(&M) == MB_ERR_ILL_INPUT, "non-finite time function refused");
    cons[1].f.w = 3.0;
    CHECK(mb_spatial_check(&M) == MB_OK, "restored");
    mb_spatial_model A = M;
    A.ncb = 0;
    A.nf = 0;
    A.ncon = 3;   /* dot1, dot2 (driven), point */
    CHECK(!mb_spatial_autonomous(&A), "a driven dot-2 row: not autonomous");
    A.ncon = 1;
    CHECK(mb_spatial_autonomous(&A), "constant rows, no actuators, no callbacks: autonomous");
}

static void test_mech(void)
{
    mb_mech me;
    memset(&me, 0, sizeof me);
    mb_spatial_mech(&M, &me);
    CHECK(me.nq == NQ && me.nc == NC && me.mass_constant == 0, "mech sizes nq = %d, nc = %d",
          (int)me.nq, (int)me.nc);
    CHECK(me.phi && me.phi_q && me.gamma && me.mass && me.forces && me.mass_x_q && me.gamma_q
              && me.gamma_qd && me.phiq_x_q && me.phiqT_lam_q && me.forces_q && me.forces_qd,
          "every kernel of the table is analytic");
    double hmax = 0;
    double qdd[NQ] = {0};
    CHECK(mb_spatial_step_bound(0.0, Q0, QD0, qdd, &hmax, &M) == MB_OK && hmax > 0,
          "step bound positive (%.3g s)", hmax);
}

int main(void)
{
    build();
    state(Q0, QD0, X0, LAM0);
    test_check();
    test_derivatives();
    test_mass();
    test_mech();
    return check_summary();
}
