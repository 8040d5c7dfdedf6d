/* csrc/mbs/sensors.c without Python: a planar pendulum state against the closed forms
 * of its tip, a spatial body turned about z against the rotation by hand, the force
 * laws, the status of bad rows, and the work formula (ASan checks the bounds). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "sensors.h"
#include "status.h"

static void row_init(double *row, int kind, int dim, int i, int j, int frame)
{
    memset(row, 0, MB_SENSOR_NCOL * sizeof(double));
    row[MB_SC_COL_KIND] = kind;
    row[MB_SC_COL_DIM] = dim;
    row[MB_SC_COL_I] = i;
    row[MB_SC_COL_J] = j;
    row[MB_SC_COL_FRAME] = frame;
}

static int close(double a, double b, double tol) { return fabs(a - b) <= tol; }

static void planar(void)
{
    /* a rod of half-length a on a pin at the origin: centre a e(th), tip 2a e(th) */
    const double a = 0.5, th[2] = {0.3, -1.2}, w[2] = {1.7, -0.4}, al[2] = {-2.0, 0.9};
    enum { M = 2, NQ = 3, NS = 6 };
    double q[NQ * M], qd[NQ * M], qdd[NQ * M], t[M] = {0.0, 1.0};
    for (int k = 0; k < M; k++) {
        double c = cos(th[k]), s = sin(th[k]);
        q[0 * M + k] = a * c;
        q[1 * M + k] = a * s;
        q[2 * M + k] = th[k];
        qd[0 * M + k] = -a * s * w[k];
        qd[1 * M + k] = a * c * w[k];
        qd[2 * M + k] = w[k];
        qdd[0 * M + k] = -a * s * al[k] - a * c * w[k] * w[k];
        qdd[1 * M + k] = a * c * al[k] - a * s * w[k] * w[k];
        qdd[2 * M + k] = al[k];
    }
    double T[NS * MB_SENSOR_NCOL];
    int kinds[3] = {MB_SENSOR_POSITION, MB_SENSOR_VELOCITY, MB_SENSOR_ACCELERATION};
    for (int r = 0; r < 3; r++) {
        row_init(T + r * MB_SENSOR_NCOL, kinds[r], 2, 0, -1, -1);
        T[r * MB_SENSOR_NCOL + MB_SC_COL_SI] = a;
    }
    /* the tip's acceleration in the rod's frame: (-2a w^2, 2a alpha) */
    row_init(T + 3 * MB_SENSOR_NCOL, MB_SENSOR_ACCELERATION, 2, 0, -1, 0);
    T[3 * MB_SENSOR_NCOL + MB_SC_COL_SI] = a;
    /* a TSDA from the pin to the tip: l = 2a, l' = 0 */
    row_init(T + 4 * MB_SENSOR_NCOL, MB_SENSOR_TSDA, 2, -1, 0, -1);
    T[4 * MB_SENSOR_NCOL + MB_SC_COL_SJ] = a;
    T[4 * MB_SENSOR_NCOL + MB_SC_COL_K] = 10.0;
    T[4 * MB_SENSOR_NCOL + MB_SC_COL_C] = 3.0;
    T[4 * MB_SENSOR_NCOL + MB_SC_COL_L0] = 0.75;
    T[4 * MB_SENSOR_NCOL + MB_SC_COL_FA1] = 2.0;  /* fa = 2 t */
    /* the tip against the line y = 0.5 (normal +y, a point): delta = 0.5 - y_tip */
    row_init(T + 5 * MB_SENSOR_NCOL, MB_SENSOR_CONTACT_LINE, 2, 0, -1, -1);
    T[5 * MB_SENSOR_NCOL + MB_SC_COL_SI] = a;
    T[5 * MB_SENSOR_NCOL + MB_SC_COL_P01] = 0.5;
    T[5 * MB_SENSOR_NCOL + MB_SC_COL_NRM1] = 1.0;
    T[5 * MB_SENSOR_NCOL + MB_SC_COL_KC] = 100.0;
    T[5 * MB_SENSOR_NCOL + MB_SC_COL_EXP] = 2.0;
    int ncomp = 0;
    for (int r = 0; r < NS; r++) ncomp += mb_sensor_ncomp(T + r * MB_SENSOR_NCOL);
    CHECK(ncomp == 10, "planar components: %d", ncomp);
    double out[10 * M];
    double *work = malloc((size_t)mb_sensors_work(NQ, 2) * sizeof(double));
    int rc = mb_sensors_eval(NS, T, M, t, NQ, q, qd, qdd, out, work);
    CHECK(rc == MB_OK, "planar eval: status %d", rc);
    double L = 2 * a;
    for (int k = 0; k < M; k++) {
        double c = cos(th[k]), s = sin(th[k]);
        CHECK(close(out[0 * M + k], L * c, 1e-14) && close(out[1 * M + k], L * s, 1e-14),
              "tip position at %d", k);
        CHECK(close(out[2 * M + k], -L * s * w[k], 1e-14) &&
              close(out[3 * M + k], L * c * w[k], 1e-14), "tip velocity at %d", k);
        CHECK(close(out[4 * M + k], L * (-s * al[k] - c * w[k] * w[k]), 1e-13) &&
              close(out[5 * M + k], L * (c * al[k] - s * w[k] * w[k]), 1e-13),
              "tip acceleration at %d", k);
        CHECK(close(out[6 * M + k], -L * w[k] * w[k], 1e-13) &&
              close(out[7 * M + k], L * al[k], 1e-13), "tip acceleration in the rod frame %d", k);
        CHECK(close(out[8 * M + k], 10.0 * (L - 0.75) + 2.0 * t[k], 1e-13), "TSDA force %d", k);
        double delta = 0.5 - L * s;
        double F = delta > 0 ? 100.0 * delta * delta + 0.0 : 0.0;
        CHECK(close(out[9 * M + k], F, 1e-12), "contact force %d: %g vs %g", k, out[9 * M + k], F);
    }
    /* bad rows: a body outside the model, a frame outside, an unknown kind, mixed dims */
    T[0 * MB_SENSOR_NCOL + MB_SC_COL_I] = 1;
    CHECK(mb_sensors_eval(NS, T, M, t, NQ, q, qd, qdd, out, work) == MB_ERR_ILL_INPUT,
          "a body outside the model is refused");
    T[0 * MB_SENSOR_NCOL + MB_SC_COL_I] = 0;
    T[0 * MB_SENSOR_NCOL + MB_SC_COL_FRAME] = -2;
    CHECK(mb_sensors_eval(NS, T, M, t, NQ, q, qd, qdd, out, work) == MB_ERR_ILL_INPUT,
          "a frame outside the model is refused");
    T[0 * MB_SENSOR_NCOL + MB_SC_COL_FRAME] = -1;
    T[0 * MB_SENSOR_NCOL + MB_SC_COL_KIND] = 99;
    CHECK(mb_sensors_eval(NS, T, M, t, NQ, q, qd, qdd, out, work) == MB_ERR_ILL_INPUT,
          "an unknown kind is refused");
    T[0 * MB_SENSOR_NCOL + MB_SC_COL_KIND] = MB_SENSOR_POSITION;
    T[1 * MB_SENSOR_NCOL + MB_SC_COL_DIM] = 3;
    CHECK(mb_sensors_eval(NS, T, M, t, NQ, q, qd, qdd, out, work) == MB_ERR_ILL_INPUT,
          "mixed dimensions are refused");
    free(work);
}

