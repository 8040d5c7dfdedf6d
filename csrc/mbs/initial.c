/* The consistency of an initial state (initial.h). */
#include "initial.h"
#include <math.h>
#include <stdlib.h>
#include "dense.h"
#include "status.h"

/* max |x_i|, NaN when an x_i is NaN */
static double max_abs(ptrdiff_t n, const double *x)
{
    double m = 0.0;
    for (ptrdiff_t i = 0; i < n; i++) {
        double a = fabs(x[i]);
        if (a > m || isnan(a))
            m = a;
        if (isnan(m))
            break;
    }
    return m;
}

int mb_initial_check(const mb_mech *mech, double t, const double *q, const double *qd,
                     double rtol, double *scale, double *position, double *velocity,
                     double *sv, ptrdiff_t *rank)
{
    ptrdiff_t nq = mech->nq, nc = mech->nc;
    double sq = max_abs(nq, q), sd = max_abs(nq, qd);
    *scale = (isnan(sd) || sd > sq) && !isnan(sq) ? sd : sq;  /* NaN when either is */
    *position = *velocity = 0.0;
    *rank = 0;
    if (nc == 0)
        return MB_OK;
    double *P = malloc((size_t)(nc * nq + nc) * sizeof *P);
    if (!P)
        return MB_ERR_MEM;
    double *r = P + nc * nq;
    int rc = mech->phi(t, q, r, mech->ctx);
    if (rc == MB_OK) {
        *position = max_abs(nc, r);
        rc = mech->phi_t(t, q, r, mech->ctx);
    }
    if (rc == MB_OK)
        rc = mech->phi_q(t, q, P, nc, mech->ctx);
    if (rc == MB_OK) {
        mb_gemv(nc, nq, 1.0, P, nc, qd, 1.0, r);  /* Phi_q q' + Phi_t */
        *velocity = max_abs(nc, r);
        for (ptrdiff_t k = 0; k < nc * nq && rc == MB_OK; k++)
            if (!isfinite(P[k]))
                rc = MB_ERR_NONFINITE;
    }
    if (rc == MB_OK)
        rc = mb_singular_values(nc, nq, P, nc, sv);
    if (rc == MB_OK) {
        ptrdiff_t k = nc < nq ? nc : nq;
        double thr = rtol * (k > 0 && sv[0] > 1.0 ? sv[0] : 1.0);
        for (ptrdiff_t i = 0; i < k; i++)
            *rank += sv[i] > thr;
    }
    free(P);
    return rc;
}
