/* tests/rules_fixture.h — the fixture of the suites that rewrite with the
 * built-in rules: a context, an arena and a registry per test. Included by
 * one test file each (its globals are that file's). */
#ifndef STRATA_TESTS_RULES_FIXTURE_H
#define STRATA_TESTS_RULES_FIXTURE_H

#include "harness.h"
#include "strategies/strategies.h"

static st_ctx *cx;
static st_arena *ar;
static st_registry *reg;

/* harness.h's helpers over this suite's arena */
#define text_of(...) arena_text(ar, __VA_ARGS__)

static void rules_setup(void) {
    cx = st_ctx_new();
    ar = st_arena_new();
    reg = st_registry_new();
    ck_assert(cx != NULL && ar != NULL && reg != NULL);
    st_err err = {0};
    ck_assert_msg(st_register_builtin_rules(reg, &err), "%s", err.message);
}

static void rules_teardown(void) {
    st_registry_free(reg);
    st_arena_free(ar);
    st_ctx_free(cx);
}

#endif
