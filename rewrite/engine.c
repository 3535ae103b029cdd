/* rewrite/engine.c — applying strategies.
 *
 * A strategy applies to an expression and either succeeds with a new one or
 * fails with a reason. Traversals rebuild the path from the root to where a
 * rule fired; everything else is shared (the IR is hash-consed). When a
 * traversal fails everywhere, the reason it gives is the most informative it
 * met: a rule whose shape fitted but whose condition failed says more than a
 * thousand nodes of the wrong shape. The engine runs the strategy and
 * nothing else (`-s id` is the identity): the normal forms the parallel
 * rules take are rules of their own (strategies/normalise.c), and where a
 * node runs is read off the path by rewrite/placement.c. */
#include "registry.h"
#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Budgets for one rewrite, enough for any real strategy: rule applications,
 * strategy steps of any kind (so that iterate(1000000, iterate(1000000, id))
 * ends too), and rules nested within rules (a composite expanding into
 * itself). A strategy that would go on is reported instead of hanging.
 * A traversal takes steps at every node of the tree it walks, so the steps
 * grow with the program: MAX_WORK and WORK_PER_NODE for each node of its
 * tree (shared nodes counted at each use, as the traversals meet them, up
 * to TREE_CAP), so that a strategy that ends on a small program ends on a
 * large one (an array literal of 10^5 elements is 5·10^5 nodes). */
enum { MAX_STEPS = 10000, MAX_WORK = 10000000, MAX_NESTING = 200, WORK_PER_NODE = 100, TREE_CAP = 1000000 };

/* A rule application, kept for the trace until the strategy's outcome is
 * known: entries of a branch that failed are dropped. */
typedef struct fired {
    const st_rule *rule;
    int64_t args[ST_RULE_MAX_PARAMS];
    const st_node *before, *after;
    int depth;
} fired;

struct st_rw {
    st_ctx *cx;
    const st_registry *reg;
    st_trace_fn trace;
    void *trace_data;
    uint64_t steps, work, max_work;
    const st_def *def;
    fired *log; /* for the trace */
    size_t nlog, caplog;
    int depth;  /* of composites within composites */
    /* The nodes a traversal entered, from the root of the rewrite to the
     * parent of the node it is at: what a rule reads where it runs from
     * (rewrite/placement.c). */
    const st_node **path;
    size_t npath, cappath;
};

st_rw *st_rw_new(st_ctx *cx, const st_registry *reg) {
    st_rw *rw = calloc(1, sizeof *rw);
    if (rw) {
        rw->cx = cx;
        rw->reg = reg;
    }
    return rw;
}

void st_rw_free(st_rw *rw) {
    if (rw) free(rw->log), free(rw->path);
    free(rw);
}

void st_rw_set_trace(st_rw *rw, st_trace_fn fn, void *data) {
    rw->trace = fn;
    rw->trace_data = data;
}

st_ctx *st_rw_ctx(st_rw *rw) { return rw->cx; }
const st_def *st_rw_def(st_rw *rw) { return rw->def; }
const st_registry *st_rw_registry(st_rw *rw) { return rw->reg; }

const st_node *const *st_rw_path(const st_rw *rw, size_t *n) {
    *n = rw->npath;
    return rw->path;
}

/* A traversal going into e's children: false when out of memory. */
static bool enter(st_rw *rw, const st_node *e) {
    if (rw->npath == rw->cappath) {
        size_t cap = rw->cappath ? rw->cappath * 2 : 64;
        const st_node **path = realloc(rw->path, cap * sizeof *path);
        if (!path) return false;
        rw->path = path;
        rw->cappath = cap;
    }
    rw->path[rw->npath++] = e;
    return true;
}

static void leave(st_rw *rw) { rw->npath--; }

static const st_node *run(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why);
static const st_node *on_node(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why);

/* No reason yet: what keep_reason reads, set, rather than all of an st_err
 * zeroed, which a traversal would do at every node. */
