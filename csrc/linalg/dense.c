#include <math.h>
#include <stdlib.h>
#include "dense.h"
#include "status.h"

/* LAPACK / BLAS (Fortran interface, 32-bit integers as in Debian's liblapack3) */
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
                    const int *lda, const int *ipiv, double *b, const int *ldb, int *info);
extern void zgetrf_(const int *m, const int *n, double complex *a, const int *lda, int *ipiv,
                    int *info);
extern void zgetrs_(const char *trans, const int *n, const int *nrhs, const double complex *a,
                    const int *lda, const int *ipiv, double complex *b, const int *ldb,
                    int *info);
extern void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                   const double *alpha, const double *a, const int *lda, const double *b,
                   const int *ldb, const double *beta, double *c, const int *ldc);
extern void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a,
                    const int *lda, double *s, double *u, const int *ldu, double *vt,
                    const int *ldvt, double *work, const int *lwork, int *info);
extern void dgemv_(const char *t, const int *m, const int *n, const double *alpha,
                   const double *a, const int *lda, const double *x, const int *incx,
                   const double *beta, double *y, const int *incy);

/* Below this size an unblocked right-looking LU in C beats the library call
 * overhead of reference LAPACK (multibody saddle systems are often 5-30).  Same
 * result format as dgetrf/dgetrs: unit-lower L and U in A, 1-based pivots. */
#define MB_SMALL_LU 32

static int small_lu_factor(ptrdiff_t n, double *A, ptrdiff_t lda, int *ipiv)
{
    for (ptrdiff_t k = 0; k < n; k++) {
        double *ck = A + k * lda;
        ptrdiff_t p = k;
        double amax = fabs(ck[k]);
        for (ptrdiff_t i = k + 1; i < n; i++)
            if (fabs(ck[i]) > amax) {
                amax = fabs(ck[i]);
                p = i;
            }
        ipiv[k] = (int)p + 1;
        if (amax == 0.0)
            return MB_ERR_LINALG;
        if (p != k)
            for (ptrdiff_t j = 0; j < n; j++) {
                double tmp = A[j * lda + k];
                A[j * lda + k] = A[j * lda + p];
                A[j * lda + p] = tmp;
            }
        double inv = 1.0 / ck[k];
        for (ptrdiff_t i = k + 1; i < n; i++)
            ck[i] *= inv;
        for (ptrdiff_t j = k + 1; j < n; j++) {
            double *cj = A + j * lda, a = cj[k];
            if (a != 0.0)
                for (ptrdiff_t i = k + 1; i < n; i++)
                    cj[i] -= a * ck[i];
        }
    }
    return MB_OK;
}

static void small_lu_solve(ptrdiff_t n, const double *LU, ptrdiff_t lda, const int *ipiv,
                           double *b)
{
    for (ptrdiff_t k = 0; k < n; k++) {
        ptrdiff_t p = ipiv[k] - 1;
        if (p != k) {
            double tmp = b[k];
            b[k] = b[p];
            b[p] = tmp;
        }
    }
    for (ptrdiff_t j = 0; j < n; j++) {   /* L y = b, column oriented */
        double bj = b[j];
        if (bj != 0.0)
            for (ptrdiff_t i = j + 1; i < n; i++)
                b[i] -= bj * LU[j * lda + i];
    }
    for (ptrdiff_t j = n - 1; j >= 0; j--) {   /* U x = y */
        b[j] /= LU[j * lda + j];
        double bj = b[j];
        for (ptrdiff_t i = 0; i < j; i++)
            b[i] -= bj * LU[j * lda + i];
    }
}

