/* mb_expm against exponentials known in closed form: diagonal, diagonalizable with
 * known eigenvectors, Jordan blocks, nilpotent, rotation generators, large non-normal
 * and large symmetric matrices; exp(A) exp(-A) = I; the number of squarings against
 * log2 ||A||; corner cases (n = 0, 1, A = 0, non-finite input, overflow, huge
 * entries, E == A, leading dimensions > n). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "expm.h"  /* linalg/expm.h */
#include "status.h"

static const double U53 = 1.1102230246251565e-16;  /* 2^-53 */

/* mb_expm_ex with a workspace of exactly mb_expm_work_size(n) doubles (ASan sees any
 * overrun) */
static int expm(ptrdiff_t n, const double *A, ptrdiff_t lda, double *E, ptrdiff_t lde,
                mb_expm_stats *st)
{
    size_t lw = mb_expm_work_size(n);
    double *work = malloc((lw ? lw : 1) * sizeof *work);
    int *ipiv = malloc((size_t)(n > 0 ? n : 1) * sizeof *ipiv);
    int status = mb_expm_ex(n, A, lda, E, lde, work, ipiv, st);
    free(work);
    free(ipiv);
    return status;
}

static double *mat(ptrdiff_t n)
{
    return calloc((size_t)(n * n > 0 ? n * n : 1), sizeof(double));
}

/* C = A B (column-major, ld n) */
static void matmul(ptrdiff_t n, const double *A, const double *B, double *C)
{
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++) {
            double s = 0.0;
            for (ptrdiff_t k = 0; k < n; k++)
                s += A[k * n + i] * B[j * n + k];
            C[j * n + i] = s;
        }
}

static double norm1(ptrdiff_t n, const double *A)
{
    double m = 0.0;
    for (ptrdiff_t j = 0; j < n; j++) {
        double s = 0.0;
        for (ptrdiff_t i = 0; i < n; i++)
            s += fabs(A[j * n + i]);
        m = fmax(m, s);
    }
    return m;
}

/* ||E - R||_1 / ||R||_1 */
static double relerr(ptrdiff_t n, const double *E, const double *R)
{
    double *D = mat(n);
    for (ptrdiff_t k = 0; k < n * n; k++)
        D[k] = E[k] - R[k];
    double e = norm1(n, D) / norm1(n, R);
    free(D);
    return e;
}

static double urand(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (double)((*state >> 8) & 0xffffff) / 16777216.0;
}

static int products_for(int m)
{
    return m == 3 ? 2 : m == 5 ? 3 : m == 7 ? 4 : m == 9 ? 5 : 6;
}

static void test_corner_cases(void)
{
    mb_expm_stats st;
    double E1 = 7.0, a1 = -0.75;
    CHECK(expm(0, NULL, 0, NULL, 0, &st) == MB_OK && st.s == 0, "n = 0: MB_OK");
    CHECK(expm(1, &a1, 1, &E1, 1, &st) == MB_OK && fabs(E1 - exp(-0.75)) <= 2 * U53 * E1 &&
              st.s == 0,
          "n = 1: exp(-0.75) = %.17g", E1);
    double big = 800.0;
    E1 = 7.0;
    CHECK(expm(1, &big, 1, &E1, 1, &st) == MB_ERR_LINALG && E1 == 7.0,
          "n = 1: exp(800) overflows -> MB_ERR_LINALG, E unchanged");
    CHECK(mb_expm_work_size(0) == 0 && mb_expm_work_size(3) >= 6 * 9,
          "work size: 0 for n = 0, %zu for n = 3", mb_expm_work_size(3));
    double Ab[4] = {1, 0, 0, 1}, Eb[4];
    CHECK(expm(2, Ab, 1, Eb, 2, &st) == MB_ERR_ILL_INPUT, "lda < n -> MB_ERR_ILL_INPUT");

    ptrdiff_t n = 5;
    double *Z = mat(n), *E = mat(n);
    CHECK(expm(n, Z, n, E, n, &st) == MB_OK && st.s == 0, "A = 0: MB_OK, s = 0");
    int ident = 1;
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++)
            ident &= E[j * n + i] == (i == j ? 1.0 : 0.0);
    CHECK(ident, "A = 0: exp(A) = I exactly");

    double bad[3] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; k++) {
        for (ptrdiff_t i = 0; i < n * n; i++) {
            Z[i] = 0.1 * (double)i;
            E[i] = 7.0;
        }
        Z[2 * n + 3] = bad[k];
        int st_code = expm(n, Z, n, E, n, &st), untouched = 1;
        for (ptrdiff_t i = 0; i < n * n; i++)
            untouched &= E[i] == 7.0;
        CHECK(st_code == MB_ERR_LINALG && untouched,
              "non-finite entry %g -> MB_ERR_LINALG, E unchanged", bad[k]);
    }

    /* overflow of exp(A): diag(800, 0, ...) */
    for (ptrdiff_t i = 0; i < n * n; i++) {
        Z[i] = 0.0;
        E[i] = 7.0;
    }
    Z[0] = 800.0;
    int code = expm(n, Z, n, E, n, &st), untouched = 1;
    for (ptrdiff_t i = 0; i < n * n; i++)
        untouched &= E[i] == 7.0;
    CHECK(code == MB_ERR_LINALG && untouched,
          "exp(diag(800, 0, ..)) overflows -> MB_ERR_LINALG, E unchanged");
    free(Z);
    free(E);
}

