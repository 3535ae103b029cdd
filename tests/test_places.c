/* tests/test_places.c — errors that point at the source.
 *
 *   places      the type checker places each node at the expression it was
 *               made from; a node a rule makes, or a traversal rebuilds,
 *               takes the place of the node it replaced
 *   refusals    a rule's refusal (built-in or from a plugin), a refusal of
 *               a node a rule made, codegen's refusal of what a rule left,
 *               and the interpreter's error name the user's line:col, in
 *               the library's st_err and in the CLI's `file:line:col:` */
#include "harness.h"
#include "codegen/codegen.h"
#include "rewrite/rewrite.h"
#include "run_strata.h"
#include "strategies/strategies.h"

#include <string.h>

static st_ctx *cx;
static st_registry *reg;
static st_rw *rw;
static cli c;

static void setup(void) {
    cx = st_ctx_new();
    reg = st_registry_new();
    st_err err = {0};
    ck_assert_msg(cx && reg && st_register_builtin_rules(reg, &err), "%s", err.message);
    rw = st_rw_new(cx, reg);
    ck_assert(rw != NULL);
    cli_open(&c, "places");
}

static void teardown(void) {
    cli_close(&c);
    st_rw_free(rw);
    st_registry_free(reg);
    st_ctx_free(cx);
}

/* A scan on line 4, column 12, of a let on line 3: its length N is not
 * known to be a multiple of anything. */
static const char *const SCAN = "-- the scan of a map\n"
                                "def main(xs: [N]f32) =\n"
                                "  let ys = xs |> map(x => x * 2.0)\n"
                                "  in ys |> scan(+, 0.0)\n";

static const st_def *def_of(const char *src) { return entry_ok(parse_ok(cx, src)); }

#define ck_assert_place(loc_, line_, col_)                                                                      \
    do {                                                                                                        \
        st_loc l_ = (loc_);                                                                                     \
        ck_assert_msg(l_.line == (line_) && l_.col == (col_), "expected the place %d:%d, got %d:%d", (line_), \
                      (col_), l_.line, l_.col);                                                                 \
    } while (0)

/* every node of e, once each (a DAG), into out */
static size_t nodes_of(const st_node *e, const st_node **out, size_t n, size_t cap) {
    for (size_t i = 0; i < n; i++)
        if (out[i] == e) return n;
    ck_assert_uint_lt(n, cap);
    out[n++] = e;
    for (uint32_t i = 0; i < e->nkids; i++) n = nodes_of(e->kids[i], out, n, cap);
    return n;
}

static const st_node *rewritten(const st_def *d, const char *strategy, st_err *why) {
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "-s", strategy, &err);
    ck_assert_msg(s != NULL, "%s: %s", strategy, err.message);
    const st_def *r = st_rewrite_def(rw, s, d, why);
    return r ? r->body : NULL;
}

/* ---- places ---- */

START_TEST(the_type_checker_places_each_node) {
    const st_def *d = def_of(SCAN);
    const st_node *let = d->body, *scan = st_let_body(let), *map = st_let_value(let);
    ck_assert_place(st_node_loc(cx, let), 3, 3);
    ck_assert_place(st_node_loc(cx, map), 3, 18); /* a call is placed at its name */
    ck_assert_place(st_node_loc(cx, scan), 4, 12);
    ck_assert_str_eq(st_node_loc(cx, scan).file, "test.strata");
    /* a node that came from nowhere has no place */
    ck_assert_int_eq(st_node_loc(cx, st_lit_int(cx, ST_I64, 123456789)).line, 0);
}
END_TEST

START_TEST(a_node_a_rule_made_takes_the_place_of_what_it_replaced) {
    const st_def *d = def_of(SCAN);
    const st_node *scan = st_let_body(d->body);
    st_err why = {0};
    const st_node *r = rewritten(d, "first(scan, pad-scan(BS=4)) ; first(scan, scan-then-propagate(BS=4))", &why);
    ck_assert_msg(r != NULL, "%s", why.message);
    static const st_node *before[4096], *after[4096];
    size_t nb = nodes_of(d->body, before, 0, 4096), na = nodes_of(r, after, 0, 4096);
    size_t scans = 0, made = 0;
    for (size_t i = 0; i < na; i++) {
        bool old = false;
        for (size_t j = 0; j < nb && !old; j++) old = after[i] == before[j];
        if (old) continue;
        made++;
        /* every node the rules made has a place: the scan's, or (the let
         * above it, rebuilt) the let's */
        st_loc l = st_node_loc(cx, after[i]);
        ck_assert_msg(l.line == 4 || (l.line == 3 && l.col == 3), "a made node at %d:%d", l.line, l.col);
        if (st_is_prim(after[i], ST_PRIM_SCAN)) {
            ck_assert_place(l, 4, 12);
            scans++;
        }
    }
    ck_assert_uint_gt(made, 10);
    ck_assert_uint_ge(scans, 2); /* the blocks' scans and the scan of their totals */
    ck_assert_place(st_node_loc(cx, r), 3, 3);
    ck_assert_place(st_node_loc(cx, scan), 4, 12); /* and the original keeps its own */
}
END_TEST

/* ---- refusals ---- */

