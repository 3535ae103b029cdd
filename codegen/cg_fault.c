/* codegen/cg_fault.c — what a kernel finds wrong, and how the glue says it.
 *
 * A kernel cannot stop a run or print: what goes wrong on the device (an
 * index out of range, an integer divided by zero, or a fault of a
 * kernel-making primitive's own, which its descriptor reports) is recorded
 * in three words of one global buffer per program, the faults, and the
 * glue reads them once, after the last launch (a wait between launches
 * would count in a run's time; a kernel after a fault reads element 0 for
 * the bad index, or arrays of its own, and nothing outside them):
 *
 *   faults[0]  the site (1 + its index in g->sites), 0 while nothing went wrong
 *   faults[1]  the low 32 bits of a value the site reports (the index, the group)
 *   faults[2]  its high 32 bits
 *
 * The first site to record wins (an atomic compare-and-swap on word 0), so
 * the value is that site's. The glue zeroes the words when it allocates
 * them, at the start of each run, and returns the first fault's message.
 *
 * Sites know their messages in full (the index's array length is a size
 * over the program's scalars, which the glue has too), so the kernels carry
 * only numbers: their text does not depend on where the program was read. */
#include "cg.h"

#include <stdio.h>
#include <string.h>

static const char *const prelude =
    "/* the first thing a run found wrong: its site, and a value in two words (cg_fault.c) */\n"
    "static inline void st_fault(volatile __global int *faults, int site, long value) {\n"
    "    if (atomic_cmpxchg(faults, 0, site) == 0) {\n"
    "        faults[1] = (int)value;\n"
    "        faults[2] = (int)(value >> 32);\n"
    "    }\n"
    "}\n";

const char *cg_fault_prelude(const cg *g) { return g->faults ? prelude : ""; }

/* The faults' buffer, made on first use, as the current kernel's argument. */
static const char *faults_of(cg *g) {
    if (!g->faults) {
        g->faults = cg_host_temp(g, st_type_array(g->cx, st_size_const(g->cx, 3), st_type_scalar(g->cx, ST_I32)),
                                 "faults");
        if (!g->faults) return "0";
    }
    cg_use_buffer(g, g->faults->mem.buffer, true);
    return g->faults->mem.base;
}

static int new_site(cg *g, cg_fault_site site) {
    for (uint32_t i = 0; site.kind == CG_FAULT_ALGORITHM && i < g->nsites; i++) /* one a kernel */
        if (g->sites[i].kind == site.kind && g->sites[i].alg == site.alg && g->sites[i].kernel == g->k)
            return (int)i + 1;
    if (!cg_grow(g, (void **)&g->sites, g->nsites, &g->capsites, sizeof *g->sites)) return 0;
    site.kernel = g->k;
    g->sites[g->nsites] = site;
    return (int)++g->nsites;
}

void cg_fault_of(cg *g, const cg_algorithm *a, const char *value) {
    int site = new_site(g, (cg_fault_site){.kind = CG_FAULT_ALGORITHM, .alg = a, .what = g->k ? g->k->name : "a kernel"});
    cg_line(g, "st_fault(%s, %d, (long)(%s));", faults_of(g), site, value);
}

/* the expression at, as the interpreter prints it, and its def */
static const char *expression_at(cg *g, const st_node *at) {
    st_buf b = {0};
    st_print_node(at, &b);
    const char *text = b.data ? b.data : "";
    size_t len = strcspn(text, "\n");
    const char *what = cg_str(g, "`%.*s%s` (in def %s)", (int)(len > 80 ? 80 : len), text,
                              len > 80 || text[len] ? " ..." : "", g->def->name);
    st_buf_free(&b);
    return what;
}

/* The place a site names: the expression at (expression_at), and its line
 * and column in the program (a rewrite's node stands where what it
 * replaced stood), which the message begins with. */
static cg_fault_site site_at(cg *g, cg_fault_kind kind, const st_node *at) {
    st_loc loc = st_node_loc_or(g->cx, at, st_node_loc(g->cx, g->at));
    return (cg_fault_site){.kind = kind, .what = expression_at(g, at), .line = loc.line, .col = loc.col};
}

