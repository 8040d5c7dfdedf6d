/* Tests of the formulation interface (csrc/mbs/formulation.h) over the RN double pendulum
 * (planar kernels, stiff RSDAs):
 *
 *  - the table: names and codes round-trip, an unknown kind is refused;
 *  - every kind: the integrated state's size, the consistent y0, and a run of radau_iia
 *    through mb_form_problem that is bit for bit the run through the engine's own
 *    problem (index1.h, dae.h, statespace.h): the interface adds no arithmetic;
 *  - outputs after the run: the full state, q'' and lambda of the last point, the
 *    position and velocity constraints satisfied, lambda equal across formulations;
 *  - the SUNDIALS policy (every method on index1; ida alone, with its settings, on
 *    index1_dae and ggl; none on index2, index3 and the state space), the projection
 *    option (set on index1, refused by the state space), the preferred independent
 *    coordinates of the state space (and an index out of range), events at full states
 *    (mb_form_full), the explanation of a failure (mb_form_why), a DAE on a mechanism
 *    without constraints refused with nothing left to close (ASan: no leak).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "assemble.h"
#include "check.h"
#include "dae.h"
#include "driver.h"
#include "formulation.h"
#include "index1.h"
#include "model.h"
#include "registry.h"
#include "statespace.h"
#include "status.h"

#define NMAX 40
#include "planar_fixture.h"

#define T_END 0.3

static double max_abs_diff(const double *a, const double *b, ptrdiff_t n)
{
    double r = 0;
    for (ptrdiff_t i = 0; i < n; i++) r = fmax(r, fabs(a[i] - b[i]));
    return r;
}

static void test_table(void)
{
    const char *names[] = {"index1", "index1_dae", "index2", "index3", "ggl", "state_space",
                           "joint"};
    int ok = 1;
    for (int k = 0; k < MB_FORM_COUNT; k++)
        ok &= mb_form_name(k) && strcmp(mb_form_name(k), names[k]) == 0 &&
              mb_form_kind_of(names[k]) == k;
    CHECK(ok && MB_FORM_COUNT == 7, "the seven formulations by name and code");
    CHECK(MB_FORM_INDEX1_DAE == MB_DAE_INDEX1 && MB_FORM_INDEX2 == MB_DAE_INDEX2 &&
          MB_FORM_INDEX3 == MB_DAE_INDEX3 && MB_FORM_GGL == MB_DAE_GGL,
          "the DAE kinds keep the codes of mb_dae_kind");
    CHECK(mb_form_name(MB_FORM_COUNT) == NULL && mb_form_kind_of("index4") == -1,
          "no name for an unknown kind, no kind for an unknown name");
    tmodel T;
    mb_mech me;
    build_rn(&T, 30, 5, 300, 50);
    mb_planar_mech(&T.m, &me);
    mb_formulation F;
    int rc = mb_form_open(&F, 17, &me, NULL);
    CHECK(rc == MB_ERR_ILL_INPUT && strstr(F.msg, "unknown"), "unknown kind: %s", F.msg);
    mb_form_close(&F);
}

/* the engine's own problem and y0 of kind k (what the binding did before the interface) */
typedef struct engine {
    mb_index1 i1;
    mb_dae dae;
    mb_ss ss;
    double atol_q[2 * NQMAX];
} engine;

static int engine_open(engine *E, int kind, const mb_mech *me, const double *q, const double *qd,
                       double *y0, mb_problem *p)
{
    memset(E, 0, sizeof *E);
    int rc;
    if (kind == MB_FORM_INDEX1) {
        rc = mb_index1_init_ex(&E->i1, me, 0, 0, -1);
        memcpy(y0, q, (size_t)me->nq * sizeof(double));
        memcpy(y0 + me->nq, qd, (size_t)me->nq * sizeof(double));
        mb_index1_problem(&E->i1, p);
    } else if (kind == MB_FORM_STATE_SPACE) {
        rc = mb_ss_init(&E->ss, me);
        for (int i = 0; i < 2 * me->nq; i++) E->atol_q[i] = 1e-8;
        E->ss.atol_q = E->atol_q;
        if (rc == MB_OK) rc = mb_ss_start(&E->ss, 0.0, q, qd, y0);
        mb_ss_problem(&E->ss, p);
    } else {
        rc = mb_dae_init(&E->dae, me, kind);
        if (rc == MB_OK) rc = mb_dae_initial(&E->dae, 0.0, q, qd, y0, NULL);
        mb_dae_problem(&E->dae, p);
    }
    return rc;
}

