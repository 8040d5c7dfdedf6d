#ifndef MB_PROBLEMS_PROBLEMS_H
#define MB_PROBLEMS_PROBLEMS_H
/* Built-in right-hand sides in C, for tests, benchmarks and the demo
 * (signature of mb_rhs_fn; user data ignored). */
#include "problem.h"
/* "arenstorf", "mass_spring_damper", "pendulum", "exp_decay", "oscillator",
 * stiff: "vdp1000" (Van der Pol, mu = 1000), "vdp_scaled" (Hairer's scaled form,
 * eps = 1e-6), "robertson", "hires"; NULL if unknown */
mb_rhs_fn mb_test_problem_find(const char *name);
/* analytic Jacobian (column-major n x n, leading dimension ldJ) of the stiff
 * problems; NULL for problems without one */
mb_jac_fn mb_test_problem_jac(const char *name);
#endif
