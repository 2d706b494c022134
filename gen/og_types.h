/* The types gen/ and db/ share with the runtime: status codes, element
 * types and modes. The public header onegpu.h carries the same text under
 * the same guard (tests/test_floors.sh checks that the two agree), so the
 * ground floor needs nothing of runtime/. */
#ifndef OG_TYPES_H
#define OG_TYPES_H
/* Status codes. OG_OK is zero; everything else is an error. */
typedef enum og_status {
    OG_OK = 0,
    OG_ERROR_INVALID_ARGUMENT, /* a shape, stride, offset or option is out of range */
    OG_ERROR_UNSUPPORTED,      /* valid, but beyond what this device or build can do */
    OG_ERROR_OUT_OF_MEMORY,    /* host or device allocation failed */
    OG_ERROR_VULKAN,           /* a Vulkan call failed (the message gives the VkResult) */
    OG_ERROR_COMPILE,          /* a generated kernel failed to compile */
    OG_ERROR_NOT_FOUND,        /* no device, database record or file where one was asked for */
    OG_ERROR_DATABASE,         /* the tuning database could not be read or written */
    OG_ERROR_DEVICE_LOST       /* VK_ERROR_DEVICE_LOST (Vulkan spec 5.2.3, "Lost Device"):
                                  nothing more runs on this context; destroy it and create
                                  a new one (its buffers' contents are undefined) */
} og_status;

/* Element type of A and B. The float GEMM takes float32, float16, bfloat16
 * and the FP8 types (C is float32); Int8Gemm takes int8 and uint8 (C is
 * int32 or float32). FP8 elements are bytes (OCP 8-bit floating point,
 * decoded exactly as onegpu_formats.h's og_e4m3_to_f32 and og_e5m2_to_f32). */
typedef enum og_dtype {
    OG_F32 = 0,
    OG_F16 = 1,      /* IEEE 754 binary16 */
    OG_BF16 = 2,     /* bfloat16: the high 16 bits of a binary32 */
    OG_INT8 = 3,     /* two's complement, -128..127 */
    OG_UINT8 = 4,    /* 0..255 */
    OG_FP8_E4M3 = 5, /* 1 sign, 4 exponent (bias 7), 3 mantissa bits; max 448, no infinities */
    OG_FP8_E5M2 = 6  /* 1 sign, 5 exponent (bias 15), 2 mantissa bits; max 57344, infinities */
} og_dtype;

/* Fast may use any tuned variant and summation order; Deterministic always
 * runs the portable kernel with the documented summation order
 * (docs/accumulation-order.md), whatever the tuning database says. */
typedef enum og_mode { OG_MODE_FAST = 0, OG_MODE_DETERMINISTIC = 1 } og_mode;
#endif /* OG_TYPES_H */