static void engine_close(engine *E, int kind)
{
    if (kind == MB_FORM_INDEX1) mb_index1_free(&E->i1);
    else if (kind == MB_FORM_STATE_SPACE) mb_ss_free(&E->ss);
    else mb_dae_free(&E->dae);
}

static void run_kind(int kind, const mb_mech *me, const double *q, const double *qd,
                     double *lam_end, double *q_end)
{
    const char *name = mb_form_name(kind);
    ptrdiff_t nq = me->nq, nc = me->nc;
    ptrdiff_t n_want = kind == MB_FORM_INDEX1 ? 2 * nq : kind == MB_FORM_STATE_SPACE
                       ? 2 * (nq - nc) : kind == MB_FORM_GGL ? 2 * nq + 2 * nc : 2 * nq + nc;
    mb_formulation F;
    /* the state space as its engine runs it: the paper's pivoting, no preference (the
     * formulation's default prefers the coordinates of stiff force elements) */
    mb_form_options fo;
    memset(&fo, 0, sizeof fo);
    fo.pivoting = 1;
    int rc = mb_form_open(&F, kind, me, &fo);
    CHECK(rc == MB_OK && F.n == n_want && F.kind == kind, "%s: open, n = %td", name, F.n);
    double atol[NMAX], y0[NMAX], y0e[NMAX];
    for (int i = 0; i < NMAX; i++) atol[i] = 1e-8;
    const double *atol_y = NULL;
    rc = mb_form_initial(&F, 0.0, q, qd, atol, y0, &atol_y);
    mb_problem p, pe;
    mb_form_problem(&F, &p);
    engine E;
    int rce = engine_open(&E, kind, me, q, qd, y0e, &pe);
    CHECK(rc == MB_OK && rce == MB_OK && memcmp(y0, y0e, (size_t)F.n * sizeof(double)) == 0 &&
          atol_y != NULL, "%s: y0 as the engine's", name);
    CHECK(p.n == pe.n && p.rhs == pe.rhs && p.jac == pe.jac && (p.mass != NULL) == (pe.mass != NULL)
          && p.project == pe.project && p.check == pe.check, "%s: the engine's problem", name);
    const mb_method *m = mb_method_find("radau_iia");
    mb_options o;
    memset(&o, 0, sizeof o);
    o.rtol = 1e-8;
    o.atol = atol_y;
    mb_result r1, r2;
    memset(&r1, 0, sizeof r1);
    memset(&r2, 0, sizeof r2);
    mb_driver_run(m, &p, 0.0, T_END, y0, &o, &r1);
    if (kind == MB_FORM_STATE_SPACE)
        o.atol = E.ss.atol_v;
    mb_driver_run(m, &pe, 0.0, T_END, y0e, &o, &r2);
    CHECK(r1.status == MB_OK && r1.nt == r2.nt && r1.stats.nfev == r2.stats.nfev &&
          memcmp(r1.y, r2.y, (size_t)(r1.nt * F.n) * sizeof(double)) == 0,
          "%s: radau_iia through the interface is the engine's run bit for bit (%td points)",
          name, r1.nt);
    /* the last point in full */
    double qf[NQMAX], qdf[NQMAX], qdd[NQMAX], lam[NQMAX], phi[NQMAX], pq[NQMAX * NQMAX];
    const double *yl = r1.y + (r1.nt - 1) * F.n;
    rc = mb_form_outputs(&F, r1.t[r1.nt - 1], yl, qf, qdf, qdd, lam);
    me->phi(T_END, qf, phi, me->ctx);
    me->phi_q(T_END, qf, pq, nc, me->ctx);
    double vel = 0;
    for (ptrdiff_t k = 0; k < nc; k++) {
        double s = 0;
        for (ptrdiff_t j = 0; j < nq; j++) s += pq[k + nc * j] * qdf[j];
        vel = fmax(vel, fabs(s));
    }
    double pos = 0;
    for (ptrdiff_t k = 0; k < nc; k++) pos = fmax(pos, fabs(phi[k]));
    double tol = kind == MB_FORM_INDEX3 || kind == MB_FORM_INDEX1_DAE || kind == MB_FORM_INDEX1
                 ? 1e-5 : 1e-8;
    CHECK(rc == MB_OK && pos < tol && vel < 1e-3, "%s: outputs of the last point (|Phi| %.1e, "
          "|Phi'| %.1e)", name, pos, vel);
    memcpy(lam_end, lam, (size_t)nc * sizeof(double));
    memcpy(q_end, qf, (size_t)nq * sizeof(double));
    mb_result_free(&r1);
    mb_result_free(&r2);
    engine_close(&E, kind);
    mb_form_close(&F);
    CHECK(F.impl == NULL, "%s: closed", name);
}

