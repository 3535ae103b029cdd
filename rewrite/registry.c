/* rewrite/registry.c — the rules known by name. */
#include "registry.h"

#include <stdlib.h>
#include <string.h>

st_registry *st_registry_new(void) { return calloc(1, sizeof(st_registry)); }

void st_registry_free(st_registry *r) {
    if (!r) return;
    free(r->rules);
    registry_unload_plugins(r);
    free(r);
}

/* Names the strategy language keeps for its combinators. */
static const char *const reserved[] = {"id",       "fail", "try",       "repeat", "iterate", "first", "each",
                                       "topdown", "bottomup", "all", "one", "normalize"};

static bool well_named(const char *name) {
    if (!name || !*name || strlen(name) > 64) return false;
    if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z'))) return false;
    if (name[strlen(name) - 1] == '-') return false; /* the strategy language reads `a-` as `a` */
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
            return false;
    return true;
}

bool st_registry_add(st_registry *r, const st_rule *rule, st_err *err) {
    const char *name = rule->name ? rule->name : "(unnamed)";
    if (!well_named(rule->name))
        return st_fail(err, (st_loc){0}, "a rule's name is letters, digits, `-` and `_`, starting with a letter and not ending in `-`, at most 64 characters: `%s` is not", name);
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (!strcmp(rule->name, reserved[i]))
            return st_fail(err, (st_loc){0}, "`%s` is a combinator of the strategy language; a rule cannot take its name", name);
    if (st_registry_find(r, rule->name))
        return st_fail(err, (st_loc){0}, "a rule named `%s` exists already (from %s)", name,
                       st_registry_find(r, rule->name)->origin ? st_registry_find(r, rule->name)->origin : "built-in");
    if (!rule->apply == !rule->expand)
        return st_fail(err, (st_loc){0}, "rule `%s` must have exactly one of an apply and an expand function", name);
    if (rule->nparams > ST_RULE_MAX_PARAMS)
        return st_fail(err, (st_loc){0}, "rule `%s` declares %u parameters; at most %d", name, rule->nparams, ST_RULE_MAX_PARAMS);
    for (uint32_t i = 0; i < rule->nparams; i++) {
        const st_param *p = &rule->params[i];
        uint32_t nnames = st_param_nnames(p);
        int64_t lo = nnames ? 0 : p->min, hi = nnames ? (int64_t)nnames - 1 : p->max;
        if (!well_named(p->name) || lo > hi || (p->has_default && (p->def < lo || p->def > hi)))
            return st_fail(err, (st_loc){0}, "rule `%s` declares its parameter %u badly (name, range or default)", name, i + 1);
        for (uint32_t k = 0; k < nnames; k++) {
            if (!well_named(p->names[k]))
                return st_fail(err, (st_loc){0}, "rule `%s`: the parameter `%s` takes the name `%s`, which the strategy language cannot read", name, p->name, p->names[k]);
            for (uint32_t j = 0; j < k; j++)
                if (!strcmp(p->names[j], p->names[k]))
                    return st_fail(err, (st_loc){0}, "rule `%s`: the parameter `%s` takes the name `%s` twice", name, p->name, p->names[k]);
        }
        if (p->optional && !nnames && p->min == ST_PARAM_UNSET)
            return st_fail(err, (st_loc){0}, "rule `%s`: the optional parameter `%s` cannot take INT64_MIN, which stands for \"not given\"", name, p->name);
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(rule->params[j].name, p->name))
                return st_fail(err, (st_loc){0}, "rule `%s` declares the parameter `%s` twice", name, p->name);
    }
    if (!st_grow(&r->rules, sizeof *r->rules, r->n, &r->cap, 32)) return st_fail_internal(err, "out of memory");
    r->rules[r->n++] = rule;
    return true;
}

const st_rule *st_registry_find(const st_registry *r, const char *name) {
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rules[i]->name, name)) return r->rules[i];
    return NULL;
}

size_t st_registry_count(const st_registry *r) { return r->n; }
const st_rule *st_registry_at(const st_registry *r, size_t i) { return i < r->n ? r->rules[i] : NULL; }

uint32_t st_param_nnames(const st_param *p) {
    uint32_t n = 0;
    while (p->names && p->names[n] && n < 64) n++;
    return n;
}

void st_param_print(const st_param *p, int64_t value, st_buf *out) {
    if (value >= 0 && value < (int64_t)st_param_nnames(p)) st_buf_puts(out, p->names[value]);
    else st_buf_printf(out, "%lld", (long long)value);
}