static void no_reason(st_err *e) {
    e->kind = ST_ERR_USER;
    e->loc = (st_loc){0};
    e->arg = -1;
    e->mismatch = false;
    e->message[0] = e->file[0] = '\0';
}

/* An error that ends the rewrite, which no `try` or `<+` moves past: strata's
 * (internal) or a plugin rule's fault, as opposed to a rule not applying. */
static bool ends_rewrite(const st_err *e) { return e->kind != ST_ERR_USER; }

/* Keep in *best the more informative of two failures. */
static void keep_reason(st_err *best, const st_err *now) {
    if (!ends_rewrite(now) && best->message[0] && !(best->mismatch && !now->mismatch)) return;
    /* the texts as long as they are, not all of their buffers: a traversal
     * keeps a reason at most nodes */
    best->kind = now->kind;
    best->loc = now->loc;
    best->arg = now->arg;
    best->mismatch = now->mismatch;
    strcpy(best->message, now->message);
    strcpy(best->file, now->file);
}

static bool matches(const st_rw *rw, st_pattern p, const st_node *n) {
    bool kind = p.kind == ST_PAT_PRIM     ? n->kind == ST_NODE_PRIM && n->u.prim == p.prim
                : p.kind == ST_PAT_LET    ? n->kind == ST_NODE_LET
                : p.kind == ST_PAT_LAMBDA ? n->kind == ST_NODE_LAMBDA
                                          : true;
    return kind && !(p.top && st_rw_under_lambda(rw));
}

static void pattern_name(st_pattern p, char *buf, size_t cap) {
    const char *name = p.kind == ST_PAT_PRIM ? st_prim_get(p.prim)->name : p.kind == ST_PAT_LET ? "let"
                       : p.kind == ST_PAT_LAMBDA ? "lambda" : "expression";
    snprintf(buf, cap, "%s%s", p.top ? "top-level " : "", name);
}

/* A node rebuilt with what a rule made of a kid failed (inner): out of
 * memory, or the node cannot take it, as scanTotal takes only a scan and
 * parallel-scan makes its scan something else. The second is the rule not
 * applying there, said at rewrite time (a try moves on), not strata's
 * fault. */
static void rebuilt_fails(const st_node *n, const st_err *inner, st_err *why) {
    if (inner->kind != ST_ERR_USER) {
        st_fail_internal(why, "rebuilding after a rewrite failed: %s", inner->message);
        return;
    }
    const char *what = n->kind == ST_NODE_PRIM ? st_prim_get(n->u.prim)->name : "its parent";
    st_fail(why, (st_loc){0}, "a rewrite made something %s cannot take: %s", what, inner->message);
}

/* n with kid i replaced by k */
static const st_node *replace_kid(st_rw *rw, const st_node *n, uint32_t i, const st_node *k, st_err *why) {
    st_err inner = {0};
    const st_node *r = st_replace_kid(rw->cx, n, i, k, &inner);
    if (!r) rebuilt_fails(n, &inner, why);
    return r;
}

bool st_reject(st_err *why, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    st_vfail(why, (st_loc){0}, fmt, ap); /* placed by apply_rule */
    va_end(ap);
    return false;
}

const st_node *st_no_match(st_err *why, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    st_vfail(why, (st_loc){0}, fmt, ap);
    va_end(ap);
    if (why) why->mismatch = true;
    return NULL;
}

