/* mbint's index-1 f and df/dy of the RN stiff double pendulum called in C, as the
 * integrators call them (mb_problem rhs, jac; no Python, no batch copies), timed the
 * way anchor_cvode.c times its hand-written kernels: K calls at distinct states (a
 * coordinate moved by 1e-12 each call, so the saddle-point cache never hits; the
 * Jacobian includes its own saddle solve).  Built by bench_anchor.py against the C
 * kernels.
 *
 *   index1_evaltime K     prints "f <s per call> jac <s per call> sink <checksum>
 *                         qpg <s per call> lin <s per call>"
 *
 * qpg and lin are the model's fused kernels alone (mech.h: Q, Phi_q, gamma; the
 * Jacobian's right-hand sides), called as f and df/dy call them: f - qpg is the
 * saddle-point solve's share of f, jac - lin - f that of df/dy (its own solve of 2 nq
 * right-hand sides, and the copy into J).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "assemble.h"
#include "index1.h"
#include "planar_fixture.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long K = argc > 1 ? atol(argv[1]) : 200000;
    tmodel T;
    build_rn(&T, 400, 15, 3e5, 5e4);
    mb_mech me;
    mb_planar_mech(&T.m, &me);
    mb_index1 f;
    if (mb_index1_init(&f, &me, 0, 0) != 0) {
        fprintf(stderr, "mb_index1_init failed: %s\n", f.msg);
        return 1;
    }
    if (!f.schur || !f.use_qpg || !f.use_lin) {  /* what the kernels' timing assumes */
        fprintf(stderr, "not the Schur path with fused kernels (schur %d qpg %d lin %d)\n",
                f.schur, f.use_qpg, f.use_lin);
        return 1;
    }
    mb_problem p;
    mb_index1_problem(&f, &p);
    double y[12], yd[12], J[144], sink = 0;
    rn_state(y, y + 6);
    int rc = 0;
    double t0 = now();
    for (long k = 0; k < K; k++) {
        y[2] += 1e-12;
        rc |= p.rhs(0.0, y, yd, p.ctx);
        sink += yd[8];
    }
    double tf = now() - t0;
    t0 = now();
    for (long k = 0; k < K; k++) {
        y[5] += 1e-12;
        rc |= p.jac(0.0, y, J, 12, p.ctx);
        sink += J[8 + 12 * 2];
    }
    double tj = now() - t0;
    /* the kernels alone, with the index-1 code's own buffers (a and lambda of the last
     * point: any values serve for timing) */
    ptrdiff_t N = f.nq + f.nc;
    t0 = now();
    for (long k = 0; k < K; k++) {
        y[2] += 1e-12;
        rc |= me.fused_qpg(0.0, y, y + 6, f.sol, f.Pq, f.nc, f.sol + 6, f.kwork, me.ctx);
        sink += f.sol[2];
    }
    double tq = now() - t0;
    t0 = now();
    for (long k = 0; k < K; k++) {
        y[5] += 1e-12;
        rc |= me.fused_lin(0.0, y, y + 6, yd + 6, yd, f.R, f.R + N * 6, N, f.kwork, me.ctx);
        sink += f.R[8 + N * 2];
    }
    double tl = now() - t0;
    mb_index1_free(&f);
    if (rc) {
        fprintf(stderr, "rhs/jac failed (status %d)\n", rc);
        return 1;
    }
    printf("f %.6g jac %.6g sink %g qpg %.6g lin %.6g\n", tf / (double)K, tj / (double)K, sink,
           tq / (double)K, tl / (double)K);
    return 0;
}
