/* strategies/fusion.c — fusion rules: fewer passes over memory.
 *
 *   fuse-map-map       map(g, map(f, xs))          -> map(x => g(f(x)), xs)
 *   fuse-map-scan      scan(op, z, map(f, xs))     -> scan(op, (a, x) => op(a, f(x)), z, xs)    scanomap
 *   fuse-map-reduce    reduce(op, z, map(f, xs))   -> reduce(op, (a, x) => op(a, f(x)), z, xs)  redomap
 *   fuse-scan-scan     two independent scans of one length -> one scan of pairs, unzipped
 *   fuse-scan-map      map(g, scan(…)) and map(g, zip(xs, scan(…, xs)))
 *                                                  -> the scan with a post-function            maposcanomap
 *   fuse-scan-scatter  scatter(dest, scan(…, xs), xs)
 *                                                  -> scatter(dest, the scan producing (index, value) pairs)
 *
 * A producer-consumer rule applies where the producer is written inside the
 * consumer, or at `let ys = producer in body` when ys feeds the consumer.
 * There it refuses the hindrances of [Spiegelhauer-Sprent 2016] (figure 3): a
 * producer used more than once (fusing would compute it again, or keep it
 * anyway: cases 4 and 6) and a use inside a lambda (once per element of an
 * outer map: case 3). A map of a few scalar operations per element read
 * only as consumers' inputs is computed again in each (cheap_map). */
#include "rewrite/plugin.h"
#include "strategies.h"

#include <stdio.h>


/* ---- the let form, shared by the producer-consumer rules ---- */

typedef const st_node *(*direct_fn)(st_rw *rw, const st_node *consumer, st_err *why);
typedef bool (*feeds_fn)(const st_node *consumer, const st_node *v); /* does v flow into consumer as fusable? */

/* e with the consumer that reads `producer` (as direct fusion expects it)
 * replaced by its fusion; *found tells whether there was one. */
static const st_node *fuse_at(st_rw *rw, const st_node *e, const st_node *producer, feeds_fn feeds, direct_fn direct,
                              bool *found, st_err *why) {
    if (feeds(e, producer)) {
        *found = true;
        return direct(rw, e, why);
    }
    for (uint32_t i = 0; i < e->nkids; i++) {
        const st_node *k = fuse_at(rw, e->kids[i], producer, feeds, direct, found, why);
        if (!*found) continue;
        if (!k) return NULL;
        st_err inner = {0};
        const st_node *r = st_replace_kid(st_rw_ctx(rw), e, i, k, &inner);
        if (!r) st_fail_internal(why, "rebuilding after fusion: %s", inner.message);
        return r;
    }
    return e;
}

/* `let (a, b) = unzip(producer)`: not fused through yet, but a use outside
 * the consumer is the hindrance to name (the "advanced" program). */
static const st_node *unzipped(const char *rule, const st_node *e, const char *producer_name, st_err *why) {
    for (uint32_t i = 0; i < st_let_nvars(e); i++) {
        uint32_t uses = st_count_uses(st_let_body(e), e->kids[i], NULL);
        if (uses > 1)
            return st_reject(why, "%s: `%s` is used %u times, outside the consumer too; fusing the %s would compute it again, or keep it anyway (a hindrance: figure 3 of the map-scan report, cases 4 and 6)",
                           rule, e->kids[i]->u.name, uses, producer_name), NULL;
    }
    return st_no_match(why, "%s does not fuse a %s through unzip yet", rule, producer_name);
}

/* A map whose function is a few scalar operations on its element (no loop,
 * no memory of its own): computing it again where each consumer reads it
 * costs less than writing it and reading it back, so a use more than once
 * is no hindrance when every use reads it element by element (is a
 * consumer's input), as a filter's flags feed its scan, its count and its
 * index map. A use of the whole array (returned, stored, indexed) would
 * keep it anyway, and stays one. */
enum { CHEAP_MAP_DEPTH = 16 };

