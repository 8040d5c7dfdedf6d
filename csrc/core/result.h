#ifndef MB_CORE_RESULT_H
#define MB_CORE_RESULT_H
/* Growable storage of a run's output (driver.h declares mb_result). */
#include "driver.h"
int mb_result_init(mb_result *r, ptrdiff_t n, ptrdiff_t n_events);
int mb_result_push_point(mb_result *r, double t, const double *y);
int mb_result_push_dense(mb_result *r, double t, double h, int deg, const double *C);
/* a method's dense record of len doubles (stored with degree -1, method.h) */
int mb_result_push_record(mb_result *r, double t, double h, const double *rec, ptrdiff_t len);
int mb_result_push_event(mb_result *r, ptrdiff_t i, double t, const double *y);
int mb_result_push_hist(mb_result *r, double t, double h, double err);
/* Drop what the result holds past t in the direction dir (points, step history, events
 * with their counts in hits[n_events] when hits is not NULL, the dense records that
 * start at or past t): a run moved back to t (driver.h "Piecewise runs"). */
void mb_result_truncate(mb_result *res, double t, double dir, ptrdiff_t *hits);
#endif
