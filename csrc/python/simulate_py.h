#ifndef MB_PYTHON_SIMULATE_PY_H
#define MB_PYTHON_SIMULATE_PY_H
/* Internal to csrc/python: one run of a mechanism from Python (simulate_py.c) as a
 * session that _core.mech_simulate runs in one call and _core.MechStepper
 * (simulator_py.c) in pieces:
 *   mech_session_open    parse the keywords of mech_simulate, open the formulation,
 *                        choose the method, the consistent initial state, the problem
 *                        (S is zeroed first; close it also after a failure)
 *   mech_session_result  the result dict of mech_simulate from what the run holds
 *   mech_session_close   release everything
 * The session holds pointers into itself (the events' context, the problem's): it must
 * not move between open and close. */
#include "mech_py.h"
#include "options.h"
#include "formulation.h"

/* the keywords of mech_simulate beyond run_args */
typedef struct sim_args {
    mech_handle *mh;
    const char *method;
    int kind, contact_switching, linalg;
    mb_form_options fo;
    int *independent;  /* owned (fo.prefer) */
    PyObject *tree;    /* the capsule of fo.tree (formulation="joint"), held; or NULL */
    struct mech_sens *sens; /* the sens= keyword (sens_mech.h), owned; or NULL */
} sim_args;

/* the run's events (the user's, then the contacts) at full (q, q') when the formulation
 * integrates other variables (the state space: Newton from the last accepted point) */
typedef struct full_events {
    mb_formulation *F;
    mb_event_fn events;
    void *ctx;
    double *y;  /* 2 nq */
} full_events;

typedef struct mech_session {
    run_args ra;
    sim_args s;
    run_ctx r;
    mb_formulation F;
    mb_dae_options dae;
    full_events ev;
    PyObject *y0f;      /* the formulation's y0 (owned) */
    PyObject *atol_in;  /* the caller's atol over (q, q') (owned: r.o.atol may point into it) */
    mb_problem p;
} mech_session;

int mech_session_open(mech_session *S, PyObject *a, PyObject *kw);
PyObject *mech_session_result(mech_session *S);
/* the same with at(t, ctx) called before the outputs (q'', lambda) of each point at t: a
 * run whose problem changed during it (the stepper's inputs) puts its tables as they
 * were at t */
PyObject *mech_session_result_at(mech_session *S, void (*at)(double t, void *ctx), void *ctx);
void mech_session_close(mech_session *S);

/* The session of _core.solve (module.c), the same way: ode_session_open parses solve's
 * keywords into the problem (a Python or C right-hand side, Jacobian, mass, sparsity),
 * ode_session_close releases it; the result is result_dict_of_run(&S->r). */
typedef struct ode_session {
    run_args ra;
    run_ctx r;
    int begun;          /* run_begin done: r to free */
    mb_problem p;
    problem_ctx pc;
    py_fun_ctx pyf;
    c_fun_ctx cf;
    jac_ctx jc;
    PyObject *mass, *sp;  /* float64 / uint8 arrays (n x n) or NULL */
    /* sensitivities (solve's sens=, sens.h): p is then the augmented problem over pb */
    mb_problem pb;
    struct mb_sens *sens;
    double *sens_work;    /* PyMem */
    PyObject *sens_p;     /* the parameter array (args[0]) whose entries are perturbed */
} ode_session;

/* solve_py.c: the sensitivity entries of solve's result dict ("sens_index": the index
 * in the augmented state of each (block, component), "nfev_base", "njev_base"), when
 * the session ran with sens=; 0 or -1 */
int ode_session_sens_result(ode_session *S, PyObject *out);

int ode_session_open(ode_session *S, PyObject *a, PyObject *kw);
void ode_session_close(ode_session *S);

/* simulator_py.c: the type _core.MechStepper added to the module; 0 or -1 */
int mech_stepper_add_type(PyObject *mod);

#endif
