#include <float.h>
#include <math.h>
#include <string.h>
#include "newton.h"
#include "dense.h"

void mb_newton_init(mb_newton *nw, double kappa, int max_iter)
{
    nw->kappa = kappa > 0 ? kappa : 0.03;
    nw->max_iter = max_iter > 0 ? max_iter : 7;
    nw->iter = 0;
    nw->eta = 1.0;
    nw->dz_prev = 0.0;
    nw->theta = 0.0;
}

void mb_newton_begin(mb_newton *nw)
{
    nw->iter = 0;
    nw->dz_prev = 0.0;
    nw->theta = 0.0;
    /* eta from the last solve, bounded below so a lucky step cannot stop
     * the next solve after one iteration without evidence (Hairer: max(eta, uround)^0.8) */
    nw->eta = pow(fmax(nw->eta, DBL_EPSILON), 0.8);
}

int mb_newton_check(mb_newton *nw, double dz_norm)
{
    nw->iter++;
    if (!isfinite(dz_norm))
        return MB_NEWTON_FAILED;
    if (nw->iter > 1) {
        double theta = nw->dz_prev > 0 ? dz_norm / nw->dz_prev : 0.0;
        nw->theta = theta;
        if (theta >= 1.0)
            return MB_NEWTON_FAILED;
        nw->eta = theta / (1.0 - theta);
        /* predicted size of the last correction still allowed (RADAU5's test) */
        int remaining = nw->max_iter - nw->iter;
        if (remaining > 0 && nw->eta * pow(theta, remaining) * dz_norm > nw->kappa)
            return MB_NEWTON_FAILED;
    }
    nw->dz_prev = dz_norm;
    if (dz_norm == 0.0 || nw->eta * dz_norm <= nw->kappa)
        return MB_NEWTON_CONVERGED;
    if (nw->iter >= nw->max_iter)
        return MB_NEWTON_FAILED;
    return MB_NEWTON_CONTINUE;
}

int mb_newton_matrix_factor(ptrdiff_t n, const double *M, const double *J, double c,
                            double *A, int *ipiv)
{
    ptrdiff_t nn = n * n;
    for (ptrdiff_t q = 0; q < nn; q++)
        A[q] = -c * J[q];
    if (M) {
        for (ptrdiff_t q = 0; q < nn; q++)
            A[q] += M[q];
    } else {
        for (ptrdiff_t i = 0; i < n; i++)
            A[i * n + i] += 1.0;
    }
    return mb_lu_factor(n, A, n, ipiv);
}

void mb_mass_apply(ptrdiff_t n, const double *M, const double *x, double *out)
{
    if (M)
        mb_gemv(n, n, 1.0, M, n, x, 0.0, out);
    else
        memcpy(out, x, (size_t)n * sizeof(double));
}

int mb_newton_stage_factor(int s, ptrdiff_t n, const double *M, const double *A, double h,
                           const double *J, int per_stage, double *E, int *ipiv)
{
    ptrdiff_t N = (ptrdiff_t)s * n;
    for (ptrdiff_t l = 0; l < s; l++) {
        const double *Jl = J + (per_stage ? l * n * n : 0);
        for (ptrdiff_t c = 0; c < n; c++) {
            double *col = E + (l * n + c) * N;
            for (ptrdiff_t i = 0; i < s; i++) {
                double ha = h * A[i * s + l];
                for (ptrdiff_t r = 0; r < n; r++) {
                    double m = i == l ? (M ? M[c * n + r] : (double)(r == c)) : 0.0;
                    col[i * n + r] = m - ha * Jl[c * n + r];
                }
            }
        }
    }
    return mb_lu_factor(N, E, N, ipiv);
}
