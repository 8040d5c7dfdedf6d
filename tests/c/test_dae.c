/* Tests of the DAE formulations of a mechanism (csrc/mbs/dae.c): index 1, 2, 3 and GGL.
 *
 *  - df/dy (exact blocks) against central differences of f for every formulation on
 *      (a) the LLM double pendulum with a stiff torsional spring (planar kernels),
 *      (b) a rheonomic mechanism (drivers: Phi_t, Phi_tq != 0) at an inconsistent state,
 *      (c) the same with a bare mb_mech (finite-difference fallbacks of every
 *          derivative kernel, M(q) treated as varying),
 *      (d) a hand-written mechanism with a really varying M(q) (a bead on a circle whose
 *          x coordinate carries the mass 1 + x^2);
 *    and IDA's iteration matrix cj M_p - df/dy.
 *  - Consistent initial values: lambda(t0) solves M q'' + Phi_q^T lambda = Q with
 *    Phi_q q'' = gamma; every algebraic residual vanishes there; a hanging pendulum
 *    carries its weight with lambda_y = +m g; GGL starts with mu = 0.
 *  - radau_iia (RADAU5 with the index scaling) on every formulation of the double
 *    pendulum over 1 s against the index-1 ODE at tight tolerances; a method without
 *    MB_DAE is refused on index 3 with MB_ERR_NOT_SUPPORTED.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "assemble.h"
#include "check.h"
#include "dae.h"
#include "driver.h"
#include "index1.h"
#include "model.h"
#include "spatial.h"
#include "registry.h"
#include "status.h"

#define NMAX 64
#include "planar_fixture.h"

/* the LLM double pendulum: two 1 m, 1 kg bars, a 3000 N m/deg spring between them;
 * angles th, rates w (pins at the bar ends) */
static void build_llm(tmodel *T, double k, const double *th, const double *w, double *q,
                      double *qd)
{
    tm_init(T, 2);
    for (int b = 0; b < 2; b++) {
        T->body[2 * b] = 1.0;
        T->body[2 * b + 1] = 1.0 / 12;
    }
    mb_planar_joint *R = tm_joint(T, MB_JOINT_REVOLUTE, -1, 0);
    R->sj[0] = -0.5;
    R = tm_joint(T, MB_JOINT_REVOLUTE, 0, 1);
    R->si[0] = 0.5;
    R->sj[0] = -0.5;
    if (k > 0) {
        mb_planar_force *F = tm_force(T, MB_FORCE_RSDA, 0, 1);
        F->k = k;
    }
    double P[2] = {0, 0}, V[2] = {0, 0};
    for (int b = 0; b < 2; b++) {
        double c = cos(th[b]), s = sin(th[b]);
        q[3 * b] = P[0] + 0.5 * c;
        q[3 * b + 1] = P[1] + 0.5 * s;
        q[3 * b + 2] = th[b];
        qd[3 * b] = V[0] - 0.5 * s * w[b];
        qd[3 * b + 1] = V[1] + 0.5 * c * w[b];
        qd[3 * b + 2] = w[b];
        P[0] += c;
        P[1] += s;
        V[0] -= s * w[b];
        V[1] += c * w[b];
    }
}


static void bare_mech(mb_planar_model *m, mb_mech *me)
{
    mb_planar_mech(m, me);
    me->mass_constant = 0;
    me->forces_q = me->forces_qd = NULL;
    me->phiq_x_q = me->phiqT_lam_q = NULL;
    me->gamma_q = me->gamma_qd = NULL;
    me->gamma = NULL;
    me->phi_t = NULL;
}

/* (d) a bead (x, y) on the unit circle with M = diag(1 + x^2, 1), gravity and a
 * velocity-dependent force; only mass, forces, phi, phi_q are given */
static int bead_mass(const double *q, double *M, ptrdiff_t ld, void *ctx)
{
    (void)ctx;
    M[0] = 1 + q[0] * q[0];
    M[1] = 0;
    M[ld] = 0;
    M[ld + 1] = 1;
    return 0;
}
static int bead_forces(double t, const double *q, const double *qd, double *Q, void *ctx)
{
    (void)ctx; (void)t;
    Q[0] = -0.3 * qd[0] * qd[1] + 0.2 * q[1];
    Q[1] = -9.81 - 0.1 * qd[1] * fabs(qd[1]);
    return 0;
}
static int bead_phi(double t, const double *q, double *phi, void *ctx)
{
    (void)ctx; (void)t;
    phi[0] = q[0] * q[0] + q[1] * q[1] - 1;
    return 0;
}
static int bead_phi_q(double t, const double *q, double *P, ptrdiff_t ld, void *ctx)
{
    (void)ctx; (void)t;
    P[0] = 2 * q[0];
    P[ld] = 2 * q[1];
    return 0;
}
static void bead_mech(mb_mech *me)
{
    memset(me, 0, sizeof *me);
    me->nq = 2;
    me->nc = 1;
    me->mass = bead_mass;
    me->forces = bead_forces;
    me->phi = bead_phi;
    me->phi_q = bead_phi_q;
}

