/* ogtune: tune the local Vulkan device and inspect what was chosen.
 * Its commands and options are an interface other tools rely on: docs/ogtune.md
 * is their reference, docs/reference-design.md "The command line" the rule. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_commands.h"

static const char usage[] =
    "usage: ogtune COMMAND [options]\n"
    "commands:\n"
    "  devices                      list Vulkan devices and their limits\n"
    "  tune                         measure candidates into the tuning database\n"
    "       [--shapes MxNxK[xB],...] [--dtype f32,f16,bf16] [--preset quick|standard]\n"
    "       [--budget SECONDS[s] | CANDIDATESc] [--strategy exhaustive|random|smart]\n"
    "       [--trans-a] [--trans-b] [--mode fast|deterministic] [--timeout SECONDS]\n"
    "       (running again resumes: candidates already in the database are not measured;\n"
    "       each candidate is measured in a worker process, `ogtune worker`, and one that\n"
    "       gives no result within --timeout, default 300 s, is rejected as a time-out)\n"
    "  select --shape MxNxK[xB]     show the kernel chosen for one call\n"
    "       [--dtype T] [--trans-a] [--trans-b] [--mode fast|deterministic]\n"
    "  tune|select|bench --op conv  convolutions: --shapes (select: --shape) takes, for each,\n"
    "       NxCxHxW/KxRxS[/sH[xW]][/dH[xW]][/pA|/pHxW|/pTxBxLxR][/gG][/nhwc|/nchw][/krsc|/kcrs]\n"
    "                               (images x input channels x height x width / output channels\n"
    "                               x filter height x width; stride s, dilation d, padding p,\n"
    "                               groups g, layouts: default NHWC and KRSC), several separated\n"
    "                               by commas; records keyed by filter,\n"
    "                               strides and dilations, layouts and the implicit GEMM's\n"
    "                               shape; bench: the default tile against the selected one\n"
    "                               (or --params P), the GEMM of the same M, N, K and, for\n"
    "                               float32, the explicit im2col + GEMM\n"
    "  show                         list the records of the database (stale: measured with\n"
    "                               another version of the template, never selected)\n"
    "  bench [--shapes ...]         GFLOP/s of the 64x64 tile alone and of the selected\n"
    "       [--params P]            kernels, or of P (default: the design's table shapes);\n"
    "       [--against Q]           Q in place of the 64x64 tile (new against old kernel)\n"
    "                               with --op int8gemm, GOP/s of Int8Gemm (selected, or P)\n"
    "       [--precision recovered] float32 recovered from float16 products (its kernel\n"
    "                               against the recovered 64x64 tile)\n"
    "                               and GB/s of B next to float32 GFLOP/s (default:\n"
    "                               decoder steps, 512 and 1024 cubed)\n"
    "  tune|select|bench --op qgemm [--weights F] low-bit weight products (og_qgemm_*), F:\n"
    "       mxfp4|nvfp4|q8_0|q4_k|q6_k|int4[:g32|:g64|:g128|:gc][:f16|:bf16][:none|:uint4|\n"
    "       :float]\n"
    "                               (default mxfp4; A of --dtype, default f32); tune: the\n"
    "                               decode kernel's columns, slices and loads (M <= 16) or\n"
    "                               the prefill's tiles (M > 16) on --shapes (default\n"
    "                               1x4096x4096, 8x4096x4096), records of op\n"
    "                               qgemm:F; bench: the default (or --against's) and\n"
    "                               selected kernels, GB/s of the weights' bytes next to\n"
    "                               the copy bandwidth of the\n"
    "                               same bytes, and the float16 GEMM of the same shape\n"
    "                               (default: 1x4096x4096, 1x14336x4096, 8x4096x4096,\n"
    "                               512x4096x4096); --parts: also the selected decode\n"
    "                               kernel's loads of the codes alone and its decode alone\n"
    "                               (no loads of codes or A), timed in the same rounds\n"
    "  bench --first-call           milliseconds of a new process's first GEMM (256-cubed\n"
    "                               float32, default kernel): cold (empty cache directory)\n"
    "                               and warm (the SPIR-V and pipeline caches it left)\n"
    "  gen --emit glsl|hlsl|wgsl|spirv|spv|msl [--params P] [--dtype T] [--trans-a] [--trans-b]\n"
    "       [--matrix nv|khr] [--kernel gemm|planes|reduce|bias|activate|scale]\n"
    "                               (spv: the module's binary words on standard output;\n"
    "                               --matrix khr: a matrix kernel's KHR form, printed by\n"
    "                               ogtune itself as Debian's disassembler predates it;\n"
    "                               --kernel: split-k's planes pass or its reduction, the\n"
    "                               standalone bias and activation, or C = act(beta * C +\n"
    "                               bias) for alpha = 0 or K = 0)\n"
    "       [--op qgemm --weights F]  the low-bit weight product's decode kernel for format F\n"
    "                               (as bench --op qgemm takes it; --params variant=qdecode,...)\n"
    "       [--conv nhwc|nchw,krsc|kcrs]  the convolution's kernel of that input layout and\n"
    "                               weight layout (og_conv_*: the tile with A gathered from\n"
    "                               the input, B the weights, so --trans-b; --kernel gemm,\n"
    "                               planes or reduce)\n"
    "  gen --emit wgsl --json --preset quick|standard [--shapes ...] [--dtype ...]\n"
    "       [--trans-a] [--trans-b]   every WGSL kernel of the space for WebGPU's default\n"
    "                               limits (and split-k planes of its tiles), a line each:\n"
    "                               its text, or why WGSL refuses it\n"
    "  accuracy [--shapes MxNxK,...] error of float32 recovered from float16 products, with\n"
    "                               and without row/column scaling, next to float32 and\n"
    "                               float16, on four kinds of input (default K = 256..4096)\n"
    "  export [--out FILE]          the database as SQL text: one block per device, rows in\n"
    "                               a stable order, no row ids (for review and diffs)\n"
    "  import FILE                  a dump of export into the database, in one transaction;\n"
    "                               the whole file is checked first (nothing changes when\n"
    "                               it is refused)\n"
    "  merge SRC...                 the best record of every key of the SRC databases into\n"
    "                               the database, each with the database it came from\n"
    "  report [--out DIR]           report.html (charts of every tuned shape, inline SVG, no\n"
    "                               scripts) and report.csv (every record) into DIR (default .)\n"
    "common options: --json (machine-readable output), --db FILE (default: the user's cache),\n"
    "  --op gemm|int8gemm|conv|qgemm (tune, select, bench, gen: the float GEMM, Int8Gemm's "
    "8-bit operands,\n  convolutions, low-bit weights)\n"
    "environment: OG_DEVICE (index or name substring), OG_TUNING_DB (databases to search),\n"
    "  OG_VALIDATION=1 (Vulkan's validation layer, in the workers too; exit status 85 when it\n"
    "  reports errors)\n";

/* --budget: "120" or "120s" seconds for the run, "40c" candidates per shape. */
static int parse_budget(const char *v, og_cli *o)
{
    char *end;
    if (!v)
        return -1;
    double x = strtod(v, &end);
    if (end == v || x < 0 || !(x < 1e12))
        return -1;
    if (strcmp(end, "c") == 0 && x >= 1 && x == (double)(size_t)x) {
        o->budget_candidates = (size_t)x;
        return 0;
    }
    if (*end && strcmp(end, "s") != 0)
        return -1;
    o->budget = x;
    return 0;
}

