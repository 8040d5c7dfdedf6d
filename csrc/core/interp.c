#include "interp.h"
#include "driver.h"

void mb_dense_eval(ptrdiff_t n, int deg, const double *C, double theta, double *y)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double v = C[(ptrdiff_t)deg * n + i];
        for (int k = deg - 1; k >= 0; k--)
            v = v * theta + C[(ptrdiff_t)k * n + i];
        y[i] = v;
    }
}

void mb_dense_hermite(ptrdiff_t n, double h, const double *y0, const double *f0,
                      const double *y1, const double *f1, double *C)
{
    /* y(th) = y0 + th h f0 + th^2 (3 d - h(2 f0 + f1)) + th^3 (h(f0 + f1) - 2 d),
     * d = y1 - y0 */
    for (ptrdiff_t i = 0; i < n; i++) {
        double d = y1[i] - y0[i];
        C[i] = y0[i];
        C[n + i] = h * f0[i];
        C[2 * n + i] = 3.0 * d - h * (2.0 * f0[i] + f1[i]);
        C[3 * n + i] = h * (f0[i] + f1[i]) - 2.0 * d;
    }
}
