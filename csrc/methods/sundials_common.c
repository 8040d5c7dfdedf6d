/* The run of a SUNDIALS integrator (see sundials.h): set-up and clean-up, the
 * options every integrator takes, the output loop over internal steps, dense
 * records, events, statistics and status, all through the integrator's sun_api
 * (sundials_impl.h).  The adapters (sundials_cvode.c, sundials_ida.c,
 * sundials_arkode.c) only fill that table, create and initialize the integrator,
 * step it and map its failure flags.  The set-up every integrator shares
 * (mb_sun_attach, mb_sun_configure) is one floor down, in sundials_setup.c, and the
 * callbacks into the problem below it, in sundials_util.c. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "result.h"
#include "status.h"
#include <sunlinsol/sunlinsol_dense.h>
#include "sundials_impl.h"

/* SUNDIALS return flags shared by CVODE, IDA and ARKODE */
enum { SUN_TSTOP_RETURN = 1, SUN_ROOT_RETURN = 2 };

/* highest interpolant degree of any adapter (CVODE Adams: order 12) */
#define SUN_MAX_DEG 12

static const mb_sundials_method sundials_methods[] = {
    {"cvode_bdf", 5, 0, MB_IMPLICIT | MB_NEEDS_JAC | MB_VARIABLE_ORDER | MB_LINSYS, 0},
    {"cvode_adams", 12, 0, MB_IMPLICIT | MB_NEEDS_JAC | MB_VARIABLE_ORDER | MB_LINSYS, 1},
    {"ida", 5, 0,
     MB_IMPLICIT | MB_NEEDS_JAC | MB_VARIABLE_ORDER | MB_MASS | MB_LINSYS | MB_LINSYS_MASS, 2},
    {"arkode_erk", 4, 3, MB_EMBEDDED, 3},
    {"arkode_dirk", 4, 3, MB_IMPLICIT | MB_NEEDS_JAC | MB_EMBEDDED | MB_LINSYS, 4},
};

static const sun_backend *const sundials_backends[] = {
    &mb_sun_cvode_bdf, &mb_sun_cvode_adams, &mb_sun_ida, &mb_sun_arkode_erk, &mb_sun_arkode_dirk,
};

size_t mb_sundials_count(void)
{
    return sizeof sundials_methods / sizeof sundials_methods[0];
}

const mb_sundials_method *mb_sundials_at(size_t i)
{
    return i < mb_sundials_count() ? &sundials_methods[i] : NULL;
}

const mb_sundials_method *mb_sundials_find(const char *name)
{
    for (size_t i = 0; name && i < mb_sundials_count(); i++)
        if (strcmp(sundials_methods[i].name, name) == 0)
            return &sundials_methods[i];
    return NULL;
}

/* wrms norm of ele in the weights ewt */
static double wrms(sunindextype n, N_Vector ewt, N_Vector ele)
{
    const double *w = N_VGetArrayPointer(ewt), *e = N_VGetArrayPointer(ele);
    double sum = 0.0;
    for (sunindextype i = 0; i < n; i++)
        sum += (w[i] * e[i]) * (w[i] * e[i]);
    return n > 0 ? sqrt(sum / (double)n) : 0.0;
}

/* end time, size and interpolant degree of the last step */
static int last_step(sun_run *r, double *tn, double *hu, int *deg)
{
    const sun_api *a = r->b->api;
    int flag = a->get_current_time(r->mem, tn);
    if (flag >= 0)
        flag = a->get_last_step(r->mem, hu);
    if (flag >= 0 && a->get_last_order)
        flag = a->get_last_order(r->mem, deg);  /* the Nordsieck polynomial's degree */
    else if (flag >= 0)
        *deg = a->degree;
    return flag;
}

/* error weights and local error estimate of the last step */
static int local_error(sun_run *r, N_Vector ewt, N_Vector ele)
{
    if (r->o->h > 0)
        return -1;  /* fixed steps: no error estimate */
    int flag = r->b->api->get_err_weights(r->mem, ewt);
    return flag < 0 ? flag : r->b->api->get_est_local_errors(r->mem, ele);
}

static long count(int (*get)(void *, long *), void *mem)
{
    long v = 0;
    if (get)
        get(mem, &v);
    return v;
}

/* the counters the output loop needs after every step (the step limit, whether a new
 * step was taken); stats() fills the rest at the end of the run */
