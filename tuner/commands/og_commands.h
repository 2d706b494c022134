/* The ogtune commands and the options they share. */
#ifndef OG_COMMANDS_H
#define OG_COMMANDS_H

#include "og_tuner.h"

typedef struct og_cli {
    int json;
    const char *db;           /* --db FILE */
    const char *shapes;       /* --shapes / --shape */
    const char *dtypes;       /* --dtype f32[,f16,bf16] */
    const char *preset;       /* --preset quick|standard */
    double budget;            /* --budget SECONDS (or Ns) */
    size_t budget_candidates; /* --budget Nc: candidates per shape */
    const char *strategy;     /* --strategy exhaustive|random|smart */
    int trans_a, trans_b;
    const char *mode;   /* --mode fast|deterministic */
    const char *emit;   /* --emit glsl|hlsl|wgsl|spirv|spv|msl */
    const char *kernel; /* --kernel gemm|planes|reduce (gen: which pass of a GEMM) */
    const char *matrix; /* --matrix nv|khr (gen: the matrix kernel's extension) */
    const char *conv;   /* --conv nhwc|nchw,krsc|kcrs (gen: a convolution's kernel) */
    const char *precision; /* --precision native|recovered (bench, tune, select; float32) */
    const char *params; /* --params "bm=..,..." */
    const char *against; /* --against P (bench: the baseline instead of the 64x64 tile) */
    const char *op;     /* --op gemm|int8gemm|conv|qgemm */
    const char *weights; /* --weights mxfp4|nvfp4|q8_0|q4_k|q6_k|int4[:...] (--op qgemm) */
    const char *out;    /* --out FILE (export) or DIR (report) */
    const char **args;  /* the arguments that are not options (import, merge) */
    int nargs;
    int first_call; /* bench --first-call */
    int parts;      /* bench --op qgemm --parts */
    double timeout; /* --timeout SECONDS: tune's limit per candidate */
} og_cli;

/* Each returns the process exit status. */
int og_cmd_devices(const og_cli *o);
int og_cmd_tune(const og_cli *o);
int og_cmd_select(const og_cli *o);
int og_cmd_show(const og_cli *o);
int og_cmd_bench(const og_cli *o);
int og_cmd_gen(const og_cli *o);
int og_cmd_accuracy(const og_cli *o);
int og_cmd_export(const og_cli *o);
int og_cmd_import(const og_cli *o);
int og_cmd_merge(const og_cli *o);
int og_cmd_report(const og_cli *o);
int og_cmd_worker(const og_cli *o);

/* Writes a SPIR-V module as text, one instruction a line (og_spirv_print.c):
 * for the KHR matrix modules, which Debian 12's disassembler cannot read.
 * Names the instructions the KHR rewrite writes and the capabilities the
 * kernels declare; other opcodes print as Op<number> with raw operand words. */
void og_spirv_print(FILE *f, const uint32_t *words, size_t count);
/* ogtune gen --emit wgsl --json --preset P: the WGSL of every kernel of
 * preset P's space for WebGPU's default limits (og_cmd_gen_space.c). */
int og_cmd_gen_space(const og_cli *o);
/* --op conv (og_cmd_conv.c): tune the convolutions of --shapes (the rest
 * of t set by ogtune tune), select one (--shape), bench them. */
int og_cmd_tune_conv(const og_cli *o, og_tune_opts *t);
int og_cmd_select_conv(const og_cli *o, og_dtype dtype, og_mode mode);
int og_cmd_bench_conv(const og_cli *o, og_dtype dtype);
/* Parses convolutions "NxCxHxW/KxRxS[/sH[xW]][/dH[xW]][/pA|/pHxW|/pTxBxLxR]
 * [/gG][/nhwc|/nchw][/krsc|/kcrs]", comma-separated, into *out (malloc'ed,
 * buffers NULL). Returns 0, or -1. */
