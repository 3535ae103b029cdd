/* cli/safe_text.c — text from elsewhere, as a terminal should see it.
 *
 * What strata prints comes in part from files anyone may have written
 * (index.json's device names and strategies, records and their messages,
 * explore.json) and from the OpenCL driver (device names, build logs). A
 * control character in it would reach the user's terminal raw: ESC starts
 * an escape sequence (colours, cursor moves, a changed window title), CR
 * overwrites the line before it, BEL rings. Every such text is printed
 * through here, so that one rule decides what a terminal sees. */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The length of the UTF-8 sequence at s (at most n bytes) when it is a
 * well-formed one (no overlong form, no surrogate, at most U+10FFFF); else
 * 0. */
static size_t utf8_char(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!len || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (len == 3 && c == 0xe0 && s[1] < 0xa0) return 0;             /* overlong */
    if (len == 3 && c == 0xed && s[1] >= 0xa0) return 0;            /* surrogates */
    if (len == 4 && c == 0xf0 && s[1] < 0x90) return 0;             /* overlong */
    if (len == 4 && c == 0xf4 && s[1] >= 0x90) return 0;            /* past U+10FFFF */
    return len;
}

size_t safe_text(st_buf *out, const char *text, size_t len, bool lines) {
    const unsigned char *s = (const unsigned char *)text;
    size_t shown = 0;
    for (size_t i = 0; i < len; shown++) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x7f) {
            st_buf_put(out, (const char *)s + i++, 1);
            continue;
        }
        if (lines && (c == '\n' || c == '\t')) {
            st_buf_put(out, (const char *)s + i++, 1);
            continue;
        }
        size_t n = c >= 0x80 ? utf8_char(s + i, len - i) : 0;
        /* a C1 control (U+0080 to U+009F: some terminals take U+009B as
         * ESC [) is one `?`, as is a C0 control, DEL, or a byte that is
         * not UTF-8 */
        bool c1 = n == 2 && c == 0xc2 && s[i + 1] < 0xa0;
        st_buf_put(out, n && !c1 ? (const char *)s + i : "?", n && !c1 ? n : 1);
        i += n ? n : 1;
    }
    return shown;
}

void say(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    char *text = (size_t)n < sizeof small ? small : malloc((size_t)n + 1);
    if (!text) return;
    if (text != small) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    st_buf safe = {0};
    safe_text(&safe, text, (size_t)n, true);
    if (safe.data) fwrite(safe.data, 1, safe.len, f);
    st_buf_free(&safe);
    if (text != small) free(text);
}