static bool cheap_map(const st_node *m) {
    if (!st_is_prim(m, ST_PRIM_MAP) || m->kids[0]->kind != ST_NODE_LAMBDA) return false;
    const st_node *body = st_lambda_body(m->kids[0]);
    return (body->depth <= CHEAP_MAP_DEPTH || st_cost_depth(body) <= CHEAP_MAP_DEPTH) && st_is_view_scalar(body);
}

/* Is every occurrence of v in e an input read element by element: the data
 * of a map, scan or reduce, or a component of a zip that is one? */
static bool read_elementwise(const st_node *e, const st_node *v, bool as_data) {
    if (e == v) return as_data;
    for (uint32_t i = 0; i < e->nkids; i++) {
        if (st_is_binder(e, i)) continue;
        bool data = (st_is_prim(e, ST_PRIM_MAP) || st_is_prim(e, ST_PRIM_SCAN) || st_is_prim(e, ST_PRIM_REDUCE)) && i + 1 == e->nkids;
        if (!read_elementwise(e->kids[i], v, data || (st_is_prim(e, ST_PRIM_ZIP) && as_data))) return false;
    }
    return true;
}

/* At `let v = producer in body`: the hindrances, then fusion at v's one use.
 * The producer is substituted for v in the whole body first: st_subst renames
 * any binder on the way that would capture the producer's free variables, and
 * stops where v is shadowed. */
static const st_node *fuse_let(st_rw *rw, const char *rule, const st_node *e, bool (*is_producer)(const st_node *),
                               const char *producer_name, const char *consumer_name, feeds_fn feeds,
                               direct_fn direct, st_err *why) {
    if (e->kind == ST_NODE_LET && st_let_nvars(e) > 1 && st_is_prim(st_let_value(e), ST_PRIM_UNZIP) &&
        is_producer(st_let_value(e)->kids[0]))
        return unzipped(rule, e, producer_name, why);
    if (e->kind != ST_NODE_LET || st_let_nvars(e) != 1 || !is_producer(st_let_value(e)))
        return st_no_match(why, "%s fuses a %s into a %s", rule, producer_name, consumer_name);
    const st_node *v = e->kids[0], *body = st_let_body(e), *producer = st_let_value(e);
    bool under = false;
    uint32_t uses = st_count_uses(body, v, &under);
    uint32_t consumers = uses;
    if (uses > 1 && !under && cheap_map(producer) && read_elementwise(body, v, false)) uses = 1; /* see cheap_map */
    if (uses != 1) {
        if (uses == 0) return st_no_match(why, "the bound value is not used");
        return st_reject(why, "%s: `%s` is used %u times; fusing the %s into one use would compute it again for the others, or keep it anyway (a hindrance: figure 3 of the map-scan report, cases 4 and 6)",
                       rule, v->u.name, uses, producer_name), NULL;
    }
    if (under)
        return st_reject(why, "%s: `%s` is used inside a lambda; fusing the %s there would compute it once per element of the outer map, or once per turn of a loop (a hindrance: figure 3, case 3)",
                       rule, v->u.name, producer_name), NULL;
    st_err inner = {0};
    const st_node *inlined = st_subst(st_rw_ctx(rw), body, v, producer, &inner);
    if (!inlined) return *why = inner, NULL;
    /* each consumer of the rule's kind takes its copy (a cheap map read by
     * several), one at a time: a fused consumer no longer reads it */
    const st_node *r = inlined;
    bool any = false;
    for (uint32_t i = 0; i < consumers; i++) {
        bool found = false;
        const st_node *next = fuse_at(rw, r, producer, feeds, direct, &found, why);
        if (!found) break;
        if (!next) return NULL;
        r = next;
        any = true;
    }
    if (!any) return st_no_match(why, "`%s` does not feed a %s", v->u.name, consumer_name);
    return r;
}

/* ---- map into map, scan, reduce ---- */

