/* The mech handle (mech_py.h): a PyCapsule "mbint.mech" owning an mb_mech (mbs/mech.h)
 * and what its kernels need (the parsed tables of a planar or spatial model, the
 * kernels of a MechanicalSystem); _core.mech_info and _core.mech_set_linalg. */
#include "mech_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static void handle_release(mech_handle *h)
{
    for (int k = 0; k < S_COUNT; k++)
        Py_XDECREF(h->s[k].py);
    Py_XDECREF(h->extra);
    PyMem_Free(h->body);
    PyMem_Free(h->joints);
    PyMem_Free(h->forces);
    PyMem_Free(h->M_const);
    if (h->release)  /* the builder's own tables (spatial_py.c) */
        h->release(h);
    PyMem_Free(h);
}

static void handle_free(PyObject *capsule)
{
    mech_handle *h = PyCapsule_GetPointer(capsule, HANDLE_NAME);
    if (h)
        handle_release(h);
}

mech_handle *mech_handle_get(PyObject *o)
{
    if (!PyCapsule_IsValid(o, HANDLE_NAME)) {
        PyErr_SetString(PyExc_TypeError, "expected a mech handle (from _core.mech_planar or "
                                         "_core.mech_system).");
        return NULL;
    }
    return PyCapsule_GetPointer(o, HANDLE_NAME);
}

PyObject *new_handle_capsule(mech_handle *h)
{
    PyObject *c = PyCapsule_New(h, HANDLE_NAME, handle_free);
    if (!c)
        handle_release(h);
    return c;
}

const char mech_set_linalg_doc[] =
"mech_set_linalg(handle, code) -> None\n--\n\n"
"The linear algebra of the index-1 formulation on this handle from now on (every\n"
"kernel evaluation, projection and run that does not name its own): 0 automatic\n"
"(sparse KLU for a planar model with at least MB_INDEX1_SPARSE_MIN_NQ coordinates,\n"
"else dense), 1 dense, 2 sparse (a RuntimeError at first use when the mechanism\n"
"has no sparse kernels).";

PyObject *mech_set_linalg(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ho;
    int code;
    if (!PyArg_ParseTuple(args, "Oi", &ho, &code))
        return NULL;
    mech_handle *h = mech_handle_get(ho);
    if (!h)
        return NULL;
    if (code < 0 || code > 2)
        return PyErr_Format(PyExc_ValueError, "mech_set_linalg: unknown code %d.", code);
    h->linalg = code;
    Py_RETURN_NONE;
}

const char mech_info_doc[] =
"mech_info(handle) -> dict\n--\n\n"
"nq, nc, whether a kernel calls Python, the number of contacts, whether the mechanism\n"
"has the sparse kernels of linear_algebra='sparse', and which derivative kernels are\n"
"analytic (True) or left to finite differences (False).";

PyObject *mech_info(PyObject *self, PyObject *ho)
{
    (void)self;
    mech_handle *h = mech_handle_get(ho);
    if (!h)
        return NULL;
    const mb_mech *m = &h->mech;
    return Py_BuildValue("{s:n,s:n,s:O,s:O,s:O,s:n,s:O,s:O,s:{s:O,s:O,s:O,s:O,s:O,s:O,s:O}}",
                         "nq", (Py_ssize_t)h->nq, "nc", (Py_ssize_t)h->nc,
                         "python", h->python ? Py_True : Py_False,
                         "planar", h->planar ? Py_True : Py_False,
                         "spatial", h->spatial ? Py_True : Py_False,
                         "ncontact", (Py_ssize_t)h->ncontact,
                         "sparse", m->sparse ? Py_True : Py_False,
                         "mass_constant", m->mass_constant ? Py_True : Py_False,
                         "analytic",
                         "forces_q", m->forces_q ? Py_True : Py_False,
                         "forces_qd", m->forces_qd ? Py_True : Py_False,
                         "phiq_x_q", m->phiq_x_q ? Py_True : Py_False,
                         "phiqT_lam_q", m->phiqT_lam_q ? Py_True : Py_False,
                         "gamma_q", m->gamma_q ? Py_True : Py_False,
                         "gamma_qd", m->gamma_qd ? Py_True : Py_False,
                         "mass_x_q", m->mass_x_q ? Py_True : Py_False);
}
