/*
 * ogtune's parts: host reference, candidate measurement, the tuning loop and
 * the command-line helpers. Internal to onegpu (also used by the tests).
 */
#ifndef OG_TUNER_H
#define OG_TUNER_H

#include <stdio.h>

#include "og_db.h"
#include "og_family.h"
#include "og_tuning.h"
#include "onegpu_formats.h"

/* ---- accuracy of recovered float32 (og_accuracy.c) ---- */

/* Inputs of the accuracy study (SGEMM-cube's kinds, and one beyond them):
 * uniform in [-1, 1); those times 2^-20 (below float16's normal range) and
 * times 2^20 (beyond its largest value, 65504); and rows of A and columns of
 * B each times 2^r, r uniform in -60..60 (any float32 range). */
typedef enum og_input_kind {
    OG_INPUT_UNIFORM = 0,
    OG_INPUT_TINY = 1,
    OG_INPUT_HUGE = 2,
    OG_INPUT_SPREAD = 3
} og_input_kind;

const char *og_input_kind_name(og_input_kind kind);

/* Error of each way to compute C = A * B (M x K times K x N, float32 inputs):
 * max over (i, j) of |C - ref| / (|A| |B|)(i, j) against float64, infinite
 * when an element overflows or is NaN. */
typedef struct og_precision_errors {
    double native;    /* the native float32 kernel (Fast mode's selection) */
    double f16;       /* A and B rounded to float16, the float16 kernel */
    double recovered; /* recovered float32, s = 11, unscaled */
    double scaled;    /* recovered float32 with row and column scaling */
} og_precision_errors;

/* Measures the four errors on one product of the given kind and seed. */
og_status og_precision_errors_measure(og_context *ctx, og_input_kind kind, int64_t m, int64_t n,
                                      int64_t k, uint64_t seed, og_precision_errors *out);

/* ---- numbers on the host (og_reference.c) ---- */

/* The design's accuracy bound: float32 1e-5, float16 2e-3, bfloat16 8e-3. */
double og_dtype_bound(og_dtype t);
/* Parses "f32", "f16", "bf16". Returns 0, or -1. */
int og_dtype_parse(const char *s, og_dtype *out);

/* Element idx of an operand stored as t, as a double. */
double og_elem(og_dtype t, const void *data, size_t idx);
/* Fills n elements of type t with uniform values in [-1, 1) (rounded to t),
 * from a 64-bit seed (splitmix64), so a run can be repeated. */
void og_fill_random(og_dtype t, void *dst, size_t n, uint64_t *seed);

/* Elements each operand of args needs (0 for A and B when K = 0). */
void og_gemm_extents(const og_gemm_args *args, size_t *a, size_t *b, size_t *c);

/* C = alpha*op(A)*op(B) + beta*C in double from the stored (already rounded)
 * inputs; ref holds the whole C buffer (c_in outside the written region, and
 * beta*C skipped when beta = 0, as the kernel does; beta*C alone when alpha
 * or K is 0, as BLAS and onegpu.h say). */
void og_reference_gemm(og_dtype t, const og_gemm_args *args, const void *a, const void *b,
                       const float *c_in, double *ref);

/* The most slices an order adds in a tree (the decode kernel's 128). */
#define OG_ORDER_SLICES_MAX 128

/* The order in which a call adds the terms of one element of C
 * (docs/accumulation-order.md). */
typedef struct og_order {
    og_variant variant;
    og_acc acc;                 /* tile: blocked or one chain */
    uint32_t ranges, range_len; /* tile: split-k ranges, added in range order */
    int slices;                 /* few rows, decode: k slices (lanes); 0: the tile's order */
    int unit;                   /* consecutive k a slice takes at a time (0 or 1: one) */
    int tree;                   /* slice sums added in the decode kernel's tree, else in order */
} og_order;

/* The order o in float32, then alpha * sum, + beta * C (when beta != 0),
 * + bias[bias_offset + j] (when bias is not NULL) and args->activation, each
 * rounded on its own: what the kernels must give bit for bit (the GELUs
 * excepted: they are computed here in double, so they agree to a few ulp).
 * fused: the chain's fma rounds once (fmaf), as IEEE 754 fusedMultiplyAdd;
 * otherwise the product and the sum round separately, as drivers may
 * implement a shader's fma (GLSL.std.450 Fma leaves it to them; lavapipe does
 * this). out holds the whole C buffer, like og_reference_gemm's ref. */