__attribute__((noinline)) static const st_node *apply_rule(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    const st_rule *r = s->rule;
    if (rw->steps >= MAX_STEPS)
        return st_fail(why, (st_loc){0}, "stopped after %d rule applications: the strategy does not seem to end (a repeat or normalize of a rule that always applies?)",
                       MAX_STEPS), NULL;
    if (rw->depth >= MAX_NESTING)
        return st_fail(why, (st_loc){0}, "rule %s is applied within itself more than %d times over: a composite that expands into itself?",
                       r->name, MAX_NESTING), NULL;
    /* a place in the log now, so that the trace lists rules in the order they began */
    size_t slot = rw->nlog;
    if (rw->trace) {
        if (rw->nlog == rw->caplog) {
            size_t cap = rw->caplog ? rw->caplog * 2 : 64;
            fired *log = realloc(rw->log, cap * sizeof *log);
            if (!log) return st_fail_internal(why, "out of memory"), NULL;
            rw->log = log;
            rw->caplog = cap;
        }
        rw->log[rw->nlog] = (fired){r, {0}, e, NULL, rw->depth};
        memcpy(rw->log[rw->nlog].args, s->args, sizeof s->args);
        rw->nlog++;
    }
    rw->depth++;
    st_err reason = {0};
    const st_node *out = NULL;
    /* a plugin's own code failing is the plugin's fault (its helpers'
     * "ill-typed expression" included), not strata's: the errors of the
     * strategy a composite made are those of the rules in it */
    const char *plugin = registry_plugin_of(rw->reg, r);
    bool own_fault = false;
    if (r->expand) {
        const st_strategy *body = r->expand(rw, e, s->args, &reason);
        if (!body && !reason.message[0]) st_fail_internal(&reason, "%s made no strategy (out of memory?)", r->name);
        own_fault = !body;
        out = body ? on_node(rw, body, e, &reason) : NULL;
    } else {
        out = r->apply(rw, e, s->args, &reason);
        own_fault = true;
    }
    rw->depth--;
    if (!out) {
        if (!reason.message[0]) st_fail(&reason, (st_loc){0}, "%s does not apply here", r->name);
        if (plugin && own_fault && reason.kind == ST_ERR_INTERNAL) rule_failed(s, plugin, &reason);
        /* a rule says why not; where is the node it was applied to */
        if (reason.kind != ST_ERR_INTERNAL && reason.loc.line <= 0) st_err_at(&reason, st_node_loc(rw->cx, e));
        *why = reason;
        return NULL;
    }
    /* what a plugin returned is looked at before anything reads it */
    if (plugin && !r->expand && !rule_result_ok(rw->cx, rw->def, s, plugin, e, out, why)) {
        if (why->kind == ST_ERR_RULE) st_err_at(why, st_node_loc(rw->cx, e));
        return NULL;
    }
    if (out->type != e->type) {
        st_buf a = {0}, b = {0};
        st_type_print(e->type, &a);
        st_type_print(out->type, &b);
        st_fail_internal(why, "rule %s changed a type from %s to %s", r->name, a.data ? a.data : "?", b.data ? b.data : "?");
        st_buf_free(&a);
        st_buf_free(&b);
        return NULL;
    }
    /* what the rule made stands where e stood in the source */
    st_node_placed_like(rw->cx, out, e);
    rw->steps++;
    if (rw->trace) rw->log[slot].after = out;
    return out;
}

/* first(pattern, s): s at the first node matching, in program order (pre-
 * order, left to right). *found tells whether there was one. */
static const st_node *at_first(st_rw *rw, const st_strategy *s, const st_node *e, bool *found, st_err *why) {
    if (matches(rw, s->pattern, e)) {
        *found = true;
        return run(rw, s->a, e, why);
    }
    for (uint32_t i = 0; i < e->nkids; i++) {
        if (st_is_binder(e, i)) continue;
        if (!enter(rw, e)) return *found = true, st_fail_internal(why, "out of memory"), NULL;
        const st_node *k = at_first(rw, s, e->kids[i], found, why);
        leave(rw);
        if (*found) return k ? replace_kid(rw, e, i, k, why) : NULL;
    }
    return e;
}

/* each(pattern, s): s at every node matching, innermost first, so that s
 * never sees what it produced; *count says how many matched. */
static const st_node *at_each(st_rw *rw, const st_strategy *s, const st_node *e, uint32_t *count, st_err *why) {
    const st_node *kids[ST_MAX_KIDS];
    if (!enter(rw, e)) return st_fail_internal(why, "out of memory"), NULL;
    for (uint32_t i = 0; i < e->nkids; i++)
        if (!(kids[i] = st_is_binder(e, i) ? e->kids[i] : at_each(rw, s, e->kids[i], count, why))) return leave(rw), NULL;
    leave(rw);
    st_err inner = {0};
    const st_node *n = st_rebuild(rw->cx, e, kids, &inner);
    if (!n) return rebuilt_fails(e, &inner, why), NULL;
    if (!matches(rw, s->pattern, e)) return n;
    ++*count;
    return run(rw, s->a, n, why);
}