static void step_counts(sun_run *r, mb_stats *st)
{
    const sun_api *a = r->b->api;
    st->nsteps = r->base.nsteps + count(a->get_num_steps, r->mem);
    st->nreject = r->base.nreject + count(a->get_num_err_test_fails, r->mem);
}

/* the counters of the run: the integrator's own since its last (re)initialization plus
 * those before it (r->base) */
static void stats(sun_run *r, mb_stats *st)
{
    const sun_api *a = r->b->api;
    const mb_stats *b = &r->base;
    st->nfev = b->nfev + a->nfev(r->mem) + count(a->get_num_lin_rhs_evals, r->mem);
    /* IDA's kept difference df/dy: its evaluations, not the set-ups that reused it */
    st->njev = r->jf ? r->jf_evals : b->njev + count(a->get_num_jac_evals, r->mem);
    st->nlu = b->nlu + count(a->get_num_lin_solv_setups, r->mem);
    st->nsteps = b->nsteps + count(a->get_num_steps, r->mem);
    st->nreject = b->nreject + count(a->get_num_err_test_fails, r->mem);
    st->nfail = b->nfail + count(a->get_num_step_solve_fails, r->mem);
    st->nrestart = b->nrestart;
}

/* ------------------------------------------------------------------ output */

typedef struct loop_state {
    ptrdiff_t next_eval;   /* first t_eval not yet stored */
    long processed;        /* number of internal steps recorded */
    double *C;             /* (SUN_MAX_DEG + 1) * n dense coefficients */
    double t_stop;         /* the stop time of the next internal step */
    double bound_floor;    /* smallest step bound used (grows when SUNDIALS stops
                            * at an intermediate stop time without a step) */
    double t;              /* the run's current point: where the last return of the
                            * integrator left it (a step's end, a root) */
} loop_state;

static int query_fail(sun_run *r, int flag, const char *what)
{
    return mb_sun_setup_fail(r, flag, what);
}

/* t_eval points up to t_end (inclusive), from the interpolant of the last step */
static int emit_eval(sun_run *r, loop_state *ls, double t_end, N_Vector y_end)
{
    const mb_options *o = r->o;
    while (ls->next_eval < o->n_eval) {
        double te = o->t_eval[ls->next_eval];
        if (r->dir * (te - t_end) > 0)
            break;
        int rc;
        if (te == t_end) {
            rc = mb_result_push_point(r->res, te, N_VGetArrayPointer(y_end));
        } else {
            int flag = r->b->api->get_dky(r->mem, te, 0, r->v1);
            if (flag < 0)
                return query_fail(r, flag, "interpolation at a t_eval point");
            rc = mb_result_push_point(r->res, te, N_VGetArrayPointer(r->v1));
        }
        if (rc != MB_OK)
            return rc;
        ls->next_eval++;
    }
    return MB_OK;
}

/* record the last internal step, which ends (for the output) at t_end, y_end */
static int record_step(sun_run *r, loop_state *ls, double t_end, N_Vector y_end)
{
    const mb_options *o = r->o;
    ptrdiff_t n = (ptrdiff_t)r->n;
    double tn, hu;
    int deg, rc;
    /* the step's size; its start and degree only for the dense output */
    int flag = o->dense_output ? last_step(r, &tn, &hu, &deg)
                               : r->b->api->get_last_step(r->mem, &hu);
    if (flag < 0)
        return query_fail(r, flag, "step query");
    if (o->dense_output) {
        double t_start = tn - hu;
        /* y(theta) = sum_k y^(k)(t_start) (theta h)^k / k!, theta = (t - t_start)/h */
        double fac = 1.0;
        for (int k = 0; k <= deg; k++) {
            flag = r->b->api->get_dky(r->mem, t_start, k, r->v1);
            if (flag < 0)
                return query_fail(r, flag, "interpolant derivatives");
            if (k > 0)
                fac *= hu / k;
            const double *d = N_VGetArrayPointer(r->v1);
            for (ptrdiff_t i = 0; i < n; i++)
                ls->C[k * n + i] = fac * d[i];
        }
        if ((rc = mb_result_push_dense(r->res, t_start, hu, deg, ls->C)) != MB_OK)
            return rc;
    }
    double err = 0.0;
    if (local_error(r, r->v1, r->v2) >= 0)
        err = wrms(r->n, r->v1, r->v2);
    if ((rc = mb_result_push_hist(r->res, t_end, hu, err)) != MB_OK)
        return rc;
    if (o->t_eval)
        return emit_eval(r, ls, t_end, y_end);
    return mb_result_push_point(r->res, t_end, N_VGetArrayPointer(y_end));
}

