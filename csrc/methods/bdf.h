#ifndef MB_METHODS_BDF_H
#define MB_METHODS_BDF_H
/* Variable-order (1-5), variable-step BDF/NDF in quasi-constant step form with a
 * modified divided-difference array (Shampine-Reichelt ode15s; SciPy's BDF),
 * constant (possibly singular) mass matrix.  See bdf.c for the formulation. */
#include <stddef.h>
#include "method.h"

enum { MB_BDF_MAX_ORDER = 5 };

/* The family's data: kappa[k] of the NDF of order k (kappa[0] unused);
 * all zero = the classical BDF. */
typedef struct mb_bdf_table {
    const char *name;
    double kappa[MB_BDF_MAX_ORDER + 1];
} mb_bdf_table;

/* Shampine-Reichelt NDF coefficients (ode15s, SciPy): orders 1-4 NDF, 5 BDF */
extern const mb_bdf_table mb_bdf_ndf;
/* kappa = 0: the classical backward differentiation formulas */
extern const mb_bdf_table mb_bdf_classic;

/* registered as "bdf" (NDF coefficients) */
extern const mb_method mb_method_bdf;

/* Rescale the difference array D (rows 0..k, each of length n, row j at D + j*ld)
 * from step size h to factor * h: D <- (R(factor) U)^T D (ode15s / SciPy change_D). */
void mb_bdf_change_D(ptrdiff_t n, int k, double factor, double *D, ptrdiff_t ld);

/* Start the history of a stepper of a method built on this kernel (s->work
 * allocated, init() called) from k + 1 equally spaced past values
 * Y[j*n .. j*n+n-1] = y(t - j h), j = 0..k, at order k (1..5): the next step
 * from t runs at order k with the exact backward differences of these values.
 * Returns MB_OK or MB_ERR_ILL_INPUT. */
int mb_bdf_start(mb_stepper *s, double t, double h, int k, const double *Y);

#endif
