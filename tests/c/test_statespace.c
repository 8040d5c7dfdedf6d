/* Tests of the state-space formulation (csrc/mbs/statespace.c) and of the driver
 * services it uses (MB_NEW_COORDINATES from a projection, the check hook).
 *
 *  - v'' and q'' of the state-space evaluation equal the index-1 accelerations
 *    (index1.c, an independent formulation) on the RN double pendulum;
 *  - J1 = dv''/dv, J2 = dv''/dv' (RN eqs 26-35) against central differences of v''
 *    on the RN double pendulum and on a rheonomic mechanism (drivers), and
 *    M^ dv''/dt (eq 46) against central differences in t;
 *  - Gauss-Jordan with full pivoting refuses redundant constraints, naming the row;
 *    a mechanism without degrees of freedom is refused;
 *  - the driver re-initializes the method when a projection returns
 *    MB_NEW_COORDINATES: adams, bdf, the Rosenbrock-Nystrom methods and dopri5 on a
 *    pendulum whose projection shifts the coordinate by 1 every 25 steps stay
 *    accurate (without the restart a multistep history, or a kept W Jacobian, would
 *    mix the coordinates);
 *  - a check hook that rejects long steps: the steps shrink, the run completes.
 * Prints one line per check and "N passed, M failed". */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "assemble.h"
#include "check.h"
#include "driver.h"
#include "index1.h"
#include "model.h"
#include "registry.h"
#include "statespace.h"
#include "status.h"

#include "planar_fixture.h"




/* ---- state space against index 1 and central differences ---- */

static double rel_err(const double *A, const double *B, ptrdiff_t n, double scale)
{
    double e = 0;
    for (ptrdiff_t i = 0; i < n; i++) e = fmax(e, fabs(A[i] - B[i]));
    return e / scale;
}

static double max_abs(const double *A, ptrdiff_t n)
{
    double m = 0;
    for (ptrdiff_t i = 0; i < n; i++) m = fmax(m, fabs(A[i]));
    return m;
}

/* J1, J2 of ss at (t, y) against central differences of v'' (mb_ss_full) */
static void check_jacobians(const char *name, mb_ss *s, double t, const double *y, double tol)
{
    ptrdiff_t nd = s->nd, nq = s->nq;
    double J1[NQMAX * NQMAX], J2[NQMAX * NQMAX], F1[NQMAX * NQMAX], F2[NQMAX * NQMAX];
    double yp[2 * NQMAX], qp[NQMAX], qm[NQMAX], ap[NQMAX], am[NQMAX];
    int rc = mb_ss_jacobians(s, t, y, J1, J2, nd);
    CHECK(rc == MB_OK, "%s: analytic J1, J2 (status %d)", name, rc);
    for (int blk = 0; blk < 2; blk++)
        for (ptrdiff_t j = 0; j < nd; j++) {
            double *F = blk ? F2 : F1;
            memcpy(yp, y, (size_t)(2 * nd) * sizeof(double));
            ptrdiff_t k = blk * nd + j;
            double h = 1e-6 * fmax(1.0, fabs(y[k]));
            yp[k] = y[k] + h;
            mb_ss_full(s, t, yp, qp, NULL, ap, NULL);
            yp[k] = y[k] - h;
            mb_ss_full(s, t, yp, qm, NULL, am, NULL);
            for (ptrdiff_t i = 0; i < nd; i++)
                F[i + nd * j] = (ap[s->indep[i]] - am[s->indep[i]]) / (2 * h);
        }
    (void)nq;
    double scale = fmax(max_abs(F1, nd * nd), max_abs(F2, nd * nd));
    double e1 = rel_err(J1, F1, nd * nd, scale), e2 = rel_err(J2, F2, nd * nd, scale);
    CHECK(e1 < tol && e2 < tol, "%s: J1, J2 against central differences (%.1e, %.1e)", name, e1,
          e2);
}

