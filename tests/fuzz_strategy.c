/* tests/fuzz_strategy.c — a libFuzzer target for the strategy language and
 * the engine behind it.
 *
 * Any bytes, read as a strategy against the built-in rules: the parser must
 * answer with a strategy or an error located in the text, never crash, leak
 * or hang. A strategy that parses must print as text that parses back to a
 * strategy printing the same. Then it is applied to a small fixed program:
 * any outcome will do but a crash, a leak or a hang; a rewritten program must
 * print as text that parses back (to the same text), and, as no rule may
 * produce a wrong program, compute what the original computes. */
#include "rewrite/rewrite.h"
#include "strategies/strategies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A map feeding a scan, a scan of another operator feeding a map, a
 * reduction: something for every built-in rule to find. */
static const char program[] =
    "def main(xs: [N]i32) where N % 16 == 0 =\n"
    "  let ys = xs |> map(x => x * 2 - 3)\n"
    "  let zs = xs |> scan(max, -1000) |> map(z => z + 1)\n"
    "  in (ys |> scan(+, 0), zs, ys |> reduce(+, 0))\n";

/* Larger rewritten programs are not run: the point is the rules, not the
 * interpreter's speed. */
enum { MAX_NODES_TO_RUN = 4000 };

static st_registry *reg;

static void die(const char *what, const char *detail, const char *strategy) {
    fprintf(stderr, "fuzz_strategy: %s\n%s\n--- strategy ---\n%s\n", what, detail ? detail : "", strategy);
    abort();
}

static size_t tree_size(const st_node *e, size_t limit) {
    size_t n = 1;
    for (uint32_t i = 0; i < e->nkids && n <= limit; i++) n += tree_size(e->kids[i], limit - n);
    return n;
}

/* Run def on seeded inputs with N = n; false when the run fails. */
static bool run(st_ctx *cx, const st_def *def, st_arena *a, int64_t n, st_value *out, st_err *err) {
    st_inputs *in = st_inputs_new(cx, def, a);
    char size[32];
    snprintf(size, sizeof size, "N=%lld", (long long)n);
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    return in && st_inputs_set(in, size, err) && st_inputs_generate(in, 42, err) &&
           st_inputs_finish(in, &args, &env, &nenv, err) && st_eval(cx, def, args, env, nenv, a, out, err);
}

static bool same_value(const st_value *x, const st_value *y) {
    st_value lx[16], ly[16];
    size_t nx = st_value_leaves(x, lx, 16), ny = st_value_leaves(y, ly, 16);
    if (nx != ny || nx > 16) return false;
    for (size_t i = 0; i < nx; i++) {
        if (lx[i].kind != ly[i].kind || lx[i].scalar != ly[i].scalar) return false;
        if (lx[i].kind == ST_VALUE_SCALAR) {
            if (memcmp(&lx[i].u.s, &ly[i].u.s, st_scalar_size(lx[i].scalar))) return false;
            continue;
        }
        if (lx[i].n != ly[i].n) return false;
        size_t count = 1;
        for (uint32_t d = 0; d < lx[i].n; d++) {
            if (lx[i].u.a.dims[d] != ly[i].u.a.dims[d]) return false;
            count *= (size_t)lx[i].u.a.dims[d];
        }
        if (count && memcmp(lx[i].u.a.data, ly[i].u.a.data, count * st_scalar_size(lx[i].scalar))) return false;
    }
    return true;
}

static int64_t largest_argument(const st_strategy *s);