void og_reference_ordered(og_dtype t, const og_gemm_args *args, const void *a, const void *b,
                          const float *c_in, const float *bias, int fused, const og_order *o,
                          float *out);

/* An activation on the host: ReLU exactly as the kernels do it, the GELUs
 * in double (reference design, "Bias and activation epilogue"). */
float og_reference_activation(og_activation act, float x);

/* The design's metric over the written region: max|got - ref| / max|ref|
 * (max|got - ref| when the reference is all zero); *max_rel is the largest
 * element-wise relative error over elements above 1e-3 of the largest.
 * Returns the number of elements outside the written region that differ
 * bit-wise from c_in, and of non-finite results inside it. */
size_t og_compare(const og_gemm_args *args, const double *ref, const float *got, const float *c_in,
                  double *metric, double *max_rel);

/* ---- one shape with its data and reference (og_measure.c) ---- */

typedef struct og_problem {
    og_dtype dtype;
    og_gemm_args args;
    void *a, *b; /* host copies of A and B */
    float *c0;   /* C before the call */
    float *c;    /* C read back */
    double *ref; /* reference for all of C */
    size_t na, nb, nc;
} og_problem;

/* A problem with random data, leading dimensions rounded up to multiples of
 * 4 and packed batch strides; buffers created on ctx. */
og_status og_problem_create(og_context *ctx, og_dtype t, int trans_a, int trans_b, int64_t m,
                            int64_t n, int64_t k, int64_t batch, uint64_t seed, og_problem **out);
void og_problem_destroy(og_problem *p);

/* Runs the GEMM with params p (NULL: the selected kernel), reads C back and
 * checks it. Returns OG_OK with *accepted and, when rejected, a reason. */
og_status og_problem_verify(og_gemm *g, og_problem *pr, const og_params *p, int *accepted,
                            double *metric, char *why, size_t len);

/* Verifies params p on the tuning problem and on ragged shapes around its
 * tile boundaries (docs/reference-design.md, invariant 3), those with alpha != 1 and one of
 * them with beta != 0, so that the epilogue is checked too. */
og_status og_candidate_verify(og_gemm *g, og_problem *pr, const og_params *p, int *accepted,
                              double *metric, char *why, size_t len);

/* GFLOP/s of one call that took us microseconds. */
double og_gflops(const og_gemm_args *args, double us);

/* ---- Int8Gemm on the host (og_int8.c) ---- */

/* Elements (bytes of A and B, words of C) each operand of args needs. */
void og_int8_extents(const og_int8gemm_args *args, size_t *a, size_t *b, size_t *c);

/* Int8Gemm exactly: sums in 64-bit integers reduced modulo 2^32 (the
 * definition), then the call's output (the float32 epilogue with the same
 * roundings as the kernels; the GELUs in double, see og_reference_activation).
 * out holds the whole C buffer as 32-bit words, c_in outside the written region. */
void og_reference_int8(const og_int8gemm_args *args, const uint8_t *a, const uint8_t *b,
                       const uint32_t *c_in, const float *col_scales, const float *bias,
                       uint32_t *out);

/* Elements where got differs from want; the first is described in why. */
size_t og_int8_mismatches(const og_int8gemm_args *args, const uint32_t *want, const uint32_t *got,
                          size_t n, char *why, size_t len);

typedef struct og_int8_problem {
    og_int8gemm_args args;
    uint8_t *a, *b;         /* host copies of A and B */
    uint32_t *c0, *c, *ref; /* C before the call, read back, and the reference */
    size_t na, nb, nc;
    int words; /* leading dimensions and batch strides in whole 32-bit words */
} og_int8_problem;

/* A problem with random bytes, zero points away from 0, odd leading
 * dimensions and batch strides (the bytes of a row start anywhere in a
 * word), an int32 output; buffers created on ctx. */
og_status og_int8_problem_create(og_context *ctx, og_dtype type_a, og_dtype type_b, int trans_a,
                                 int trans_b, int64_t m, int64_t n, int64_t k, int64_t batch,
                                 uint64_t seed, og_int8_problem **out);

/* The same with leading dimensions and batch strides rounded up to whole
 * 32-bit words, as a model's tensors lie: what the tuner times, so that
 * kernels with word loads are measured with them. */
