/* ir/lex.c — the tokeniser. Comments run from `--` to the end of the line. */
#include "lex.h"

#include <stdio.h>
#include <string.h>

typedef struct { const char *text; tok_kind kind; } spelling;

static const spelling keywords[] = {
    {"def", K_DEF}, {"let", K_LET}, {"in", K_IN}, {"if", K_IF}, {"then", K_THEN},
    {"else", K_ELSE}, {"where", K_WHERE}, {"true", K_TRUE}, {"false", K_FALSE},
    {"loop", K_LOOP}, {"for", K_FOR}, {"while", K_WHILE}, {"do", K_DO}};

/* longest first, so that `<=` wins over `<` */
static const spelling symbols[] = {
    {"=>", K_ARROW}, {"|>", K_PIPE}, {"==", K_EQ}, {"!=", K_NE}, {"<=", K_LE}, {">=", K_GE},
    {"&&", K_ANDAND}, {"||", K_OROR}, {"<<", K_SHL}, {">>", K_SHR}, {"**", K_STARSTAR},
    {"(", K_LPAREN}, {")", K_RPAREN}, {"[", K_LBRACK}, {"]", K_RBRACK}, {",", K_COMMA},
    {":", K_COLON}, {"=", K_ASSIGN}, {".", K_DOT}, {"+", K_PLUS}, {"-", K_MINUS},
    {"*", K_STAR}, {"/", K_SLASH}, {"%", K_PERCENT}, {"<", K_LT}, {">", K_GT},
    {"!", K_BANG}, {"&", K_AMP}, {"|", K_BAR}, {"^", K_CARET}};

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

typedef struct lexer {
    const char *file, *src;
    size_t len, pos;
    int line;
    size_t line_start;
} lexer;

static st_loc here(const lexer *lx, size_t pos) {
    return (st_loc){lx->file, lx->line, (int)(pos - lx->line_start) + 1};
}