static void test_diagonal(void)
{
    const double d[] = {-30.0, -3.0, -0.5, 0.0, 1e-3, 0.1, 2.0, 5.0, 20.0};
    ptrdiff_t n = 9;
    double *A = mat(n), *E = mat(n), *R = mat(n);
    for (ptrdiff_t i = 0; i < n; i++) {
        A[i * n + i] = d[i];
        R[i * n + i] = exp(d[i]);
    }
    mb_expm_stats st;
    int code = expm(n, A, n, E, n, &st);
    double worst = 0.0, off = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(E[i * n + i] - R[i * n + i]) / R[i * n + i]);
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++)
            if (i != j)
                off = fmax(off, fabs(E[j * n + i]));
    CHECK(code == MB_OK && off == 0.0, "diagonal: off-diagonal stays exactly 0");
    /* entrywise: r(2^-s d)^(2^s) loses about s + 1 bits for |d| >> 1 */
    CHECK(worst < 1e-13, "diagonal: worst entrywise relative error %.2e (m = %d, s = %d)",
          worst, st.m, st.s);
    free(A);
    free(E);
    free(R);
}

/* A = Vm diag(lam) Vm^-1 with an integer unit upper triangular Vm and its exact
 * inverse, so A is exact in binary and exp(A) = Vm diag(e^lam) Vm^-1 */
static void test_diagonalizable(void)
{
    ptrdiff_t n = 4;
    const double Vm[16] = {1, 0, 0, 0, 2, 1, 0, 0, 0, 3, 1, 0, 1, 0, -1, 1};
    double Vi[16];
    /* Vi = Vm^-1 by back substitution (exact: integers) */
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = n - 1; i >= 0; i--) {
            double s = i == j ? 1.0 : 0.0;
            for (ptrdiff_t k = i + 1; k < n; k++)
                s -= Vm[k * n + i] * Vi[j * n + k];
            Vi[j * n + i] = s;
        }
    const double sets[3][4] = {{-1.0, 0.5, 2.0, -4.0}, {0.01, -0.02, 0.03, 0.0},
                               {-20.0, -10.0, 1.0, 3.0}};
    for (int c = 0; c < 3; c++) {
        double D[16] = {0}, T[16], A[16], Ed[16] = {0}, R[16], E[16];
        for (ptrdiff_t i = 0; i < n; i++) {
            D[i * n + i] = sets[c][i];
            Ed[i * n + i] = exp(sets[c][i]);
        }
        matmul(n, Vm, D, T);
        matmul(n, T, Vi, A);
        matmul(n, Vm, Ed, T);
        matmul(n, T, Vi, R);
        mb_expm_stats st;
        int code = expm(n, A, n, E, n, &st);
        double e = relerr(n, E, R);
        CHECK(code == MB_OK && e < 1e-14,
              "diagonalizable, eigenvalues set %d: relative error %.2e (m = %d, s = %d)", c, e,
              st.m, st.s);
    }
}