/* max over columns of |J - J_fd| / (size of the column), J_fd by Richardson-extrapolated
 * central differences of p->rhs; columns below floor |J|_max are measured against that */
static double jac_vs_fd(mb_problem *p, double t, const double *y, double floor)
{
    int n = (int)p->n;
    static double J[NMAX * NMAX], F[NMAX * NMAX];
    double yp[NMAX], f1[NMAX], f2[NMAX];
    if (p->jac(t, y, J, n, p->ctx) != 0) return INFINITY;
    for (int c = 0; c < n; c++) {
        double h = pow(DBL_EPSILON, 0.2) * fmax(1.0, fabs(y[c]));
        for (int half = 0; half < 2; half++) {
            double hh = half ? 0.5 * h : h;
            memcpy(yp, y, sizeof(double) * n);
            yp[c] = y[c] + hh;
            if (p->rhs(t, yp, f1, p->ctx) != 0) return INFINITY;
            yp[c] = y[c] - hh;
            if (p->rhs(t, yp, f2, p->ctx) != 0) return INFINITY;
            for (int r = 0; r < n; r++) {
                double d = (f1[r] - f2[r]) / (2 * hh);
                F[r + n * c] = half ? (4 * d - F[r + n * c]) / 3 : d;
            }
        }
    }
    double jmax = 0, ecol = 0;
    for (int k = 0; k < n * n; k++) jmax = fmax(jmax, fmax(fabs(J[k]), fabs(F[k])));
    for (int c = 0; c < n; c++) {
        double d = 0, s = floor * jmax;
        for (int r = 0; r < n; r++) {
            d = fmax(d, fabs(J[r + n * c] - F[r + n * c]));
            s = fmax(s, fmax(fabs(F[r + n * c]), fabs(J[r + n * c])));
        }
        ecol = fmax(ecol, d / s);
    }
    return ecol;
}

static const char *KIND[] = {"", "index1", "index2", "index3", "ggl"};

/* y for a formulation from (q, qd) with lam and mu set to given values */
static void make_y(const mb_dae *f, const double *q, const double *qd, double lam0, double *y)
{
    ptrdiff_t nq = f->nq;
    memcpy(y, q, sizeof(double) * nq);
    memcpy(y + nq, qd, sizeof(double) * nq);
    for (ptrdiff_t i = 2 * nq; i < f->n; i++) y[i] = lam0 + 0.37 * (double)(i - 2 * nq);
}

static void check_jacobians(const mb_mech *me, const char *name, double t, const double *q,
                            const double *qd, double tol, double floor)
{
    for (int kind = 1; kind <= 4; kind++) {
        mb_dae f;
        mb_problem p;
        int rc = mb_dae_init(&f, me, kind);
        if (rc != MB_OK) {
            CHECK(0, "%s %s: init failed (%s)", name, KIND[kind], f.msg);
            continue;
        }
        mb_dae_problem(&f, &p);
        double y[NMAX];
        make_y(&f, q, qd, 1.3, y);
        double e = jac_vs_fd(&p, t, y, floor);
        CHECK(e < tol, "%s, %s: df/dy vs central differences, worst column %.1e", name,
              KIND[kind], e);
        /* IDA's matrix: cj M_p - df/dy */
        static double J[NMAX * NMAX], Ji[NMAX * NMAX];
        double yp[NMAX] = {0}, cj = 7.5, d = 0;
        p.jac(t, y, J, p.n, p.ctx);
        mb_dae_ida_jac(t, cj, y, yp, Ji, p.n, &f);
        for (ptrdiff_t c = 0; c < p.n; c++)
            for (ptrdiff_t r = 0; r < p.n; r++)
                d = fmax(d, fabs(Ji[r + p.n * c] - (cj * p.mass[r + p.n * c] - J[r + p.n * c])));
        CHECK(d == 0.0, "%s, %s: IDA matrix = cj M_p - df/dy", name, KIND[kind]);
        mb_dae_free(&f);
    }
}

