/* Tests of the index-1 formulation (csrc/mbs/index1.c) on planar models and on a
 * hand-written mechanism.
 *
 *  - Phi_q q'' = gamma (and the Baumgarte-modified right-hand side) at the solution;
 *    the sign of lambda (M q'' + Phi_q^T lambda = Q): a hanging pendulum carries its
 *    weight with lambda_y = +m g.
 *  - df/dy (analytic, differentiated saddle-point system) against central
 *    differences of the rhs on
 *      (a) the LLM double pendulum with a 3000 N m/deg torsional spring between the links,
 *      (b) the RN stiff double pendulum (section 5.1) at its printed initial state,
 *          which is checked to satisfy Phi = 0 and Phi_q q' = 0,
 *      (c) mechanisms whose mb_mech has only mass, forces, phi, phi_q (finite-difference
 *          fallbacks, M(q) treated as non-constant), with and without phi_t/gamma, and a
 *          double pendulum written by hand in absolute angles (M(q) really varies, nc = 0),
 *      (d) a rheonomic mechanism (drivers) with Baumgarte stabilization.
 *  - The same motion from the planar model and from the hand-written angle equations.
 *  - Energy conservation of an undamped double pendulum (dopri5, tight tolerance) and
 *    projection after every step keeping |Phi| and |Phi_q q'| below 1e-10.
 *  - Projection of an inconsistent state; redundant constraints reported as
 *    MB_ERR_LINALG with a message.
 *  - The Schur path (constant diagonal M) against the LU path of the saddle matrix.
 *  - Cost per call of rhs and jac on the RN double pendulum (printed only).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "assemble.h"
#include "check.h"
#include "driver.h"
#include "index1.h"
#include "model.h"
#include "registry.h"
#include "status.h"

#include "planar_fixture.h"

/* (a) LLM section 2: links 1 kg, 1 m (uniform bars), 3000 N m/deg between the links */
static const double LLM_M[2] = {1, 1}, LLM_J[2] = {1.0 / 12, 1.0 / 12};
static const double LLM_A[2] = {0.5, 0.5}, LLM_B[2] = {0.5, 0.5};
static void build_llm(tmodel *T)
{
    build_double(T, LLM_M, LLM_J, LLM_A, LLM_B);
    mb_planar_force *F = tm_force(T, MB_FORCE_RSDA, 0, 1);
    F->k = 3000.0 * 180.0 / M_PI;
}



/* ---- the hand-written double pendulum in absolute angles (nc = 0, M(q)) ---- */
typedef struct angle_pend {
    double m1, J1, c1, l1, m2, J2, c2, g;
    double k1, d1, th01, k2, d2, th02;
} angle_pend;

static double wrap_pi(double x) { return x - 2 * M_PI * ceil((x - M_PI) / (2 * M_PI)); }

static int ap_mass(const double *q, double *M, ptrdiff_t ld, void *ctx)
{
    const angle_pend *p = ctx;
    double m12 = p->m2 * p->l1 * p->c2 * cos(q[0] - q[1]);
    M[0] = p->m1 * p->c1 * p->c1 + p->J1 + p->m2 * p->l1 * p->l1;
    M[1] = m12;
    M[ld] = m12;
    M[ld + 1] = p->m2 * p->c2 * p->c2 + p->J2;
    return 0;
}

static int ap_forces(double t, const double *q, const double *qd, double *Q, void *ctx)
{
    const angle_pend *p = ctx;
    double K = p->m2 * p->l1 * p->c2, s = sin(q[0] - q[1]);
    double T1 = p->k1 * wrap_pi(q[0] - p->th01) + p->d1 * qd[0];
    double T2 = p->k2 * wrap_pi(q[1] - q[0] - p->th02) + p->d2 * (qd[1] - qd[0]);
    Q[0] = -K * s * qd[1] * qd[1] - (p->m1 * p->c1 + p->m2 * p->l1) * p->g * cos(q[0]) - T1 + T2;
    Q[1] = K * s * qd[0] * qd[0] - p->m2 * p->c2 * p->g * cos(q[1]) - T2;
    return 0;
}

static void ap_mech(angle_pend *p, mb_mech *me)
{
    memset(me, 0, sizeof *me);
    me->nq = 2;
    me->nc = 0;
    me->mass_constant = 0;
    me->ctx = p;
    me->mass = ap_mass;
    me->forces = ap_forces;
}

/* ---- helpers ---- */
static double max_abs(int n, const double *x)
{
    double r = 0;
    for (int i = 0; i < n; i++) r = fmax(r, fabs(x[i]));
    return r;
}

/* df/dy against central differences of rhs (Richardson-extrapolated, error O(h^4), so a
 * larger h keeps round-off small where f is large).  Returns the worst column error
 * relative to that column's size, with a floor of 1e-8 |J|_max for columns that are
 * zero up to round-off of the saddle-point solve (which is ~ eps |J|_max everywhere);
 * *err_matrix = max |J - J_fd| / |J|_max. */