/* Jordan block J = lam I + N: exp(J)_ij = e^lam / (j - i)! for j >= i */
static void test_jordan(void)
{
    const double lams[] = {-0.7, 0.0, 2.5, -40.0};
    ptrdiff_t n = 7;
    for (int c = 0; c < 4; c++) {
        double *A = mat(n), *E = mat(n), *R = mat(n);
        for (ptrdiff_t i = 0; i < n; i++) {
            A[i * n + i] = lams[c];
            if (i + 1 < n)
                A[(i + 1) * n + i] = 1.0;
        }
        for (ptrdiff_t j = 0; j < n; j++) {
            double f = 1.0;
            for (ptrdiff_t i = j; i >= 0; i--) {
                R[j * n + i] = exp(lams[c]) / f;
                f *= (double)(j - i + 1);
            }
        }
        mb_expm_stats st;
        int code = expm(n, A, n, E, n, &st);
        double e = relerr(n, E, R);
        /* the form of the bound of tests/test_expm.py, u (2 n + C max(1, ||A||_1)): the
         * condition of exp grows with ||A|| (a fixed 2e-14 was met at 98% for lambda =
         * -40).  C = 16, twice that file's constant for random matrices: a Jordan block
         * is as far from normal as it gets (measured: 0.4 of the bound at lambda = 2.5,
         * 0.26 at -40) */
        double bound = U53 * (2.0 * (double)n + 16.0 * fmax(1.0, norm1(n, A)));
        CHECK(code == MB_OK && e < bound, "Jordan block n = 7, lambda = %g: relative error %.2e "
              "<= %.1e (m = %d, s = %d)", lams[c], e, bound, st.m, st.s);
        free(A);
        free(E);
        free(R);
    }
}

/* strictly upper triangular N: exp(N) = sum_{k<n} N^k / k! exactly */
static void test_nilpotent(void)
{
    ptrdiff_t n = 8;
    unsigned seed = 11u;
    const double scales[] = {1e-3, 1.0, 30.0};
    for (int c = 0; c < 3; c++) {
        double *N = mat(n), *P = mat(n), *T = mat(n), *R = mat(n), *E = mat(n);
        for (ptrdiff_t j = 0; j < n; j++)
            for (ptrdiff_t i = 0; i < j; i++)
                N[j * n + i] = scales[c] * (2.0 * urand(&seed) - 1.0);
        for (ptrdiff_t i = 0; i < n; i++)
            P[i * n + i] = R[i * n + i] = 1.0;
        double fact = 1.0;
        for (ptrdiff_t k = 1; k < n; k++) {
            matmul(n, P, N, T);
            memcpy(P, T, (size_t)(n * n) * sizeof *P);
            fact *= (double)k;
            for (ptrdiff_t i = 0; i < n * n; i++)
                R[i] += P[i] / fact;
        }
        mb_expm_stats st;
        int code = expm(n, N, n, E, n, &st);
        double e = relerr(n, E, R);
        CHECK(code == MB_OK && e < 1e-13, "nilpotent n = 8, entries ~%g: relative error %.2e "
              "(m = %d, s = %d)", scales[c], e, st.m, st.s);
        free(N);
        free(P);
        free(T);
        free(R);
        free(E);
    }
    /* a 2x2 nilpotent with a huge entry: exp = I + A exactly, through the pre-scaling */
    double A[4] = {0, 0, 1e200, 0}, E[4];
    mb_expm_stats st;
    int code = expm(2, A, 2, E, 2, &st);
    CHECK(code == MB_OK && E[0] == 1.0 && E[1] == 0.0 && E[2] == 1e200 && E[3] == 1.0,
          "[[0, 1e200], [0, 0]]: exp = I + A exactly (s = %d)", st.s);
}

