/* cli/main.c — the `strata` command: parses flags, calls the library, prints.
 *
 * Exit status: 0 success, 1 a user error (bad program, input, option, or a
 * plugin rule that broke its contract),
 * 2 an internal error (out of memory, a broken invariant). */
#include "build_id.h"
#include "cli.h"
#include "fatal.h"

#include <errno.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int usage_error(const command *cmd, const char *fmt, const char *what) {
    fprintf(stderr, "strata%s%s: error: ", cmd ? " " : "", cmd ? cmd->name : "");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\nRun `strata %s%s--help` for usage.\n", cmd ? cmd->name : "", cmd ? " " : "");
    return EXIT_USER;
}

/* Every command takes --plugin: rules from a shared module (rewrite/plugin.h). */
static const option plugin_option = {"--plugin", NULL, "PATH.so", true,
                                     "load rewrite rules from a plugin (repeatable; docs/writing-a-rule.md)"};

/* What the backends say of themselves, for a help text's {NAME}, into b;
 * false for a NAME that is none of these. */
static bool backend_help(st_buf *b, const char *name, size_t len) {
    size_t n;
    const st_backend *const *backends = st_backends(&n);
#define IS(word) (len == sizeof word - 1 && !strncmp(name, word, len))
    if (!IS("backends") && !IS("backend-runs") && !IS("backend-lists") && !IS("kernel-files") && !IS("about-run") &&
        !IS("about-devices"))
        return false;
    for (size_t i = 0; i < n; i++) {
        const st_backend *k = backends[i];
        if (IS("backends")) {
            st_buf_printf(b, "%s%s", i ? "|" : "", k->name);
        } else if (IS("backend-runs")) {
            st_buf_printf(b, "%s%s", i ? ", or " : "", k->name);
            st_buf_printf(b, "%s%s", i ? ": " : " (default)", i && k->runs ? k->runs : "");
        } else if (IS("backend-lists")) {
            st_buf_printf(b, "%s%s%s: %s", i ? "; " : "", k->name, i ? "" : " (default)", k->lists);
        } else if (IS("kernel-files")) {
            st_buf_printf(b, "%s%s", i ? ", " : "", k->kernel_file);
        } else if (IS("about-run") && k->about_run) {
            st_buf_printf(b, "\n%s", k->about_run);
        } else if (IS("about-devices") && k->about_devices) {
            st_buf_printf(b, "%s%s", b->len ? "\n" : "", k->about_devices);
        }
    }
#undef IS
    return true;
}

/* text into b (emptied first), each {NAME} in it replaced by what the
 * backends say: the commands' texts never name a backend themselves. */
static const char *help_text(st_buf *b, const char *text) {
    b->len = 0;
    st_buf_puts(b, "");
    for (const char *p = text; *p;) {
        const char *open = strchr(p, '{'), *close = open ? strchr(open, '}') : NULL;
        if (!close) {
            st_buf_puts(b, p);
            break;
        }
        st_buf_put(b, p, (size_t)(open - p));
        st_buf said = {0};
        if (backend_help(&said, open + 1, (size_t)(close - open - 1)))
            st_buf_puts(b, said.data ? said.data : "");
        else
            st_buf_put(b, open, (size_t)(close + 1 - open));
        st_buf_free(&said);
        p = close + 1;
    }
    return b->data ? b->data : "";
}

void print_help(const command *cmd) {
    st_buf b = {0};
    printf("usage: strata %s\n\n%s\n", help_text(&b, cmd->usage), cmd->summary);
    if (cmd->details && *help_text(&b, cmd->details)) printf("\n%s\n", b.data);
    if (cmd->options[0].name) printf("\noptions:\n");
    for (const option *o = cmd->options; o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
                 o->value ? " " : "", o->value ? o->value : "");
        printf("  %-24s %s\n", left, help_text(&b, o->help));
    }
    st_buf_free(&b);
    if (!cmd->options[0].name) printf("\noptions:\n");
    printf("  %-24s %s\n", "--plugin PATH.so", plugin_option.help);
    printf("  %-24s %s\n", "--help", "show this help");
}

/* Parse argv (after the command name). Returns -1 when parsed, else an exit
 * status (0 after --help). */