static double jac_vs_fd(mb_problem *p, double t, const double *y, double *err_matrix)
{
    int n = (int)p->n;
    double J[NMAX * NMAX], F[NMAX * NMAX], yp[NMAX], f1[NMAX], f2[NMAX];
    int rc = p->jac(t, y, J, n, p->ctx);
    if (rc != 0) return INFINITY;
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
    double jmax = 0, dmax = 0, ecol = 0;
    for (int k = 0; k < n * n; k++) jmax = fmax(jmax, fmax(fabs(J[k]), fabs(F[k])));
    for (int c = 0; c < n; c++) {
        double d = 0, s = 1e-8 * jmax;
        for (int r = 0; r < n; r++) {
            d = fmax(d, fabs(J[r + n * c] - F[r + n * c]));
            s = fmax(s, fmax(fabs(F[r + n * c]), fabs(J[r + n * c])));
        }
        ecol = fmax(ecol, d / s);
        dmax = fmax(dmax, d);
    }
    if (err_matrix) *err_matrix = dmax / jmax;
    return ecol;
}

/* max |Phi_q q'' - rhs_acc| / scale at the solution */
static double acc_constraint_residual(tmodel *T, mb_index1 *f, double t, const double *q,
                                      const double *qd, double alpha, double beta)
{
    int nq = 3 * T->m.nb, nc = T->m.nc;
    double qdd[NQMAX], lam[NQMAX], P[NQMAX * NQMAX], g[NQMAX], phi[NQMAX], pt[NQMAX], r = 0, s = 0;
    mb_index1_solve(f, t, q, qd, qdd, lam);
    mb_planar_phi_q(t, q, P, nc, &T->m);
    mb_planar_gamma(t, q, qd, g, &T->m);
    mb_planar_phi(t, q, phi, &T->m);
    mb_planar_phi_t(t, q, pt, &T->m);
    for (int k = 0; k < nc; k++) {
        double a = 0, v = pt[k];
        for (int c = 0; c < nq; c++) {
            a += P[k + nc * c] * qdd[c];
            v += P[k + nc * c] * qd[c];
        }
        double rhs = g[k] - 2 * alpha * v - beta * beta * phi[k];
        r = fmax(r, fabs(a - rhs));
        s = fmax(s, fabs(rhs));
    }
    return r / fmax(1.0, s);
}

static double now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double worst_analytic = 0, worst_fallback = 0;

/* ---- tests ---- */
static void test_rn_initial_state(void)
{
    tmodel T;
    build_rn(&T, 400, 15, 3e5, 5e4);
    double q[6], qd[6], phi[4], P[24], v[4] = {0};
    rn_state(q, qd);
    mb_planar_phi(0, q, phi, &T.m);
    mb_planar_phi_q(0, q, P, 4, &T.m);
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 6; c++) v[k] += P[k + 4 * c] * qd[c];
    CHECK(max_abs(4, phi) < 1e-15 && max_abs(4, v) < 1e-14,
          "RN initial state: |Phi| = %.1e, |Phi_q q'| = %.1e", max_abs(4, phi), max_abs(4, v));
    /* the paper prints x2 = 3.4488887, y2 = -0.388228, x2' = 3.8822857, y2' = 14.4888887 */
    CHECK(fabs(q[0] - 1) < 1e-15 && fabs(q[3] - 3.4488887) < 1e-7 && fabs(q[4] + 0.388228) < 1e-6 &&
              fabs(qd[3] - 3.8822857) < 1e-7 && fabs(qd[4] - 14.4888887) < 2e-6,
          "RN initial state matches the printed CM positions/velocities (x2 = %.7f, y2 = %.7f, "
          "x2' = %.7f, y2' = %.7f; the printed y2' = 14.4888887 is 10 x 1.448888739 = "
          "14.48888739 with a digit doubled)", q[3], q[4], qd[3], qd[4]);
}

static void test_lambda_sign(void)
{
    tmodel T;
    tm_init(&T, 1);
    T.body[0] = 2;
    T.body[1] = 0.5;
    mb_planar_joint *J = tm_joint(&T, MB_JOINT_REVOLUTE, -1, 0);
    J->sj[1] = 1;  /* pin 1 above the CM: hanging at rest */
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    mb_index1 f;
    mb_index1_init(&f, &me, 0, 0);
    double q[3] = {0, -1, 0}, qd[3] = {0}, qdd[3], lam[2];
    int rc = mb_index1_solve(&f, 0, q, qd, qdd, lam);
    CHECK(rc == MB_OK && max_abs(3, qdd) < 1e-14 && fabs(lam[0]) < 1e-13 &&
              fabs(lam[1] - 2 * 9.81) < 1e-12,
          "hanging pendulum at rest: q'' = 0, lambda = (%.3g, %.6f) = (0, m g): "
          "M q'' + Phi_q^T lambda = Q (lambda = -lambda of LLM eq 9)", lam[0], lam[1]);
    /* the second-order view gives the same q'' */
    mb_problem p;
    mb_index1_problem(&f, &p);
    double y[6] = {0.1, -0.9, 0.2, 0.3, 0.1, -0.5}, yd[6], a[3];
    p.rhs(0.2, y, yd, p.ctx);
    p.acc(0.2, y, y + 3, a, p.ctx);
    CHECK(p.n == 6 && p.nq == 3 && p.project == NULL && memcmp(a, yd + 3, sizeof a) == 0 &&
              memcmp(yd, y + 3, sizeof a) == 0,
          "mb_index1_problem: n = 2 nq, rhs = (q', q''), acc = q''");
    mb_index1_free(&f);
}

