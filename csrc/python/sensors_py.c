/* _core.sensor_layout and _core.sensors_eval: the sensors of mbint/mbs/sensors.py,
 * evaluated over a trajectory's output times by csrc/mbs/sensors.c in one call. */
#include "mech_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include "convert.h"
#include "sensors.h"
#include "status.h"

const char sensor_layout_doc[] =
"sensor_layout() -> dict\n--\n\n"
"The column names of a sensor row (\"columns\") and the kind codes (\"kinds\"):\n"
"the packed table of csrc/mbs/sensors.h.";

PyObject *sensor_layout(PyObject *self, PyObject *noargs)
{
    (void)self; (void)noargs;
    PyObject *cols = PyTuple_New(MB_SENSOR_NCOL);
    if (!cols) return NULL;
    for (int c = 0; c < MB_SENSOR_NCOL; c++) {
        PyObject *s = PyUnicode_FromString(mb_sensor_col_name(c));
        if (!s) {
            Py_DECREF(cols);
            return NULL;
        }
        PyTuple_SET_ITEM(cols, c, s);
    }
    return Py_BuildValue(
        "{s:N,s:{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}}", "columns", cols,
        "kinds", "position", MB_SENSOR_POSITION, "velocity", MB_SENSOR_VELOCITY,
        "acceleration", MB_SENSOR_ACCELERATION, "angular_velocity", MB_SENSOR_ANGULAR_VELOCITY,
        "angular_acceleration", MB_SENSOR_ANGULAR_ACCELERATION,
        "relative_angle", MB_SENSOR_RELATIVE_ANGLE, "relative_rate", MB_SENSOR_RELATIVE_RATE,
        "distance", MB_SENSOR_DISTANCE, "distance_rate", MB_SENSOR_DISTANCE_RATE,
        "tsda", MB_SENSOR_TSDA, "rsda", MB_SENSOR_RSDA, "contact_line", MB_SENSOR_CONTACT_LINE,
        "contact_circles", MB_SENSOR_CONTACT_CIRCLES, "tire", MB_SENSOR_TIRE);
}

/* a C-contiguous float64 (nq, m) array */
static PyArrayObject *as_series(PyObject *o, ptrdiff_t nq, ptrdiff_t m, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_DOUBLE, 2, 2,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a) return NULL;
    if ((nq >= 0 && PyArray_DIM(a, 0) != nq) || PyArray_DIM(a, 1) != m) {
        PyErr_Format(PyExc_ValueError, "sensors_eval: %s must have shape (nq, %zd), got "
                     "(%zd, %zd).", what, (Py_ssize_t)m, (Py_ssize_t)PyArray_DIM(a, 0),
                     (Py_ssize_t)PyArray_DIM(a, 1));
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

const char sensors_eval_doc[] =
"sensors_eval(table, t, q, qd, qdd) -> ndarray\n--\n\n"
"Every sensor of table (shape (ns, ncol), sensor_layout()) at the m times t from\n"
"q, qd, qdd of shape (nq, m) (component-major, as Trajectory.q): an array of shape\n"
"(ncomp, m), the components of sensor 0, then sensor 1, ... (csrc/mbs/sensors.h).\n"
"ValueError for a row with a bad kind, dimension, body or frame index.";

PyObject *sensors_eval(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"table", "t", "q", "qd", "qdd", NULL};
    PyObject *to, *tt, *qo, *vo, *ao;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO", kwlist, &to, &tt, &qo, &vo, &ao))
        return NULL;
    PyArrayObject *tab = (PyArrayObject *)as_table_object(to, -1, MB_SENSOR_NCOL,
                                                          "sensors_eval: table");
    PyArrayObject *t = NULL, *q = NULL, *qd = NULL, *qdd = NULL, *out = NULL;
    if (!tab) return NULL;
    t = as_vec(tt, -1, "sensors_eval: t");
    if (!t) goto fail;
    ptrdiff_t m = PyArray_SIZE(t), ns = PyArray_DIM(tab, 0);
    if (!(q = as_series(qo, -1, m, "q"))) goto fail;
    ptrdiff_t nq = PyArray_DIM(q, 0);
    if (!(qd = as_series(vo, nq, m, "qd")) || !(qdd = as_series(ao, nq, m, "qdd"))) goto fail;
    const double *T = PyArray_DATA(tab);
    ptrdiff_t ncomp = 0;
    for (ptrdiff_t s = 0; s < ns; s++) {
        int nc = mb_sensor_ncomp(T + s * MB_SENSOR_NCOL);
        if (nc < 0) {
            PyErr_Format(PyExc_ValueError, "sensors_eval: table row %zd: unknown kind or "
                         "dimension.", (Py_ssize_t)s);
            goto fail;
        }
        ncomp += nc;
    }
    npy_intp dims[2] = {ncomp, m};
    out = (PyArrayObject *)PyArray_ZEROS(2, dims, NPY_DOUBLE, 0);
    if (!out) goto fail;
    int dim = ns > 0 ? (int)T[MB_SC_COL_DIM] : 2;
    double *work = PyMem_Malloc((size_t)(mb_sensors_work(nq, dim) + 1) * sizeof(double));
    if (!work) {
        PyErr_NoMemory();
        goto fail;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mb_sensors_eval(ns, T, m, PyArray_DATA(t), nq, PyArray_DATA(q), PyArray_DATA(qd),
                         PyArray_DATA(qdd), PyArray_DATA(out), work);
    Py_END_ALLOW_THREADS
    PyMem_Free(work);
    if (rc != MB_OK) {
        PyErr_Format(PyExc_ValueError, "sensors_eval: a sensor names a body or frame outside "
                     "the model, or its dimension does not fit nq = %zd (status %d: %s).",
                     (Py_ssize_t)nq, rc, mb_status_str(rc));
        goto fail;
    }
    Py_DECREF(tab);
    Py_DECREF(t);
    Py_DECREF(q);
    Py_DECREF(qd);
    Py_DECREF(qdd);
    return (PyObject *)out;
fail:
    Py_XDECREF(tab);
    Py_XDECREF(t);
    Py_XDECREF(q);
    Py_XDECREF(qd);
    Py_XDECREF(qdd);
    Py_XDECREF(out);
    return NULL;
}