static int parse(int argc, char **argv, og_cli *o)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = NULL;
        if (strcmp(a, "--json") == 0)
            o->json = 1;
        else if (strcmp(a, "--trans-a") == 0)
            o->trans_a = 1;
        else if (strcmp(a, "--trans-b") == 0)
            o->trans_b = 1;
        else if (strcmp(a, "--first-call") == 0)
            o->first_call = 1;
        else if (strcmp(a, "--parts") == 0)
            o->parts = 1;
        else if (strcmp(a, "--db") == 0)
            slot = &o->db;
        else if (strcmp(a, "--shapes") == 0 || strcmp(a, "--shape") == 0)
            slot = &o->shapes;
        else if (strcmp(a, "--dtype") == 0)
            slot = &o->dtypes;
        else if (strcmp(a, "--preset") == 0)
            slot = &o->preset;
        else if (strcmp(a, "--mode") == 0)
            slot = &o->mode;
        else if (strcmp(a, "--emit") == 0)
            slot = &o->emit;
        else if (strcmp(a, "--params") == 0)
            slot = &o->params;
        else if (strcmp(a, "--against") == 0)
            slot = &o->against;
        else if (strcmp(a, "--matrix") == 0)
            slot = &o->matrix;
        else if (strcmp(a, "--conv") == 0)
            slot = &o->conv;
        else if (strcmp(a, "--kernel") == 0)
            slot = &o->kernel;
        else if (strcmp(a, "--precision") == 0)
            slot = &o->precision;
        else if (strcmp(a, "--op") == 0)
            slot = &o->op;
        else if (strcmp(a, "--weights") == 0)
            slot = &o->weights;
        else if (strcmp(a, "--strategy") == 0)
            slot = &o->strategy;
        else if (strcmp(a, "--out") == 0)
            slot = &o->out;
        else if (a[0] != '-')
            o->args[o->nargs++] = a; /* main sized args for every argument */
        else if (strcmp(a, "--budget") == 0) {
            if (parse_budget(v, o) != 0) {
                og_cli_fail("ogtune: --budget takes seconds (120 or 120s) or a number of "
                            "candidates per shape (40c)\n");
                return -1;
            }
            i++;
        } else if (strcmp(a, "--timeout") == 0) {
            char *end = NULL;
            o->timeout = v ? strtod(v, &end) : 0;
            if (!v || *end || !(o->timeout > 0 && o->timeout <= 1e6)) {
                og_cli_fail("ogtune: --timeout takes seconds, more than 0 and at most 1e6\n");
                return -1;
            }
            i++;
        } else {
            og_cli_fail("ogtune: unknown option %s\n%s", a, usage);
            return -1;
        }
        if (slot) {
            if (!v) {
                og_cli_fail("ogtune: %s needs a value\n", a);
                return -1;
            }
            *slot = v;
            i++;
        }
    }
    return 0;
}