static void check_model_jac(tmodel *T, const mb_mech *me, const char *label, double t,
                            const double *q, const double *qd, double alpha, double beta,
                            double tol, int fallback)
{
    mb_index1 f;
    int rc = mb_index1_init(&f, me, alpha, beta);
    CHECK(rc == MB_OK, "%s: init", label);
    mb_problem p;
    mb_index1_problem(&f, &p);
    int nq = (int)me->nq;
    double y[NMAX];
    memcpy(y, q, sizeof(double) * nq);
    memcpy(y + nq, qd, sizeof(double) * nq);
    if (T) {
        double r = acc_constraint_residual(T, &f, t, q, qd, alpha, beta);
        /* exact kernels: round-off; gamma from differences of Phi: ~1e-10 */
        CHECK(r < (me->gamma ? 1e-11 : 1e-8),
              "%-44s Phi_q q'' = gamma%s at the solution (rel. residual %.1e)", label,
              (alpha || beta) ? " - 2a Phi' - b^2 Phi" : "", r);
    }
    double em = 0, e = jac_vs_fd(&p, t, y, &em);
    CHECK(e <= tol, "%-44s df/dy vs differences of f: column rel. err %.1e (matrix %.1e)", label,
          e, em);
    if (fallback) worst_fallback = fmax(worst_fallback, e);
    else worst_analytic = fmax(worst_analytic, e);
    mb_index1_free(&f);
}

/* the planar kernels with every derivative removed (what a bare MechanicalSystem gives);
 * keep: 1 = keep phi_t and gamma, 0 = drop both, 2 = keep phi_t, drop gamma */
static void bare_mech(mb_planar_model *m, int keep, mb_mech *me)
{
    mb_planar_mech(m, me);
    me->mass_constant = 0;  /* also exercise (M a)_q by differences */
    me->forces_q = me->forces_qd = NULL;
    me->phiq_x_q = me->phiqT_lam_q = NULL;
    me->gamma_q = me->gamma_qd = NULL;
    me->energy = NULL;
    if (keep != 1) me->gamma = NULL;
    if (keep == 0) me->phi_t = NULL;
}