og_status og_int8_problem_create_words(og_context *ctx, og_dtype type_a, og_dtype type_b,
                                       int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                       int64_t batch, uint64_t seed, og_int8_problem **out);
void og_int8_problem_destroy(og_int8_problem *pr);

/* Runs Int8Gemm with params p (NULL: the selected kernel), reads C back and
 * compares it bit for bit with the reference. */
og_status og_int8_problem_verify(og_int8gemm *g, og_int8_problem *pr, const og_params *p,
                                 int *accepted, char *why, size_t len);

/* Verifies p on the problem and on ragged shapes around its tile. */
og_status og_int8_candidate_verify(og_int8gemm *g, og_int8_problem *pr, const og_params *p,
                                   int *accepted, char *why, size_t len);

/* ---- a convolution (og_conv_measure.c) ---- */

/* Forward convolution in double from the stored (already rounded) inputs,
 * with the call's epilogue (beta * y_in when beta != 0, the bias when not
 * NULL, the activation): ref holds the whole output (onegpu.h's formulas,
 * written apart from the kernel's index math). */
void og_reference_conv(og_dtype t, const og_conv_args *args, const void *x, const void *wt,
                       const float *bias, const float *y_in, double *ref);

typedef struct og_conv_problem {
    og_dtype dtype;
    og_conv_args args;    /* its buffers; the bias (bias_buf) bound only where a check asks */
    int64_t p, q;         /* output size */
    void *x, *wt;         /* host copies of the inputs */
    float *bias, *y0, *y; /* the bias, y before the call and read back */
    double *ref;          /* the reference for all of y */
    og_buffer *bias_buf;
    size_t nx, nw, ny;
} og_conv_problem;

/* A convolution of geometry (its buffers and offsets ignored) with random
 * inputs of type t, buffers on ctx. Errors: the geometry's (og_conv_geometry_check),
 * OG_ERROR_INVALID_ARGUMENT for a 1x1 NHWC convolution (a GEMM) or one
 * with nothing to compute. */
og_status og_conv_problem_create(og_context *ctx, og_dtype t, const og_conv_args *geometry,
                                 uint64_t seed, og_conv_problem **out);
/* Recomputes the reference after args changed (bias bound, beta, activation). */
void og_conv_problem_reference(og_conv_problem *pr);
void og_conv_problem_destroy(og_conv_problem *pr);

/* Runs the convolution kernel with tile p, reads y back and checks it
 * within the design's bound of its type (max |y - ref| / max |ref|). */
og_status og_conv_problem_verify(og_conv *cv, og_conv_problem *pr, const og_params *p,
                                 int *accepted, double *metric, char *why, size_t len);

/* Verifies p on the problem and on two ragged neighbours (another output
 * size and C*R*S; the epilogue with a bias, beta and ReLU, then GELU). */
og_status og_conv_candidate_verify(og_conv *cv, og_conv_problem *pr, const og_params *p,
                                   int *accepted, double *metric, char *why, size_t len);

/* GFLOP/s of one convolution that took us microseconds:
 * 2 * N * K * P * Q * Cg * R * S operations. */
double og_conv_gflops(const og_conv_args *args, double us);

/* ---- a low-bit weight product (og_qgemm_measure.c) ---- */

typedef struct og_qgemm_problem {
    og_dtype dtype; /* A's */
    og_qweights_format format;
    og_qgemm_args args;   /* its buffers; the bias (bias_buf) bound only where a check asks */
    uint64_t image_bytes; /* one weight matrix's image */
    void *a;              /* host A, batch x M x K */
    uint8_t *image;       /* the weights' images, one a product (stride_w apart) */
    float *w;             /* each decoded (og_qweights_decode), N x K */
    float *bias, *c0, *c; /* the bias, C before the call and read back */
    og_buffer *bias_buf;
    size_t na, nw, nc;
} og_qgemm_problem;

/* A product of A of type t (uniform in [-1, 1)) and batch weight matrices
 * of format f (uniform values in [-1, 1) encoded by og_qweights_encode;
 * NVFP4 with the tensor scale of amax 1), packed lda, ldc and strides;
 * buffers on ctx. Errors: OG_ERROR_INVALID_ARGUMENT for a shape the
 * layout refuses or M, N, batch below 1. */
