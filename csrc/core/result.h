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
#endif