int parse_args(const command *cmd, int argc, char **argv, args *out) {
    memset(out, 0, sizeof *out);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_help(cmd);
            return 0;
        }
        if (a[0] == '-' && a[1]) {
            const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
            size_t len = eq ? (size_t)(eq - a) : strlen(a);
            const option *o = cmd->options;
            while (o->name && (strlen(o->name) != len || strncmp(o->name, a, len)) && !(o->alias && !strcmp(o->alias, a))) o++;
            if (!o->name && strlen(plugin_option.name) == len && !strncmp(a, plugin_option.name, len)) o = &plugin_option;
            if (!o->name) return usage_error(cmd, "unknown option `%s`", a);
            const char *value = NULL;
            if (o->value) {
                if (eq) value = eq + 1;
                else if (i + 1 < argc) value = argv[++i];
                else return usage_error(cmd, "`%s` needs a value", o->name);
            } else if (eq) {
                return usage_error(cmd, "`%s` takes no value", o->name);
            }
            if (!o->repeatable)
                for (int k = 0; k < out->nopts; k++)
                    if (out->opt_name[k] == o->name) return usage_error(cmd, "`%s` is given twice", o->name);
            if (out->nopts == MAX_VALUES) return usage_error(cmd, "too many options (at most %s)", "256");
            out->opt_name[out->nopts] = o->name;
            out->opt_value[out->nopts++] = value ? value : "";
            continue;
        }
        if (out->npositional == (cmd->max_positional ? cmd->max_positional : cmd->npositional))
            return usage_error(cmd, "unexpected argument `%s`", a);
        out->positional[out->npositional++] = a;
    }
    if (out->npositional < cmd->npositional)
        return usage_error(cmd, "missing the %s", cmd->npositional == 1 ? "program file (PROG)" : "arguments");
    /* every command loads its plugins, once, so a bad one is reported whatever the command */
    if (!cmd->rules && opt(out, "--plugin")) {
        int rc = 0;
        st_registry *reg = registry(out, &rc);
        if (!reg) return rc;
        st_registry_free(reg);
    }
    return -1;
}

/* A whole number from an option, within [lo, hi]. */
bool number_option(const args *a, const char *name, int64_t lo, int64_t hi, int64_t *out, st_err *err) {
    const char *text = opt(a, name);
    if (!text) return true;
    st_scalar s;
    if (!st_scalar_parse(ST_I64, text, name, &s, err)) return false;
    if (s.i64 < lo || s.i64 > hi)
        return st_fail(err, (st_loc){0}, "%s must be from %lld to %lld, not %lld", name, (long long)lo, (long long)hi,
                       (long long)s.i64);
    *out = s.i64;
    return true;
}

/* The backends' names into b, between them sep, before the last last. */
static void backend_names(st_buf *b, const char *sep, const char *last) {
    size_t n;
    const st_backend *const *backends = st_backends(&n);
    for (size_t i = 0; i < n; i++) st_buf_printf(b, "%s%s", i == 0 ? "" : i + 1 == n ? last : sep, backends[i]->name);
}

/* --backend: the backend it names (the default without it); NULL with an
 * error for a name no backend has. */
static const st_backend *backend_option(const args *a, st_err *err) {
    const char *name = opt(a, "--backend");
    const st_backend *b = name ? st_backend_named(name) : st_backends(NULL)[0];
    if (!b) {
        st_buf names = {0};
        backend_names(&names, ", ", " or ");
        st_fail(err, (st_loc){0}, "--backend is %s, not `%s`", names.data ? names.data : "", name);
        st_buf_free(&names);
    }
    return b;
}

bool device_option(const args *a, char *buf, size_t cap, const char **spec, st_err *err) {
    const char *device = opt(a, "--device");
    if (device && !device[0])
        return st_fail(err, (st_loc){0}, "--device needs an index or part of a device's name (`strata devices` lists them)");
    const st_backend *b = backend_option(a, err);
    if (!b) return false;
    *spec = st_backend_spec(b, device, buf, cap);
    return true;
}

const char *opt(const args *a, const char *name) {
    for (int i = 0; i < a->nopts; i++)
        if (!strcmp(a->opt_name[i], name)) return a->opt_value[i];
    return NULL;
}

/* ---- errors ---- */

int report(const st_err *err, const char *source) {
    st_buf b = {0};
    st_err_format(err, source, source ? strlen(source) : 0, &b);
    /* a message carries what files and the driver said (a build log, a
     * record's field): made safe for the terminal */
    say(stderr, "%s", b.data ? b.data : "error\n");
    st_buf_free(&b);
    return err->kind == ST_ERR_INTERNAL ? EXIT_INTERNAL : EXIT_USER;
}

