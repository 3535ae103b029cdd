/* rewrite/rewrite.h — the public interface of strata's rewrite stage.
 *
 * What a rule sees is rewrite/plugin.h (rules, strategies, the rewrite
 * context, helpers to build IR), which plugins get alone; here is the rest:
 *
 *   registry     the rules known by name (built-ins, later plugins), made,
 *                filled and loaded with plugins
 *   rewriting    a strategy applied to an expression or a def, traced
 *   passes       what the engine and codegen run besides the rules
 *
 * A rewrite never changes a type: every rule maps an expression to one of the
 * same type, and the engine checks it. Like the rest of the library nothing
 * here prints or exits; --trace output comes back through a callback.
 */
#ifndef STRATA_REWRITE_H
#define STRATA_REWRITE_H

#include "ir/ir.h"
#include "rewrite/plugin.h"

/* ------------------------------------------------------------------------ */
/* Registry                                                                 */
/* ------------------------------------------------------------------------ */

st_registry *st_registry_new(void);
void st_registry_free(st_registry *r);
/* Add a rule (kept by pointer: it must outlive the registry). A name that is
 * taken, or a rule that declares itself badly, is refused. */
bool st_registry_add(st_registry *r, const st_rule *rule, st_err *err);
size_t st_registry_count(const st_registry *r);
const st_rule *st_registry_at(const st_registry *r, size_t i);

/* Load the plugin at path (a shared module built against rewrite/plugin.h)
 * and add its rules, their origin the module's absolute path. Refused, with
 * nothing added: a missing or unloadable file, a module that is not a strata
 * plugin (no `strata_plugin_abi` or `strata_plugin_register`), one built
 * for another plugin ABI, one loaded already, one whose register function
 * fails or adds no rule, and a rule whose name is taken. The module stays
 * loaded until the registry is freed. */
bool st_registry_load_plugin(st_registry *r, const char *path, st_err *err);
/* The plugins loaded, in order: their absolute paths. */
size_t st_registry_plugin_count(const st_registry *r);
const char *st_registry_plugin_path(const st_registry *r, size_t i);

/* ------------------------------------------------------------------------ */
/* Rewriting                                                                */
/* ------------------------------------------------------------------------ */

/* Called once per rule application that took part in the result, in the
 * order the rules began (a composite before the rules of its strategy, which
 * have a greater depth), when st_rewrite returns: the rule, its arguments, the
 * expression it rewrote and what it became. */
typedef void (*st_trace_fn)(void *data, int depth, const st_rule *rule, const int64_t *args,
                            const st_node *before, const st_node *after);

st_rw *st_rw_new(st_ctx *cx, const st_registry *reg);
void st_rw_free(st_rw *rw);
void st_rw_set_trace(st_rw *rw, st_trace_fn fn, void *data);

/* Apply s to e: the result, or NULL with why it did not apply. */
const st_node *st_rewrite(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why);
/* The nodes the traversals entered to reach the node being rewritten, from
 * the root of the rewrite to its parent (*n of them; none at the root):
 * what rewrite/placement.c reads where a node runs (st_rw_under_lambda …). */
const st_node *const *st_rw_path(const st_rw *rw, size_t *n);
/* Apply s to the body of def: a new def (same parameters, facts and result
 * type), or NULL with the reason. */
const st_def *st_rewrite_def(st_rw *rw, const st_strategy *s, const st_def *def, st_err *why);
/* The program with one def replaced. */
const st_program *st_program_replace(st_ctx *cx, const st_program *p, const st_def *old,
                                     const st_def *now);

/* ------------------------------------------------------------------------ */
/* The rewrite's own passes                                                 */
/* ------------------------------------------------------------------------ */

/* e with every exscan(op, z, xs) made the inclusive scan of xs shifted
 * right by one, z in front:
 *     scan(op, z, iota(n) |> map(i => z where i == 0, else xs[i - 1]))
 * (element 0 is z op z = z, z being op's neutral element). The shifted
 * input is a view (index-fused; xs let-bound first when one element of it
 * costs more than a read), read where the scan reads its input: no pass and
 * no buffer of its own. So an exscan is a scan to every rule — the scan
 * rules, lookback, segmented-scan, the fusions — and to codegen, and none
 * has a case of its own for it. The look-back scan reads element i - 1 where
 * the inclusive one reads element i: the carry each element gets is its
 * exclusive prefix, computed once. Element 0 of the shifted input is z, so
 * z must be op's neutral element: a seed st_seeds_as_neutral would take out
 * comes out first (st_seed_taken_out). The rule exscans-as-scans does this
 * (strategies/normalise.c). def writes symbolic lengths (NULL: constant lengths only). */
const st_node *st_exscans_as_scans(st_ctx *cx, const st_def *def, const st_node *e, st_err *err);
/* e with every scan, exscan and reduce seeded by a value other than its
 * operator's neutral element (where strata knows it: + * & | ^ min max && ||
 * on one number) made one seeded by the neutral element, the seed applied
 * after (map(y => op(z, y), …), op(z, …), or in a post-function), and every
 * reduce_by_index's z made the neutral element (it reads none): the parallel
 * rules start every block from the seed (rewrite/seeds.c says more).
 * The rule seeds-as-neutral does this (strategies/normalise.c). */
const st_node *st_seeds_as_neutral(st_ctx *cx, const st_node *e, st_err *err);
/* Is n a scan, exscan, reduce or reduce_by_index[_2d] whose seed
 * st_seeds_as_neutral would take out: its operator one whose neutral element
 * strata knows, its seed not that element? A rule that starts blocks from
 * the seed refuses such a node. */
bool st_seed_not_neutral(const st_node *n);
/* n alone (not what it holds) as st_seeds_as_neutral makes it: a
 * reduce_by_index with the neutral element for z, a scan with the seed in
 * its post-function, a reduce op(z, …) of one from the neutral element; n
 * itself where its seed stays. */
const st_node *st_seed_taken_out(st_ctx *cx, const st_node *n, st_err *err);
/* def with every variable it binds renamed by its place in the program:
 * the first binder of a base name (`blk`, from `blk_3`) in program order
 * takes the base name, the next ones `blk_2`, `blk_3`, …; the def's
 * parameters and sizes keep theirs, and no binder takes one of them. So
 * two defs equal up to the names of their binders become one, whatever
 * rewrites (and fresh names) made them: codegen's kernels, and their
 * SHA-256, depend on the program alone, not on the context's history. */
const st_def *st_def_canonical(st_ctx *cx, const st_def *def, st_err *err);

#endif
