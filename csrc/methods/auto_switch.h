#ifndef MB_METHODS_AUTO_SWITCH_H
#define MB_METHODS_AUTO_SWITCH_H
#include "method.h"
/* "auto": automatic switching between a non-stiff and a stiff method, in the spirit
 * of LSODA: dopri5 (erk.c) while the problem is not stiff, rodas4 (rosenbrock.c,
 * L-stable) while it is, switching both ways from cheap stiffness estimates
 * (auto_switch.c).  A composite kernel: it holds both workspaces and calls the
 * active sub-method's hooks.  stats.nswitch counts the switches. */
extern const mb_method mb_method_auto;
#endif