int load_program(const args *a, bool need_def, loaded *out, st_err *err) {
    memset(out, 0, sizeof *out);
    out->cx = st_ctx_new();
    if (!out->cx) return st_fail_internal(err, "out of memory"), report(err, NULL);
    out->program = st_load_program(out->cx, a->positional[0], &out->source, err);
    if (!out->program) return report(err, out->source);
    if (need_def || opt(a, "--entry")) {
        out->def = st_program_entry(out->program, opt(a, "--entry"), err);
        if (!out->def) return report(err, NULL);
    }
    return 0;
}

void unload_program(loaded *l) {
    free(l->source);
    st_ctx_free(l->cx);
}

/* ---- check and print ---- */

static const option program_options[] = {
    {"--entry", NULL, "NAME", false, "the def to use (default: main, or the only def)"},
    {0}};

/* The start of every command that reads PROG: its flags, then the program.
 * Returns -1 to go on, else the exit status. */
int begin(const command *cmd, int argc, char **argv, bool need_def, args *a, loaded *l) {
    memset(l, 0, sizeof *l);
    int rc = parse_args(cmd, argc, argv, a);
    if (rc >= 0) return rc;
    st_err err = {0};
    if ((rc = load_program(a, need_def, l, &err))) {
        unload_program(l);
        return rc;
    }
    return -1;
}

static int run_check(const command *cmd, int argc, char **argv) {
    args a;
    loaded l;
    int rc = begin(cmd, argc, argv, false, &a, &l);
    if (rc >= 0) return rc;
    for (uint32_t i = 0; i < l.program->ndefs; i++) {
        const st_def *d = &l.program->defs[i];
        if (l.def && l.def != d) continue;
        st_buf b = {0};
        st_print_signature(d, &b);
        printf("%s\n", b.data ? b.data : "");
        st_buf_free(&b);
    }
    unload_program(&l);
    return 0;
}

static int run_print(const command *cmd, int argc, char **argv) {
    args a;
    loaded l;
    int rc = begin(cmd, argc, argv, false, &a, &l);
    if (rc >= 0) return rc;
    st_buf b = {0};
    if (l.def) st_print_def(l.def, &b);
    else st_print_program(l.program, &b);
    fputs(b.data ? b.data : "", stdout);
    st_buf_free(&b);
    unload_program(&l);
    return 0;
}

/* ---- eval ---- */

static const option eval_options[] = {
    {"--input", NULL, "NAME=VALUE", true, "a parameter: a .npy file for an array, a number for a scalar"},
    {"--size", NULL, "N=VALUE", true, "a size; arrays not given as --input are generated at random"},
    {"--seed", NULL, "S", false, "the seed of generated arrays (default 1)"},
    {"--output", NULL, "DIR", false, "write the results as DIR/0.npy, DIR/1.npy, …"},
    {"--entry", NULL, "NAME", false, "the def to run (default: main, or the only def)"},
    {0}};


st_err not_applied(const st_err *err, const loaded *l, const st_strategy *s) {
    st_err shown = *err;
    if (err->kind == ST_ERR_USER)
        st_fail(&shown, err->loc.line > 0 ? err->loc : (st_loc){l->program->file, 0, 0}, /* at the node refused */
                "the strategy does not apply to `%s`: %s%s", l->def->name,
                err->message,
                err->mismatch && s->kind == ST_S_RULE
                    ? "\n  (a rule applies where the strategy starts, at the whole body; to reach inside it, "
                      "write first(scan, …), each(scan, …) or topdown(…))"
                    : "");
    return shown;
}

bool gather_inputs(const args *a, const loaded *l, st_arena *arena, const st_value **values,
                   const st_binding **env, size_t *nenv, st_err *err) {
    st_inputs *in = st_inputs_new(l->cx, l->def, arena);
    if (!in) return st_fail_internal(err, "out of memory");
    bool generate = false;
    for (int i = 0; i < a->nopts; i++) {
        bool size = !strcmp(a->opt_name[i], "--size");
        if (!size && strcmp(a->opt_name[i], "--input")) continue;
        generate |= size;
        if (!st_inputs_set(in, a->opt_value[i], err)) return false;
    }
    uint64_t seed = 1;
    if (opt(a, "--seed")) {
        st_scalar s;
        if (!st_scalar_parse(ST_U64, opt(a, "--seed"), "--seed", &s, err)) return false;
        seed = s.u64;
        generate = true;
    }
    if (generate && !st_inputs_generate(in, seed, err)) return false;
    return st_inputs_finish(in, values, env, nenv, err);
}

