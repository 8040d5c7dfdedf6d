#ifndef MB_METHODS_SUNDIALS_IMPL_H
#define MB_METHODS_SUNDIALS_IMPL_H
/* Private to sundials_*.c: one run of a SUNDIALS integrator.
 * sundials_common.c owns the run (context, vectors, output loop, events, statistics,
 * status, the table of methods); it calls the
 * integrator through a sun_api, the table of the SUNDIALS calls whose signature
 * is the same in CVODE, IDA, ERKStep and ARKStep.  Each adapter
 * (sundials_cvode.c, sundials_ida.c, sundials_arkode.c) fills one sun_api per
 * integrator and one sun_backend per method: how to create the integrator, take
 * one internal step and map its failure flags.  The files stand on floors, and no
 * file calls one above it: sundials_util.c (the callbacks into the problem and the
 * recording of failures) under sundials_linsys.c (the problem's linsys as linear
 * solver) under sundials_setup.c (the set-up of the options every integrator takes)
 * under the adapters under sundials_common.c (the run, which finds an adapter in its
 * table of methods). */
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sunmatrix/sunmatrix_dense.h>
#include "sundials.h"

typedef struct sun_run sun_run;

/* CVErrHandlerFn, IDAErrHandlerFn and ARKErrHandlerFn */
typedef void (*sun_err_fn)(int error_code, const char *module, const char *function, char *msg,
                           void *eh_data);

typedef struct sun_api {
    const char *prefix;  /* "CVode", "IDA", "ERKStep", "ARKStep": prefix + "SetMaxStep" names
                          * a call in messages */
    int (*set_err_handler)(void *mem, sun_err_fn f, void *data);
    int (*set_user_data)(void *mem, void *data);
    int (*sv_tolerances)(void *mem, realtype rtol, N_Vector atol);
    /* the same with one atol for every component: the same weights to the last bit
     * (rtol |y_i| rounded, plus atol), one vector operation fewer per step */
    int (*ss_tolerances)(void *mem, realtype rtol, realtype atol);
    /* tolerances through an error-weight function (per-component rtol); the
     * CVEwtFn, IDAEwtFn and ARKEwtFn types are alike */
    int (*wf_tolerances)(void *mem, int (*efun)(N_Vector y, N_Vector ewt, void *ud));
    int (*set_linear_solver)(void *mem, SUNLinearSolver LS, SUNMatrix A);  /* NULL: explicit */
    int (*set_max_num_steps)(void *mem, long mxsteps);
    int (*set_max_hnil_warns)(void *mem, int mxhnil);                     /* or NULL */
    int (*set_stop_time)(void *mem, realtype tstop);
    int (*set_fixed_step)(void *mem, realtype h);                         /* or NULL */
    int (*set_init_step)(void *mem, realtype h);
    int (*set_max_step)(void *mem, realtype h);
    int (*set_min_step)(void *mem, realtype h);
    int (*set_root_direction)(void *mem, int *rootdir);
    int (*set_no_inactive_root_warn)(void *mem);
    int (*get_dky)(void *mem, realtype t, int k, N_Vector dky);
    int (*get_current_time)(void *mem, realtype *t);
    int (*get_last_step)(void *mem, realtype *h);
    int (*get_current_step)(void *mem, realtype *h);  /* the next step's size */
    int (*get_last_order)(void *mem, int *q);  /* NULL: the interpolant has degree `degree` */
    int (*get_root_info)(void *mem, int *found);
    int (*get_err_weights)(void *mem, N_Vector ewt);
    int (*get_est_local_errors)(void *mem, N_Vector ele);
    int (*get_num_steps)(void *mem, long *n);
    int (*get_num_err_test_fails)(void *mem, long *n);
    /* the linear solver's counters; NULL for explicit methods */
    int (*get_num_step_solve_fails)(void *mem, long *n);
    int (*get_num_jac_evals)(void *mem, long *n);
    int (*get_num_lin_solv_setups)(void *mem, long *n);
    int (*get_num_lin_rhs_evals)(void *mem, long *n);  /* IDA: residual evaluations */
    void (*free)(void **mem);
    /* the calls whose arguments differ, wrapped by the adapter */
    int (*root_init)(void *mem, int n_events);  /* with the adapter's root function */
    int (*set_jac)(void *mem);                  /* with the adapter's Jacobian function */
    /* with the Jacobian function of the problem's linsys (sundials_linsys.c), or NULL:
     * the integrator does not take the problem's linsys (dense matrices then) */
    int (*set_jac_linsys)(void *mem);
    long (*nfev)(void *mem);                    /* rhs (residual) evaluations of the method */
    int degree;
} sun_api;