og_status og_qgemm_problem_create(og_context *ctx, og_dtype t, const og_qweights_format *f,
                                  int64_t m, int64_t n, int64_t k, int64_t batch, uint64_t seed,
                                  og_qgemm_problem **out);
void og_qgemm_problem_destroy(og_qgemm_problem *pr);

/* Runs the product with parameters p, reads C back and checks it against
 * float64 sums of the decoded weights with the call's epilogue, within
 * float32's bound of the design's metric (A and the weights are exact in
 * float32: only the sums round). */
og_status og_qgemm_problem_verify(og_qgemm *q, og_qgemm_problem *pr, const og_params *p,
                                  int *accepted, double *metric, char *why, size_t len);

/* Verifies p on the problem and on two ragged neighbours (rows, columns
 * and K off the kernel's tile; a bias, beta and ReLU, then GELU). */
og_status og_qgemm_candidate_verify(og_qgemm *q, og_qgemm_problem *pr, const og_params *p,
                                    int *accepted, double *metric, char *why, size_t len);

/* Weight bytes (codes, scales, zero points of every matrix) read per
 * second, in GB/s, by a call of us microseconds. */
double og_qgemm_weight_gbs(const og_qgemm_problem *pr, double us);

/* ---- the tuning loop (og_tune.c) ---- */

typedef struct og_shape {
    int64_t m, n, k, batch;
} og_shape;

typedef enum og_preset { OG_PRESET_QUICK = 0, OG_PRESET_STANDARD = 1 } og_preset;

/* ---- search strategies (og_search.c) ---- */

/* Which candidates ogtune tune measures: all in the space's order, a random
 * sample, or a search that follows the measurements (og_search). */
typedef enum og_strategy {
    OG_STRATEGY_EXHAUSTIVE = 0,
    OG_STRATEGY_RANDOM = 1,
    OG_STRATEGY_SMART = 2
} og_strategy;

const char *og_strategy_name(og_strategy s);
/* Parses "exhaustive", "random", "smart". Returns 0, or -1. */
int og_strategy_parse(const char *text, og_strategy *out);

/* Measures candidate i: *rate is its GFLOP/s (0 or less when rejected).
 * Returns non-zero, without measuring i, to end the search (a time budget
 * spent, an error). */
typedef int (*og_measure_fn)(void *user, size_t i, double *rate);

/* Runs a strategy over space[0..n): the default (index 0) first, then
 * exhaustive (in order), random (a permutation from seed) or smart (a model
 * of the measurements proposes the next candidate, og_search.c), until budget candidates
 * (0: the whole space) are measured or measure says stop. The same seed and
 * measurements give the same order. *measured: candidates measured. */
og_status og_search(og_strategy strategy, const og_params *space, size_t n, size_t budget,
                    uint64_t seed, og_measure_fn measure, void *user, size_t *measured);

/* ---- one candidate on one shape (og_subject.c) ---- */

/* What a (dtype, shape) is tuned with. */
typedef struct og_subject_job {
    og_dtype dtype; /* OG_INT8: Int8Gemm */
    og_mode mode;
    int recovered; /* float32 recovered from float16 products (dtype OG_F32) */
    int trans_a, trans_b;
    og_shape shape;
    /* A convolution (conv non-zero): its geometry, buffers NULL (the job
     * crosses to a worker process as bytes). */
    int conv;
    og_conv_args geometry;
    /* A low-bit weight product (qgemm non-zero): A of dtype, weights of
     * qformat, shape M x N x K x batch. */
    int qgemm;
    og_qweights_format qformat;
} og_subject_job;

/* The GEMM object and problem a job is measured on: a float GEMM, or an
 * Int8Gemm (dtype OG_INT8). */
typedef struct og_subject {
    og_context *ctx;
    og_gemm *g;
    og_problem *pr;
    og_int8gemm *ig;
    og_int8_problem *ipr;
    og_conv *cv;
    og_conv_problem *cpr;
    og_qgemm *qg;
    og_qgemm_problem *qpr;
} og_subject;

og_status og_subject_create(og_context *ctx, const og_subject_job *job, og_subject *out);

/* The unit of a record's rate: "GOP/s" for op "int8gemm" (8-bit products),
 * else "GFLOP/s"; either is 2*M*N*K*batch operations per second / 1e9. */