bool write_results(const char *dir, st_arena *arena, const st_value *result, st_err *err) {
    size_t nleaves = st_value_leaves(result, NULL, 0);
    st_value *leaves = st_arena_alloc(arena, (nleaves + 1) * sizeof *leaves);
    if (!leaves) return st_fail_internal(err, "out of memory");
    st_value_leaves(result, leaves, nleaves);
    if (dir && !st_make_dirs(dir, err)) return false;
    for (size_t i = 0; i < nleaves; i++) {
        if (!dir) {
            show(i, &leaves[i]);
            continue;
        }
        char path[4200];
        snprintf(path, sizeof path, "%s/%zu.npy", dir, i);
        if (!st_npy_write(path, &leaves[i], err)) return false;
        printf("%s\n", path);
    }
    return true;
}

/* One result, briefly: `0: [1000]f32 = [0.5, 1.25, …, 499.5]`. */
void show(size_t index, const st_value *v) {
    st_buf b = {0};
    st_buf_printf(&b, "%zu: ", index);
    if (v->kind == ST_VALUE_SCALAR) {
        st_buf_printf(&b, "%s = ", st_scalar_name(v->scalar));
        st_scalar_format(v->scalar, v->u.s, &b);
    } else {
        int64_t count = 1;
        for (uint32_t i = 0; i < v->n; i++) {
            st_buf_printf(&b, "[%lld]", (long long)v->u.a.dims[i]);
            count *= v->u.a.dims[i];
        }
        st_buf_printf(&b, "%s = [", st_scalar_name(v->scalar));
        size_t size = st_scalar_size(v->scalar);
        for (int64_t i = 0; i < count; i++) {
            if (count > 10 && i == 8) {
                st_buf_puts(&b, "…, ");
                i = count - 2;
            }
            st_scalar s = {.bits = 0};
            memcpy(&s, (const char *)v->u.a.data + (size_t)i * size, size);
            if (v->scalar == ST_BOOL) s.b = *((const unsigned char *)v->u.a.data + i) != 0;
            st_scalar_format(v->scalar, s, &b);
            if (i + 1 < count) st_buf_puts(&b, ", ");
        }
        st_buf_puts(&b, "]");
    }
    printf("%s\n", b.data ? b.data : "");
    st_buf_free(&b);
}

static int run_eval(const command *cmd, int argc, char **argv) {
    args a;
    loaded l;
    int rc = begin(cmd, argc, argv, true, &a, &l);
    if (rc >= 0) return rc;
    st_err err = {0};
    st_arena *arena = st_arena_new();
    const st_value *values;
    const st_binding *env;
    size_t nenv;
    if (!arena) {
        st_fail_internal(&err, "out of memory");
        goto fail;
    }
    if (!gather_inputs(&a, &l, arena, &values, &env, &nenv, &err)) goto fail;
    st_value result;
    /* STRATA_INTERP_GENERIC=1: the interpreter without its compiled fast
     * path, to compare the two (docs/architecture.md) */
    const char *generic = getenv("STRATA_INTERP_GENERIC");
    st_eval_options eo = {.generic = generic && *generic && strcmp(generic, "0") != 0};
    if (!st_eval_with(l.cx, l.def, values, env, nenv, arena, &eo, &result, &err)) goto fail;
    if (!write_results(opt(&a, "--output"), arena, &result, &err)) goto fail;
    st_arena_free(arena);
    unload_program(&l);
    return 0;
fail:
    rc = report(&err, l.program && st_err_in(&err, l.program->file) ? l.source : NULL);
    st_arena_free(arena);
    unload_program(&l);
    return rc;
}

/* ---- rewrite and strategies ---- */

static const option rewrite_options[] = {
    {"--strategy", "-s", "STRATEGY", false, "the strategy to apply, e.g. 'parallel-scan(BS=256, BF=2, SE=4)'"},
    {"--trace", NULL, NULL, false, "show each rule that fired and what it rewrote, on standard error"},
    {"--entry", NULL, "NAME", false, "the def to rewrite (default: main, or the only def)"},
    {0}};

/* The built-in rules and those of the --plugin modules; NULL after reporting. */
st_registry *registry(const args *a, int *rc) {
    st_err err = {0};
    st_registry *reg = st_registry_new();
    if (!reg || !st_register_builtin_rules(reg, &err)) {
        if (!reg) st_fail_internal(&err, "out of memory");
        err.kind = ST_ERR_INTERNAL;
        *rc = report(&err, NULL);
        st_registry_free(reg);
        return NULL;
    }
    for (int i = 0; i < a->nopts; i++) {
        if (strcmp(a->opt_name[i], "--plugin")) continue;
        fatal_guard guard; /* a plugin that crashes while it loads is named */
        fatal_guard_begin(&guard, a->opt_value[i]);
        bool loaded = st_registry_load_plugin(reg, a->opt_value[i], &err);
        fatal_guard_end(&guard);
        if (!loaded) {
            *rc = report(&err, NULL);
            st_registry_free(reg);
            return NULL;
        }
    }
    return reg;
}

