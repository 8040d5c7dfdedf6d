/* ARKODE adapters.
 *   arkode_erk   ERKStep with the explicit table ARKODE_ZONNEVELD_5_3_4
 *                (5 stages, order 4, embedding 3; ERKStep's default for order 4)
 *   arkode_dirk  ARKStep, implicit only, with the ESDIRK table
 *                ARKODE_ARK436L2SA_DIRK_6_3_4 (the implicit part of ARK4(3)6L[2]SA,
 *                Kennedy & Carpenter 2003: 6 stages, order 4, embedding 3,
 *                L-stable, stiffly accurate), Newton to 1e-7 of the tolerance
 *                (see dirk_setup) with the dense direct linear solver, the
 *                problem's Jacobian when it has one, else ARKODE's difference
 *                quotients.
 * Both: adaptive with ARKODE's default controller, or fixed steps (opts->h);
 * dense output from ARKODE's cubic Hermite interpolant (degree 3).
 * The run itself is in sundials_common.c. */
#include <math.h>
#include <stdio.h>
#include <arkode/arkode_arkstep.h>
#include <arkode/arkode_erkstep.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include "status.h"
#include "sundials_impl.h"

#define ARK_DEGREE 3  /* Hermite interpolant degree used for dense output */

static int ark_rhs(realtype t, N_Vector y, N_Vector ydot, void *ud)
{
    return mb_sun_rhs(ud, t, y, ydot);
}

static int ark_root(realtype t, N_Vector y, realtype *g, void *ud)
{
    return mb_sun_events(ud, t, y, g);
}

static int ark_jac(realtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud, N_Vector tmp1,
                   N_Vector tmp2, N_Vector tmp3)
{
    (void)fy; (void)tmp1; (void)tmp2; (void)tmp3;
    return mb_sun_jac(ud, t, y, J);
}

#define TRY(call, name)                                   \
    do {                                                  \
        int flag_ = (call);                               \
        if (flag_ < 0)                                    \
            return mb_sun_setup_fail(r, flag_, name);     \
    } while (0)

/* ------------------------------------------------------------------ ERKStep */

static int erk_setup(sun_run *r, double t0, double tf)
{
    const mb_options *o = r->o;
    r->mem = ERKStepCreate(ark_rhs, t0, r->y, r->ctx);
    if (!r->mem) {
        snprintf(r->res->message, sizeof r->res->message, "ERKStepCreate failed.");
        return MB_ERR_MEM;
    }
    void *mem = r->mem;
    TRY(ERKStepSetErrHandlerFn(mem, mb_sun_err_handler, r), "ERKStepSetErrHandlerFn");
    TRY(ERKStepSetUserData(mem, r), "ERKStepSetUserData");
    TRY(ERKStepSVtolerances(mem, o->rtol, r->atol), "ERKStepSVtolerances");
    TRY(ERKStepSetTableNum(mem, ARKODE_ZONNEVELD_5_3_4), "ERKStepSetTableNum");
    TRY(ERKStepSetInterpolantDegree(mem, ARK_DEGREE), "ERKStepSetInterpolantDegree");
    TRY(ERKStepSetMaxNumSteps(mem, -1), "ERKStepSetMaxNumSteps");
    TRY(ERKStepSetMaxHnilWarns(mem, -1), "ERKStepSetMaxHnilWarns");
    TRY(ERKStepSetStopTime(mem, tf), "ERKStepSetStopTime");
    if (o->h > 0)
        TRY(ERKStepSetFixedStep(mem, r->dir * o->h), "ERKStepSetFixedStep");
    if (o->first_step > 0 && !(o->h > 0))
        TRY(ERKStepSetInitStep(mem, r->dir * o->first_step), "ERKStepSetInitStep");
    if (o->max_step > 0 && isfinite(o->max_step))
        TRY(ERKStepSetMaxStep(mem, o->max_step), "ERKStepSetMaxStep");
    if (o->min_step > 0)
        TRY(ERKStepSetMinStep(mem, o->min_step), "ERKStepSetMinStep");
    if (o->n_events > 0) {
        TRY(ERKStepRootInit(mem, (int)o->n_events, ark_root), "ERKStepRootInit");
        TRY(ERKStepSetRootDirection(mem, r->rootdir), "ERKStepSetRootDirection");
        TRY(ERKStepSetNoInactiveRootWarn(mem), "ERKStepSetNoInactiveRootWarn");
    }
    return MB_OK;
}

static int erk_evolve(sun_run *r, double tf, double *t_ret)
{
    return ERKStepEvolve(r->mem, tf, r->y, t_ret, ARK_ONE_STEP);
}

