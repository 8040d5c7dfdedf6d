/* The anchor of the speed benchmarks (issue 13): a plain C program calling CVODE
 * directly (CV_BDF, Newton, dense linear solver, analytic Jacobian) on the RN
 * paper's stiff double pendulum, mbint.models.stiff_double_pendulum(), with a
 * hand-written right-hand side and Jacobian in mbint's index-1 coordinates:
 *     y = (q, q'),  q = (x1, y1, th1, x2, y2, th2)  (body CM positions [m], angles [rad]),
 *     [M Phi_q^T; Phi_q 0] [q''; lambda] = [Q; gamma],
 * solved plainly for this model: M = diag(m1, m1, J1, m2, m2, J2) is constant, so
 *     (Phi_q M^-1 Phi_q^T) lambda = Phi_q M^-1 Q - gamma,   q'' = M^-1 (Q - Phi_q^T lambda)
 * with a 4x4 Cholesky factorization.  The Jacobian differentiates the same system
 * (df/dy = [0 I; a_q a_q'], with S [a_x; lambda_x] = [Q_x - (Phi_q^T lambda)_x;
 * gamma_x - (Phi_q a)_x]), solved with the same Cholesky factors.
 *
 * Constraints: pin0 (ground origin, body 1 at s = (-L1, 0)) and pin1 (body 1 at
 * (L1, 0), body 2 at (-L2, 0)).  Forces: gravity along -y; RSDA1 ground-body 1,
 * T1 = k1 wrap(th1 + pi/2) + c1 th1'; RSDA2 body 1-body 2, T2 = k2 wrap(th2 - th1) +
 * c2 (th2' - th1'); Q_th1 = -T1 + T2, Q_th2 = -T2 (wrap to (-pi, pi]).
 *
 * Usage (all output on stdout, numbers in %.17g):
 *   anchor_cvode eval                read 12 numbers y, print f (12) then J (144, column-major)
 *   anchor_cvode evaltime K          mean seconds per f and per J over K evaluations at
 *                                    distinct states (J includes its saddle solve)
 *   anchor_cvode solve RTOL ATOL NOUT MODE H0 MAXORD ROUND_S
 *       integrate over [0, 2] s; print "time <mean s per run> reps <k>", the statistics
 *       "nsteps nfev njev nlu h0" (h0: the initial step CVODE took), then NOUT lines "t q1..q6" at t = 2 i / (NOUT - 1).
 *       MODE 0: CV_NORMAL at each output time; MODE 1: CV_ONE_STEP with a stop time
 *       at 2 s and the output points interpolated by CVodeGetDky (as mbint does).
 *       H0 > 0: initial step; MAXORD > 0: maximum order.  The run is repeated for
 *       about ROUND_S seconds (at least once) and the mean time per run is printed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#ifdef ANCHOR_FAST_OPS
/* Built with -DANCHOR_FAST_OPS and csrc/methods/sundials_nvec.c: the library's serial
 * vector operations and dense LU replaced by the same operations compiled at -O2 (the
 * Debian libsundials 6.4.1 this links is built without optimization; the results are
 * the same to the last bit, tests/c/test_sundials_nvec.c).  What the plain program costs
 * with an optimized SUNDIALS, as far as its hot operations go. */
void mb_sun_fast_ops(N_Vector v);
void mb_sun_fast_dense(SUNLinearSolver LS);
#endif

#define PI 3.14159265358979323846
static const double M1 = 3.0, M2 = 0.3, L1 = 1.0, L2 = 1.5, G = 9.81;
static const double K1 = 400.0, C1 = 15.0, K2 = 3e5, C2 = 5e4;
#define JJ1 (M1 * 4.0 * L1 * L1 / 12.0)
#define JJ2 (M2 * 4.0 * L2 * L2 / 12.0)

static double wrap_pi(double x) { return x - 2 * PI * ceil((x - PI) / (2 * PI)); }

/* everything one evaluation of f leaves for the Jacobian */
typedef struct {
    double c1, s1, c2, s2;
    double P[4][6];     /* Phi_q */
    double Minv[6];
    double Lc[4][4];    /* Cholesky factor of W = Phi_q M^-1 Phi_q^T */
    double a[6], lam[4];
} state;

