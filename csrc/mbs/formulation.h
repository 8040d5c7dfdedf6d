#ifndef MB_MBS_FORMULATION_H
#define MB_MBS_FORMULATION_H
/* mb_formulation: how a mechanism (mech.h) is presented to an integrator.
 *
 * A run is a point in model kind x formulation x method.  The model fills an mb_mech
 * table, a method takes an mb_problem; a formulation stands between them.  Every
 * formulation answers the same questions, through one table of operations
 * (mb_form_ops, a content pointer plus an ops table as SUNDIALS' objects):
 *
 *   open       set up from a mechanism and options (mb_form_options)
 *   initial    the consistent initial state y0 of the integrated variables from
 *              (q0, q0') and the absolute tolerances that go with y0's layout
 *   problem    fill an mb_problem (rhs, jac, mass, dae_index, check, project, ...)
 *   sundials   whether a SUNDIALS method runs on it (they keep their own step loop),
 *              and what IDA needs to (algebraic components, y'(t0), the iteration
 *              matrix of the residual view, which components leave the error test)
 *   full       (q, q') of an integrated state during the run, for events (NULL when
 *              y begins with q and q')
 *   outputs    the full state q, q', q'', lambda of an output after the run
 *   why        the formulation's own explanation of a failed run, or NULL
 *   close      free
 *
 * The formulations (formulations.def):
 *   kind                  y                    file
 *   MB_FORM_INDEX1        (q, q')              form_index1.c over index1.c (LLM eqs 9-15)
 *   MB_FORM_INDEX1_DAE    (q, v, lambda)       form_dae.c over dae.c (LS eqs 1-4)
 *   MB_FORM_INDEX2        (q, v, lambda)
 *   MB_FORM_INDEX3        (q, v, lambda)
 *   MB_FORM_GGL           (q, v, lambda, mu)
 *   MB_FORM_STATE_SPACE   (v, v')              form_state_space.c over statespace.c (RN
 *                                              eqs 4-10), v the independent coordinates
 *   MB_FORM_JOINT         (x, x')              form_joint.c over joint_tree.c (ABA), x the
 *                                              joint coordinates of a tree (options.tree)
 * The DAE codes are those of mb_dae_kind (dae.h).
 *
 * Adding a formulation: its engine (a file of csrc/mbs over mb_mech), its operations
 * in a form_<name>.c, one line in formulations.def, and its row in the Python table of
 * mbint/mbs/formulations.py (allowed methods, state size, atol layout).
 *
 * Errors: every operation returns MB_OK or a status (status.def); F->msg says why. */
#include <stddef.h>
#include "mech.h"
#include "problem.h"

enum mb_form_kind {
#define MB_FORMULATION(KIND, CODE, NAME, OPS) KIND = CODE,
#include "formulations.def"
#undef MB_FORMULATION
    MB_FORM_COUNT
};

/* Options of a formulation; zero-initialized means every default. */
typedef struct mb_form_options {
    double alpha, beta;     /* Baumgarte terms gamma - 2 alpha Phi' - beta^2 Phi (index1) */
    int linalg;             /* index1: 0 automatic, 1 dense, 2 sparse */
    int project;            /* project (q, q') onto the constraints after every accepted
                             * step (index1 and the DAEs; the state space satisfies them by
                             * construction and refuses it) */
    double proj_tol;        /* tolerance of the projection / of the state space's Newton
                             * for the dependent coordinates (<= 0: the default) */
    int proj_max_iter;      /* their iteration limit (<= 0: the default) */
    const int *prefer;      /* state space: coordinates to keep independent where the
                             * configuration allows (nprefer of them), or NULL: those of
                             * the stiff force elements (form_state_space.c) */
    ptrdiff_t nprefer;
    int pivoting;           /* state space without prefer: nonzero, the RN paper's full
                             * pivoting alone (no preference) */
    /* joint: the kinematic tree of the mechanism (joint_tree.h), whose body i is the
     * mechanism's spatial body tree_body[i] (q at 7 tree_body[i]: centre of mass and
     * Euler parameters), or its planar body (q at 3 tree_body[i]: x, y, theta of the
     * centre of mass; the mechanism's forces then act through the tree: form_joint.c);
     * the mechanism's mb_mech is still the one of its body
     * coordinates, which the formulation's initial, full and outputs map from and to.
     * Both NULL for the other formulations. */
    const struct mb_jtree *tree;
    const int *tree_body;
} mb_form_options;

/* What IDA needs of a formulation with a residual view (sundials): copied into the
 * adapter's mb_dae_options by the caller (methods/sundials.h). */
typedef struct mb_form_ida {
    const unsigned char *algebraic; /* 1 for an algebraic component (n), or NULL: none */
    const double *yp0;              /* consistent y'(t0) (n), or NULL */
    int suppress_alg;               /* leave the algebraic components out of the error test
                                     * (index-2 multipliers) */
    /* dF/dy + cj dF/dy' of the residual view, or NULL (differences) */
    int (*jac)(double t, double cj, const double *y, const double *yp, double *J,
               ptrdiff_t ld, void *ctx);
} mb_form_ida;