static void test_runs(void)
{
    tmodel T;
    mb_mech me;
    double q[NQMAX], qd[NQMAX], lam[MB_FORM_COUNT][NQMAX], qe[MB_FORM_COUNT][NQMAX];
    build_rn(&T, 30, 5, 300, 50);
    mb_planar_mech(&T.m, &me);
    rn_state(q, qd);
    /* every kind over the mechanism's own table; the joint formulation takes a kinematic
     * tree besides (tests/c/test_joint_tree.c, tests/test_joint.py) and refuses to open
     * without one */
    for (int k = 0; k < MB_FORM_COUNT; k++)
        if (k != MB_FORM_JOINT)
            run_kind(k, &me, q, qd, lam[k], qe[k]);
    mb_formulation F;
    int rc = mb_form_open(&F, MB_FORM_JOINT, &me, NULL);
    CHECK(rc == MB_ERR_ILL_INPUT && strstr(F.msg, "tree"), "joint without a tree: %s", F.msg);
    double dl = 0, dq = 0, ls = 0;
    for (int k = 1; k < MB_FORM_COUNT; k++) {
        if (k == MB_FORM_JOINT)
            continue;
        dl = fmax(dl, max_abs_diff(lam[k], lam[0], me.nc));
        dq = fmax(dq, max_abs_diff(qe[k], qe[0], me.nq));
    }
    for (ptrdiff_t i = 0; i < me.nc; i++) ls = fmax(ls, fabs(lam[0][i]));
    CHECK(dq < 1e-4 && dl < 1e-3 * ls, "every formulation ends in the same state (q within "
          "%.1e, lambda within %.1e of %.1e)", dq, dl, ls);
}

