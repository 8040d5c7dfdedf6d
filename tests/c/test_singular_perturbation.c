/* C tests of the singular-perturbation scheme (csrc/methods/singular_perturbation.c)
 * and of its linear algebra (csrc/linalg/phi.c, spectral.c), without Python:
 *   - phi-function columns of one block exponential against the scalar closed forms
 *     and against V phi(D) V^-1 for a diagonalizable matrix;
 *   - the diagonal of the spectral projector against V_f W_f for J = V D V^-1;
 *   - the proposal of the fast variables (a two-scale system, none without a gap);
 *   - runs of the driver at n = 40 with a real split (given and proposed), events and
 *     dense output under ASan: accuracy against the exact solution exp(hA) y0, the
 *     dense record reproducing y_new at theta = 1;
 *   - bad splits refused in init; a singular g_z ends a fixed-step run with a message.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dense.h"
#include "driver.h"
#include "expm.h"
#include "phi.h"
#include "singular_perturbation.h"
#include "spectral.h"
#include "status.h"

static const mb_method *const SP = &mb_method_singular_perturbation;

/* phi_k(z) for scalar z by the series (|z| small) or the closed forms */
static double phik(int k, double z)
{
    if (fabs(z) < 0.5) {
        double s = 0.0, term = 1.0;
        for (int j = 1; j <= k; j++)
            term /= j;                       /* 1/k! */
        for (int j = 0; j < 40; j++) {
            s += term;
            term *= z / (double)(j + k + 1);
        }
        return s;
    }
    double e = exp(z);
    if (k == 1) return (e - 1.0) / z;
    if (k == 2) return (e - 1.0 - z) / (z * z);
    return (e - 1.0 - z - z * z / 2.0) / (z * z * z);
}

static void test_phi_scalar(void)
{
    double work[512], W[3];
    double worst = 0.0;
    const double as[] = {-300.0, -3.0, -0.01, 0.0, 2.0};
    for (size_t k = 0; k < sizeof as / sizeof as[0]; k++) {
        double a = as[k], h = 0.7, V[3] = {1.5, -2.0, 0.25};
        int rc = mb_phi_columns(1, &a, 1, h, 3, V, 1, W, 1, work);
        CHECK(rc == MB_OK, "phi columns, a = %g", a);
        double z = h * a;
        double ref[3] = {phik(1, z) * V[0], phik(2, z) * V[0] + phik(1, z) * V[1],
                         phik(3, z) * V[0] + phik(2, z) * V[1] + phik(1, z) * V[2]};
        for (int j = 0; j < 3; j++)
            worst = fmax(worst, fabs(W[j] - ref[j]) / fmax(1e-300, fabs(ref[j])));
    }
    CHECK(worst < 1e-12, "W[:, j] = sum_i phi_{j-i+1}(hA) v_i for scalars: rel. error %.2e",
          worst);
}