static void test_rn_pendulum(void)
{
    tmodel T;
    build_rn(&T, 400, 15, 3e5, 5e4);
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    CHECK(me.autonomous == 1, "RN double pendulum: the planar model is autonomous");
    double q[6], qd[6], y[4], qf[6], qdf[6], qdd[6], lam[4], a1[6], l1[4];
    rn_state(q, qd);
    mb_ss s;
    int rc = mb_ss_init(&s, &me);
    if (rc == MB_OK) rc = mb_ss_start(&s, 0.0, q, qd, y);
    CHECK(rc == MB_OK && s.nd == 2, "RN double pendulum: partition (status %d, %s)", rc, s.msg);
    CHECK(s.indep[0] == 2 && s.indep[1] == 4,
          "RN double pendulum: full pivoting keeps theta1 and y2 independent (%d, %d)",
          s.indep[0], s.indep[1]);
    mb_ss_full(&s, 0.0, y, qf, qdf, qdd, lam);
    mb_index1 f;
    mb_index1_init(&f, &me, 0, 0);
    mb_index1_solve(&f, 0.0, qf, qdf, a1, l1);
    double sc = max_abs(a1, 6);
    CHECK(rel_err(qdd, a1, 6, sc) < 1e-12 && rel_err(lam, l1, 4, max_abs(l1, 4)) < 1e-12,
          "RN double pendulum: q'' and lambda equal the index-1 ones (%.1e)",
          rel_err(qdd, a1, 6, sc));
    check_jacobians("RN double pendulum (t = 0)", &s, 0.0, y, 1e-7);
    double y2[4] = {y[0] - 0.3, y[1] + 0.2, y[2] + 3.0, y[3] - 1.0};
    check_jacobians("RN double pendulum (elsewhere)", &s, 0.0, y2, 1e-7);
    mb_index1_free(&f);
    mb_ss_free(&s);
}

static void test_driven(void)
{
    tmodel T;
    build_driven(&T);
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    CHECK(me.autonomous == 0, "driven mechanism: not autonomous");
    /* a consistent state: project an initial guess with the index-1 projection */
    double q[6] = {0, 0.1, 0, 0.6, 0.1, 0}, qd[6] = {0}, y[2];
    mb_index1 f;
    mb_index1_init(&f, &me, 0, 0);
    int rc = mb_index1_project(&f, 0.3, q, qd, NULL, NULL);
    CHECK(rc == MB_OK, "driven mechanism: consistent state (status %d)", rc);
    mb_index1_free(&f);
    mb_ss s;
    mb_ss_init(&s, &me);
    rc = mb_ss_start(&s, 0.3, q, qd, y);
    CHECK(rc == MB_OK && s.nd == 1, "driven mechanism: partition (status %d, %s)", rc, s.msg);
    y[1] += 0.7;  /* a state away from the projected one */
    check_jacobians("driven mechanism", &s, 0.3, y, 1e-6);
    /* M^ dv''/dt against central differences of v'' in t */
    mb_problem p;
    mb_ss_problem(&s, &p);
    double Mh[1], Mat[1], ap[6], am[6], Mv[1];
    rc = p.acc_mjac(0.3, y, y + 1, Mh, NULL, NULL, Mat, p.ctx);
    double h = 1e-5;
    mb_ss_full(&s, 0.3 + h, y, NULL, NULL, ap, NULL);
    mb_ss_full(&s, 0.3 - h, y, NULL, NULL, am, NULL);
    Mv[0] = Mh[0] * (ap[s.indep[0]] - am[s.indep[0]]) / (2 * h);
    CHECK(rc == MB_OK && rel_err(Mat, Mv, 1, fabs(Mv[0])) < 1e-5 && fabs(Mv[0]) > 1e-3,
          "driven mechanism: M^ dv''/dt against central differences (%.1e of %.2e)",
          rel_err(Mat, Mv, 1, fabs(Mv[0])), Mv[0]);
    mb_ss_free(&s);
}

