/* Cost of the index-1 formulation on a planar chain of N pendulums, sparse (KLU,
 * csrc/mbs/index1_sparse.c) against dense (csrc/mbs/index1.c), built and run by
 * bench_chain_sparse.py.
 *
 *   bench_chain_sparse N mode [min_seconds]      mode: sparse | dense
 *
 * prints one line "N nq mode t_f t_jac t_step err" with
 *   t_f     seconds per f (rhs) at distinct states (no cache hits),
 *   t_jac   seconds per Jacobian: sparse mode the linsys jac (C_q, C_v kept); dense
 *           mode the analytic dense jac,
 *   t_step  seconds for the linear algebra of one radau_iia Newton setup plus three
 *           iterations: linsys jac, one real and one complex factorization of a I - J,
 *           three real and three complex solves (sparse); the dense jac, the real LU
 *           of a I - J (n x n) and the complex LU (n x n), and the same solves (dense),
 *   err     max |q''_sparse - q''_dense| / max |q''| at the first state when both
 *           modes run (N <= 300 only: "-" otherwise).
 * Chain: bars of length 1, mass 1, RSDA springs (k = 50, c = 0.5) between neighbours,
 * hanging at angles near -pi/2 + 0.3. */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dense.h"
#include "index1.h"
#include "model.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct chain {
    mb_planar_model m;
    double *body;
    mb_planar_joint *j;
    mb_planar_force *f;
} chain;

