#ifndef MB_METHODS_IMPLICIT_SIMPLE_H
#define MB_METHODS_IMPLICIT_SIMPLE_H
/* One-step theta methods y_{n+1} = y_n + h ((1 - g) f_n + g f_{n+1}):
 * backward Euler (g = 1, lecture notes 7.7) and the trapezoidal rule (g = 1/2),
 * Newton with LU reuse, embedded error estimates.  See implicit_simple.c. */
#include "method.h"

typedef enum { MB_THETA_EST_BE = 0, MB_THETA_EST_SIMPSON = 1 } mb_theta_estimate;

typedef struct mb_theta_table {
    double g;                   /* weight of f_{n+1} */
    mb_theta_estimate estimate; /* which embedded error estimate */
} mb_theta_table;

extern const mb_theta_table mb_theta_backward_euler, mb_theta_trapezoid;
extern const mb_method mb_method_backward_euler;
extern const mb_method mb_method_trapezoid;

#endif