/* a root return at t: store the events found; *terminated when one of them
 * reached its terminal count */
static int roots_found(sun_run *r, double t, int *terminated)
{
    const mb_options *o = r->o;
    *terminated = 0;
    int flag = r->b->api->get_root_info(r->mem, r->found);
    if (flag < 0)
        return query_fail(r, flag, "root information");
    for (ptrdiff_t i = 0; i < o->n_events; i++) {
        if (r->found[i] == 0)
            continue;
        int rc = mb_result_push_event(r->res, i, t, N_VGetArrayPointer(r->y));
        if (rc != MB_OK)
            return rc;
        r->hits[i]++;
        int term = o->terminal ? o->terminal[i] : 0;
        if (term > 0 && r->hits[i] >= term)
            *terminated = 1;
    }
    return MB_OK;
}

/* the mb status of a SUNDIALS failure flag, with the message */
static int failure(sun_run *r, int flag)
{
    if (r->cb_status)
        return r->cb_status;
    int st = r->b->status(flag);
    if (r->res->message[0] == '\0')
        snprintf(r->res->message, sizeof r->res->message, "%s [%s]", mb_status_str(st),
                 r->sun_msg[0] ? r->sun_msg : r->b->solver);
    return st;
}

/* The problem's step bound (problem.h) at the integrator's current internal point
 * tn (ahead of the last output after a root return): the next internal step ends at
 * tn + bound at the latest.  It is imposed as the stop time, which CVODE, IDA and
 * ARKODE honour from the next step on (SetMaxStep would act only on the steps after
 * it).  A stop time that the step does not reach also shortens the step after it (to
 * the distance left), so it is set only when the next step may be longer than the
 * bound: before the first step, right after a step that ended at such a stop time
 * (the size the integrator then reports for its next step is the shortened one, not
 * the one it takes), or when the size it reports is longer.  f(tn, y) is the derivative of the integrator's interpolant at tn (f itself
 * for ARKODE's Hermite interpolant; the corrector's y' for CVODE and IDA, equal to f
 * to the Newton tolerance), which saves an evaluation of f per step; only before the
 * first step is f evaluated (counted in nfev).  Sets ls->t_stop. */
static int bound_next_step(sun_run *r, double tf, loop_state *ls)
{
    const sun_api *a = r->b->api;
    const mb_problem *p = r->p;
    double tn = ls->t, hu = 0.0;
    const double *y = N_VGetArrayPointer(r->y);
    double *f = r->f;
    int flag, rc = 0;
    int stepped = r->res->stats.nsteps > r->base.nsteps;  /* since the last (re)start */
    if (stepped) {
        flag = a->get_current_time(r->mem, &tn);
        if (flag >= 0)
            flag = a->get_last_step(r->mem, &hu);
        if (flag >= 0)
            flag = a->get_dky(r->mem, tn, 0, r->v1);
        if (flag >= 0)
            flag = a->get_dky(r->mem, tn, 1, r->v2);
        if (flag < 0)
            return query_fail(r, flag, "the state at the current time");
        y = N_VGetArrayPointer(r->v1);
        f = N_VGetArrayPointer(r->v2);
    } else {
        rc = p->rhs(tn, y, f, p->ctx);
        r->extra_nfev++;
        if (mb_sun_check(r, rc, tn, f, (ptrdiff_t)r->n, "right-hand side", "component") != 0)
            rc = rc ? rc : MB_ERR_RHS_FAIL;
    }
    double hb = INFINITY;
    if (rc == 0)
        rc = p->step_bound(tn, y, f, &hb, p->ctx);
    if (r->cb_status)
        return r->cb_status;
    if (rc != 0 || !(hb > 0)) {
        snprintf(r->res->message, sizeof r->res->message,
                 "The step bound of the problem failed (code %d, bound %g) at t = %.17g.", rc,
                 hb, tn);
        return rc == MB_ERR_CALLBACK ? rc : MB_ERR_RHS_FAIL;
    }
    /* the last step ended at the bound's stop time (also when a root was returned
     * inside it): the size reported for the next step is not the one taken */
    int after_stop = ls->t_stop != tf &&
                     fabs(tn - ls->t_stop) <= 100.0 * DBL_EPSILON * (fabs(tn) + fabs(hu));
    double h_next = INFINITY;  /* unknown: before the first step, after a stop */
    if (stepped && !after_stop &&
        (flag = a->get_current_step(r->mem, &h_next)) < 0)
        return query_fail(r, flag, "the next step size");
    /* well above the integrator's round-off test of the stop time (100 eps (|tn| + |h|)) */
    double floor = fmax(ls->bound_floor, 1e3 * DBL_EPSILON * (fabs(tn) + fabs(hu)));
    double ts = tn + r->dir * fmax(hb, floor);
    ls->t_stop = fabs(h_next) > hb && r->dir * (ts - tf) < 0 ? ts : tf;
    flag = a->set_stop_time(r->mem, ls->t_stop);
    return flag < 0 ? query_fail(r, flag, "SetStopTime") : MB_OK;
}