static bool is_map(const st_node *n) { return st_is_prim(n, ST_PRIM_MAP); }

/* the consumer's data argument is v */
static bool data_is(const st_node *c, const st_node *v) { return c->kind == ST_NODE_PRIM && c->kids[c->nkids - 1] == v; }

static bool feeds_map(const st_node *c, const st_node *v) { return is_map(c) && data_is(c, v); }
static bool feeds_scan(const st_node *c, const st_node *v) { return st_is_prim(c, ST_PRIM_SCAN) && data_is(c, v); }
static bool feeds_reduce(const st_node *c, const st_node *v) { return st_is_prim(c, ST_PRIM_REDUCE) && data_is(c, v); }

static const st_node *map_map(st_rw *rw, const st_node *e, st_err *why) {
    if (!is_map(e) || !is_map(e->kids[1])) return st_no_match(why, "fuse-map-map needs a map of a map");
    const st_node *f = e->kids[1]->kids[0], *g = e->kids[0], *xs = e->kids[1]->kids[1];
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *x = st_b_var(b, "x", st_elem_of(xs));
    return ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, ST_CALL(b, g, ST_CALL(b, f, x)), x), xs);
}

/* scan or reduce, any form, of map(f, ys): fold the map in */
static const st_node *map_into_fold(st_rw *rw, const st_node *e, st_prim prim, const char *rule, st_err *why) {
    if (!st_is_prim(e, prim) || !is_map(e->kids[e->nkids - 1]))
        return st_no_match(why, "%s needs a %s of a map", rule, st_prim_get(prim)->name);
    st_scan_form s;
    if (!st_fold_form_of(e, &s)) return st_no_match(why, "not a scan or reduce");
    const st_node *op = s.op, *fold = s.fold, *post = s.post, *z = s.z, *map = s.xs, *f = map->kids[0], *ys = map->kids[1];
    /* a scan reads its input in each of its passes (parallel-scan: two),
     * and the look-back scan takes no rows: a map from rows to scalars stays
     * apart, computed once, so the scan that reads its result stays cheap */
    if (prim == ST_PRIM_SCAN && !st_type_is_plain(st_elem_of(ys)) && st_type_is_plain(map->type->elem))
        return st_reject(why, "%s: the map reduces rows to scalars; fused, the scan would read whole rows in "
                       "each of its passes and could not be the look-back scan, so the map stays apart", rule), NULL;
    if (post && st_lambda_nparams(post) == 2 && st_occurs(st_lambda_body(post), post->kids[1]) && !cheap_map(map))
        return st_reject(why, "%s: the scan's post-function reads the mapped elements, so fusing the map would compute it twice per element (fuse the map first, then the post-function)", rule), NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *acc = st_b_var(b, "acc", z->type), *y = st_b_var(b, "y", st_elem_of(ys));
    const st_node *fold2 = ST_LAMBDA(b, ST_CALL(b, fold ? fold : op, acc, ST_CALL(b, f, y)), acc, y);
    if (!post) return st_b_prim_n(b, prim, 4, (const st_node *[]){op, fold2, z, ys});
    const st_node *acc2 = st_b_var(b, "acc", z->type), *y2 = st_b_var(b, "y", st_elem_of(ys));
    const st_node *post2 = ST_LAMBDA(b, ST_CALL(b, post, acc2, ST_CALL(b, f, y2)), acc2, y2);
    return ST_PRIM(b, ST_PRIM_SCAN, op, fold2, post2, z, ys);
}

static const st_node *map_scan_direct(st_rw *rw, const st_node *e, st_err *why) {
    return map_into_fold(rw, e, ST_PRIM_SCAN, "fuse-map-scan", why);
}

static const st_node *map_reduce_direct(st_rw *rw, const st_node *e, st_err *why) {
    return map_into_fold(rw, e, ST_PRIM_REDUCE, "fuse-map-reduce", why);
}

