/* Helpers shared by csrc/mbs (mbs_common.h). */
#include "mbs_common.h"
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include "../linalg/dense.h" /* LU */
#include "status.h"

int mb_msg_fail(char *msg, size_t len, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return code;
}

double mb_norm_inf(ptrdiff_t n, const double *x)
{
    double r = 0;
    for (ptrdiff_t i = 0; i < n; i++) r = fmax(r, fabs(x[i]));
    return r;
}

double mb_fd_step(double x)
{
    return cbrt(DBL_EPSILON) * fmax(1.0, fabs(x));
}

int mb_lu_factor_scaled(ptrdiff_t n, double *A, ptrdiff_t lda, double *d, int *ipiv,
                        ptrdiff_t *bad)
{
    for (ptrdiff_t k = 0; k < n; k++) {
        double r = 0;
        for (ptrdiff_t l = 0; l < n; l++) {
            double v = fabs(A[k + lda * l]);
            r = v > r ? v : r;
        }
        if (!(r > 0)) {
            *bad = k;
            return MB_ERR_LINALG;
        }
        d[k] = 1.0 / sqrt(r);
    }
    for (ptrdiff_t l = 0; l < n; l++)
        for (ptrdiff_t k = 0; k < n; k++) A[k + lda * l] *= d[k] * d[l];
    int rc = mb_lu_factor(n, A, lda, ipiv);
    double umax = 0, umin = INFINITY;
    ptrdiff_t kmin = 0;
    for (ptrdiff_t k = 0; k < n; k++) {
        double u = fabs(A[k + lda * k]);
        umax = u > umax ? u : umax;
        if (!(u >= umin)) {  /* also catches NaN */
            umin = u;
            kmin = k;
        }
    }
    if (rc != MB_OK || !(umin > 64.0 * (double)n * DBL_EPSILON * umax)) {
        *bad = kmin;
        return MB_ERR_LINALG;
    }
    return MB_OK;
}

int mb_lu_solve_scaled(ptrdiff_t n, const double *LU, ptrdiff_t lda, const double *d,
                       const int *ipiv, double *B, ptrdiff_t nrhs)
{
    for (ptrdiff_t c = 0; c < nrhs; c++)
        for (ptrdiff_t k = 0; k < n; k++) B[k + n * c] *= d[k];
    int rc = mb_lu_solve(n, LU, lda, ipiv, B, nrhs);
    for (ptrdiff_t c = 0; c < nrhs; c++)
        for (ptrdiff_t k = 0; k < n; k++) B[k + n * c] *= d[k];
    return rc;
}
