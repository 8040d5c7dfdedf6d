#ifndef MB_METHODS_ERK_H
#define MB_METHODS_ERK_H
#include "method.h"
#include "tableaus.h"
/* Explicit Runge-Kutta methods over a tableau (one kernel for the family). */
extern const mb_method mb_method_euler, mb_method_heun, mb_method_rk4, mb_method_rk23,
    mb_method_dopri5, mb_method_dop853;
#endif
