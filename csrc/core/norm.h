#ifndef MB_CORE_NORM_H
#define MB_CORE_NORM_H
#include <stddef.h>
/* Weighted RMS norm of RN paper eqs 13-14:
 *   sc_i = atol_i + max(|y_i|, |y_new_i|) * rtol,  sqrt(mean((e_i / sc_i)^2)).
 * y_new may be NULL (then sc_i = atol_i + |y_i| rtol). */
double mb_wrms_norm(ptrdiff_t n, const double *e, const double *y, const double *y_new,
                    double rtol, const double *atol);
/* The same with per-component relative tolerances rtol_v (size n; NULL: rtol). */
double mb_wrms_norm_v(ptrdiff_t n, const double *e, const double *y, const double *y_new,
                      double rtol, const double *rtol_v, const double *atol);
#endif
