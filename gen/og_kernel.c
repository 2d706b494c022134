/* The kernels of a GEMM call: which template, workgroup size and memory
 * (og_kernel_check.c checks them against a device). */
#include "og_gen.h"

const char *og_dtype_name(og_dtype t)
{
    switch (t) {
    case OG_F16:
        return "f16";
    case OG_BF16:
        return "bf16";
    case OG_INT8:
        return "i8";
    case OG_UINT8:
        return "u8";
    case OG_FP8_E4M3:
        return "e4m3";
    case OG_FP8_E5M2:
        return "e5m2";
    default:
        return "f32";
    }
}

int og_dtype_is_int8(og_dtype t)
{
    return t == OG_INT8 || t == OG_UINT8;
}

int og_dtype_is_fp8(og_dtype t)
{
    return t == OG_FP8_E4M3 || t == OG_FP8_E5M2;
}

size_t og_dtype_bytes(og_dtype t)
{
    return t == OG_F32 ? 4 : t == OG_F16 || t == OG_BF16 ? 2 : 1;
}

og_dtype og_kernel_b_type(const og_kernel_key *key)
{
    if (key->dtype_b != 0 || og_dtype_is_fp8(key->dtype))
        return key->dtype_b;
    return key->dtype;
}

const char *og_kernel_template(const og_kernel_key *key)
{
    switch (key->kernel) {
    case OG_KERNEL_GEMM:
        return og_params_template(&key->p);
    case OG_KERNEL_PLANES: /* the tile's split-k pass, or the low-bit decode kernel's */
        return key->p.variant == OG_VARIANT_QDECODE ? OG_TEMPLATE_QDECODE : OG_TEMPLATE_TILE;
    case OG_KERNEL_REDUCE:
        return OG_TEMPLATE_REDUCE;
    case OG_KERNEL_EXPONENTS:
        return OG_TEMPLATE_EXPONENTS;
    case OG_KERNEL_IM2COL:
        return OG_TEMPLATE_IM2COL;
    default:
        return OG_TEMPLATE_ELEMENTWISE;
    }
}

int og_kernel_has_params(const og_kernel_key *key)
{
    return key->kernel == OG_KERNEL_GEMM || key->kernel == OG_KERNEL_PLANES;
}

uint32_t og_kernel_shared_bytes(const og_kernel_key *key)
{
    if (!og_kernel_has_params(key))
        return 0;
    const og_params *p = &key->p;
    uint32_t bytes = og_params_shared_bytes(p);
    if (!key->recover)
        return bytes;
    /* Recovered float32 stages a tile of residuals beside each tile of high
     * parts: float32 values in the portable tile, float16 in the matrix one,
     * whose small sums also leave through a float32 fragment per subgroup. */
    if (p->variant == OG_VARIANT_COOPMAT)
        return bytes +
               (uint32_t)(2 * p->buf * (p->bm * (p->bk + p->pad) + p->bk * (p->bn + p->pad)) +
                          4 * p->fm * p->fn * p->sgx * p->sgy);
    return 2 * bytes;
}

static uint64_t steps(uint64_t k_len, int per_step)
{
    return (k_len + (uint64_t)per_step - 1) / (uint64_t)per_step;
}

/* Counted from the GLSL loops of each template (Lua loops are unrolled).
 * Lavapipe runs an invocation's loops as SIMD code under masks, so a loop
 * costs its trips plus one, even where no lane takes a trip: og_row4_a's
 * tail loop costs one in every k step of the skinny kernel's packed path. */
