#include <math.h>
#include "norm.h"

double mb_wrms_norm_v(ptrdiff_t n, const double *e, const double *y, const double *y_new,
                      double rtol, const double *rtol_v, const double *atol)
{
    double sum = 0.0;
    for (ptrdiff_t i = 0; i < n; i++) {
        double ay = fabs(y[i]);
        if (y_new && fabs(y_new[i]) > ay)
            ay = fabs(y_new[i]);
        double r = e[i] / (atol[i] + ay * (rtol_v ? rtol_v[i] : rtol));
        sum += r * r;
    }
    return n > 0 ? sqrt(sum / (double)n) : 0.0;
}

double mb_wrms_norm(ptrdiff_t n, const double *e, const double *y, const double *y_new,
                    double rtol, const double *atol)
{
    return mb_wrms_norm_v(n, e, y, y_new, rtol, NULL, atol);
}
