/* codegen/cg_sizes.c — the sizes a program computes, checked before
 * anything is allocated or launched.
 *
 * A size is arithmetic over the program's size variables and integer
 * parameters (k * k, (N + 31) / 32 * 32). The kernels and the glue compute
 * each in C `long`s, which past 2^63 overflow: undefined in C, a wrap in
 * practice, so that at k = 2^31 the 8 · k · k bytes of an array became 1
 * byte and a kernel wrote past it. So every size a text computes (cg_size
 * notes each here) is computed once more at the start of strata_run, before
 * anything is allocated, each operation checked (strata_mul and the others
 * of the prelude: libtcc has no __builtin_mul_overflow, so they test the
 * operands as CERT's INT32-C does), and one that overflows refuses the run
 * with STRATA_SIZE_OVERFLOW, the size, the values it was computed from and
 * its place in the program. The texts then compute the same operations on
 * the same values unchecked. A length known only at run time (take's ?k)
 * is checked at its worst case, what memory is allocated for.
 *
 * What the glue computes of its own from sizes (a buffer's bytes, a
 * launch's work-items, a group's local memory) is checked where it does
 * (strata_bytes, strata_items, strata_sum, cg_glue.c), and a buffer larger
 * than the device allocates in one piece (CL_DEVICE_MAX_MEM_ALLOC_SIZE) is
 * refused with both figures before it is asked for. */
#include "cg.h"

#include <inttypes.h>
#include <string.h>

static const char *const prelude =
    "/* a size's arithmetic, checked (strata's codegen/cg_sizes.c): where the result is not a long,\n"
    "   *bad is set and the result is 0 */\n"
    "#define STRATA_LONG_MAX ((long)(~0UL >> 1))\n"
    "#define STRATA_LONG_MIN (-STRATA_LONG_MAX - 1)\n"
    "static inline long strata_add(long a, long b, int *bad) {\n"
    "    if ((b > 0 && a > STRATA_LONG_MAX - b) || (b < 0 && a < STRATA_LONG_MIN - b)) return *bad = 1, 0;\n"
    "    return a + b;\n"
    "}\n"
    "static inline long strata_sub(long a, long b, int *bad) {\n"
    "    if ((b < 0 && a > STRATA_LONG_MAX + b) || (b > 0 && a < STRATA_LONG_MIN + b)) return *bad = 1, 0;\n"
    "    return a - b;\n"
    "}\n"
    "static inline long strata_mul(long a, long b, int *bad) {\n"
    "    if (a > 0 ? (b > 0 ? a > STRATA_LONG_MAX / b : b < STRATA_LONG_MIN / a)\n"
    "              : (b > 0 ? a < STRATA_LONG_MIN / b : a != 0 && b < STRATA_LONG_MAX / a))\n"
    "        return *bad = 1, 0;\n"
    "    return a * b;\n"
    "}\n"
    "/* as st_div_long and st_mod_long: by 0 is 0 */\n"
    "static inline long strata_div(long a, long b, int *bad) {\n"
    "    if (b == -1 && a == STRATA_LONG_MIN) return *bad = 1, 0;\n"
    "    return b == 0 ? 0 : a / b;\n"
    "}\n"
    "static inline long strata_mod(long a, long b, int *bad) {\n"
    "    (void)bad;\n"
    "    return b == 0 || b == -1 ? 0 : a % b;\n"
    "}\n"
    "/* n elements of elem bytes (rounded up to whole 32-bit words where words): *bad where n < 0\n"
    "   or where that is more than a size_t counts */\n"
    "static inline size_t strata_bytes(long n, size_t elem, int words, int *bad) {\n"
    "    size_t bytes;\n"
    "    if (n < 0 || (size_t)n > ((size_t)-1 - 3) / elem) return *bad = 1, 0;\n"
    "    bytes = (size_t)n * elem;\n"
    "    return words ? (bytes + 3) / 4 * 4 : bytes;\n"
    "}\n"
    "/* groups of group work-items: *bad where that is more than a size_t counts */\n"
    "static inline size_t strata_items(size_t groups, size_t group, int *bad) {\n"
    "    if (group && groups > (size_t)-1 / group) return *bad = 1, 0;\n"
    "    return groups * group;\n"
    "}\n"
    "/* a + b, or the most a cl_ulong holds where that is more (a sum of byte counts) */\n"
    "static inline cl_ulong strata_sum(cl_ulong a, cl_ulong b) { return a + b < a ? (cl_ulong)-1 : a + b; }\n"
    "\n";

const char *cg_sizes_prelude(void) { return prelude; }

