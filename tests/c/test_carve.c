/* core/carve.h: one layout function both sizes a work block (base NULL) and carves it.
 * Checks: counting hands out NULL and gives the size the carving reaches; a part of
 * size 0 is NULL and takes no room; the parts are disjoint, inside the block and start
 * on double boundaries; ints, indices and structs round up to whole doubles; a block
 * of exactly the counted size holds every part (written through under ASan).
 * Prints one line per check and "N passed, M failed". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "carve.h"
#include "check.h"

typedef struct some_state {  /* 3 ints and 2 doubles: 32 bytes with the padding */
    int a, b, c;
    double x, y;
} some_state;

typedef struct parts {
    some_state *st;
    double *J, *v, *empty, *w;
    int *ipiv, *no_ints;
    ptrdiff_t *idx;
    char *bytes;
} parts;

enum { NPARTS = 9 };

/* a layout as a method writes one: a struct, n x n, n, a part of size 0, n ints, n
 * indices, 0 ints, 5 bytes, 2n */
static size_t layout(mb_carver *c, ptrdiff_t n, parts *p)
{
    p->st = mb_carve_bytes(c, sizeof *p->st);
    p->J = mb_carve(c, (size_t)(n * n));
    p->v = mb_carve(c, (size_t)n);
    p->empty = mb_carve(c, 0);
    p->ipiv = mb_carve_int(c, (size_t)n);
    p->idx = mb_carve_index(c, (size_t)n);
    p->no_ints = mb_carve_int(c, 0);
    p->bytes = mb_carve_bytes(c, 5);
    p->w = mb_carve(c, (size_t)(2 * n));
    return c->off;
}

/* the part table: start and size in bytes of each part of p */
static void table(const parts *p, ptrdiff_t n, void *start[NPARTS], size_t size[NPARTS])
{
    void *s[NPARTS] = {p->st, p->J, p->v, p->empty, p->ipiv, p->idx, p->no_ints, p->bytes,
                             p->w};
    size_t z[NPARTS] = {sizeof *p->st, (size_t)(n * n) * sizeof(double),
                        (size_t)n * sizeof(double), 0, (size_t)n * sizeof(int),
                        (size_t)n * sizeof(ptrdiff_t), 0, 5, (size_t)(2 * n) * sizeof(double)};
    memcpy(start, s, sizeof s);
    memcpy(size, z, sizeof z);
}

static void test_doubles_for(void)
{
    CHECK(mb_doubles_for(0) == 0 && mb_doubles_for(1) == 1 && mb_doubles_for(8) == 1 &&
              mb_doubles_for(9) == 2 && mb_doubles_for(16) == 2 && mb_doubles_for(17) == 3,
          "mb_doubles_for: 0, 1, 8, 9, 16, 17 bytes take 0, 1, 1, 2, 2, 3 doubles");
}

/* each kind of part advances the offset by its size rounded up to whole doubles */
static void test_rounding(void)
{
    mb_carver c = {NULL, 0};
    size_t o0 = c.off;
    (void)mb_carve_int(&c, 3);
    size_t o1 = c.off;
    (void)mb_carve_int(&c, 2);
    size_t o2 = c.off;
    (void)mb_carve_index(&c, 3);
    size_t o3 = c.off;
    (void)mb_carve_bytes(&c, sizeof(some_state));
    size_t o4 = c.off;
    (void)mb_carve_bytes(&c, 1);
    size_t o5 = c.off;
    (void)mb_carve(&c, 7);
    size_t o6 = c.off;
    size_t ints3 = (3 * sizeof(int) + sizeof(double) - 1) / sizeof(double);
    size_t ints2 = (2 * sizeof(int) + sizeof(double) - 1) / sizeof(double);
    size_t idx3 = (3 * sizeof(ptrdiff_t) + sizeof(double) - 1) / sizeof(double);
    size_t st = (sizeof(some_state) + sizeof(double) - 1) / sizeof(double);
    CHECK(o0 == 0 && o1 - o0 == ints3 && o2 - o1 == ints2 && o3 - o2 == idx3,
          "3 ints take %zu doubles, 2 ints %zu, 3 indices %zu (rounded up)", o1 - o0, o2 - o1,
          o3 - o2);
    CHECK(o4 - o3 == st && o5 - o4 == 1 && o6 - o5 == 7,
          "a struct of %zu bytes takes %zu doubles, 1 byte 1, 7 doubles 7", sizeof(some_state),
          o4 - o3);
}

static void test_count_and_carve(ptrdiff_t n)
{
    parts q, p;
    memset(&q, 0xff, sizeof q);  /* counting must assign NULL to every part */
    size_t size = layout(&(mb_carver){NULL, 0}, n, &q);
    void *qs[NPARTS], *ps[NPARTS];
    size_t qz[NPARTS], pz[NPARTS];
    table(&q, n, qs, qz);
    int all_null = 1;
    for (int k = 0; k < NPARTS; k++)
        all_null = all_null && qs[k] == NULL;
    CHECK(all_null, "n = %td: counting hands out NULL for every part", n);

    /* a block of exactly the counted size (ASan sees any part that reaches past it) */
    double *block = malloc((size ? size : 1) * sizeof(double));
    mb_carver c = {block, 0};
    size_t carved = layout(&c, n, &p);
    CHECK(carved == size && c.off == size,
          "n = %td: counting gives the carved size (%zu doubles, carved %zu)", n, size, carved);
    table(&p, n, ps, pz);

    int zero_null = 1, aligned = 1, inside = 1, ordered = 1;
    const char *lo = (const char *)block, *hi = lo + size * sizeof(double), *end = lo;
    for (int k = 0; k < NPARTS; k++) {
        if (pz[k] == 0) {
            zero_null = zero_null && ps[k] == NULL;
            continue;
        }
        const char *a = ps[k];
        if (!a) {
            inside = 0;
            continue;
        }
        aligned = aligned && (size_t)(a - lo) % sizeof(double) == 0 &&
                  (uintptr_t)a % _Alignof(double) == 0;
        inside = inside && a >= lo && a + pz[k] <= hi;
        ordered = ordered && a >= end;  /* each part starts after the previous one ends */
        end = a + pz[k];
        memset(ps[k], 0x5a, pz[k]);  /* write it through */
    }
    CHECK(zero_null, "n = %td: the parts of size 0 are NULL", n);
    CHECK(aligned, "n = %td: every part starts on a double boundary", n);
    CHECK(inside && ordered, "n = %td: the parts are disjoint and inside the block", n);

    /* the parts of size 0 take no room: the offsets around them are equal */
    mb_carver d = {block, 0};
    (void)mb_carve(&d, 2);
    double *before = d.base + d.off;
    double *none = mb_carve(&d, 0);
    int *no_int = mb_carve_int(&d, 0);
    void *no_bytes = mb_carve_bytes(&d, 0);
    double *after = mb_carve(&d, 1);
    CHECK(!none && !no_int && !no_bytes && after == before && d.off == 3,
          "n = %td: parts of size 0 (doubles, ints, bytes) take no room", n);
    free(block);
}

int main(void)
{
    test_doubles_for();
    test_rounding();
    for (ptrdiff_t n = 0; n <= 5; n++)
        test_count_and_carve(n);
    test_count_and_carve(40);
    return check_summary();
}
