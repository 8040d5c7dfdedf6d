#ifndef MB_PYTHON_SENS_MECH_H
#define MB_PYTHON_SENS_MECH_H
/* Internal to csrc/python: forward parameter sensitivities of a mechanism's run
 * (issue 26; sens_mech.c), the mechanism's side of core/sens.h.
 *
 *   mech_param_slot    the ADDRESS of a model parameter in a handle's tables (a body's
 *                      mass or inertia, a force element's or joint's table entry), the
 *                      double the kernels read at every call
 *   _core.mech_param   get / set one from Python (tests, mbint/mbs/sensitivity.py)
 *   mech_sens_parse    the sens= keyword of mech_simulate: the parameters and the initial
 *                      sensitivities of (q, q') (consistent: mbint/mbs/sensitivity.py)
 *   mech_sens_start    over the opened formulation: refuse what cannot be
 *                      differentiated, the initial sensitivities of the integrated state y
 *                      (centred differences of mb_form_initial), the augmented problem
 *                      (mb_sens over the formulation's problem behind a watch that tells
 *                      the formulation when a parameter changed), Y0 and its atol
 *   mech_sens_split    after the run: Y of every output point split into y (the result
 *                      compacted in place, so that the outputs of the run see y) and the
 *                      sensitivities of y, q and q' (the joint formulation's by
 *                      differences of its map to (q, q'))
 *   mech_sens_export   those into the result dict
 *   mech_sens_free */
#include "mech_py.h"
#include "formulation.h"
#include "driver.h"

typedef struct mech_sens mech_sens;

/* table: 0 body, 1 joint (planar joint row; spatial constraint element row), 2 force
 * element row; name: a column of the table (planar_layout / spatial_layout names; the
 * integer columns type, i, j, coord, row, wrap, unilateral are no parameters).  The
 * address, or NULL with *why set. */
double *mech_param_slot(mech_handle *h, int table, ptrdiff_t row, const char *name,
                        const char **why);
PyObject *mech_param(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_param_doc[];

/* spec: a dict (keys in sens_mech.c) or None (*out = NULL); 0 or -1 with an exception */
int mech_sens_parse(mech_handle *h, PyObject *spec, ptrdiff_t nq, mech_sens **out);
/* y0 (n, the formulation's consistent initial state from (q0, q0') at t0, atol_in the
 * atol given to mb_form_initial, atol_y its answer); method: the run's (NULL: SUNDIALS);
 * base: the formulation's problem.  *Y0, *atolY: new float64 arrays (N).  0 or -1. */
int mech_sens_start(mech_sens *ms, mb_formulation *F, const char *method, int has_method,
                    double t0, const double *q0, const double *qd0, const double *atol_in,
                    const double *y0, const double *atol_y, PyObject **Y0, PyObject **atolY);
const mb_problem *mech_sens_problem(const mech_sens *ms);
int mech_sens_split(mech_sens *ms, mb_result *res);
int mech_sens_export(mech_sens *ms, PyObject *out, PyObject *y0);
void mech_sens_free(mech_sens *ms);

#endif