/* A = V diag(d) V^-1 (3 x 3): W of phi.h against V phi(h d) V^-1 v */
static void test_phi_matrix(void)
{
    const double Vm[9] = {1.0, 0.2, -0.3, 0.5, 1.0, 0.1, -0.4, 0.3, 1.0};  /* columns */
    const double d[3] = {-50.0, -1.0, 0.5};
    double Vinv[9], A[9], tmp[9];
    int ipiv[3];
    /* Vinv = V^-1 by solving V X = I */
    memcpy(tmp, Vm, sizeof tmp);
    memset(Vinv, 0, sizeof Vinv);
    Vinv[0] = Vinv[4] = Vinv[8] = 1.0;
    mb_lu_factor(3, tmp, 3, ipiv);
    mb_lu_solve(3, tmp, 3, ipiv, Vinv, 3);
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            double s = 0.0;
            for (int k = 0; k < 3; k++)
                s += Vm[k * 3 + i] * d[k] * Vinv[j * 3 + k];
            A[j * 3 + i] = s;
        }
    double h = 0.3, V[6] = {1.0, 2.0, -1.0, 0.5, 0.0, 3.0}, W[6], work[1024];
    CHECK(mb_phi_columns(3, A, 3, h, 2, V, 3, W, 3, work) == MB_OK, "phi columns 3 x 3");
    double worst = 0.0;
    for (int col = 0; col < 2; col++) {
        double ref[3] = {0, 0, 0};
        for (int i = 0; i < 2 && i <= col; i++) {
            int kphi = col - i + 1;
            double c[3];
            for (int k = 0; k < 3; k++) {  /* c = Vinv v_i */
                c[k] = 0.0;
                for (int l = 0; l < 3; l++)
                    c[k] += Vinv[l * 3 + k] * V[i * 3 + l];
            }
            for (int r = 0; r < 3; r++)
                for (int k = 0; k < 3; k++)
                    ref[r] += Vm[k * 3 + r] * phik(kphi, h * d[k]) * c[k];
        }
        for (int r = 0; r < 3; r++)
            worst = fmax(worst, fabs(W[col * 3 + r] - ref[r]) / (1.0 + fabs(ref[r])));
    }
    CHECK(worst < 1e-12, "phi columns of V D V^-1 against V phi(hD) V^-1: %.2e", worst);
    double Z[6] = {0}, WZ[6] = {1, 1, 1, 1, 1, 1};
    CHECK(mb_phi_columns(3, A, 3, h, 2, Z, 3, WZ, 3, work) == MB_OK && WZ[0] == 0.0 &&
          WZ[5] == 0.0, "V = 0 gives W = 0");
}

/* J = V D V^-1 with eigenvalues -1000 +- 300 i, -2000 (fast) and -1, -0.5 +- 0.2 i
 * (slow): P_ii = sum over fast modes of V_ij (V^-1)_ji */
static void test_projector(void)
{
    enum { N = 6 };
    double complex lam[N] = {-1000.0 + 300.0 * I, -1000.0 - 300.0 * I, -2000.0, -1.0,
                             -0.5 + 0.2 * I, -0.5 - 0.2 * I};
    /* complex eigenvectors in conjugate pairs so that J is real */
    double complex V[N * N];
    srand(7);
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            V[j * N + i] = (i == j ? 2.0 : 0.0) + (double)rand() / RAND_MAX - 0.5 +
                           ((j == 0 || j == 4) ? ((double)rand() / RAND_MAX - 0.5) * I : 0.0);
    for (int i = 0; i < N; i++) {
        V[1 * N + i] = conj(V[0 * N + i]);
        V[5 * N + i] = conj(V[4 * N + i]);
    }
    double complex LU[N * N], Vi[N * N];
    int ipiv[N];
    memcpy(LU, V, sizeof LU);
    memset(Vi, 0, sizeof Vi);
    for (int i = 0; i < N; i++)
        Vi[i * N + i] = 1.0;
    mb_zlu_factor(N, LU, N, ipiv);
    mb_zlu_solve(N, LU, N, ipiv, Vi, N);
    double J[N * N];
    for (int c = 0; c < N; c++)
        for (int r = 0; r < N; r++) {
            double complex s = 0.0;
            for (int k = 0; k < N; k++)
                s += V[k * N + r] * lam[k] * Vi[c * N + k];
            J[c * N + r] = creal(s);
        }
    double T[N * N], Q[N * N], wr[N], wi[N], pd[N];
    double *work = malloc(mb_spectral_work_size(N) * sizeof(double));
    memcpy(T, J, sizeof T);
    CHECK(mb_schur(N, T, N, Q, N, wr, wi, work) == MB_OK, "real Schur form");
    int sel[N];
    for (int k = 0; k < N; k++)
        sel[k] = hypot(wr[k], wi[k]) > 100.0;
    ptrdiff_t kk = 0;
    CHECK(mb_projector_diag(N, T, N, Q, N, sel, wr, wi, pd, &kk, work) == MB_OK && kk == 3,
          "projector onto the 3 fast modes (k = %td)", kk);
    double worst = 0.0, tr = 0.0;
    for (int i = 0; i < N; i++) {
        double complex s = 0.0;
        for (int k = 0; k < 3; k++)
            s += V[k * N + i] * Vi[i * N + k];
        worst = fmax(worst, fabs(pd[i] - creal(s)));
        tr += pd[i];
    }
    CHECK(worst < 1e-9, "P_ii against sum_fast V_ij (V^-1)_ji: %.2e", worst);
    CHECK(fabs(tr - 3.0) < 1e-9, "trace P = 3 (%.15g)", tr);
    free(work);
}