START_TEST(a_rules_refusal_names_the_node) {
    const st_def *d = def_of(SCAN);
    st_err why = {0};
    ck_assert_ptr_null(rewritten(d, "first(scan, scan-then-propagate(BS=256))", &why));
    ck_assert_has(why.message, "not known to be a multiple of BS = 256");
    ck_assert_place(why.loc, 4, 12);
    ck_assert_str_eq(st_err_file(&why), "test.strata");
    /* through a traversal, which keeps the best reason's place */
    ck_assert_ptr_null(rewritten(d, "topdown(scan-then-propagate(BS=256))", &why));
    ck_assert_place(why.loc, 4, 12);
    /* a mismatch at the whole body: the body's place */
    ck_assert_ptr_null(rewritten(d, "scan-then-propagate(BS=256)", &why));
    ck_assert(why.mismatch);
    ck_assert_place(why.loc, 3, 3);
}
END_TEST

START_TEST(a_refusal_of_a_node_a_rule_made_names_the_users_node) {
    st_err why = {0};
    ck_assert_ptr_null(rewritten(def_of(SCAN),
                                 "first(scan, pad-scan(BS=256)) ; first(scan, scan-then-propagate(BS=256)) ; "
                                 "first(scan, brent-kung(BF=7, TD=1))",
                                 &why));
    ck_assert_has(why.message, "brent-kung: TD = 1 goes beyond the tree");
    ck_assert_place(why.loc, 4, 12);
}
END_TEST

START_TEST(a_plugins_refusal_names_the_node) {
    st_err err = {0};
    const char *plugin = env_path("STRATA_PLUGIN");
    ck_assert_msg(st_registry_load_plugin(reg, plugin, &err), "%s", err.message);
    st_err why = {0};
    ck_assert_ptr_null(rewritten(def_of(SCAN), "first(scan, kogge-stone)", &why));
    ck_assert_has(why.message, "kogge-stone: the scan's length is not a constant");
    ck_assert_place(why.loc, 4, 12);
}
END_TEST

/* codegen refuses what `first(map, map-lcl)` leaves (a mapLcl outside a
 * work-group) at the map the user wrote */
START_TEST(codegens_refusal_names_the_node_a_rule_made) {
    const st_def *d = def_of("def main(xs: [N]i32) =\n"
                             "  let ys = xs |> map(x => x - 1)\n"
                             "  in ys |> map(y => y + 1)\n");
    st_err why = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "-s", "first(map, map-lcl)", &why);
    ck_assert_msg(s != NULL, "%s", why.message);
    const st_def *r = st_rewrite_def(rw, s, d, &why);
    ck_assert_msg(r != NULL, "%s", why.message);
    st_arena *a = st_arena_new();
    st_code code;
    st_err err = {0};
    ck_assert(!st_codegen(cx, r, a, &code, &err));
    ck_assert_msg(err.kind == ST_ERR_USER, "%s", err.message);
    ck_assert_has(err.message, "mapLcl outside a work-group");
    ck_assert_place(err.loc, 2, 18);
    st_arena_free(a);
}
END_TEST

/* the CLI prints those places as the parser's errors: file:line:col */
START_TEST(the_cli_prints_file_line_col) {
    const char *prog = cli_file(&c, "scan", SCAN);
    char *out, *err;
    int rc = cli_strata(&c, ARGS("rewrite", prog, "-s", "first(scan, scan-then-propagate(BS=256))"), &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, arena_text(c.a, "%s:4:12: error: the strategy does not apply to `main`: at the first scan: "
                                       "scan-then-propagate: the scan's length N is not known",
                                  prog));
    /* a partition of a concat, which no rule makes kernels of: at the partition */
    const char *filters = cli_file(&c, "filters", "def main(xs: [N]i32) =\n"
                                                  "  let ys = xs |> filter(x => x > 0)\n"
                                                  "  in partition(y => y < 10, concat(ys, xs))\n");
    rc = cli_strata(&c, ARGS("run", filters, "--size", "N=7"), &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, arena_text(c.a, "%s:3:6: error: a partition is left that no rule made a scan and a scatter", filters));
    /* the interpreter: at the read out of range, not at the def */
    const char *get = cli_file(&c, "get", "def main(xs: [N]i32, k: i64) =\n"
                                          "  let ys = xs |> map(x => x + 1)\n"
                                          "  in ys |> get(k)\n");
    rc = cli_strata(&c, ARGS("eval", get, "--size", "N=3", "--input", "k=5"), &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, arena_text(c.a, "%s:3:12: error: index 5 out of range for an array of length 3", get));
}
END_TEST

int main(void) {
    Suite *s = suite_create("places");
    TCase *tc = tcase_create("places");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, the_type_checker_places_each_node);
    tcase_add_test(tc, a_node_a_rule_made_takes_the_place_of_what_it_replaced);
    tcase_add_test(tc, a_rules_refusal_names_the_node);
    tcase_add_test(tc, a_refusal_of_a_node_a_rule_made_names_the_users_node);
    tcase_add_test(tc, a_plugins_refusal_names_the_node);
    tcase_add_test(tc, codegens_refusal_names_the_node_a_rule_made);
    tcase_add_test(tc, the_cli_prints_file_line_col);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
