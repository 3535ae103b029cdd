/* rewrite/registry.h — internal to rewrite/: the registry's insides, shared
 * by registry.c (rules by name) and plugin.c (rules from shared modules). */
#ifndef STRATA_REWRITE_REGISTRY_H
#define STRATA_REWRITE_REGISTRY_H

#include "rewrite.h"

/* A plugin loaded into a registry: its module stays open, and its rules'
 * copies (which carry the plugin's path as their origin) stay allocated,
 * for as long as the registry lives. */
typedef struct loaded_plugin {
    void *module;    /* from dlopen */
    char *path;      /* absolute */
    uintptr_t code_lo, code_hi; /* where its code was loaded (its executable segments), to tell
                                   its rules from strata's wherever a strategy holds them */
    st_rule **rules; /* copies, each allocated on its own: the registry keeps pointers */
    size_t nrules;
} loaded_plugin;

struct st_registry {
    const st_rule **rules;
    size_t n, cap;
    loaded_plugin *plugins;
    size_t nplugins;
};

/* The path of the plugin loaded into r that rule is one of (its function
 * in the plugin's code: a composite may name a rule of its own by its
 * struct, which has no origin; or its origin the plugin's path), or NULL:
 * the rules of strata, and those a program adds itself with
 * st_registry_add, are no plugin's (plugin.c). */
const char *registry_plugin_of(const st_registry *r, const st_rule *rule);

/* Close every plugin and free its rules (plugin.c). */
void registry_unload_plugins(st_registry *r);

#endif