static void test_jacobians(void)
{
    tmodel T;
    mb_mech me;
    double q[6], qd[6];
    double th[2] = {-M_PI / 2 + 0.4, -M_PI / 2 + 0.45}, w[2] = {1.0, -2.0};
    build_llm(&T, 3000.0 * 180.0 / M_PI, th, w, q, qd);
    mb_planar_mech(&T.m, &me);
    check_jacobians(&me, "(a) LLM double pendulum", 0.3, q, qd, 1e-6, 1e-8);

    build_driven(&T);
    mb_planar_mech(&T.m, &me);
    double qd4[6] = {0.3, -0.2, 0.5, 1.0, -0.7, 2.0}, q4[6] = {0.1, 0.2, 0.3, 0.5, -0.4, -1.0};
    check_jacobians(&me, "(b) driven mechanism", 0.4, q4, qd4, 1e-6, 1e-8);
    bare_mech(&T.m, &me);
    /* gamma itself by second differences of Phi (no gamma, no phi_t): its derivatives are
     * differences of differences, good to ~1e-7 of the largest entry */
    check_jacobians(&me, "(c) driven, bare mb_mech", 0.4, q4, qd4, 1e-4, 1e-4);

    bead_mech(&me);
    double qb[2] = {0.6, -0.8}, qdb[2] = {1.2, 0.9};
    check_jacobians(&me, "(d) bead with M(q)", 0.2, qb, qdb, 1e-6, 1e-8);
}

/* (e) a spatial double pendulum (ground -spherical- a -revolute- b, a spring from the
 * ground to b): M's Euler-parameter blocks 4 G^T J' G are singular, the DAE formulations
 * factor M + Phi_R,q^T W Phi_R,q with the normalization rows R (dae.c) */
static double sp_body[14] = {1.0, 0.02, 0.03, 0.01, 0.001, 0.0, 0.002,
                             0.7, 0.01, 0.015, 0.004, 0.0, 0.0, 0.0};
static mb_spatial_con sp_cons[4];
static mb_spatial_force sp_forces[1];

static void set3(double *d, double x, double y, double z) { d[0] = x; d[1] = y; d[2] = z; }

static void build_spatial(mb_spatial_model *m, double *q, double *qd)
{
    memset(sp_cons, 0, sizeof sp_cons);
    memset(sp_forces, 0, sizeof sp_forces);
    sp_cons[0].type = MB_SC_POINT; sp_cons[0].i = -1; sp_cons[0].j = 0;  /* spherical */
    set3(sp_cons[0].sj, -0.1, 0.05, 0.3);
    sp_cons[1].type = MB_SC_POINT; sp_cons[1].i = 0; sp_cons[1].j = 1;   /* revolute */
    set3(sp_cons[1].si, 0.1, 0.0, -0.3); set3(sp_cons[1].sj, 0.0, 0.05, 0.2);
    sp_cons[2].type = MB_SC_DOT1; sp_cons[2].i = 0; sp_cons[2].j = 1;
    set3(sp_cons[2].ai, 1, 0, 0); set3(sp_cons[2].aj, 0, 0, 1);
    sp_cons[3].type = MB_SC_DOT1; sp_cons[3].i = 0; sp_cons[3].j = 1;
    set3(sp_cons[3].ai, 0, 1, 0); set3(sp_cons[3].aj, 0, 0, 1);
    int row = 2;
    for (int k = 0; k < 4; k++) {
        sp_cons[k].row = row;
        row += mb_spatial_con_rows(sp_cons[k].type);
    }
    sp_forces[0].type = MB_SF_TSDA; sp_forces[0].i = -1; sp_forces[0].j = 1;
    set3(sp_forces[0].si, 0.5, 0.2, 0.0); set3(sp_forces[0].sj, 0.05, 0.0, -0.2);
    sp_forces[0].k = 200; sp_forces[0].c = 3; sp_forces[0].L0 = 0.4;
    memset(m, 0, sizeof *m);
    m->nb = 2;
    m->body = sp_body;
    set3(m->g, 0.0, 0.0, -9.81);
    m->ncon = 4;
    m->cons = sp_cons;
    m->nc = row;
    m->nf = 1;
    m->forces = sp_forces;
    /* a state off the constraints, Euler parameters not quite unit: the kernels extend
     * smoothly off the sphere (spatial.h), and the Jacobian must hold there too */
    const double q0[14] = {0.1, -0.05, -0.3, 0.9, 0.2, -0.3, 0.25,
                           0.3, 0.1, -0.7, 0.7, -0.4, 0.5, 0.35};
    for (int i = 0; i < 14; i++) {
        q[i] = q0[i];
        qd[i] = 0.3 * sin(1.7 * i + 0.4);
    }
}

