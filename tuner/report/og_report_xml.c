/* ogtune report: text from the database written safely into HTML and SVG,
 * and numbers of any size. */
#include <math.h>
#include <stdint.h>

#include "og_report.h"

/* Bytes of the well-formed UTF-8 sequence at s when it encodes a character
 * XML 1.0 allows (tab, line feed, carriage return, U+0020 and above, no
 * surrogates, U+FFFE or U+FFFF); 0 otherwise. s is NUL-terminated and
 * s[0] is not NUL. */
static size_t xml_char_bytes(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
    size_t len;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0) {
        len = 2, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    /* A continuation byte is never NUL, so this stops at the end of s. */
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    return len;
}

void og_xml_text(FILE *f, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t chars = 0; *p; chars++) {
        if (chars == max) {
            fputs("\xe2\x80\xa6", f); /* U+2026, the ellipsis */
            return;
        }
        size_t len = xml_char_bytes(p);
        switch (len ? *p : 0) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        case 0:
            fputs("\xef\xbf\xbd", f); /* U+FFFD in place of one bad byte */
            len = 1;
            break;
        default:
            fwrite(p, 1, len, f);
        }
        p += len;
    }
}

void og_report_number(FILE *f, double x, int decimals)
{
    if (fabs(x) < 1e9)
        fprintf(f, "%.*f", decimals, x);
    else
        fprintf(f, "%.3e", x);
}
