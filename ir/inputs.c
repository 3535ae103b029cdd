/* ir/inputs.c — the arguments of one call, from NAME=VALUE pairs.
 *
 * Array parameters come from .npy files or are generated from a seed; scalar
 * parameters are numbers; `N=1000` fixes a size variable. The size variables
 * are then read off the arrays' lengths (N is the length of `xs: [N]f32`),
 * checked against each other and against the where clause, and every array's
 * shape is checked against its type. */
#include "scalar_ops.h"
#include "value.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct bound {
    const char *name;
    int64_t value;
    const char *source; /* where the value came from, for messages */
} bound;

struct st_inputs {
    st_ctx *cx;
    const st_def *def;
    st_arena *a;
    st_value *values;
    bool *given;
    bound *fixed; /* sizes given as N=… */
    size_t nfixed;
    bound *env;   /* everything known after binding */
    size_t nenv;
    st_binding *bindings;
};

st_inputs *st_inputs_new(st_ctx *cx, const st_def *def, st_arena *a) {
    st_inputs *in = st_arena_zalloc(a, sizeof *in);
    size_t n = def->nparams + 1, nsizes = def->nsizes + def->nparams + 1;
    if (!in) return NULL;
    in->cx = cx;
    in->def = def;
    in->a = a;
    in->values = st_arena_zalloc(a, n * sizeof *in->values);
    in->given = st_arena_zalloc(a, n * sizeof *in->given);
    in->fixed = st_arena_zalloc(a, nsizes * sizeof *in->fixed);
    in->env = st_arena_zalloc(a, nsizes * sizeof *in->env);
    in->bindings = st_arena_zalloc(a, nsizes * sizeof *in->bindings);
    if (!in->values || !in->given || !in->fixed || !in->env || !in->bindings) return NULL;
    return in;
}

/* The scalar type at the bottom of an array type, and how many dimensions. */
static const st_type *innermost(const st_type *t, uint32_t *rank) {
    *rank = 0;
    while (t->kind == ST_TYPE_ARRAY) {
        t = t->elem;
        (*rank)++;
    }
    return t;
}

static const char *type_text(const st_type *t, char *buf, size_t cap) {
    st_buf b = {0};
    st_type_print(t, &b);
    snprintf(buf, cap, "%s", b.data ? b.data : "?");
    st_buf_free(&b);
    return buf;
}

static void list_names(const st_def *d, st_buf *out) {
    for (uint32_t i = 0; i < d->nparams; i++) st_buf_printf(out, "%s%s", i ? ", " : "", d->params[i]->u.name);
    for (uint32_t i = 0; i < d->nsizes; i++) st_buf_printf(out, "%s%s", i || d->nparams ? ", " : "", d->sizes[i]->u.name);
}

static bool set_array(st_inputs *in, uint32_t i, const char *path, st_err *err) {
    const st_node *p = in->def->params[i];
    uint32_t rank;
    const st_type *elem = innermost(p->type, &rank);
    char tt[160];
    if (elem->kind != ST_TYPE_SCALAR)
        return st_fail(err, (st_loc){0}, "`%s` has type %s; inputs are arrays of scalars (zip them inside the program)",
                       p->u.name, type_text(p->type, tt, sizeof tt));
    st_value v;
    if (!st_npy_read(in->a, path, &v, err)) return false;
    uint32_t vrank = v.kind == ST_VALUE_ARRAY ? v.n : 0;
    if (v.scalar != elem->scalar)
        return st_fail(err, (st_loc){path, 0, 0}, "holds %s values (dtype '%s'), but `%s` is %s", st_scalar_name(v.scalar),
                       st_npy_dtype(v.scalar), p->u.name, type_text(p->type, tt, sizeof tt));
    if (vrank != rank)
        return st_fail(err, (st_loc){path, 0, 0}, "has %u dimension%s, but `%s` is %s", vrank, vrank == 1 ? "" : "s",
                       p->u.name, type_text(p->type, tt, sizeof tt));
    in->values[i] = v;
    return true;
}

/* [*start, *end) without the white space at either end. */
static void trim(const char **start, const char **end) {
    while (*start < *end && isspace((unsigned char)**start)) (*start)++;
    while (*end > *start && isspace((unsigned char)(*end)[-1])) (*end)--;
}

