/* Where a checked SGEMM call runs. */
#ifndef OGB_ROUTE_H
#define OGB_ROUTE_H

#include "ogb_call.h"

/* Runs a call that passed ogb_check, after netlib's quick return (M = 0,
 * N = 0, or alpha = 0 or K = 0 with beta = 1: nothing read or written):
 * alpha = 0 or K = 0 (no product) with netlib's loops here (ogb_ref.h);
 * otherwise on the GPU when ONEGPU_BLAS_FORCE=gpu or, without
 * ONEGPU_BLAS_FORCE, when the cost model (ogb_model.h) predicts the GPU path
 * faster than the CPU BLAS; else, and whenever the GPU path fails (C then
 * untouched), on the CPU BLAS with the original arguments. The model is
 * read from its file on the first call that needs it, or measured then
 * (ogb_calibrate.h) and written; without a model (no usable device) every
 * call goes to the CPU. The caller's floating-point environment (flags,
 * traps, rounding) is held and restored around the GPU path and the model's
 * measurement (feholdexcept, fesetenv). Traces one line (ogb_trace.h)
 * naming `api`; a GPU call's line adds its seconds and those of its copies. */
void ogb_route(const char *api, const ogb_call *call);

#endif /* OGB_ROUTE_H */