static const st_node *fuse_map_map(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (e->kind == ST_NODE_LET) return fuse_let(rw, "fuse-map-map", e, is_map, "map", "map", feeds_map, map_map, why);
    return map_map(rw, e, why);
}

static const st_node *fuse_map_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (e->kind == ST_NODE_LET) return fuse_let(rw, "fuse-map-scan", e, is_map, "map", "scan", feeds_scan, map_scan_direct, why);
    return map_scan_direct(rw, e, why);
}

static const st_node *fuse_map_reduce(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (e->kind == ST_NODE_LET) return fuse_let(rw, "fuse-map-reduce", e, is_map, "map", "reduce", feeds_reduce, map_reduce_direct, why);
    return map_reduce_direct(rw, e, why);
}

/* ---- scan and scan, side by side ---- */

/* a scan without a post-function */
static bool plain_parts(const st_node *e, st_scan_form *p) { return st_scan_form_of(e, p) && !p->post; }

/* let a = scan(…xs) in let b = scan(…ys) in body, b not reading a, |xs| = |ys|:
 *   let (a, b) = zip(xs, ys) |> scan((p, q) => (op1(p.0, q.0), op2(p.1, q.1)), (z1, z2)) |> unzip in body
 * (with a fold over both when either has one, or when xs and ys are one array, read once). */
static const st_node *fuse_scan_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    st_scan_form s1, s2;
    if (e->kind != ST_NODE_LET || st_let_nvars(e) != 1 || !plain_parts(st_let_value(e), &s1) ||
        st_let_body(e)->kind != ST_NODE_LET || st_let_nvars(st_let_body(e)) != 1 ||
        !plain_parts(st_let_value(st_let_body(e)), &s2))
        return st_no_match(why, "fuse-scan-scan needs two scans bound by consecutive lets (and without post-functions)");
    const st_node *inner = st_let_body(e), *a = e->kids[0], *bv = inner->kids[0], *body = st_let_body(inner);
    if (st_occurs(st_let_value(inner), a))
        return st_reject(why, "fuse-scan-scan: the second scan reads `%s`, the first one's result; they are producer and consumer, not independent", a->u.name), NULL;
    if (s1.xs->type->size != s2.xs->type->size)
        return st_reject(why, "fuse-scan-scan: the scans have different lengths"), NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    bool shared = s1.xs == s2.xs, folding = shared || s1.fold || s2.fold;
    const st_node *z = ST_TUPLE(b, s1.z, s2.z);
    const st_node *p = st_b_var(b, "p", z ? z->type : NULL), *q = st_b_var(b, "q", z ? z->type : NULL);
    const st_node *op = ST_LAMBDA(b, ST_TUPLE(b, ST_CALL(b, s1.op, st_b_proj(b, p, 0), st_b_proj(b, q, 0)),
                                           ST_CALL(b, s2.op, st_b_proj(b, p, 1), st_b_proj(b, q, 1))), p, q);
    const st_node *data = shared ? s1.xs : ST_PRIM(b, ST_PRIM_ZIP, s1.xs, s2.xs);
    const st_node *scan;
    if (folding) {
        const st_node *acc = st_b_var(b, "acc", z ? z->type : NULL), *x = st_b_var(b, "x", st_elem_of(data));
        const st_node *x1 = shared ? x : st_b_proj(b, x, 0), *x2 = shared ? x : st_b_proj(b, x, 1);
        const st_node *fold = ST_LAMBDA(b, ST_TUPLE(b, ST_CALL(b, s1.fold ? s1.fold : s1.op, st_b_proj(b, acc, 0), x1),
                                                 ST_CALL(b, s2.fold ? s2.fold : s2.op, st_b_proj(b, acc, 1), x2)), acc, x);
        scan = ST_PRIM(b, ST_PRIM_SCAN, op, fold, z, data);
    } else {
        scan = ST_PRIM(b, ST_PRIM_SCAN, op, z, data);
    }
    return st_b_let_n(b, 2, (const st_node *[]){a, bv}, ST_PRIM(b, ST_PRIM_UNZIP, scan), body);
}

