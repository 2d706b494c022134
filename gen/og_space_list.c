/* Building a family's tuning space (og_family.space): candidates in order,
 * each once, each the device allows. */
#include <stdlib.h>
#include <string.h>

#include "og_family.h"

og_status og_space_add(og_space_list *c, og_params p)
{
    char why[256];
    if (og_params_check(&p, c->lim, why, sizeof why) != 0)
        return OG_OK;
    for (size_t i = 0; i < c->n; i++)
        if (memcmp(&c->list[i], &p, sizeof p) == 0)
            return OG_OK;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        og_params *grown = realloc(c->list, cap * sizeof *grown);
        if (!grown)
            return OG_ERROR_OUT_OF_MEMORY;
        c->list = grown;
        c->cap = cap;
    }
    c->list[c->n++] = p;
    return OG_OK;
}

og_status og_space_add_word_loads(og_space_list *c, og_params p)
{
    og_status st = og_space_add(c, p);
    p.src = OG_SRC_TEXEL;
    return st == OG_OK ? og_space_add(c, p) : st;
}

og_status og_space_add_matrix(og_space_list *c, og_params p)
{
    int sub = c->lim ? og_matrix_subgroup(c->lim) : 0;
    int int8 = og_family_can(&p, OG_FAMILY_INT8);
    int in = int8 ? OG_COMPONENT_S8 : OG_COMPONENT_F16,
        acc = int8 ? OG_COMPONENT_S32 : OG_COMPONENT_F32;
    p.sub = sub ? sub : OG_COOPMAT_SUBGROUP;
    og_status st = OG_OK;
    for (int e = 0; e < 2 && st == OG_OK; e++) {
        p.mat = e ? OG_MATRIX_KHR : OG_MATRIX_NV;
        p.fm = p.fn = p.fk = 16;
        if (c->lim)
            og_matrix_fragment(&c->lim->matrix, p.mat, in, in, acc, &p.fm, &p.fn, &p.fk);
        if (p.bk % p.fk == 0) /* else the fragment is deeper than this tile's k step */
            st = og_space_add(c, p);
    }
    return st;
}
