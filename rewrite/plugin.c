/* rewrite/plugin.c — loading rules from shared modules (`--plugin PATH.so`).
 *
 * A plugin exports two symbols (ST_PLUGIN in rewrite/plugin.h writes them):
 * `strata_plugin_abi`, what it was built against, checked before anything of
 * it runs, and `strata_plugin_register`, which adds its rules through
 * st_plugin_add_rule. Loading is all or nothing: a plugin refused halfway
 * leaves the registry as it was. */
#define _GNU_SOURCE /* realpath; dl_iterate_phdr */
#include "plugin.h"
#include "registry.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What st_plugin_add_rule needs: where the rules go. */
struct st_plugin {
    st_registry *reg;
    loaded_plugin *lp;
    bool failed; /* a rule was refused: so is the plugin, whatever its register function returns */
    st_err first;
};

static void free_plugin(loaded_plugin *lp) {
    for (size_t i = 0; i < lp->nrules; i++) free(lp->rules[i]);
    free(lp->rules);
    if (lp->module) dlclose(lp->module);
    free(lp->path);
}

void registry_unload_plugins(st_registry *r) {
    for (size_t i = 0; i < r->nplugins; i++) free_plugin(&r->plugins[i]);
    free(r->plugins);
    r->plugins = NULL;
    r->nplugins = 0;
}

bool st_plugin_add_rule(st_plugin *p, const st_rule *rule, st_err *err) {
    if (!p || !rule) return st_fail(err, (st_loc){0}, "st_plugin_add_rule needs the plugin handle and a rule");
    st_rule *copy = malloc(sizeof *copy);
    st_rule **rules = realloc(p->lp->rules, (p->lp->nrules + 1) * sizeof *rules);
    if (rules) p->lp->rules = rules;
    if (!copy || !rules) {
        free(copy);
        return st_fail_internal(err, "out of memory");
    }
    *copy = *rule;
    copy->origin = p->lp->path;
    if (!st_registry_add(p->reg, copy, err)) {
        free(copy);
        if (!p->failed) p->first = *err;
        p->failed = true;
        return false;
    }
    p->lp->rules[p->lp->nrules++] = copy;
    return true;
}

/* The module's ABI against this strata's: NULL when they agree, else why not. */
static bool abi_agrees(const st_plugin_abi *abi, const char *path, st_err *err) {
    st_loc at = {path, 0, 0};
    if (abi->version != ST_PLUGIN_ABI)
        return st_fail(err, at, "the plugin was built for plugin ABI %u, and this strata speaks ABI %d: rebuild it against this strata's rewrite/plugin.h (pkg-config --cflags strata)",
                       abi->version, ST_PLUGIN_ABI);
    const struct { const char *what; uint32_t there; size_t here; } sizes[] = {
        {"st_rule", abi->rule_size, sizeof(st_rule)},
        {"st_node", abi->node_size, sizeof(st_node)},
        {"st_err", abi->err_size, sizeof(st_err)},
        {"st_strategy", abi->strategy_size, sizeof(st_strategy)},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (sizes[i].there != sizes[i].here)
            return st_fail(err, at, "the plugin says ABI %d, but was built against other headers (%s is %u bytes there, %zu here): rebuild it against this strata's rewrite/plugin.h",
                           ST_PLUGIN_ABI, sizes[i].what, sizes[i].there, sizes[i].here);
    return true;
}

/* The span of a loaded module's executable segments, found by its path. */
static int code_span(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    loaded_plugin *lp = data;
    if (!info->dlpi_name || strcmp(info->dlpi_name, lp->path)) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!lp->code_hi || lo < lp->code_lo) lp->code_lo = lo;
        if (hi > lp->code_hi) lp->code_hi = hi;
    }
    return 1;
}