/* One return of the integrator (one internal step in ONE_STEP mode, or a root inside
 * it), recorded; *end when the run ended there (tf reached: MB_OK; a terminal event:
 * MB_TERMINATED).  ls->t moves to where the integrator returned. */
static int iterate(sun_run *r, double tf, loop_state *ls, int *end)
{
    const mb_options *o = r->o;
    mb_result *res = r->res;
    long limit = o->max_steps > 0 ? o->max_steps : MB_SUNDIALS_MAX_STEPS;
    double t = ls->t;
    *end = 0;
    if (res->stats.nsteps + res->stats.nreject >= limit) {
        snprintf(res->message, sizeof res->message,
                 "The maximum number of steps (%ld) was reached at t = %.17g.", limit, t);
        return MB_ERR_MAX_STEPS;
    }
    int mrc = o->monitor ? o->monitor(t, o->monitor_ctx) : MB_OK;
    if (mrc != MB_OK) {
        if (mrc > 0)
            mrc = MB_ERR_INTERRUPTED;
        snprintf(res->message, sizeof res->message, "%s (at t = %.17g)", mb_status_str(mrc), t);
        return mrc;
    }
    if (r->p->step_bound && r->p->rhs) {
        int rc = bound_next_step(r, tf, ls);
        if (rc != MB_OK)
            return rc;
    }
    double t_ret = t;
    int flag = r->b->evolve(r, tf, &t_ret);
    if (flag < 0)
        return failure(r, flag);
    step_counts(r, &res->stats);
    long nst = res->stats.nsteps - r->base.nsteps;  /* the integrator's own count */
    if (flag == SUN_TSTOP_RETURN && ls->t_stop != tf) {
        /* the step bound's stop time: an ordinary step end, not the end of the run */
        if (nst == ls->processed) {  /* stopped without a step: bound too close */
            ls->bound_floor = fmax(16.0 * ls->bound_floor,
                                   1e6 * DBL_EPSILON * fmax(fabs(t_ret), fabs(t_ret - t)));
            return MB_OK;
        }
        flag = 0;
    }
    ls->t = t_ret;
    if (flag == SUN_ROOT_RETURN) {
        int terminated, rc = roots_found(r, t_ret, &terminated);
        if (rc != MB_OK)
            return rc;
        if (terminated) {
            if (nst > ls->processed)
                rc = record_step(r, ls, t_ret, r->y);
            else if (o->t_eval)  /* the step was recorded already (root at its end) */
                rc = emit_eval(r, ls, t_ret, r->y);
            else
                rc = mb_result_push_point(res, t_ret, N_VGetArrayPointer(r->y));
            ls->processed = nst;
            *end = 1;
            return rc != MB_OK ? rc : MB_TERMINATED;
        }
        /* a root at the very end of the step: the integrator will not return
         * that step again, so record it now */
        double tn, hu;
        int deg;
        int qf = last_step(r, &tn, &hu, &deg);
        if (qf < 0)
            return query_fail(r, qf, "step query");
        if (nst > ls->processed &&
            fabs(tn - t_ret) <= 1000.0 * DBL_EPSILON * (fabs(tn) + fabs(hu))) {
            if ((rc = record_step(r, ls, t_ret, r->y)) != MB_OK)
                return rc;
            ls->processed = nst;
        }
        return MB_OK;
    }
    if (nst > ls->processed) {
        int rc = record_step(r, ls, t_ret, r->y);
        if (rc != MB_OK)
            return rc;
        ls->processed = nst;
    } else if (flag == SUN_TSTOP_RETURN) {
        /* tf reached without a new step (the last one ended within roundoff
         * of tf): move the last output to tf */
        if (o->t_eval) {
            int rc = emit_eval(r, ls, t_ret, r->y);
            if (rc != MB_OK)
                return rc;
        } else if (res->nt > 0) {
            res->t[res->nt - 1] = t_ret;
            memcpy(res->y + (res->nt - 1) * res->n, N_VGetArrayPointer(r->y),
                   (size_t)res->n * sizeof(double));
        }
        if (res->n_hist > 0)
            res->hist_t[res->n_hist - 1] = t_ret;
    }
    *end = flag == SUN_TSTOP_RETURN || r->dir * (t_ret - tf) >= 0;
    return MB_OK;
}