bool st_inputs_set(st_inputs *in, const char *text, st_err *err) {
    const char *eq = strchr(text, '=');
    /* a careless `N = 5` or `"N=5 "` means N=5: white space around the name
     * and the value is dropped alike */
    const char *name_start = text, *name_end = eq ? eq : text;
    trim(&name_start, &name_end);
    if (!eq || name_start == name_end)
        return st_fail(err, (st_loc){0}, "an input is NAME=VALUE (an array from a .npy file, or a number), not `%s`", text);
    const char *value_start = eq + 1, *value_end = eq + strlen(eq);
    trim(&value_start, &value_end);
    const char *name = st_intern(in->cx, name_start, (size_t)(name_end - name_start));
    char *value = st_arena_alloc(in->a, (size_t)(value_end - value_start) + 1);
    if (!name || !value) return st_fail_internal(err, "out of memory");
    memcpy(value, value_start, (size_t)(value_end - value_start));
    value[value_end - value_start] = 0;
    const st_def *d = in->def;
    for (uint32_t i = 0; i < d->nparams; i++) {
        const st_node *p = d->params[i];
        if (p->u.name != name) continue;
        if (in->given[i]) return st_fail(err, (st_loc){0}, "`%s` is given twice", name);
        if (p->type->kind == ST_TYPE_SCALAR) {
            char what[128];
            snprintf(what, sizeof what, "the %s parameter `%s`", st_scalar_name(p->type->scalar), name);
            memset(&in->values[i], 0, sizeof in->values[i]);
            in->values[i].kind = ST_VALUE_SCALAR;
            in->values[i].scalar = p->type->scalar;
            if (!st_scalar_parse(p->type->scalar, value, what, &in->values[i].u.s, err)) return false;
        } else if (!set_array(in, i, value, err)) {
            return false;
        }
        in->given[i] = true;
        return true;
    }
    for (uint32_t i = 0; i < d->nsizes; i++) {
        if (d->sizes[i]->u.name != name) continue;
        for (size_t k = 0; k < in->nfixed; k++)
            if (in->fixed[k].name == name) return st_fail(err, (st_loc){0}, "the size `%s` is given twice", name);
        st_scalar v;
        char what[96];
        snprintf(what, sizeof what, "the size `%s`", name);
        if (!st_scalar_parse(ST_I64, value, what, &v, err)) return false;
        if (v.i64 < 0) return st_fail(err, (st_loc){0}, "the size `%s` cannot be negative (%s)", name, value);
        in->fixed[in->nfixed++] = (bound){name, v.i64, name};
        return true;
    }
    st_buf names = {0};
    list_names(d, &names);
    st_fail(err, (st_loc){0}, "`%s` is not a parameter or size of `%s`; it has %s", name, d->name,
            names.len ? names.data : "none");
    st_buf_free(&names);
    return false;
}

/* ---- binding sizes ---- */

static bound *find(st_inputs *in, const char *name) {
    for (size_t k = 0; k < in->nenv; k++)
        if (in->env[k].name == name) return &in->env[k];
    return NULL;
}

static bool learn(st_inputs *in, const char *name, int64_t value, const char *source, st_err *err) {
    bound *b = find(in, name);
    if (!b) {
        in->env[in->nenv++] = (bound){name, value, source};
        return true;
    }
    if (b->value == value) return true;
    if (b->source == b->name)
        return st_fail(err, (st_loc){0}, "`%s` has length %lld where its type says %s, but %s = %lld was given", source,
                       (long long)value, name, name, (long long)b->value);
    return st_fail(err, (st_loc){0}, "`%s` has length %lld where its type says %s, but %s = %lld (the length of `%s`)", source,
                   (long long)value, name, name, (long long)b->value, b->source);
}

/* The size variable a dimension stands for, when it is exactly one. */
static const char *dim_var(const st_def *d, const st_size *s) {
    for (uint32_t i = 0; i < d->nsizes; i++)
        if (d->sizes[i]->size == s) return d->sizes[i]->u.name;
    return NULL;
}

/* Dimension dim of array value v; an array of tuples is a tuple of arrays
 * (of one shape: generated, as no file gives one), read off its first. */
static int64_t dim_of(const st_value *v, uint32_t dim) {
    while (v->kind == ST_VALUE_TUPLE && v->n > 0) v = &v->u.items[0];
    return v->kind == ST_VALUE_ARRAY && dim < v->n ? v->u.a.dims[dim] : 0;
}

static bool bind_all(st_inputs *in, st_err *err) {
    const st_def *d = in->def;
    in->nenv = 0;
    for (size_t k = 0; k < in->nfixed; k++) in->env[in->nenv++] = in->fixed[k];
    for (uint32_t i = 0; i < d->nparams; i++) {
        const st_node *p = d->params[i];
        if (!in->given[i]) continue;
        if (st_type_is_int(p->type)) {
            /* a u64 beyond i64 is fine as a value; used as a size, it
             * would be reported as having no value */
            int64_t v;
            if (st_scalar_as_i64(p->type->scalar, in->values[i].u.s, &v) && !learn(in, p->u.name, v, p->u.name, err))
                return false;
            continue;
        }
        const st_type *t = p->type;
        for (uint32_t dim = 0; t->kind == ST_TYPE_ARRAY; dim++, t = t->elem) {
            const char *var = dim_var(d, t->size);
            if (var && !learn(in, var, dim_of(&in->values[i], dim), p->u.name, err)) return false;
        }
    }
    for (size_t k = 0; k < in->nenv; k++) in->bindings[k] = (st_binding){in->env[k].name, in->env[k].value};
    return true;
}