int mb_lu_factor(ptrdiff_t n, double *A, ptrdiff_t lda, int *ipiv)
{
    int nn = (int)n, ld = (int)lda, info = 0;
    if (n == 0)
        return MB_OK;
    if (n <= MB_SMALL_LU)
        return small_lu_factor(n, A, lda, ipiv);
    dgetrf_(&nn, &nn, A, &ld, ipiv, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

int mb_lu_solve(ptrdiff_t n, const double *LU, ptrdiff_t lda, const int *ipiv, double *b,
                ptrdiff_t nrhs)
{
    int nn = (int)n, ld = (int)lda, nr = (int)nrhs, info = 0;
    if (n == 0)
        return MB_OK;
    if (n <= MB_SMALL_LU) {
        for (ptrdiff_t r = 0; r < nrhs; r++)
            small_lu_solve(n, LU, lda, ipiv, b + r * n);
        return MB_OK;
    }
    dgetrs_("N", &nn, &nr, LU, &ld, ipiv, b, &nn, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

/* A^T x = b with P A = L U: U^T w = b, L^T z = w, x = P^T z */
static void small_lu_solve_t(ptrdiff_t n, const double *LU, ptrdiff_t lda, const int *ipiv,
                             double *b)
{
    for (ptrdiff_t j = 0; j < n; j++) {   /* U^T w = b (U^T lower) */
        double s = b[j];
        for (ptrdiff_t i = 0; i < j; i++)
            s -= LU[j * lda + i] * b[i];
        b[j] = s / LU[j * lda + j];
    }
    for (ptrdiff_t j = n - 1; j >= 0; j--) {   /* L^T z = w (unit upper) */
        double s = b[j];
        for (ptrdiff_t i = j + 1; i < n; i++)
            s -= LU[j * lda + i] * b[i];
        b[j] = s;
    }
    for (ptrdiff_t k = n - 1; k >= 0; k--) {
        ptrdiff_t p = ipiv[k] - 1;
        if (p != k) {
            double tmp = b[k];
            b[k] = b[p];
            b[p] = tmp;
        }
    }
}

int mb_lu_solve_t(ptrdiff_t n, const double *LU, ptrdiff_t lda, const int *ipiv, double *b,
                  ptrdiff_t nrhs)
{
    int nn = (int)n, ld = (int)lda, nr = (int)nrhs, info = 0;
    if (n == 0)
        return MB_OK;
    if (n <= MB_SMALL_LU) {
        for (ptrdiff_t r = 0; r < nrhs; r++)
            small_lu_solve_t(n, LU, lda, ipiv, b + r * n);
        return MB_OK;
    }
    dgetrs_("T", &nn, &nr, LU, &ld, ipiv, b, &nn, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

int mb_zlu_factor(ptrdiff_t n, double complex *A, ptrdiff_t lda, int *ipiv)
{
    int nn = (int)n, ld = (int)lda, info = 0;
    if (n == 0)
        return MB_OK;
    zgetrf_(&nn, &nn, A, &ld, ipiv, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

int mb_zlu_solve(ptrdiff_t n, const double complex *LU, ptrdiff_t lda, const int *ipiv,
                 double complex *b, ptrdiff_t nrhs)
{
    int nn = (int)n, ld = (int)lda, nr = (int)nrhs, info = 0;
    if (n == 0)
        return MB_OK;
    zgetrs_("N", &nn, &nr, LU, &ld, ipiv, b, &nn, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

void mb_gemm(ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, double alpha, const double *A, ptrdiff_t lda,
             const double *B, ptrdiff_t ldb, double beta, double *C, ptrdiff_t ldc)
{
    int mm = (int)m, nn = (int)n, kk = (int)k, la = (int)lda, lb = (int)ldb, lc = (int)ldc;
    if (m == 0 || n == 0)
        return;
    dgemm_("N", "N", &mm, &nn, &kk, &alpha, A, &la, B, &lb, &beta, C, &lc);
}

void mb_gemv(ptrdiff_t m, ptrdiff_t n, double alpha, const double *A, ptrdiff_t lda,
             const double *x, double beta, double *y)
{
    int mm = (int)m, nn = (int)n, la = (int)lda, one = 1;
    if (m == 0)
        return;
    dgemv_("N", &mm, &nn, &alpha, A, &la, x, &one, &beta, y, &one);
}

int mb_singular_values(ptrdiff_t m, ptrdiff_t n, double *A, ptrdiff_t lda, double *s)
{
    ptrdiff_t k = m < n ? m : n, big = m < n ? n : m;
    if (k == 0)
        return MB_OK;
    for (ptrdiff_t j = 0; j < n; j++)  /* dgesvd does not promise to stop on NaN */
        for (ptrdiff_t i = 0; i < m; i++)
            if (!isfinite(A[j * lda + i]))
                return MB_ERR_LINALG;
    /* LWORK >= max(3 min(m, n) + max(m, n), 5 min(m, n)) */
    int mm = (int)m, nn = (int)n, ld = (int)lda, one = 1, info = 0;
    int lwork = (int)(3 * k + big > 5 * k ? 3 * k + big : 5 * k) + 32;
    double *work = malloc((size_t)lwork * sizeof *work), dummy = 0.0;
    if (!work)
        return MB_ERR_MEM;
    dgesvd_("N", "N", &mm, &nn, A, &ld, s, &dummy, &one, &dummy, &one, work, &lwork, &info);
    free(work);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}
