#ifndef MB_PYTHON_MECH_PY_H
#define MB_PYTHON_MECH_PY_H
/* Internal to csrc/python: the mech handle behind the capsules of planar_py.c (planar
 * models), spatial_py.c (spatial models) and system_py.c (MechanicalSystem kernels),
 * owned by mech_handle.c, evaluated by mech_eval.c, simulated by simulate_py.c, and the
 * entry points of those files that module.c registers. */
#include "problem_py.h"
#include "model.h"
#include "spatial.h"
#include "statespace.h"

#define HANDLE_NAME "mbint.mech"

/* the kernels of a MechanicalSystem; one slot per mb_mech entry */
enum {
    S_MASS, S_FORCES, S_PHI, S_PHI_Q, S_PHI_T, S_GAMMA, S_FORCES_Q, S_FORCES_QD,
    S_GAMMA_Q, S_GAMMA_QD, S_PHIQ_X_Q, S_PHIQT_LAM_Q, S_COUNT
};
typedef struct slot {
    PyObject *py;   /* Python callable, or NULL */
    void *cf;       /* C function, or NULL */
    void *ud;       /* its user data */
} slot;

typedef struct mech_handle {
    mb_mech mech;
    ptrdiff_t nq, nc;
    int python;               /* a kernel calls Python: run with the GIL held */
    int linalg;               /* index-1 linear algebra: 0 auto, 1 dense, 2 sparse
                               * (_core.mech_set_linalg; zero-initialized: auto) */
    /* planar model */
    int planar;
    mb_planar_model pm;
    double *body;
    mb_planar_joint *joints;
    mb_planar_force *forces;
    ptrdiff_t ncontact;
    PyObject *extra;          /* extra(t, q, qd) -> Q_extra (nq,), or NULL */
    /* MechanicalSystem */
    slot s[S_COUNT];
    double *M_const;          /* constant mass matrix (column-major) or NULL */
    int phi_t_zero;           /* constraints do not depend on t */
    /* spatial model (spatial_py.c; released by spatial_release) */
    int spatial;
    mb_spatial_model sm;
    double *sbody;
    mb_spatial_con *scons;
    mb_spatial_force *sforces;
    mb_spatial_cbforce *scb;
    struct spatial_pycb *scb_py;  /* one per callback: the Python callable or NULL */
    /* the builder's own release of what it added (spatial_py.c), or NULL */
    void (*release)(struct mech_handle *h);
} mech_handle;

/* mech_handle.c: the capsule owning h (h is released when the capsule cannot be made);
 * the handle of a capsule, or NULL with TypeError; _core.mech_info, mech_set_linalg */
PyObject *new_handle_capsule(mech_handle *h);
mech_handle *mech_handle_get(PyObject *o);
PyObject *mech_info(PyObject *self, PyObject *ho);
extern const char mech_info_doc[];
PyObject *mech_set_linalg(PyObject *self, PyObject *args);
extern const char mech_set_linalg_doc[];
/* mech_eval.c: _core.mech_eval, _core.mech_project */
PyObject *mech_eval(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_eval_doc[];
PyObject *mech_project(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_project_doc[];
/* simulate_py.c: _core.mech_simulate (one path over the formulations, formulation.h) and
 * _core.formulations */
PyObject *mech_simulate(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_simulate_doc[];
PyObject *mech_formulations(PyObject *self, PyObject *noargs);
/* form_probe_py.c: a formulation's f and df/dy at given states */
PyObject *form_probe(PyObject *self, PyObject *args, PyObject *kw);
extern const char form_probe_doc[];
extern const char mech_formulations_doc[];
/* rank_py.c: _core.mech_initial_check, _core.mech_phi_q_sparse, _core.gram_dependent
 * (check_initial_conditions) */
PyObject *mech_initial_check(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_initial_check_doc[];
PyObject *mech_phi_q_sparse(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_phi_q_sparse_doc[];
PyObject *gram_dependent(PyObject *self, PyObject *args, PyObject *kw);
extern const char gram_dependent_doc[];
/* statespace_py.c: _core.mech_ss_eval, _core.mech_ss_recover; and the state-space part
 * of a run's result: full rows of m reduced outputs through the log (yf m x 2 nq, qdd
 * m x nq, lam m x nc; NULL: not wanted; NaN rows where recovery fails; the first
 * failure's status), the log, partitions and statistics into the dict d (0 or -1) */
PyObject *mech_ss_eval(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_ss_eval_doc[];
PyObject *mech_ss_recover(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_ss_recover_doc[];
int mech_ss_rows(mb_ss *ss, ptrdiff_t m, const double *t, const double *y, double *yf,
                 double *qdd, double *lam);
int mech_ss_export(PyObject *d, const mb_ss *ss);
/* _core.sensor_layout and _core.sensors_eval (sensors_py.c) */
PyObject *sensor_layout(PyObject *self, PyObject *noargs);
extern const char sensor_layout_doc[];
PyObject *sensors_eval(PyObject *self, PyObject *args, PyObject *kw);
extern const char sensors_eval_doc[];
/* _core.planar_layout and _core.mech_planar (planar_py.c) */
PyObject *planar_layout(PyObject *self, PyObject *noargs);
extern const char planar_layout_doc[];
PyObject *mech_planar(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_planar_doc[];
/* _core.spatial_layout, _core.mech_spatial and the release of a spatial handle's
 * tables (spatial_py.c) */
PyObject *spatial_layout(PyObject *self, PyObject *noargs);
extern const char spatial_layout_doc[];
PyObject *mech_spatial(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_spatial_doc[];
/* _core.jtree_new, _core.jtree_eval and the tree of a capsule, or NULL with an
 * exception (joint_py.c) */
PyObject *jtree_new(PyObject *self, PyObject *args, PyObject *kw);
extern const char jtree_new_doc[];
PyObject *jtree_eval(PyObject *self, PyObject *args, PyObject *kw);
extern const char jtree_eval_doc[];
struct mb_jtree;
const struct mb_jtree *jtree_get(PyObject *o);
const int *jtree_body(PyObject *o);  /* the mechanism's body of each tree body (-1: none) */
/* _core.mech_system (system_py.c) */
PyObject *mech_system(PyObject *self, PyObject *args, PyObject *kw);
extern const char mech_system_doc[];

#endif
