/* codegen/cg.c — the generator's errors, text and names. */
#include "cg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool cg_grow(cg *g, void **items, uint32_t n, uint32_t *cap, size_t size) {
    if (n < *cap) return true;
    uint32_t more = *cap ? 2 * *cap : 8;
    void *grown = cg_alloc(g, more * size);
    if (!grown) return false;
    if (n) memcpy(grown, *items, n * size);
    *items = grown;
    *cap = more;
    return true;
}

void *cg_alloc(cg *g, size_t size) {
    void *p = st_arena_zalloc(g->a, size ? size : 1);
    if (!p && !g->failed) {
        g->failed = true;
        st_fail_internal(g->err, "out of memory");
    }
    return p;
}

/* The first failure is the one reported; later steps still run (on dummy
 * values) so that nothing needs to check after every call. */
bool cg_fail(cg *g, const st_node *at, const char *fmt, ...) {
    if (g->failed) return false;
    g->failed = true;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char where[120] = "";
    if (at) {
        st_buf b = {0};
        st_print_node(at, &b);
        const char *text = b.data ? b.data : "";
        size_t len = strcspn(text, "\n");
        snprintf(where, sizeof where, " (at `%.*s%s`)", (int)(len > 80 ? 80 : len), text,
                 len > 80 || text[len] ? " …" : "");
        st_buf_free(&b);
    }
    /* at the user's line (rewrites keep the place of what they replace): the
     * node's, or (a node codegen made itself, or none) that of the node being
     * generated, else the def's */
    st_loc loc = st_node_loc_or(g->cx, at, st_node_loc_or(g->cx, g->at, g->def->loc));
    st_fail(g->err, loc, "cannot generate OpenCL for `%s`: %s%s", g->def->name, msg, where);
    return false;
}

const char *cg_str(cg *g, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    char *out = cg_alloc(g, (size_t)n + 1);
    if (!out) return "0";
    if ((size_t)n < sizeof small) {
        memcpy(out, small, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(out, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return out;
}

const char *cg_if(cg *g, const char *expr) {
    size_t n = strlen(expr);
    bool wrapped = n >= 2 && expr[0] == '(' && expr[n - 1] == ')';
    /* the first parenthesis closes at the last character, not before */
    for (size_t i = 0, depth = 0; wrapped && i + 1 < n; i++) {
        depth += expr[i] == '(';
        depth -= expr[i] == ')';
        wrapped = depth > 0;
    }
    return wrapped ? cg_str(g, "if %s {", expr) : cg_str(g, "if (%s) {", expr);
}

/* C identifiers from IR names: IR names are letters, digits and `_`, so a
 * prefix keeps them clear of C and OpenCL keywords and built-ins. */
const char *cg_name(cg *g, const char *base) {
    return cg_str(g, "%s_%u", base, g->fresh++);
}

/* Escaped so that the text can neither end a string literal (`"`, `\\`,
 * a line break) nor a comment (`*` before `/`), open one (`/` before `*`,
 * which -Wcomment also rejects) or form a trigraph (`??`); every other
 * byte outside printable ASCII is escaped too, in octal, whose three
 * digits cannot run on into the next character as \x's can. */
void cg_put_escaped(st_buf *b, const char *text, size_t len) {
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i], next = i + 1 < len ? (unsigned char)text[i + 1] : 0;
        if (c == '"' || c == '\\') st_buf_printf(b, "\\%c", c);
        else if (c == '\n') st_buf_puts(b, "\\n");
        else if (c == '\t') st_buf_puts(b, "\\t");
        else if (c < 0x20 || c > 0x7e || (c == '*' && next == '/') || (c == '/' && next == '*') ||
                 (c == '?' && next == '?'))
            st_buf_printf(b, "\\%03o", c);
        else st_buf_put(b, (const char *)&text[i], 1);
    }
}

void cg_line(cg *g, const char *fmt, ...) {
    if (!g->k) return;
    st_buf *b = &g->k->body;
    for (int i = 0; i < g->indent; i++) st_buf_puts(b, "    ");
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof small) {
        st_buf_puts(b, small);
    } else if (n >= 0) {
        char *big = st_arena_alloc(g->a, (size_t)n + 1);
        if (big) {
            va_start(ap, fmt);
            vsnprintf(big, (size_t)n + 1, fmt, ap);
            va_end(ap);
            st_buf_puts(b, big);
        }
    }
    st_buf_puts(b, "\n");
}