static void spatial(void)
{
    /* one body at r = (1, 2, 3) turned by phi about z, spinning at w about z */
    const double phi = 0.7, w = 2.5, al = -0.3;
    enum { M = 1, NQ = 7 };
    double q[NQ], qd[NQ], qdd[NQ], t[M] = {0.0};
    double c = cos(phi / 2), s = sin(phi / 2);
    double qq[NQ] = {1, 2, 3, c, 0, 0, s};
    /* p' = (w/2) (-s, 0, 0, c), p'' = (al/2) (-s, 0, 0, c) - (w^2/4) (c, 0, 0, s) */
    double pd[NQ] = {0, 0, 0, -0.5 * w * s, 0, 0, 0.5 * w * c};
    double pdd[NQ] = {0, 0, 0, -0.5 * al * s - 0.25 * w * w * c, 0, 0,
                      0.5 * al * c - 0.25 * w * w * s};
    memcpy(q, qq, sizeof q);
    memcpy(qd, pd, sizeof qd);
    memcpy(qdd, pdd, sizeof qdd);
    double T[3 * MB_SENSOR_NCOL];
    row_init(T, MB_SENSOR_POSITION, 3, 0, -1, -1);
    T[MB_SC_COL_SI] = 1.0;  /* the body point (1, 0, 0) */
    row_init(T + MB_SENSOR_NCOL, MB_SENSOR_ANGULAR_VELOCITY, 3, 0, -1, 0);
    row_init(T + 2 * MB_SENSOR_NCOL, MB_SENSOR_ACCELERATION, 3, 0, -1, -1);
    T[2 * MB_SENSOR_NCOL + MB_SC_COL_SI] = 1.0;
    double out[9];
    double *work = malloc((size_t)mb_sensors_work(NQ, 3) * sizeof(double));
    int rc = mb_sensors_eval(3, T, M, t, NQ, q, qd, qdd, out, work);
    CHECK(rc == MB_OK, "spatial eval: status %d", rc);
    double cp = cos(phi), sp = sin(phi);
    CHECK(close(out[0], 1 + cp, 1e-14) && close(out[1], 2 + sp, 1e-14) && close(out[2], 3, 1e-14),
          "spatial point position");
    CHECK(close(out[3], 0, 1e-14) && close(out[4], 0, 1e-14) && close(out[5], w, 1e-14),
          "spatial angular velocity in the body frame: %g %g %g", out[3], out[4], out[5]);
    CHECK(close(out[6], -al * sp - w * w * cp, 1e-13) && close(out[7], al * cp - w * w * sp, 1e-13)
          && close(out[8], 0, 1e-14), "spatial point acceleration");
    free(work);
}

int main(void)
{
    planar();
    spatial();
    return check_summary();
}
