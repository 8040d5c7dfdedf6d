/* The anchor of the stiff benchmark (bench_stiff.py): a plain C program calling CVODE
 * directly (CV_BDF, Newton, dense linear solver, the analytic Jacobian) with the same C
 * right-hand sides and Jacobians mbint's stiff benchmark hands its methods
 * (csrc/problems/stiff.c, compiled into this program): Van der Pol mu = 1000 over
 * [0, 2] and Robertson over [0, 1e5], as SciPy's and MATLAB's users would write the
 * call, with one output at the end (CV_NORMAL).
 *
 * Usage (output on stdout, numbers in %.17g):
 *   anchor_stiff PROBLEM RTOL ATOL ROUND_S
 *       PROBLEM vdp1000 | robertson; scalar tolerances; the run is repeated for about
 *       ROUND_S seconds of CPU time (at least once).  Prints "time <mean CPU s per run>
 *       reps <k>", then "nsteps nfev njev nlu", then y(tf).
 * CPU time is CLOCK_PROCESS_CPUTIME_ID: the machines are shared, wall time measures
 * the neighbours. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include "problems.h"

#ifdef ANCHOR_FAST_OPS
/* -DANCHOR_FAST_OPS with csrc/methods/sundials_nvec.c: SUNDIALS' serial vector
 * operations and dense LU compiled at -O2 (Debian's libsundials 6.4.1 is built without
 * optimization), bit for bit the same results: the program with an optimized library */
void mb_sun_fast_ops(N_Vector v);
void mb_sun_fast_dense(SUNLinearSolver LS);
#endif

typedef struct {
    mb_rhs_fn rhs;
    mb_jac_fn jac;
    int n;
} problem;

static int f_cb(realtype t, N_Vector y, N_Vector ydot, void *ud)
{
    const problem *P = ud;
    return P->rhs(t, N_VGetArrayPointer(y), N_VGetArrayPointer(ydot), NULL);
}

static int jac_cb(realtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud, N_Vector t1,
                  N_Vector t2, N_Vector t3)
{
    (void)fy; (void)t1; (void)t2; (void)t3;
    const problem *P = ud;
    return P->jac(t, N_VGetArrayPointer(y), SUNDenseMatrix_Data(J), P->n, NULL);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* one run from y0 over [0, tf]; y receives y(tf); stats nsteps nfev njev nlu */
static int solve(SUNContext ctx, problem *P, const double *y0, double tf, double rtol,
                 double atol, double *y, long stats[4])
{
    N_Vector v = N_VNew_Serial(P->n, ctx);
    SUNMatrix A = SUNDenseMatrix(P->n, P->n, ctx);
    SUNLinearSolver LS = SUNLinSol_Dense(v, A, ctx);
#ifdef ANCHOR_FAST_OPS
    mb_sun_fast_ops(v);
    mb_sun_fast_dense(LS);
#endif
    void *mem = CVodeCreate(CV_BDF, ctx);
    memcpy(N_VGetArrayPointer(v), y0, (size_t)P->n * sizeof(double));
    int flag = CVodeInit(mem, f_cb, 0.0, v);
    flag = flag ? flag : CVodeSStolerances(mem, rtol, atol);
    flag = flag ? flag : CVodeSetUserData(mem, P);
    flag = flag ? flag : CVodeSetLinearSolver(mem, LS, A);
    flag = flag ? flag : CVodeSetJacFn(mem, jac_cb);
    flag = flag ? flag : CVodeSetMaxNumSteps(mem, 1000000);
    realtype t = 0.0;
    flag = flag ? flag : CVode(mem, tf, v, &t, CV_NORMAL);
    memcpy(y, N_VGetArrayPointer(v), (size_t)P->n * sizeof(double));
    CVodeGetNumSteps(mem, &stats[0]);
    CVodeGetNumRhsEvals(mem, &stats[1]);
    CVodeGetNumJacEvals(mem, &stats[2]);
    CVodeGetNumLinSolvSetups(mem, &stats[3]);
    CVodeFree(&mem);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(v);
    return flag;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: anchor_stiff PROBLEM RTOL ATOL ROUND_S\n");
        return 2;
    }
    problem P = {mb_test_problem_find(argv[1]), mb_test_problem_jac(argv[1]), 0};
    double y0[3], tf;
    if (strcmp(argv[1], "vdp1000") == 0) {
        P.n = 2;
        y0[0] = 2.0; y0[1] = 0.0;
        tf = 2.0;
    } else if (strcmp(argv[1], "robertson") == 0) {
        P.n = 3;
        y0[0] = 1.0; y0[1] = 0.0; y0[2] = 0.0;
        tf = 1e5;
    } else {
        fprintf(stderr, "unknown problem %s\n", argv[1]);
        return 2;
    }
    double rtol = atof(argv[2]), atol = atof(argv[3]), round_s = atof(argv[4]), y[3];
    long stats[4];
    SUNContext ctx;
    if (SUNContext_Create(NULL, &ctx))
        return 1;
    int k = 0, flag = 0;
    double t0 = cpu_seconds();
    do {
        flag = solve(ctx, &P, y0, tf, rtol, atol, y, stats);
        k++;
    } while (flag >= 0 && cpu_seconds() - t0 < round_s);
    double per = (cpu_seconds() - t0) / k;
    SUNContext_Free(&ctx);
    if (flag < 0) {
        fprintf(stderr, "CVode failed with flag %d\n", flag);
        return 1;
    }
    printf("time %.17g reps %d\n%ld %ld %ld %ld\n", per, k, stats[0], stats[1], stats[2],
           stats[3]);
    for (int i = 0; i < P.n; i++) printf("%.17g\n", y[i]);
    return 0;
}