static void test_jacobians(void)
{
    tmodel T;
    mb_mech me;
    double q[NQMAX], qd[NQMAX];

    /* (a) LLM double pendulum with the stiff spring */
    build_llm(&T);
    mb_planar_mech(&T.m, &me);
    double th[2] = {-M_PI / 2 + 0.4, -M_PI / 2 + 0.45}, w[2] = {1.0, -2.0};
    chain_state(2, LLM_A, LLM_B, th, w, q, qd);
    check_model_jac(&T, &me, "(a) LLM double pendulum, 3000 Nm/deg", 0.3, q, qd, 0, 0, 1e-6, 0);

    /* (b) RN stiff double pendulum at its initial state, and at a later-like state */
    build_rn(&T, 400, 15, 3e5, 5e4);
    mb_planar_mech(&T.m, &me);
    rn_state(q, qd);
    check_model_jac(&T, &me, "(b) RN stiff double pendulum, initial", 0.0, q, qd, 0, 0, 1e-6, 0);
    double th2[2] = {-1.2, -1.3}, w2[2] = {-2.0, 3.0};
    chain_state(2, RN_A, RN_B, th2, w2, q, qd);
    check_model_jac(&T, &me, "(b) RN stiff double pendulum, other state", 0.7, q, qd, 0, 0, 1e-6, 0);
    check_model_jac(&T, &me, "(b) RN + Baumgarte (a = 10, b = 20)", 0.7, q, qd, 10, 20, 1e-6, 0);

    /* (c) bare mechanisms: finite-difference fallbacks */
    bare_mech(&T.m, 1, &me);
    check_model_jac(&T, &me, "(c) RN, bare mb_mech (gamma, phi_t kept)", 0.7, q, qd, 0, 0, 1e-6, 1);
    bare_mech(&T.m, 0, &me);
    check_model_jac(&T, &me, "(c) RN, bare mb_mech (no gamma, no phi_t)", 0.7, q, qd, 0, 0, 1e-4, 1);
    /* and the bare jac equals the analytic one */
    {
        mb_mech full, bare;
        mb_planar_mech(&T.m, &full);
        bare_mech(&T.m, 1, &bare);
        mb_index1 fa, fb;
        mb_problem pa, pb;
        mb_index1_init(&fa, &full, 0, 0);
        mb_index1_init(&fb, &bare, 0, 0);
        mb_index1_problem(&fa, &pa);
        mb_index1_problem(&fb, &pb);
        double y[12], Ja[144], Jb[144];
        memcpy(y, q, sizeof(double) * 6);
        memcpy(y + 6, qd, sizeof(double) * 6);
        pa.jac(0.7, y, Ja, 12, pa.ctx);
        pb.jac(0.7, y, Jb, 12, pb.ctx);
        double d = 0, s = 0;
        for (int k = 0; k < 144; k++) {
            d = fmax(d, fabs(Ja[k] - Jb[k]));
            s = fmax(s, fabs(Ja[k]));
        }
        CHECK(d / s < 1e-6, "(c) RN: bare-mech jac (differences) = analytic jac, rel. %.1e", d / s);
        mb_index1_free(&fa);
        mb_index1_free(&fb);
    }
    /* hand-written pendulum in absolute angles: M(q) varies, no constraints */
    angle_pend ap = {3, 1, 1, 2, 0.3, 0.225, 1.5, 9.81, 400, 15, 1.5 * M_PI, 3e5, 5e4, 0};
    ap_mech(&ap, &me);
    double qa[2] = {-1.2, -1.3}, qda[2] = {-2.0, 3.0};
    check_model_jac(NULL, &me, "(c) angle coordinates, M(q), nc = 0", 0.7, qa, qda, 0, 0, 1e-6, 1);

    /* the LLM's two bouncing balls (contact forces, no constraints) while both contacts act */
    tm_init(&T, 2);
    T.body[0] = T.body[2] = 1;
    T.body[1] = T.body[3] = 0.1;
    mb_planar_force *F = tm_force(&T, MB_FORCE_CONTACT_CIRCLES, 0, 1);
    F->ri = F->rj = 0.5;
    F->K = 1e5;
    F = tm_force(&T, MB_FORCE_CONTACT_LINE, 1, -1);
    F->ri = 0.5;
    F->nrm[1] = 1;
    F->K = 1e5;
    mb_planar_mech(&T.m, &me);
    double qb[6] = {0, 1.45, 0, 0, 0.48, 0}, qdb[6] = {0, -1, 0, 0, 0.5, 0};
    check_model_jac(&T, &me, "bouncing balls (LLM eqs 19-21), in contact", 0.0, qb, qdb, 0, 0, 1e-6, 0);

    /* (d) rheonomic mechanism (drivers), inconsistent state, with and without Baumgarte */
    build_driven(&T);
    mb_planar_mech(&T.m, &me);
    double qd4[6] = {0.3, -0.2, 0.5, 1.0, -0.7, 2.0}, q4[6] = {0.1, 0.2, 0.3, 0.5, -0.4, -1.0};
    check_model_jac(&T, &me, "(d) driven mechanism", 0.4, q4, qd4, 0, 0, 1e-6, 0);
    check_model_jac(&T, &me, "(d) driven mechanism + Baumgarte (5, 10)", 0.4, q4, qd4, 5, 10, 1e-6, 0);
    bare_mech(&T.m, 1, &me);
    check_model_jac(&T, &me, "(d) driven, bare mb_mech + Baumgarte", 0.4, q4, qd4, 5, 10, 1e-6, 1);
    bare_mech(&T.m, 2, &me);
    check_model_jac(&T, &me, "(d) driven, bare (phi_t, no gamma) + Baumg.", 0.4, q4, qd4, 5, 10,
                    1e-6, 1);
    bare_mech(&T.m, 0, &me);
    check_model_jac(&T, &me, "(d) driven, bare (no gamma, no phi_t) + Baumg.", 0.4, q4, qd4, 5, 10,
                    1e-4, 1);
}

static mb_options opts(const double *atol, double rtol)
{
    mb_options o;
    memset(&o, 0, sizeof o);
    o.atol = atol;
    o.rtol = rtol;
    o.controller = MB_CONTROLLER_PI;
    return o;
}

/* the planar RN-geometry pendulum with moderate springs vs the angle equations */
static void test_same_motion(void)
{
    tmodel T;
    build_rn(&T, 400, 15, 300, 5);
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    angle_pend ap = {3, 1, 1, 2, 0.3, 0.225, 1.5, 9.81, 400, 15, 1.5 * M_PI, 300, 5, 0};
    mb_mech ma;
    ap_mech(&ap, &ma);
    mb_index1 f1, f2;
    mb_problem p1, p2;
    mb_index1_init(&f1, &me, 0, 0);
    mb_index1_init(&f2, &ma, 0, 0);
    mb_index1_problem(&f1, &p1);
    mb_index1_problem(&f2, &p2);
    double y1[12], y2[4] = {0, -M_PI / 12, 0, 10}, atol[12];
    rn_state(y1, y1 + 6);
    for (int k = 0; k < 12; k++) atol[k] = 1e-12;
    mb_options o = opts(atol, 1e-11);
    const mb_method *dp = mb_method_find("dopri5");
    mb_result r1, r2;
    int rc1 = mb_driver_run(dp, &p1, 0, 1.0, y1, &o, &r1);
    int rc2 = mb_driver_run(dp, &p2, 0, 1.0, y2, &o, &r2);
    const double *e1 = r1.y + (r1.nt - 1) * 12, *e2 = r2.y + (r2.nt - 1) * 4;
    double d = fmax(fabs(e1[2] - e2[0]), fabs(e1[5] - e2[1]));
    double dv = fmax(fabs(e1[8] - e2[2]), fabs(e1[11] - e2[3]));
    CHECK(rc1 == MB_OK && rc2 == MB_OK && d < 1e-8 && dv < 1e-7,
          "planar body coordinates and hand-written angle equations give the same motion: "
          "|d theta| = %.1e, |d theta'| = %.1e at t = 1 (theta = %.6f, %.6f)", d, dv, e1[2], e1[5]);
    mb_result_free(&r1);
    mb_result_free(&r2);
    mb_index1_free(&f1);
    mb_index1_free(&f2);
}