/* ---- scan into map and scatter ---- */

static bool is_scan(const st_node *n) { return st_is_prim(n, ST_PRIM_SCAN); }

/* a scan of any form, as the 5-argument form needs: op, fold (the
 * operator when there is none), z, xs, and its post-function if any (the
 * new one applies it first: what the scan gave the consumer) */
static bool scan_for_post(const st_node *s, st_scan_form *p) {
    if (!st_scan_form_of(s, p)) return false;
    if (!p->fold) p->fold = p->op; /* a plain scan's operator is its own fold */
    return true;
}

/* Element i of scan p, from its accumulator and the element it read */
static const st_node *scanned(st_build *b, const st_scan_form *p, const st_node *acc, const st_node *elem) {
    return p->post ? ST_CALL(b, p->post, acc, elem) : acc;
}

/* The scan p made to read zip(p.xs, ys) as well: its fold takes the first
 * component, *pair the element of the zip (so that a post-function reads
 * an element of ys as pair.1). How a consumer fuses with a scan when it
 * reads another array beside the scan's output: the scan of an exscan's
 * shifted input zipped with the flags it shifts, in the compaction idiom. */
static const st_node *zipped_with(st_build *b, st_scan_form *p, const st_node *ys, const st_node **pair) {
    const st_node *data = ST_PRIM(b, ST_PRIM_ZIP, p->xs, ys);
    const st_node *acc = st_b_var(b, "acc", p->z->type), *q = st_b_var(b, "q", st_elem_of(data));
    p->fold = ST_LAMBDA(b, ST_CALL(b, p->fold, acc, st_b_proj(b, q, 0)), acc, q);
    p->xs = data;
    *pair = data ? st_b_var(b, "q", data->type->elem) : NULL;
    return data;
}

/* Element i of ys computed from x, element i of what the scan reads (xs),
 * without reading ys: ys is xs, a component of xs (a zip), or a cheap map
 * of either (computed again, as cheap_map says). NULL when ys must be read
 * beside. */
static const st_node *element_from(st_build *b, const st_node *ys, const st_node *xs, const st_node *x) {
    if (ys == xs) return x;
    if (st_is_prim(xs, ST_PRIM_ZIP))
        for (uint32_t j = 0; j < xs->nkids; j++)
            if (ys == xs->kids[j]) return st_b_proj(b, x, j);
    if (cheap_map(ys)) {
        const st_node *y = element_from(b, ys->kids[1], xs, x);
        return y ? ST_CALL(b, ys->kids[0], y) : NULL;
    }
    return NULL;
}

/* map(g, S) or map(g, zip(…, S, …)) with S a scan and the zip's other
 * components of its length: each the scan's input, a component of it, or a
 * cheap map of those (computed from the element the scan reads), or another
 * array, read beside (all such ones zipped together). */
