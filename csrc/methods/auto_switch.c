/* Automatic stiff / non-stiff switching ("auto"), in the spirit of LSODA (Petzold
 * 1983): one composite kernel over two existing ones,
 *   non-stiff phases: dopri5 (erk.c), explicit, order 5(4);
 *   stiff phases:     rodas4 (rosenbrock.c), L-stable, order 4(3), with df/dy from
 *                     the problem or finite differences (mb_jac).
 * The driver sees one method.  step, accept, dense and dense_degree call the active
 * sub-method's hooks with s->m and s->work pointing at it and its workspace for the
 * time of the call; s->order and s->error_order follow the active sub-method, so the
 * driver's controller uses its exponent (method.h).  Both sub-methods use f(t, y)
 * (MB_USES_F0) and the driver's f0 is the problem's f whatever the method, so an
 * FSAL value of dopri5 carries over a switch.
 *
 * The boundary.  dopri5's stability interval reaches h lambda = -3.31.  On a stiff
 * problem at a loose tolerance its step settles there; at a tight one the error of
 * the stiff mode meets the tolerance first, inside the stability region, at
 * |h lambda| ~ tol^(1/5) like any accuracy-limited step, only larger by a constant.
 * Measured (rtol 1e-4, 1e-6, 1e-8, 1e-10, 1e-12): vdp1000 3.3, 3.1, 1.8, 0.76,
 * 0.31; HIRES 3.3, 2.9, 1.4, 0.61, 0.25; Van der Pol eps = 1e-6 3.3 throughout;
 * while non-stiff problems stay far below (Arenstorf 2.2, 1.5, 0.55, 0.10, 0.034 at
 * most, pendulum, Lorenz, Kepler, Brusselator less).  So a step counts as held by
 * stiffness when
 *   |h lambda| > B(rtol) = min(3, 30 rtol^(1/5))  (3 for rtol >= 1e-5, 1.9 at 1e-6,
 *                                                   0.75 at 1e-8, 0.30 at 1e-10).
 *
 * Switching rules, applied in accept() (after the dense output and the events of
 * the step, so every step is interpolated by the method that took it):
 *   non-stiff -> stiff.  After every accepted dopri5 step, DOPRI5's stiffness test
 *     (Hairer & Wanner II, IV.2; mb_erk_stiffness) estimates h |lambda| from the last
 *     two stages, in the norm weighted by atol + rtol |y| (DOPRI5 uses plain 2-norms,
 *     which read ||J|| rather than rho(J) when the components have different scales:
 *     positions and velocities).  The test is positive above B.  After n_need
 *     positive tests (N_STIFF = 15 at first, DOPRI5's count before it gives up with
 *     "problem probably stiff"; N_RESET = 6 negative tests in a row clear the count,
 *     as in DOPRI5) the estimate is confirmed with the true spectral radius: J at the
 *     step's end (mb_jac: counted in njev) and power iterations.  The quotient
 *     along y_new - y_s can still exceed rho(J) by far for a non-normal J (a
 *     mass-spring-damper with k = 100: up to 10x).  If |h| rho(J) > B the run goes
 *     stiff; if not, the count starts over and n_need doubles (up to N_STIFF_MAX), so
 *     that a problem that keeps fooling the test pays O(log(steps)) Jacobians.  A
 *     stiff phase in which rodas4 never took a step H_GAIN times dopri5's last one
 *     was a false alarm as well (HIRES at rtol 1e-12: the confirmation passes by a
 *     hair, rodas4 steps at 0.6 times dopri5's step and switches back within 8-18
 *     steps): it doubles n_need when it ends; a real one resets n_need to N_STIFF.
 *   stiff -> non-stiff.  After every accepted rodas4 step, the spectral radius of the
 *     Jacobian that step used (evaluated anyway) is estimated by POWER_ITERS power
 *     iterations, warm-started from the last iterate so that the estimate improves
 *     from step to step (2 n^2 flops each, no f evaluation).  When |h| rho(J) <= B/2
 *     for N_BACK accepted steps in a row, dopri5 would take the step rodas4 takes for
 *     its accuracy well inside its own limit (the problem is no longer stiff on this
 *     scale) and the run switches back.  The factor 2 absorbs the growth of h the
 *     controller may grant the next step and keeps a mildly stiff phase from
 *     switching back and forth.
 * On a switch the new sub-method is initialized (rodas4 drops its Jacobian and LU)
 * and the step size goes on from the current one: the driver's h is not reset.
 * stats.nswitch counts the switches.
 *
 * Restarts at switching events (method.h) re-initialize the active sub-method and
 * clear the counters but keep the mode: after a restart the driver goes on with the
 * step size it had, and in a stiff phase that step is far beyond dopri5's stability
 * limit (on Robertson by a factor ~1e10: the explicit stages overflow).  The first
 * init of a run (no step taken yet) starts non-stiff.
 *
 * Mass matrices are refused: dopri5 integrates y' = f only (rodas4, radau_iia or bdf
 * take M y' = f).
 *
 * Workspace (layout()): state | dopri5 workspace | rodas4 workspace | v, u (n each:
 * power iteration, weights).  In non-stiff mode rodas4's workspace is idle: the
 * confirmation borrows it for J and f (rodas4's init resets it before it is used). */
