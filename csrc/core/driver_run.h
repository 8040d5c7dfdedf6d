#ifndef MB_CORE_DRIVER_RUN_H
#define MB_CORE_DRIVER_RUN_H
/* Private to the driver: the state of one run and the functions its files share.
 * Not part of any public interface.  The files call only downwards:
 *
 *   driver.c         the step loop in phases (choose, attempt, switching retry,
 *                    step-size control, complete the step); calls all three below
 *   driver_setup.c   sets up a run and finishes it, mb_options_check, mb_min_step;
 *                    calls driver_events.c (initial events) and driver_dense.c (f0)
 *   driver_events.c  events and switching events located on the dense output;
 *                    calls driver_dense.c
 *   driver_dense.c   f0, the dense output of a step, the t_eval output; calls none
 */
#include "driver.h"

/* The factor on the step size after a recoverable failure (the method's step returned
 * > 0 without setting mb_stepper.h_fail_factor, or the problem's check rejected the
 * step's end). */
#define MB_FAIL_SHRINK 0.25

/* The switching retry of a step that contains a switching event (driver.h): first
 * ending just before the switch, then, when the switch lies that close, a short step
 * across it (phase2), accepted without the error test and cut at the switch. */
typedef struct switch_state {
    int phase2;         /* the current attempt is the short step across a switch: no
                         * error test, no step bound */
    double h_aim;       /* fixed steps: size of the next attempt, aimed at a switch
                         * (0: the next grid point) */
    double h_resume;    /* adaptive: the step size to go on with after the switch
                         * (0: the controller's) */
    double t_retry;     /* start of the last step retried to end before a switch
                         * (NaN: none) */
} switch_state;

typedef struct run {
    const mb_method *m;
    const mb_problem *p;
    const mb_options *o;
    mb_result *res;
    mb_stepper s;
    mb_problem view;        /* p when the method sees the problem altered (method_view) */
    ptrdiff_t n;
    double dir;
    /* buffers (one allocation, carved by layout()) */
    void *block;
    double *y, *y_new, *err, *f0, *f1, *C, *ybuf, *y_full, *y_mid, *f_mid, *g_old, *g_new,
        *g_buf, *g_smp;
    ptrdiff_t *ev_hits;     /* occurrences per event so far */
    int *ev_found;          /* root found in the current step, per event */
    int *jac_groups;        /* finite-difference column groups (sparsity given) */
    double *ev_last;        /* t of the last reported root per event */
    int dense_deg;
    ptrdiff_t next_eval;
    int hermite;            /* dense output by cubic Hermite */
    int record;             /* dense output by the method's dense records (method.h) */
    double *rec, *rec_work; /* the record of the current step and its evaluation scratch */
    ptrdiff_t rec_len;
    int n_switch;           /* number of switching events */
    double t_dense, h_dense; /* the step the dense output in C / rec belongs to */
    int dense_rc;           /* status of a failed dense evaluation inside the root finder */
    int g_new_ok;           /* g_new holds g at the end of the current attempt */
    int dense_ok;           /* the dense output of the current attempt is built */
    double h_bound;         /* the problem's step bound at the current point (t, y) */
    int h_bound_ok;         /* h_bound is that of the current point */
    int deriv_ok;           /* the polynomial in C is that of the step ending at (t, y) */
    /* the step loop */
    double t0, tf;
    double t;               /* the current point (t, y) */
    int fixed;              /* fixed steps (mb_options.h > 0) */
    int doubling;           /* error estimates by step doubling */
    mb_controller ctl;
    double h_abs;           /* adaptive: |h| of the next attempt */
    double max_step;        /* bound on |h| (inf: none) */
    long limit;             /* step attempts allowed */
    long n_fixed, k_fixed;  /* fixed steps: grid steps over the span; grid points
                             * reached or aimed at */
    int after_reject;       /* the last attempt failed or was rejected */
    switch_state sw;
    /* an attempt that met a non-finite f or J (its stages left the region where the
     * problem is defined) is rejected and retried smaller: the time of the last one and
     * its message, which the run reports when h cannot shrink further */
    double nonfinite_t;
    int nonfinite;
    int nonfinite_singular; /* that failure was a singular system inside f (rhs_singular) */
    char nonfinite_msg[200];
    int keep_dense;         /* build every step's dense output (a piecewise run,
                             * driver_step.c: interpolation at the stop times) */
} run;

/* driver.c */
/* one accepted step; *last: it ended the run (tf or a terminal event) */
int mb_drv_step(run *r, int *last);
/* The method restarts (method.h "Restarts") at the current point: counted in
 * stats.nrestart, its order reset, init called, the controller's memory dropped */
int mb_drv_restart_method(run *r);

/* driver_setup.c */
/* Set up the run of m on p over [t0, tf] from y0: the result, the options check, the
 * work block, the stepper, the output at t0 and the initial events, and (t0 != tf)
 * the controller and the first step size.  r needs no preparation. */
int mb_drv_set_up(run *r, const mb_method *m, const mb_problem *p, double t0, double tf,
                  const double *y0, const mb_options *o, mb_result *res);
/* Finish the run with status rc: the result's status and message, free the work */
int mb_drv_finish(run *r, int rc);

/* driver_events.c */
/* whether event i is a switching event */
int mb_drv_is_switching(const run *r, ptrdiff_t i);
/* g(t, y) of every event; a failure or a non-finite value stops the run */
int mb_drv_eval_events(run *r, double t, const double *y, double *g);
/* the events of the accepted step [t, t+h]: reports roots, may cut the step at a
 * terminal root (*terminated) or a switching root (*cut, the run restarts there),
 * then *t_end is the step's new end */
int mb_drv_handle_events(run *r, double t, double h, double *t_end, int *terminated, int *cut);
/* the earliest switching root inside the step [t, t+h] as theta (-1: none), also
 * between interior samples of the dense output when sample is set */
int mb_drv_switching_root(run *r, double t, double h, int sample, double *th_out);

/* driver_dense.c */
/* f0 = f(t, y) at the start of the current step, evaluated once */
int mb_drv_ensure_f0(run *r, double t);
/* the dense output (polynomial in r->C or the record r->rec) of the step
 * [t_dense, t_dense + h_dense] at theta */
int mb_drv_dense_at(run *r, double theta, double *y);
/* mb_drv_dense_at as an mb_dense_fn (events.h); keeps the status of a failure */
int mb_drv_dense_fn(double theta, double *y, void *dctx);
/* build the dense output of the step [t, t+h] just computed (once per attempt) */
int mb_drv_build_dense(run *r, double t, double h);
/* the t_eval points in the accepted step [t, t+h] up to its end t_new (y_new) */
int mb_drv_emit_eval(run *r, double t, double h, double t_new, const double *y_new);

#endif