st_buf cg_capture_begin(cg *g) {
    st_buf saved = g->k->body;
    g->k->body = (st_buf){0};
    return saved;
}

st_buf cg_capture_end(cg *g, st_buf saved) {
    st_buf got = g->k->body;
    g->k->body = saved;
    return got;
}

void cg_emit_text(cg *g, const st_buf *text, int indent, const char *name, const char *with) {
    if (!text->data) return;
    st_buf *b = &g->k->body;
    for (const char *line = text->data; *line;) {
        const char *end = strchr(line, '\n');
        end = end ? end + 1 : line + strlen(line);
        if (*line != '\n')
            for (int i = 0; i < indent; i++) st_buf_puts(b, "    ");
        for (const char *c = line; c < end;) {
            const char *at = name ? strstr(c, name) : NULL;
            if (!at || at >= end) {
                st_buf_put(b, c, (size_t)(end - c));
                break;
            }
            st_buf_put(b, c, (size_t)(at - c));
            st_buf_puts(b, with);
            c = at + strlen(name);
        }
        line = end;
    }
}

void cg_open(cg *g, const char *line) {
    cg_line(g, "%s", line);
    g->indent++;
}

void cg_close(cg *g) {
    g->indent--;
    cg_line(g, "}");
}

bool cg_leading_sizes(cg *g, const st_node *e, int64_t *out) {
    uint32_t n;
    st_prim_after_sizes(e->u.prim, &n);
    for (uint32_t i = 0; i < n; i++) {
        st_err inner = {0};
        const st_size *s = st_node_as_size(g->cx, e->kids[i], &inner);
        if (!s || !st_size_is_const(s, &out[i]))
            return cg_fail(g, e, "%s's sizes must be literals", st_prim_get(e->u.prim)->name);
    }
    return true;
}

int cg_bracket_depth(const char *c) {
    int depth = 0, most = 0;
    for (; *c; c++) {
        if (*c == '(' || *c == '[' || *c == '{') {
            if (++depth > most) most = depth;
        } else if (*c == ')' || *c == ']' || *c == '}') {
            depth--;
        }
    }
    return most;
}

/* ---- the kernel-making primitives ---- */

const cg_algorithm *const cg_algorithms[] = {&cg_lookback_algorithm, &cg_histogram_algorithm, &cg_partition_algorithm,
                                              NULL};
_Static_assert(sizeof cg_algorithms / sizeof *cg_algorithms <= 33, "a bit of cg.algorithms for each descriptor");

const cg_algorithm *cg_algorithm_of(st_prim p) {
    for (uint32_t i = 0; cg_algorithms[i]; i++)
        if (cg_algorithms[i]->prim == p) return cg_algorithms[i];
    return NULL;
}

const cg_algorithm *cg_algorithm_at(const st_node *e) {
    return e && e->kind == ST_NODE_PRIM ? cg_algorithm_of(e->u.prim) : NULL;
}

bool cg_uses_algorithm(const cg *g, uint32_t i) { return (g->algorithms >> i) & 1u; }

void cg_run_algorithm(cg *g, const cg_algorithm *a, const st_node *e, const cg_binding *env, const cg_place *p,
                      const cg_scatter *scatter) {
    for (uint32_t i = 0; cg_algorithms[i]; i++)
        if (cg_algorithms[i] == a) g->algorithms |= 1u << i;
    a->emit(g, e, env, p, scatter);
}

const char *cg_fault_name(int code) {
    for (uint32_t i = 0; cg_algorithms[i]; i++)
        if (cg_algorithms[i]->fault_name && cg_algorithms[i]->fault_code == code) return cg_algorithms[i]->fault_name;
    return NULL;
}