bool st_registry_load_plugin(st_registry *r, const char *path, st_err *err) {
    st_loc at = {path, 0, 0};
    if (!path || !*path) return st_fail(err, (st_loc){0}, "--plugin needs the path of a shared module (.so)");
    char abs[PATH_MAX];
    if (!realpath(path, abs)) return st_fail(err, at, "cannot load the plugin: %s", strerror(errno));
    for (size_t i = 0; i < r->nplugins; i++)
        if (!strcmp(r->plugins[i].path, abs))
            return st_fail(err, at, "the plugin is loaded already (--plugin given twice?)");

    loaded_plugin *plugins = realloc(r->plugins, (r->nplugins + 1) * sizeof *plugins);
    if (!plugins) return st_fail_internal(err, "out of memory");
    r->plugins = plugins;
    loaded_plugin lp = {.path = strdup(abs)};
    if (!lp.path) return st_fail_internal(err, "out of memory");

    /* a regular file, checked as every file strata reads is (a FIFO is
     * refused, not waited on, as dlopen would). dlopen takes a path, not
     * the descriptor: loading /proc/self/fd/N instead would be matched by
     * name against a module loaded before through a descriptor of the same
     * number. The path stays open to a swap between the check and the
     * load; a plugin is code you trust, and whoever can replace it there
     * could as well replace it with other code. */
    st_err why_not = {0};
    int fd = st_open_regular(abs, O_RDONLY, NULL, &why_not);
    if (fd < 0) {
        st_fail(err, at, "cannot load the plugin: %s", why_not.message);
        free_plugin(&lp);
        return false;
    }
    close(fd);
    /* RTLD_NOW: a symbol the plugin needs and strata lacks is reported here,
     * not as a crash in the middle of a rewrite */
    dlerror();
    lp.module = dlopen(abs, RTLD_NOW | RTLD_LOCAL);
    if (!lp.module) {
        const char *why = dlerror();
        st_fail(err, at, "cannot load the plugin: %s", why ? why : "dlopen failed");
        free_plugin(&lp);
        return false;
    }
    const st_plugin_abi *abi = dlsym(lp.module, ST_PLUGIN_ABI_SYMBOL);
    st_plugin_register_fn reg_fn;
    *(void **)&reg_fn = dlsym(lp.module, ST_PLUGIN_REGISTER_SYMBOL); /* (an object pointer to a function: POSIX's way) */
    size_t before = r->n;
    bool ok;
    if (!abi || !reg_fn) {
        ok = st_fail(err, at, "not a strata plugin: it has no `%s` symbol (a plugin includes rewrite/plugin.h and has the line ST_PLUGIN(its_register_function); see docs/writing-a-rule.md)",
                     abi ? ST_PLUGIN_REGISTER_SYMBOL : ST_PLUGIN_ABI_SYMBOL);
    } else if ((ok = abi_agrees(abi, path, err))) {
        st_plugin handle = {r, &lp, false, {0}};
        st_err why = {0};
        bool registered = reg_fn(&handle, &why);
        if (handle.failed)
            ok = st_fail(err, at, "the plugin cannot be loaded: %s", handle.first.message);
        else if (!registered)
            ok = st_fail(err, at, "the plugin's registration failed: %s",
                         why.message[0] ? why.message : "its register function returned false without saying why");
        else if (!lp.nrules)
            ok = st_fail(err, at, "the plugin registered no rule (its register function calls st_plugin_add_rule once per rule)");
    }
    if (!ok) {
        r->n = before; /* all or nothing */
        free_plugin(&lp);
        return false;
    }
    dl_iterate_phdr(code_span, &lp);
    r->plugins[r->nplugins++] = lp;
    return true;
}

const char *registry_plugin_of(const st_registry *r, const st_rule *rule) {
    uintptr_t fn = rule->apply ? (uintptr_t)rule->apply : (uintptr_t)rule->expand;
    for (size_t i = 0; r && i < r->nplugins; i++)
        if (rule->origin == r->plugins[i].path || (fn >= r->plugins[i].code_lo && fn < r->plugins[i].code_hi))
            return r->plugins[i].path;
    return NULL;
}

size_t st_registry_plugin_count(const st_registry *r) { return r->nplugins; }
const char *st_registry_plugin_path(const st_registry *r, size_t i) { return i < r->nplugins ? r->plugins[i].path : NULL; }
