/* In the sanitizer build only (CMakeLists.txt): every sanitizer's report in
 * ogtune, a command or a tuner worker, ends it with exit status
 * OG_EXIT_SANITIZER, which the tuner tells from a worker's other ends and
 * the tests from an ordinary failure. The sanitizers read these defaults
 * before ASAN_OPTIONS and UBSAN_OPTIONS, which can still override them;
 * LeakSanitizer, part of AddressSanitizer here, takes AddressSanitizer's. */
#include "og_tuner.h"

#define OG_STR(x) #x
#define OG_XSTR(x) OG_STR(x)

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *__asan_default_options(void)
{
    return "exitcode=" OG_XSTR(OG_EXIT_SANITIZER);
}

const char *__ubsan_default_options(void)
{
    return "exitcode=" OG_XSTR(OG_EXIT_SANITIZER);
}
