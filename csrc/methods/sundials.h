#ifndef MB_METHODS_SUNDIALS_H
#define MB_METHODS_SUNDIALS_H
/* SUNDIALS integrators (CVODE, IDA, ARKODE; Debian libsundials 6.x) over an
 * mb_problem, filling the same mb_result as the one driver (driver.h).
 *
 * SUNDIALS owns its time loop, so these are not mb_methods behind driver.c;
 * each run steps the SUNDIALS integrator one internal step at a time
 * (ONE_STEP mode with the stop time tf) and records per internal step:
 *   - the output point (t, y) at the step's end, or the t_eval points inside
 *     the step from the integrator's own interpolant (CVodeGetDky, ...);
 *   - the dense record: the interpolating polynomial of the step, of degree
 *     q (the order used: CVODE, IDA) or 3 (ARKODE's cubic Hermite), as
 *     monomial coefficients in theta = (t - t_start)/h (method.h), computed
 *     from its derivatives at the step's start;
 *   - the step (t_end, h, err_norm) with err_norm the weighted RMS norm of
 *     the integrator's local error estimate in its own weights.
 * Events use SUNDIALS' root finding (CVodeRootInit, ...) with the driver's
 * direction and terminal-count semantics.  The problem's step bound (problem.h)
 * becomes the stop time of the next internal step when that step may exceed it
 * (sundials_common.c bound_next_step; y and f at the integrator's current time
 * from its interpolant).  Statistics: nfev includes the
 * evaluations of finite-difference Jacobians, njev Jacobian evaluations,
 * nlu linear-solver setups, nsteps steps, nreject error-test failures, nfail
 * steps failed by the nonlinear solver.
 * Every run has its own SUNContext; nothing is global.
 *
 * Methods (name, max order, flags):
 *   cvode_bdf    CVODE BDF orders 1-5, Newton, dense direct linear solver
 *   cvode_adams  CVODE Adams-Moulton orders 1-12, Newton, dense direct solver
 *   ida          IDA (variable-order BDF 1-5) on the residual
 *                F(t, y, y') = M y' - f(t, y) (M = identity without a mass
 *                matrix; components with a zero column of M are algebraic),
 *                or on a residual problem (mb_problem.res, see
 *                mb_sundials_ida_run); consistent initial values by IDACalcIC
 *   arkode_erk   ARKODE ERKStep, Zonneveld 5(3)4 table ARKODE_ZONNEVELD_5_3_4
 *   arkode_dirk  ARKODE ARKStep implicit, ESDIRK table
 *                ARKODE_ARK436L2SA_DIRK_6_3_4 (L-stable, stiffly accurate),
 *                Newton (to 1e-7 of the tolerance, at most 8 iterations) with
 *                the dense direct linear solver, a new iteration matrix at every
 *                change of gamma (sundials_arkode.c dirk_setup)
 * The implicit methods use p->jac (column-major) when given, else SUNDIALS'
 * difference quotients; p->jac_sparsity is not used.  A problem with a linsys
 * (problem.h, linsys.h) and no mass matrix runs cvode_bdf, cvode_adams,
 * arkode_dirk and ida on the linsys's own factorizations of a I - J, with no n x n
 * matrix (sundials_linsys.c); p->jac is then not called.  A residual problem of ida
 * with a linsys and a diagonal mass matrix p->mass_diag (F = M y' - f, the sparse DAE
 * formulations) runs on the linsys's a M - J (a = cj) in the same way; every other
 * method refuses p->mass_diag.  Callbacks follow
 * problem.h (> 0 recoverable: SUNDIALS retries with a smaller step; < 0
 * fatal); a non-finite f is fatal (MB_ERR_NONFINITE), as in the driver.  opts->h > 0 (fixed step)
 * is supported by the ARKODE methods only; the controller options of
 * mb_options (controller, safety, fac_min, fac_max, error_per_unit_step,
 * step_doubling) do not apply (SUNDIALS uses its own).  max_steps <= 0 means
 * MB_SUNDIALS_MAX_STEPS step attempts.
 */
#include <stddef.h>
#include "driver.h"
#include "method.h"

#define MB_SUNDIALS_MAX_STEPS MB_DEFAULT_MAX_STEPS

typedef struct mb_sundials_method {
    const char *name;
    int order;         /* maximum order */
    int error_order;   /* order of the embedded solution (ARKODE), else 0 */
    unsigned flags;    /* MB_IMPLICIT, MB_NEEDS_JAC, MB_VARIABLE_ORDER, ... (method.h) */
    int kind;          /* internal: which adapter */
} mb_sundials_method;

