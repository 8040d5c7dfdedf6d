/* Per-call CPU cost of the joint-tree engine (csrc/mbs/joint_tree.c) on a chain of n rods
 * with alternating joint axes (y, x), at a fixed random state: ABA, RNEA, CRBA and the
 * central-difference Jacobian of the ABA (4 n ABA calls) and the exact one
 * (mb_jtree_aba_derivatives, O(n^3); form_joint.c now takes the O(n^2) one of
 * joint_tree_deriv.c: bench_joint_urdf_jac.py).
 * Usage: joint_percall n [seconds]; prints "n aba_ns rnea_ns crba_ns jacfd_ns jac_ns".
 * Built and run by bench_joint.py. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "joint_tree.h"

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    ptrdiff_t n = argc > 1 ? atol(argv[1]) : 10;
    double budget = argc > 2 ? atof(argv[2]) : 0.3, L = 0.1, m = 0.1;
    int *parent = malloc(n * sizeof(int)), *type = calloc(n, sizeof(int));
    double *frame = calloc(12 * n, sizeof(double)), *axis = calloc(3 * n, sizeof(double)),
           *inertia = calloc(10 * n, sizeof(double)), *w = malloc(mb_jtree_deriv_work_size(n) * sizeof(double)),
           *q = malloc(n * sizeof(double)), *qd = malloc(n * sizeof(double)),
           *tau = malloc(n * sizeof(double)), *a = malloc(n * sizeof(double)),
           *M = malloc((size_t)n * n * sizeof(double)), *y = malloc(2 * n * sizeof(double)),
           *ap = malloc(n * sizeof(double)), *J = malloc((size_t)2 * n * n * sizeof(double));
    unsigned s = 1;
    for (ptrdiff_t i = 0; i < n; i++) {
        parent[i] = (int)i - 1;
        double *F = frame + 12 * i;
        F[0] = F[4] = F[8] = 1.0;
        F[11] = i ? -L : 0.0;
        axis[3 * i + (i % 2 ? 0 : 1)] = 1.0;
        double *p = inertia + 10 * i, I = m * L * L / 12;
        p[0] = m, p[3] = -L / 2, p[4] = p[5] = I, p[6] = 1e-4 * I;
        s = s * 1103515245u + 12345u;
        q[i] = ((s >> 8) & 0xffff) / 65536.0 - 0.5;
        qd[i] = 0.1 * q[i], tau[i] = 0.0;
    }
    mb_jtree T = {n, parent, type, frame, axis, inertia, NULL, NULL, {0, 0, -9.81}};
    double t0, dt, res[5];
    for (int which = 0; which < 5; which++) {
        long reps = 0;
        t0 = cpu();
        do {
            for (int k = 0; k < 8; k++, reps++) {
                if (which == 0)
                    mb_jtree_aba(&T, q, qd, tau, a, w);
                else if (which == 1)
                    mb_jtree_rnea(&T, q, qd, a, 1, a, w);
                else if (which == 2)
                    mb_jtree_crba(&T, q, M, n, w);
                else if (which == 4)
                    mb_jtree_aba_derivatives(&T, 0.0, q, qd, tau, NULL, J, J + n * n, n, w);
                else {  /* central differences over (q, q'), as fj_jac */
                    memcpy(y, q, n * sizeof(double));
                    memcpy(y + n, qd, n * sizeof(double));
                    for (ptrdiff_t j = 0; j < 2 * n; j++) {
                        double h = 6e-6 * fmax(1.0, fabs(y[j])), yj = y[j];
                        y[j] = yj + h;
                        mb_jtree_aba(&T, y, y + n, tau, ap, w);
                        y[j] = yj - h;
                        mb_jtree_aba(&T, y, y + n, tau, a, w);
                        y[j] = yj;
                        for (ptrdiff_t i = 0; i < n; i++) J[j * n + i] = (ap[i] - a[i]) / (2 * h);
                    }
                }
            }
            dt = cpu() - t0;
        } while (dt < budget);
        res[which] = 1e9 * dt / reps;
    }
    printf("%td %.1f %.1f %.1f %.1f %.1f\n", n, res[0], res[1], res[2], res[3], res[4]);
    return 0;
}
