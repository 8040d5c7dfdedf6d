#ifndef MB_CORE_EVENTS_H
#define MB_CORE_EVENTS_H
#include <stddef.h>
#include "problem.h"

/* The dense output of one step [t0, t0 + h]: writes y(t0 + theta h) into y and
 * returns 0 or a status (a polynomial, or a method's dense record: method.h). */
typedef int (*mb_dense_fn)(double theta, double *y, void *dctx);

/* Locate the root of event component i of g(t, y(theta)) inside one step, y given
 * by the dense output y_at(theta, ., dctx) over [t0, t0 + h], bracketed by theta in
 * [0, th_hi] with values g_lo, g_hi of opposite sign (or zero).  Brent's method
 * to |dt| <= 4 eps max(|t|, |h|); the root reported is the end of the final
 * bracket on the far side of the sign change (g there has g_hi's sign, or is 0).
 * gbuf (n_events) and ybuf (n) are scratch.  Writes the root's theta; returns 0,
 * the event function's failure code, or y_at's. */
int mb_event_locate(mb_event_fn g, void *ctx, ptrdiff_t i, mb_dense_fn y_at, void *dctx,
                    double t0, double h, double th_hi, double g_lo, double g_hi, double *gbuf,
                    double *ybuf, double *theta);

/* Whether a sign change from g_old to g_new is an event for direction dir
 * (SciPy's rule: up = g_old <= 0 <= g_new, down = g_old >= 0 >= g_new). */
int mb_event_active(double g_old, double g_new, int dir);
#endif