uint64_t og_kernel_loop_iterations(const og_kernel_key *key, uint64_t k_len)
{
    /* Range scaling's exponents: K terms per row or column inside the loop
     * over a grid layer's products (one trip: pieces fit the z count). */
    if (key->kernel == OG_KERNEL_EXPONENTS)
        return k_len + 1u + 1u + 1u;
    const og_params *p = &key->p;
    switch (p->variant) {
    case OG_VARIANT_FEWROWS: /* k steps four to a trip, up to three single steps,
                              * one end test for each of the two k loops of the
                              * four row counts (two versions each for B K x N),
                              * then four rows' slice sums */
        return steps(k_len, 4 * p->slices) + 3u + 4u * 2u * 2u + 4u * (uint64_t)p->slices;
    case OG_VARIANT_INT8_SKINNY: { /* k slices; rows of slice sums */
        uint64_t rows = (uint64_t)p->rows, sums = rows * ((uint64_t)p->slices + 1u) + rows + 1u;
        /* Word loads: quads of k, unchecked then checked (one more quad and
         * one more exit); four columns' slice sums per row. */
        if (p->vec == 4)
            return steps(k_len, 4 * p->slices) + 1u + 2u + rows * 4u * ((uint64_t)p->slices + 1u) +
                   rows + 1u;
        if (!p->dot)
            return steps(k_len, p->slices) + 1u + sums;
        /* Four terms a step, with a row-end loop per row (up to 3 trips at the end). */
        return steps(k_len, 4 * p->slices) * (1u + rows) + 1u + 3u * rows + sums;
    }
    case OG_VARIANT_QDECODE: /* 32-weight units a slice, then the slices' tree */
        return steps(k_len, 32 * p->slices) + 1u + 8u + 1u;
    case OG_VARIANT_INT8_TILE: { /* k steps, each with its KW words, then the register tile */
        /* Direct loads: loops of chunks of 256 k around loops of steps, one
         * pair for the whole steps and one for the tail. A chunk costs a trip
         * of its loop and one of the step loop's exit; the tail may add a
         * chunk; each chunk loop costs one more at its exit. */
        if (p->load == OG_LOAD_DIRECT)
            return steps(k_len, p->bk) + 2u * (steps(k_len, 256) + 1u) + 2u +
                   (uint64_t)(p->tm * p->tn) + 1u;
        uint64_t kw = (uint64_t)(p->dot ? p->bk / 4 : p->bk);
        return steps(k_len, p->bk) * (kw + 2u) + 1u + (uint64_t)(p->tm * p->tn) + 1u;
    }
    case OG_VARIANT_COOPMAT: { /* k steps: the staging loops and the fk-deep products
                                * (the direct steps' loops counted as staged ones;
                                * double buffering stages one step more, before the
                                * loop); then each accumulator's epilogue loop */
        uint64_t threads = (uint64_t)p->sub * (uint64_t)(p->sgx * p->sgy);
        uint64_t loads = steps((uint64_t)(p->bm * p->bk), (int)threads) +
                         steps((uint64_t)(p->bk * p->bn), (int)threads);
        uint64_t accs = (uint64_t)((p->bm / p->sgy / p->fm) * (p->bn / p->sgx / p->fn));
        uint64_t elements = (uint64_t)(p->fm * p->fn);
        return (steps(k_len, p->bk) + (uint64_t)(p->buf - 1)) *
                   (1u + 2u * ((uint64_t)(p->bk / p->fk) + 1u) + loads + 2u) +
               2u + accs * ((elements + (uint64_t)p->sub - 1u) / (uint64_t)p->sub + 1u);
    }
    case OG_VARIANT_INT8_COOPMAT: { /* k steps (the staging unrolled): the fk-deep
                                     * products; then each accumulator's epilogue loop */
        uint64_t accs = (uint64_t)((p->bm / p->sgy / p->fm) * (p->bn / p->sgx / p->fn));
        uint64_t elements = (uint64_t)(p->fm * p->fn);
        return steps(k_len, p->bk) * (2u + (uint64_t)(p->bk / p->fk)) + 1u +
               accs * ((elements + (uint64_t)p->sub - 1u) / (uint64_t)p->sub + 1u);
    }
    default: /* the tile: k steps (direct loads: an unchecked loop of the whole
              * steps, then a checked one for the tail), then the register tile */
        return steps(k_len, p->bk) + 1u + (p->load == OG_LOAD_DIRECT ? 1u : 0u) +
               (uint64_t)(p->tm * p->tn) + 1u;
    }
}

void og_kernel_local_size(const og_kernel_key *key, uint32_t size[3])
{
    size[1] = size[2] = 1;
    if (!og_kernel_has_params(key)) {
        size[0] = OG_ELEMENTWISE_THREADS;
    } else if (key->p.variant == OG_VARIANT_QDECODE) {
        size[0] = (uint32_t)(key->p.cols * key->p.slices);
    } else if (key->p.variant == OG_VARIANT_FEWROWS || key->p.variant == OG_VARIANT_INT8_SKINNY) {
        /* vec=4: four columns (or few rows' four slices) an invocation. */
        size[0] = (uint32_t)(key->p.cols * key->p.slices / (key->p.vec == 4 ? 4 : 1));
    } else if (og_params_matrix(&key->p)) {
        size[0] = (uint32_t)(key->p.sub * key->p.sgx * key->p.sgy);
    } else {
        size[0] = (uint32_t)key->p.wgx;
        size[1] = (uint32_t)key->p.wgy;
    }
}