/* The command's arguments that are not options: none, exactly one
 * (import's FILE) or one or more (merge's SRC...). */
enum { OG_ARGS_NONE, OG_ARGS_ONE, OG_ARGS_SOME };

static const struct {
    const char *name;
    int (*run)(const og_cli *);
    int args;
    const char *what; /* the arguments, for the message when they are wrong */
} commands[] = {
    {"devices", og_cmd_devices, OG_ARGS_NONE, NULL},
    {"tune", og_cmd_tune, OG_ARGS_NONE, NULL},
    {"select", og_cmd_select, OG_ARGS_NONE, NULL},
    {"show", og_cmd_show, OG_ARGS_NONE, NULL},
    {"bench", og_cmd_bench, OG_ARGS_NONE, NULL},
    {"gen", og_cmd_gen, OG_ARGS_NONE, NULL},
    {"accuracy", og_cmd_accuracy, OG_ARGS_NONE, NULL},
    {"export", og_cmd_export, OG_ARGS_NONE, NULL},
    {"import", og_cmd_import, OG_ARGS_ONE, "one dump FILE"},
    {"merge", og_cmd_merge, OG_ARGS_SOME, "one or more SRC databases"},
    {"report", og_cmd_report, OG_ARGS_NONE, NULL},
    {"worker", og_cmd_worker, OG_ARGS_NONE, NULL}, /* tune's, on descriptor 3 */
};

/* Runs the command argv[1] with its parsed options. */
static int run(int argc, char **argv, og_cli *o)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) != 0)
            continue;
        if (parse(argc, argv, o) != 0)
            return 2;
        int args = commands[i].args;
        if (args == OG_ARGS_NONE && o->nargs > 0) {
            og_cli_fail("ogtune %s: unexpected argument %s\n", argv[1], o->args[0]);
            return 2;
        }
        if ((args == OG_ARGS_ONE && o->nargs != 1) || (args == OG_ARGS_SOME && o->nargs < 1)) {
            og_cli_fail("ogtune %s: takes %s\n", argv[1], commands[i].what);
            return 2;
        }
        return commands[i].run(o);
    }
    og_cli_fail("ogtune: unknown command %s\n%s", argv[1], usage);
    return 2;
}

/* Whether the command line asks for the usage: `help`, or --help anywhere. */
static int wants_help(int argc, char **argv)
{
    if (strcmp(argv[1], "help") == 0)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || wants_help(argc, argv)) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    og_cli o = {0};
    o.args = calloc((size_t)argc, sizeof *o.args);
    if (o.args == NULL) {
        fputs("ogtune: out of memory\n", stderr);
        return 1;
    }
    int rc = run(argc, argv, &o);
    /* Under OG_VALIDATION, the layer's errors in this process (its workers'
     * arrive counted) fail the command. A worker's own are in its messages
     * to its tuner instead, and its exit status is the tuner's to read. */
    uint32_t errors = og_validation_errors_total();
    if (errors && strcmp(argv[1], "worker") != 0) {
        og_cli_fail("ogtune: the Vulkan validation layer reported %" PRIu32 " error%s\n", errors,
                    errors == 1 ? "" : "s");
        rc = OG_EXIT_VALIDATION;
    }
    if (rc != 0 && o.json) {
        /* A script reading the JSON learns of the failure from it too. */
        const char *why = og_cli_failure();
        fputs("{\"error\":", stdout);
        og_json_string(stdout, why ? why : "ogtune: failed (see the messages on stderr)");
        fputs("}\n", stdout);
    }
    free(o.args);
    return rc;
}
