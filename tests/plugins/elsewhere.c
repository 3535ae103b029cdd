/* tests/plugins/elsewhere.c — a node of another context, for K = 6 of
 * tests/plugins/bad_results.c.
 *
 * The plugin ABI (rewrite/plugin.h) gives a rule no context of its own: it
 * builds in the rewrite's. To show that strata refuses a node of another
 * context all the same, this part of the test plugin is built with its own
 * copy of the IR (tests/meson.build), whose st_ctx_new and parser the
 * executable does not export. */
#include "elsewhere.h"

#include "ir/ir.h"

#include <string.h>

/* The only state here: the point of K = 6 is a node that outlives the
 * rewrite's context. */
static st_ctx *elsewhere;

__attribute__((destructor)) static void free_elsewhere(void) { st_ctx_free(elsewhere); }

const st_node *scan_of_another_context(st_err *why) {
    static const char text[] = "def f(xs: [N]i32): [N]i32 = xs |> scan(+, 0)\n";
    if (!elsewhere && !(elsewhere = st_ctx_new())) return st_reject(why, "%s", "out of memory"), NULL;
    const st_program *p = st_parse_program(elsewhere, "elsewhere", text, strlen(text), why);
    return p ? p->defs[0].body : NULL;
}