/* The first line of a printed node, cut to fit a trace line. */
void first_line(const st_node *n, char *out, size_t cap) {
    st_buf b = {0};
    st_print_node(n, &b);
    const char *text = b.data ? b.data : "";
    size_t len = strcspn(text, "\n");
    bool cut = len > cap - 4 || text[len];
    snprintf(out, cap, "%.*s%s", (int)(len > cap - 4 ? cap - 4 : len), text, cut ? " …" : "");
    st_buf_free(&b);
}

void trace_rule(void *data, int depth, const st_rule *rule, const int64_t *args, const st_node *before,
                       const st_node *after) {
    tracer *t = data;
    (void)after;
    st_buf name = {0};
    for (int i = 0; i < depth && i < 8; i++) st_buf_puts(&name, "  ");
    st_buf_puts(&name, rule->name);
    bool first = true;
    for (uint32_t i = 0; i < rule->nparams; i++) {
        if (args[i] == ST_PARAM_UNSET) continue;
        st_buf_printf(&name, "%s%s=", first ? "(" : ", ", rule->params[i].name);
        st_param_print(&rule->params[i], args[i], &name);
        first = false;
    }
    if (!first) st_buf_puts(&name, ")");
    char at[100];
    first_line(before, at, sizeof at);
    fprintf(stderr, "%3u  %-44s at  %s\n", ++t->count, name.data ? name.data : rule->name, at);
    st_buf_free(&name);
}

static int run_rewrite(const command *cmd, int argc, char **argv) {
    args a;
    loaded l;
    int rc = begin(cmd, argc, argv, true, &a, &l);
    if (rc >= 0) return rc;
    const char *text = opt(&a, "--strategy");
    if (!text) {
        unload_program(&l);
        return usage_error(cmd, "%s", "give the strategy with -s STRATEGY (`strata strategies` lists the rules)");
    }
    st_registry *reg = registry(&a, &rc);
    if (!reg) return unload_program(&l), rc;
    st_err err = {0};
    st_rw *rw = NULL;
    const st_strategy *s = st_strategy_parse(l.cx, reg, "strategy", text, &err);
    if (!s) {
        rc = report(&err, text);
        goto done;
    }
    rw = st_rw_new(l.cx, reg);
    tracer t = {0};
    if (!rw) {
        rc = report((st_fail_internal(&err, "out of memory"), &err), NULL);
        goto done;
    }
    if (opt(&a, "--trace")) st_rw_set_trace(rw, trace_rule, &t);
    const st_def *now = st_rewrite_def(rw, s, l.def, &err);
    if (!now) {
        st_err shown = not_applied(&err, &l, s);
        rc = report(&shown, NULL);
        goto done;
    }
    st_buf out = {0};
    st_print_program(st_program_replace(l.cx, l.program, l.def, now), &out);
    /* the contract: what rewrite prints parses and checks again */
    st_err again = {0};
    if (!st_parse_program(l.cx, "rewritten", out.data ? out.data : "", out.len, &again)) {
        st_fail_internal(&err, "the rewritten program does not parse back (%d:%d: %s); this is a bug in strata",
                         again.loc.line, again.loc.col, again.message);
        st_buf_free(&out);
        rc = report(&err, NULL);
        goto done;
    }
    fputs(out.data ? out.data : "", stdout);
    st_buf_free(&out);
    rc = 0;
done:
    st_rw_free(rw);
    st_registry_free(reg);
    unload_program(&l);
    return rc;
}

static const option devices_options[] = {
    {"--backend", NULL, "B", false, "{backend-lists}"},
    {0}};

static const option strategies_options[] = {
    {"--default", NULL, "cpu|gpu", false,
     "print the strategy `strata run` applies on that type of device when no export exists for it, "
     "and nothing else (so that `-s \"$(strata strategies --default gpu)\"` applies the GPU's on any machine)"},
    {"--markdown", NULL, NULL, false,
     "the rules as Markdown tables (what docs/rules.md is; with --plugin, the plugins' rules too)"},
    {0}};

const char strategy_syntax_summary[] =
    "combinators: s1 ; s2   s1 <+ s2   try(s)   repeat(s)   iterate(n, s)   first(pattern, s)\n"
    "             each(pattern, s)   topdown(s)   bottomup(s)   all(s)   one(s)   normalize(s)   id   fail\n"
    "patterns:    a primitive's name (scan, map, reduce, …), let, lambda, any\n";

