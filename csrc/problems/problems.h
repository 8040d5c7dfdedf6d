#ifndef MB_PROBLEMS_PROBLEMS_H
#define MB_PROBLEMS_PROBLEMS_H
/* Built-in right-hand sides in C, for tests, benchmarks and the demo
 * (signature of mb_rhs_fn; user data ignored). */
#include "problem.h"
/* "arenstorf", "mass_spring_damper", "pendulum", "exp_decay", "oscillator"; NULL if unknown */
mb_rhs_fn mb_test_problem_find(const char *name);
#endif