/* The facts of the where clause, for the sizes known so far. */
static bool check_facts(st_inputs *in, st_err *err) {
    const st_def *d = in->def;
    for (uint32_t i = 0; i < d->facts->n; i++) {
        const st_fact *f = &d->facts->items[i];
        bound *b = find(in, f->name);
        if (b && b->value % f->divisor != 0)
            return st_fail(err, (st_loc){0}, "%s = %lld is not a multiple of %lld, as `where %s %% %lld == 0` requires",
                           f->name, (long long)b->value, (long long)f->divisor, f->name, (long long)f->divisor);
    }
    return true;
}

/* The slices' bounds the type checker left to the inputs. */
static bool check_bounds(st_inputs *in, st_err *err) {
    const st_def *d = in->def;
    for (uint32_t i = 0; i < d->nbounds; i++) {
        const st_bound *b = &d->bounds[i];
        int64_t lo, hi;
        if (!st_size_eval(b->lo, in->bindings, in->nenv, &lo, err) || !st_size_eval(b->hi, in->bindings, in->nenv, &hi, err))
            return false;
        if (lo > hi) {
            st_buf s = {0};
            for (size_t k = 0; k < in->nenv; k++)
                st_buf_printf(&s, "%s%s = %lld", k ? ", " : "", in->bindings[k].name, (long long)in->bindings[k].value);
            st_fail(err, b->loc, "%s is out of range with %s (%lld > %lld)", b->what, s.data ? s.data : "these sizes",
                    (long long)lo, (long long)hi);
            st_buf_free(&s);
            return false;
        }
    }
    return true;
}

/* Every array's shape against its type. */
static bool check_shapes(st_inputs *in, st_err *err) {
    const st_def *d = in->def;
    for (uint32_t i = 0; i < d->nparams; i++) {
        const st_node *p = d->params[i];
        const st_type *t = p->type;
        for (uint32_t dim = 0; t->kind == ST_TYPE_ARRAY; dim++, t = t->elem) {
            int64_t want;
            if (!st_size_eval(t->size, in->bindings, in->nenv, &want, err)) return false;
            int64_t have = dim_of(&in->values[i], dim);
            if (want != have) {
                st_buf s = {0};
                st_size_print(t->size, &s);
                st_fail(err, (st_loc){0}, "`%s` has %lld elements in dimension %u, but its type says %s = %lld",
                        p->u.name, (long long)have, dim + 1, s.data ? s.data : "?", (long long)want);
                st_buf_free(&s);
                return false;
            }
        }
    }
    return true;
}

/* The first size variable in t's lengths without a value yet, or NULL. */
typedef struct unbound_search {
    st_inputs *in;
    const char *first;
} unbound_search;

static void note_unbound(const char *name, void *data) {
    unbound_search *u = data;
    if (!u->first && !find(u->in, name)) u->first = name;
}

static const char *unbound_size(st_inputs *in, const st_type *t) {
    unbound_search u = {in, NULL};
    for (; t->kind == ST_TYPE_ARRAY; t = t->elem) st_size_each_var(t->size, note_unbound, &u);
    return u.first;
}

bool st_inputs_generate(st_inputs *in, uint64_t seed, st_err *err) {
    if (!bind_all(in, err) || !check_facts(in, err)) return false;
    const st_def *d = in->def;
    for (uint32_t i = 0; i < d->nparams; i++) {
        const st_node *p = d->params[i];
        if (in->given[i] || p->type->kind == ST_TYPE_SCALAR) continue;
        const char *unknown = unbound_size(in, p->type);
        if (unknown) {
            bool scalar = false;
            for (uint32_t k = 0; k < d->nparams; k++) scalar |= d->params[k]->u.name == unknown;
            return st_fail(err, (st_loc){0}, "cannot generate `%s`: its size `%s` is not known; give %s%s=VALUE, or the array itself with --input %s=FILE.npy",
                           p->u.name, unknown, scalar ? "--input " : "--size ", unknown, p->u.name);
        }
        if (!st_value_alloc(in->a, p->type, in->bindings, in->nenv, &in->values[i], err)) return false;
        st_value_fill_random(&in->values[i], seed * 1000003u + i);
        in->given[i] = true;
    }
    return bind_all(in, err);
}

bool st_inputs_finish(st_inputs *in, const st_value **args, const st_binding **env, size_t *nenv,
                      st_err *err) {
    const st_def *d = in->def;
    for (uint32_t i = 0; i < d->nparams; i++)
        if (!in->given[i]) {
            const st_node *p = d->params[i];
            if (p->type->kind == ST_TYPE_SCALAR)
                return st_fail(err, (st_loc){0}, "missing input `%s`: give it as --input %s=VALUE", p->u.name, p->u.name);
            return st_fail(err, (st_loc){0}, "missing input `%s`: give it as --input %s=FILE.npy, or its size (--size) to generate it",
                           p->u.name, p->u.name);
        }
    if (!bind_all(in, err) || !check_facts(in, err) || !check_shapes(in, err) || !check_bounds(in, err)) return false;
    *args = in->values;
    *env = in->bindings;
    *nenv = in->nenv;
    return true;
}