static void test_policies(void)
{
    tmodel T;
    mb_mech me;
    double q[NQMAX], qd[NQMAX], atol[NMAX], y0[NMAX];
    const double *atol_y;
    for (int i = 0; i < NMAX; i++) atol[i] = 1e-8;
    build_rn(&T, 30, 5, 300, 50);
    mb_planar_mech(&T.m, &me);
    rn_state(q, qd);
    mb_formulation F;
    mb_form_ida ida;
    mb_problem p;

    mb_form_open(&F, MB_FORM_INDEX1, &me, NULL);
    CHECK(mb_form_sundials(&F, "cvode_bdf", &ida) == MB_OK && !ida.algebraic &&
          mb_form_sundials(&F, "ida", &ida) == MB_OK && !ida.algebraic,
          "index1: every SUNDIALS method, ida without DAE settings");
    mb_form_problem(&F, &p);
    CHECK(p.project == NULL && !mb_form_maps_state(&F), "index1: no projection unless asked");
    CHECK(mb_form_why(&F, MB_ERR_LINALG) == NULL, "index1: nothing to explain without a message");
    mb_form_close(&F);
    mb_form_options o = {0};
    o.project = 1;
    mb_form_open(&F, MB_FORM_INDEX1, &me, &o);
    mb_form_problem(&F, &p);
    CHECK(p.project == mb_index1_project_hook, "index1: project=1 sets the projection hook");
    mb_form_close(&F);

    for (int kind = MB_FORM_INDEX1_DAE; kind <= MB_FORM_GGL; kind++) {
        mb_form_open(&F, kind, &me, NULL);
        mb_form_initial(&F, 0.0, q, qd, atol, y0, &atol_y);
        int rc_cv = mb_form_sundials(&F, "cvode_bdf", &ida);
        int rc_ida = mb_form_sundials(&F, "ida", &ida);
        int want = kind == MB_FORM_INDEX1_DAE || kind == MB_FORM_GGL;
        int alg_ok = 1;
        for (ptrdiff_t i = 0; want && i < F.n; i++) alg_ok &= ida.algebraic[i] == (i >= 2 * me.nq);
        CHECK(rc_cv == MB_ERR_NOT_SUPPORTED && strstr(F.msg, "ida") &&
              (want ? rc_ida == MB_OK && alg_ok && ida.yp0 && ida.jac &&
                      ida.suppress_alg == (kind == MB_FORM_GGL)
                    : rc_ida == MB_ERR_NOT_SUPPORTED),
              "%s: cvode refused, ida %s", mb_form_name(kind), want ? "with its settings" : "refused");
        if (want) {
            double d = 0;  /* y'(t0) = (v0, q''0, 0) */
            for (ptrdiff_t i = 0; i < me.nq; i++) d = fmax(d, fabs(ida.yp0[i] - qd[i]));
            CHECK(d == 0.0, "%s: y'(t0) starts with v0", mb_form_name(kind));
        }
        mb_form_close(&F);
    }

    CHECK(mb_form_open(&F, MB_FORM_STATE_SPACE, &me, &o) == MB_ERR_ILL_INPUT &&
          strstr(F.msg, "project") && F.impl == NULL, "state space refuses project=1");
    int bad[1] = {99}, good[2] = {2, 5};
    mb_form_options ob = {0}, og = {0};
    ob.prefer = bad;
    ob.nprefer = 1;
    CHECK(mb_form_open(&F, MB_FORM_STATE_SPACE, &me, &ob) == MB_ERR_ILL_INPUT &&
          strstr(F.msg, "independent"), "state space: an independent index out of range");
    og.prefer = good;
    og.nprefer = 2;
    mb_form_open(&F, MB_FORM_STATE_SPACE, &me, &og);
    int rc = mb_form_initial(&F, 0.0, q, qd, atol, y0, &atol_y);
    const mb_ss *s = F.impl;
    CHECK(rc == MB_OK && s->indep[0] == 2 && s->indep[1] == 5 && y0[0] == q[2] && y0[1] == q[5],
          "state space: the preferred angles are independent");
    CHECK(mb_form_sundials(&F, "cvode_bdf", &ida) == MB_ERR_NOT_SUPPORTED &&
          strstr(F.msg, "state-space") && mb_form_maps_state(&F),
          "state space: no SUNDIALS method, events through full states");
    double qf[NQMAX], qdf[NQMAX];
    rc = mb_form_full(&F, 0.0, y0, qf, qdf);
    CHECK(rc == MB_OK && max_abs_diff(qf, q, me.nq) < 1e-10 && max_abs_diff(qdf, qd, me.nq) < 1e-9,
          "state space: the full state of y0 is (q0, q0')");
    mb_form_close(&F);

    tmodel U;  /* a free body: no constraints */
    mb_mech mu;
    tm_init(&U, 1);
    U.body[0] = 1;
    U.body[1] = 1;
    mb_planar_mech(&U.m, &mu);
    CHECK(mb_form_open(&F, MB_FORM_INDEX2, &mu, NULL) == MB_ERR_ILL_INPUT &&
          strstr(F.msg, "constraints") && F.impl == NULL,
          "a DAE without constraints is refused, nothing left open");
    mb_form_close(&F);
}

int main(void)
{
    test_table();
    test_runs();
    test_policies();
    return check_summary();
}