const char *cg_checked_index(cg *g, const char *i, const st_size *length, const st_node *at) {
    const char *n = cg_size(g, length);
    cg_fault_site fault = site_at(g, CG_FAULT_INDEX, at);
    fault.length_c = n;
    int site = new_site(g, fault);
    const char *c = cg_name(g, "i");
    cg_line(g, "long %s = %s;", c, i);
    /* out of range: recorded, and element 0 read instead, so that nothing
     * reads outside the array before the glue reports it */
    cg_line(g, "if (%s < 0 || %s >= %s) {", c, c, n);
    g->indent++;
    cg_line(g, "st_fault(%s, %d, %s);", faults_of(g), site, c);
    cg_line(g, "%s = 0;", c);
    g->indent--;
    cg_line(g, "}");
    return c;
}

void cg_checked_divisor(cg *g, const char *d, const st_node *at) {
    int site = new_site(g, site_at(g, CG_FAULT_DIVISION, at));
    /* the quotient itself is st_div's, 0, and the run goes on to the glue's report */
    cg_line(g, "if (%s == 0) st_fault(%s, %d, 0);", d, faults_of(g), site);
}

void cg_fault_glue(const cg *g, st_buf *out) {
    if (!g->faults) return;
    st_buf_printf(out, "    /* what the kernels found wrong (strata's codegen/cg_fault.c) */\n"
                       "    {\n"
                       "        int fault[3] = {0, 0, 0};\n"
                       "        long value;\n");
    cg_glue_call(out, "reading what the kernels found wrong",
                 "clEnqueueReadBuffer(queue, %s, CL_TRUE, 0, sizeof fault, fault, 0, NULL, NULL)", g->faults->mem.base);
    st_buf_puts(out, "        value = (long)(((unsigned long)(unsigned int)fault[2] << 32) | (unsigned int)fault[1]);\n"
                     "        (void)value;\n");
    for (uint32_t i = 0; i < g->nsites; i++) {
        const cg_fault_site *s = &g->sites[i];
        st_buf_printf(out, "        if (fault[0] == %u) {\n", i + 1);
        /* LINE:COL: first, which the runtime turns into the error's place (st_launch_run) */
        char at[48] = "";
        if (s->line > 0) snprintf(at, sizeof at, "%d:%d: ", s->line, s->col);
        if (s->kind == CG_FAULT_INDEX) {
            st_buf_printf(out, "            snprintf(msg, msgcap, \"%sindex %%ld out of range for an array of length %%ld in %%s\",\n"
                               "                     value, (long)(", at);
            st_buf_printf(out, "%s), ", s->length_c);
            st_buf_puts(out, "\"");
            cg_put_escaped(out, s->what, strlen(s->what));
            st_buf_puts(out, "\"");
            st_buf_puts(out, ");\n            err = STRATA_INDEX_OUT_OF_RANGE;\n");
        } else if (s->kind == CG_FAULT_DIVISION) {
            st_buf_printf(out, "            snprintf(msg, msgcap, \"%sdivision by zero in %%s\", \"", at);
            cg_put_escaped(out, s->what, strlen(s->what));
            st_buf_puts(out, "\");\n            err = STRATA_DIVISION_BY_ZERO;\n");
        } else {
            s->alg->fault_glue(out, s->what);
        }
        st_buf_puts(out, "            goto done;\n        }\n");
    }
    st_buf_puts(out, "        if (fault[0] != 0) {\n"
                     "            snprintf(msg, msgcap, \"a kernel recorded a fault strata does not know (site %d)\", fault[0]);\n"
                     "            err = CL_INVALID_VALUE;\n"
                     "            goto done;\n"
                     "        }\n"
                     "    }\n");
}

void cg_fault_zero(const cg *g, st_buf *out) {
    if (!g->faults) return;
    st_buf_puts(out, "    {\n"
                     "        int zero = 0;\n");
    cg_glue_call(out, "clearing the fault words",
                 "clEnqueueFillBuffer(queue, %s, &zero, sizeof zero, 0, 3 * sizeof zero, 0, NULL, NULL)", g->faults->mem.base);
    st_buf_puts(out, "    }\n");
}