#include <float.h>
#include <math.h>
#include <string.h>
#include "../linalg/dense.h" /* mb_gemv */
#include "auto_switch.h"
#include "carve.h"
#include "erk.h"
#include "rosenbrock.h"
#include "status.h"

#define NONSTIFF (&mb_method_dopri5)
#define STIFF (&mb_method_rodas4)

static const double Z_MAX = 3.0;   /* B at loose tolerances (dopri5's limit: 3.31) */
static const double Z_TOL = 30.0;  /* B = min(Z_MAX, Z_TOL rtol^(1/5)) */
static const int N_STIFF = 15;     /* positive tests before the confirmation */
static const int N_STIFF_MAX = 960; /* after failed confirmations: 15 * 2^6 */
static const int N_RESET = 6;      /* negative tests in a row clearing the count */
static const int N_BACK = 5;       /* rodas4 steps in a row with |h| rho(J) <= B/2 */
static const double H_GAIN = 2.0;  /* a stiff phase whose steps never exceeded H_GAIN
                                      times dopri5's last one was a false alarm */
enum { POWER_ITERS = 8, POWER_ITERS_COLD = 16 };

typedef struct auto_state {
    int stiff;        /* active sub-method: 0 dopri5, 1 rodas4 */
    int n_pos, n_neg; /* dopri5: positive tests counted, negative tests in a row */
    int n_need;       /* dopri5: positive tests that call for a confirmation */
    int n_back;       /* rodas4: accepted steps in a row with |h| rho(J) <= B/2 */
    double h_switch;  /* |h| of dopri5's last step before the switch to rodas4 */
    double h_max;     /* rodas4: largest |h| accepted since */
    int v_ok;         /* v holds the last power iterate (unit 2-norm) */
} auto_state;

typedef struct auto_work {
    auto_state *st;
    double *w_ns, *w_st; /* the sub-methods' workspaces */
    double *v, *u;       /* power iteration (u also: weights of the stiffness test) */
} auto_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, const mb_problem *p, auto_work *w)
{
    w->st = mb_carve_bytes(c, sizeof *w->st);
    w->w_ns = mb_carve(c, NONSTIFF->work_size(p, NONSTIFF->data));
    w->w_st = mb_carve(c, STIFF->work_size(p, STIFF->data));
    w->v = mb_carve(c, (size_t)p->n);
    w->u = mb_carve(c, (size_t)p->n);
    return c->off;
}

static size_t auto_work_size(const mb_problem *p, const void *data)
{
    (void)data;
    auto_work w;
    return layout(&(mb_carver){NULL, 0}, p, &w);
}

static void carve(const mb_stepper *s, auto_work *w)
{
    layout(&(mb_carver){s->work, 0}, s->p, w);
}

static const mb_method *active(const auto_state *st)
{
    return st->stiff ? STIFF : NONSTIFF;
}

/* The stepper as the active sub-method sees it, for the time of one call. */
typedef struct saved {
    const mb_method *m;
    double *work;
} saved;

