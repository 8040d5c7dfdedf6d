/* The cost of mbint's SUNDIALS adapter itself (csrc/methods/sundials_*.c), without
 * Python and without the model's kernels: the anchor's hand-written f and J of the RN
 * stiff double pendulum (anchor_cvode.c, included here) run
 *   (A) by the anchor's own CVODE loop in CV_ONE_STEP mode with a stop time at 2 s and
 *       the 201 output points interpolated by CVodeGetDky (anchor_cvode solve, mode 1);
 *   (B) by mb_sundials_run("cvode_bdf") with the same tolerances and t_eval (201 points),
 *       the callbacks wrapping the same eval_f / eval_jac (J with its own f, as the
 *       anchor's cv_jac).
 * Both take the same steps (checked: nsteps, nfev, njev, nlu printed side by side).
 *
 * Usage: adapter_overhead A|B REPS TOL     REPS runs of (A) or (B) alone (for
 *                                          valgrind --tool=callgrind)
 *        adapter_overhead ROUND_S TOL...   for each tolerance one line
 *   "tol nsteps_A nfev_A njev_A nlu_A nsteps_B nfev_B njev_B nlu_B tA tB maxdiff"
 * with tA, tB the mean seconds per run over about ROUND_S each (interleaved in rounds
 * of ~ROUND_S / 5; the minimum round mean is printed) and maxdiff the largest
 * difference between the two outputs.  Built and run by bench_adapter.py. */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime under -std=c11 */
#define main anchor_main
#include "anchor_cvode.c"
#undef main

#include "driver.h"
#include "result.h"
#include "sundials.h"

static int ao_rhs(double t, const double *y, double *ydot, void *ctx)
{
    (void)t;
    eval_f(y, ydot, ctx);
    return 0;
}

static int ao_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)ctx;
    state s;
    double ydot[12];
    eval_f(y, ydot, &s);
    eval_jac(y, &s, J, (long)ld);
    return 0;
}

#define NOUT 201

static int run_mbint(double tol, double *out, stats *st)
{
    static double t_eval[NOUT];
    double atol[12], y0[12];
    state s;
    for (int k = 0; k < NOUT; k++)
        t_eval[k] = 2.0 * k / (NOUT - 1);
    for (int i = 0; i < 12; i++)
        atol[i] = tol;
    initial(y0);
    mb_options o;
    memset(&o, 0, sizeof o);
    o.rtol = tol;
    o.atol = atol;
    o.t_eval = t_eval;
    o.n_eval = NOUT;
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 12;
    p.rhs = ao_rhs;
    p.jac = ao_jac;
    p.ctx = &s;
    mb_result res;
    int rc = mb_sundials_run("cvode_bdf", &p, 0.0, 2.0, y0, &o, &res);
    for (ptrdiff_t k = 0; k < res.nt && k < NOUT; k++)
        memcpy(out + 6 * k, res.y + 12 * k, 6 * sizeof(double));
    st->nsteps = res.stats.nsteps;
    st->nfev = res.stats.nfev;
    st->njev = res.stats.njev;
    st->nlu = res.stats.nlu;
    mb_result_free(&res);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 4 && (strcmp(argv[1], "A") == 0 || strcmp(argv[1], "B") == 0)) {
        /* one run of (A) or (B), for an instruction count (valgrind --tool=callgrind) */
        static double out[6 * NOUT];
        stats st;
        int rc = argv[1][0] == 'A' ? solve(atof(argv[3]), atof(argv[3]), NOUT, 1, 0.0, 0, out, &st)
                                   : run_mbint(atof(argv[3]), out, &st);
        for (int k = 1; k < atoi(argv[2]); k++)
            rc |= argv[1][0] == 'A' ? solve(atof(argv[3]), atof(argv[3]), NOUT, 1, 0.0, 0, out, &st)
                                    : run_mbint(atof(argv[3]), out, &st);
        printf("%ld steps\n", st.nsteps);
        return rc != 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s ROUND_S TOL... | %s A|B REPS TOL\n", argv[0], argv[0]);
        return 2;
    }
    double round_s = atof(argv[1]);
    static double outA[6 * NOUT], outB[6 * NOUT];
    for (int a = 2; a < argc; a++) {
        double tol = atof(argv[a]);
        stats sa, sb;
        if (solve(tol, tol, NOUT, 1, 0.0, 0, outA, &sa) != 0 || run_mbint(tol, outB, &sb) != 0) {
            fprintf(stderr, "run failed at tol %g\n", tol);
            return 1;
        }
        double diff = 0.0;
        for (int k = 0; k < 6 * NOUT; k++)
            diff = fmax(diff, fabs(outA[k] - outB[k]));
        double best[2] = {INFINITY, INFINITY};
        for (int r = 0; r < 5; r++) {
            for (int w = 0; w < 2; w++) {
                double t0 = now(), t;
                long k = 0;
                do {
                    if (w == 0)
                        solve(tol, tol, NOUT, 1, 0.0, 0, outA, &sa);
                    else
                        run_mbint(tol, outB, &sb);
                    k++;
                } while ((t = now() - t0) < round_s / 5);
                if (t / k < best[w])
                    best[w] = t / k;
            }
        }
        printf("%.3e %ld %ld %ld %ld %ld %ld %ld %ld %.6e %.6e %.3e\n", tol, sa.nsteps, sa.nfev,
               sa.njev, sa.nlu, sb.nsteps, sb.nfev, sb.njev, sb.nlu, best[0], best[1], diff);
    }
    return 0;
}