/* The calls of sun_api named alike in every integrator, for the table of prefix P. */
#define SUN_API_COMMON(P)                                                                      \
    .prefix = #P, .set_err_handler = P##SetErrHandlerFn, .set_user_data = P##SetUserData,      \
    .sv_tolerances = P##SVtolerances, .ss_tolerances = P##SStolerances,                        \
    .set_max_num_steps = P##SetMaxNumSteps,                                                    \
    .wf_tolerances = P##WFtolerances,                                                          \
    .set_stop_time = P##SetStopTime, .set_init_step = P##SetInitStep,                          \
    .set_max_step = P##SetMaxStep, .set_min_step = P##SetMinStep,                              \
    .set_root_direction = P##SetRootDirection,                                                 \
    .set_no_inactive_root_warn = P##SetNoInactiveRootWarn, .get_dky = P##GetDky,               \
    .get_current_time = P##GetCurrentTime, .get_last_step = P##GetLastStep,                    \
    .get_current_step = P##GetCurrentStep,                                                     \
    .get_root_info = P##GetRootInfo, .get_err_weights = P##GetErrWeights,                      \
    .get_est_local_errors = P##GetEstLocalErrors, .get_num_steps = P##GetNumSteps,             \
    .get_num_err_test_fails = P##GetNumErrTestFails, .free = P##Free

typedef struct sun_backend {
    const char *solver;  /* "CVODE", "IDA", "ARKODE" (messages) */
    const sun_api *api;
    /* create r->mem for problem r->p (mb_sun_attach ... mb_sun_configure); may
     * correct r->y and r->yp (IDA) */
    int (*setup)(sun_run *r, double t0, double tf);
    /* one internal step towards tf in ONE_STEP mode: raw SUNDIALS flag
     * (0 success, 1 tstop reached, 2 root found, < 0 failure) */
    int (*evolve)(sun_run *r, double tf, double *t_ret);
    int (*status)(int flag);  /* flag < 0 -> MB_ERR_* of status.def */
    /* start the integrator anew at (t, r->y) (a piecewise run's restart: order 1, its
     * histories and counters dropped); r->yp holds y'(t) from the old interpolant */
    int (*reinit)(sun_run *r, double t);
} sun_backend;

struct sun_run {
    const mb_sundials_method *m;
    const sun_backend *b;
    const mb_problem *p;
    const mb_options *o;
    const mb_dae_options *dae;  /* residual problems (IDA), else NULL */
    mb_result *res;
    sunindextype n;
    double dir;
    double t0, tf;              /* the span of the run */
    SUNContext ctx;
    void *mem;                  /* the integrator */
    N_Vector y, yp, atol, v1, v2; /* state, y' (IDA), tolerances, scratch */
    SUNMatrix A;
    SUNLinearSolver LS;
    double *f;                  /* n doubles of scratch for residual forms */
    /* IDA on an ODE problem without a Jacobian: df/dy by differences, kept across linear
     * set-ups (sundials_ida.c); jf NULL when unused */
    double *jf;                 /* n x n */
    long jf_nst, jf_ncf;        /* IDA's steps and Newton failures when jf was evaluated */
    long jf_evals;              /* evaluations of jf (the run's njev) */
    int *rootdir, *found;       /* n_events each */
    ptrdiff_t *hits;            /* occurrences per event */
    long extra_nfev;            /* evaluations outside the integrator's counters */
    int cb_status;              /* sticky failure of a user callback (0: none) */
    mb_stats base;              /* the run's counters before the integrator's last
                                 * ReInit (a piecewise run's restart), 0 before */
    /* the problem's linsys as linear solver (sundials_linsys.c) */
    unsigned long lsys_gen;     /* generation of the Jacobian the linsys keeps */
    int lsys_factored;          /* slot 0 holds a I - J, a = lsys_a */
    double lsys_a, lsys_scale;  /* A^-1 = lsys_scale (a I - J)^-1 */
    char sun_msg[320];          /* last error reported by SUNDIALS */
};

extern const sun_backend mb_sun_cvode_bdf, mb_sun_cvode_adams, mb_sun_ida, mb_sun_arkode_erk,
    mb_sun_arkode_dirk;

/* A set-up call of an adapter: on a negative flag, return the mb status of
 * mb_sun_setup_fail from the enclosing function. */
#define SUN_TRY(r, call, name)                              \
    do {                                                    \
        int flag_ = (call);                                 \
        if (flag_ < 0)                                      \
            return mb_sun_setup_fail((r), flag_, (name));   \
    } while (0)