static int erk_dky(sun_run *r, double t, int k, N_Vector out)
{
    return ERKStepGetDky(r->mem, t, k, out);
}

static int erk_last_step(sun_run *r, double *tn, double *hu, int *deg)
{
    int flag = ERKStepGetCurrentTime(r->mem, tn);
    if (flag >= 0)
        flag = ERKStepGetLastStep(r->mem, hu);
    *deg = ARK_DEGREE;
    return flag;
}

static int erk_root_info(sun_run *r, int *found)
{
    return ERKStepGetRootInfo(r->mem, found);
}

static int erk_local_error(sun_run *r, N_Vector ewt, N_Vector ele)
{
    if (r->o->h > 0)
        return -1;  /* fixed steps: no error estimate */
    int flag = ERKStepGetErrWeights(r->mem, ewt);
    return flag < 0 ? flag : ERKStepGetEstLocalErrors(r->mem, ele);
}

static void erk_stats(sun_run *r, mb_stats *st)
{
    long nfe = 0, nst = 0, netf = 0;
    ERKStepGetNumRhsEvals(r->mem, &nfe);
    ERKStepGetNumSteps(r->mem, &nst);
    ERKStepGetNumErrTestFails(r->mem, &netf);
    st->nfev = nfe;
    st->njev = 0;
    st->nlu = 0;
    st->nsteps = nst;
    st->nreject = netf;
    st->nfail = 0;
}

static void erk_free(sun_run *r)
{
    ERKStepFree(&r->mem);
}

/* ------------------------------------------------------------------ ARKStep */

static int dirk_setup(sun_run *r, double t0, double tf)
{
    const mb_options *o = r->o;
    r->mem = ARKStepCreate(NULL, ark_rhs, t0, r->y, r->ctx);
    if (!r->mem) {
        snprintf(r->res->message, sizeof r->res->message, "ARKStepCreate failed.");
        return MB_ERR_MEM;
    }
    void *mem = r->mem;
    TRY(ARKStepSetErrHandlerFn(mem, mb_sun_err_handler, r), "ARKStepSetErrHandlerFn");
    TRY(ARKStepSetUserData(mem, r), "ARKStepSetUserData");
    TRY(ARKStepSVtolerances(mem, o->rtol, r->atol), "ARKStepSVtolerances");
    TRY(ARKStepSetTableNum(mem, ARKODE_ARK436L2SA_DIRK_6_3_4, ARKODE_ERK_NONE),
        "ARKStepSetTableNum");
    r->A = SUNDenseMatrix(r->n, r->n, r->ctx);
    r->LS = r->A ? SUNLinSol_Dense(r->y, r->A, r->ctx) : NULL;
    if (!r->A || !r->LS) {
        snprintf(r->res->message, sizeof r->res->message, "SUNDenseMatrix/SUNLinSol_Dense failed.");
        return MB_ERR_MEM;
    }
    TRY(ARKStepSetLinearSolver(mem, r->LS, r->A), "ARKStepSetLinearSolver");
    if (r->p->jac)
        TRY(ARKStepSetJacFn(mem, ark_jac), "ARKStepSetJacFn");
    TRY(ARKStepSetInterpolantDegree(mem, ARK_DEGREE), "ARKStepSetInterpolantDegree");
    /* Newton to 1e-7 of the error tolerance (8 iterations at most), as in
     * SUNDIALS' own Robertson example: the ESDIRK error estimate
     * h sum_i d_i f(z_i) multiplies stage errors by |h lambda|, and with the
     * default coefficient 0.1 (and the convergence rate remembered from earlier
     * solves) unconverged stages fail the error test on Robertson or spoil a
     * step (y' = -y: 1e5 times the tolerance at tf). */
    TRY(ARKStepSetNonlinConvCoef(mem, 1e-7), "ARKStepSetNonlinConvCoef");
    TRY(ARKStepSetMaxNonlinIters(mem, 8), "ARKStepSetMaxNonlinIters");
    TRY(ARKStepSetMaxNumSteps(mem, -1), "ARKStepSetMaxNumSteps");
    TRY(ARKStepSetMaxHnilWarns(mem, -1), "ARKStepSetMaxHnilWarns");
    TRY(ARKStepSetStopTime(mem, tf), "ARKStepSetStopTime");
    if (o->h > 0)
        TRY(ARKStepSetFixedStep(mem, r->dir * o->h), "ARKStepSetFixedStep");
    if (o->first_step > 0 && !(o->h > 0))
        TRY(ARKStepSetInitStep(mem, r->dir * o->first_step), "ARKStepSetInitStep");
    if (o->max_step > 0 && isfinite(o->max_step))
        TRY(ARKStepSetMaxStep(mem, o->max_step), "ARKStepSetMaxStep");
    if (o->min_step > 0)
        TRY(ARKStepSetMinStep(mem, o->min_step), "ARKStepSetMinStep");
    if (o->n_events > 0) {
        TRY(ARKStepRootInit(mem, (int)o->n_events, ark_root), "ARKStepRootInit");
        TRY(ARKStepSetRootDirection(mem, r->rootdir), "ARKStepSetRootDirection");
        TRY(ARKStepSetNoInactiveRootWarn(mem), "ARKStepSetNoInactiveRootWarn");
    }
    return MB_OK;
}

