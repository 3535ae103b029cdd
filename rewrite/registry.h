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
    st_rule **rules; /* copies, each allocated on its own: the registry keeps pointers */
    size_t nrules;
} loaded_plugin;

struct st_registry {
    const st_rule **rules;
    size_t n, cap;
    loaded_plugin *plugins;
    size_t nplugins;
};

/* Close every plugin and free its rules (plugin.c). */
void registry_unload_plugins(st_registry *r);

#endif