const char *og_rate_unit(const char *op);
void og_subject_destroy(og_subject *s);

/* The first words of a rejected record's reason: what went wrong. */
#define OG_REJECT_COMPILE "compile error"
#define OG_REJECT_LIMIT "over a limit"
#define OG_REJECT_WRONG "wrong result"
#define OG_REJECT_TIMEOUT "time-out"
#define OG_REJECT_CRASH "crashed"
#define OG_REJECT_DEVICE_LOST "device lost"
/* The validation layer (OG_VALIDATION) reported errors while a candidate
 * that was otherwise accepted was measured; the errors are on standard error,
 * and they make ogtune's exit status OG_EXIT_VALIDATION. */
#define OG_REJECT_VALIDATION "validation error"

/* ogtune's exit status when the validation layer reported errors in the
 * command's own process or in its tuner workers (the command's own status is
 * lost then: the tests take either as a failure). */
#define OG_EXIT_VALIDATION 85
/* The exit status of a sanitizer's report (AddressSanitizer,
 * LeakSanitizer, UndefinedBehaviorSanitizer) in ogtune, a command or a tuner
 * worker, in the sanitizer build (tuner/commands/og_sanitize.c): how the tuner tells
 * a worker's report from its other ends. */
#define OG_EXIT_SANITIZER 86

/* Verifies p on the shape and ragged shapes around its tile (float: within
 * the design's bound; Int8Gemm: bit for bit), then times it in the memory
 * the context's buffers live in (OG_TIMING_DEFAULT: after a warm-up, 3 to
 * 1000 calls covering 0.2 s of GPU time). Fills r's accepted, max_error,
 * samples (the timed calls), median_us, spread, memory
 * (og_context_memory_placement), gflops and reason: "" when accepted, else
 * one of the OG_REJECT_ classes,
 * ": " and the detail. Returns OG_OK, or OG_ERROR_DEVICE_LOST (r rejected
 * too) when the device is gone and s must not be used again. */
og_status og_subject_measure(og_subject *s, const og_params *p, og_record *r);

/* ---- measuring in a worker process (og_worker.c) ---- */

/* A worker: `ogtune worker` with its own Vulkan context, measuring the
 * candidates of one job sent to it through a socket, so that a candidate
 * that hangs, crashes the driver or loses the device costs only the worker:
 * the tuner stops it, records the candidate as rejected and starts another
 * (a new process, a new device). Linux: a worker dies with the tuner.
 * A sanitizer's report in a worker (OG_EXIT_SANITIZER) is never a
 * rejection: it is an error of the run, OG_ERROR_UNSUPPORTED with the
 * reason, like a worker that does not end cleanly when it is stopped. */
typedef struct og_worker {
    og_context *ctx;  /* the tuner's: the worker's validation errors are counted on it */
    int pid;          /* 0: not running */
    int fd;           /* the tuner's end of the socket pair */
    double timeout_s; /* to be ready, to measure one candidate, and to leave */
} og_worker;

/* Starts exe (the ogtune binary) as a worker for job and waits, at most
 * timeout_s seconds, until it has its context and problem. Errors: the
 * worker's own (its context or problem could not be created; it is then
 * stopped as og_worker_stop does), or OG_ERROR_UNSUPPORTED when no process
 * could be started, it was not ready in time, it ended before (a
 * sanitizer's report among those) or did not end cleanly after its own
 * error; reason in err.
 * The errors the validation layer reports in the worker (when OG_VALIDATION
 * turns it on there) are counted on ctx (og_validation_count): those of
 * each candidate with its result, the others when it is ready and when it
 * has destroyed its context at the end. */
og_status og_worker_start(og_context *ctx, const char *exe, const og_subject_job *job,
                          double timeout_s, og_worker *w, char *err, size_t errlen);
/* Measures p in the worker into r as og_subject_measure does, waiting at
 * most its time-out. A worker that gives no answer in time is killed at
 * once (r: OG_REJECT_TIMEOUT), one that dies is reaped (OG_REJECT_CRASH,
 * with the signal or exit status), one whose device was lost is stopped as
 * og_worker_stop does (OG_REJECT_DEVICE_LOST); then w is not running and the
 * next candidate needs og_worker_start. Errors (reason in err, r not to be
 * stored): a sanitizer's report ended the worker, or the stop after a lost
 * device failed. */