static void chol4(double W[4][4], double L[4][4])
{
    for (int j = 0; j < 4; j++) {
        double d = W[j][j];
        for (int k = 0; k < j; k++) d -= L[j][k] * L[j][k];
        L[j][j] = sqrt(d);
        for (int i = j + 1; i < 4; i++) {
            double s = W[i][j];
            for (int k = 0; k < j; k++) s -= L[i][k] * L[j][k];
            L[i][j] = s / L[j][j];
        }
    }
}

static void chol4_solve(double L[4][4], double *x)
{
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < i; k++) x[i] -= L[i][k] * x[k];
        x[i] /= L[i][i];
    }
    for (int i = 3; i >= 0; i--) {
        for (int k = i + 1; k < 4; k++) x[i] -= L[k][i] * x[k];
        x[i] /= L[i][i];
    }
}

/* the saddle solve for one right-hand side (r1: 6, r2: 4) -> a (6), mu (4) */
static void saddle_solve(state *s, const double *r1, const double *r2, double *a, double *mu)
{
    for (int k = 0; k < 4; k++) {
        double v = -r2[k];
        for (int j = 0; j < 6; j++) v += s->P[k][j] * s->Minv[j] * r1[j];
        mu[k] = v;
    }
    chol4_solve(s->Lc, mu);
    for (int j = 0; j < 6; j++) {
        double v = r1[j];
        for (int k = 0; k < 4; k++) v -= s->P[k][j] * mu[k];
        a[j] = s->Minv[j] * v;
    }
}

static void eval_f(const double *y, double *ydot, state *s)
{
    const double *q = y, *v = y + 6;
    double c1 = cos(q[2]), s1 = sin(q[2]), c2 = cos(q[5]), s2 = sin(q[5]);
    double w1 = v[2], w2 = v[5];
    s->c1 = c1; s->s1 = s1; s->c2 = c2; s->s2 = s2;
    memset(s->P, 0, sizeof s->P);
    s->P[0][0] = 1; s->P[0][2] = L1 * s1;
    s->P[1][1] = 1; s->P[1][2] = -L1 * c1;
    s->P[2][0] = 1; s->P[2][2] = -L1 * s1; s->P[2][3] = -1; s->P[2][5] = -L2 * s2;
    s->P[3][1] = 1; s->P[3][2] = L1 * c1;  s->P[3][4] = -1; s->P[3][5] = L2 * c2;
    s->Minv[0] = s->Minv[1] = 1 / M1; s->Minv[2] = 1 / JJ1;
    s->Minv[3] = s->Minv[4] = 1 / M2; s->Minv[5] = 1 / JJ2;
    double T1 = K1 * wrap_pi(q[2] + PI / 2) + C1 * w1;
    double T2 = K2 * wrap_pi(q[5] - q[2]) + C2 * (w2 - w1);
    double Q[6] = {0, -M1 * G, -T1 + T2, 0, -M2 * G, -T2};
    double gam[4] = {-L1 * w1 * w1 * c1, -L1 * w1 * w1 * s1,
                     L1 * w1 * w1 * c1 + L2 * w2 * w2 * c2, L1 * w1 * w1 * s1 + L2 * w2 * w2 * s2};
    double W[4][4];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k <= i; k++) {
            double acc = 0;
            for (int j = 0; j < 6; j++) acc += s->P[i][j] * s->Minv[j] * s->P[k][j];
            W[i][k] = W[k][i] = acc;
        }
    chol4(W, s->Lc);
    saddle_solve(s, Q, gam, s->a, s->lam);
    memcpy(ydot, v, 6 * sizeof(double));
    memcpy(ydot + 6, s->a, 6 * sizeof(double));
}

