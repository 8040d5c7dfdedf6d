#ifndef MB_METHODS_ADAMS_H
#define MB_METHODS_ADAMS_H
#include "method.h"
/* Variable-step, variable-order Adams-Bashforth-Moulton PECE, orders 1-12
 * (Shampine-Gordon DE/STEP, MATLAB ode113).  See adams.c for the formulation. */
extern const mb_method mb_method_adams;
#endif