static void test_refusals(void)
{
    tmodel T;
    build_rn(&T, 400, 15, 3e5, 5e4);
    mb_planar_joint *D = tm_joint(&T, MB_JOINT_DISTANCE, -1, 0);  /* implied by the pin */
    D->sj[0] = 1.0;
    D->L = 2.0;
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    double q[6], qd[6], y[4];
    rn_state(q, qd);
    mb_ss s;
    int rc = mb_ss_init(&s, &me);
    if (rc == MB_OK) rc = mb_ss_start(&s, 0.0, q, qd, y);
    /* rows 0, 1 (the pin) and 4 (the distance) are dependent together */
    const char *named = strstr(s.msg, "dependent rows: ");
    int row = named ? named[16] - '0' : -1;
    CHECK(rc == MB_ERR_LINALG && (row == 0 || row == 1 || row == 4),
          "redundant distance constraint: refused naming a row of the dependency (%s)", s.msg);
    mb_ss_free(&s);
    tmodel U;
    tm_init(&U, 1);
    U.body[0] = 1;
    U.body[1] = 1;
    tm_joint(&U, MB_JOINT_FIXED, -1, 0);
    mb_planar_mech(&U.m, &me);
    rc = mb_ss_init(&s, &me);
    CHECK(rc == MB_ERR_ILL_INPUT && strstr(s.msg, "degrees of freedom"),
          "a mechanism without degrees of freedom is refused (%s)", s.msg);
    mb_ss_free(&s);
}

/* ---- the sparse mode (statespace_sparse.c) against the dense mode ---- */

/* sparse s2 moved to the partition of s1 (through a one-entry log) at the consistent
 * (t, q, q'); y (2 nd) in it */
static int same_partition(mb_ss *s2, const mb_ss *s1, double t, const double *q,
                          const double *qd, double *y)
{
    ptrdiff_t nq = s1->nq, nd = s1->nd;
    double ly[2 * NQMAX];
    int part = 0;
    memcpy(ly, q, (size_t)nq * sizeof(double));
    memcpy(ly + nq, qd, (size_t)nq * sizeof(double));
    int rc = mb_ss_load_log(s2, 1, &t, &part, ly, 1, s1->indep);
    if (rc == MB_OK) rc = mb_ss_set_base(s2, t, q, qd);
    for (ptrdiff_t i = 0; i < nd; i++) {
        y[i] = q[s1->indep[i]];
        y[nd + i] = qd[s1->indep[i]];
    }
    return rc;
}

/* v'', J1, J2 and acc_mjac (M^, M^ J1, M^ J2, M^ dv''/dt) of the sparse mode against the
 * dense mode's analytic ones in the same partition, at y and at a state away from it */