static saved enter(mb_stepper *s, const auto_work *w)
{
    saved sv = {s->m, s->work};
    s->m = active(w->st);
    s->work = w->st->stiff ? w->w_st : w->w_ns;
    return sv;
}

static void leave(mb_stepper *s, saved sv)
{
    s->m = sv.m;
    s->work = sv.work;
}

/* B(rtol): the |h lambda| above which a dopri5 step counts as held by stiffness */
static double boundary(double rtol)
{
    return fmin(Z_MAX, Z_TOL * pow(fmax(rtol, DBL_EPSILON), 0.2));
}

/* Make the sub-method of the current mode active: orders, counters, its init. */
static int start_mode(mb_stepper *s, auto_work *w)
{
    const mb_method *m = active(w->st);
    s->order = m->order;
    s->error_order = m->error_order;
    w->st->n_pos = w->st->n_neg = w->st->n_back = 0;
    if (!m->init)
        return MB_OK;
    saved sv = enter(s, w);
    int rc = m->init(s);
    leave(s, sv);
    return rc;
}

static int auto_init(mb_stepper *s)
{
    if (s->p->mass)
        return mb_fail(s, MB_ERR_NOT_SUPPORTED,
                       "Method 'auto' does not take a mass matrix (its non-stiff phases use "
                       "dopri5); use rodas4, radau_iia or bdf.");
    auto_work w;
    carve(s, &w);
    if (s->stats->nsteps == 0) {  /* the start of a run (later calls are restarts) */
        memset(w.st, 0, sizeof *w.st);
        w.st->n_need = N_STIFF;
    }
    w.st->v_ok = 0;
    return start_mode(s, &w);
}

static int auto_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                     double *err)
{
    auto_work w;
    carve(s, &w);
    saved sv = enter(s, &w);
    int rc = s->m->step(s, t, h, y, y_new, err);
    leave(s, sv);
    return rc;
}

static double norm2(ptrdiff_t n, const double *x)
{
    double acc = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        acc += x[i] * x[i];
    return sqrt(acc);
}

/* rho(J) (J n x n, column-major) by iters power iterations from v (kept across calls
 * while v_ok).  A dominant complex pair makes single ratios ||J v|| / ||v|| oscillate;
 * their geometric mean over the last half of the iterations tends to |lambda_max|. */
static double spectral_radius(ptrdiff_t n, const double *J, auto_work *w, int iters)
{
    double *v = w->v, *u = w->u;
    if (!w->st->v_ok) {  /* a start vector with no structure a problem could share */
        for (ptrdiff_t i = 0; i < n; i++)
            v[i] = 1.0 + 0.5 * sin(1.7 * (double)i + 0.3);
        double nv = norm2(n, v);
        for (ptrdiff_t i = 0; i < n; i++)
            v[i] /= nv;
        w->st->v_ok = 1;
    }
    double log_sum = 0.0;
    int count = 0;
    for (int k = 0; k < iters; k++) {
        mb_gemv(n, n, 1.0, J, n, v, 0.0, u);
        double nu = norm2(n, u);
        if (!(nu > 0.0) || !isfinite(nu)) {  /* J v = 0 (or J not finite): start over */
            w->st->v_ok = 0;
            return nu > 0.0 ? INFINITY : 0.0;
        }
        for (ptrdiff_t i = 0; i < n; i++)
            v[i] = u[i] / nu;
        if (2 * k >= iters) {
            log_sum += log(nu);
            count++;
        }
    }
    return exp(log_sum / count);
}

/* rho(J) at the end (t_new, y_new) of the dopri5 step just accepted, with J and, when
 * the FSAL value is not there, f in rodas4's idle workspace. */
static int confirm_rho(mb_stepper *s, auto_work *w, double t_new, const double *y_new,
                       double *rho)
{
    ptrdiff_t n = s->n;
    double *J = w->w_st, *fy = s->f1;
    int rc;
    if (!s->f1_ok) {
        fy = J + n * n;
        if ((rc = mb_rhs(s, t_new, y_new, fy)) != MB_OK)
            return rc;
    }
    if ((rc = mb_jac(s, t_new, y_new, fy, J)) != MB_OK)
        return rc;
    w->st->v_ok = 0;
    *rho = spectral_radius(n, J, w, POWER_ITERS_COLD);
    return MB_OK;
}