static void test_spatial(void)
{
    mb_spatial_model m;
    mb_mech me;
    double q[14], qd[14];
    build_spatial(&m, q, qd);
    mb_spatial_mech(&m, &me);
    CHECK(me.mass_reg == 2, "(e) spatial: the two normalization rows regularize M");
    check_jacobians(&me, "(e) spatial double pendulum", 0.2, q, qd, 1e-6, 1e-8);
    /* lambda(t0): y carries lam~ = lam - W Phi_R,q q'' on the rows R; the outputs give the
     * index-1 lambda back, and f's q'' rows are the index-1 q'' (M~ q'' + Phi_q^T lam~ = Q) */
    double qdd1[14], lam1[NMAX];
    mb_index1 i1;
    mb_index1_init(&i1, &me, 0, 0);
    int rc1 = mb_index1_solve(&i1, 0.2, q, qd, qdd1, lam1);
    mb_index1_free(&i1);
    for (int kind = 1; kind <= 4; kind++) {
        mb_dae f;
        mb_problem p;
        mb_dae_init(&f, &me, kind);
        mb_dae_problem(&f, &p);
        double y0[NMAX], yp0[NMAX], fy[NMAX], qdd[14], lam[NMAX];
        int rc = mb_dae_initial(&f, 0.2, q, qd, y0, yp0);
        rc = rc == MB_OK ? p.rhs(0.2, y0, fy, p.ctx) : rc;
        rc = rc == MB_OK ? mb_dae_accel(&f, 0.2, y0, qdd, lam) : rc;
        double da = 0, amax = 0, dl = 0, lmax = 0, shift = 0;
        for (int i = 0; i < 14; i++) {
            da = fmax(da, fmax(fabs(fy[14 + i] - qdd1[i]), fabs(qdd[i] - qdd1[i])));
            amax = fmax(amax, fabs(qdd1[i]));
        }
        for (ptrdiff_t k = 0; k < f.nc; k++) {
            dl = fmax(dl, fabs(lam[k] - lam1[k]));
            lmax = fmax(lmax, fabs(lam1[k]));
            if (k < 2) shift = fmax(shift, fabs(y0[28 + k] - lam1[k]));
            else dl = fmax(dl, fabs(y0[28 + k] - lam1[k]));
        }
        CHECK(rc1 == MB_OK && rc == MB_OK && da <= 1e-12 * amax && dl <= 1e-12 * lmax &&
                  shift > 1e-6 * lmax,
              "(e) spatial, %s: q'' (%.1e) and lambda (%.1e) those of the index-1 system; "
              "the normalization rows of y shifted by %.3g", KIND[kind], da / amax, dl / lmax,
              shift);
        mb_dae_free(&f);
    }
}

