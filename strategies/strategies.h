/* strategies/strategies.h — the built-in rules, one file per family. */
#ifndef STRATA_STRATEGIES_H
#define STRATA_STRATEGIES_H

#include "rewrite/rewrite.h"

/* Every built-in rule into r. */
bool st_register_builtin_rules(st_registry *r, st_err *err);

bool st_register_scan_rules(st_registry *r, st_err *err);   /* strategies/scan.c */
bool st_register_fusion_rules(st_registry *r, st_err *err); /* strategies/fusion.c */

#endif