/* The switching test of the step just accepted, on the active sub-method's stepper;
 * *go: switch now. */
static int switch_test(mb_stepper *s, auto_work *w, double t_new, const double *y_new,
                       int *go)
{
    auto_state *st = w->st;
    double B = boundary(s->rtol), h = fabs(s->h_last), *scale = w->u, rho;
    int rc;
    *go = 0;
    if (st->stiff) {
        st->h_max = fmax(st->h_max, h);
        const double *J = mb_ros_jacobian(s);
        if (!J)
            return MB_OK;
        if (h * spectral_radius(s->n, J, w, POWER_ITERS) <= 0.5 * B)
            *go = ++st->n_back >= N_BACK;
        else
            st->n_back = 0;
        return MB_OK;
    }
    for (ptrdiff_t i = 0; i < s->n; i++)
        scale[i] = s->atol[i] + s->rtol * fmax(fabs(s->y_last[i]), fabs(y_new[i]));
    double h_lambda;
    if ((rc = mb_erk_stiffness(s, scale, &h_lambda)) != MB_OK)
        return rc;
    if (h_lambda <= B) {
        if (++st->n_neg >= N_RESET)
            st->n_pos = 0;
        return MB_OK;
    }
    st->n_neg = 0;
    if (++st->n_pos < st->n_need)
        return MB_OK;
    st->n_pos = 0;
    if ((rc = confirm_rho(s, w, t_new, y_new, &rho)) != MB_OK)
        return rc;
    *go = h * rho > B;
    if (!*go)
        st->n_need = (int)fmin(2 * st->n_need, N_STIFF_MAX);
    return MB_OK;
}

static int auto_accept(mb_stepper *s, double t_new, const double *y_new)
{
    auto_work w;
    carve(s, &w);
    saved sv = enter(s, &w);
    int rc = s->m->accept ? s->m->accept(s, t_new, y_new) : MB_OK, go = 0;
    if (rc == MB_OK)
        rc = switch_test(s, &w, t_new, y_new, &go);
    leave(s, sv);
    if (rc != MB_OK || !go)
        return rc;
    auto_state *st = w.st;
    if (st->stiff)  /* rodas4 took no larger steps than dopri5 did: a false alarm */
        st->n_need = st->h_max < H_GAIN * st->h_switch ? (int)fmin(2 * st->n_need, N_STIFF_MAX)
                                                       : N_STIFF;
    st->stiff = !st->stiff;
    st->h_switch = fabs(s->h_last);
    st->h_max = 0.0;
    s->stats->nswitch++;
    return start_mode(s, &w);
}

static int auto_dense(mb_stepper *s, double *C)
{
    auto_work w;
    carve(s, &w);
    saved sv = enter(s, &w);
    int rc = s->m->dense(s, C);
    leave(s, sv);
    return rc;
}

static int auto_dense_degree(const mb_stepper *s)
{
    auto_work w;
    carve(s, &w);
    mb_stepper sub = *s;
    sub.m = active(w.st);
    sub.work = w.st->stiff ? w.w_st : w.w_ns;
    return sub.m->dense_degree(&sub);
}

/* order and error order: dopri5's, the mode a run starts in (s->order and
 * s->error_order follow the active sub-method); max_dense_degree: the ERK family's
 * bound (erk.c), above rodas4's 3; tests/c/test_auto.c checks both.  Not MB_FSAL:
 * dopri5 leaves f1 (the driver takes it whenever f1_ok), rodas4 does not. */
const mb_method mb_method_auto = {
    .name = "auto",
    .order = 5,
    .error_order = 4,
    .flags = MB_EMBEDDED | MB_USES_F0 | MB_NEEDS_JAC | MB_IMPLICIT,
    .max_dense_degree = 13,
    .data = NULL,
    .work_size = auto_work_size,
    .init = auto_init,
    .step = auto_step,
    .accept = auto_accept,
    .dense = auto_dense,
    .dense_degree = auto_dense_degree,
};