/* What strata prints it must read back: no result deeper than the parser's
 * limit. Checked where a strategy loops (so that a repeat that grows the
 * program stops early) and on the final result. */
static bool too_deep(const st_node *e, st_err *why) {
    if (e->depth <= ST_MAX_DEPTH) return false;
    st_fail(why, (st_loc){0}, "the rewrite nests the program deeper than %d levels, more than strata reads back; "
            "the strategy applies its rules too often (a repeat or iterate without end?)", ST_MAX_DEPTH);
    return true;
}

/* A traversal found no place: say so, with the best reason it met, which is
 * in *why (a node with no children to go to is a mismatch). Out of line, so
 * that its copy of the reason is not on the stack of every level of a
 * traversal. */
__attribute__((noinline)) static const st_node *nowhere(st_err *why, const char *traversal) {
    if (ends_rewrite(why)) return NULL;
    st_err best = *why;
    st_fail(why, best.loc, "%s applies nowhere%s%s", traversal, best.message[0] ? ": " : "", best.message);
    why->mismatch = best.mismatch || !best.message[0];
    return NULL;
}

static const st_node *run_kind(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why);

/* ---- the core and what is defined from it ----
 *
 * The core is id, fail, `;`, `<+`, one, all and a rule. try, normalize,
 * topdown and bottomup are defined from it, as Elevate defines them (below);
 * their names stay for printing, and the trace shows rules only. A
 * traversal recurses through a quiet copy of itself and a quiet one, which
 * pass the best reason met up unsaid, so that the traversal says once that
 * it applies nowhere, and why. The rest keep code of their own:
 *   repeat(s) = try(s ; repeat(s)) and iterate(n, s) = s ; iterate(n - 1, s)
 *       would nest the C stack a level a turn, and a rewrite may take
 *       thousands of turns; as loops they run in constant stack, and repeat
 *       stops at a turn that changes nothing rather than going round for
 *       ever.
 *   first(pattern, s) stops at the first node that matches even where s
 *       fails there, and each(pattern, s) runs s on what its input held,
 *       never on what s made, and fails where nothing matched: both need
 *       "matched, and s failed" told from "nothing matched", which the
 *       core's one failure does not tell. */

static const st_strategy ID = {.kind = ST_S_ID};

/* The definition of a derived combinator s, built in d (which lives as long
 * as the run of the definition). */
static const st_strategy *defined(const st_strategy *s, st_strategy d[3]) {
    switch (s->kind) {
    case ST_S_TRY: /* try(s) = s <+ id */
        d[0] = (st_strategy){.kind = ST_S_CHOICE, .a = s->a, .b = &ID};
        return &d[0];
    case ST_S_NORMALIZE: /* normalize(s) = repeat(topdown(s)) */
        d[1] = (st_strategy){.kind = ST_S_TOPDOWN, .a = s->a};
        d[0] = (st_strategy){.kind = ST_S_REPEAT, .a = &d[1]};
        return &d[0];
    case ST_S_TOPDOWN:  /* topdown(s) = s <+ one(topdown(s)) */
    case ST_S_BOTTOMUP: /* bottomup(s) = one(bottomup(s)) <+ s */
        if (s->quiet) return s->b; /* the quiet copy holds its definition: built once, at the top */
        d[2] = (st_strategy){.kind = s->kind, .a = s->a, .b = &d[0], .quiet = true};
        d[1] = (st_strategy){.kind = ST_S_ONE, .a = &d[2], .quiet = true};
        d[0] = s->kind == ST_S_TOPDOWN ? (st_strategy){.kind = ST_S_CHOICE, .a = s->a, .b = &d[1]}
                                       : (st_strategy){.kind = ST_S_CHOICE, .a = &d[1], .b = s->a};
        return &d[0];
    default: return &ID;
    }
}

