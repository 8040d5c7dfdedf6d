/* The exact Jacobian of formulation "joint" on planar trees (csrc/mbs/joint_planar.c),
 * through the formulation interface, under the C harness's AddressSanitizer: the work
 * array of mb_jplanar_work_size at its extremes (n = 1 and a chain of NBMAX bars), and the
 * Jacobian against central differences of the formulation's own f (an independent
 * oracle: only f is shared).  The tree of a chain of bars as PlanarJointTree builds it:
 * each link frame at the body's pin with the body's axes, the centre of mass at (a, 0)
 * there, the joint frame at the parent's next pin (a + b, 0), revolute about z. */
#define NBMAX 7  /* tmodel holds 8 forces: NBMAX RSDAs and the TSDA */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "assemble.h"
#include "check.h"
#include "formulation.h"
#include "joint_tree.h"
#include "model.h"
#include "status.h"
#include "planar_fixture.h"

static const double A = 0.4, B = 0.6, MASS = 1.5, JZ = 0.2;

/* a chain of nb bars: RSDAs between neighbours (the first to the ground), a damped TSDA
 * from the ground to the last bar's tip */
static void build_chain(tmodel *T, int nb)
{
    tm_init(T, nb);
    for (int k = 0; k < nb; k++) {
        T->body[2 * k] = MASS;
        T->body[2 * k + 1] = JZ;
        mb_planar_joint *R = tm_joint(T, MB_JOINT_REVOLUTE, k - 1, k);
        R->si[0] = k > 0 ? B : 0.0;
        R->sj[0] = -A;
        mb_planar_force *F = tm_force(T, MB_FORCE_RSDA, k - 1, k);
        F->k = 7.0 + k;
        F->c = 0.3;
    }
    mb_planar_force *F = tm_force(T, MB_FORCE_TSDA, -1, nb - 1);
    F->si[0] = 1.0, F->si[1] = -0.5;
    F->sj[0] = B;
    F->k = 20.0, F->c = 0.5, F->L0 = 0.4;
}

typedef struct ttree {
    mb_jtree T;
    int parent[NBMAX], type[NBMAX], body[NBMAX];
    double frame[12 * NBMAX], axis[3 * NBMAX], inertia[10 * NBMAX];
} ttree;

static void chain_tree(ttree *t, int nb)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < nb; i++) {
        t->parent[i] = i - 1, t->type[i] = MB_JT_REVOLUTE, t->body[i] = i;
        double *R = t->frame + 12 * i;
        R[0] = R[4] = R[8] = 1.0;
        R[9] = i > 0 ? A + B : 0.0;
        t->axis[3 * i + 2] = 1.0;
        double *in = t->inertia + 10 * i;
        in[0] = MASS, in[1] = A, in[4] = in[5] = in[6] = JZ;
    }
    t->T.n = nb, t->T.parent = t->parent, t->T.type = t->type, t->T.frame = t->frame;
    t->T.axis = t->axis, t->T.inertia = t->inertia;
}

static double one(int nb)
{
    tmodel M;
    ttree t;
    mb_mech me;
    build_chain(&M, nb);
    chain_tree(&t, nb);
    mb_planar_mech(&M.m, &me);
    mb_form_options o;
    memset(&o, 0, sizeof o);
    o.tree = &t.T, o.tree_body = t.body;
    mb_formulation F;
    int rc = mb_form_open(&F, MB_FORM_JOINT, &me, &o);
    CHECK(rc == MB_OK && F.n == 2 * nb, "joint formulation opens on a chain of %d (%s)", nb,
          rc == MB_OK ? "" : F.msg);
    if (rc != MB_OK)
        return INFINITY;
    mb_problem p;
    mb_form_problem(&F, &p);
    int n = 2 * nb;
    double *y = malloc(sizeof(double) * (size_t)(6 * n + 2 * n * n));
    double *yp = y + n, *fp = yp + n, *fm = fp + n, *J = fm + 2 * n, *Jc = J + n * n;
    for (int i = 0; i < n; i++) y[i] = (i < nb ? 0.7 : 1.3) * sin(1.0 + 2.3 * i);
    rc = p.jac(0.0, y, J, n, p.ctx);
    CHECK(rc == MB_OK, "the Jacobian at n = %d", nb);
    double err = 0.0, scale = 0.0;
    for (int j = 0; j < n; j++) {
        double h = (j < nb ? 1e-5 : 1e-3) * fmax(1.0, fabs(y[j]));
        memcpy(yp, y, sizeof(double) * (size_t)n);
        yp[j] = y[j] + h;
        rc |= p.rhs(0.0, yp, fp, p.ctx);
        yp[j] = y[j] - h;
        rc |= p.rhs(0.0, yp, fm, p.ctx);
        for (int i = 0; i < n; i++) {
            Jc[i + n * j] = (fp[i] - fm[i]) / (2 * h);
            scale = fmax(scale, fabs(Jc[i + n * j]));
        }
    }
    for (int k = 0; k < n * n; k++) err = fmax(err, fabs(J[k] - Jc[k]));
    CHECK(rc == MB_OK, "f at the difference points, n = %d", nb);
    free(y);
    mb_form_close(&F);
    return err / scale;
}

int main(void)
{
    for (int nb = 1; nb <= NBMAX; nb += NBMAX - 1) {
        double e = one(nb);
        CHECK(e <= 1e-7, "n = %d: exact Jacobian against central differences, relative %.1e",
              nb, e);
    }
    return check_summary();
}
