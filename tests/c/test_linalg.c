/* LU wrappers: the small-n C path and the LAPACK path give the same solutions, and
 * singular matrices are reported. */
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "dense.h" /* linalg/dense.h */
#include "status.h"

static double solve_err(ptrdiff_t n, unsigned seed)
{
    double *A = malloc((size_t)(n * n) * sizeof *A), *A0 = malloc((size_t)(n * n) * sizeof *A);
    double *x = malloc((size_t)n * sizeof *x), *b = malloc((size_t)n * sizeof *b);
    int *ipiv = malloc((size_t)n * sizeof *ipiv);
    srand(seed);
    for (ptrdiff_t i = 0; i < n * n; i++)
        A0[i] = A[i] = (double)rand() / RAND_MAX - 0.5;
    for (ptrdiff_t i = 0; i < n; i++) {
        x[i] = (double)(i + 1);
        A0[i * n + i] += 0.1;
        A[i * n + i] += 0.1;
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        b[i] = 0;
        for (ptrdiff_t j = 0; j < n; j++)
            b[i] += A0[j * n + i] * x[j];
    }
    double err = INFINITY;
    if (mb_lu_factor(n, A, n, ipiv) == MB_OK && mb_lu_solve(n, A, n, ipiv, b, 1) == MB_OK) {
        err = 0;
        for (ptrdiff_t i = 0; i < n; i++)
            err = fmax(err, fabs(b[i] - x[i]) / (double)(i + 1));
    }
    free(A); free(A0); free(x); free(b); free(ipiv);
    return err;
}

int main(void)
{
    ptrdiff_t sizes[] = {1, 2, 7, 31, 32, 33, 80};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        double e = solve_err(sizes[k], 7u + (unsigned)k);
        CHECK(e < 1e-9, "LU solve n = %td: relative error %.2e", sizes[k], e);
    }
    double S[4] = {1, 2, 2, 4};  /* singular, column-major */
    int ipiv[2];
    CHECK(mb_lu_factor(2, S, 2, ipiv) == MB_ERR_LINALG, "singular 2x2 reported (small path)");
    double *Z = calloc(40 * 40, sizeof *Z);
    int *ip = malloc(40 * sizeof *ip);
    CHECK(mb_lu_factor(40, Z, 40, ip) == MB_ERR_LINALG, "singular 40x40 reported (LAPACK path)");
    free(Z); free(ip);
    return check_summary();
}