/* ---- a two-scale linear system: nq slow and nq fast oscillators, weakly coupled ---- */
typedef struct { ptrdiff_t n; double *A; } lin_ctx;

static int rhs_lin(double t, const double *y, double *f, void *ctx)
{
    (void)t;
    const lin_ctx *c = ctx;
    mb_gemv(c->n, c->n, 1.0, c->A, c->n, y, 0.0, f);
    return 0;
}

static int jac_lin(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)y;
    const lin_ctx *c = ctx;
    for (ptrdiff_t j = 0; j < c->n; j++)
        memcpy(J + j * ld, c->A + j * c->n, (size_t)c->n * sizeof(double));
    return 0;
}

static int ev_lin(double t, const double *y, double *g, void *ctx)
{
    (void)t; (void)ctx;
    g[0] = y[0];  /* a slow coordinate crossing zero */
    return 0;
}

/* y = (x slow: positions/velocities of 10 oscillators w = 1..2; z fast: 10 with
 * w = 300..400, damped 1 %), coupled by springs of 1e-2 */
static void build(ptrdiff_t n, double *A)
{
    ptrdiff_t k = n / 4;  /* oscillators per group */
    memset(A, 0, (size_t)(n * n) * sizeof(double));
    for (ptrdiff_t g = 0; g < 2; g++)
        for (ptrdiff_t i = 0; i < k; i++) {
            ptrdiff_t q = g * 2 * k + i, v = q + k;
            double w = g == 0 ? 1.0 + (double)i / (double)k : 300.0 + 100.0 * (double)i / (double)k;
            A[v * n + q] = 1.0;
            A[q * n + v] = -w * w;
            A[v * n + v] = -0.02 * w;
            /* coupling: the slow velocity feels the fast position and back */
            ptrdiff_t qo = (1 - g) * 2 * k + i;
            A[qo * n + v] += 1e-2 * (g == 0 ? 300.0 : 1.0);
        }
}