/* consistent initial values: algebraic residuals vanish, lambda = index-1 lambda */
static void test_initial(void)
{
    tmodel T;
    mb_mech me;
    double q[6], qd[6];
    double th[2] = {-1.0, -0.3}, w[2] = {0.7, -1.1};
    build_llm(&T, 0.0, th, w, q, qd);
    mb_planar_mech(&T.m, &me);
    for (int kind = 1; kind <= 4; kind++) {
        mb_dae f;
        mb_problem p;
        mb_dae_init(&f, &me, kind);
        mb_dae_problem(&f, &p);
        double y0[NMAX], yp0[NMAX], fy[NMAX], qdd[6], lam[4];
        int rc = mb_dae_initial(&f, 0.0, q, qd, y0, yp0);
        p.rhs(0.0, y0, fy, p.ctx);
        double ra = 0, rd = 0;
        for (ptrdiff_t i = 2 * f.nq; i < f.n; i++) ra = fmax(ra, fabs(fy[i]));
        for (ptrdiff_t i = 0; i < 2 * f.nq; i++) rd = fmax(rd, fabs(fy[i] - yp0[i]));
        CHECK(rc == MB_OK && ra < 1e-12 && rd < 1e-12,
              "%s: consistent y0: |algebraic residual| %.1e, |f - y'0| %.1e", KIND[kind], ra, rd);
        mb_index1 i1;
        mb_index1_init(&i1, &me, 0, 0);
        mb_index1_solve(&i1, 0.0, q, qd, qdd, lam);
        /* to rounding: the index-1 rhs solves through the Schur complement (planar
         * M), the DAE's lambda(t0) through the LU of the saddle matrix (dae.c) */
        double dl = 0, lmax = 0, mu = 0;
        for (int k = 0; k < 4; k++) {
            dl = fmax(dl, fabs(lam[k] - y0[12 + k]));
            lmax = fmax(lmax, fabs(lam[k]));
        }
        for (ptrdiff_t i = 16; i < f.n; i++) mu = fmax(mu, fabs(y0[i]));
        CHECK(dl <= 1e-13 * lmax && mu == 0.0,
              "%s: lambda0 is the index-1 lambda (%.1e relative), mu0 = 0", KIND[kind],
              dl / lmax);
        mb_index1_free(&i1);
        mb_dae_free(&f);
    }
    /* a hanging bar (pin at its top) at rest carries its weight: lambda_y = +m g */
    tm_init(&T, 1);
    T.body[0] = 2.0;
    T.body[1] = 0.1;
    mb_planar_joint *R = tm_joint(&T, MB_JOINT_REVOLUTE, -1, 0);
    R->sj[0] = -0.5;
    mb_planar_mech(&T.m, &me);
    mb_dae f;
    mb_dae_init(&f, &me, MB_DAE_INDEX3);
    double qh[3] = {0, -0.5, -M_PI / 2}, vh[3] = {0}, y0[8];
    mb_dae_initial(&f, 0.0, qh, vh, y0, NULL);
    CHECK(fabs(y0[6]) < 1e-12 && fabs(y0[7] - 2.0 * 9.81) < 1e-12,
          "hanging bar: lambda = (%.3g, %.6g) = (0, m g)", y0[6], y0[7]);
    mb_dae_free(&f);
}

/* radau_iia on every formulation against the index-1 ODE */
static void test_radau(void)
{
    tmodel T;
    mb_mech me;
    double q[6], qd[6];
    double th[2] = {-1.0, -0.3}, w[2] = {0.7, -1.1};
    build_llm(&T, 0.0, th, w, q, qd);
    mb_planar_mech(&T.m, &me);
    double atol[NMAX];
    for (int i = 0; i < NMAX; i++) atol[i] = 1e-11;
    mb_options o;
    memset(&o, 0, sizeof o);
    o.atol = atol;
    o.rtol = 1e-11;
    /* reference: index-1 ODE */
    mb_index1 i1;
    mb_problem p1;
    mb_index1_init(&i1, &me, 0, 0);
    mb_index1_problem(&i1, &p1);
    double y1[12];
    memcpy(y1, q, sizeof q);
    memcpy(y1 + 6, qd, sizeof qd);
    mb_result r1;
    mb_driver_run(mb_method_find("radau_iia"), &p1, 0.0, 1.0, y1, &o, &r1);
    const double *yref = r1.y + (r1.nt - 1) * 12;
    for (int i = 0; i < NMAX; i++) atol[i] = 1e-9;
    o.rtol = 1e-9;
    for (int kind = 1; kind <= 4; kind++) {
        mb_dae f;
        mb_problem p;
        mb_dae_init(&f, &me, kind);
        mb_dae_problem(&f, &p);
        double y0[NMAX];
        mb_dae_initial(&f, 0.0, q, qd, y0, NULL);
        mb_result r;
        int rc = mb_driver_run(mb_method_find("radau_iia"), &p, 0.0, 1.0, y0, &o, &r);
        double e = INFINITY;
        if (r.nt > 0) {
            const double *ye = r.y + (r.nt - 1) * p.n;
            e = 0;
            for (int i = 0; i < 12; i++) e = fmax(e, fabs(ye[i] - yref[i]));
        }
        CHECK(rc == MB_OK && e < 1e-6,
              "radau_iia, %s: |(q, v)(1) - index-1 ODE| = %.1e (%ld steps, %ld rejected; %s)",
              KIND[kind], e, r.stats.nsteps, r.stats.nreject, r.message);
        mb_result_free(&r);
        if (kind == MB_DAE_INDEX3) {
            rc = mb_driver_run(mb_method_find("rodas4"), &p, 0.0, 1.0, y0, &o, &r);
            CHECK(rc == MB_ERR_NOT_SUPPORTED, "rodas4 refuses index 3: %s", r.message);
            mb_result_free(&r);
        }
        mb_dae_free(&f);
    }
    mb_result_free(&r1);
    mb_index1_free(&i1);
}

int main(void)
{
    test_jacobians();
    test_spatial();
    test_initial();
    test_radau();
    return check_summary();
}