static int run_strategies(const command *cmd, int argc, char **argv) {
    args a;
    int rc = parse_args(cmd, argc, argv, &a);
    if (rc >= 0) return rc;
    const char *type = opt(&a, "--default");
    if (type) {
        if (strcasecmp(type, "cpu") && strcasecmp(type, "gpu"))
            return usage_error(cmd, "--default is cpu or gpu, not `%s`", type);
        printf("%s\n", st_default_strategy(strcasecmp(type, "cpu") ? "GPU" : "CPU"));
        return 0;
    }
    st_registry *reg = registry(&a, &rc);
    if (!reg) return rc;
    if (opt(&a, "--markdown")) {
        print_rules_markdown(reg);
        st_registry_free(reg);
        return 0;
    }
    for (size_t i = 0; i < st_registry_count(reg); i++) {
        const st_rule *r = st_registry_at(reg, i);
        printf("%s", r->name);
        for (uint32_t k = 0; k < r->nparams; k++) printf("%s%s", k ? ", " : "(", r->params[k].name);
        printf("%s    [%s]\n    %s\n", r->nparams ? ")" : "", r->origin ? r->origin : "built-in", r->summary);
        for (uint32_t k = 0; k < r->nparams; k++) {
            const st_param *p = &r->params[k];
            printf("    %-4s %s; ", p->name, p->doc ? p->doc : "");
            if (st_param_nnames(p))
                for (uint32_t j = 0; j < st_param_nnames(p); j++) printf("%s%s", j ? " | " : "", p->names[j]);
            else
                printf("%lld to %lld", (long long)p->min, (long long)p->max);
            if (p->has_default) {
                st_buf d = {0};
                st_param_print(p, p->def, &d);
                printf(", default %s", d.data ? d.data : "");
                st_buf_free(&d);
            }
            if (p->optional) printf(", optional");
            printf("\n");
        }
        printf("    when: %s\n\n", r->conditions ? r->conditions : "always");
    }
    fputs(strategy_syntax_summary, stdout);
    st_registry_free(reg);
    return 0;
}

/* ---- devices ---- */

static int run_devices(const command *cmd, int argc, char **argv) {
    args a;
    int rc = parse_args(cmd, argc, argv, &a);
    if (rc >= 0) return rc;
    st_err err = {0};
    st_device_info *list;
    size_t n;
    const st_backend *b = backend_option(&a, &err);
    if (!b || !st_backend_devices(b, &list, &n, &err)) return report(&err, NULL);
    uint32_t platform = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        const st_device_info *d = &list[i];
        if (d->platform_index != platform) {
            platform = d->platform_index;
            say(stdout, "platform %u: %s (%s)\n", platform, d->platform, d->platform_version);
        }
        /* (the driver's words) */
        say(stdout, "  device %u: %s [%s]\n", d->index, d->name, d->type);
        say(stdout, "    %s, driver %s; %u compute units, %.1f GiB global, %llu KiB local memory, work-groups up to %zu\n",
               d->version, d->driver, d->compute_units, (double)d->global_mem_bytes / (1024.0 * 1024 * 1024),
               (unsigned long long)(d->local_mem_bytes / 1024), d->max_work_group);
        if (strstr(d->platform, "Portable Computing Language") && !strcmp(d->type, "CPU")) {
            char buf[96];
            printf("    PoCL's worker threads: %s\n", cpu_pinning_state(buf, sizeof buf));
        }
    }
    free(list);
    return 0;
}

/* ---- dispatch ---- */