static void test_runs(void)
{
    enum { NN = 40 };
    double A[NN * NN], atol[NN], y0[NN], Ah[NN * NN], E[NN * NN], yex[NN];
    build(NN, A);
    for (int i = 0; i < NN; i++) {
        atol[i] = 1e-10;
        y0[i] = (i % 10 < 5) ? 1.0 - 0.05 * i / 10.0 : 0.0;
    }
    lin_ctx c = {NN, A};
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = NN;
    p.rhs = rhs_lin;
    p.jac = jac_lin;
    p.ctx = &c;
    double tf = 3.0;  /* x_0 = cos t + sin t (about) crosses zero at 3 pi / 4 */
    double *ew = malloc(mb_expm_work_size(NN) * sizeof(double));
    int ipiv[NN];
    for (int i = 0; i < NN * NN; i++)
        Ah[i] = tf * A[i];
    mb_expm(NN, Ah, NN, E, NN, ew, ipiv, NULL);
    mb_gemv(NN, NN, 1.0, E, NN, y0, 0.0, yex);
    free(ew);

    mb_sp_options *o = malloc(sizeof *o + 20 * sizeof(ptrdiff_t));
    mb_sp_options propose = {MB_SP_PROPOSE};
    o->n_fast = 20;
    for (int i = 0; i < 20; i++)
        o->fast[i] = 20 + i;
    int terminal[1] = {0}, direction[1] = {0};
    for (int variant = 0; variant < 3; variant++) {
        mb_options op;
        memset(&op, 0, sizeof op);
        op.atol = atol;
        op.rtol = 1e-6;
        op.dense_output = 1;
        op.events = ev_lin;
        op.n_events = 1;
        op.terminal = terminal;
        op.direction = direction;
        op.method_options = variant == 1 ? &propose : o;
        if (variant == 2)
            op.h = 0.01;
        mb_result r;
        int rc = mb_driver_run(SP, &p, 0.0, tf, y0, &op, &r);
        double err = 0.0, scale = 0.0;
        ptrdiff_t m = r.nt - 1;
        for (int i = 0; i < 20; i++) {  /* the slow components */
            err = fmax(err, fabs(r.y[m * NN + i] - yex[i]));
            scale = fmax(scale, fabs(yex[i]));
        }
        const char *what[] = {"fast given", "fast proposed", "fixed h = 0.01"};
        CHECK(rc == MB_OK && r.t[m] == tf, "n = 40, %s: status %d (%s), %td steps", what[variant],
              rc, r.message, r.stats.nsteps);
        CHECK(err < (variant == 2 ? 1e-3 : 1e-4) * scale, "n = 40, %s: slow error %.2e",
              what[variant], err);
        CHECK(r.ev_count[0] == 1 && fabs(r.ev_t[0][0] - 2.36) < 0.05,
              "n = 40, %s: %td zero crossing of x_0", what[variant],
              r.ev_count[0]);
        mb_result_free(&r);
    }
    free(o);
}

static int rhs_sing(double t, const double *y, double *f, void *ctx)
{
    (void)ctx;
    f[0] = -y[0] + y[1];
    f[1] = -100.0 * (1.0 - t) * y[1] + y[0];  /* g_z = -100 (1 - t): singular at t = 1 */
    return 0;
}

static void test_bad(void)
{
    double atol[2] = {1e-8, 1e-8}, y0[2] = {1.0, 0.5};
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 2;
    p.rhs = rhs_sing;
    mb_sp_options *o = malloc(sizeof *o + 2 * sizeof(ptrdiff_t));
    const ptrdiff_t bad[][3] = {{0, 0, 0}, {2, 0, 1}, {1, 2, 0}, {2, 1, 1}};
    const char *why[] = {"empty", "every variable", "out of range", "repeated"};
    for (int k = 0; k < 4; k++) {
        o->n_fast = bad[k][0];
        o->fast[0] = bad[k][1];
        o->fast[1] = bad[k][2];
        mb_options op;
        memset(&op, 0, sizeof op);
        op.atol = atol;
        op.rtol = 1e-6;
        op.method_options = o;
        mb_result r;
        int rc = mb_driver_run(SP, &p, 0.0, 1.0, y0, &op, &r);
        CHECK(rc == MB_ERR_ILL_INPUT && strstr(r.message, "fast:"), "split %s refused: %s",
              why[k], r.message);
        mb_result_free(&r);
    }
    o->n_fast = 1;
    o->fast[0] = 1;
    mb_options op;
    memset(&op, 0, sizeof op);
    op.atol = atol;
    op.rtol = 1e-6;
    op.method_options = o;
    op.h = 0.125;
    mb_result r;
    int rc = mb_driver_run(SP, &p, 0.0, 2.0, y0, &op, &r);
    CHECK(rc < 0 && r.t[r.nt - 1] == 1.0 && strstr(r.message, "singular at t = 1"),
          "fixed step: singular g_z at t = 1 stops the run there (%s)", r.message);
    mb_result_free(&r);
    free(o);
}

int main(void)
{
    test_phi_scalar();
    test_phi_matrix();
    test_projector();
    test_runs();
    test_bad();
    return check_summary();
}
