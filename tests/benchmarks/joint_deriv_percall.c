/* Per-call CPU cost of one Jacobian of a fixed-base tree's forward dynamics on a chain
 * of n rods with alternating joint axes (y, x), at a fixed random state, three ways:
 *   0: mb_jtree_d_derivatives (joint_tree_deriv.c, O(n^2): what form_joint.c uses now),
 *   1: central differences of the ABA over (q, q') (4 n ABA calls, as fj_jac's fallback),
 *   2: mb_jtree_aba_derivatives (joint_tree.c: M^-1 by a dense Cholesky factor, O(n^3);
 *      what form_joint.c used up to 400 joints before).
 * The three are interleaved: ROUNDS rounds, each timing every variant for budget / ROUNDS
 * seconds; the median a round of each is printed (CLOCK_PROCESS_CPUTIME_ID, one core).
 * Usage: joint_deriv_percall n [seconds]; prints "n exact_ns fd_ns cholesky_ns err"
 * (err: max |exact - differences| / max |differences|, a sanity check).
 * Built and run by bench_joint_urdf_jac.py. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "joint_tree.h"
#include "joint_tree_deriv.h"

enum { ROUNDS = 5 };

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void central(const mb_jtree *T, ptrdiff_t n, const double *q, const double *qd,
                    const double *tau, double *y, double *ap, double *am, double *J, double *w)
{
    memcpy(y, q, n * sizeof(double));
    memcpy(y + n, qd, n * sizeof(double));
    for (ptrdiff_t j = 0; j < 2 * n; j++) {
        double h = 6e-6 * fmax(1.0, fabs(y[j])), yj = y[j];
        y[j] = yj + h;
        mb_jtree_aba(T, y, y + n, tau, ap, w);
        y[j] = yj - h;
        mb_jtree_aba(T, y, y + n, tau, am, w);
        y[j] = yj;
        for (ptrdiff_t i = 0; i < n; i++) J[j * n + i] = (ap[i] - am[i]) / (2 * h);
    }
}

int main(int argc, char **argv)
{
    ptrdiff_t n = argc > 1 ? atol(argv[1]) : 10;
    double budget = argc > 2 ? atof(argv[2]) : 0.5, L = 0.1, m = 0.1;
    ptrdiff_t nw = mb_jtree_d_work_size(n) > mb_jtree_deriv_work_size(n) ? mb_jtree_d_work_size(n)
                                                                          : mb_jtree_deriv_work_size(n);
    int *parent = malloc(n * sizeof(int)), *type = calloc(n, sizeof(int));
    double *frame = calloc(12 * n, sizeof(double)), *axis = calloc(3 * n, sizeof(double)),
           *inertia = calloc(10 * n, sizeof(double)), *w = malloc(nw * sizeof(double)),
           *v = malloc((7 * n + 4 * n * n) * sizeof(double));
    double *q = v, *qd = q + n, *tau = qd + n, *y = tau + n, *ap = y + 2 * n, *am = ap + n,
           *J = am + n, *J2 = J + 2 * n * n;
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
    mb_jtree T = {n, parent, type, frame, axis, inertia, NULL, NULL, {0, 0, -9.81}, 0};
    double res[3][ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int which = 0; which < 3; which++) {
            long reps = 0;
            double t0 = cpu(), dt;
            do {
                if (which == 0)
                    mb_jtree_d_derivatives(&T, 0.0, q, qd, tau, NULL, J, J + n * n, NULL, n, w);
                else if (which == 1)
                    central(&T, n, q, qd, tau, y, ap, am, J2, w);
                else
                    mb_jtree_aba_derivatives(&T, 0.0, q, qd, tau, NULL, J2, J2 + n * n, n, w);
                reps++;
                dt = cpu() - t0;
            } while (dt < budget / ROUNDS);
            res[which][r] = 1e9 * dt / reps;
        }
    mb_jtree_d_derivatives(&T, 0.0, q, qd, tau, NULL, J, J + n * n, NULL, n, w);
    central(&T, n, q, qd, tau, y, ap, am, J2, w);
    double err = 0, big = 0;
    for (ptrdiff_t k = 0; k < 2 * n * n; k++)
        err = fmax(err, fabs(J[k] - J2[k])), big = fmax(big, fabs(J2[k]));
    for (int which = 0; which < 3; which++) qsort(res[which], ROUNDS, sizeof(double), cmp);
    printf("%td %.1f %.1f %.1f %.2e\n", n, res[0][ROUNDS / 2], res[1][ROUNDS / 2],
           res[2][ROUNDS / 2], err / big);
    return 0;
}
