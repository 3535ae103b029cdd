/* cli/cli.h — what the commands of the `strata` executable share (defined in
 * cli/main.c): option parsing, error reports, loading a program, showing
 * results. Internal to cli/; the library knows nothing of it. */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H

#include "codegen/codegen.h"
#include "explore/explore.h"
#include "ir/ir.h"
#include "rewrite/rewrite.h"
#include "strategies/strategies.h"

#include <stdio.h>

enum { EXIT_USER = 1, EXIT_INTERNAL = 2 };

/* STRATA_VERSION comes from meson.build's project version (-D on the command line) */

/* ---- options ---- */

typedef struct option {
    const char *name;  /* "--strategy" */
    const char *alias; /* "-s", or NULL */
    const char *value; /* what follows it: "NAME=VALUE"; NULL for a flag */
    bool repeatable;
    const char *help;
} option;

typedef struct command {
    const char *name;
    const char *usage;
    const char *summary;
    const char *details;
    int npositional; /* required positional arguments */
    const option *options;
    int (*run)(const struct command *cmd, int argc, char **argv);
    int max_positional; /* more positionals allowed (merge's DIRs); 0: npositional */
    bool rules;         /* it builds the registry (registry()), which loads the --plugin modules;
                           for the others parse_args loads them, so a bad one is refused by every command */
} command;

enum { MAX_VALUES = 256 };

/* What the command line said: positionals and option values, in order. */
typedef struct args {
    const char *positional[16];
    int npositional;
    const char *opt_name[MAX_VALUES];
    const char *opt_value[MAX_VALUES];
    int nopts;
} args;

/* Load PROG and pick the --entry def. */
typedef struct loaded {
    st_ctx *cx;
    const st_program *program;
    const st_def *def;
    char *source;
} loaded;

typedef struct tracer {
    unsigned count;
} tracer;

/* Pins PoCL's CPU worker threads (POCL_AFFINITY=1) where that is safe; before OpenCL is opened
   (cpu_pinning.c says why and when). */
void pin_cpu_workers(void);
/* What became of PoCL's worker threads, as `strata devices` says it (buf: room for the sentence). */
const char *cpu_pinning_state(char *buf, size_t cap);

int usage_error(const command *cmd, const char *fmt, const char *what);
void print_help(const command *cmd);
/* Parse argv (after the command name): -1 when parsed, else an exit status
 * (0 after --help). */
int parse_args(const command *cmd, int argc, char **argv, args *out);
const char *opt(const args *a, const char *name);
/* The device spec st_cl_open takes, from --backend and --device, as
 * st_backend_spec makes it. */
bool device_option(const args *a, char *buf, size_t cap, const char **spec, st_err *err);
/* The whole number an option gives, within [lo, hi]; *out unchanged when
 * the option is not there. */
bool number_option(const args *a, const char *name, int64_t lo, int64_t hi, int64_t *out, st_err *err);
/* Print an error (with the source line when given); returns the exit status. */
int report(const st_err *err, const char *source);
int load_program(const args *a, bool need_def, loaded *out, st_err *err);
void unload_program(loaded *l);
/* The start of every command that reads PROG: its flags, then the program.
 * Returns -1 to go on, else the exit status. */
int begin(const command *cmd, int argc, char **argv, bool need_def, args *a, loaded *l);
/* Why strategy s did not apply to l's def, as a user should read it. */
st_err not_applied(const st_err *err, const loaded *l, const st_strategy *s);
/* The def's arguments from --input, --size and --seed (arrays not given are
 * generated when a size or a seed is). */
bool gather_inputs(const args *a, const loaded *l, st_arena *arena, const st_value **values,
                   const st_binding **env, size_t *nenv, st_err *err);
/* The leaves of a result as DIR/0.npy, DIR/1.npy, … (paths printed), or
 * shown on standard output when dir is NULL. */
bool write_results(const char *dir, st_arena *arena, const st_value *result, st_err *err);
/* One result, briefly: `0: [1000]f32 = [0.5, 1.25, …, 499.5]`. */
void show(size_t index, const st_value *v);
/* The built-in rules and those of the --plugin modules; NULL after reporting. */
st_registry *registry(const args *a, int *rc);
void first_line(const st_node *n, char *out, size_t cap);
void trace_rule(void *data, int depth, const st_rule *rule, const int64_t *args, const st_node *before,
                const st_node *after);

/* cli/safe_text.c: text from files or the OpenCL driver, as a terminal
 * should see it. safe_text appends text's len bytes to out with every
 * control character (ESC, CR, BEL, …; C1's too), and every byte that is
 * not UTF-8, as `?`; line breaks and tabs are kept when lines is true.
 * Returns the characters appended (a table's width). say is fprintf
 * through it, lines kept: every message of strata that carries such text. */
size_t safe_text(st_buf *out, const char *text, size_t len, bool lines);
void say(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The combinators and patterns of the strategy language, in brief (cli/main.c). */
extern const char strategy_syntax_summary[];
/* cli/rules_markdown.c: every rule of reg as Markdown tables (docs/rules.md). */
void print_rules_markdown(const st_registry *reg);

/* cli/run.c */
extern const option run_options[];
int run_run(const command *cmd, int argc, char **argv);

/* cli/explore.c */
extern const option explore_options[];
int run_explore(const command *cmd, int argc, char **argv);
extern const option merge_options[], export_options[];
int run_merge(const command *cmd, int argc, char **argv);
int run_export(const command *cmd, int argc, char **argv);
/* strata results [DIR] [--json]: what results/index.json lists */
extern const option results_options[];
int run_results(const command *cmd, int argc, char **argv);
/* cli/serve.c: the points asked for on standard input explored into dir,
 * one at a time, answered on standard output (explore --serve). */
bool serve_points(const st_explore_setup *setup, const st_space *space, const char *dir, st_err *err);
/* What results/ files a program under: "prefix_sum", "prog-ENTRY". */
void program_name(const char *path, const char *entry, char *out, size_t cap);

#endif