static double max_violation(tmodel *T, const mb_result *r, double *vel)
{
    int nq = 3 * T->m.nb, nc = T->m.nc;
    double pmax = 0, vmax = 0, phi[8], P[8 * NQMAX];
    for (ptrdiff_t k = 0; k < r->nt; k++) {
        const double *y = r->y + k * 2 * nq;
        mb_planar_phi(r->t[k], y, phi, &T->m);
        mb_planar_phi_q(r->t[k], y, P, nc, &T->m);
        pmax = fmax(pmax, max_abs(nc, phi));
        for (int i = 0; i < nc; i++) {
            double v = 0;
            for (int c = 0; c < nq; c++) v += P[i + nc * c] * y[nq + c];
            vmax = fmax(vmax, fabs(v));
        }
    }
    *vel = vmax;
    return pmax;
}

static void test_energy_and_projection(void)
{
    tmodel T;
    build_double(&T, RN_M, RN_J, RN_A, RN_B);  /* undamped, no springs */
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    mb_index1 f;
    mb_index1_init(&f, &me, 0, 0);
    mb_problem p;
    mb_index1_problem(&f, &p);
    double y0[12], atol[12];
    double th[2] = {0.0, -M_PI / 12}, w[2] = {0, 10};
    chain_state(2, RN_A, RN_B, th, w, y0, y0 + 6);
    for (int k = 0; k < 12; k++) atol[k] = 1e-12;
    const mb_method *dp = mb_method_find("dopri5");
    mb_options o = opts(atol, 1e-10);
    mb_result r;
    int rc = mb_driver_run(dp, &p, 0, 3.0, y0, &o, &r);
    double E0 = 0, dE = 0, Tk, V;
    mb_planar_energy(0, y0, y0 + 6, &Tk, &V, &T.m);
    E0 = Tk + V;
    for (ptrdiff_t k = 0; k < r.nt; k++) {
        mb_planar_energy(r.t[k], r.y + 12 * k, r.y + 12 * k + 6, &Tk, &V, &T.m);
        dE = fmax(dE, fabs(Tk + V - E0));
    }
    double vel, pos = max_violation(&T, &r, &vel);
    CHECK(rc == MB_OK && dE / fabs(E0) < 1e-8,
          "undamped double pendulum, dopri5 rtol 1e-10, 3 s (%ld steps): max |E - E0| / |E0| = %.1e",
          r.stats.nsteps, dE / fabs(E0));
    printf("      (without projection at rtol 1e-10: max |Phi| = %.1e, |Phi_q q'| = %.1e)\n", pos, vel);
    mb_result_free(&r);

    /* looser tolerance: drift without projection, none with it */
    o = opts(atol, 1e-5);
    for (int k = 0; k < 12; k++) atol[k] = 1e-7;
    rc = mb_driver_run(dp, &p, 0, 3.0, y0, &o, &r);
    double pos0 = max_violation(&T, &r, &vel), vel0 = vel;
    mb_result_free(&r);
    p.project = mb_index1_project_hook;
    rc = mb_driver_run(dp, &p, 0, 3.0, y0, &o, &r);
    pos = max_violation(&T, &r, &vel);
    CHECK(rc == MB_OK && pos < 1e-10 && vel < 1e-10,
          "projection after every step (rtol 1e-5): max |Phi| = %.1e, |Phi_q q'| = %.1e "
          "(without: %.1e, %.1e)", pos, vel, pos0, vel0);
    CHECK(pos0 > pos, "without projection the violation drifts (%.1e)", pos0);
    mb_result_free(&r);
    mb_index1_free(&f);
}