static void chain_build(chain *C, int N, double *y)
{
    memset(C, 0, sizeof *C);
    C->body = calloc(2 * N, sizeof(double));
    C->j = calloc(N, sizeof *C->j);
    C->f = calloc(N, sizeof *C->f);
    C->m.nb = N;
    C->m.body = C->body;
    C->m.g[1] = -9.81;
    C->m.joints = C->j;
    C->m.forces = C->f;
    double P[2] = {0, 0}, V[2] = {0, 0};
    double *q = y, *qd = y + 3 * N;
    for (int k = 0; k < N; k++) {
        C->body[2 * k] = 1.0;
        C->body[2 * k + 1] = 1.0 / 12;
        mb_planar_joint *J = &C->j[C->m.nj++];
        J->type = MB_JOINT_REVOLUTE;
        J->i = k - 1;
        J->j = k;
        J->si[0] = k > 0 ? 0.5 : 0.0;
        J->sj[0] = -0.5;
        J->row = C->m.nc;
        C->m.nc += 2;
        if (k > 0) {
            mb_planar_force *F = &C->f[C->m.nf++];
            F->type = MB_FORCE_RSDA;
            F->i = k - 1;
            F->j = k;
            F->k = 50;
            F->c = 0.5;
        }
        double th = -M_PI / 2 + 0.3 + 0.1 * sin(k), w = 0.5 * cos(k);
        double c = cos(th), s = sin(th), u[2] = {-0.5 * c, -0.5 * s};
        q[3 * k] = P[0] - u[0];
        q[3 * k + 1] = P[1] - u[1];
        q[3 * k + 2] = th;
        qd[3 * k] = V[0] + u[1] * w;
        qd[3 * k + 1] = V[1] - u[0] * w;
        qd[3 * k + 2] = w;
        P[0] = q[3 * k] + 0.5 * c;
        P[1] = q[3 * k + 1] + 0.5 * s;
        V[0] = qd[3 * k] - 0.5 * s * w;
        V[1] = qd[3 * k + 1] + 0.5 * c * w;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s N sparse|dense [min_seconds]\n", argv[0]);
        return 2;
    }
    int N = atoi(argv[1]), sparse = strcmp(argv[2], "sparse") == 0;
    double tmin = argc > 3 ? atof(argv[3]) : 0.3;
    ptrdiff_t nq = 3 * (ptrdiff_t)N, n = 2 * nq;
    double *y0 = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
    double *fy = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    double *xi = malloc(sizeof(double) * n);
    chain C;
    chain_build(&C, N, y0);
    mb_mech me;
    mb_planar_mech(&C.m, &me);
    mb_index1 f;
    int rc = mb_index1_init_ex(&f, &me, 0.0, 0.0, sparse);
    if (rc != 0) {
        fprintf(stderr, "init: %s\n", f.msg);
        return 1;
    }
    mb_problem p;
    mb_index1_problem(&f, &p);

    /* f at distinct states */
    long calls = 0;
    double t0 = now(), t1;
    do {
        memcpy(y, y0, sizeof(double) * n);
        y[nq] += 1e-9 * (double)(calls + 1);
        if ((rc = p.rhs(0.0, y, fy, p.ctx)) != 0) {
            fprintf(stderr, "rhs: %d %s\n", rc, f.msg);
            return 1;
        }
        calls++;
        t1 = now();
    } while (t1 - t0 < tmin || calls < 3);
    double t_f = (t1 - t0) / calls;

    /* Jacobian and one Newton setup with three iterations */
    double *J = NULL, *A = NULL;
    double complex *Az = NULL, *bz = NULL;
    int *ipiv = NULL;
    if (!sparse) {
        J = malloc(sizeof(double) * n * n);
        A = malloc(sizeof(double) * n * n);
        Az = malloc(sizeof(double complex) * n * n);
        bz = malloc(sizeof(double complex) * n);
        ipiv = malloc(sizeof(int) * n * 2);
    }
    double ar = 7.0, ai = 4.0;
    long jcalls = 0, scalls = 0;
    t0 = now();
    do {
        memcpy(y, y0, sizeof(double) * n);
        y[nq] += 1e-9 * (double)(jcalls + 1);
        p.rhs(0.0, y, fy, p.ctx);
        rc = sparse ? p.linsys->jac(p.linsys->ctx, 0.0, y, fy) : p.jac(0.0, y, J, n, p.ctx);
        if (rc != 0) return 1;
        jcalls++;
        t1 = now();
    } while (t1 - t0 < tmin || jcalls < 2);
    double t_jac = (t1 - t0) / jcalls;
    t0 = now();
    do {
        memcpy(y, y0, sizeof(double) * n);
        y[nq] += 1e-9 * (double)(scalls + 1);
        p.rhs(0.0, y, fy, p.ctx);
        if (sparse) {
            const mb_linsys *L = p.linsys;
            if (L->jac(L->ctx, 0.0, y, fy) || L->factor(L->ctx, 0, ar, 0.0) ||
                L->factor(L->ctx, 1, ar, ai))
                return 1;
            for (int it = 0; it < 3; it++) {
                for (ptrdiff_t i = 0; i < n; i++) x[i] = xi[i] = sin((double)i + it);
                L->solve(L->ctx, 0, x, NULL);
                L->solve(L->ctx, 1, x, xi);
            }
        } else {
            if (p.jac(0.0, y, J, n, p.ctx)) return 1;
            for (ptrdiff_t k = 0; k < n * n; k++) {
                A[k] = -J[k];
                Az[k] = -J[k];
            }
            for (ptrdiff_t i = 0; i < n; i++) {
                A[i + n * i] += ar;
                Az[i + n * i] += ar + I * ai;
            }
            mb_lu_factor(n, A, n, ipiv);
            mb_zlu_factor(n, Az, n, ipiv + n);
            for (int it = 0; it < 3; it++) {
                for (ptrdiff_t i = 0; i < n; i++) x[i] = bz[i] = sin((double)i + it);
                mb_lu_solve(n, A, n, ipiv, x, 1);
                mb_zlu_solve(n, Az, n, ipiv + n, bz, 1);
            }
        }
        scalls++;
        t1 = now();
    } while (t1 - t0 < tmin || scalls < 2);
    double t_step = (t1 - t0) / scalls;

    /* agreement with the other mode at y0 (small N only) */
    char err[32] = "-";
    if (N <= 300) {
        mb_index1 g;
        double *a1 = malloc(sizeof(double) * nq), *a2 = malloc(sizeof(double) * nq);
        if (mb_index1_init_ex(&g, &me, 0.0, 0.0, !sparse) == 0 &&
            mb_index1_solve(&f, 0.0, y0, y0 + nq, a1, NULL) == 0 &&
            mb_index1_solve(&g, 0.0, y0, y0 + nq, a2, NULL) == 0) {
            double d = 0, s = 0;
            for (ptrdiff_t i = 0; i < nq; i++) {
                d = fmax(d, fabs(a1[i] - a2[i]));
                s = fmax(s, fabs(a2[i]));
            }
            snprintf(err, sizeof err, "%.2e", d / s);
        }
        mb_index1_free(&g);
        free(a1);
        free(a2);
    }
    printf("%d %td %s %.6e %.6e %.6e %s\n", N, nq, sparse ? "sparse" : "dense", t_f, t_jac,
           t_step, err);
    mb_index1_free(&f);
    free(J); free(A); free(Az); free(bz); free(ipiv);
    free(y0); free(y); free(fy); free(x); free(xi);
    free(C.body); free(C.j); free(C.f);
    return 0;
}