/* Set-up (sundials_setup.c), in this order: mb_sun_attach(r, XCreate(...)) keeps the
 * new integrator (NULL: MB_ERR_MEM) and installs the error handler; the adapter then
 * initializes it (CVodeInit, IDAInit) and sets what is its own; mb_sun_configure
 * sets what every integrator takes: user data, tolerances, the linear solver for
 * implicit methods (the problem's linsys when it has one, no mass matrix and the
 * integrator has set_jac_linsys -- a residual problem only with p->mass_diag, IDA on a
 * sparse DAE; else the dense one, with the Jacobian when
 * use_jac), no step limit (the run counts), tf as stop time, the step bounds and
 * fixed step of r->o and the events.  Both return an mb status. */
int mb_sun_attach(sun_run *r, void *mem);
int mb_sun_configure(sun_run *r, double tf, int use_jac);

/* The problem's linsys (mb_problem.linsys, linsys.h) as linear solver, for an
 * integrator with set_jac_linsys and a problem without a mass matrix, or with the
 * diagonal p->mass_diag of a sparse DAE (sundials_linsys.c): r->A becomes a handle
 * matrix with no entries (A = alpha I + beta J, J kept by the linsys; alpha M with
 * the diagonal M) and r->LS a direct solver factoring and solving
 * through the linsys.  Returns an mb status. */
int mb_sun_linsys_create(sun_run *r);
/* Evaluate the linsys's J at (t, y) with fy = f(t, y) and make the handle J stand
 * for alpha I + beta J (SUNDIALS conventions: 0, > 0 recoverable, -1 fatal) */
int mb_sun_linsys_eval(sun_run *r, double t, N_Vector y, const double *fy, SUNMatrix J,
                       double alpha, double beta);
/* the same as a CVLsJacFn / ARKLsJacFn (alpha = 0, beta = 1); ud is the sun_run */
int mb_sun_linsys_jac(realtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud, N_Vector tmp1,
                      N_Vector tmp2, N_Vector tmp3);

/* sundials_nvec.c: replace the hot serial vector operations of v (linear sum, scale,
 * weighted RMS norm, const, abs, inv, add-const, product, min) by the same operations
 * compiled with the kernels: the same results to the last bit.  Set on the run's
 * vectors before the integrator clones them, so every vector it makes has them.  A
 * vector that is not serial is left alone. */
void mb_sun_fast_ops(N_Vector v);
/* the same for a SUNLinSol_Dense solver (setup: LU with partial pivoting, solve): the
 * library's pivots and operations in its order (sundials_nvec.c); any other solver is
 * left alone */
void mb_sun_fast_dense(SUNLinearSolver LS);

/* sundials_util.c.  Callbacks in the SUNDIALS conventions (0 ok, 1 recoverable, -1
 * fatal); ud is the sun_run.  A fatal failure is kept in r->cb_status with its message, and no
 * user callback is called again in that run (a Python exception stays set).
 * mb_sun_rhs and mb_sun_events have the signatures of CVRhsFn / ARKRhsFn and
 * CVRootFn / ARKRootFn, mb_sun_ode_jac that of CVLsJacFn / ARKLsJacFn. */
int mb_sun_rhs(realtype t, N_Vector y, N_Vector ydot, void *ud);
int mb_sun_events(realtype t, N_Vector y, realtype *g, void *ud);
int mb_sun_ode_jac(realtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud, N_Vector tmp1,
                   N_Vector tmp2, N_Vector tmp3);
/* columns of df/dy at (t, y) by forward differences from f0 = f(t, y) into J (ld), with
 * the increments of the core's difference Jacobian (mb_fd_increment); n evaluations of
 * f counted in r->extra_nfev; yt, ft scratch vectors (IDA's kept df/dy) */
int mb_sun_dq_columns(sun_run *r, double t, N_Vector y, const double *f0, double *J,
                      ptrdiff_t ld, N_Vector yt, N_Vector ft);
/* J = df/dy of the problem, column-major in the dense matrix J */
int mb_sun_jac(sun_run *r, double t, N_Vector y, SUNMatrix J);
/* The SUNDIALS return of a user callback that returned rc after writing m values
 * to out: what ("right-hand side", "residual", "Jacobian") and item ("component",
 * "entry") name them in the message of a failure or of a non-finite value. */
int mb_sun_check(sun_run *r, int rc, double t, const double *out, ptrdiff_t m, const char *what,
                 const char *item);
/* record a fatal callback failure (code of status.def) with a message */
int mb_sun_cb_fail(sun_run *r, int code, const char *fmt, ...);
/* error handler for SUNDIALS (stores the message of errors, drops warnings) */
void mb_sun_err_handler(int error_code, const char *module, const char *function, char *msg,
                        void *eh_data);
/* a failed set-up call: message naming the call; returns the mb status */
int mb_sun_setup_fail(sun_run *r, int code, const char *call);

#endif