static void check_rewritten(st_ctx *cx, const st_program *p, const st_def *def, const st_def *now,
                            const st_strategy *strategy, const char *text) {
    /* printed, it parses back, to the same text */
    const st_program *q = st_program_replace(cx, p, def, now);
    if (!q) die("st_program_replace failed", NULL, text);
    st_buf first = {0}, second = {0};
    st_print_program(q, &first);
    if (first.failed || !first.data) die("printing the rewritten program failed", NULL, text);
    st_err err = {0};
    const st_program *back = st_parse_program(cx, "printed.strata", first.data, first.len, &err);
    if (!back) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%d:%d: %s", err.loc.line, err.loc.col, err.message);
        fprintf(stderr, "%s\n", first.data);
        die("the rewritten program, printed, does not parse", msg, text);
    }
    st_print_program(back, &second);
    if (first.len != second.len || memcmp(first.data, second.data, first.len)) {
        fprintf(stderr, "%s\n---\n%s\n", first.data, second.data);
        die("the rewritten program does not print the same after a round trip", NULL, text);
    }
    /* and it computes what the original computes (unless a parameter pads the
     * oracle's few elements to blocks of thousands: valid, but slow to run) */
    if (tree_size(now->body, MAX_NODES_TO_RUN) <= MAX_NODES_TO_RUN && largest_argument(strategy) <= 4096) {
        st_arena *a = st_arena_new();
        for (int64_t n = 16; n <= 48; n += 32) {
            st_value want, got;
            st_err e1 = {0}, e2 = {0};
            if (!run(cx, def, a, n, &want, &e1)) die("the original program does not run", e1.message, text);
            if (!run(cx, &back->defs[0], a, n, &got, &e2)) {
                fprintf(stderr, "%s\n", first.data);
                die("the rewritten program does not run", e2.message, text);
            }
            if (!same_value(&want, &got)) {
                fprintf(stderr, "%s\n", first.data);
                die("the rewritten program computes something else", NULL, text);
            }
        }
        st_arena_free(a);
    }
    st_buf_free(&first);
    st_buf_free(&second);
}

/* The largest argument any rule in s is given. */
static int64_t largest_argument(const st_strategy *s) {
    if (!s) return 0;
    int64_t m = 0;
    if (s->kind == ST_S_RULE)
        for (uint32_t i = 0; i < s->rule->nparams; i++)
            if (s->args[i] != ST_PARAM_UNSET && s->args[i] > m) m = s->args[i];
    int64_t a = largest_argument(s->a), b = largest_argument(s->b);
    return m > a ? (m > b ? m : b) : (a > b ? a : b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!reg) {
        st_err err = {0};
        reg = st_registry_new();
        if (!reg || !st_register_builtin_rules(reg, &err)) die("registering the built-in rules failed", err.message, "");
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    size_t len = strlen(text); /* what the parser sees */

    st_ctx *cx = st_ctx_new();
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "fuzz", text, &err);
    if (!s) {
        /* an error is fine: a user's, located in the text */
        if (err.kind != ST_ERR_USER || err.loc.line != 1 || err.loc.col < 1 || (size_t)err.loc.col > len + 1 ||
            !err.message[0])
            die("a badly located or internal parse error", err.message, text);
        st_ctx_free(cx);
        free(text);
        return 0;
    }

    /* print → parse → print is stable */
    st_buf first = {0}, second = {0};
    st_strategy_print(s, &first);
    if (first.failed || !first.data) die("printing the strategy failed", NULL, text);
    const st_strategy *again = st_strategy_parse(cx, reg, "printed", first.data, &err);
    if (!again) {
        char msg[1024];
        snprintf(msg, sizeof msg, "`%s` at column %d: %s", first.data, err.loc.col, err.message);
        die("the printed strategy does not parse", msg, text);
    }
    st_strategy_print(again, &second);
    if (strcmp(first.data, second.data)) {
        char msg[2048];
        snprintf(msg, sizeof msg, "`%s` then `%s`", first.data, second.data);
        die("the strategy does not print the same after a round trip", msg, text);
    }
    st_buf_free(&first);
    st_buf_free(&second);

    /* apply it */
    const st_program *p = st_parse_program(cx, "fixed.strata", program, sizeof program - 1, &err);
    if (!p) die("the fixed program does not parse", err.message, text);
    const st_def *def = &p->defs[0];
    st_rw *rw = st_rw_new(cx, reg);
    if (!rw) die("out of memory", NULL, text);
    st_err why = {0};
    const st_def *now = st_rewrite_def(rw, s, def, &why);
    if (!now) {
        if (!why.message[0]) die("a rewrite failed without a reason", NULL, text);
        if (why.kind == ST_ERR_INTERNAL) die("a rewrite failed with an internal error", why.message, text);
    } else {
        if (now->body->type != def->body->type) die("the rewrite changed the type", NULL, text);
        check_rewritten(cx, p, def, now, s, text);
    }
    st_rw_free(rw);
    st_ctx_free(cx);
    free(text);
    return 0;
}