static const command commands[] = {
    {"check", "check PROG [--entry NAME]", "Type-check PROG and print the signature of each def.",
     "Errors are printed as FILE:LINE:COL: error: MESSAGE with the line and a caret; the exit status is then 1.",
     1, program_options, run_check, 0, false},
    {"print", "print PROG [--entry NAME]", "Print PROG in the surface syntax, as strata reads it.",
     "The output parses back to the same program: every step of a rewrite can be shown and fed back in.",
     1, program_options, run_print, 0, false},
    {"eval", "eval PROG [--input NAME=VALUE]… [--size N=VALUE]… [--output DIR]",
     "Run PROG on the reference interpreter.",
     "Array parameters are .npy files (--input xs=a.npy), scalars are numbers (--input H=4096).\n"
     "With --size N=1000 (or --seed), arrays not given are generated at random.\n"
     "Results go to DIR/0.npy, DIR/1.npy, … (one per array of the result; a tuple is several),\n"
     "or are summarised on standard output without --output.",
     1, eval_options, run_eval, 0, false},
    {"rewrite", "rewrite PROG -s STRATEGY [--trace] [--entry NAME]",
     "Apply a rewrite strategy and print the rewritten program.",
     "The strategy composes rules (`strata strategies` lists them) with ; <+ try repeat iterate\n"
     "first each topdown bottomup all one normalize, e.g.\n"
     "  strata rewrite prog.strata -s 'parallel-scan(BS=256, BF=2, SE=4)'\n"
     "  strata rewrite prog.strata -s 'scan-then-propagate(BS=512) ; first(scan, brent-kung(BF=2, TD=5))'\n"
     "The output parses again. A strategy that does not apply is an error (exit 1) that says why.",
     1, rewrite_options, run_rewrite, 0, true},
    {"run", "run PROG [-s STRATEGY] [--input NAME=VALUE]… [--size N=VALUE]… [--seed S] [--output DIR]\n"
            "                  [--device D] [--backend {backends}] [--check] [--time [--runs K]] [--emit DIR] [--entry NAME]",
     "Rewrite, lower and generate OpenCL for PROG, and run it on a device.",
     "The strategy (if any) is applied first, then the default lowering (lower-opencl), which maps what\n"
     "is left to work-groups, work-items and sequential loops; a strategy may do its own lowering.\n"
     "Inputs are given as for `strata eval`. --check compares with the interpreter, --time measures the\n"
     "kernels by profiling events, --emit DIR writes the lowered program, {kernel-files} and host.c.\n"
     "The default device is the first GPU, else the first device (`strata devices` lists them).{about-run}",
     1, run_options, run_run, 0, true},
    {"explore", "explore PROG --space SPACE --out DIR [--size N=VALUE]… [--input NAME=VALUE]… [--seed S]\n"
                "                  [--device D] [--backend {backends}] [--runs K] [--timeout S] [--jobs J] [--shard I/N]\n"
                "                  [--cache DIR] [--serve]",
     "Build, check and time every point of a space of strategies for PROG on a device.",
     "A space is a strategy whose arguments may be ranges, with constraints after `where`:\n"
     "  parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2]) where BS % BF == 0\n"
     "Ranges: [1, 2, 4] lists, [a..b] and [a..b step k], [a..b powK] (the powers of K between a and b).\n"
     "Variants are built (with a build cache) and run once in parallel, each in a process of its own, and\n"
     "compared with the interpreter (integers exactly, floats within a bound that scales with the magnitude\n"
     "of what they were computed from, docs/checking.md; with a guard region after every output); then\n"
     "each correct one is timed alone by profiling events: 2 warm-up runs, then --runs.\n"
     "Every point gets a status: ok, constraint, rule_error (a plugin's rule broke its contract there),\n"
     "build_error, launch_error, wrong_answer, timeout, crash.\n"
     "DIR gets explore.json, program.strata, results.jsonl (one line per point, appended as each ends:\n"
     "run the same command again to resume), results.csv and results.svg (GB/s over the space). DIR is\n"
     "locked while strata explores it (explore.lock): a second strata into it is refused, naming the first.\n"
     "With --serve, only the points asked for on standard input are explored, one at a time, into the same\n"
     "DIR: the autotuner's way (explore/autotune.py, run as ./dev.sh autotune). strata first writes\n"
     "{\"strata_serve\": 1, \"device\": …, \"points\": N, \"dims\": [{\"name\": …, \"values\": […]}, …]}; then each\n"
     "line in, {\"point\": P} (its record if it has one) or {\"point\": P, \"again\": true} (measured again),\n"
     "gets one line out, flushed: {\"recorded\": true|false, \"record\": {…}} or {\"error\": …}. A client names\n"
     "points only: statuses and times are strata's, and a point whose strata died is recorded as crash by\n"
     "the next --serve on DIR. Points are numbered over the dimensions, the last fastest. At the end of the\n"
     "input it writes results.csv and results.svg.",
     1, explore_options, run_explore, 0, true},
    {"merge", "merge DIR… --out DIR",
     "Merge explorations of one space (its shards, say) into one directory.",
     "Each DIR is an exploration of the same program, entry, space, inputs, seed and device, typically\n"
     "one shard of a cluster job each (strata explore … --shard I/N --out DIR_I). The merged directory\n"
     "has every point once, results.csv and results.svg, and can be exported. Where explorations disagree\n"
     "about a point (ok in one, wrong_answer in another) the failure is kept, with a warning; records of\n"
     "points outside the space are dropped, with a warning. An --out holding another exploration is refused;\n"
     "one holding this exploration keeps its records.",
     1, merge_options, run_merge, 16, false},
    {"export", "export DIR [--into results] [--top K]",
     "Measure the best variants of an exploration again and export the fastest.",
     "Writes results/<device>/<program>/ (kernels.cl, host.c, program.strata: the lowered program,\n"
     "record.json: device, driver, inputs, strategy, parameters, figures, SHA-256 of the kernels) and\n"
     "adds it to results/index.json, where `strata run` without -s finds it: for this device, else a\n"
     "device of the same vendor and type, else of any device of its type. Run it on the machine that explored.",
     1, export_options, run_export, 0, true},
    {"results", "results [DIR] [--json]", "List the exported variants in DIR (default: results).",
     "One row per device and program of DIR/index.json: the device's folder, the program, its median ms\n"
     "and GB/s when exported, the date of its record (? where record.json is missing) and the variant.\n"
     "--json writes {\"strata_results\": 1, \"into\": DIR, \"exports\": [{\"device\", \"name\", \"vendor\", \"type\",\n"
     "\"program\", \"strategy\", \"path\", \"exported_at\", \"median_ms\", \"gb_per_s\"}, …]} instead.",
     0, results_options, run_results, 1, false},
    {"strategies", "strategies [--default cpu|gpu] [--markdown]", "List the rewrite rules, their parameters and conditions.", NULL, 0,
     strategies_options,
     run_strategies, 0, true},
    {"devices", "devices [--backend {backends}]", "List the OpenCL platforms and devices.", "{about-devices}",
     0, devices_options, run_devices, 0, false},
};

