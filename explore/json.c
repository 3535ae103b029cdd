/* explore/json.c — the one JSON reader and writer of strata's records.
 *
 * The reader is a recursive-descent parser of RFC 8259 into an arena: every
 * value, string, key and array lives there, so a caller frees nothing. It
 * never reads past `len` (records come from files and pipes, not C strings),
 * and each error names the line and column (1-based, in bytes, as
 * st_err_format expects) of the character that is wrong, with what was
 * expected there.
 *
 * Deliberate choices:
 *   - bytes >= 0x80 inside strings are passed through as they are, not
 *     checked as UTF-8: the writer passes whatever it is given through too
 *     (device names, for one, come from drivers), and what strata writes it
 *     must be able to read back;
 *   - \u0000 is rejected, because strings are handed out NUL-terminated and a
 *     NUL inside one would silently cut it short;
 *   - a number too large for a double is an error; one too small becomes 0
 *     or a subnormal, as strtod rounds it.
 */
#include "explore/explore.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

typedef struct parser {
    st_arena *a;
    const char *what;
    const char *text;
    size_t len, pos;
    st_err *err;
} parser;

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* The line and column of byte `at`: found by counting only when an error is
 * reported, so that the happy path keeps no position bookkeeping. */
static st_loc loc_of(const parser *p, size_t at) {
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < at && i < p->len; i++)
        if (p->text[i] == '\n') {
            line++;
            line_start = i + 1;
        }
    return (st_loc){p->what, line, (int)(at - line_start) + 1};
}

