/* strategies/strategies.h — the built-in rules, one file per family. */
#ifndef STRATA_STRATEGIES_H
#define STRATA_STRATEGIES_H

#include "rewrite/rewrite.h"

/* Every built-in rule into r. */
bool st_register_builtin_rules(st_registry *r, st_err *err);

bool st_register_scan_rules(st_registry *r, st_err *err);   /* strategies/scan.c */
bool st_register_fusion_rules(st_registry *r, st_err *err); /* strategies/fusion.c */
bool st_register_lowering_rules(st_registry *r, st_err *err); /* strategies/lowering.c */

/* The strategy `lower-opencl` of reg (NULL when reg lacks it): what `run`
 * applies after the user's strategy, mapping the program onto OpenCL. */
const st_strategy *st_default_lowering(st_ctx *cx, const st_registry *reg);

#endif
