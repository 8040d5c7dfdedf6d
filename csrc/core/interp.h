#ifndef MB_CORE_INTERP_H
#define MB_CORE_INTERP_H
#include <stddef.h>
/* Cubic Hermite interpolant of a step from (y0, f0) to (y1, f1) of size h, as
 * monomial coefficients in theta (4 x n, see method.h). */
void mb_dense_hermite(ptrdiff_t n, double h, const double *y0, const double *f0,
                      const double *y1, const double *f1, double *C);
#endif
