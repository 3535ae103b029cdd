/* tests/plugins/bad_results.c — a plugin that loads, and whose one rule,
 * test-bad-result(K), does one wrong thing at each K but K = 0, so that an
 * exploration over K has one good point and each bad one beside it:
 *
 *   K = 0  right: a plain scan done sequentially (scanSeq)
 *   K = 1  returns an expression of another type (a pair of the scans)
 *   K = 2  builds an ill-typed expression (scanSeq without its input), which
 *          the helpers of rewrite/plugin.h report as the rule's bug
 *   K = 3  returns a cyclic expression: a node it built, changed afterwards
 *          (const cast away) to hold the let around it
 *   K = 4  returns a scan of a variable that nothing binds
 *   K = 5  returns a node it copied by hand into the context's memory,
 *          equal to one of the context's but not made by its constructors
 *   K = 6  returns a node of a context of its own (elsewhere.c)
 *   K = 7  dies of SIGSEGV
 *   K = 8  never returns
 *   K = 9  is not deterministic: right the first time, and another right
 *          scan (of its input mapped by x => x) once the file named by
 *          $STRATA_TEST_RAN is there, which the first time makes (with
 *          the variable unset, always the first)
 *
 * Each wants a plain scan (K = 6 returns one of [N]i32, whatever it was
 * given). test-bad-composite(K) is a composite of test-bad-result(K), which
 * it names by its struct, not by its registered copy. */
#include "elsewhere.h"
#include "rewrite/plugin.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static const st_node *bad_result(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form s;
    if (!st_scan_form_of(e, &s) || s.fold) return st_no_match(why, "%s", "needs a plain scan");
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *seq = ST_PRIM(b, ST_PRIM_SCAN_SEQ, s.op, s.z, s.xs);
    switch (args[0]) {
    case 1: return ST_TUPLE(b, seq, seq);
    case 2: return ST_PRIM(b, ST_PRIM_SCAN_SEQ, s.op, s.z);
    case 3: {
        const st_node *v = st_b_bound(b, "cycled", s.xs);
        const st_node *inner = ST_PRIM(b, ST_PRIM_SCAN_SEQ, s.op, s.z, v);
        const st_node *out = st_b_let(b, v, s.xs, inner);
        if (out) ((st_node *)inner)->kids[2] = out; /* the scan now reads the let that holds it */
        return out;
    }
    case 4: return ST_PRIM(b, ST_PRIM_SCAN_SEQ, s.op, s.z, st_b_var(b, "ghost", s.xs->type));
    case 5: {
        size_t size = sizeof(st_node) + seq->nkids * sizeof(const st_node *);
        st_node *copy = seq ? st_ctx_alloc(st_rw_ctx(rw), size) : NULL;
        if (copy) memcpy(copy, seq, size);
        return copy;
    }
    case 6: return scan_of_another_context(why);
    case 7: /* as a wild pointer would, and not caught on the way by a sanitizer's handler */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        return NULL;
    case 8:
        for (volatile int spin = 1; spin;) {
        }
        return NULL;
    case 9: {
        const char *marker = getenv("STRATA_TEST_RAN");
        FILE *ran = marker ? fopen(marker, "r") : NULL;
        if (!ran) {
            if (marker && (ran = fopen(marker, "w"))) fclose(ran);
            return seq;
        }
        fclose(ran);
        const st_node *x = st_b_var(b, "x", st_elem_of(s.xs));
        return ST_PRIM(b, ST_PRIM_SCAN_SEQ, s.op, s.z, ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, x, x), s.xs));
    }
    default: return seq;
    }
}

static const st_rule bad = {.name = "test-bad-result",
                            .summary = "a plain scan done sequentially, and at each K > 0 something wrong instead",
                            .nparams = 1,
                            .params = {{.name = "K", .doc = "what goes wrong (0: nothing)", .min = 0, .max = 9}},
                            .apply = bad_result};

/* test-bad-composite(K): test-bad-result(K) named by its struct, as a
 * composite names a rule of its own (which has no origin there) */
static const st_strategy *bad_composite(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)e, (void)why;
    return st_s_rule(st_rw_ctx(rw), &bad, args);
}

static const st_rule composite = {.name = "test-bad-composite", .summary = "test-bad-result(K), by its struct",
                                  .nparams = 1, .params = {{.name = "K", .min = 0, .max = 9}}, .expand = bad_composite};

static bool register_rules(st_plugin *plugin, st_err *err) {
    return st_plugin_add_rule(plugin, &bad, err) && st_plugin_add_rule(plugin, &composite, err);
}

ST_PLUGIN(register_rules)