og_status og_worker_measure(og_worker *w, const og_params *p, og_record *r, char *err,
                            size_t errlen);
/* Stops a worker the normal way, OG_OK for one that is not running: the end
 * of its candidates, then it destroys its context, sends its last message
 * and exits (LeakSanitizer checks it then, in the sanitizer build), all
 * within its time-out, after which it is killed. Errors
 * (OG_ERROR_UNSUPPORTED, reason in err): it had to be killed, or did not
 * exit with status 0 (a sanitizer's report among those). */
og_status og_worker_stop(og_worker *w, char *err, size_t errlen);
/* The worker's side (`ogtune worker`): reads the job and the candidates from
 * descriptor 3, answers there. Returns the process exit status: 0 when it
 * ended as the tuner expects (the end of its candidates, a lost device, a
 * context it could not make: each reported first), else 1.
 * OG_TUNE_FAULT=KIND:PARAMS plants a fault in the measurement of the
 * candidate PARAMS (og_params_format's text), as a test of what the tuner
 * sees: one of og_plant's, by its name below. */
int og_worker_serve(void);

/* ---- faults planted in a worker (og_plant.c), for the tests ---- */

typedef enum og_plant {
    OG_PLANT_NONE,
    OG_PLANT_DEVICE_LOST, /* device-lost: the worker answers "device lost" and stops */
    OG_PLANT_VALIDATION,  /* validation: a buffer of size 0 (where the layer is on) */
    OG_PLANT_CRASH,       /* crash: the worker kills itself (SIGKILL, which no sanitizer
                           * intercepts: a crash that stays a rejection in every build) */
    OG_PLANT_LEAK,        /* leak: a block never freed (LeakSanitizer reports it at exit) */
    OG_PLANT_POISON       /* poison: a read of memory AddressSanitizer was told is off
                           * limits (its report ends the worker; nothing without it) */
} og_plant;

/* The fault OG_TUNE_FAULT plants in the measurement of p, or OG_PLANT_NONE. */
og_plant og_plant_for(const og_params *p);
/* Plants kind in this process, on ctx, before the candidate is measured
 * (OG_PLANT_DEVICE_LOST is the worker's own answer: nothing here). */
void og_plant_fault(og_plant kind, og_context *ctx);

typedef struct og_tune_opts {
    const char *db_path;
    og_dtype dtypes[3];
    size_t n_dtypes;
    og_shape *shapes;
    size_t n_shapes;
    /* Convolutions to tune instead of shapes (n_convs > 0): their geometry,
     * buffers NULL; records of their op (og_conv_op). */
    const og_conv_args *convs;
    size_t n_convs;
    /* Low-bit weight products of this format (not NULL) on the shapes, A of
     * the dtypes: og_space_qgemm, records of its op (og_qgemm_op). */
    const og_qweights_format *qformat;
    int trans_a, trans_b;
    og_preset preset;
    og_mode mode; /* Deterministic: the rule's kernel only, recorded under its own key */
    /* Float32 recovered from float16 products (dtypes float32 only): the
     * recovered space (og_space_recovered), records of op OG_OP_GEMM_RECOVERED */
    int recovered;
    double budget_s;          /* seconds for the whole run, shared by the shapes; 0: no limit */
    size_t budget_candidates; /* candidates per shape at most; 0: no limit */
    og_strategy strategy;
    int json;
    FILE *out; /* progress and results */
    /* The ogtune binary, to measure in worker processes (og_worker), each
     * candidate within timeout_s seconds; NULL: in this process, with no
     * time-out, and a lost device ends the run. */
    const char *worker_exe;
    double timeout_s;
} og_tune_opts;

/* The candidates of a preset for one shape that the device's limits allow
 * (og_space.c), what the runtime would choose without a database first:
 * few-rows shapes for float32 products with M <= 4 and A not transposed, the
 * decode kernel's for float16 and bfloat16 with M <= 16 and A not
 * transposed, else tiles (with split-k counts where K >= 128) and, for float16 on devices
 * that qualify, the cooperative-matrix tiles after them; for dtype OG_INT8 or OG_UINT8
 * (Int8Gemm), skinny shapes for M <= 16 with B not transposed, else Int8Gemm
 * tiles. *out is malloc'ed. For kernels generated as GLSL; og_space_in for
 * another dialect (no decode kernel there: the tiles). */