static int output_loop(sun_run *r, double tf, loop_state *ls)
{
    for (;;) {
        int end, rc = iterate(r, tf, ls, &end);
        if (rc != MB_OK || end)
            return rc;
    }
}

static int validate(const sun_run *r, const mb_problem *p, const mb_options *o)
{
    mb_result *res = r->res;
    const char *bad = NULL;
    if (p->n <= 0)
        bad = "the state size n must be positive";
    else if (!(o->rtol > 0) || !o->atol)
        bad = "rtol must be positive and atol given";
    else if (!r->dae && !p->rhs)
        bad = "the problem has no right-hand side";
    else if (r->dae && !p->res)
        bad = "the residual problem has no residual function";
    else if (o->n_events > 0 && !o->events)
        bad = "events requested without an event function";
    if (bad) {
        snprintf(res->message, sizeof res->message, "%s: %s.", r->m->name, bad);
        return MB_ERR_ILL_INPUT;
    }
    /* the same option checks as the driver's (finite times, tolerances, t_eval,
     * a fixed step's step count within max_steps) */
    int rc = mb_options_check(o, p->n, r->t0, r->tf, res->message, sizeof res->message);
    if (rc != MB_OK)
        return rc;
    if (p->mass && !(r->m->flags & MB_MASS)) {
        snprintf(res->message, sizeof res->message,
                 "Method '%s' does not accept a mass matrix (use 'ida').", r->m->name);
        return MB_ERR_NOT_SUPPORTED;
    }
    /* a linsys of a M - J with a diagonal M (a sparse DAE, linsys.h): IDA on the
     * residual view F = M y' - f only; the others would take it for a I - J */
    if (p->mass_diag && !(r->dae && p->linsys && p->res && (r->m->flags & MB_LINSYS_MASS))) {
        snprintf(res->message, sizeof res->message,
                 "Method '%s' does not take a diagonal mass matrix with the problem's linear "
                 "systems (a sparse DAE); 'ida' does, on the residual view.", r->m->name);
        return MB_ERR_NOT_SUPPORTED;
    }
    if (o->h > 0 && (r->m->flags & MB_VARIABLE_ORDER)) {
        snprintf(res->message, sizeof res->message,
                 "Method '%s' chooses its own steps; a fixed step h is not supported.",
                 r->m->name);
        return MB_ERR_NOT_SUPPORTED;
    }
    return MB_OK;
}

/* Set up the run (phase 1 of run): the result, the options check, the vectors, the
 * integrator, the initial point.  r and ls need no preparation; close_run frees what
 * this allocated, also after a failure. */
