#ifndef MB_METHODS_ERK_H
#define MB_METHODS_ERK_H
#include "method.h"
#include "tableaus.h"
/* Stiffness estimate of the step just computed by an FSAL table whose last stage is
 * taken at t + h (dopri5), as DOPRI5 does (Hairer & Wanner II, IV.2): the last
 * stage g_s = f(t + h, y_s) and the FSAL stage f(t + h, y_new) give
 *   h |lambda| ~ |h| ||f(t + h, y_new) - g_s|| / ||y_new - y_s||,
 * to be compared with the stability boundary (~3.3 for dopri5).  The norms are
 * 2-norms of the components divided by scale (size n, positive; NULL: unscaled, as
 * DOPRI5).  s is the stepper the step ran on (s->m the method, s->work its
 * workspace, untouched since).  Writes *h_lambda (0 when y_new == y_s); returns
 * MB_ERR_ILL_INPUT for other tables. */
int mb_erk_stiffness(const mb_stepper *s, const double *scale, double *h_lambda);
/* Explicit Runge-Kutta methods over a tableau (one kernel for the family). */
extern const mb_method mb_method_euler, mb_method_heun, mb_method_rk4, mb_method_rk23,
    mb_method_dopri5, mb_method_dop853;
#endif