static void test_project(void)
{
    tmodel T;
    build_driven(&T);
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    mb_index1 f;
    mb_index1_init(&f, &me, 0, 0);
    double q[6] = {0.1, 0.2, 0.3, 0.5, -0.4, -1.0}, qd[6] = {0.3, -0.2, 0.5, 1.0, -0.7, 2.0};
    double rp, rv, t = 0.4;
    int rc = mb_index1_project(&f, t, q, qd, &rp, &rv);
    double phi[5], pt[5], P[30], v[5];
    mb_planar_phi(t, q, phi, &T.m);
    mb_planar_phi_t(t, q, pt, &T.m);
    mb_planar_phi_q(t, q, P, 5, &T.m);
    for (int k = 0; k < 5; k++) {
        v[k] = pt[k];
        for (int c = 0; c < 6; c++) v[k] += P[k + 5 * c] * qd[c];
    }
    CHECK(rc == MB_OK && rp <= 1e-12 && max_abs(5, phi) <= 1e-12 && rv <= 1e-12 &&
              max_abs(5, v) <= 1e-12,
          "projection of an inconsistent state of a driven mechanism: |Phi| = %.1e, "
          "|Phi_q q' + Phi_t| = %.1e", max_abs(5, phi), max_abs(5, v));
    /* minimum norm: the velocity correction of a consistent q lies in range(Phi_q^T),
     * so it is orthogonal to any admissible velocity change (here: a null vector of Phi_q) */
    double qd0[6];
    memcpy(qd0, qd, sizeof qd);
    qd0[3] += 0.3;
    qd0[5] -= 0.2;
    double qd1[6];
    memcpy(qd1, qd0, sizeof qd0);
    mb_index1_project(&f, t, q, qd1, &rp, &rv);
    /* null vector of Phi_q for this mechanism: rotate body 1 about the revolute joint */
    double c1 = cos(q[5]), s1 = sin(q[5]);
    double u[2] = {c1 * -0.6 - s1 * 0.05, s1 * -0.6 + c1 * 0.05};  /* A_1 sj */
    double nv[6] = {0, 0, 0, u[1], -u[0], 1};  /* d r_1 = -perp(u) dphi */
    double dot = 0;
    for (int c = 0; c < 6; c++) dot += (qd1[c] - qd0[c]) * nv[c];
    CHECK(fabs(dot) < 1e-12, "velocity correction is minimum-norm (orthogonal to null(Phi_q)): %.1e", dot);
    mb_index1_free(&f);

    /* redundant constraints: the same revolute joint twice */
    tmodel R;
    tm_init(&R, 1);
    R.body[0] = 1;
    R.body[1] = 0.1;
    mb_planar_joint *J = tm_joint(&R, MB_JOINT_REVOLUTE, -1, 0);
    J->sj[0] = -0.5;
    J = tm_joint(&R, MB_JOINT_REVOLUTE, -1, 0);
    J->sj[0] = -0.5;
    mb_planar_mech(&R.m, &me);
    mb_index1_init(&f, &me, 0, 0);
    double qr[3] = {0.52, 0.01, 0.05}, qdr[3] = {0.1, 0.2, 0.3}, y[6], yd[6];
    rc = mb_index1_project(&f, 0, qr, qdr, &rp, &rv);
    CHECK(rc == MB_ERR_LINALG && strstr(f.msg, "redundant") != NULL,
          "redundant constraints in project: MB_ERR_LINALG, \"%s\"", f.msg);
    mb_problem p;
    mb_index1_problem(&f, &p);
    memcpy(y, qr, sizeof qr);
    memcpy(y + 3, qdr, sizeof qdr);
    rc = p.rhs(0, y, yd, p.ctx);
    CHECK(rc == MB_ERR_LINALG && strstr(f.msg, "singular") != NULL,
          "redundant constraints in rhs: MB_ERR_LINALG, \"%s\"", f.msg);
    mb_index1_free(&f);

    /* bad input */
    mb_mech empty;
    memset(&empty, 0, sizeof empty);
    CHECK(mb_index1_init(&f, &empty, 0, 0) == MB_ERR_ILL_INPUT, "init without kernels -> MB_ERR_ILL_INPUT");
    mb_index1_free(&f);
}

/* a body with an extremely small inertia (the SP paper's particle) is not "singular" */
static void test_scaling(void)
{
    tmodel T;
    tm_init(&T, 2);
    T.body[0] = 100; T.body[1] = 100; T.body[2] = 1e-5; T.body[3] = 1e-12;
    mb_planar_joint *J = tm_joint(&T, MB_JOINT_REVOLUTE, -1, 0);
    J->sj[0] = -1;
    mb_planar_force *F = tm_force(&T, MB_FORCE_TSDA, 0, 1);
    F->k = 5;
    F->L0 = 0.2;
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    mb_index1 f;
    mb_index1_init(&f, &me, 0, 0);
    double q[6] = {1, 0, 0, 1.3, 0.1, 0}, qd[6] = {0, 1, 1, 0, 0, 0}, qdd[6], lam[2];
    int rc = mb_index1_solve(&f, 0, q, qd, qdd, lam);
    CHECK(rc == MB_OK, "pendulum + particle (m2 = 1e-5, J2 = 1e-12): saddle solve OK (%s)",
          rc ? f.msg : "");
    mb_index1_free(&f);
}


/* the Schur path (M constant diagonal: every planar model) and the general LU path of
 * the saddle-point matrix give the same f and df/dy to rounding */