/* s, a combinator defined from the core */
__attribute__((noinline)) static const st_node *derived(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    st_strategy d[3];
    const st_node *r = run(rw, defined(s, d), e, why);
    if (r || s->quiet || (s->kind != ST_S_TOPDOWN && s->kind != ST_S_BOTTOMUP)) return r;
    return nowhere(why, s->kind == ST_S_TOPDOWN ? "topdown" : "bottomup");
}

/* a <+ b: a, or else b; failing, the more informative reason of the two */
__attribute__((noinline)) static const st_node *choice(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    const st_node *r = run(rw, s->a, e, why);
    if (r || ends_rewrite(why)) return r;
    st_err second;
    no_reason(&second);
    if ((r = run(rw, s->b, e, &second))) return r;
    keep_reason(why, &second);
    return NULL;
}

/* one(s): s on the first child where it succeeds */
__attribute__((noinline)) static const st_node *one(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    no_reason(why);
    for (uint32_t i = 0; i < e->nkids; i++) {
        if (st_is_binder(e, i)) continue;
        st_err inner;
        no_reason(&inner);
        if (!enter(rw, e)) return st_fail_internal(why, "out of memory"), NULL;
        const st_node *k = run(rw, s->a, e->kids[i], &inner);
        leave(rw);
        if (k) return replace_kid(rw, e, i, k, why);
        keep_reason(why, &inner);
        if (ends_rewrite(&inner)) return NULL;
    }
    if (!s->quiet) return nowhere(why, "one");
    why->mismatch |= !why->message[0];
    return NULL;
}

static const st_node *run(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    if (++rw->work > rw->max_work)
        return st_fail(why, (st_loc){0}, "stopped after %llu strategy steps (%d, and %d for each node of the program): "
                       "the strategy does not seem to end", (unsigned long long)rw->max_work, MAX_WORK, WORK_PER_NODE), NULL;
    size_t mark = rw->nlog;
    const st_node *r = run_kind(rw, s, e, why);
    if (!r) rw->nlog = mark;
    return r;
}

/* ---- what keeps code of its own (above: why), out of line so that the
 * stack of a traversal holds only what each level needs ---- */

/* repeat(s): s until it fails or changes nothing */
__attribute__((noinline)) static const st_node *repeat(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    for (const st_node *cur = e;;) {
        st_err stop = {0};
        const st_node *r = run(rw, s->a, cur, &stop);
        if (!r && (ends_rewrite(&stop) || rw->steps >= MAX_STEPS)) return *why = stop, NULL;
        if (!r || r == cur) return cur; /* done, or no progress: stop rather than loop */
        if (too_deep(r, why)) return NULL;
        cur = r;
    }
}

/* iterate(n, s): s n times */
__attribute__((noinline)) static const st_node *iterate(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    const st_node *cur = e;
    for (int64_t i = 0; i < s->n; i++) {
        st_err inner = {0};
        if ((cur = run(rw, s->a, cur, &inner)) && too_deep(cur, &inner)) cur = NULL;
        if (!cur) {
            *why = inner;
            if (inner.kind == ST_ERR_USER)
                st_fail(why, inner.loc, "iteration %lld of %lld: %s", (long long)i + 1, (long long)s->n, inner.message);
            why->mismatch = inner.mismatch;
            return NULL;
        }
    }
    return cur;
}

__attribute__((noinline)) static const st_node *first(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    bool found = false;
    st_err inner = {0};
    const st_node *r = at_first(rw, s, e, &found, &inner);
    char p[48];
    pattern_name(s->pattern, p, sizeof p);
    if (!found) {
        st_fail(why, (st_loc){0}, "there is no %s here", p);
        why->mismatch = true;
        return NULL;
    }
    if (!r) {
        *why = inner;
        if (inner.kind == ST_ERR_USER) st_fail(why, inner.loc, "at the first %s: %s", p, inner.message);
        why->mismatch = inner.mismatch;
    }
    return r;
}