static void sparse_vs_dense(const char *name, const mb_mech *me, double t, const double *q,
                            const double *qd, double tol)
{
    mb_ss s1, s2;
    double y[2 * NQMAX], y1[2 * NQMAX], qf[NQMAX], qdf[NQMAX], a1[NQMAX], l1[NQMAX];
    double qdd[NQMAX], lam[NQMAX];
    int rc = mb_ss_init(&s1, me), rs = mb_ss_init_ex(&s2, me, 1);
    CHECK(rc == MB_OK && rs == MB_OK && s2.sp != NULL && s1.sp == NULL,
          "%s: dense and sparse mode (%d, %d: %s)", name, rc, rs, s2.msg);
    if (rc != MB_OK || rs != MB_OK) { mb_ss_free(&s1); mb_ss_free(&s2); return; }
    ptrdiff_t nd = s1.nd, nq = s1.nq, nc = s1.nc;
    rc = mb_ss_start(&s1, t, q, qd, y1);
    rs = mb_ss_start(&s2, t, q, qd, y);
    CHECK(rc == MB_OK && rs == MB_OK, "%s: both start (%s / %s)", name, s1.msg, s2.msg);
    /* the sparse partition's full state against the index-1 formulation */
    mb_ss_full(&s2, t, y, qf, qdf, qdd, lam);
    mb_index1 f;
    mb_index1_init(&f, me, 0, 0);
    mb_index1_solve(&f, t, qf, qdf, a1, l1);
    CHECK(rel_err(qf, q, nq, 1.0) < 1e-12 && rel_err(qdd, a1, nq, max_abs(a1, nq)) < 1e-12 &&
          rel_err(lam, l1, nc, max_abs(l1, nc)) < 1e-12,
          "%s: sparse partition's q, q'' and lambda equal the index-1 ones (%.1e)", name,
          rel_err(qdd, a1, nq, max_abs(a1, nq)));
    mb_index1_free(&f);
    rs = same_partition(&s2, &s1, t, q, qd, y);
    CHECK(rs == MB_OK, "%s: the sparse mode takes the dense partition (%s)", name, s2.msg);
    double J1[NQMAX * NQMAX], J2[NQMAX * NQMAX], K1[NQMAX * NQMAX], K2[NQMAX * NQMAX];
    for (int at = 0; at < 2; at++) {
        if (at) for (ptrdiff_t i = 0; i < 2 * nd; i++) y[i] += 0.05 * (double)(i % 3 + 1);
        rc = mb_ss_jacobians(&s1, t, y, J1, J2, nd);
        rs = mb_ss_jacobians(&s2, t, y, K1, K2, nd);
        double sc = fmax(max_abs(J1, nd * nd), max_abs(J2, nd * nd));
        double e1 = rel_err(J1, K1, nd * nd, sc), e2 = rel_err(J2, K2, nd * nd, sc);
        mb_ss_full(&s1, t, y, NULL, NULL, a1, NULL);
        mb_ss_full(&s2, t, y, NULL, NULL, qdd, NULL);
        CHECK(rc == MB_OK && rs == MB_OK && e1 < tol && e2 < tol &&
              rel_err(a1, qdd, nq, max_abs(a1, nq)) < 1e-11,
              "%s (%s): sparse q'', J1, J2 = dense analytic (%.1e, %.1e)", name,
              at ? "elsewhere" : "start", e1, e2);
    }
    mb_problem p1, p2;
    mb_ss_problem(&s1, &p1);
    mb_ss_problem(&s2, &p2);
    double M1[NQMAX * NQMAX], M2[NQMAX * NQMAX], T1[NQMAX], T2[NQMAX];
    rc = p1.acc_mjac(t, y, y + nd, M1, J1, J2, T1, p1.ctx);
    rs = p2.acc_mjac(t, y, y + nd, M2, K1, K2, T2, p2.ctx);
    double sm = max_abs(M1, nd * nd), sj = fmax(max_abs(J1, nd * nd), max_abs(J2, nd * nd));
    double em = rel_err(M1, M2, nd * nd, sm), ej = fmax(rel_err(J1, K1, nd * nd, sj),
                                                        rel_err(J2, K2, nd * nd, sj));
    double et = rel_err(T1, T2, nd, fmax(max_abs(T1, nd), 1e-300));
    CHECK(rc == MB_OK && rs == MB_OK && em < 1e-12 && ej < tol && (me->autonomous || et < 1e-6),
          "%s: sparse acc_mjac = dense (M^ %.1e, M^ J %.1e, M^ dv''/dt %.1e)", name, em, ej, et);
    mb_ss_free(&s1);
    mb_ss_free(&s2);
}

static void test_sparse_mode(void)
{
    tmodel T;
    build_rn(&T, 400, 15, 3e5, 5e4);
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    double q[6], qd[6];
    rn_state(q, qd);
    sparse_vs_dense("RN double pendulum (sparse)", &me, 0.0, q, qd, 1e-7);
    tmodel D;
    build_driven(&D);
    mb_planar_mech(&D.m, &me);
    double qq[6] = {0, 0.1, 0, 0.6, 0.1, 0}, qqd[6] = {0};
    mb_index1 f;
    mb_index1_init(&f, &me, 0, 0);
    mb_index1_project(&f, 0.3, qq, qqd, NULL, NULL);
    mb_index1_free(&f);
    sparse_vs_dense("driven mechanism (sparse)", &me, 0.3, qq, qqd, 1e-6);
    /* redundant constraints: the sparse partition refuses them too */
    mb_planar_joint *R = tm_joint(&T, MB_JOINT_DISTANCE, -1, 0);
    R->sj[0] = 1.0;
    R->L = 2.0;
    mb_planar_mech(&T.m, &me);
    mb_ss s;
    double y[4];
    int rc = mb_ss_init_ex(&s, &me, 1);
    if (rc == MB_OK) rc = mb_ss_start(&s, 0.0, q, qd, y);
    CHECK(rc == MB_ERR_LINALG && strstr(s.msg, "dependent rows"),
          "sparse mode: redundant distance constraint refused (%d: %s)", rc, s.msg);
    mb_ss_free(&s);
}

/* ---- driver: MB_NEW_COORDINATES and the check hook ---- */