static void compare_paths(const char *name, tmodel *T, const double *y0, double tol)
{
    mb_mech me;
    mb_planar_mech(&T->m, &me);
    mb_index1 f;
    mb_index1_init(&f, &me, 0, 0);
    ptrdiff_t n = 2 * f.nq;
    CHECK(f.schur == 1, "%s: constant diagonal M -> Schur path", name);
    mb_problem p;
    mb_index1_problem(&f, &p);
    double yd[2][2 * 3 * NBMAX], J[2][4 * 9 * NBMAX * NBMAX];
    for (int path = 0; path < 2; path++) {
        f.schur = path == 0;
        f.cache_ok = 0;
        CHECK(p.rhs(0.3, y0, yd[path], p.ctx) == MB_OK, "%s: rhs (path %d)", name, path);
        CHECK(p.jac(0.3, y0, J[path], n, p.ctx) == MB_OK, "%s: jac (path %d)", name, path);
    }
    double ef = 0, sf = 0, ej = 0, sj = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        ef = fmax(ef, fabs(yd[0][i] - yd[1][i]));
        sf = fmax(sf, fabs(yd[1][i]));
    }
    for (ptrdiff_t i = 0; i < n * n; i++) {
        ej = fmax(ej, fabs(J[0][i] - J[1][i]));
        sj = fmax(sj, fabs(J[1][i]));
    }
    CHECK(ef <= tol * sf && ej <= tol * sj,
          "%s: Schur and LU paths agree (f %.1e, df/dy %.1e relative)", name, ef / sf, ej / sj);
    mb_index1_free(&f);
}

static void test_schur_path(void)
{
    tmodel T;
    build_rn(&T, 400, 15, 3e5, 5e4);
    double y[12];
    rn_state(y, y + 6);
    y[8] = 2.0;   /* body 1 moving too (inconsistent velocities do not matter here) */
    compare_paths("RN stiff double pendulum", &T, y, 1e-13);
    tmodel P;     /* pendulum + particle: masses 1e2 and 1e-5, inertia 1e-12 */
    tm_init(&P, 2);
    P.body[0] = 100; P.body[1] = 100; P.body[2] = 1e-5; P.body[3] = 1e-12;
    mb_planar_joint *J = tm_joint(&P, MB_JOINT_REVOLUTE, -1, 0);
    J->sj[0] = -1;
    mb_planar_force *F = tm_force(&P, MB_FORCE_TSDA, 0, 1);
    F->k = 5;
    F->L0 = 0.2;
    double yp[12] = {1, 0, 0, 1.3, 0.1, 0, 0, 1, 1, 0, 0, 0};
    compare_paths("pendulum + particle", &P, yp, 1e-11);
}

/* the fused kernels of the planar table (mech.h fused_qpg, fused_lin) and the separate
 * kernels they stand for give the same f and df/dy (the same sums in another order),
 * on both saddle paths, with and without Baumgarte terms */
static void compare_fused(const char *name, tmodel *T, const double *y0, double alpha,
                          double beta, double tol)
{
    mb_mech fused, sep;
    mb_planar_mech(&T->m, &fused);
    mb_planar_mech(&T->m, &sep);
    sep.fused_qpg = NULL;
    sep.fused_lin = NULL;
    mb_index1 f[2];
    mb_problem p[2];
    mb_index1_init(&f[0], &fused, alpha, beta);
    mb_index1_init(&f[1], &sep, alpha, beta);
    CHECK(f[0].use_qpg && f[0].use_lin && !f[1].use_qpg && !f[1].use_lin,
          "%s: the planar table's fused kernels are used, and not once removed", name);
    ptrdiff_t n = 2 * f[0].nq;
    double yd[2][2 * 3 * NBMAX], J[2][4 * 9 * NBMAX * NBMAX];
    for (int path = 0; path < 2; path++) {  /* 0: Schur, 1: LU */
        for (int k = 0; k < 2; k++) {
            mb_index1_problem(&f[k], &p[k]);
            f[k].schur = path == 0;
            f[k].cache_ok = 0;
            CHECK(p[k].rhs(0.3, y0, yd[k], p[k].ctx) == MB_OK &&
                  p[k].jac(0.3, y0, J[k], n, p[k].ctx) == MB_OK, "%s: rhs, jac", name);
        }
        double ef = 0, sf = 0, ej = 0, sj = 0;
        for (ptrdiff_t i = 0; i < n; i++) {
            ef = fmax(ef, fabs(yd[0][i] - yd[1][i]));
            sf = fmax(sf, fabs(yd[1][i]));
        }
        for (ptrdiff_t i = 0; i < n * n; i++) {
            ej = fmax(ej, fabs(J[0][i] - J[1][i]));
            sj = fmax(sj, fabs(J[1][i]));
        }
        CHECK(ef <= tol * sf && ej <= tol * sj,
              "%s (a = %g, b = %g, %s path): fused and separate kernels agree (f %.1e, "
              "df/dy %.1e relative)", name, alpha, beta, path ? "LU" : "Schur", ef / sf,
              ej / sj);
    }
    mb_index1_free(&f[0]);
    mb_index1_free(&f[1]);
}