static bool is_digit_of(char c, int radix) {
    if (radix == 2) return c == '0' || c == '1';
    return is_digit(c) || (radix == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
}

/* A number: digits [. digits] [e [+-] digits] [suffix], or 0x / 0b and
 * digits [integer suffix]. After a `.` only digits are read, so that
 * `p.0.1` projects twice. */

static bool lex_number(lexer *lx, token *t, bool after_dot, st_err *err) {
    const char *s = lx->src;
    size_t p = lx->pos, n = lx->len;
    bool is_float = false;
    t->radix = 10;
    /* 0x… and 0b…: integers, whose suffix (if any) is an integer type's;
     * f32 would read as hexadecimal digits */
    if (!after_dot && p + 2 < n && s[p] == '0' && (s[p + 1] == 'x' || s[p + 1] == 'X' || s[p + 1] == 'b' || s[p + 1] == 'B')) {
        t->radix = s[p + 1] == 'x' || s[p + 1] == 'X' ? 16 : 2;
        if (!is_digit_of(s[p + 2], t->radix))
            return st_fail(err, here(lx, p + 2), "a %s literal needs digits after `%.2s`",
                           t->radix == 16 ? "hexadecimal" : "binary", s + p);
        p += 2;
        while (p < n && is_digit_of(s[p], t->radix)) p++;
        if (p < n && is_digit(s[p]))
            return st_fail(err, here(lx, p), "`%c` is not a binary digit", s[p]);
    } else {
        while (p < n && is_digit(s[p])) p++;
    }
    if (!after_dot && t->radix == 10) {
        if (p + 1 < n && s[p] == '.' && is_digit(s[p + 1])) {
            is_float = true;
            p++;
            while (p < n && is_digit(s[p])) p++;
        }
        if (p < n && (s[p] == 'e' || s[p] == 'E')) {
            size_t q = p + 1;
            if (q < n && (s[q] == '+' || s[q] == '-')) q++;
            if (q < n && is_digit(s[q])) {
                is_float = true;
                p = q;
                while (p < n && is_digit(s[p])) p++;
            }
        }
    }
    t->kind = is_float ? K_FLOAT : K_INT;
    t->digits_len = p - lx->pos;
    if (p < n && (is_alpha(s[p]) || is_digit(s[p]))) {
        size_t q = p;
        while (q < n && (is_alpha(s[q]) || is_digit(s[q]))) q++;
        st_scalar_kind k;
        if (t->radix != 10 && (!st_scalar_from_name(s + p, q - p, &k) || !st_scalar_is_int(k)))
            return st_fail(err, here(lx, p), "`%.*s` cannot follow a %s literal; its suffix is one of i8 u8 i16 u16 i32 u32 i64 u64",
                           (int)(q - p), s + p, t->radix == 16 ? "hexadecimal" : "binary");
        if (after_dot || !st_scalar_from_name(s + p, q - p, &k) || k == ST_BOOL)
            return st_fail(err, here(lx, p), "`%.*s` cannot follow a number; a literal's suffix is one of i8 u8 i16 u16 i32 u32 i64 u64 f32 f64",
                           (int)(q - p), s + p);
        if (is_float && st_scalar_is_int(k))
            return st_fail(err, here(lx, p), "the literal `%.*s` has a fraction or exponent, so it cannot be %s",
                           (int)(q - lx->pos), s + lx->pos, st_scalar_name(k));
        if (st_scalar_is_float(k)) t->kind = K_FLOAT;
        t->has_suffix = true;
        t->suffix = k;
        p = q;
    }
    t->len = p - lx->pos;
    lx->pos = p;
    return true;
}

bool st_lex(st_arena *scratch, const char *file, const char *src, size_t len, token **out,
            size_t *count, st_err *err) {
    lexer lx = {file, src, len, 0, 1, 0};
    size_t cap = 256, n = 0;
    token *toks = st_arena_alloc(scratch, cap * sizeof *toks);
    if (!toks) return st_fail_internal(err, "out of memory while reading %s", file);
    for (;;) {
        /* blanks and comments */
        while (lx.pos < len) {
            char c = src[lx.pos];
            if (c == '\n') {
                lx.line++;
                lx.line_start = ++lx.pos;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                lx.pos++;
            } else if (c == '-' && lx.pos + 1 < len && src[lx.pos + 1] == '-') {
                while (lx.pos < len && src[lx.pos] != '\n') lx.pos++;
            } else {
                break;
            }
        }
        if (n + 1 >= cap) {
            token *bigger = st_arena_alloc(scratch, 2 * cap * sizeof *toks);
            if (!bigger) return st_fail_internal(err, "out of memory while reading %s", file);
            memcpy(bigger, toks, n * sizeof *toks);
            toks = bigger;
            cap *= 2;
        }
        token *t = &toks[n];
        memset(t, 0, sizeof *t);
        t->loc = here(&lx, lx.pos);
        t->start = src + lx.pos;
        if (lx.pos >= len) {
            t->kind = K_EOF;
            n++;
            break;
        }
        char c = src[lx.pos];
        /* `?k`: a length known only at run time, one name with its `?` */
        bool exist = c == '?' && lx.pos + 1 < len && is_alpha(src[lx.pos + 1]);
        if (is_alpha(c) || exist) {
            size_t p = lx.pos + exist;
            while (p < len && (is_alpha(src[p]) || is_digit(src[p]))) p++;
            t->kind = K_NAME;
            t->len = p - lx.pos;
            for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
                if (strlen(keywords[k].text) == t->len && !memcmp(keywords[k].text, t->start, t->len))
                    t->kind = keywords[k].kind;
            lx.pos = p;
        } else if (is_digit(c)) {
            if (!lex_number(&lx, t, n > 0 && toks[n - 1].kind == K_DOT, err)) return false;
        } else {
            bool found = false;
            for (size_t k = 0; k < sizeof symbols / sizeof *symbols && !found; k++) {
                size_t sl = strlen(symbols[k].text);
                if (lx.pos + sl <= len && !memcmp(symbols[k].text, src + lx.pos, sl)) {
                    t->kind = symbols[k].kind;
                    t->len = sl;
                    lx.pos += sl;
                    found = true;
                }
            }
            if (!found) {
                unsigned char u = (unsigned char)c;
                if (u >= 33 && u < 127)
                    return st_fail(err, t->loc, "unexpected character `%c`", c);
                return st_fail(err, t->loc, "unexpected byte 0x%02x; a program is plain text", u);
            }
        }
        n++;
    }
    *out = toks;
    *count = n;
    return true;
}

void st_token_describe(const token *t, char *buf, size_t cap) {
    switch (t->kind) {
    case K_EOF: snprintf(buf, cap, "the end of the file"); return;
    case K_NAME: snprintf(buf, cap, "the name `%.*s`", (int)(t->len > 40 ? 40 : t->len), t->start); return;
    case K_INT: case K_FLOAT: snprintf(buf, cap, "the number `%.*s`", (int)(t->len > 40 ? 40 : t->len), t->start); return;
    default: snprintf(buf, cap, "`%.*s`", (int)t->len, t->start); return;
    }
}