/* The SUNDIALS methods: count, i-th entry, lookup by name (NULL if unknown). */
size_t mb_sundials_count(void);
const mb_sundials_method *mb_sundials_at(size_t i);
const mb_sundials_method *mb_sundials_find(const char *name);

/* Integrate p from t0 to tf from y0 with SUNDIALS method `name`.
 *   p    first-order problem (p->rhs; p->jac optional; p->mass for "ida" only)
 *   y0   initial state, size p->n
 *   o    options as for mb_driver_run (see the header comment for what applies)
 *   res  filled as by mb_driver_run: output points, dense records (when
 *        o->dense_output), events, step history, statistics, status, message
 * Returns the status (also res->status): MB_OK, MB_TERMINATED, or an error of
 * status.def; on failure res keeps the trajectory computed so far. */
int mb_sundials_run(const char *name, const mb_problem *p, double t0, double tf,
                    const double *y0, const mb_options *o, mb_result *res);

/* Jacobian of a residual: J = dF/dy + cj dF/dy' (n x n, column-major, leading
 * dimension ld).  Returns 0, > 0 recoverable, < 0 fatal. */
typedef int (*mb_dae_jac_fn)(double t, double cj, const double *y, const double *yp, double *J,
                             ptrdiff_t ld, void *ctx);

typedef struct mb_dae_options {
    const double *yp0;               /* initial y' (size n) */
    const unsigned char *algebraic;  /* n flags, 1 = algebraic component, or NULL (none) */
    int calc_ic;                     /* correct (y_alg, y'_diff) at t0 by IDACalcIC */
    mb_dae_jac_fn jac;               /* or NULL: IDA's difference quotients */
    int suppress_alg;                /* leave the algebraic components out of the error test
                                      * (IDASetSuppressAlg: index-2 variables, e.g. the
                                      * multipliers of a GGL formulation) */
} mb_dae_options;

/* IDA on the residual problem F(t, y, y') = p->res(t, y, y', r, p->ctx) = 0
 * (p->rhs unused).  With d->calc_ic the algebraic components of y0 and the
 * differential components of yp0 are corrected (IDACalcIC, IDA_YA_YDP_INIT);
 * the first output point holds the corrected y0, and *yp0_out (size n, may be
 * NULL) receives the y' used at t0.  Events are g(t, y).  Otherwise as
 * mb_sundials_run. */
int mb_sundials_ida_run(const mb_problem *p, double t0, double tf, const double *y0,
                        const mb_dae_options *d, const mb_options *o, mb_result *res,
                        double *yp0_out);

/* Piecewise runs, as the driver's (driver.h "Piecewise runs"): the run of
 * mb_sundials_run / mb_sundials_ida_run set up once and taken on one internal step of
 * the integrator at a time, so that it takes exactly the steps of the whole run over
 * the same [t0, tf]:
 *   mb_sundials_open     set up (dae: as for mb_sundials_ida_run, or NULL for an ODE
 *                        problem); *st is set also on failure (close it)
 *   mb_sundials_step     one internal step: MB_OK, MB_TERMINATED (tf or a terminal
 *                        event), or an error (kept: every later call returns it)
 *   mb_sundials_advance  steps until the run reaches t_stop, y(t_stop) from the
 *                        integrator's interpolant (as a t_eval output of the whole run)
 *   mb_sundials_restart_at  move the run back to (t, y), t inside the last step (or at
 *                        its end); the result past t is dropped and the integrator
 *                        starts anew there (CVodeReInit, ERKStepReInit, ARKStepReInit,
 *                        IDAReInit with y' made consistent by IDACalcIC): order 1, its
 *                        own first step; the counters go on (stats.nrestart counts)
 *   mb_sundials_sync     the result's statistics brought up to date
 *   mb_sundials_t, mb_sundials_y, mb_sundials_status   the current point and status
 *   mb_sundials_close    res->status and message as mb_sundials_run leaves them,
 *                        everything freed */
typedef struct mb_sundials_state mb_sundials_state;
int mb_sundials_open(mb_sundials_state **st, const char *name, const mb_problem *p,
                     const mb_dae_options *dae, double t0, double tf, const double *y0,
                     const mb_options *o, mb_result *res);
int mb_sundials_step(mb_sundials_state *st);
int mb_sundials_advance(mb_sundials_state *st, double t_stop, double *y);
int mb_sundials_restart_at(mb_sundials_state *st, double t, const double *y);
void mb_sundials_sync(mb_sundials_state *st);
double mb_sundials_t(const mb_sundials_state *st);
const double *mb_sundials_y(const mb_sundials_state *st);
int mb_sundials_status(const mb_sundials_state *st);
int mb_sundials_close(mb_sundials_state *st);

#endif
