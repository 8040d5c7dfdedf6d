#ifndef MB_CORE_DRIVER_H
#define MB_CORE_DRIVER_H
/* The one driver: the step loop over any mb_method.
 *
 * It accepts or rejects steps by the weighted RMS error norm (RN paper eqs 13-14),
 * chooses step sizes with the controller (controller.h), runs fixed steps when
 * opts->h > 0, estimates errors by step doubling for methods without an embedded
 * estimate, stores the trajectory (every step or at t_eval), the dense output
 * (polynomials, or a method's dense records: method.h), and locates events on the
 * dense output.  No global state: all in the run.
 *
 * Switching events (opts->switching[i] != 0) mark a change of the dynamics (a
 * contact closing or opening, LLM paper section 3, eqs 17-18; f or f_y jumps there).
 * A step whose end has g_i of the other sign is not accepted as it is: its stages
 * mix both regimes, with an error O(h |jump|) however little of it lies past the
 * switch.  The root t* is located on the step's dense output (the earliest of all
 * switching roots) and the step is retried ending just before t* (when that retry
 * too contains a switch and fails its error test, its dense output cannot be trusted
 * to place t*: the next retry is at most as long as the error test allows); the next
 * step, which starts within 1e-10 of a step of t*, crosses it with a step of twice that
 * distance, accepted without the error test and cut at t* (moved by ulps if need
 * be so that g_i has strictly its new sign there).  The event is reported like any
 * other, and the run continues from t* with the method re-initialized (method.h,
 * "Restarts").  These retries count as rejected steps (stats.nreject), restarts in
 * stats.nrestart.  A fixed-step run keeps its grid: the two extra steps lie between
 * two grid points.
 *
 * A switching event entered and left again within one step (a penalty contact
 * passed through) has the same sign at both ends.  Two lines of defence:
 *  - The problem's step bound (problem.h step_bound, continuous collision detection
 *    of a mechanism's contacts): evaluated once per point (t, y) with f = f0 (for a
 *    method that never needs f0, bdf: the derivative of the last step's polynomial
 *    at its end), it bounds every attempt from there (not the short step across a
 *    switch).  A fixed-step run that would step further inserts equal steps within
 *    the bound up to its next grid point, which stays on the grid.
 *  - Interior samples: a step that passes its error test with no switching event of
 *    the other sign at its end evaluates the events at theta = k/8, k = 1..7, of its
 *    dense output (7 evaluations of the event function per step, only in runs with
 *    switching events; on a method's dense records, which may cost an exponential
 *    per sample, only when the problem has no step bound); the first sign change of
 *    a switching event between samples is located and handled like one at the end.
 *    This catches what lies across a sample, not what falls between two.
 */
#include <stddef.h>
#include "problem.h"
#include "method.h"
#include "controller.h"

typedef struct mb_options {
    double rtol;            /* relative tolerance (with rtol_v: their minimum, for the
                             * Newton tolerances of implicit methods) */
    const double *rtol_v;   /* per-component relative tolerances (size n) or NULL */
    const double *atol;     /* size n */
    double h;               /* > 0: fixed step of this size */
    double first_step;      /* > 0: initial step, else automatic */
    double max_step;        /* > 0: bound on |h| (inf allowed) */
    double min_step;        /* >= 0 */
    long max_steps;         /* bound on step attempts; <= 0: MB_DEFAULT_MAX_STEPS */
    int step_doubling;      /* adaptive by step doubling (methods without estimate) */
    mb_controller_kind controller;
    int error_per_unit_step; /* EPUS (LLM eq 39) instead of EPS */
    double safety, fac_min, fac_max; /* 0: defaults (0.9, 0.2, 10); else
                                      * 0 < safety <= 1, 0 < fac_min < 1 < fac_max */
    const double *t_eval;   /* sorted in the direction of integration, or NULL */
    ptrdiff_t n_eval;
    int dense_output;       /* store the dense output of every step */
    /* events */
    mb_event_fn events;
    ptrdiff_t n_events;
    const int *terminal;    /* size n_events: number of occurrences that stop (0: none) */
    const int *direction;   /* size n_events: -1, 0, +1 */
    const int *switching;   /* size n_events: nonzero = switching (restart) event, or NULL */
    void *event_ctx;
    /* optional: called with the current time before every step attempt (and by
     * long inner loops); returns 0 to go on, or a status (< 0, e.g.
     * MB_ERR_INTERRUPTED) that stops the run there with the trajectory so far.
     * The binding uses it to notice Ctrl-C (and to report progress) at most every
     * few milliseconds of wall time: it keeps its own clock. */
    int (*monitor)(double t, void *ctx);
    void *monitor_ctx;
    /* options of the method: a struct the method defines in its header, or NULL for
     * its defaults (handed to the method as mb_stepper.method_options) */
    const void *method_options;
} mb_options;

/* The step-attempt limit of a run that does not set mb_options.max_steps (the
 * SUNDIALS adapters use the same). */
#define MB_DEFAULT_MAX_STEPS 1000000L