static void test_fused(void)
{
    tmodel T;
    build_rn(&T, 400, 15, 3e5, 5e4);
    double y[12];
    double th[2] = {-1.2, -1.3}, w[2] = {-2.0, 3.0};
    chain_state(2, RN_A, RN_B, th, w, y, y + 6);
    compare_fused("RN stiff double pendulum", &T, y, 0, 0, 1e-13);
    compare_fused("RN stiff double pendulum", &T, y, 10, 20, 1e-13);
    /* every joint type and a TSDA on three bodies, rheonomic (drivers) */
    tmodel A;
    tm_init(&A, 3);
    for (int b = 0; b < 3; b++) {
        A.body[2 * b] = 1.0 + b;
        A.body[2 * b + 1] = 0.2 + 0.1 * b;
    }
    mb_planar_joint *J = tm_joint(&A, MB_JOINT_REVOLUTE, -1, 0);
    J->si[0] = 0.1; J->sj[0] = -0.5;
    J = tm_joint(&A, MB_JOINT_TRANSLATIONAL, 0, 1);
    J->ni[0] = 0.6; J->ni[1] = 0.8; J->si[1] = 0.2; J->sj[0] = -0.3; J->phi0 = 0.2;
    J = tm_joint(&A, MB_JOINT_DISTANCE, 1, 2);
    J->si[0] = 0.4; J->sj[1] = 0.7; J->L = 0.9;
    J = tm_joint(&A, MB_JOINT_DRIVER_ANGLE, -1, 2);
    J->f = (mb_timefn){0.1, 0.3, 0, 0.1, 3.0, 0.5};
    mb_planar_force *F = tm_force(&A, MB_FORCE_TSDA, 0, 2);
    F->si[0] = 0.2; F->sj[1] = -0.1; F->k = 50; F->c = 2; F->L0 = 0.5;
    F = tm_force(&A, MB_FORCE_RSDA, 1, 2);
    F->k = 30; F->c = 1; F->L0 = 0.1;
    double ya[18] = {0.3, -0.4, 0.2, 0.9, -0.1, 0.5, 1.2, 0.4, -0.3,
                     0.5, -0.2, 1.1, -0.7, 0.3, 0.4, 0.2, 0.9, -1.3};
    compare_fused("all joint types, TSDA, RSDA, 3 bodies", &A, ya, 0, 0, 1e-12);
    compare_fused("all joint types, TSDA, RSDA, 3 bodies", &A, ya, 5, 7, 1e-12);
}

static void test_timing(void)
{
    tmodel T;
    build_rn(&T, 400, 15, 3e5, 5e4);
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    mb_index1 f;
    mb_index1_init(&f, &me, 0, 0);
    mb_problem p;
    mb_index1_problem(&f, &p);
    double y[12], yd[12], J[144], s = 0;
    rn_state(y, y + 6);
    /* best of 10 repetitions (the machine may be shared); a new t every call, so the
     * cache never hits except in the last loop */
    double trhs = INFINITY, tjac = INFINITY, tboth = INFINITY;
    for (int rep = 0; rep < 10; rep++) {
        int N = 10000, NJ = 2000;
        double t0 = now();
        for (int k = 0; k < N; k++) {
            p.rhs(rep + 1e-9 * k, y, yd, p.ctx);
            s += yd[7];
        }
        trhs = fmin(trhs, (now() - t0) / N);
        t0 = now();
        for (int k = 0; k < NJ; k++) {
            p.jac(rep + 0.5 + 1e-9 * k, y, J, 12, p.ctx);
            s += J[7];
        }
        tjac = fmin(tjac, (now() - t0) / NJ);
        t0 = now();
        for (int k = 0; k < NJ; k++) {  /* jac after rhs at the same (t, y): cached LU */
            p.rhs(rep + 0.7 + 1e-9 * k, y, yd, p.ctx);
            p.jac(rep + 0.7 + 1e-9 * k, y, J, 12, p.ctx);
            s += J[7];
        }
        tboth = fmin(tboth, (now() - t0) / NJ);
    }
    printf("timing (RN double pendulum, nq = 6, nc = 4): rhs %.2f us/call, jac %.2f us/call "
           "(own factorization), rhs + jac at the same point %.2f us  [checksum %.3g]\n",
           1e6 * trhs, 1e6 * tjac, 1e6 * tboth, s);
    CHECK(1, "timing printed");
    mb_index1_free(&f);
}

int main(void)
{
    test_rn_initial_state();
    test_lambda_sign();
    test_jacobians();
    test_same_motion();
    test_energy_and_projection();
    test_project();
    test_scaling();
    test_schur_path();
    test_fused();
    test_timing();
    printf("worst df/dy column rel. error: analytic %.1e, with difference fallbacks %.1e\n",
           worst_analytic, worst_fallback);
    return check_summary();
}
