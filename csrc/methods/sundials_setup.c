/* The set-up every SUNDIALS integrator shares (sundials_impl.h): attaching the new
 * integrator to the run (error handler, user data) and the options every integrator
 * takes (tolerances or the error-weight function of a per-component rtol, the linear
 * solver: dense, or the problem's linsys through sundials_linsys.c, step bounds, stop
 * time).  The adapters call it; it calls nothing above it. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "status.h"
#include <sunlinsol/sunlinsol_dense.h>
#include "sundials_impl.h"

/* ------------------------------------------------------------------ set-up */

/* a failed call prefix + name of the integrator's API */
static int api_fail(sun_run *r, int flag, const char *name)
{
    char call[64];
    snprintf(call, sizeof call, "%s%s", r->b->api->prefix, name);
    return mb_sun_setup_fail(r, flag, call);
}

#define API_TRY(call, name)                     \
    do {                                        \
        int flag_ = (call);                     \
        if (flag_ < 0)                          \
            return api_fail(r, flag_, (name));  \
    } while (0)

int mb_sun_attach(sun_run *r, void *mem)
{
    r->mem = mem;
    if (!mem) {
        snprintf(r->res->message, sizeof r->res->message, "%sCreate failed.", r->b->api->prefix);
        return MB_ERR_MEM;
    }
    API_TRY(r->b->api->set_err_handler(mem, mb_sun_err_handler, r), "SetErrHandlerFn");
    return MB_OK;
}

/* error weights with per-component relative tolerances: 1 / (rtol_i |y_i| + atol_i)
 * (SUNDIALS' own rule for scalar rtol) */
static int sun_ewt(N_Vector y, N_Vector ewt, void *ud)
{
    const sun_run *r = ud;
    const double *yv = N_VGetArrayPointer(y), *atol = r->o->atol, *rv = r->o->rtol_v;
    double *w = N_VGetArrayPointer(ewt);
    for (sunindextype i = 0; i < r->n; i++) {
        double sc = rv[i] * fabs(yv[i]) + atol[i];
        if (!(sc > 0))
            return -1;  /* SUNDIALS reports the failure */
        w[i] = 1.0 / sc;
    }
    return 0;
}

/* 1 when every component has the same atol (SUNDIALS then takes it as a scalar) */
static int uniform_atol(const double *atol, sunindextype n)
{
    for (sunindextype i = 1; i < n; i++)
        if (atol[i] != atol[0])
            return 0;
    return 1;
}

int mb_sun_configure(sun_run *r, double tf, int use_jac)
{
    const sun_api *a = r->b->api;
    const mb_options *o = r->o;
    void *mem = r->mem;
    API_TRY(a->set_user_data(mem, r), "SetUserData");
    if (o->rtol_v)
        API_TRY(a->wf_tolerances(mem, sun_ewt), "WFtolerances");
    else if (uniform_atol(o->atol, r->n))
        API_TRY(a->ss_tolerances(mem, o->rtol, o->atol[0]), "SStolerances");
    else
        API_TRY(a->sv_tolerances(mem, o->rtol, r->atol), "SVtolerances");
    if (a->set_linear_solver) {
        /* the problem's own iteration matrices: ODE problems without a mass matrix, and
         * residual problems F = M y' - f with a diagonal M (p->mass_diag: a sparse DAE,
         * whose linsys factors a M - J; IDA only, validate() in sundials_common.c) */
        int structured = r->p->linsys && !r->p->mass && a->set_jac_linsys &&
                         (r->dae ? r->p->mass_diag != NULL : 1);
        if (structured) {
            if (mb_sun_linsys_create(r) != MB_OK) {
                snprintf(r->res->message, sizeof r->res->message,
                         "The linsys linear solver could not be created.");
                return MB_ERR_MEM;
            }
        } else {
            r->A = SUNDenseMatrix(r->n, r->n, r->ctx);
            r->LS = r->A ? SUNLinSol_Dense(r->y, r->A, r->ctx) : NULL;
            mb_sun_fast_dense(r->LS);  /* the same LU, compiled with the kernels */
            if (!r->A || !r->LS) {
                snprintf(r->res->message, sizeof r->res->message,
                         "SUNDenseMatrix/SUNLinSol_Dense failed.");
                return MB_ERR_MEM;
            }
        }
        API_TRY(a->set_linear_solver(mem, r->LS, r->A), "SetLinearSolver");
        if (structured)
            API_TRY(a->set_jac_linsys(mem), "SetJacFn");
        else if (use_jac)
            API_TRY(a->set_jac(mem), "SetJacFn");
    }
    /* one step per call (ONE_STEP): the step limit is checked by the run */
    API_TRY(a->set_max_num_steps(mem, -1), "SetMaxNumSteps");
    if (a->set_max_hnil_warns)
        API_TRY(a->set_max_hnil_warns(mem, -1), "SetMaxHnilWarns");
    if (isfinite(tf))
        API_TRY(a->set_stop_time(mem, tf), "SetStopTime");
    else if (!(o->first_step > 0) && !(o->h > 0))
        /* an infinite end (a terminal event ends the run): SUNDIALS' initial-step
         * estimate scales with tout - t0, so start small and let it grow */
        API_TRY(a->set_init_step(mem, r->dir * 1e-6 * fmax(1.0, fabs(r->t0))), "SetInitStep");
    if (o->h > 0 && a->set_fixed_step)  /* validate refuses h for the others */
        API_TRY(a->set_fixed_step(mem, r->dir * o->h), "SetFixedStep");
    if (o->first_step > 0 && !(o->h > 0))
        API_TRY(a->set_init_step(mem, r->dir * o->first_step), "SetInitStep");
    if (o->max_step > 0 && isfinite(o->max_step))
        API_TRY(a->set_max_step(mem, o->max_step), "SetMaxStep");
    if (o->min_step > 0)
        API_TRY(a->set_min_step(mem, o->min_step), "SetMinStep");
    if (o->n_events > 0) {
        API_TRY(a->root_init(mem, (int)o->n_events), "RootInit");
        API_TRY(a->set_root_direction(mem, r->rootdir), "SetRootDirection");
        API_TRY(a->set_no_inactive_root_warn(mem), "SetNoInactiveRootWarn");
    }
    return MB_OK;
}

/* ------------------------------------------------------------------ queries */

