/* The formulation interface (formulation.h): the table of formulations and the calls
 * through their operations. */
#include "formulation.h"
#include <string.h>
#include "mbs_common.h"
#include "status.h"

#define MB_FORMULATION(KIND, CODE, NAME, OPS) extern const mb_form_ops OPS;
#include "formulations.def"
#undef MB_FORMULATION

static const struct {
    int kind;
    const char *name;
    const mb_form_ops *ops;
} table[] = {
#define MB_FORMULATION(KIND, CODE, NAME, OPS) {KIND, NAME, &OPS},
#include "formulations.def"
#undef MB_FORMULATION
};
enum { NTABLE = sizeof table / sizeof table[0] };

const char *mb_form_name(int kind)
{
    for (int k = 0; k < NTABLE; k++)
        if (table[k].kind == kind) return table[k].name;
    return NULL;
}

int mb_form_kind_of(const char *name)
{
    for (int k = 0; name && k < NTABLE; k++)
        if (strcmp(table[k].name, name) == 0) return table[k].kind;
    return -1;
}

int mb_form_open(mb_formulation *F, int kind, const mb_mech *mech, const mb_form_options *o)
{
    static const mb_form_options defaults;
    memset(F, 0, sizeof *F);
    for (int k = 0; k < NTABLE; k++)
        if (table[k].kind == kind) F->ops = table[k].ops;
    if (!F->ops)
        return MB_FAIL(F, MB_ERR_ILL_INPUT, "formulation: unknown kind %d.", kind);
    if (!mech || mech->nq <= 0)
        return MB_FAIL(F, MB_ERR_ILL_INPUT, "formulation '%s': no mechanism (nq > 0).",
                       mb_form_name(kind));
    F->kind = kind;
    F->name = mb_form_name(kind);
    F->mech = mech;
    F->nq = mech->nq;
    F->nc = mech->nc;
    int rc = F->ops->open(F, o ? o : &defaults);
    if (rc != MB_OK) {
        F->ops->close(F);
        F->impl = NULL;
    }
    return rc;
}

void mb_form_close(mb_formulation *F)
{
    if (F->ops && F->impl)
        F->ops->close(F);
    F->impl = NULL;
}

int mb_form_initial(mb_formulation *F, double t0, const double *q0, const double *qd0,
                    const double *atol, double *y0, const double **atol_y)
{
    return F->ops->initial(F, t0, q0, qd0, atol, y0, atol_y);
}

void mb_form_problem(mb_formulation *F, mb_problem *p)
{
    F->ops->problem(F, p);
}

int mb_form_sundials(mb_formulation *F, const char *method, mb_form_ida *ida)
{
    memset(ida, 0, sizeof *ida);
    return F->ops->sundials(F, method, ida);
}

int mb_form_changed(mb_formulation *F)
{
    switch (F->kind) {
    case MB_FORM_INDEX1:
        mb_form_index1_changed(F);
        return MB_OK;
    case MB_FORM_INDEX1_DAE: case MB_FORM_INDEX2: case MB_FORM_INDEX3: case MB_FORM_GGL:
        return MB_OK;  /* they keep M(q) only (dae.c), which no force changes */
    case MB_FORM_JOINT:
        return mb_form_joint_changed(F);
    default:
        return MB_ERR_NOT_SUPPORTED;
    }
}

int mb_form_params_changed(mb_formulation *F)
{
    switch (F->kind) {
    case MB_FORM_INDEX1:
        return mb_form_index1_params_changed(F);
    case MB_FORM_INDEX1_DAE: case MB_FORM_INDEX2: case MB_FORM_INDEX3: case MB_FORM_GGL:
        mb_form_dae_params_changed(F);
        return MB_OK;
    case MB_FORM_JOINT:
        return mb_form_joint_changed(F);
    default:
        return MB_ERR_NOT_SUPPORTED;
    }
}

int mb_form_maps_state(const mb_formulation *F)
{
    return F->ops->full != NULL;
}

int mb_form_full(mb_formulation *F, double t, const double *y, double *q, double *qd)
{
    if (F->ops->full)
        return F->ops->full(F, t, y, q, qd);
    memcpy(q, y, (size_t)F->nq * sizeof(double));
    memcpy(qd, y + F->nq, (size_t)F->nq * sizeof(double));
    return MB_OK;
}

int mb_form_outputs(mb_formulation *F, double t, const double *y, double *q, double *qd,
                    double *qdd, double *lam)
{
    return F->ops->outputs(F, t, y, q, qd, qdd, lam);
}

const char *mb_form_why(const mb_formulation *F, int status)
{
    return F->ops->why ? F->ops->why(F, status) : NULL;
}