/* the damped pendulum q'' = -sin(q - shift) - 0.1 q' in coordinates q = angle + shift;
 * the projection moves the shift between 0 and 1 every `every` steps (q += +-1) and
 * says so with MB_NEW_COORDINATES: a second-order problem throughout */
typedef struct shift_ctx {
    double shift;
    int every, count, nchanges;
    double t_last, h_cap, t_from;
    int nchecks_rejected;
} shift_ctx;

static int shift_rhs(double t, const double *y, double *f, void *ctx)
{
    (void)t;
    const shift_ctx *c = ctx;
    f[0] = y[1];
    f[1] = -sin(y[0] - c->shift) - 0.1 * y[1];
    return 0;
}

static int shift_project(double t, double *y, void *ctx)
{
    shift_ctx *c = ctx;
    c->t_last = t;
    if (++c->count % c->every)
        return 0;
    double ns = c->shift == 0.0 ? 1.0 : 0.0;
    y[0] += ns - c->shift;
    c->shift = ns;
    c->nchanges++;
    return MB_NEW_COORDINATES;
}

static int cap_check(double t, const double *y, void *ctx)
{
    (void)y;
    shift_ctx *c = ctx;
    if (t > c->t_from && t - c->t_last > c->h_cap) {
        c->nchecks_rejected++;
        return 1;
    }
    return 0;
}

static double run_shift(const char *method, int every, double rtol, int *nchanges)
{
    shift_ctx c = {0.0, every, 0, 0, 0.0, INFINITY, INFINITY, 0};
    mb_problem p = {0};
    p.n = 2;
    p.nq = 1;
    p.rhs = shift_rhs;
    p.project = shift_project;
    p.ctx = &c;
    mb_options o = {0};
    double atol[2] = {rtol, rtol}, y0[2] = {2.0, 0.0};
    o.rtol = rtol;
    o.atol = atol;
    mb_result res = {0};
    int rc = mb_driver_run(mb_method_find(method), &p, 0.0, 10.0, y0, &o, &res);
    double q = rc == MB_OK ? res.y[(res.nt - 1) * 2] - c.shift : NAN;
    *nchanges = c.nchanges;
    mb_result_free(&res);
    return q;
}

static void test_new_coordinates(void)
{
    int nch;
    double ref = run_shift("dop853", 1 << 30, 1e-13, &nch);
    const char *methods[] = {"adams", "bdf", "rosenbrock_nystrom", "w_nystrom", "dopri5"};
    for (int k = 0; k < 5; k++) {
        double q = run_shift(methods[k], 25, 1e-8, &nch);
        double err = fabs(q - ref);
        CHECK(nch >= 1 && err < 1e-6, "%s: %d changes of coordinates by the projection, error "
              "at t = 10: %.1e", methods[k], nch, err);
    }
    /* the check hook: steps after t = 5 are rejected unless shorter than 0.01 */
    shift_ctx c = {0.0, 1 << 30, 0, 0, 0.0, 0.01, 5.0, 0};
    mb_problem p = {0};
    p.n = 2;
    p.rhs = shift_rhs;
    p.project = shift_project;
    p.check = cap_check;
    p.ctx = &c;
    mb_options o = {0};
    double atol[2] = {1e-6, 1e-6}, y0[2] = {1.0, 0.0};
    o.rtol = 1e-6;
    o.atol = atol;
    mb_result res = {0};
    int rc = mb_driver_run(mb_method_find("dopri5"), &p, 0.0, 6.0, y0, &o, &res);
    double hmax = 0;
    for (ptrdiff_t i = 0; i < res.n_hist; i++)
        if (res.hist_t[i] - res.hist_h[i] >= 5.0) hmax = fmax(hmax, res.hist_h[i]);
    CHECK(rc == MB_OK && c.nchecks_rejected > 0 && res.stats.nfail == c.nchecks_rejected &&
          hmax <= 0.01, "check hook: %d steps rejected (nfail %ld), longest step after t = 5: "
          "%.3g", c.nchecks_rejected, res.stats.nfail, hmax);
    mb_result_free(&res);
}

int main(void)
{
    test_rn_pendulum();
    test_driven();
    test_refusals();
    test_sparse_mode();
    test_new_coordinates();
    return check_summary();
}
