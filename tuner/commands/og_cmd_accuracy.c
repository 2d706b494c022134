/* ogtune accuracy: the error table of float32 recovered from float16
 * products (docs/recovered-float32.md) on the local device. */
#include <math.h>
#include <stdlib.h>

#include "og_commands.h"

static void print_error(FILE *f, double e, int json)
{
    if (isinf(e))
        fputs(json ? "null" : "  overflow", f);
    else
        fprintf(f, json ? "%.4g" : "%10.3g", e);
}

int og_cmd_accuracy(const og_cli *o)
{
    og_shape *shapes = NULL;
    size_t ns = 0;
    const char *text = o->shapes ? o->shapes
                                 : "128x128x256,128x128x512,128x128x1024,"
                                   "128x128x2048,128x128x4096";
    if (og_parse_shapes(text, &shapes, &ns) != 0) {
        og_cli_fail("ogtune: --shapes takes MxNxK[,...] (got %s)\n", text);
        return 2;
    }
    og_context *ctx = og_cli_context(o);
    if (!ctx) {
        free(shapes);
        return 1;
    }
    int rc = 0;
    if (o->json)
        printf("{\"device\": ");
    if (o->json)
        og_json_string(stdout, og_context_device_name(ctx));
    else
        printf("device: %s\nerror = max |C - C64| / (|A| |B|); recovered: s = %d\n"
               "%-8s %-16s %10s %10s %10s %10s\n",
               og_context_device_name(ctx), OG_RECOVER_SHIFT, "input", "shape", "float32",
               "float16", "recovered", "scaled");
    if (o->json)
        printf(", \"rows\": [");
    for (int kind = 0; kind <= OG_INPUT_SPREAD && rc == 0; kind++) {
        for (size_t i = 0; i < ns; i++) {
            og_precision_errors e;
            const og_shape *s = &shapes[i];
            og_status st =
                og_precision_errors_measure(ctx, (og_input_kind)kind, s->m, s->n, s->k, 1 + i, &e);
            if (st != OG_OK) {
                og_cli_fail("ogtune: accuracy: %s\n", og_context_last_error(ctx));
                rc = 1;
                break;
            }
            double v[4] = {e.native, e.f16, e.recovered, e.scaled};
            if (o->json) {
                printf("%s{\"input\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld",
                       kind || i ? ", " : "", og_input_kind_name((og_input_kind)kind),
                       (long long)s->m, (long long)s->n, (long long)s->k);
                const char *names[4] = {"float32", "float16", "recovered", "scaled"};
                for (int j = 0; j < 4; j++) {
                    printf(", \"%s\": ", names[j]);
                    print_error(stdout, v[j], 1);
                }
                printf("}");
            } else {
                char shape[48];
                snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)s->m, (long long)s->n,
                         (long long)s->k);
                printf("%-8s %-16s", og_input_kind_name((og_input_kind)kind), shape);
                for (int j = 0; j < 4; j++) {
                    putchar(' ');
                    print_error(stdout, v[j], 0);
                }
                putchar('\n');
            }
            fflush(stdout);
        }
    }
    if (o->json)
        printf("]}\n");
    og_context_destroy(ctx);
    free(shapes);
    return rc;
}
