/* tests/plugins/elsewhere.h — K = 6 of tests/plugins/bad_results.c: a
 * node of a context that is not the rewrite's. */
#ifndef STRATA_TEST_PLUGINS_ELSEWHERE_H
#define STRATA_TEST_PLUGINS_ELSEWHERE_H

#include "rewrite/plugin.h"

/* The body of `def f(xs: [N]i32): [N]i32 = xs |> scan(+, 0)`, parsed in a
 * context of the plugin's own, made on the first call and freed when the
 * plugin is unloaded; NULL with why when it cannot be made. */
const st_node *scan_of_another_context(st_err *why);

#endif