int og_parse_conv_shapes(const char *text, og_conv_args **out, size_t *n);
/* The median of v[0..n) (sorts v in place). */
double og_cli_median(double *v, size_t n);
/* Whether --op is conv; qgemm. */
int og_cli_conv(const og_cli *o);
int og_cli_qgemm(const og_cli *o);
/* --weights (default mxfp4) into *f: 0, or -1 after a message naming the
 * command cmd ("tune") and the text. */
int og_cli_weights(const og_cli *o, const char *cmd, og_qweights_format *f);
/* The load average ("0.52 0.61 0.70"), as benchmarks print it beside their ratios. */
void og_cli_load_average(char *buf, size_t len);
/* ogtune bench --op qgemm (og_cmd_qgemm.c): low-bit weight products of
 * A of dtype, the default kernel against the selected one, the copy
 * bandwidth and the float16 GEMM. tune --op qgemm (the options filled in
 * t) and select --op qgemm: the format --weights names. */
int og_cmd_bench_qgemm(const og_cli *o, og_dtype dtype);
int og_cmd_tune_qgemm(const og_cli *o, og_tune_opts *t);
int og_cmd_select_qgemm(const og_cli *o, og_dtype dtype, og_mode mode);
/* ogtune bench --op int8gemm, on an open context. */
int og_cmd_bench_int8(const og_cli *o, og_context *ctx);
/* ogtune bench --first-call: the latency of a new process's first GEMM,
 * cold and warm, in milliseconds (og_cmd_first_call.c). */
int og_cmd_bench_first_call(const og_cli *o);

/* Says why the command cannot do what was asked: the message (a printf
 * format ending in a newline, as for stderr) goes to stderr, and its first
 * line is kept. With --json, ogtune then ends its standard output with the
 * line {"error":"<that line>"} (after any JSON the command printed) and
 * exits non-zero. */
void og_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The first line the first og_cli_fail kept, or NULL. */
const char *og_cli_failure(void);

/* The database of the command: --db, else the user's cache. */
void og_cli_db_path(const og_cli *o, char *buf, size_t len);

/* Parses "MxNxK" or "MxNxKxBATCH", comma-separated, into *shapes (malloc'ed).
 * Each number is 0 .. 2^32-1 (batch 0 is taken as 1). Returns 0, or -1
 * (og_cli.c). */
int og_parse_shapes(const char *text, og_shape **shapes, size_t *n);
/* The user's default database path ($XDG_CACHE_HOME/onegpu/tuning.db or
 * ~/.cache/onegpu/tuning.db), creating its directory (og_cli.c). */
void og_default_db_path(char *buf, size_t len);

/* Shared by the commands: the context (with o->db as the only database when
 * given), the dtype list, the table of chosen kernels. */
og_context *og_cli_context(const og_cli *o);
/* The input types of the command: --dtype's list for --op gemm, OG_INT8 alone
 * for --op int8gemm. */
int og_cli_dtypes(const og_cli *o, og_dtype *out, size_t *n);
/* The benches' --shapes (default_shapes when not given; *shapes to free),
 * when o->params is given its parameters in *given and, where against is
 * not NULL and o->against is given, the baseline's in *against. Prints why
 * on stderr and returns -1 when one does not parse. */
int og_cli_bench_inputs(const og_cli *o, const char *default_shapes, og_shape **shapes, size_t *ns,
                        og_params *given, og_params *against);
/* --precision of tune and select (cmd names the command in messages):
 * returns 1 for recovered, 0 for native or none, and -1 (why printed) for
 * another value or recovered with dtypes other than float32 alone. */
int og_cli_recovered(const og_cli *o, const char *cmd, const og_dtype *dtypes, size_t nd);
/* Selection for a dtype of og_cli_dtypes: og_select, og_select_int8, or
 * og_select_recovered when recovered is set (float32). */
og_status og_cli_select(og_context *ctx, og_dtype t, og_mode mode, int trans_a, int trans_b,
                        int recovered, const og_shape *s, og_choice *out);
void og_cli_print_choice_table(og_context *ctx, const og_cli *o, const og_dtype *dtypes, size_t nd,
                               int recovered, const og_shape *shapes, size_t ns);

#endif /* OG_COMMANDS_H */