/* [[0, -w], [w, 0]] -> rotation by w */
static void test_rotation(void)
{
    const double ws[] = {1e-8, 0.1, 1.0, 3.0, 10.0, 100.0, 1e3, 1e4};
    for (int c = 0; c < 8; c++) {
        double w = ws[c], A[4] = {0, w, -w, 0}, E[4];
        double R[4] = {cos(w), sin(w), -sin(w), cos(w)};
        mb_expm_stats st;
        int code = expm(2, A, 2, E, 2, &st);
        double e = relerr(2, E, R);
        double det = E[0] * E[3] - E[1] * E[2];
        /* the condition of exp at A is ~ ||A||: allow 8 u ||A|| */
        double tol = 8.0 * U53 * fmax(1.0, w);
        CHECK(code == MB_OK && e < tol && fabs(det - 1.0) < tol,
              "rotation w = %g: error %.2e (tol %.1e), det - 1 = %.1e (m = %d, s = %d)", w, e,
              tol, det - 1.0, st.m, st.s);
    }
    /* block diagonal 6x6 with three rotation blocks and a similarity by a permutation */
    ptrdiff_t n = 6;
    const double w3[3] = {0.3, 7.0, 50.0};
    const int perm[6] = {3, 0, 5, 1, 4, 2};
    double *A = mat(n), *R = mat(n), *E = mat(n);
    for (int b = 0; b < 3; b++) {
        int i0 = perm[2 * b], i1 = perm[2 * b + 1];
        A[i1 * n + i0] = -w3[b];
        A[i0 * n + i1] = w3[b];
        R[i0 * n + i0] = R[i1 * n + i1] = cos(w3[b]);
        R[i1 * n + i0] = -sin(w3[b]);
        R[i0 * n + i1] = sin(w3[b]);
    }
    mb_expm_stats st;
    int code = expm(n, A, n, E, n, &st);
    double e = relerr(n, E, R);
    CHECK(code == MB_OK && e < 8.0 * U53 * 50.0,
          "three permuted rotation blocks (w up to 50): error %.2e (m = %d, s = %d)", e, st.m,
          st.s);
    free(A);
    free(R);
    free(E);
}

/* ||A|| ~ 1e4 with decaying eigenvalues */
static void test_large_norm(void)
{
    /* upper triangular [[a, b], [0, c]]: exp = [[e^a, b (e^a - e^c) / (a - c)], [0, e^c]] */
    const double cases[][3] = {{-1.0, 1e4, -2.0}, {-0.5, -3e4, -60.0}, {-3.0, 2e5, -1.0}};
    for (int k = 0; k < 3; k++) {
        double a = cases[k][0], b = cases[k][1], c = cases[k][2];
        double A[4] = {a, 0, b, c}, E[4];
        double R[4] = {exp(a), 0, b * (exp(a) - exp(c)) / (a - c), exp(c)};
        mb_expm_stats st;
        int code = expm(2, A, 2, E, 2, &st);
        double e = 0.0;
        for (int i = 0; i < 4; i++)
            if (R[i] != 0.0)
                e = fmax(e, fabs(E[i] - R[i]) / fabs(R[i]));
        CHECK(code == MB_OK && e < 1e-13 && E[1] == 0.0,
              "[[%g, %g], [0, %g]]: entrywise relative error %.2e (m = %d, s = %d)", a, b, c, e,
              st.m, st.s);
    }
    /* entries beyond 2^100 / n (pre-scaled by an exact power of two first):
     * [[-1e120, 1], [0, 0]] -> [[0, 1e-120], [0, 1]] */
    {
        double A[4] = {-1e120, 0, 1, 0}, E[4], R[4] = {0, 0, 1e-120, 1};
        mb_expm_stats st;
        int code = expm(2, A, 2, E, 2, &st);
        double e = relerr(2, E, R);
        CHECK(code == MB_OK && e < 1e-15 && st.s > 300,
              "[[-1e120, 1], [0, 0]]: relative error %.2e (m = %d, s = %d)", e, st.m, st.s);
    }
    /* symmetric, eigenvalues -1 .. -1e4: A = Q diag(lam) Q^T with a Householder Q */
    ptrdiff_t n = 10;
    double *Q = mat(n), *D = mat(n), *T = mat(n), *A = mat(n), *R = mat(n), *E = mat(n);
    double v[10], vv = 0.0;
    unsigned seed = 5u;
    for (ptrdiff_t i = 0; i < n; i++) {
        v[i] = urand(&seed) - 0.5;
        vv += v[i] * v[i];
    }
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++)
            Q[j * n + i] = (i == j ? 1.0 : 0.0) - 2.0 * v[i] * v[j] / vv;
    for (ptrdiff_t i = 0; i < n; i++)
        D[i * n + i] = -pow(10.0, 4.0 * (double)i / (double)(n - 1));
    matmul(n, Q, D, T);
    matmul(n, T, Q, A);  /* Q symmetric */
    for (ptrdiff_t i = 0; i < n; i++)
        D[i * n + i] = exp(D[i * n + i]);
    matmul(n, Q, D, T);
    matmul(n, T, Q, R);
    mb_expm_stats st;
    int code = expm(n, A, n, E, n, &st);
    double e = relerr(n, E, R);
    CHECK(code == MB_OK && e < 1e-12, "symmetric, eigenvalues -1..-1e4 (||A|| = %.1e): relative "
          "error %.2e (m = %d, s = %d)", norm1(n, A), e, st.m, st.s);
    free(Q);
    free(D);
    free(T);
    free(A);
    free(R);
    free(E);
}