/* Does the size n compute anything (not a literal or a variable alone)? */
static bool computes(const st_node *n) {
    while (n->kind == ST_NODE_CONV) n = n->kids[0];
    return n->kind == ST_NODE_BINOP;
}

void cg_size_note(cg *g, const st_size *s) {
    int64_t v;
    if (!s || st_size_is_const(s, &v)) return;
    st_err e = {0};
    if (st_size_has_exist(s) && !(s = st_size_upper(g->cx, s, &e))) return; /* its worst case */
    const st_node *n = st_size_expr(g->cx, g->def, s, &e);
    if (!n || !computes(n)) return;
    for (uint32_t i = 0; i < g->nsizes; i++)
        if (g->sizes[i].expr == n) return;
    if (!cg_grow(g, (void **)&g->sizes, g->nsizes, &g->capsizes, sizeof *g->sizes)) return;
    /* where the node being generated stands: the first text that computes it */
    st_loc at = st_node_loc(g->cx, g->at);
    g->sizes[g->nsizes++] = (cg_noted_size){.expr = n, .line = at.line, .col = at.col};
}

/* n as C over the glue's scalars, each operation checked (sets `bad`) */
static void checked_text(const st_node *n, st_buf *out) {
    switch (n->kind) {
    case ST_NODE_LIT: {
        int64_t v = 0;
        st_int_literal(n, &v);
        st_buf_printf(out, "%" PRId64 "L", v);
        return;
    }
    case ST_NODE_VAR: st_buf_printf(out, "(long)s_%s", n->u.name); return;
    case ST_NODE_CONV:
        st_buf_puts(out, "((long)");
        checked_text(n->kids[0], out);
        st_buf_puts(out, ")");
        return;
    case ST_NODE_BINOP: {
        const char *op = n->u.binop == ST_OP_ADD   ? "add"
                         : n->u.binop == ST_OP_SUB ? "sub"
                         : n->u.binop == ST_OP_MUL ? "mul"
                         : n->u.binop == ST_OP_DIV ? "div"
                                                   : "mod";
        st_buf_printf(out, "strata_%s(", op);
        checked_text(n->kids[0], out);
        st_buf_puts(out, ", ");
        checked_text(n->kids[1], out);
        st_buf_puts(out, ", &bad)");
        return;
    }
    default: st_buf_puts(out, "0L"); return; /* cg_size refuses it (cg_c.c) */
    }
}

/* Each variable of n once, into names (at most cap). */
static uint32_t variables(const st_node *n, const char **names, uint32_t count, uint32_t cap) {
    if (n->kind == ST_NODE_VAR) {
        for (uint32_t i = 0; i < count; i++)
            if (names[i] == n->u.name) return count;
        if (count < cap) names[count++] = n->u.name;
        return count;
    }
    for (uint32_t k = 0; k < n->nkids; k++) count = variables(n->kids[k], names, count, cap);
    return count;
}

void cg_sizes_checked(cg *g, st_buf *out) {
    enum { MAX_SHOWN = 8 }; /* the values a message shows */
    for (uint32_t i = 0; i < g->nsizes; i++) {
        const cg_noted_size *s = &g->sizes[i];
        const char *names[MAX_SHOWN];
        uint32_t nnames = variables(s->expr, names, 0, MAX_SHOWN);
        st_buf_puts(out, "    (void)");
        checked_text(s->expr, out);
        st_buf_puts(out, ";\n    if (bad) {\n        snprintf(msg, msgcap, \"");
        /* LINE:COL: first, the error's place (runtime.c's st_launch_run) */
        if (s->line > 0) st_buf_printf(out, "%d:%d: ", s->line, s->col);
        st_buf_puts(out, nnames ? "the size %s in `%s` overflows 64 bits at" : "the size %s in `%s` overflows 64 bits");
        for (uint32_t k = 0; k < nnames; k++) st_buf_printf(out, "%s %s = %%ld", k ? "," : "", names[k]);
        st_buf_puts(out, "\", \"");
        st_buf text = {0};
        st_print_node(s->expr, &text);
        if (text.data) cg_put_escaped(out, text.data, strlen(text.data));
        st_buf_free(&text);
        st_buf_puts(out, "\", \"");
        cg_put_escaped(out, g->def->name, strlen(g->def->name));
        st_buf_puts(out, "\"");
        for (uint32_t k = 0; k < nnames; k++) st_buf_printf(out, ", (long)s_%s", names[k]);
        st_buf_puts(out, ");\n        return STRATA_SIZE_OVERFLOW;\n    }\n");
    }
}