og_status og_space(const og_limits *lim, og_preset preset, og_dtype dtype, int trans_a, int trans_b,
                   const og_shape *s, og_params **out, size_t *n);
og_status og_space_in(const og_limits *lim, og_dialect dialect, og_preset preset, og_dtype dtype,
                      int trans_a, int trans_b, const og_shape *s, og_params **out, size_t *n);

/* The candidates of a preset for float32 recovered from float16 products
 * (the unscaled kernel with the default residual shift) at shape s, in
 * dialect and mode on a device with limits lim: og_params_recovered first
 * (the runtime's default), then the preset's tiles (og_space's, each unsplit)
 * and cooperative-matrix tiles (where the device qualifies) that run
 * recovered (og_params_recover_check): the staged ones. Few-rows shapes take
 * tiles too: recovered float32 has no few-rows kernel. *out is malloc'ed. */
og_status og_space_recovered(const og_limits *lim, og_dialect dialect, og_preset preset,
                             og_mode mode, const og_shape *s, og_params **out, size_t *n);

/* The candidates of a preset for a convolution of input type dtype whose
 * implicit GEMM is s (og_conv_shape: P*Q x Kg x Cg*R*S x images*groups):
 * og_space's tiles for that GEMM with B transposed, as the convolution runs
 * them (og_conv_params: element loads from storage buffers; for float16 the
 * cooperative-matrix tiles the device qualifies for, staged), each once,
 * the default tile first; with depthwise (og_conv_depthwise_eligible), the
 * depthwise kernel's space instead, its default first, which is what
 * selection takes for such a call. *out is malloc'ed. */
og_status og_space_conv(const og_limits *lim, og_preset preset, og_dtype dtype, const og_shape *s,
                        int depthwise, og_params **out, size_t *n);

/* The candidates of a preset for a low-bit weight product of shape s, the
 * default for M (og_qgemm_default) first. M <= 16: the decode kernel's
 * column and slice counts around it with 16-byte loads (quick: 2 to 8
 * columns, 16 to 64 slices; standard: 64 to 512 invocations, word loads
 * too, and half the rows; the default with 2 and 4 units a trip
 * (unroll); where N gives fewer than 256 workgroups, the default split in
 * 2, 4 and 8 k ranges). M > 16: og_space's tiles, each
 * unsplit with element loads from storage buffers, the staged matrix tiles
 * that run recovered with range scaling (og_space_recovered's, where the
 * device has float16 matrices), then the decode kernel over tiles of 16
 * rows around its default (quick: 5, standard: 9).
 * *out is malloc'ed. */
og_status og_space_qgemm(const og_limits *lim, og_preset preset, const og_shape *s, og_params **out,
                         size_t *n);

/* The progress line ogtune tune rewrites on a terminal: candidates done of
 * total, the best rate so far and the time left (from the mean time per
 * candidate, capped by what is left of a time budget; budget_left_s < 0:
 * none). Not on a terminal, every candidate gets a plain line instead. */
void og_progress_text(char *buf, size_t len, size_t done, size_t total, double elapsed_s,
                      double budget_left_s, double best, const char *unit);

/* Tunes every (dtype, shape): the strategy picks candidates within the
 * budgets, and each is verified, timed and committed to the database as it
 * completes, accepted or rejected with the reason. A candidate the database
 * already holds (same device, key, shape, template hash and params) is read,
 * not measured again, so running again resumes a run that was stopped.
 * The validation layer's errors while a candidate is measured, in this
 * process or in a worker, reject it (OG_REJECT_VALIDATION) unless it was
 * rejected already; a worker's errors are counted on ctx
 * (og_context_validation_errors) like this process's own.
 * Errors: OG_ERROR_UNSUPPORTED when the context's queue family cannot write
 * timestamps (timestampValidBits 0), before anything is measured; and, with
 * workers, the errors of og_worker_start, og_worker_measure (a sanitizer's
 * report) and og_worker_stop (a worker that did not end cleanly). */
og_status og_tune(og_context *ctx, const og_tune_opts *opts);

/* Writes s as a JSON string literal (og_tune.c; the commands' and the
 * report's JSON too). */
void og_json_string(FILE *f, const char *s);

#endif /* OG_TUNER_H */