__attribute__((format(printf, 3, 4))) static bool fail_at(parser *p, size_t at, const char *fmt, ...) {
    char msg[sizeof p->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return st_fail(p->err, loc_of(p, at), "%s", msg);
}

/* What is at byte `at`, for "…, found X": the character when it is
 * printable ASCII, else its byte value, or the end of the input. */
static const char *found_at(const parser *p, size_t at, char *buf, size_t cap) {
    if (at >= p->len) return "the end of the input";
    unsigned char c = (unsigned char)p->text[at];
    if (c >= 0x20 && c < 0x7f) snprintf(buf, cap, "`%c`", c);
    else snprintf(buf, cap, "byte 0x%02X", c);
    return buf;
}

/* "expected WANTED, found X" at byte `at`. */
static bool expected(parser *p, size_t at, const char *wanted) {
    char buf[16];
    return fail_at(p, at, "expected %s, found %s", wanted, found_at(p, at, buf, sizeof buf));
}

static bool out_of_memory(parser *p) { return st_fail_internal(p->err, "out of memory reading %s", p->what); }

/* ------------------------------------------------------------------------ */
/* Scanning                                                                 */
/* ------------------------------------------------------------------------ */

static void skip_space(parser *p) {
    while (p->pos < p->len) {
        char c = p->text[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

/* The byte at pos, or -1 at the end, so that every look-ahead is bounded. */
static int peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1; }

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Strings                                                                  */
/* ------------------------------------------------------------------------ */

/* Four hex digits after `\u` at p->pos, into *out. */
static bool read_hex4(parser *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++, p->pos++) {
        int d = hex_value(peek(p));
        if (d < 0) return expected(p, p->pos, "four hex digits after `\\u`");
        v = v * 16 + (unsigned)d;
    }
    *out = v;
    return true;
}

static size_t put_utf8(char *o, unsigned cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A \u escape (p->pos at the `u`), a surrogate pair taking two, as UTF-8
 * into o; the length through *n. */
static bool read_unicode_escape(parser *p, size_t backslash, char *o, size_t *n) {
    p->pos++; /* the u */
    unsigned cp = 0;
    if (!read_hex4(p, &cp)) return false;
    if (cp == 0)
        return fail_at(p, backslash, "`\\u0000` is not allowed: strings are NUL-terminated, so a NUL would cut one short");
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail_at(p, backslash, "lone low surrogate `\\u%04X`: it must follow a high surrogate \\uD800..\\uDBFF", cp);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        size_t second = p->pos;
        if (p->pos + 1 >= p->len || p->text[p->pos] != '\\' || p->text[p->pos + 1] != 'u')
            return fail_at(p, backslash,
                           "lone high surrogate `\\u%04X`: expected a low surrogate \\uDC00..\\uDFFF right after it", cp);
        p->pos += 2;
        unsigned lo = 0;
        if (!read_hex4(p, &lo)) return false;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail_at(p, second, "expected a low surrogate \\uDC00..\\uDFFF after `\\u%04X`, found `\\u%04X`", cp,
                           lo);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    *n = put_utf8(o, cp);
    return true;
}

/* The byte a one-letter escape stands for, or -1 when it is not one. */
static int short_escape(int c) {
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return -1;
    }
}

/* Where the raw string starting at `from` (after its opening quote) stops
 * being scannable: its closing quote, a control character or the end. No
 * escape decodes to more bytes than it takes, so this bounds the decoded
 * length and the string is decoded into one allocation. */
static size_t raw_string_end(const parser *p, size_t from) {
    size_t i = from;
    while (i < p->len) {
        unsigned char c = (unsigned char)p->text[i];
        if (c == '"' || c < 0x20) break;
        i += c == '\\' ? 2 : 1;
    }
    return i < p->len ? i : p->len;
}

/* A string at p->pos (its opening quote), decoded into the arena. */
static bool parse_string(parser *p, const char **out, size_t *out_len) {
    size_t open = p->pos++;
    size_t bound = raw_string_end(p, p->pos);
    char *s = st_arena_alloc(p->a, bound - p->pos + 1);
    if (!s) return out_of_memory(p);
    size_t n = 0;
    for (;;) {
        int c = peek(p);
        if (c < 0)
            return fail_at(p, p->len, "unterminated string (opened at column %d): expected `\"` before the end of the input",
                           loc_of(p, open).col);
        if (c == '"') break;
        if (c < 0x20)
            return fail_at(p, p->pos, "control character 0x%02X in a string: write it as an escape such as \\n or \\u%04X",
                           (unsigned)c, (unsigned)c);
        if (c != '\\') {
            s[n++] = (char)c;
            p->pos++;
            continue;
        }
        size_t backslash = p->pos++;
        int e = peek(p);
        if (e == 'u') {
            size_t k = 0;
            if (!read_unicode_escape(p, backslash, s + n, &k)) return false;
            n += k;
            continue;
        }
        int byte = short_escape(e);
        if (byte < 0) {
            if (e < 0)
                return fail_at(p, p->len, "unterminated string: expected an escape after `\\`, found the end of the input");
            return expected(p, p->pos, "an escape: one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
        }
        s[n++] = (char)byte;
        p->pos++;
    }
    p->pos++; /* the closing quote */
    s[n] = 0;
    *out = s;
    *out_len = n;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Numbers and literals                                                     */
/* ------------------------------------------------------------------------ */

/* One or more digits, or an error naming `where` ("after `.`"). */
static bool digits(parser *p, const char *where) {
    if (!is_digit(peek(p))) {
        char wanted[64];
        snprintf(wanted, sizeof wanted, "a digit %s", where);
        return expected(p, p->pos, wanted);
    }
    while (is_digit(peek(p))) p->pos++;
    return true;
}

/* A number by JSON's grammar — -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
 * — checked first, since strtod takes more (hex, inf, "1.", ".5", a `+`),
 * then converted from a NUL-terminated copy: the text itself may not end. */
static bool parse_number(parser *p, double *out) {
    size_t start = p->pos;
    if (peek(p) == '-') p->pos++;
    if (peek(p) == '0') {
        p->pos++;
        if (is_digit(peek(p))) return fail_at(p, p->pos, "a number cannot have a leading zero");
    } else if (!digits(p, start < p->pos ? "after `-`" : "to start a number")) {
        return false;
    }
    if (peek(p) == '.') {
        p->pos++;
        if (!digits(p, "after `.` in a number")) return false;
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        p->pos++;
        if (peek(p) == '+' || peek(p) == '-') p->pos++;
        if (!digits(p, "in the exponent of a number")) return false;
    }
    size_t n = p->pos - start;
    char small[64];
    char *copy = n < sizeof small ? small : st_arena_alloc(p->a, n + 1);
    if (!copy) return out_of_memory(p);
    memcpy(copy, p->text + start, n);
    copy[n] = 0;
    double v = strtod(copy, NULL);
    if (isinf(v)) return fail_at(p, start, "number out of the range of a double");
    *out = v;
    return true;
}

/* `true`, `false` or `null`, byte by byte so that a truncated one stops at
 * the end; anything else that starts with a letter is named as a word. */
static bool parse_word(parser *p, st_json *v) {
    size_t start = p->pos, end = p->pos;
    while (end < p->len && ((p->text[end] >= 'a' && p->text[end] <= 'z') || (p->text[end] >= 'A' && p->text[end] <= 'Z')))
        end++;
    size_t n = end - start;
    const char *w = p->text + start;
    if (n == 4 && !memcmp(w, "true", 4)) {
        v->kind = ST_JSON_BOOL;
        v->boolean = true;
    } else if (n == 5 && !memcmp(w, "false", 5)) {
        v->kind = ST_JSON_BOOL;
    } else if (n == 4 && !memcmp(w, "null", 4)) {
        v->kind = ST_JSON_NULL;
    } else {
        bool special = (n == 3 && !memcmp(w, "NaN", 3)) || (n == 8 && !memcmp(w, "Infinity", 8));
        return fail_at(p, start, "unknown word `%.*s`: expected a value (%s)", (int)(n > 32 ? 32 : n), w,
                       special ? "JSON has no NaN or Infinity" : "a word is true, false or null");
    }
    p->pos = end;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

/* Arrays and objects are collected as a list in the arena while their size
 * is unknown, then copied into the one array st_json hands out. */
typedef struct entry {
    st_json value;
    const char *key;
    struct entry *next;
} entry;

static bool parse_value(parser *p, st_json *v, int depth);

static bool collect(parser *p, st_json *v, entry *first, size_t n, bool keyed) {
    st_json *items = n ? st_arena_alloc(p->a, n * sizeof *items) : NULL;
    const char **keys = keyed && n ? st_arena_alloc(p->a, n * sizeof *keys) : NULL;
    if (n && (!items || (keyed && !keys))) return out_of_memory(p);
    size_t i = 0;
    for (entry *e = first; e; e = e->next, i++) {
        items[i] = e->value;
        if (keyed) keys[i] = e->key;
    }
    v->len = n;
    v->items = items;
    v->keys = keys;
    return true;
}

/* The next entry of a list, appended at *tail. */
static entry *new_entry(parser *p, entry ***tail) {
    entry *e = st_arena_zalloc(p->a, sizeof *e);
    if (!e) {
        out_of_memory(p);
        return NULL;
    }
    **tail = e;
    *tail = &e->next;
    return e;
}

/* An array or an object, at its `[` or `{`: its members (an object's with
 * their keys) in order, collected once the closing bracket is read. */
static bool parse_members(parser *p, st_json *v, int depth, bool object) {
    char close = object ? '}' : ']';
    const char *after = object ? "`,` or `}` after an object member" : "`,` or `]` after an array element";
    v->kind = object ? ST_JSON_OBJECT : ST_JSON_ARRAY;
    p->pos++; /* [ or { */
    entry *first = NULL, **tail = &first;
    size_t n = 0;
    skip_space(p);
    if (peek(p) == close) {
        p->pos++;
        return collect(p, v, NULL, 0, object);
    }
    for (;;) {
        skip_space(p);
        if (n > 0 && peek(p) == close)
            return fail_at(p, p->pos, "expected %s after `,` (JSON has no trailing commas)",
                           object ? "a string key" : "a value");
        if (object && peek(p) != '"') return expected(p, p->pos, n > 0 ? "a string key after `,`" : "a string key or `}`");
        entry *e = new_entry(p, &tail);
        if (!e) return false;
        if (object) {
            size_t key_len;
            if (!parse_string(p, &e->key, &key_len)) return false;
            skip_space(p);
            if (peek(p) != ':') return expected(p, p->pos, "`:` after an object key");
            p->pos++;
            skip_space(p);
        }
        if (!parse_value(p, &e->value, depth)) return false;
        n++;
        skip_space(p);
        int c = peek(p);
        p->pos++;
        if (c == close) break;
        if (c != ',') return expected(p, --p->pos, after);
    }
    return collect(p, v, first, n, object);
}

/* A value at p->pos (after white space); `depth` arrays and objects enclose it. */
static bool parse_value(parser *p, st_json *v, int depth) {
    int c = peek(p);
    if (c == '[' || c == '{') {
        if (depth >= MAX_DEPTH) return fail_at(p, p->pos, "nesting deeper than %d arrays and objects", MAX_DEPTH);
        return parse_members(p, v, depth + 1, c == '{');
    }
    if (c == '"') {
        v->kind = ST_JSON_STRING;
        return parse_string(p, &v->string, &v->len);
    }
    if (c == '-' || is_digit(c)) {
        v->kind = ST_JSON_NUMBER;
        return parse_number(p, &v->number);
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return parse_word(p, v);
    if (c == '+') return fail_at(p, p->pos, "expected a value, found `+` (a JSON number has no leading `+`)");
    if (c == '.') return fail_at(p, p->pos, "expected a value, found `.` (a JSON number needs a digit before `.`)");
    return expected(p, p->pos, "a value");
}

const st_json *st_json_parse(st_arena *a, const char *what, const char *text, size_t len, st_err *err) {
    parser p = {a, what ? what : "JSON", text, len, 0, err};
    if (!text && len) {
        st_fail_internal(err, "st_json_parse: no text for %zu bytes", len);
        return NULL;
    }
    st_json *v = st_arena_zalloc(a, sizeof *v);
    if (!v) {
        out_of_memory(&p);
        return NULL;
    }
    skip_space(&p);
    if (!parse_value(&p, v, 0)) return NULL;
    skip_space(&p);
    if (p.pos < p.len) {
        expected(&p, p.pos, "the end of the input after the JSON value");
        return NULL;
    }
    return v;
}

/* ------------------------------------------------------------------------ */
/* Reading helpers                                                          */
/* ------------------------------------------------------------------------ */

const st_json *st_json_get(const st_json *obj, const char *key) {
    if (!obj || obj->kind != ST_JSON_OBJECT || !key) return NULL;
    /* from the end, so that a repeated key gives its last value */
    for (size_t i = obj->len; i-- > 0;)
        if (!strcmp(obj->keys[i], key)) return &obj->items[i];
    return NULL;
}

const char *st_json_get_string(const st_json *obj, const char *key) {
    const st_json *v = st_json_get(obj, key);
    return v && v->kind == ST_JSON_STRING ? v->string : NULL;
}

bool st_json_get_number(const st_json *obj, const char *key, double *out) {
    const st_json *v = st_json_get(obj, key);
    if (!v || v->kind != ST_JSON_NUMBER) return false;
    if (out) *out = v->number;
    return true;
}

bool st_json_get_whole(const st_json *obj, const char *key, uint64_t max, uint64_t *out) {
    double v;
    /* the range first: converting a double outside [0, 2^64) to uint64_t
     * is undefined (2^64 is UINT64_MAX as a double, so it is excluded) */
    if (!st_json_get_number(obj, key, &v) || !(v >= 0) || v >= (double)UINT64_MAX || v != floor(v) ||
        (uint64_t)v > max)
        return false;
    if (out) *out = (uint64_t)v;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* A NULL string is written as `null`, the one JSON value that says "none". */
void st_json_put_string(st_buf *b, const char *s) {
    if (!s) {
        st_buf_puts(b, "null");
        return;
    }
    st_buf_put(b, "\"", 1);
    const char *run = s; /* bytes that need no escape go out in one piece */
    for (const char *c = s; *c; c++) {
        unsigned char u = (unsigned char)*c;
        const char *esc = NULL;
        switch (u) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\t': esc = "\\t"; break;
        case '\r': esc = "\\r"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (u >= 0x20) continue;
        }
        st_buf_put(b, run, (size_t)(c - run));
        if (esc) st_buf_puts(b, esc);
        else st_buf_printf(b, "\\u%04X", u);
        run = c + 1;
    }
    st_buf_puts(b, run);
    st_buf_put(b, "\"", 1);
}

void st_json_put_number(st_buf *b, double v) {
    if (!isfinite(v)) {
        st_buf_puts(b, "null");
        return;
    }
    /* every integer below 2^53 is exact, so it is printed as one ("-0" keeps
     * the sign, which reads back) */
    if (fabs(v) < 9007199254740992.0 && v == trunc(v)) {
        st_buf_printf(b, "%.0f", v);
        return;
    }
    char text[40];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v) break;
    }
    st_buf_puts(b, text);
}

void st_json_put_key(st_buf *b, const char *sep, const char *key) {
    st_buf_puts(b, sep);
    st_json_put_string(b, key);
    st_buf_puts(b, ": ");
}

void st_json_put_space_value(st_buf *b, const char *value) {
    /* JSON's grammar (no leading zeros), and few enough digits that the
     * double it reads back as is exact */
    const char *digits = value + (*value == '-');
    size_t n = strlen(digits);
    bool integer = n > 0 && n <= 15 && (digits[0] != '0' || n == 1);
    for (const char *c = digits; *c && integer; c++) integer = *c >= '0' && *c <= '9';
    if (integer) st_buf_puts(b, value);
    else st_json_put_string(b, value);
}