/* exp(A) exp(-A) = I; sizes on both sides of the small-LU cutoff (32) */
static void test_inverse(void)
{
    const ptrdiff_t ns[] = {3, 8, 20, 40};
    const double nrm[] = {0.01, 0.3, 2.0, 8.0};
    unsigned seed = 3u;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            ptrdiff_t n = ns[a];
            double *A = mat(n), *M = mat(n), *E1 = mat(n), *E2 = mat(n), *P = mat(n);
            for (ptrdiff_t i = 0; i < n * n; i++)
                A[i] = 2.0 * urand(&seed) - 1.0;
            double f = nrm[b] / norm1(n, A);
            for (ptrdiff_t i = 0; i < n * n; i++) {
                A[i] *= f;
                M[i] = -A[i];
            }
            mb_expm_stats s1, s2;
            int c1 = expm(n, A, n, E1, n, &s1), c2 = expm(n, M, n, E2, n, &s2);
            matmul(n, E1, E2, P);
            for (ptrdiff_t i = 0; i < n; i++)
                P[i * n + i] -= 1.0;
            double e = norm1(n, P) / (norm1(n, E1) * norm1(n, E2));
            CHECK(c1 == MB_OK && c2 == MB_OK && e < 1e-14 &&
                      s1.products == products_for(s1.m) + s1.s,
                  "n = %td, ||A|| = %g: ||exp(A) exp(-A) - I|| / (||exp(A)|| ||exp(-A)||) = "
                  "%.2e (m = %d, s = %d, products = %d)", n, nrm[b], e, s1.m, s1.s, s1.products);
            free(A);
            free(M);
            free(E1);
            free(E2);
            free(P);
        }
}

/* s grows like log2 ||A||: for A = 2^k B, s(k) - k is constant within 1 once s > 0,
 * and the degree rises 3 -> 13 with the norm */
