/*
 * The argument-check targets' shared part (fuzz_gemm_check.c,
 * fuzz_int8gemm_check.c): devices, the shape and buffers of a call read
 * from the fuzzer's bytes, and the oracle that judges what the check and
 * plan layers (runtime/plan/og_plan.h) made of them, computed on its own
 * from the arguments and the push constants each dispatch gets. A call runs
 * as check, plan, record (runtime/og_gemm_call.c): a refused check or plan
 * records nothing, so nothing is written; an accepted plan's dispatches are
 * what would be recorded.
 */
#ifndef OG_FUZZ_PLAN_H
#define OG_FUZZ_PLAN_H

#include "og_fuzz.h"
#include "og_internal.h" /* the plan layer, which the targets drive */
#include "og_tuner.h"

/* One of the devices the targets plan for (which % 3): lavapipe; a device
 * with tiny grid counts, storage range and texel buffers, so calls run in
 * many pieces; a large discrete GPU with cooperative matrices and no loop
 * cap. */
og_limits og_fuzz_limits(unsigned which);

/* The buffers of a call: A, B, C, bias and Int8Gemm's column scales. */
enum { OG_FUZZ_A, OG_FUZZ_B, OG_FUZZ_C, OG_FUZZ_BIAS, OG_FUZZ_SCALES, OG_FUZZ_BUFFERS };

/* What the oracle knows of a call: its shape and layout as float GEMM
 * arguments (og_int8gemm_layout for Int8Gemm) with the bias, the bytes of
 * an element of A and of B, and the column scales. */
typedef struct og_fuzz_call {
    og_gemm_args g;
    uint64_t a_bytes, b_bytes;
    og_buffer *col_scales;
    int64_t col_scale_offset;
    og_buffer bufs[OG_FUZZ_BUFFERS]; /* what the pointers point at */
} og_fuzz_call;

/* Reads the shape (trans_a, trans_b, M, N, K, batch), the layout (leading
 * dimensions and batch strides, mostly near the smallest the shape allows;
 * offsets) and buffers of A, B, C, the bias and the column scales (each
 * absent, or sized near what the layout needs, with a wrapped buffer's
 * skew) into call->g, call->col_scales and call->col_scale_offset.
 * call->a_bytes and call->b_bytes must be set first. */
void og_fuzz_read_call(og_fuzz_input *in, og_fuzz_call *call);

/* A refusal: OG_ERROR_INVALID_ARGUMENT or OG_ERROR_UNSUPPORTED, with a message. */
void og_fuzz_check_refusal(og_status st, const char *err);

/* An accepted plan: every dispatch within the device's grid counts, covering
 * its columns and rows; every operand it binds present, and the extent its
 * push constants reach inside the operand's buffer; the whole call's A, B, C,
 * bias and scales inside their buffers; outputs that do not overlap; split-k
 * ranges that cover K, and planes and exponents inside their scratch; and
 * the pieces together writing each row of every product once. */
void og_fuzz_check_plan(const og_fuzz_call *call, const og_limits *lim, const og_plan *pl);

#endif /* OG_FUZZ_PLAN_H */