static int open_run(sun_run *r, loop_state *ls, const mb_sundials_method *m,
                    const mb_problem *p, const mb_dae_options *dae, double t0, double tf,
                    const double *y0, const mb_options *o, mb_result *res, double *yp0_out)
{
    memset(r, 0, sizeof *r);
    *ls = (loop_state){0, 0, NULL, tf, 0.0, t0};
    ptrdiff_t ne = o->n_events > 0 ? o->n_events : 0;
    int rc = mb_result_init(res, p->n, ne);
    res->status = MB_OK;
    res->message[0] = '\0';
    r->m = m;
    r->b = sundials_backends[m->kind];
    r->p = p;
    r->o = o;
    r->dae = dae;
    r->res = res;
    r->n = (sunindextype)p->n;
    r->dir = tf >= t0 ? 1.0 : -1.0;
    r->t0 = t0;
    r->tf = tf;
    if (rc != MB_OK || (rc = validate(r, p, o)) != MB_OK)
        return rc;
    if (SUNContext_Create(NULL, &r->ctx) != 0)
        return MB_ERR_MEM;
    r->y = N_VNew_Serial(r->n, r->ctx);
    r->yp = N_VNew_Serial(r->n, r->ctx);
    r->atol = N_VNew_Serial(r->n, r->ctx);
    r->v1 = N_VNew_Serial(r->n, r->ctx);
    r->v2 = N_VNew_Serial(r->n, r->ctx);
    r->f = malloc((size_t)r->n * sizeof(double));
    ls->C = malloc((size_t)(SUN_MAX_DEG + 1) * (size_t)r->n * sizeof(double));
    r->rootdir = calloc((size_t)ne + 1, sizeof(int));
    r->found = calloc((size_t)ne + 1, sizeof(int));
    r->hits = calloc((size_t)ne + 1, sizeof(ptrdiff_t));
    if (!r->y || !r->yp || !r->atol || !r->v1 || !r->v2 || !r->f || !ls->C || !r->rootdir ||
        !r->found || !r->hits)
        return MB_ERR_MEM;
    N_Vector own[] = {r->y, r->yp, r->atol, r->v1, r->v2};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        mb_sun_fast_ops(own[i]);  /* the integrator's clones inherit them */
    memcpy(N_VGetArrayPointer(r->y), y0, (size_t)r->n * sizeof(double));
    memcpy(N_VGetArrayPointer(r->atol), o->atol, (size_t)r->n * sizeof(double));
    if (dae && dae->yp0)
        memcpy(N_VGetArrayPointer(r->yp), dae->yp0, (size_t)r->n * sizeof(double));
    else
        N_VConst(0.0, r->yp);
    for (ptrdiff_t i = 0; i < ne; i++)
        r->rootdir[i] = o->direction ? (o->direction[i] > 0) - (o->direction[i] < 0) : 0;

    if (t0 != tf && (rc = r->b->setup(r, t0, tf)) != MB_OK)
        return rc;
    if (yp0_out)
        memcpy(yp0_out, N_VGetArrayPointer(r->yp), (size_t)r->n * sizeof(double));
    /* the initial point (corrected by IDACalcIC for residual problems) */
    if (o->t_eval) {
        while (ls->next_eval < o->n_eval && o->t_eval[ls->next_eval] == t0) {
            if ((rc = mb_result_push_point(res, t0, N_VGetArrayPointer(r->y))) != MB_OK)
                return rc;
            ls->next_eval++;
        }
        return MB_OK;
    }
    return mb_result_push_point(res, t0, N_VGetArrayPointer(r->y));
}

/* End the run with status rc: statistics, status and message into the result, and
 * everything open_run allocated freed */
static int close_run(sun_run *r, loop_state *ls, int rc)
{
    mb_result *res = r->res;
    if (r->mem) {
        stats(r, &res->stats);
        r->b->api->free(&r->mem);
    }
    res->stats.nfev += r->extra_nfev;
    if (r->cb_status && rc != MB_OK && rc != MB_TERMINATED)
        rc = r->cb_status;
    res->status = rc;
    if ((rc == MB_OK || rc == MB_TERMINATED || res->message[0] == '\0'))
        snprintf(res->message, sizeof res->message, "%s", mb_status_str(rc));
    if (r->LS)
        SUNLinSolFree(r->LS);
    if (r->A)
        SUNMatDestroy(r->A);
    if (r->y) N_VDestroy(r->y);
    if (r->yp) N_VDestroy(r->yp);
    if (r->atol) N_VDestroy(r->atol);
    if (r->v1) N_VDestroy(r->v1);
    if (r->v2) N_VDestroy(r->v2);
    if (r->ctx)
        SUNContext_Free(&r->ctx);
    free(r->f);
    free(r->jf);
    free(ls->C);
    free(r->rootdir);
    free(r->found);
    free(r->hits);
    return rc;
}