/* J (12 x 12, column-major, leading dimension ld) at the point of the last eval_f */
static void eval_jac(const double *y, const state *s0, double *J, long ld)
{
    state s = *s0;
    const double *v = y + 6;
    double c1 = s.c1, s1 = s.s1, c2 = s.c2, s2 = s.s2, w1 = v[2], w2 = v[5];
    const double *a = s.a, *l = s.lam;
    for (int j = 0; j < 12; j++) memset(J + ld * j, 0, 12 * sizeof(double));
    for (int j = 0; j < 6; j++) J[j + ld * (6 + j)] = 1.0;
    for (int col = 0; col < 12; col++) {
        double r1[6] = {0}, r2[4] = {0}, ax[6], mu[4];
        int th = col == 2 ? 1 : col == 5 ? 2 : col == 8 ? 3 : col == 11 ? 4 : 0;
        if (th == 0) continue;  /* f does not depend on x, y, x', y' */
        if (th == 1) {          /* th1 */
            r1[2] = -K1 - K2 - (L1 * c1 * l[0] + L1 * s1 * l[1] - L1 * c1 * l[2] - L1 * s1 * l[3]);
            r1[5] = K2;
            r2[0] = L1 * w1 * w1 * s1 - L1 * c1 * a[2];
            r2[1] = -L1 * w1 * w1 * c1 - L1 * s1 * a[2];
            r2[2] = -L1 * w1 * w1 * s1 + L1 * c1 * a[2];
            r2[3] = L1 * w1 * w1 * c1 + L1 * s1 * a[2];
        } else if (th == 2) {   /* th2 */
            r1[2] = K2;
            r1[5] = -K2 - (-L2 * c2 * l[2] - L2 * s2 * l[3]);
            r2[2] = -L2 * w2 * w2 * s2 + L2 * c2 * a[5];
            r2[3] = L2 * w2 * w2 * c2 + L2 * s2 * a[5];
        } else if (th == 3) {   /* th1' */
            r1[2] = -C1 - C2;
            r1[5] = C2;
            r2[0] = -2 * L1 * w1 * c1;
            r2[1] = -2 * L1 * w1 * s1;
            r2[2] = 2 * L1 * w1 * c1;
            r2[3] = 2 * L1 * w1 * s1;
        } else {                /* th2' */
            r1[2] = C2;
            r1[5] = -C2;
            r2[2] = 2 * L2 * w2 * c2;
            r2[3] = 2 * L2 * w2 * s2;
        }
        saddle_solve(&s, r1, r2, ax, mu);
        for (int i = 0; i < 6; i++) J[6 + i + ld * col] = ax[i];
    }
}

/* ---- CVODE callbacks ---- */

static int cv_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud)
{
    (void)t;
    eval_f(N_VGetArrayPointer(y), N_VGetArrayPointer(ydot), ud);
    return 0;
}

