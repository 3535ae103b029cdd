/* explore/space.c — parameter spaces: strategy text whose arguments may be
 * ranges, with `where` conditions, enumerated point by point.
 *
 *   space   := TEXT [ 'where' cond ((',' | 'where') cond)* ]
 *   range   := '[' value (',' value)* ']'             value := INTEGER | NAME
 *            | '[' INTEGER '..' INTEGER [ 'step' INTEGER | 'pow'K ] ']'
 *   cond    := C's integer expression over || && == != < <= > >= + - * / %,
 *              unary - and !, parentheses, integers and parameter names
 *
 * The strategy itself is not parsed here (the strategy parser checks a
 * point's text when it is used): only `NAME = [range]` and `NAME = value`
 * are picked out of it, and the parenthesis depth is tracked so that a
 * `where` at depth 0 ends the strategy. Everything else is copied verbatim.
 *
 * A space owns one arena; every string, table and condition tree lives in
 * it, so st_space_free is one call. */
#include "explore/explore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds that keep every count in range: a dimension's values are held as
 * text, and point indices, strides and products are uint64 without overflow
 * when the space has at most 2^40 points. */
enum { MAX_VALUES = 1000000, MAX_COND_DEPTH = 200 };
#define MAX_POINTS (UINT64_C(1) << 40)

typedef enum {
    E_INT, E_DIM, E_FIXED, E_NEG, E_NOT, E_BIN
} expr_kind;

typedef enum {
    OP_OR, OP_AND, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD
} expr_op;

typedef struct expr expr;
struct expr {
    expr_kind kind;
    expr_op op;          /* E_BIN */
    const expr *a, *b;   /* E_NEG, E_NOT: a; E_BIN: a and b */
    int64_t value;       /* E_INT, E_FIXED */
    uint32_t dim;        /* E_DIM */
    const char *name;    /* E_DIM, E_FIXED: for the reason a point is not admitted */
    int depth;           /* of the tree under it: evaluation recurses */
};

typedef struct cond {
    const char *src; /* the condition as written, for messages */
    int col;
    const expr *e;
} cond;

/* A parameter given one value in the text (`BF=2`): usable in conditions
 * when the value is a whole number. */
typedef struct fixed_arg {
    const char *name, *text;
    bool is_int;
    int64_t value;
} fixed_arg;

/* Where a dimension's `[…]` is in the text. */
typedef struct span {
    size_t start, end; /* the `[` and just past the `]` */
} span;

struct st_space {
    st_arena *arena;
    const char *what, *text;
    size_t strategy_end; /* a point's text is text[0, strategy_end) with the ranges replaced */
    uint32_t ndims, dims_cap;
    st_space_dim *dims;
    span *spans;        /* one per dimension, in text order */
    int64_t **ints;     /* per dimension: its values as integers, NULL when one is a name */
    uint64_t *strides;  /* per dimension: points between two of its values (last one: 1) */
    uint64_t npoints;
    uint32_t nfixed, fixed_cap;
    fixed_arg *fixed;
    uint32_t nconds, conds_cap;
    cond *conds;
};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct parser {
    st_space *s;
    const char *what; /* the caller's: an error outlives the space it failed to make */
    const char *text;
    size_t len;
    st_err *err;
} parser;

__attribute__((format(printf, 3, 4))) static bool fail(parser *p, size_t at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char msg[500];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return st_fail(p->err, (st_loc){p->what, 1, (int)at + 1}, "%s", msg);
}

static bool out_of_memory(parser *p) { return st_fail_internal(p->err, "out of memory parsing a space"); }

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_ident_char(char c) { return is_letter(c) || is_digit(c); }
/* Words of the strategy text: rule names have `-` in them (`no-where`
 * is one word, not the keyword). */
static bool is_word_char(char c) { return is_ident_char(c) || c == '-'; }

static size_t skip_spaces(const parser *p, size_t i) {
    while (i < p->len && is_space(p->text[i])) i++;
    return i;
}

static bool word_is(const char *w, size_t n, const char *kw) { return strlen(kw) == n && !memcmp(w, kw, n); }

static bool is_ident(const char *w, size_t n) {
    if (n == 0 || !is_letter(w[0])) return false;
    for (size_t i = 1; i < n; i++)
        if (!is_ident_char(w[i])) return false;
    return true;
}

/* An integer starts here: digits, or `-` then digits. */
static bool int_starts(const parser *p, size_t i) {
    return i < p->len && (is_digit(p->text[i]) || (p->text[i] == '-' && i + 1 < p->len && is_digit(p->text[i + 1])));
}

