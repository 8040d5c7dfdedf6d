#ifndef MB_PYTHON_OPTIONS_H
#define MB_PYTHON_OPTIONS_H
/* Internal to csrc/python: one run of an integrator from Python, shared by
 * _core.solve and _core.solve_dae (module.c) and _core.mech_simulate (simulate_py.c).
 *
 *   run_args     the options all three accept, filled by each entry point's
 *                PyArg_ParseTupleAndKeywords through the RUN_KW_* keyword names,
 *                RUN_FMT_* format units and RUN_ADDR_* addresses below, so the
 *                three keep the same names, types and order;
 *   run_begin    the method by name: mbint's driver (registry.h) or SUNDIALS;
 *   run_prepare  y0, atol, t_eval, events (terminal, direction, switching)
 *                converted once into an mb_options and the arrays it points to;
 *   run_execute  the run, with the GIL released when no Python runs per step;
 *                an exception raised by the user's code (a callback, progress,
 *                cancel, Ctrl-C) stops the run and is held with what it computed
 *                (result_dict_of_run: "interrupted" or "raised"), MB_ERR_MEM is
 *                MemoryError, any other failure stays in the result (status,
 *                message);
 *   result_to_dict  the mb_result as the dict of _core.solve;
 *   run_free     releases everything (also after a failure at any point).
 * Arguments are validated for users in mbint/_validate.py; here they are
 * re-checked only for memory safety. */
#include "convert.h"
#include "problem_py.h"
#include "driver.h"
#include "registry.h"
#include "sundials.h"

typedef struct run_args {
    double t0, tf;
    PyObject *rtol;                  /* a float, or n floats (per-component) */
    PyObject *y0, *atol;
    double h, first_step, max_step, min_step, safety, fac_min, fac_max;
    long max_steps;
    int step_doubling, controller, error_per_unit_step, dense_output;
    PyObject *t_eval, *events, *terminal, *direction, *switching;
    PyObject *method_options;        /* dict of the method's own options, or None */
    PyObject *progress;              /* progress(t) at most every MB_PROGRESS_INTERVAL s, or None */
    PyObject *cancel;                /* cancel() at most every MB_SIGNAL_INTERVAL s, or None */
} run_args;

/* step bounds, step-size control and output, in the order of _core.solve */
#define RUN_KW_STEPS "first_step", "max_step", "min_step", "max_steps"
#define RUN_FMT_STEPS "dddl"
#define RUN_ADDR_STEPS(a) &(a).first_step, &(a).max_step, &(a).min_step, &(a).max_steps
#define RUN_KW_CONTROL                                                                    \
    "step_doubling", "controller", "error_per_unit_step", "safety", "fac_min", "fac_max", \
        "method_options"
#define RUN_FMT_CONTROL "piiddd" "O"
#define RUN_ADDR_CONTROL(a)                                                             \
    &(a).step_doubling, &(a).controller, &(a).error_per_unit_step, &(a).safety, &(a).fac_min, \
        &(a).fac_max, &(a).method_options
#define RUN_KW_OUTPUT \
    "t_eval", "dense_output", "events", "terminal", "direction", "progress", "cancel"
#define RUN_FMT_OUTPUT "OpOOOOO"
#define RUN_ADDR_OUTPUT(a)                                                                  \
    &(a).t_eval, &(a).dense_output, &(a).events, &(a).terminal, &(a).direction, &(a).progress, \
        &(a).cancel

/* defaults: zeros (the method's preferred controller), every object None */
void run_args_init(run_args *a);

typedef struct run_ctx {
    const mb_method *m;              /* a method of mbint's driver, or NULL: */
    const char *name;                /* the method's name (SUNDIALS when m is NULL) */
    const mb_dae_options *dae;       /* IDA on p->res (mb_sundials_ida_run), or NULL */
    double *yp0_out;                 /* with dae: receives y'(t0) */
    ptrdiff_t n;                     /* state size (from y0) */
    int python;                      /* Python runs per step: keep the GIL */
    /* events after the user's: n_extra C functions, non-terminal, both
     * directions, switching (the contacts of simulate), or none */
    ptrdiff_t n_extra;
    mb_event_fn extra;
    void *extra_ctx;
    mb_options o;
    mb_result res;
    /* owned */
    PyObject *y0, *atol, *t_eval, *rtol_v; /* float64 arrays (rtol_v: or NULL) */
    int *ev_flags;                   /* terminal, direction, switching: 3 o.n_events */
    py_events_ctx user;              /* the user's events g(t, y, *args) */
    double mon_last;                 /* monotonic clock (s) of the last signal check */
    PyObject *progress;              /* borrowed: progress(t) of run_args, or NULL */
    double prog_last;                /* monotonic clock (s) of the last progress call */
    PyObject *cancel;                /* borrowed: cancel() of run_args, or NULL */
    PyObject *interrupt;             /* the KeyboardInterrupt that stopped the run, or NULL */
    PyObject *raised;                /* any other exception that stopped it, or NULL */
    void *method_options;            /* the method's options struct (method_options.h) */
} run_ctx;

/* Zero r and look up the method `name`; -1 with ValueError when unknown. */
int run_begin(run_ctx *r, const char *name);
/* Convert y0 (n0 entries, or any size when n0 < 0), atol, t_eval and the events
 * of a into r->o; args: the tuple passed to the events (or NULL).  0 or -1. */
int run_prepare(run_ctx *r, const run_args *a, ptrdiff_t n0, PyObject *args);
/* Run p from a->t0 to a->tf into r->res (see the header comment).  0 or -1.
 * Ctrl-C: the run checks for signals at most every MB_SIGNAL_INTERVAL seconds of
 * wall time (taking the GIL only for that when it was released; Python runs signal
 * handlers in the main thread only); with a->cancel it calls cancel() in the same
 * place (in any thread: how an ensemble stops its members), and with a->progress
 * progress(t) (t: the time of the next step attempt) at most every
 * MB_PROGRESS_INTERVAL seconds.  An exception raised there or inside a Python
 * callback stops the run with what it computed: run_execute then returns 0 with the
 * exception held, a KeyboardInterrupt in r->interrupt, any other in r->raised
 * (result_dict_of_run puts them under "interrupted" and "raised"). */
int run_execute(run_ctx *r, const mb_problem *p, const run_args *a);
void run_free(run_ctx *r);
/* One piece of a run, piece(r, arg), as run_execute runs the whole: the monitor
 * (Ctrl-C, cancel, progress), the GIL released unless Python runs per step, an
 * exception raised in it held in r (r->interrupt, r->raised), MB_ERR_MEM as
 * MemoryError.  0 or -1.  run_execute is run_piece of the whole run. */
typedef int (*run_piece_fn)(run_ctx *r, void *arg);
int run_piece(run_ctx *r, const run_args *a, run_piece_fn piece, void *arg);

/* The dict of _core.solve: t, y, status, message, statistics, step history,
 * dense records, t_events, y_events. */
PyObject *result_to_dict(const mb_result *r);
/* result_to_dict of r->res plus "interrupted": the KeyboardInterrupt that stopped
 * the run (or None), and "raised": any other exception of the user's code that
 * stopped it (or None; the front ends raise it with the result attached); releases
 * both. */
PyObject *result_dict_of_run(run_ctx *r);

#define MB_SIGNAL_INTERVAL 0.005
#define MB_PROGRESS_INTERVAL 0.1

#endif