static void test_squarings(void)
{
    ptrdiff_t n = 6;
    unsigned seed = 17u;
    double *B = mat(n), *A = mat(n), *E = mat(n);
    for (ptrdiff_t j = 0; j < n; j++)  /* skew-symmetric: exp(2^k B) orthogonal, no overflow */
        for (ptrdiff_t i = 0; i < j; i++) {
            B[j * n + i] = 2.0 * urand(&seed) - 1.0;
            B[i * n + j] = -B[j * n + i];
        }
    double f = 1.0 / norm1(n, B);
    for (ptrdiff_t i = 0; i < n * n; i++)
        B[i] *= f;  /* ||B||_1 = 1 */
    int lo = 1000, hi = -1000, ok = 1, mprev = 0, monotone = 1;
    double orth = 0.0;
    for (int k = -12; k <= 14; k++) {
        for (ptrdiff_t i = 0; i < n * n; i++)
            A[i] = ldexp(B[i], k);
        mb_expm_stats st;
        ok &= expm(n, A, n, E, n, &st) == MB_OK;
        double *P = mat(n);
        for (ptrdiff_t j = 0; j < n; j++)  /* E^T E - I */
            for (ptrdiff_t i = 0; i < n; i++) {
                double sum = i == j ? -1.0 : 0.0;
                for (ptrdiff_t l = 0; l < n; l++)
                    sum += E[i * n + l] * E[j * n + l];
                P[j * n + i] = sum;
            }
        orth = fmax(orth, norm1(n, P) / (U53 * fmax(1.0, ldexp(1.0, k))));
        free(P);
        monotone &= st.m >= mprev || st.m == 13;
        mprev = st.m;
        if (k >= 4) {  /* well inside the m = 13, s > 0 regime */
            lo = st.s - k < lo ? st.s - k : lo;
            hi = st.s - k > hi ? st.s - k : hi;
        }
        if (k == -12)
            CHECK(st.m == 3 && st.s == 0, "||A|| = 2^-12: m = %d, s = %d", st.m, st.s);
        if (k == 14)
            CHECK(st.s >= 12 && st.s <= 15, "||A|| = 2^14: s = %d", st.s);
    }
    CHECK(ok && monotone, "degree non-decreasing with ||A|| until m = 13");
    CHECK(orth < 8.0, "skew-symmetric A: ||exp(A)^T exp(A) - I|| <= %.1f u max(1, ||A||)", orth);
    CHECK(hi - lo <= 1, "s - log2||A|| constant within 1 for ||A|| = 2^4..2^14 (range %d..%d)", lo,
          hi);
    free(B);
    free(A);
    free(E);
}

/* E == A, and leading dimensions larger than n */
static void test_storage(void)
{
    ptrdiff_t n = 5, ld = 8;
    unsigned seed = 23u;
    double *A = mat(n), *E = mat(n), *Ab = calloc((size_t)(ld * n), sizeof(double));
    double *Eb = calloc((size_t)(ld * n), sizeof(double));
    for (ptrdiff_t i = 0; i < n * n; i++)
        A[i] = 4.0 * urand(&seed) - 2.0;
    for (ptrdiff_t i = 0; i < ld * n; i++)
        Ab[i] = Eb[i] = -99.0;
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++)
            Ab[j * ld + i] = A[j * n + i];
    mb_expm_stats st;
    int c1 = expm(n, A, n, E, n, &st), c2 = expm(n, Ab, ld, Eb, ld, &st);
    int same = 1, pad = 1;
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < ld; i++) {
            if (i < n)
                same &= Eb[j * ld + i] == E[j * n + i];
            else
                pad &= Eb[j * ld + i] == -99.0;
        }
    CHECK(c1 == MB_OK && c2 == MB_OK && same && pad,
          "lda = lde = 8 > n = 5: same result, padding untouched");
    int c3 = expm(n, A, n, A, n, &st);  /* in place */
    CHECK(c3 == MB_OK && memcmp(A, E, (size_t)(n * n) * sizeof *A) == 0,
          "E == A (in place): same result");
    int sq = -1;
    size_t lw = mb_expm_work_size(n);
    double *work = malloc(lw * sizeof *work);
    int *ipiv = malloc((size_t)n * sizeof *ipiv);
    int c4 = mb_expm(n, Ab, ld, Eb, ld, work, ipiv, &sq);
    int c5 = mb_expm(n, Ab, ld, Eb, ld, work, ipiv, NULL);
    mb_expm_ex(n, Ab, ld, Eb, ld, work, ipiv, &st);
    CHECK(c4 == MB_OK && c5 == MB_OK && sq == st.s, "mb_expm reports s = %d (NULL allowed)", sq);
    free(work);
    free(ipiv);
    free(A);
    free(E);
    free(Ab);
    free(Eb);
}

int main(void)
{
    test_corner_cases();
    test_diagonal();
    test_diagonalizable();
    test_jordan();
    test_nilpotent();
    test_rotation();
    test_large_norm();
    test_inverse();
    test_squarings();
    test_storage();
    return check_summary();
}