static const st_node *scan_map(st_rw *rw, const st_node *e, st_err *why) {
    const char *shape = "fuse-scan-map needs a map of a scan, or of a scan zipped with other arrays";
    if (!is_map(e)) return st_no_match(why, "%s", shape);
    const st_node *g = e->kids[0], *d = e->kids[1];
    st_scan_form p;
    int scan_at = -1; /* where the scan is in the zip; -1: the map's data is the scan itself */
    if (!scan_for_post(d, &p)) {
        if (!st_is_prim(d, ST_PRIM_ZIP)) return st_no_match(why, "%s", shape);
        for (uint32_t k = 0; k < d->nkids; k++)
            if (is_scan(d->kids[k])) {
                if (scan_at >= 0 || !scan_for_post(d->kids[k], &p)) return st_no_match(why, "%s", shape);
                scan_at = (int)k;
            }
        if (scan_at < 0) return st_no_match(why, "%s", shape);
    }
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *acc = st_b_var(b, "acc", p.z->type), *x = NULL;
    if (scan_at < 0) {
        x = st_b_var(b, "x", st_elem_of(p.xs));
        return ST_PRIM(b, ST_PRIM_SCAN, p.op, p.fold, ST_LAMBDA(b, ST_CALL(b, g, scanned(b, &p, acc, x)), acc, x), p.z,
                       p.xs);
    }
    /* the components read beside the scan's input, zipped together */
    const st_node *beside[ST_MAX_KIDS], *probe = st_b_var(b, "x", st_elem_of(p.xs));
    uint32_t nbeside = 0;
    for (uint32_t k = 0; k < d->nkids; k++)
        if ((int)k != scan_at && !element_from(b, d->kids[k], p.xs, probe)) beside[nbeside++] = d->kids[k];
    const st_node *xs = p.xs, *elem = NULL, *others = NULL;
    if (nbeside == 0) {
        x = elem = st_b_var(b, "x", st_elem_of(p.xs));
    } else {
        zipped_with(b, &p, nbeside == 1 ? beside[0] : st_b_prim_n(b, ST_PRIM_ZIP, nbeside, beside), &x);
        elem = st_b_proj(b, x, 0);
        others = st_b_proj(b, x, 1);
    }
    const st_node *items[ST_MAX_KIDS];
    for (uint32_t k = 0, j = 0; k < d->nkids; k++) {
        if ((int)k == scan_at) items[k] = scanned(b, &p, acc, elem);
        else if (!(items[k] = element_from(b, d->kids[k], xs, elem)))
            items[k] = nbeside == 1 ? others : st_b_proj(b, others, j++);
    }
    const st_node *value = ST_CALL(b, g, st_b_tuple_n(b, d->nkids, items));
    return ST_PRIM(b, ST_PRIM_SCAN, p.op, p.fold, ST_LAMBDA(b, value, acc, x), p.z, p.xs);
}

static bool feeds_map_output(const st_node *c, const st_node *v) {
    if (!is_map(c)) return false;
    const st_node *d = c->kids[1];
    if (d == v) return true;
    if (!st_is_prim(d, ST_PRIM_ZIP)) return false;
    for (uint32_t k = 0; k < d->nkids; k++)
        if (d->kids[k] == v) return true;
    return false;
}

static const st_node *fuse_scan_map(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (e->kind == ST_NODE_LET) return fuse_let(rw, "fuse-scan-map", e, is_scan, "scan", "map", feeds_map_output, scan_map, why);
    return scan_map(rw, e, why);
}

/* scatter(dest, S, vs) with S a scan (any form): the scan's post-function
 * makes the (index, value) pairs, scatter(dest, S') writes them; values
 * other than the scan's input are read beside it (zipped_with) */
static const st_node *scan_scatter(st_rw *rw, const st_node *e, st_err *why) {
    const char *shape = "fuse-scan-scatter needs scatter(dest, is, vs) whose indices are a scan";
    st_scan_form p;
    if (!st_is_scatter(e) || e->nkids != 3 || !st_scan_form_of(e->kids[1], &p))
        return st_no_match(why, "%s", shape);
    const st_node *s = e->kids[1], *vs = e->kids[2];
    if (!p.fold) p.fold = p.op;
    if (s->type->size != vs->type->size)
        return st_reject(why, "fuse-scan-scatter: the indices and the values have different lengths"), NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *acc = st_b_var(b, "acc", p.z->type), *x, *elem, *value;
    const st_node *probe = st_b_var(b, "x", st_elem_of(p.xs));
    if (element_from(b, vs, p.xs, probe)) { /* the values are (computed from) what the scan reads */
        x = elem = st_b_var(b, "x", st_elem_of(p.xs));
        value = element_from(b, vs, p.xs, x);
    } else {
        zipped_with(b, &p, vs, &x);
        elem = st_b_proj(b, x, 0);
        value = st_b_proj(b, x, 1);
    }
    const st_node *index = scanned(b, &p, acc, elem);
    const st_node *pairs = ST_PRIM(b, ST_PRIM_SCAN, p.op, p.fold, ST_LAMBDA(b, ST_TUPLE(b, index, value), acc, x), p.z, p.xs);
    /* a scatterDistinct stays one: its places are the same */
    return ST_PRIM(b, e->u.prim, e->kids[0], pairs);
}