static int run(const mb_sundials_method *m, const mb_problem *p, const mb_dae_options *dae,
               double t0, double tf, const double *y0, const mb_options *o, mb_result *res,
               double *yp0_out)
{
    sun_run r;
    loop_state ls;
    int rc = open_run(&r, &ls, m, p, dae, t0, tf, y0, o, res, yp0_out);
    if (rc == MB_OK && t0 != tf)
        rc = output_loop(&r, tf, &ls);
    return close_run(&r, &ls, rc);
}

int mb_sundials_run(const char *name, const mb_problem *p, double t0, double tf,
                    const double *y0, const mb_options *o, mb_result *res)
{
    const mb_sundials_method *m = mb_sundials_find(name);
    if (!m) {
        mb_result_init(res, p->n, 0);
        res->status = MB_ERR_ILL_INPUT;
        snprintf(res->message, sizeof res->message, "Unknown SUNDIALS method '%s'.",
                 name ? name : "(null)");
        return res->status;
    }
    return run(m, p, NULL, t0, tf, y0, o, res, NULL);
}

int mb_sundials_ida_run(const mb_problem *p, double t0, double tf, const double *y0,
                        const mb_dae_options *d, const mb_options *o, mb_result *res,
                        double *yp0_out)
{
    static const mb_dae_options none = {NULL, NULL, 1, NULL, 0};
    return run(mb_sundials_find("ida"), p, d ? d : &none, t0, tf, y0, o, res, yp0_out);
}

/* ------------------------------------------------------------------ piecewise runs */

struct mb_sundials_state {
    sun_run r;
    loop_state ls;
    int status;     /* MB_OK while the run can go on, else what ended it */
    int finished;   /* the run reached tf or a terminal event */
    int closed;
};

int mb_sundials_open(mb_sundials_state **out, const char *name, const mb_problem *p,
                     const mb_dae_options *dae, double t0, double tf, const double *y0,
                     const mb_options *o, mb_result *res)
{
    mb_sundials_state *st = calloc(1, sizeof *st);
    *out = st;
    if (!st) {
        res->status = MB_ERR_MEM;
        return MB_ERR_MEM;
    }
    const mb_sundials_method *m = mb_sundials_find(name);
    int rc;
    if (!m) {
        mb_result_init(res, p->n, 0);
        snprintf(res->message, sizeof res->message, "Unknown SUNDIALS method '%s'.",
                 name ? name : "(null)");
        st->closed = 1;  /* nothing was opened */
        rc = MB_ERR_ILL_INPUT;
    } else {
        rc = open_run(&st->r, &st->ls, m, p, dae, t0, tf, y0, o, res, NULL);
    }
    st->finished = rc == MB_OK && t0 == tf;
    st->status = rc;
    if (rc != MB_OK)
        res->status = rc;
    return rc;
}

/* a status that ends the run: in the result, with its message */
static int sun_stop(mb_sundials_state *st, int rc, int end)
{
    mb_result *res = st->r.res;
    if (rc == MB_TERMINATED || (rc == MB_OK && end)) {
        st->finished = 1;
        res->status = rc;
        return MB_TERMINATED;
    }
    if (rc != MB_OK) {
        if (st->r.cb_status)
            rc = st->r.cb_status;
        st->status = rc;
        res->status = rc;
        if (res->message[0] == '\0')
            snprintf(res->message, sizeof res->message, "%s", mb_status_str(rc));
    }
    return rc;
}

int mb_sundials_step(mb_sundials_state *st)
{
    if (st->status != MB_OK)
        return st->status;
    if (st->finished)
        return MB_TERMINATED;
    long before = st->ls.processed;
    for (;;) {
        int end, rc = iterate(&st->r, st->r.tf, &st->ls, &end);
        if (rc != MB_OK || end)
            return sun_stop(st, rc, end);
        if (st->ls.processed != before)
            return MB_OK;
    }
}