static int dirk_evolve(sun_run *r, double tf, double *t_ret)
{
    return ARKStepEvolve(r->mem, tf, r->y, t_ret, ARK_ONE_STEP);
}

static int dirk_dky(sun_run *r, double t, int k, N_Vector out)
{
    return ARKStepGetDky(r->mem, t, k, out);
}

static int dirk_last_step(sun_run *r, double *tn, double *hu, int *deg)
{
    int flag = ARKStepGetCurrentTime(r->mem, tn);
    if (flag >= 0)
        flag = ARKStepGetLastStep(r->mem, hu);
    *deg = ARK_DEGREE;
    return flag;
}

static int dirk_root_info(sun_run *r, int *found)
{
    return ARKStepGetRootInfo(r->mem, found);
}

static int dirk_local_error(sun_run *r, N_Vector ewt, N_Vector ele)
{
    if (r->o->h > 0)
        return -1;
    int flag = ARKStepGetErrWeights(r->mem, ewt);
    return flag < 0 ? flag : ARKStepGetEstLocalErrors(r->mem, ele);
}

static void dirk_stats(sun_run *r, mb_stats *st)
{
    long nfe = 0, nfi = 0, nfe_ls = 0, nje = 0, nsetups = 0, nst = 0, netf = 0, ncfn = 0;
    ARKStepGetNumRhsEvals(r->mem, &nfe, &nfi);
    ARKStepGetNumLinRhsEvals(r->mem, &nfe_ls);
    ARKStepGetNumJacEvals(r->mem, &nje);
    ARKStepGetNumLinSolvSetups(r->mem, &nsetups);
    ARKStepGetNumSteps(r->mem, &nst);
    ARKStepGetNumErrTestFails(r->mem, &netf);
    ARKStepGetNumStepSolveFails(r->mem, &ncfn);
    st->nfev = nfe + nfi + nfe_ls;
    st->njev = nje;
    st->nlu = nsetups;
    st->nsteps = nst;
    st->nreject = netf;
    st->nfail = ncfn;
}

static void dirk_free(sun_run *r)
{
    ARKStepFree(&r->mem);
}

/* ------------------------------------------------------------------ both */

static int ark_status(int flag)
{
    switch (flag) {
    case ARK_TOO_MUCH_WORK: return MB_ERR_MAX_STEPS;
    case ARK_TOO_MUCH_ACC:
    case ARK_ERR_FAILURE:
    case ARK_TOO_CLOSE: return MB_ERR_STEP_TOO_SMALL;
    case ARK_CONV_FAILURE:
    case ARK_NLS_INIT_FAIL:
    case ARK_NLS_SETUP_FAIL:
    case ARK_NLS_SETUP_RECVR:
    case ARK_NLS_OP_ERR: return MB_ERR_CONV;
    case ARK_LINIT_FAIL:
    case ARK_LSETUP_FAIL:
    case ARK_LSOLVE_FAIL: return MB_ERR_LINALG;
    case ARK_RHSFUNC_FAIL:
    case ARK_FIRST_RHSFUNC_ERR:
    case ARK_REPTD_RHSFUNC_ERR:
    case ARK_UNREC_RHSFUNC_ERR: return MB_ERR_RHS_FAIL;
    case ARK_RTFUNC_FAIL: return MB_ERR_EVENT_FAIL;
    case ARK_MEM_FAIL: return MB_ERR_MEM;
    default: return MB_ERR_ILL_INPUT;
    }
}

const sun_backend mb_sun_arkode_erk = {
    "ARKODE", erk_setup, erk_evolve, erk_dky, erk_last_step, erk_root_info, erk_local_error,
    erk_stats, ark_status, erk_free,
};

const sun_backend mb_sun_arkode_dirk = {
    "ARKODE", dirk_setup, dirk_evolve, dirk_dky, dirk_last_step, dirk_root_info,
    dirk_local_error, dirk_stats, ark_status, dirk_free,
};