__attribute__((noinline)) static const st_node *each(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    uint32_t count = 0;
    const st_node *r = at_each(rw, s, e, &count, why);
    if (r && count == 0) {
        char p[48];
        pattern_name(s->pattern, p, sizeof p);
        st_fail(why, (st_loc){0}, "there is no %s here", p);
        why->mismatch = true;
        return NULL;
    }
    return r;
}

/* all(s): s on every child */
__attribute__((noinline)) static const st_node *all(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    const st_node *kids[ST_MAX_KIDS];
    if (!enter(rw, e)) return st_fail_internal(why, "out of memory"), NULL;
    for (uint32_t i = 0; i < e->nkids; i++)
        if (!(kids[i] = st_is_binder(e, i) ? e->kids[i] : run(rw, s->a, e->kids[i], why))) return leave(rw), NULL;
    leave(rw);
    st_err inner = {0};
    const st_node *r = st_rebuild(rw->cx, e, kids, &inner);
    if (!r) rebuilt_fails(e, &inner, why);
    return r;
}

static const st_node *run_kind(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    switch (s->kind) {
    case ST_S_RULE: return apply_rule(rw, s, e, why);
    case ST_S_ID: return e;
    case ST_S_FAIL: return st_fail(why, (st_loc){0}, "`fail` never applies"), NULL;
    case ST_S_SEQ: {
        const st_node *r = run(rw, s->a, e, why);
        return r ? run(rw, s->b, r, why) : NULL;
    }
    case ST_S_CHOICE: return choice(rw, s, e, why);
    case ST_S_TRY:
    case ST_S_NORMALIZE:
    case ST_S_TOPDOWN:
    case ST_S_BOTTOMUP: return derived(rw, s, e, why);
    case ST_S_REPEAT: return repeat(rw, s, e, why);
    case ST_S_ITERATE: return iterate(rw, s, e, why);
    case ST_S_FIRST: return first(rw, s, e, why);
    case ST_S_EACH: return each(rw, s, e, why);
    case ST_S_ALL: return all(rw, s, e, why);
    case ST_S_ONE: return one(rw, s, e, why);
    }
    return st_fail_internal(why, "unknown strategy"), NULL;
}

/* The nodes of e as a tree, at most TREE_CAP (each node's count once). */
static uint64_t tree_size(const st_node *e, st_ptrmap *memo, bool *ok) {
    uintptr_t v;
    if (st_ptrmap_get(memo, e, &v)) return v;
    uint64_t n = 1;
    for (uint32_t i = 0; i < e->nkids && n < TREE_CAP; i++) n += tree_size(e->kids[i], memo, ok);
    if (n > TREE_CAP) n = TREE_CAP;
    *ok &= st_ptrmap_put(memo, e, (uintptr_t)n);
    return n;
}

const st_node *st_rewrite(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    st_err reason = {0};
    rw->steps = rw->work = rw->npath = 0; /* each rewrite has its own budget */
    rw->nlog = 0;
    st_ptrmap memo = {0};
    bool ok = true;
    rw->max_work = MAX_WORK + WORK_PER_NODE * tree_size(e, &memo, &ok);
    st_ptrmap_free(&memo);
    if (!ok) return st_fail_internal(why, "out of memory"), NULL;
    const st_node *r = run(rw, s, e, &reason);
    if (r && too_deep(r, &reason)) r = NULL;
    if (!r) *why = reason;
    for (size_t i = 0; r && rw->trace && i < rw->nlog; i++)
        rw->trace(rw->trace_data, rw->log[i].depth, rw->log[i].rule, rw->log[i].args, rw->log[i].before,
                  rw->log[i].after);
    rw->nlog = 0;
    return r;
}

/* ---- a composite acts on its node ---- */