int mb_sundials_advance(mb_sundials_state *st, double t_stop, double *y)
{
    sun_run *r = &st->r;
    if (!(r->dir * (t_stop - r->tf) <= 0) || isnan(t_stop))
        return MB_ERR_ILL_INPUT;
    while (r->dir * (t_stop - st->ls.t) > 0) {
        int rc = mb_sundials_step(st);
        if (rc != MB_OK && rc != MB_TERMINATED)
            return rc;
        if (rc == MB_TERMINATED && r->dir * (t_stop - st->ls.t) > 0)
            return rc;  /* a terminal event (or tf) before t_stop */
    }
    const double *yv = N_VGetArrayPointer(r->y);
    if (t_stop == st->ls.t) {
        memcpy(y, yv, (size_t)r->n * sizeof(double));
        return MB_OK;
    }
    /* t_stop inside the last step: the integrator's interpolant, as a t_eval output */
    int flag = r->b->api->get_dky(r->mem, t_stop, 0, r->v1);
    if (flag < 0)
        return sun_stop(st, query_fail(r, flag, "interpolation at the stop time"), 0);
    memcpy(y, N_VGetArrayPointer(r->v1), (size_t)r->n * sizeof(double));
    return MB_OK;
}

int mb_sundials_restart_at(mb_sundials_state *st, double t, const double *y)
{
    sun_run *r = &st->r;
    loop_state *ls = &st->ls;
    if (st->status != MB_OK)
        return st->status;
    if (!r->mem)  /* t0 == tf: nothing to restart */
        return MB_ERR_ILL_INPUT;
    double tn = ls->t, hu = 0.0;
    int deg;
    if (r->res->stats.nsteps > r->base.nsteps && last_step(r, &tn, &hu, &deg) < 0)
        return MB_ERR_ILL_INPUT;
    if (r->dir * (t - ls->t) > 0 || r->dir * (t - r->t0) < 0 ||
        (t != ls->t && r->dir * (t - (tn - hu)) < 0))
        return MB_ERR_ILL_INPUT;  /* only back into the last step */
    mb_result *res = r->res;
    int flag = 0, rc;
    if (r->res->stats.nsteps > r->base.nsteps)  /* y'(t) of the old interpolant */
        flag = r->b->api->get_dky(r->mem, t, 1, r->yp);
    if (flag < 0)
        return sun_stop(st, query_fail(r, flag, "the derivative at the restart"), 0);
    if (t != ls->t)
        mb_result_truncate(res, t, r->dir, r->hits);
    /* the run goes on from (t, y): a point of the result (also at a root inside the
     * step, which the result holds as an event only) */
    if (res->nt == 0 || res->t[res->nt - 1] != t) {
        if ((rc = mb_result_push_point(res, t, y)) != MB_OK ||
            (rc = mb_result_push_hist(res, t, t - (tn - hu), 0.0)) != MB_OK)
            return sun_stop(st, rc, 0);
    }
    memcpy(N_VGetArrayPointer(r->y), y, (size_t)r->n * sizeof(double));
    /* the counters so far, kept across the integrator's fresh start */
    stats(r, &r->base);
    r->base.nrestart++;
    res->stats = r->base;
    res->stats.nfev += r->extra_nfev;
    r->lsys_factored = 0;
    if ((rc = r->b->reinit(r, t)) != MB_OK)
        return sun_stop(st, rc, 0);
    ls->t = t;
    ls->processed = 0;
    ls->t_stop = r->tf;
    ls->bound_floor = 0.0;
    if (isfinite(r->tf) && (flag = r->b->api->set_stop_time(r->mem, r->tf)) < 0)
        return sun_stop(st, query_fail(r, flag, "SetStopTime"), 0);
    st->finished = 0;
    return MB_OK;
}

void mb_sundials_sync(mb_sundials_state *st)
{
    sun_run *r = &st->r;
    if (st->closed || !r->mem)
        return;
    stats(r, &r->res->stats);
    r->res->stats.nfev += r->extra_nfev;
}

double mb_sundials_t(const mb_sundials_state *st) { return st->ls.t; }
const double *mb_sundials_y(const mb_sundials_state *st)
{
    return st->r.y ? N_VGetArrayPointer(st->r.y) : NULL;
}
int mb_sundials_status(const mb_sundials_state *st)
{
    return st->status != MB_OK ? st->status : st->finished ? MB_TERMINATED : MB_OK;
}

int mb_sundials_close(mb_sundials_state *st)
{
    if (!st)
        return MB_OK;
    int rc = st->status;
    if (rc == MB_OK && st->finished)
        rc = st->r.res->status;
    if (!st->closed)
        rc = close_run(&st->r, &st->ls, rc);
    free(st);
    return rc;
}
