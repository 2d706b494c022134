/* The text form of a low-bit weight format (onegpu_formats.h): what ogtune's
 * --weights option takes and what a tuning record's op names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onegpu_formats.h"

static const char *const format_names[] = {"mxfp4", "nvfp4", "int4", "q8_0", "q4_k", "q6_k"};
#define FORMATS (sizeof format_names / sizeof format_names[0])
static const char *const zero_names[] = {"none", "uint4", "float"};

int og_qweights_format_name(const og_qweights_format *f, char *buf, size_t len)
{
    if ((unsigned)f->format >= FORMATS || (unsigned)f->scale > OG_QSCALE_BF16 ||
        (unsigned)f->zero > OG_QZERO_FLOAT)
        return -1;
    int n;
    if (f->format != OG_QFORMAT_INT4) {
        n = snprintf(buf, len, "%s", format_names[f->format]);
    } else {
        char group[16];
        if (f->group == 0)
            snprintf(group, sizeof group, "gc");
        else
            snprintf(group, sizeof group, "g%d", f->group);
        n = snprintf(buf, len, "int4:%s:%s:%s", group, f->scale == OG_QSCALE_BF16 ? "bf16" : "f16",
                     zero_names[f->zero]);
    }
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* One INT4 option ("gN", "gc", "f16", "bf16", "none", "uint4", "float") into out. */
static int int4_option(const char *t, og_qweights_format *out)
{
    if (strcmp(t, "gc") == 0) {
        out->group = 0;
    } else if (t[0] == 'g' && t[1] >= '1' && t[1] <= '9' && strlen(t) <= 4) {
        char *end;
        long g = strtol(t + 1, &end, 10);
        if (*end)
            return -1;
        out->group = (int)g;
    } else if (strcmp(t, "f16") == 0 || strcmp(t, "bf16") == 0) {
        out->scale = t[0] == 'b' ? OG_QSCALE_BF16 : OG_QSCALE_F16;
    } else {
        size_t z = 0;
        while (z < 3 && strcmp(t, zero_names[z]) != 0)
            z++;
        if (z == 3)
            return -1;
        out->zero = (og_qzero)z;
    }
    return 0;
}

int og_qweights_format_parse(const char *text, og_qweights_format *out)
{
    memset(out, 0, sizeof *out);
    char buf[64];
    size_t n = text ? strlen(text) : 0;
    /* strtok_r would skip empty options: "int4:" and "int4::g64" are not texts of a format. */
    if (n == 0 || n >= sizeof buf || text[n - 1] == ':' || strstr(text, "::"))
        return -1;
    strcpy(buf, text);
    char *save = NULL, *name = strtok_r(buf, ":", &save);
    size_t f = 0;
    if (!name)
        return -1;
    while (f < FORMATS && strcmp(name, format_names[f]) != 0)
        f++;
    if (f == FORMATS)
        return -1;
    out->format = (og_qformat)f;
    if (out->format == OG_QFORMAT_INT4)
        out->group = 32;
    for (char *t = strtok_r(NULL, ":", &save); t; t = strtok_r(NULL, ":", &save))
        if (out->format != OG_QFORMAT_INT4 || int4_option(t, out) != 0)
            return -1;
    og_qweights_layout lay;
    char why[8];
    /* The group must be one the layout takes (K = 256 suits every format). */
    return og_qweights_layout_of(out, 1, OG_QK_K, &lay, why, sizeof why) == 0 ? 0 : -1;
}