struct mb_form_ops;

typedef struct mb_formulation {
    const struct mb_form_ops *ops;
    int kind;
    const char *name;       /* the kind's name (formulations.def) */
    const mb_mech *mech;
    ptrdiff_t nq, nc;
    ptrdiff_t n;            /* size of the integrated state y (after open) */
    int sparse;             /* 1 when it chose sparse linear algebra (index1's KLU mode) */
    void *impl;             /* the concrete formulation (form_*.c) */
    char msg[256];          /* why the last operation failed */
} mb_formulation;

typedef struct mb_form_ops {
    const char *name;
    int (*open)(mb_formulation *F, const mb_form_options *o);
    void (*close)(mb_formulation *F);
    /* y0 (n) from (q0, q0') at t0; atol (2 nq, over (q, q'), or n for the DAEs: their
     * layout, mbint/mbs/formulations.py) -> *atol_y, the tolerances over y for the run
     * (valid until close; the state space rewrites them at every change of its
     * coordinates); yp0 (n, or NULL): y'(t0) where the formulation knows it */
    int (*initial)(mb_formulation *F, double t0, const double *q0, const double *qd0,
                   const double *atol, double *y0, const double **atol_y);
    void (*problem)(mb_formulation *F, mb_problem *p);
    int (*sundials)(mb_formulation *F, const char *method, mb_form_ida *ida);
    int (*full)(mb_formulation *F, double t, const double *y, double *q, double *qd);
    int (*outputs)(mb_formulation *F, double t, const double *y, double *q, double *qd,
                   double *qdd, double *lam);
    const char *(*why)(const mb_formulation *F, int status);
} mb_form_ops;

/* The formulation of kind over mech with options o (NULL: defaults).  On failure F->msg
 * says why and nothing is left to close. */
int mb_form_open(mb_formulation *F, int kind, const mb_mech *mech, const mb_form_options *o);
void mb_form_close(mb_formulation *F);
/* the name of a kind ("index1", "index1_dae", "index2", "index3", "ggl", "state_space"),
 * or NULL */
const char *mb_form_name(int kind);
/* the kind of a name, or -1 */
int mb_form_kind_of(const char *name);

int mb_form_initial(mb_formulation *F, double t0, const double *q0, const double *qd0,
                    const double *atol, double *y0, const double **atol_y);
void mb_form_problem(mb_formulation *F, mb_problem *p);
/* MB_OK when the SUNDIALS method runs on F (ida gets *ida filled; zeroed otherwise), else
 * MB_ERR_NOT_SUPPORTED with F->msg naming what does */
int mb_form_sundials(mb_formulation *F, const char *method, mb_form_ida *ida);
/* A force of the mechanism changed between two pieces of a run (the Simulator's
 * inputs): the formulation forgets what it keeps of Q (index1's saddle-point solution
 * cached on (t, y)).  MB_OK, or MB_ERR_NOT_SUPPORTED for a formulation that cannot say
 * (the state space keeps evaluations in its coordinates). */
int mb_form_changed(mb_formulation *F);
/* A parameter of the mechanism (a mass, a force element's or joint's table entry) changed
 * (the sensitivities' perturbations, csrc/python/sens_mech.c): the formulation forgets
 * everything derived from the tables (index1's (t, y) cache and its Schur path's
 * diag(M)^-1, the DAEs' factored M).  MB_OK, or MB_ERR_NOT_SUPPORTED (the state space).
 * The joint formulation's tree is a copy of the masses and joint geometry: only the
 * mechanism's forces may change under it (the caller refuses the rest). */
int mb_form_params_changed(mb_formulation *F);
/* form_index1.c, form_dae.c: mb_form_params_changed of those formulations */
int mb_form_index1_params_changed(mb_formulation *F);
void mb_form_dae_params_changed(mb_formulation *F);
/* form_index1.c: mb_form_changed of the index-1 formulation */
void mb_form_index1_changed(mb_formulation *F);
/* form_joint.c: mb_form_changed of the joint formulation: MB_OK on a planar tree (its
 * forces are the mechanism's, evaluated afresh at every call), MB_ERR_NOT_SUPPORTED on a
 * URDF tree (its inputs are copies in the tree's table) */
int mb_form_joint_changed(mb_formulation *F);
/* whether events must see full states through mb_form_full (y is not (q, q', ...)) */
int mb_form_maps_state(const mb_formulation *F);
/* (q, q') of an integrated state during the run (q, qd: nq each) */
int mb_form_full(mb_formulation *F, double t, const double *y, double *q, double *qd);
/* q, q', q'' (nq each) and lambda (nc) of an output (t, y) after the run; any may be NULL */
int mb_form_outputs(mb_formulation *F, double t, const double *y, double *q, double *qd,
                    double *qdd, double *lam);
/* the formulation's explanation of a run that ended with status, or NULL */
const char *mb_form_why(const mb_formulation *F, int status);

#endif
