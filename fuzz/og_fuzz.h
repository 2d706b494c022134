/*
 * What the fuzz targets share (fuzz/README.md): libFuzzer's entry point,
 * a reader that turns the fuzzer's bytes into values, the failure of a
 * property, and scratch files. Each target is one fuzz_*.c file; built with
 * clang -fsanitize=fuzzer (OG_FUZZ=ON) libFuzzer drives it, and in the
 * normal build og_replay.c feeds it every file of its committed corpus.
 */
#ifndef OG_FUZZ_H
#define OG_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point, defined by every target: returns 0. A property
 * that does not hold aborts (og_fuzz_assert). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with the file, line and failed condition when cond is false; what
 * a fuzz target asserts about the code under test. */
#define og_fuzz_assert(cond, ...)                                                                  \
    do {                                                                                           \
        if (!(cond))                                                                               \
            og_fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                  \
    } while (0)

void og_fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

/* The fuzzer's bytes, consumed from the front; past the end every read is 0. */
typedef struct og_fuzz_input {
    const uint8_t *p;
    size_t n;
} og_fuzz_input;

/* The next `bytes` bytes (at most 8), little-endian. */
uint64_t og_fuzz_bits(og_fuzz_input *in, int bytes);

/* A dimension, offset or size: one class byte then the value, so a few
 * bytes reach every range the checks distinguish: small values, 16- and
 * 32-bit ones, any 64-bit one (negative too), and the edges 0, 1, -1,
 * 2^31 - 1, 2^32 - 1, 2^32, INT64_MAX and INT64_MIN. */
int64_t og_fuzz_value(og_fuzz_input *in);

/* A float from a class byte: 0, 1, -1, 0.5, 2, NaN, infinity, or any bits. */
float og_fuzz_float(og_fuzz_input *in);

/* A directory of scratch files for this process, made on first use and
 * removed at exit (with the files named by og_fuzz_path). */
const char *og_fuzz_dir(void);

/* "<og_fuzz_dir()>/<name>" into buf (of len bytes). */
void og_fuzz_path(char *buf, size_t len, const char *name);

/* Writes size bytes of data to path, replacing it; aborts on failure. */
void og_fuzz_write_file(const char *path, const uint8_t *data, size_t size);

/* Removes path and the SQLite journal files beside it (-wal, -shm, -journal). */
void og_fuzz_remove_db(const char *path);

#endif /* OG_FUZZ_H */