/* Check the options of a run of problem size n over [t0, tf]: t0 finite, tf finite
 * or +-inf (a terminal event ends the run), tolerances, controller bounds, t_eval
 * finite and monotone inside the span, the fixed step's number of steps within
 * max_steps.  Returns MB_OK or
 * MB_ERR_ILL_INPUT with a message in msg (msg_len bytes). */
int mb_options_check(const mb_options *o, ptrdiff_t n, double t0, double tf, char *msg,
                     size_t msg_len);

/* The smallest step size the driver attempts at time t: 10 ulps of t, as SciPy
 * (10 |nextafter(t, +-inf) - t|), so that the bound follows |t| and not the span. */
double mb_min_step(double t);

/* Growable result of a run.  Free with mb_result_free. */
typedef struct mb_result {
    ptrdiff_t n;
    ptrdiff_t nt, cap_t;        /* output points */
    double *t, *y;              /* t[nt], y[nt*n] (row k = point k) */
    ptrdiff_t nsteps_d, cap_d;  /* dense records */
    double *d_t, *d_h;          /* step start and size */
    int *d_deg;                 /* polynomial degree; -1: a method's dense record */
    ptrdiff_t *d_off;           /* offset into d_c */
    double *d_c;                /* coefficients: (deg+1)*n per step, or d_rec_len */
    ptrdiff_t d_rec_len;        /* doubles per dense record (0: no records) */
    ptrdiff_t len_c, cap_c;
    ptrdiff_t n_events;
    ptrdiff_t *ev_count, *ev_cap;   /* per event */
    double **ev_t, **ev_y;
    ptrdiff_t n_hist, cap_hist;  /* accepted step history: t, h, err_norm */
    double *hist_t, *hist_h, *hist_err;
    mb_stats stats;
    int status;
    char message[512];
} mb_result;

void mb_result_free(mb_result *r);

/* Integrate p from t0 to tf starting at y0 with method m.
 * Returns the status (also in res->status); res->message explains failures.
 * Nothing computed is lost: on failure res holds the trajectory so far. */
int mb_driver_run(const mb_method *m, const mb_problem *p, double t0, double tf,
                  const double *y0, const mb_options *opts, mb_result *res);

/* Piecewise runs (driver_step.c): the run of mb_driver_run set up once, then taken on
 * in pieces by the caller, between which the caller may read the state and change the
 * problem's parameters.  Every step is mb_driver_run's step (the same loop body), so a
 * piecewise run over [t0, tf] takes exactly the steps of mb_driver_run over [t0, tf]
 * with t_eval (every step's dense output is built, as with t_eval); the result stores
 * every accepted step's end (opts->t_eval must be NULL).  No global state; the
 * opts, problem, y0 and result must outlive the state.
 *   mb_driver_open     set up (phase 1); *st is set also on failure (close it)
 *   mb_driver_step     one accepted step: MB_OK, MB_TERMINATED (this step ended the
 *                      run at tf or a terminal event, or it had ended: no step taken)
 *                      or the status that ended the run (in res->status with its
 *                      message; nothing is lost)
 *   mb_driver_advance  steps until the run reaches t_stop (dir (t_stop - t) <= 0),
 *                      then y = the state at t_stop: the last step's end, or its dense
 *                      output there (as a t_eval point).  MB_ERR_ILL_INPUT for t_stop
 *                      past tf or before the last step's start.
 *   mb_driver_restart_at  move the run back to (t, y), t inside the last step (or at
 *                      its end), dropping what the result holds past t; the method
 *                      restarts there (method.h "Restarts": histories, kept Jacobians,
 *                      f0 and the controller's memory dropped), as at a switching
 *                      event, so that a change of the problem takes effect at t.
 *   mb_driver_t, mb_driver_y  the run's current point (the last step's end)
 *   mb_driver_status   MB_OK while steps may be taken, else MB_TERMINATED or the
 *                      failure that ended the run
 *   mb_driver_close    res->status and message as mb_driver_run leaves them, work
 *                      freed (NULL: nothing) */
typedef struct mb_driver_state mb_driver_state;
int mb_driver_open(mb_driver_state **st, const mb_method *m, const mb_problem *p, double t0,
                   double tf, const double *y0, const mb_options *opts, mb_result *res);
int mb_driver_step(mb_driver_state *st);
int mb_driver_advance(mb_driver_state *st, double t_stop, double *y);
int mb_driver_restart_at(mb_driver_state *st, double t, const double *y);
double mb_driver_t(const mb_driver_state *st);
const double *mb_driver_y(const mb_driver_state *st);
int mb_driver_status(const mb_driver_state *st);
int mb_driver_close(mb_driver_state *st);

/* Doubles of the driver's one work block for method m on problem p with ne events
 * (record: dense records in use).  The same formula sizes and carves the block. */
size_t mb_driver_work_size(const mb_method *m, const mb_problem *p, ptrdiff_t ne, int record);

/* Evaluate a dense-output polynomial C ((deg+1) x n, see method.h) at theta. */
void mb_dense_eval(ptrdiff_t n, int deg, const double *C, double theta, double *y);

#endif