static int cv_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix Jm, void *ud, N_Vector t1,
                  N_Vector t2, N_Vector t3)
{
    (void)t; (void)fy; (void)t1; (void)t2; (void)t3;
    state s;
    double ydot[12];
    (void)ud;
    eval_f(N_VGetArrayPointer(y), ydot, &s);  /* CVODE gives no cache: one f inside J */
    eval_jac(N_VGetArrayPointer(y), &s, SUNDenseMatrix_Data(Jm), SUNDenseMatrix_Rows(Jm));
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* the initial state of the model (rn.py) */
static void initial(double *y)
{
    double th2 = 23.0 * PI / 12.0, jx = 2 * L1, jy = 0.0;
    double r2x = jx + L2 * cos(th2), r2y = jy + L2 * sin(th2), w2 = 10.0;
    double init[12] = {L1, 0.0, 0.0, r2x, r2y, th2,
                       0.0, 0.0, 0.0, -w2 * (r2y - jy), w2 * (r2x - jx), w2};
    memcpy(y, init, sizeof init);
}

typedef struct { long nsteps, nfev, njev, nlu; double h0; } stats;

static int solve(double rtol, double atol, int nout, int mode, double h0, int maxord,
                 double *out, stats *st)
{
    SUNContext ctx;
    state s;
    if (SUNContext_Create(NULL, &ctx) != 0) return -1;
    N_Vector y = N_VNew_Serial(12, ctx), tmp = N_VNew_Serial(12, ctx);
    initial(N_VGetArrayPointer(y));
    void *mem = CVodeCreate(CV_BDF, ctx);
    SUNMatrix A = SUNDenseMatrix(12, 12, ctx);
    SUNLinearSolver LS = SUNLinSol_Dense(y, A, ctx);
#ifdef ANCHOR_FAST_OPS
    mb_sun_fast_ops(y);
    mb_sun_fast_ops(tmp);
    mb_sun_fast_dense(LS);
#endif
    int flag = CVodeInit(mem, cv_rhs, 0.0, y);
    flag |= CVodeSStolerances(mem, rtol, atol);
    flag |= CVodeSetUserData(mem, &s);
    flag |= CVodeSetLinearSolver(mem, LS, A);
    flag |= CVodeSetJacFn(mem, cv_jac);
    flag |= CVodeSetMaxNumSteps(mem, 1000000);
    if (h0 > 0) flag |= CVodeSetInitStep(mem, h0);
    if (maxord > 0) flag |= CVodeSetMaxOrd(mem, maxord);
    double tf = 2.0;
    memcpy(out, N_VGetArrayPointer(y), 6 * sizeof(double));
    int k = 1;
    if (mode == 0) {
        for (; k < nout && flag >= 0; k++) {
            double tout = tf * k / (nout - 1), tret;
            flag = CVode(mem, tout, y, &tret, CV_NORMAL);
            memcpy(out + 6 * k, N_VGetArrayPointer(y), 6 * sizeof(double));
        }
    } else {
        flag |= CVodeSetStopTime(mem, tf);
        double tret = 0.0;
        while (flag >= 0 && k < nout) {
            flag = CVode(mem, tf, y, &tret, CV_ONE_STEP);
            for (; flag >= 0 && k < nout && tf * k / (nout - 1) <= tret; k++) {
                double te = tf * k / (nout - 1);
                if (te == tret)
                    memcpy(out + 6 * k, N_VGetArrayPointer(y), 6 * sizeof(double));
                else {
                    if (CVodeGetDky(mem, te, 0, tmp) < 0) flag = -99;
                    memcpy(out + 6 * k, N_VGetArrayPointer(tmp), 6 * sizeof(double));
                }
            }
            if (tret >= tf) break;
        }
    }
    CVodeGetNumSteps(mem, &st->nsteps);
    CVodeGetActualInitStep(mem, &st->h0);
    CVodeGetNumRhsEvals(mem, &st->nfev);
    CVodeGetNumJacEvals(mem, &st->njev);
    CVodeGetNumLinSolvSetups(mem, &st->nlu);
    long nfels = 0;
    CVodeGetNumLinRhsEvals(mem, &nfels);
    st->nfev += nfels;
    CVodeFree(&mem);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(y);
    N_VDestroy(tmp);
    SUNContext_Free(&ctx);
    return flag < 0 ? flag : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "eval") == 0) {
        double y[12], f[12], J[144];
        state s;
        for (int i = 0; i < 12; i++)
            if (scanf("%lf", &y[i]) != 1) return 2;
        eval_f(y, f, &s);
        eval_jac(y, &s, J, 12);
        for (int i = 0; i < 12; i++) printf("%.17g\n", f[i]);
        for (int i = 0; i < 144; i++) printf("%.17g\n", J[i]);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "evaltime") == 0) {
        long K = atol(argv[2]);
        double y[12], f[12], J[144], sink = 0;
        state s;
        initial(y);
        double t0 = now();
        for (long k = 0; k < K; k++) {
            y[2] += 1e-12;  /* defeat hoisting */
            eval_f(y, f, &s);
            sink += f[8];
        }
        double tf = now() - t0;
        eval_f(y, f, &s);
        t0 = now();
        for (long k = 0; k < K; k++) {  /* J with its own saddle solve, as in cv_jac */
            y[5] += 1e-12;
            eval_f(y, f, &s);
            eval_jac(y, &s, J, 12);
            sink += J[8 + 12 * 2];
        }
        double tj = now() - t0;
        printf("f %.6g jac %.6g sink %g\n", tf / K, tj / K, sink);
        return 0;
    }
    if (argc >= 9 && strcmp(argv[1], "solve") == 0) {
        double rtol = atof(argv[2]), atol_ = atof(argv[3]), h0 = atof(argv[6]);
        int nout = atoi(argv[4]), mode = atoi(argv[5]), maxord = atoi(argv[7]);
        double round_s = atof(argv[8]);
        double *out = calloc((size_t)nout * 6, sizeof(double));
        stats st;
        int reps = 0, rc = 0;
        double t0 = now();
        do {
            rc = solve(rtol, atol_, nout, mode, h0, maxord, out, &st);
            reps++;
        } while (rc == 0 && now() - t0 < round_s);
        double el = (now() - t0) / reps;
        if (rc != 0) {
            fprintf(stderr, "CVODE failed (%d)\n", rc);
            return 1;
        }
        printf("time %.9g reps %d\n", el, reps);
        printf("%ld %ld %ld %ld %.17g\n", st.nsteps, st.nfev, st.njev, st.nlu, st.h0);
        for (int k = 0; k < nout; k++) {
            printf("%.17g", 2.0 * k / (nout - 1));
            for (int i = 0; i < 6; i++) printf(" %.17g", out[6 * k + i]);
            printf("\n");
        }
        free(out);
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top of anchor_cvode.c\n");
    return 2;
}