/* Is kid i of e an input that a composite must not look into: data, not a
 * function, and more than a name, a literal or a view (which hold nothing
 * to find; a view hidden would be let-bound back, made memory: an exscan's
 * shifted input must stay read where the scan reads it)? */
static bool hides(const st_node *e, uint32_t i) {
    const st_node *k = e->kids[i];
    return st_prim_arg_role(e->u.prim, (int)i, e->nkids) != ST_ARG_FUN && k->kind != ST_NODE_VAR &&
           k->kind != ST_NODE_LIT && !st_is_view(k, true);
}

/* Each hidden input goes back where it was when the result uses it once and
 * not inside a lambda; else it is computed once, let-bound around the result,
 * so that what the composite built does not recompute it per element. */
static const st_node *put_back(st_rw *rw, const st_node *r, const st_node *var, const st_node *input, st_err *why) {
    bool under = false;
    uint32_t uses = st_count_uses(r, var, &under);
    st_err inner = {0};
    const st_node *out = uses == 0 ? r
                         : uses == 1 && !under ? st_subst(rw->cx, r, var, input, &inner)
                         : st_let(rw->cx, 1, &var, input, r, &inner);
    if (!out) st_fail_internal(why, "putting a composite's input back failed: %s", inner.message);
    return out;
}

/* A composite's strategy s on e and on what s builds there, never inside
 * e's inputs, which stand behind fresh variables while s runs: so
 * `first(scan, …)` in s finds the scans s made, not a scan that computes
 * e's input. */
__attribute__((noinline)) static const st_node *on_node(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why) {
    if (e->kind != ST_NODE_PRIM) return run(rw, s, e, why);
    const st_node *kids[ST_MAX_KIDS], *vars[ST_MAX_KIDS] = {0};
    bool any = false;
    for (uint32_t i = 0; i < e->nkids; i++) {
        kids[i] = e->kids[i];
        if (!hides(e, i)) continue;
        const char *name = st_fresh_name(rw->cx, "input");
        if (!name || !(vars[i] = st_let_var(rw->cx, name, kids[i])))
            return st_fail_internal(why, "out of memory"), NULL;
        /* a kid that only a node of its own shape may stand in for is the
         * node's own part, not an input (scanTotal takes only a scan) */
        st_err shape = {0};
        if (!st_replace_kid(rw->cx, e, i, vars[i], &shape)) {
            if (shape.kind == ST_ERR_INTERNAL) return *why = shape, NULL;
            vars[i] = NULL;
            continue;
        }
        kids[i] = vars[i];
        any = true;
    }
    if (!any) return run(rw, s, e, why);
    st_err inner = {0};
    const st_node *opaque = st_rebuild(rw->cx, e, kids, &inner);
    if (!opaque) return st_fail_internal(why, "hiding a composite's inputs failed: %s", inner.message), NULL;
    const st_node *r = run(rw, s, opaque, why);
    for (uint32_t i = e->nkids; r && i-- > 0;)
        if (vars[i]) r = put_back(rw, r, vars[i], e->kids[i], why);
    return r;
}

const st_def *st_rewrite_def(st_rw *rw, const st_strategy *s, const st_def *def, st_err *why) {
    const st_def *outer = rw->def;
    rw->def = def;
    const st_node *body = st_rewrite(rw, s, def->body, why);
    rw->def = outer;
    if (!body) return NULL;
    st_def *d = st_ctx_alloc(rw->cx, sizeof *d);
    if (!d) return st_fail_internal(why, "out of memory"), NULL;
    *d = *def;
    d->body = body;
    return d;
}

const st_program *st_program_replace(st_ctx *cx, const st_program *p, const st_def *old,
                                     const st_def *now) {
    st_program *q = st_ctx_alloc(cx, sizeof *q);
    st_def *defs = st_ctx_alloc(cx, p->ndefs * sizeof *defs);
    if (!q || !defs) return NULL;
    for (uint32_t i = 0; i < p->ndefs; i++) defs[i] = &p->defs[i] == old ? *now : p->defs[i];
    *q = *p;
    q->defs = defs;
    return q;
}
