#ifndef MB_METHODS_SUNDIALS_IMPL_H
#define MB_METHODS_SUNDIALS_IMPL_H
/* Private to sundials_*.c: one run of a SUNDIALS integrator.
 * sundials_common.c owns the run (context, vectors, output loop, events,
 * statistics, status); each adapter (sundials_cvode.c, sundials_ida.c,
 * sundials_arkode.c) supplies a sun_backend: how to create the integrator and
 * how to take one internal step and query it. */
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sunmatrix/sunmatrix_dense.h>
#include "sundials.h"

typedef struct sun_run sun_run;

typedef struct sun_backend {
    const char *solver;  /* "CVODE", "IDA", "ARKODE" (messages) */
    /* create r->mem for problem r->p (and r->A, r->LS); may correct r->y (IDA) */
    int (*setup)(sun_run *r, double t0, double tf);
    /* one internal step towards tf in ONE_STEP mode: raw SUNDIALS flag
     * (0 success, 1 tstop reached, 2 root found, < 0 failure) */
    int (*evolve)(sun_run *r, double tf, double *t_ret);
    /* k-th derivative of the interpolant of the last step at t */
    int (*dky)(sun_run *r, double t, int k, N_Vector out);
    /* end time, size and interpolant degree of the last step */
    int (*last_step)(sun_run *r, double *tn, double *hu, int *deg);
    int (*root_info)(sun_run *r, int *found);
    /* error weights and local error estimate of the last step */
    int (*local_error)(sun_run *r, N_Vector ewt, N_Vector ele);
    void (*stats)(sun_run *r, mb_stats *st);
    int (*status)(int flag);  /* flag < 0 -> MB_ERR_* of status.def */
    void (*free)(sun_run *r); /* free r->mem */
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
    SUNContext ctx;
    void *mem;                  /* the integrator */
    N_Vector y, yp, atol, v1, v2; /* state, y' (IDA), tolerances, scratch */
    SUNMatrix A;
    SUNLinearSolver LS;
    double *f;                  /* n doubles of scratch for residual forms */
    int *rootdir, *found;       /* n_events each */
    ptrdiff_t *hits;            /* occurrences per event */
    long extra_nfev;            /* evaluations outside the integrator's counters */
    int cb_status;              /* sticky failure of a user callback (0: none) */
    char sun_msg[320];          /* last error reported by SUNDIALS */
};

extern const sun_backend mb_sun_cvode_bdf, mb_sun_cvode_adams, mb_sun_ida, mb_sun_arkode_erk,
    mb_sun_arkode_dirk;

/* Callback trampolines in the SUNDIALS conventions (0 ok, 1 recoverable, -1
 * fatal).  A fatal failure is kept in r->cb_status with its message, and no
 * user callback is called again in that run (a Python exception stays set). */
int mb_sun_rhs(sun_run *r, double t, N_Vector y, N_Vector ydot);
int mb_sun_events(sun_run *r, double t, N_Vector y, double *g);
int mb_sun_jac(sun_run *r, double t, N_Vector y, SUNMatrix J);
/* record a fatal callback failure (code of status.def) with a message */
int mb_sun_cb_fail(sun_run *r, int code, const char *fmt, ...);
/* error handler for SUNDIALS (stores the message of errors, drops warnings) */
void mb_sun_err_handler(int error_code, const char *module, const char *function, char *msg,
                        void *eh_data);
/* a failed set-up call: message naming the call; returns the mb status */
int mb_sun_setup_fail(sun_run *r, int code, const char *call);
/* wrms norm of ele in the weights ewt */
double mb_sun_wrms(sunindextype n, N_Vector ewt, N_Vector ele);

#endif