static bool feeds_scatter(const st_node *c, const st_node *v) {
    return st_is_scatter(c) && c->nkids == 3 && c->kids[1] == v;
}

static const st_node *fuse_scan_scatter(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (e->kind == ST_NODE_LET) return fuse_let(rw, "fuse-scan-scatter", e, is_scan, "scan", "scatter", feeds_scatter, scan_scatter, why);
    return scan_scatter(rw, e, why);
}

/* ---- the table ---- */

#define FUSION(name_, summary_, conditions_, fn)                                                    \
    {.name = name_, .summary = summary_, .conditions = conditions_, .origin = "built-in", .apply = fn}

static const st_rule fusion_rules[] = {
    FUSION("fuse-map-map", "map(g, map(f, xs)) into map(x => g(f(x)), xs)",
           "the inner map's result is used once (or, a few scalar operations per element, only as consumers' inputs: computed again in each), and not inside a lambda (a map's function or a loop's body)", fuse_map_map),
    FUSION("fuse-map-scan", "a map feeding a scan into the scan's fold (scanomap): the scan reads the map's input",
           "the map's result is used once (or, a few scalar operations per element, only as consumers' inputs: computed again in each), by the scan, not inside a lambda (a map's function or a loop's body); a post-function must not read the mapped elements; "
           "the map does not reduce rows to scalars (the scan would read whole rows in each pass)",
           fuse_map_scan),
    FUSION("fuse-map-reduce", "a map feeding a reduce into the reduce's fold (redomap)",
           "the map's result is used once (or, a few scalar operations per element, only as consumers' inputs: computed again in each), by the reduce, not inside a lambda (a map's function or a loop's body)", fuse_map_reduce),
    FUSION("fuse-scan-scan", "two independent scans of one length into one scan of pairs (horizontal fusion)",
           "consecutive lets; the second does not read the first; equal lengths; no post-functions yet", fuse_scan_scan),
    FUSION("fuse-scan-map",
           "a map of a scan's output (alone or zipped with other arrays) into the scan's post-function (maposcanomap)",
           "the scan's result is used once, by the map, not inside a lambda (a map's function or a loop's body); the "
           "scan has no post-function yet; each array zipped beside the scan's output (not another scan) is the scan's "
           "input, a component of it or a cheap map of those (computed from the element the scan reads), or else read "
           "by the scan beside its input (an exscan's flags, a partition's indices)", fuse_scan_map),
    FUSION("fuse-scan-scatter", "a scatter whose indices are a scan into the scan: scatter(dest, pairs)",
           "the scan's result is used once, as the indices, not inside a lambda (a map's function or a loop's body); "
           "the values are the scan's input, or another array of its length that the scan reads beside its input "
           "(the compaction: an exscan of flags)",
           fuse_scan_scatter),
};

bool st_register_fusion_rules(st_registry *r, st_err *err) {
    for (size_t i = 0; i < sizeof fusion_rules / sizeof *fusion_rules; i++)
        if (!st_registry_add(r, &fusion_rules[i], err)) return false;
    return true;
}

bool st_register_builtin_rules(st_registry *r, st_err *err) {
    return st_register_scan_rules(r, err) && st_register_fusion_rules(r, err) && st_register_lookback_rules(r, err) &&
           st_register_histogram_rules(r, err) && st_register_lowering_rules(r, err) &&
           st_register_segmented_rules(r, err) && st_register_filter_rules(r, err) &&
           st_register_hoist_rules(r, err) && st_register_normalise_rules(r, err) && st_register_sort_rules(r, err);
}
