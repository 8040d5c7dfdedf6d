/* CVODE adapters: cvode_bdf (BDF, orders 1-5) and cvode_adams (Adams-Moulton,
 * orders 1-12), both with Newton iteration and the dense direct linear solver
 * (SUNDenseMatrix + SUNLinSol_Dense), the problem's Jacobian when it has one,
 * else CVODE's difference quotients; or, when the problem has a linsys, its own
 * factorizations of a I - J (sundials_linsys.c).  The run itself is in sundials_common.c. */
#include <cvode/cvode.h>
#include "status.h"
#include "sundials_impl.h"

static int cv_root_init(void *mem, int n_events)
{
    return CVodeRootInit(mem, n_events, mb_sun_events);
}

static int cv_set_jac(void *mem)
{
    return CVodeSetJacFn(mem, mb_sun_ode_jac);
}

static int cv_set_jac_linsys(void *mem)
{
    return CVodeSetJacFn(mem, mb_sun_linsys_jac);
}

static long cv_nfev(void *mem)
{
    long nfe = 0;
    CVodeGetNumRhsEvals(mem, &nfe);
    return nfe;
}

static const sun_api cv_api = {
    SUN_API_COMMON(CVode),
    .set_linear_solver = CVodeSetLinearSolver,
    .set_max_hnil_warns = CVodeSetMaxHnilWarns,
    .get_last_order = CVodeGetLastOrder,
    .get_num_step_solve_fails = CVodeGetNumStepSolveFails,
    .get_num_jac_evals = CVodeGetNumJacEvals,
    .get_num_lin_solv_setups = CVodeGetNumLinSolvSetups,
    .get_num_lin_rhs_evals = CVodeGetNumLinRhsEvals,
    .root_init = cv_root_init,
    .set_jac = cv_set_jac,
    .set_jac_linsys = cv_set_jac_linsys,
    .nfev = cv_nfev,
};

static int cv_setup(sun_run *r, int lmm, double t0, double tf)
{
    int rc = mb_sun_attach(r, CVodeCreate(lmm, r->ctx));
    if (rc != MB_OK)
        return rc;
    SUN_TRY(r, CVodeInit(r->mem, mb_sun_rhs, t0, r->y), "CVodeInit");
    return mb_sun_configure(r, tf, r->p->jac != NULL);
}

static int cv_setup_bdf(sun_run *r, double t0, double tf)
{
    return cv_setup(r, CV_BDF, t0, tf);
}

static int cv_setup_adams(sun_run *r, double t0, double tf)
{
    return cv_setup(r, CV_ADAMS, t0, tf);
}

static int cv_evolve(sun_run *r, double tf, double *t_ret)
{
    return CVode(r->mem, tf, r->y, t_ret, CV_ONE_STEP);
}

static int cv_reinit(sun_run *r, double t)
{
    SUN_TRY(r, CVodeReInit(r->mem, t, r->y), "CVodeReInit");
    return MB_OK;
}

static int cv_status(int flag)
{
    switch (flag) {
    case CV_TOO_MUCH_WORK: return MB_ERR_MAX_STEPS;
    case CV_TOO_MUCH_ACC:
    case CV_ERR_FAILURE:
    case CV_TOO_CLOSE: return MB_ERR_STEP_TOO_SMALL;
    case CV_CONV_FAILURE:
    case CV_NLS_INIT_FAIL:
    case CV_NLS_SETUP_FAIL:
    case CV_NLS_FAIL: return MB_ERR_CONV;
    case CV_LINIT_FAIL:
    case CV_LSETUP_FAIL:
    case CV_LSOLVE_FAIL: return MB_ERR_LINALG;
    case CV_RHSFUNC_FAIL:
    case CV_FIRST_RHSFUNC_ERR:
    case CV_REPTD_RHSFUNC_ERR:
    case CV_UNREC_RHSFUNC_ERR: return MB_ERR_RHS_FAIL;
    case CV_RTFUNC_FAIL: return MB_ERR_EVENT_FAIL;
    case CV_MEM_FAIL: return MB_ERR_MEM;
    default: return MB_ERR_ILL_INPUT;
    }
}

const sun_backend mb_sun_cvode_bdf = {"CVODE", &cv_api, cv_setup_bdf, cv_evolve, cv_status,
                                       cv_reinit};
const sun_backend mb_sun_cvode_adams = {"CVODE", &cv_api, cv_setup_adams, cv_evolve,
                                         cv_status, cv_reinit};
