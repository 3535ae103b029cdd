/* rewrite/result.h — internal to rewrite/: what a plugin's rule returned,
 * checked where it returns it (engine.c), before anything reads it. Only a
 * plugin's (registry_plugin_of): the built-in rules are strata's own,
 * what they return is trusted, and a fault in it is strata's (an internal
 * error). */
#ifndef STRATA_REWRITE_RESULT_H
#define STRATA_REWRITE_RESULT_H

#include "rewrite.h"

/* out, what the rule of s (a RULE strategy) of the plugin at `plugin`
 * returned for e, is an
 * expression that can stand where e stood: every node in it is one the
 * context cx made (not changed after, not copied, not another context's),
 * none is inside itself, it has e's type, and every variable it uses free
 * is free in e, a parameter or size of def (may be NULL), or bound in out.
 * Else false, with an ST_ERR_RULE error in *why naming the rule, its
 * arguments and its plugin, and saying what is wrong. */
bool rule_result_ok(const st_ctx *cx, const st_def *def, const st_strategy *s, const char *plugin, const st_node *e,
                    const st_node *out, st_err *why);

/* *why, an internal error the rule of s of the plugin at `plugin` failed with (its helpers'
 * "built an ill-typed expression", or another), made the rule's: an
 * ST_ERR_RULE error that names it. */
void rule_failed(const st_strategy *s, const char *plugin, st_err *why);

#endif