static void print_overview(FILE *f) {
    fprintf(f, "strata %s: a rewrite-rule optimiser for data-parallel programs\n\n"
               "usage: strata COMMAND [ARGS]\n\ncommands:\n", STRATA_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`strata COMMAND --help` tells more.\n");
}

/* The command named by argv[1], run; its exit status. */
static int run_command(int argc, char **argv) {
    if (argc < 2) {
        print_overview(stderr);
        return EXIT_USER;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        if (argc > 2)
            for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
                if (!strcmp(commands[i].name, argv[2])) return print_help(&commands[i]), 0;
        print_overview(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        printf("strata %s (build %s)\n", STRATA_VERSION, STRATA_BUILD); /* the build: explore.json's "strata" */
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(commands[i].name, name)) return commands[i].run(&commands[i], argc - 2, argv + 2);
    const char *names[sizeof commands / sizeof *commands];
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) names[i] = commands[i].name;
    const char *close[1];
    if (st_closest_names(name, names, (int)(sizeof names / sizeof *names), close, 1))
        fprintf(stderr, "strata: error: unknown command `%s`; did you mean `%s`?\n", name, close[0]);
    else
        fprintf(stderr, "strata: error: unknown command `%s`\n", name);
    fprintf(stderr, "Run `strata --help` for the list of commands.\n");
    return EXIT_USER;
}

/* Standard output flushed and closed, once, for every command: a full disk
 * or a closed pipe under `strata print … > FILE` is an error, not exit 0
 * with a cut file. (The files the commands write themselves are checked
 * where they are closed.) */
static int close_stdout(int rc) {
    errno = 0;
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    int why = errno;
    if (failed && !why) {
        /* the write that failed came earlier, while the command printed, and
         * its errno is gone: a write of one more byte says why again (the
         * output is cut anyway) */
        clearerr(stdout);
        if (fputc('\n', stdout) == EOF || fflush(stdout) != 0) why = errno;
    }
    if (fclose(stdout) != 0 && !failed) failed = true, why = errno;
    if (!failed) return rc;
    fprintf(stderr, "strata: error: writing standard output: %s\n", why ? strerror(why) : "an I/O error");
    return rc ? rc : EXIT_USER;
}

/* A CPU's OpenCL (PoCL) allocates a buffer in the process's own memory. glibc
 * maps one above 32 MiB afresh and unmaps it when it is released, so every
 * run of a program with large intermediates (a scan's block scans, a sort's
 * second buffer) paid the kernel's page faults and zeroing of them inside its
 * first kernel, run after run: much of [Pizzuti et al. 2022]'s space's time
 * on PoCL (docs/performance.md), which a program that keeps its buffers never pays. Served from the
 * heap and kept there, the next run reuses the pages. The process keeps
 * its largest footprint until it exits. */
static void keep_released_memory(void) {
#if defined(M_MMAP_MAX) && defined(M_TRIM_THRESHOLD)
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

int main(int argc, char **argv) {
    keep_released_memory();
    pin_cpu_workers();
    return close_stdout(run_command(argc, argv));
}