static size_t ident_end(const parser *p, size_t i) {
    while (i < p->len && is_ident_char(p->text[i])) i++;
    return i;
}

/* What is at i, for "expected … but found …". */
static void describe(const parser *p, size_t i, char *buf, size_t cap) {
    if (i >= p->len) {
        snprintf(buf, cap, "the end of the text");
        return;
    }
    size_t e = i + 1;
    if (is_ident_char(p->text[i])) e = ident_end(p, i);
    if (e - i > 24) e = i + 24;
    snprintf(buf, cap, "`%.*s`", (int)(e - i), p->text + i);
}

static char *copy(st_arena *a, const char *s, size_t n) {
    char *c = st_arena_alloc(a, n + 1);
    if (!c) return NULL;
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

/* Room for one more item in an arena array of n items: the array, moved
 * when it had to grow, or NULL when out of memory. */
static void *grow(st_arena *a, void *items, uint32_t n, uint32_t *cap, size_t size) {
    if (n < *cap) return items;
    uint32_t ncap = *cap ? *cap * 2 : 8;
    void *more = st_arena_alloc(a, (size_t)ncap * size);
    if (!more) return NULL;
    if (n) memcpy(more, items, (size_t)n * size);
    *cap = ncap;
    return more;
}

/* The integer at *i (int_starts holds) into *out, *i moved past it. */
static bool read_int(parser *p, size_t *i, int64_t *out) {
    size_t start = *i, e = start + 1;
    while (e < p->len && is_digit(p->text[e])) e++;
    char buf[32];
    if (e - start >= sizeof buf) return fail(p, start, "the number `%.*s…` is too large", 20, p->text + start);
    memcpy(buf, p->text + start, e - start);
    buf[e - start] = 0;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE) return fail(p, start, "the number %s is too large for 64 bits", buf);
    *out = v;
    *i = e;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Ranges                                                                   */
/* ------------------------------------------------------------------------ */

/* The values of one range while it is read. */
typedef struct values {
    uint32_t n, cap;
    const char **text;
    int64_t *ints;
    bool all_int;
} values;

static bool add_value(parser *p, values *v, size_t open, const char *text, size_t len, bool is_int, int64_t i) {
    if (v->n >= MAX_VALUES) return fail(p, open, "the range has more than %d values", MAX_VALUES);
    if (v->n == v->cap) { /* the two arrays grow together: one capacity */
        uint32_t cap = v->cap;
        const char **t = grow(p->s->arena, v->text, v->n, &cap, sizeof *t);
        int64_t *n = grow(p->s->arena, v->ints, v->n, &v->cap, sizeof *n);
        if (!t || !n) return out_of_memory(p);
        v->text = t;
        v->ints = n;
    }
    const char *c = copy(p->s->arena, text, len);
    if (!c) return out_of_memory(p);
    v->text[v->n] = c;
    v->ints[v->n++] = i;
    v->all_int &= is_int;
    return true;
}

static bool add_int(parser *p, values *v, size_t open, int64_t x) {
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%" PRId64, x);
    return add_value(p, v, open, buf, (size_t)n, true, x);
}

/* "`[` is never closed" when the text ended, else "expected … but found …". */
static bool expected(parser *p, size_t at, size_t open, const char *wanted) {
    if (at >= p->len) return fail(p, open, "the `[` is never closed: expected %s before the end of the text", wanted);
    char found[48];
    describe(p, at, found, sizeof found);
    return fail(p, at, "expected %s but found %s", wanted, found);
}

/* One value of a list at *i: a whole number or a name. */
static bool list_value(parser *p, values *v, size_t open, size_t *i, const char *wanted) {
    size_t start = *i;
    if (int_starts(p, start)) {
        int64_t x;
        if (!read_int(p, i, &x)) return false;
        return add_value(p, v, open, p->text + start, *i - start, true, x);
    }
    if (start < p->len && is_letter(p->text[start])) {
        *i = ident_end(p, start);
        return add_value(p, v, open, p->text + start, *i - start, false, 0);
    }
    return expected(p, start, open, wanted);
}

/* `a..b`, `a..b step k`, `a..b powK` from i (just past `..`) to past `]`. */
static bool interval(parser *p, values *v, size_t open, int64_t a, size_t *i) {
    size_t at = skip_spaces(p, *i);
    if (!int_starts(p, at)) return expected(p, at, open, "a whole number after `..`");
    int64_t b, step = 1, base = 0;
    if (!read_int(p, &at, &b)) return false;
    at = skip_spaces(p, at);
    if (at < p->len && is_letter(p->text[at])) {
        size_t w = at, we = ident_end(p, at);
        if (word_is(p->text + w, we - w, "step")) {
            at = skip_spaces(p, we);
            if (!int_starts(p, at)) return expected(p, at, open, "a whole number after `step`");
            size_t kat = at;
            if (!read_int(p, &at, &step)) return false;
            if (step < 1) return fail(p, kat, "the step must be at least 1, not %" PRId64, step);
        } else if (we - w >= 3 && !memcmp(p->text + w, "pow", 3)) {
            size_t d = w + 3;
            while (d < we && is_digit(p->text[d])) d++;
            if (d == w + 3 || d != we)
                return fail(p, w, "expected `powK` with K a whole number of at least 2 (pow2, pow3, …) but found `%.*s`",
                            (int)(we - w > 24 ? 24 : we - w), p->text + w);
            size_t kat = w + 3;
            if (!read_int(p, &kat, &base)) return false;
            if (base < 2) return fail(p, w, "`pow%" PRId64 "`: powers need a base of at least 2 (pow2, pow3, …)", base);
            at = we;
        } else {
            return fail(p, w, "expected `]`, `step N` or `powK` after the range's end but found `%.*s`",
                        (int)(we - w > 24 ? 24 : we - w), p->text + w);
        }
        at = skip_spaces(p, at);
    }
    if (at >= p->len || p->text[at] != ']')
        return expected(p, at, open, base ? "`]` after `powK`" : step != 1 ? "`]` after the step" : "`]`, `step N` or `powK`");
    *i = at + 1;
    if (base) {
        /* every power of base in [a, b], 1 = base^0 included */
        for (int64_t pw = 1;; pw *= base) {
            if (pw >= a && pw <= b && !add_int(p, v, open, pw)) return false;
            if (pw > b / base) break;
        }
        if (v->n == 0)
            return fail(p, open, "the range is empty: no power of %" PRId64 " lies from %" PRId64 " to %" PRId64, base, a, b);
        return true;
    }
    if (a > b) return fail(p, open, "the range is empty: %" PRId64 " is greater than %" PRId64, a, b);
    uint64_t diff = (uint64_t)b - (uint64_t)a;
    if (diff / (uint64_t)step >= MAX_VALUES) return fail(p, open, "the range has more than %d values", MAX_VALUES);
    uint64_t count = diff / (uint64_t)step + 1;
    for (uint64_t k = 0; k < count; k++)
        if (!add_int(p, v, open, (int64_t)((uint64_t)a + k * (uint64_t)step))) return false;
    return true;
}

/* The range whose `[` is at open into *v; *i past its `]`. */
static bool range(parser *p, size_t open, values *v, size_t *i) {
    const char *value = "a value (a whole number or a name)";
    size_t at = skip_spaces(p, open + 1), first = at;
    if (!list_value(p, v, open, &at, value)) return false;
    at = skip_spaces(p, at);
    if (at + 1 < p->len && p->text[at] == '.' && p->text[at + 1] == '.') {
        if (!v->all_int)
            return fail(p, first, "a range `a..b` needs whole numbers, not `%s`; a list of names is `[a, b]`", v->text[0]);
        int64_t a = v->ints[0];
        v->n = 0;
        at += 2;
        if (!interval(p, v, open, a, &at)) return false;
        *i = at;
        return true;
    }
    for (;;) {
        if (at < p->len && p->text[at] == ']') {
            *i = at + 1;
            return true;
        }
        if (at >= p->len || p->text[at] != ',') return expected(p, at, open, "`,` or `]`");
        at = skip_spaces(p, at + 1);
        if (!list_value(p, v, open, &at, "a value after `,`")) return false;
        at = skip_spaces(p, at);
    }
}

/* "BS", or "BS.2" when BS already has one range. */
static const char *dim_name(parser *p, const char *name, size_t n) {
    const st_space *s = p->s;
    unsigned seen = 0;
    for (uint32_t d = 0; d < s->ndims; d++) {
        const char *dn = s->dims[d].name, *dot = strchr(dn, '.');
        size_t base = dot ? (size_t)(dot - dn) : strlen(dn);
        seen += base == n && !memcmp(dn, name, n);
    }
    if (seen == 0) return copy(s->arena, name, n);
    char *c = st_arena_alloc(s->arena, n + 16);
    if (c) snprintf(c, n + 16, "%.*s.%u", (int)n, name, seen + 1);
    return c;
}

/* `NAME = [ … ]` with the name at [w, we) and the `[` at open. */
static bool add_dimension(parser *p, size_t w, size_t we, size_t open, size_t *i) {
    st_space *s = p->s;
    values v = {.all_int = true};
    if (!range(p, open, &v, i)) return false;
    if (s->npoints * v.n > MAX_POINTS)
        return fail(p, open, "the space has more than 2^40 (%" PRIu64 ") points; narrow its ranges", MAX_POINTS);
    uint32_t cap = s->dims_cap, cap2 = s->dims_cap; /* the per-dimension arrays grow together */
    st_space_dim *dims = grow(s->arena, s->dims, s->ndims, &s->dims_cap, sizeof *dims);
    span *spans = grow(s->arena, s->spans, s->ndims, &cap, sizeof *spans);
    int64_t **ints = grow(s->arena, s->ints, s->ndims, &cap2, sizeof *ints);
    if (!dims || !spans || !ints) return out_of_memory(p);
    s->dims = dims;
    s->spans = spans;
    s->ints = ints;
    const char *name = dim_name(p, p->text + w, we - w);
    if (!name) return out_of_memory(p);
    s->dims[s->ndims] = (st_space_dim){name, v.n, v.text};
    s->spans[s->ndims] = (span){open, *i};
    s->ints[s->ndims] = v.all_int ? v.ints : NULL;
    s->ndims++;
    s->npoints *= v.n;
    return true;
}

/* `NAME = value`, the value from at: remembered (the first of a name) for
 * conditions; *i past the value. */
static bool add_fixed(parser *p, size_t w, size_t we, size_t at, size_t *i) {
    size_t e = at + (p->text[at] == '-');
    while (e < p->len && is_word_char(p->text[e])) e++;
    *i = e;
    st_space *s = p->s;
    for (uint32_t k = 0; k < s->nfixed; k++)
        if (word_is(p->text + w, we - w, s->fixed[k].name)) return true;
    fixed_arg f = {.name = copy(s->arena, p->text + w, we - w), .text = copy(s->arena, p->text + at, e - at)};
    if (!f.name || !f.text) return out_of_memory(p);
    f.is_int = int_starts(p, at);
    for (size_t k = at + 1; f.is_int && k < e; k++) f.is_int = is_digit(p->text[k]);
    if (f.is_int) {
        errno = 0;
        long long x = strtoll(f.text, NULL, 10);
        f.is_int = errno != ERANGE;
        f.value = x;
    }
    fixed_arg *more = grow(s->arena, s->fixed, s->nfixed, &s->fixed_cap, sizeof *more);
    if (!more) return out_of_memory(p);
    s->fixed = more;
    s->fixed[s->nfixed++] = f;
    return true;
}

/* The identifier at [w, we): an argument when `=` follows (not `==`). */
static bool argument(parser *p, size_t w, size_t we, size_t *i) {
    size_t at = skip_spaces(p, we);
    *i = we;
    if (at >= p->len || p->text[at] != '=' || (at + 1 < p->len && p->text[at + 1] == '=')) return true;
    at = skip_spaces(p, at + 1);
    if (at < p->len && p->text[at] == '[') return add_dimension(p, w, we, at, i);
    if (int_starts(p, at) || (at < p->len && is_letter(p->text[at]))) return add_fixed(p, w, we, at, i);
    return true;
}

/* The strategy part: ranges and fixed arguments, up to a top-level `where`
 * (its offset into *where, p->len when there is none). */
static bool strategy_part(parser *p, size_t *where) {
    int depth = 0;
    size_t i = 0;
    *where = p->len;
    while (i < p->len) {
        char c = p->text[i];
        if (c == '(' || c == ')') {
            depth += c == '(' ? 1 : -1;
            i++;
        } else if (c == '[') {
            return fail(p, i, "a range `[…]` must be the value of an argument, as in `BS=[32..512 pow2]`");
        } else if (is_word_char(c)) {
            size_t w = i;
            while (i < p->len && is_word_char(p->text[i])) i++;
            if (depth <= 0 && word_is(p->text + w, i - w, "where")) {
                *where = w;
                return true;
            }
            if (is_ident(p->text + w, i - w) && !argument(p, w, i, &i)) return false;
        } else {
            i++;
        }
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Conditions                                                               */
/* ------------------------------------------------------------------------ */

typedef enum { T_END, T_INT, T_NAME, T_WHERE, T_OP, T_LPAREN, T_RPAREN, T_COMMA, T_BAD } tkind;

typedef struct tok {
    tkind kind;
    size_t start, len;
    expr_op op; /* T_OP */
} tok;

typedef struct cparser {
    parser *p;
    size_t pos;
    tok t;
    size_t last_end; /* just past the last token consumed: a condition's text ends there */
    int nest;        /* unary's recursion: `((((…` and `- - - …` are bounded */
} cparser;

static const struct { const char *text; expr_op op; int prec; } operators[] = {
    {"||", OP_OR, 1}, {"&&", OP_AND, 2}, {"==", OP_EQ, 3}, {"!=", OP_NE, 3}, {"<=", OP_LE, 4},
    {">=", OP_GE, 4}, {"<", OP_LT, 4},   {">", OP_GT, 4},  {"+", OP_ADD, 5}, {"-", OP_SUB, 5},
    {"*", OP_MUL, 6}, {"/", OP_DIV, 6},  {"%", OP_MOD, 6}};
enum { NOPERATORS = sizeof operators / sizeof *operators };

static int precedence(expr_op op) {
    for (int k = 0; k < NOPERATORS; k++)
        if (operators[k].op == op) return operators[k].prec;
    return 0;
}

static void advance(cparser *c) {
    const parser *p = c->p;
    if (c->t.kind != T_END) c->last_end = c->t.start + c->t.len;
    size_t i = skip_spaces(p, c->pos);
    tok t = {T_END, i, 0, OP_OR};
    if (i < p->len) {
        const char *s = p->text + i;
        size_t e = i + 1;
        if (is_digit(*s)) {
            while (e < p->len && is_digit(p->text[e])) e++;
            t.kind = T_INT;
        } else if (is_letter(*s)) {
            e = ident_end(p, i);
            /* `BS.2`: the second range of BS */
            if (e + 1 < p->len && p->text[e] == '.' && is_digit(p->text[e + 1])) {
                e++;
                while (e < p->len && is_digit(p->text[e])) e++;
            }
            t.kind = word_is(s, e - i, "where") ? T_WHERE : T_NAME;
        } else if (*s == '(' || *s == ')' || *s == ',') {
            t.kind = *s == '(' ? T_LPAREN : *s == ')' ? T_RPAREN : T_COMMA;
        } else {
            t.kind = T_BAD;
            if (*s == '!' && !(i + 1 < p->len && p->text[i + 1] == '=')) t.kind = T_OP; /* unary `!`: op unused */
            for (int k = 0; k < NOPERATORS && t.kind == T_BAD; k++) {
                size_t n = strlen(operators[k].text);
                if (i + n <= p->len && !memcmp(s, operators[k].text, n)) {
                    t.kind = T_OP;
                    t.op = operators[k].op;
                    e = i + n;
                }
            }
        }
        t.len = e - i;
    }
    c->pos = t.start + t.len;
    c->t = t;
}

static bool is_char(const cparser *c, char ch) {
    return c->t.kind == T_OP && c->t.len == 1 && c->p->text[c->t.start] == ch;
}

static bool unexpected(cparser *c, const char *wanted) {
    char found[48];
    describe(c->p, c->t.start, found, sizeof found);
    return fail(c->p, c->t.start, "expected %s but found %s", wanted, found);
}

static expr *new_expr(cparser *c, expr e) {
    expr *n = st_arena_alloc(c->p->s->arena, sizeof *n);
    if (!n) return out_of_memory(c->p), NULL;
    e.depth = 1 + (e.a ? e.a->depth : 0);
    if (e.b && e.b->depth + 1 > e.depth) e.depth = e.b->depth + 1;
    *n = e;
    if (n->depth > MAX_COND_DEPTH) return fail(c->p, c->t.start, "the condition is nested too deeply"), NULL;
    return n;
}

/* Every name a condition may use, for the message about one it may not. */
static void known_names(const st_space *s, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    for (uint32_t d = 0; d < s->ndims && n < cap; d++)
        if (s->ints[d]) n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", s->dims[d].name);
    for (uint32_t k = 0; k < s->nfixed && n < cap; k++) {
        bool shadowed = false;
        for (uint32_t d = 0; d < s->ndims; d++) shadowed |= !strcmp(s->dims[d].name, s->fixed[k].name);
        if (s->fixed[k].is_int && !shadowed)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", s->fixed[k].name);
    }
}

/* A name in a condition: a dimension, else the first fixed argument. */
static const expr *name_ref(cparser *c) {
    const st_space *s = c->p->s;
    const char *w = c->p->text + c->t.start;
    size_t n = c->t.len, at = c->t.start;
    for (uint32_t d = 0; d < s->ndims; d++) {
        if (!word_is(w, n, s->dims[d].name)) continue;
        if (!s->ints[d])
            return fail(c->p, at, "`%s` takes names (%s, …), not numbers, so a condition cannot use it", s->dims[d].name,
                        s->dims[d].values[0]), NULL;
        advance(c);
        return new_expr(c, (expr){.kind = E_DIM, .dim = d, .name = s->dims[d].name});
    }
    for (uint32_t k = 0; k < s->nfixed; k++) {
        const fixed_arg *f = &s->fixed[k];
        if (!word_is(w, n, f->name)) continue;
        if (!f->is_int)
            return fail(c->p, at, "`%s` is `%s`, not a whole number, so a condition cannot use it", f->name, f->text), NULL;
        advance(c);
        return new_expr(c, (expr){.kind = E_FIXED, .value = f->value, .name = f->name});
    }
    char known[400];
    known_names(s, known, sizeof known);
    if (!known[0]) return fail(c->p, at, "unknown name `%.*s` in a condition: the space has no whole-number parameters", (int)(n > 40 ? 40 : n), w), NULL;
    return fail(c->p, at, "unknown name `%.*s` in a condition; the known names are %s", (int)(n > 40 ? 40 : n), w, known), NULL;
}

static const expr *binary(cparser *c, int min_prec);

static const expr *operand(cparser *c);

static const expr *unary(cparser *c) {
    if (++c->nest > MAX_COND_DEPTH) return fail(c->p, c->t.start, "the condition is nested too deeply"), NULL;
    const expr *e = operand(c);
    c->nest--;
    return e;
}

static const expr *operand(cparser *c) {
    if (is_char(c, '-') || is_char(c, '!')) {
        expr_kind k = is_char(c, '-') ? E_NEG : E_NOT;
        advance(c);
        const expr *a = unary(c);
        return a ? new_expr(c, (expr){.kind = k, .a = a}) : NULL;
    }
    if (c->t.kind == T_INT) {
        size_t at = c->t.start;
        int64_t v;
        if (!read_int(c->p, &at, &v)) return NULL;
        advance(c);
        return new_expr(c, (expr){.kind = E_INT, .value = v});
    }
    if (c->t.kind == T_NAME) return name_ref(c);
    if (c->t.kind == T_LPAREN) {
        size_t open = c->t.start;
        advance(c);
        const expr *e = binary(c, 1);
        if (!e) return NULL;
        if (c->t.kind != T_RPAREN) {
            if (c->t.kind == T_END) return fail(c->p, open, "the `(` is never closed"), NULL;
            return unexpected(c, "`)` or an operator"), NULL;
        }
        advance(c);
        return e;
    }
    return unexpected(c, "a number, a name, `(`, `-` or `!`"), NULL;
}

/* Precedence climbing: operators of min_prec and tighter, left to right. */
static const expr *binary(cparser *c, int min_prec) {
    const expr *a = unary(c);
    while (a && c->t.kind == T_OP && !is_char(c, '!') && precedence(c->t.op) >= min_prec) {
        expr_op op = c->t.op;
        advance(c);
        const expr *b = binary(c, precedence(op) + 1);
        a = b ? new_expr(c, (expr){.kind = E_BIN, .op = op, .a = a, .b = b}) : NULL;
    }
    return a;
}

static bool add_cond(cparser *c) {
    st_space *s = c->p->s;
    size_t start = c->t.start;
    const expr *e = binary(c, 1);
    if (!e) return false;
    cond *more = grow(s->arena, s->conds, s->nconds, &s->conds_cap, sizeof *more);
    const char *src = copy(s->arena, c->p->text + start, c->last_end - start);
    if (!more || !src) return out_of_memory(c->p);
    s->conds = more;
    s->conds[s->nconds++] = (cond){src, (int)start + 1, e};
    return true;
}

/* The conditions after the `where` at `at`: `where c, c where c …`. */
static bool where_part(parser *p, size_t at) {
    cparser c = {p, at, {T_END, at, 0, OP_OR}, at, 0};
    advance(&c); /* onto `where` */
    while (c.t.kind != T_END) {
        if (c.t.kind != T_WHERE && c.t.kind != T_COMMA)
            return unexpected(&c, "an operator, `,` or `where` after a condition");
        tok sep = c.t;
        advance(&c);
        if (c.t.kind == T_END || c.t.kind == T_COMMA || c.t.kind == T_WHERE)
            return fail(p, sep.start, sep.kind == T_WHERE ? "`where` needs a condition after it"
                                                          : "expected another condition after `,`");
        if (!add_cond(&c)) return false;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* The space                                                                */
/* ------------------------------------------------------------------------ */

st_space *st_space_parse(const char *what, const char *text, st_err *err) {
    if (!text) text = "";
    st_arena *a = st_arena_new();
    st_space *s = a ? st_arena_zalloc(a, sizeof *s) : NULL;
    if (!s) {
        st_arena_free(a);
        st_fail_internal(err, "out of memory parsing a space");
        return NULL;
    }
    s->arena = a;
    s->npoints = 1;
    size_t len = strlen(text);
    s->text = copy(a, text, len);
    s->what = what ? copy(a, what, strlen(what)) : NULL;
    parser p = {s, what, s->text, len, err};
    if (!s->text || (what && !s->what)) {
        out_of_memory(&p);
        st_space_free(s);
        return NULL;
    }
    size_t where;
    bool ok = strategy_part(&p, &where);
    if (ok) {
        /* a point's text ends before `where` and the blanks in front of it */
        s->strategy_end = where;
        if (where < len)
            while (s->strategy_end > 0 && is_space(text[s->strategy_end - 1])) s->strategy_end--;
        if (skip_spaces(&p, 0) >= s->strategy_end)
            ok = fail(&p, where < len ? where : 0, "expected a strategy%s", where < len ? " before `where`" : "");
    }
    if (ok && where < len) ok = where_part(&p, where);
    if (ok && s->ndims) {
        s->strides = st_arena_alloc(a, s->ndims * sizeof *s->strides);
        if (!s->strides) ok = out_of_memory(&p);
        for (uint64_t stride = 1, d = s->ndims; ok && d-- > 0; stride *= s->dims[d].nvalues) s->strides[d] = stride;
    }
    if (!ok) {
        st_space_free(s);
        return NULL;
    }
    return s;
}

void st_space_free(st_space *s) {
    if (s) st_arena_free(s->arena);
}

const char *st_space_text(const st_space *s) { return s->text; }
uint32_t st_space_ndims(const st_space *s) { return s->ndims; }
const st_space_dim *st_space_dim_at(const st_space *s, uint32_t i) { return i < s->ndims ? &s->dims[i] : NULL; }
uint64_t st_space_npoints(const st_space *s) { return s->npoints; }

uint64_t st_space_shard_points(const st_space *s, uint32_t shard, uint32_t nshards) {
    return nshards && s->npoints > shard ? (s->npoints - shard - 1) / nshards + 1 : 0;
}

/* The value index of dimension d at point index. */
static uint32_t value_at(const st_space *s, uint64_t index, uint32_t d) {
    return (uint32_t)(index / s->strides[d] % s->dims[d].nvalues);
}

typedef enum { EV_OK, EV_DIV_ZERO, EV_MOD_ZERO, EV_OVERFLOW } eval_status;

static eval_status eval(const st_space *s, uint64_t index, const expr *e, int64_t *out) {
    int64_t a, b;
    eval_status st;
    switch (e->kind) {
    case E_INT:
    case E_FIXED: *out = e->value; return EV_OK;
    case E_DIM: *out = s->ints[e->dim][value_at(s, index, e->dim)]; return EV_OK;
    case E_NEG:
        if ((st = eval(s, index, e->a, &a)) != EV_OK) return st;
        if (a == INT64_MIN) return EV_OVERFLOW;
        *out = -a;
        return EV_OK;
    case E_NOT:
        if ((st = eval(s, index, e->a, &a)) != EV_OK) return st;
        *out = !a;
        return EV_OK;
    case E_BIN: break;
    }
    if ((st = eval(s, index, e->a, &a)) != EV_OK) return st;
    /* && and || do not evaluate their right side when the left decides,
     * as in C: `BF != 0 && BS % BF == 0` is safe */
    if (e->op == OP_AND && !a) return *out = 0, EV_OK;
    if (e->op == OP_OR && a) return *out = 1, EV_OK;
    if ((st = eval(s, index, e->b, &b)) != EV_OK) return st;
    switch (e->op) {
    case OP_AND:
    case OP_OR: *out = b != 0; return EV_OK;
    case OP_EQ: *out = a == b; return EV_OK;
    case OP_NE: *out = a != b; return EV_OK;
    case OP_LT: *out = a < b; return EV_OK;
    case OP_LE: *out = a <= b; return EV_OK;
    case OP_GT: *out = a > b; return EV_OK;
    case OP_GE: *out = a >= b; return EV_OK;
    case OP_ADD: return __builtin_add_overflow(a, b, out) ? EV_OVERFLOW : EV_OK;
    case OP_SUB: return __builtin_sub_overflow(a, b, out) ? EV_OVERFLOW : EV_OK;
    case OP_MUL: return __builtin_mul_overflow(a, b, out) ? EV_OVERFLOW : EV_OK;
    case OP_DIV:
        if (b == 0) return EV_DIV_ZERO;
        if (a == INT64_MIN && b == -1) return EV_OVERFLOW;
        *out = a / b;
        return EV_OK;
    case OP_MOD:
        if (b == 0) return EV_MOD_ZERO;
        *out = b == -1 ? 0 : a % b; /* INT64_MIN % -1 traps on x86, and is 0 */
        return EV_OK;
    }
    return EV_OK;
}

/* "BS = 32, BF = 3": each name a condition uses, once, in source order. */
typedef struct named { const char *names[16]; int64_t values[16]; int n; } named;

static void collect_names(const st_space *s, uint64_t index, const expr *e, named *out) {
    if (!e) return;
    if (e->kind == E_DIM || e->kind == E_FIXED) {
        for (int k = 0; k < out->n; k++)
            if (!strcmp(out->names[k], e->name)) return;
        if (out->n == 16) return;
        out->names[out->n] = e->name;
        out->values[out->n++] = e->kind == E_DIM ? s->ints[e->dim][value_at(s, index, e->dim)] : e->value;
        return;
    }
    collect_names(s, index, e->a, out);
    collect_names(s, index, e->b, out);
}

static void refuse(const st_space *s, uint64_t index, const cond *c, eval_status st, st_err *why) {
    named nm = {.n = 0};
    collect_names(s, index, c->e, &nm);
    char vals[300] = "";
    size_t n = 0;
    for (int k = 0; k < nm.n && n < sizeof vals; k++)
        n += (size_t)snprintf(vals + n, sizeof vals - n, "%s%s = %" PRId64, k ? ", " : " (", nm.names[k], nm.values[k]);
    if (nm.n && n < sizeof vals) snprintf(vals + n, sizeof vals - n, ")");
    static const char *const reasons[] = {" fails", ": division by zero", ": modulo by zero", ": integer overflow"};
    st_fail(why, (st_loc){s->what, 1, c->col}, "where %s%s%s", c->src, reasons[st], vals);
}

bool st_space_point(const st_space *s, uint64_t index, uint32_t *which, st_buf *strategy, bool *admitted,
                    st_err *why) {
    if (index >= s->npoints)
        return st_fail_internal(why, "point %" PRIu64 " of a space of %" PRIu64 " points", index, s->npoints);
    for (uint32_t d = 0; which && d < s->ndims; d++) which[d] = value_at(s, index, d);
    if (strategy) {
        size_t from = 0;
        for (uint32_t d = 0; d < s->ndims; d++) {
            st_buf_put(strategy, s->text + from, s->spans[d].start - from);
            st_buf_puts(strategy, s->dims[d].values[value_at(s, index, d)]);
            from = s->spans[d].end;
        }
        st_buf_put(strategy, s->text + from, s->strategy_end - from);
        if (strategy->failed) return st_fail_internal(why, "out of memory writing a point's strategy");
    }
    bool ok = true;
    for (uint32_t k = 0; k < s->nconds && ok; k++) {
        int64_t v = 0;
        eval_status st = eval(s, index, s->conds[k].e, &v);
        if (st == EV_OK && v) continue;
        refuse(s, index, &s->conds[k], st, why);
        ok = false;
    }
    if (admitted) *admitted = ok;
    return true;
}

int st_space_column(const st_space *s, uint64_t index, int col) {
    if (col < 1 || index >= s->npoints) return col;
    /* walk the point's text and the space's text side by side */
    size_t at = (size_t)col - 1, point = 0, from = 0;
    for (uint32_t d = 0; d < s->ndims; d++) {
        size_t literal = s->spans[d].start - from;
        if (at < point + literal) return (int)(from + (at - point)) + 1;
        point += literal;
        size_t value = strlen(s->dims[d].values[value_at(s, index, d)]);
        if (at < point + value) return (int)s->spans[d].start + 1;
        point += value;
        from = s->spans[d].end;
    }
    return (int)(from + (at - point)) + 1;
}
