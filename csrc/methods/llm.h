#ifndef MB_METHODS_LLM_H
#define MB_METHODS_LLM_H
#include "method.h"
/* The Local Linearization Method (LLM paper: Gil, Sanfelice, Nikravesh, "Local
 * Linearization Method in the Integration of Multibody Equations"), see llm.c:
 *   y_{n+1} = y_n + phi(t_n, y_n; h),
 *   phi = int_0^h e^{f_y (h - u)} (f + f_t u) du             (eqs 1-2)
 * from one matrix exponential of a block matrix (Van Loan, eqs 3-6), order 2, exact
 * on y' = A y + b0 + b1 t for any h, R(z) = e^z; local error estimate of eqs 29-33
 * from a second block exponential; continuous output y_n + phi(t_n, y_n; t - t_n)
 * (eq 18) as a dense record (method.h). */
extern const mb_method mb_method_llm;
#endif
