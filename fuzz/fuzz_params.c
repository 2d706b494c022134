/*
 * Fuzz target: the parameter-string parser (og_params_parse), which reads
 * the params of every tuning record. Properties: a refusal says why; an
 * accepted string formats (og_params_format) to a string that parses to the
 * same text again; og_params_check, on a lavapipe-like device and without
 * limits, says why it refuses; checked parameters name a template and
 * declare their workgroup memory.
 */
#include <string.h>

#include "og_fuzz.h"
#include "og_gen.h"

/* Lavapipe's limits (docs/platform.md, "Lavapipe"). */
static const og_limits lavapipe = {.max_invocations = 1024,
                                   .max_size = {1024, 1024, 64},
                                   .max_count = {65535, 65535, 65535},
                                   .max_shared_bytes = 32768,
                                   .max_storage_range = 1u << 27,
                                   .max_push_bytes = 256,
                                   .subgroup_size = 8,
                                   .max_texel_elements = 1u << 27,
                                   .integer_dot = 1,
                                   .max_loop_iterations = 65535};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[512];
    if (size >= sizeof text)
        return 0; /* the longest record params are 160 bytes */
    memcpy(text, data, size);
    text[size] = '\0';

    og_params p;
    char why[256] = "";
    if (og_params_parse(text, &p, why, sizeof why) != 0) {
        og_fuzz_assert(why[0] != '\0', "a refusal without a reason for \"%s\"", text);
        return 0;
    }
    char once[256], twice[256];
    og_params_format(&p, once, sizeof once);
    og_params q;
    og_fuzz_assert(og_params_parse(once, &q, why, sizeof why) == 0,
                   "\"%s\" formats to \"%s\", which does not parse: %s", text, once, why);
    og_params_format(&q, twice, sizeof twice);
    og_fuzz_assert(strcmp(once, twice) == 0, "\"%s\" formats to \"%s\", then to \"%s\"", text, once,
                   twice);

    const og_limits *limits[2] = {NULL, &lavapipe};
    for (int i = 0; i < 2; i++) {
        why[0] = '\0';
        if (og_params_check(&p, limits[i], why, sizeof why) != 0) {
            og_fuzz_assert(why[0] != '\0', "a refusal without a reason for \"%s\"", once);
            continue;
        }
        const char *name = og_params_template(&p);
        og_fuzz_assert(name != NULL && name[0] != '\0', "\"%s\" names no template", once);
        uint32_t shared = og_params_shared_bytes(&p);
        og_fuzz_assert(limits[i] == NULL || shared <= limits[i]->max_shared_bytes,
                       "\"%s\" passes the check with %u bytes of workgroup memory", once, shared);
    }
    return 0;
}
