/* rewrite/parse.c — the strategy language, from text.
 *
 *   strategy := seq ('<+' seq)*          choice: the first that succeeds
 *   seq      := term (';' term)*         one after the other
 *   term     := '(' strategy ')'
 *             | id | fail
 *             | try(s) | repeat(s) | topdown(s) | bottomup(s) | all(s) | one(s) | normalize(s)
 *             | iterate(N, s) | first(PATTERN, s) | each(PATTERN, s)
 *             | RULE [ '(' [arg (',' arg)*] ')' ]      arg := [NAME '='] INTEGER
 *   PATTERN  := [top] (a primitive's name, let, lambda or any); top: outside every lambda
 *
 * `;` binds tighter than `<+`. Errors carry the column. */
#include "rewrite.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on nesting and on the number of terms: the engine recurses over a
 * strategy, and a chain `a ; b ; c …` is as deep as it is long. */
enum { MAX_DEPTH = 200, MAX_TERMS = 1000 };

typedef enum { T_END, T_NAME, T_INT, T_LPAREN, T_RPAREN, T_COMMA, T_EQ, T_SEMI, T_CHOICE, T_BAD } tkind;

typedef struct tok {
    tkind kind;
    const char *start;
    size_t len;
    int col;
} tok;

typedef struct sparser {
    st_ctx *cx;
    const st_registry *reg;
    const char *what, *text;
    size_t pos;
    tok t; /* the current token */
    int depth, terms;
    st_err *err;
} sparser;

static bool name_char(char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && ((c >= '0' && c <= '9') || c == '-'));
}

static void advance(sparser *p) {
    const char *s = p->text;
    while (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r') p->pos++;
    tok t = {T_END, s + p->pos, 0, (int)p->pos + 1};
    char c = s[p->pos];
    if (!c) {
        p->t = t;
        return;
    }
    size_t start = p->pos;
    if (name_char(c, true)) {
        while (name_char(s[p->pos], p->pos == start)) p->pos++;
        /* a trailing `-` belongs to no name (`a-` is `a` then junk) */
        while (p->pos > start + 1 && s[p->pos - 1] == '-') p->pos--;
        t.kind = T_NAME;
    } else if ((c >= '0' && c <= '9') || ((c == '-' || c == '+') && s[p->pos + 1] >= '0' && s[p->pos + 1] <= '9')) {
        p->pos++;
        while (s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
        t.kind = T_INT;
    } else if (c == '<' && s[p->pos + 1] == '+') {
        p->pos += 2;
        t.kind = T_CHOICE;
    } else {
        p->pos++;
        t.kind = c == '(' ? T_LPAREN : c == ')' ? T_RPAREN : c == ',' ? T_COMMA : c == '=' ? T_EQ : c == ';' ? T_SEMI : T_BAD;
    }
    t.len = p->pos - start;
    p->t = t;
}

__attribute__((format(printf, 3, 4))) static void *fail(sparser *p, int col, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    st_vfail(p->err, (st_loc){p->what, 1, col}, fmt, ap);
    va_end(ap);
    return NULL;
}

static void describe(const tok *t, char *buf, size_t cap) {
    if (t->kind == T_END) snprintf(buf, cap, "the end of the strategy");
    else snprintf(buf, cap, "`%.*s`", (int)(t->len > 40 ? 40 : t->len), t->start);
}

static void *unexpected(sparser *p, const char *wanted) {
    char found[64];
    describe(&p->t, found, sizeof found);
    return fail(p, p->t.col, "expected %s but found %s", wanted, found);
}

static bool expect(sparser *p, tkind k, const char *wanted) {
    if (p->t.kind != k) return unexpected(p, wanted), false;
    advance(p);
    return true;
}

static bool is(const tok *t, const char *name) {
    return t->kind == T_NAME && strlen(name) == t->len && !memcmp(t->start, name, t->len);
}

static const st_strategy *strategy(sparser *p);

/* The names a parameter takes, for a message: "global, local". */
static void names_of(const st_param *prm, char *out, size_t cap) {
    size_t len = 0;
    out[0] = 0;
    for (uint32_t j = 0; j < st_param_nnames(prm) && len < cap; j++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", j ? ", " : "", prm->names[j]);
}

/* A named parameter's value: the index of its name. */
static bool named_value(sparser *p, const st_param *prm, int64_t *out) {
    char names[200];
    names_of(prm, names, sizeof names);
    if (p->t.kind != T_NAME)
        return fail(p, p->t.col, "%s takes a name (%s), not `%.*s`", prm->name, names, (int)(p->t.len > 64 ? 64 : p->t.len), p->t.start), false;
    for (uint32_t j = 0; j < st_param_nnames(prm); j++)
        if (is(&p->t, prm->names[j])) {
            *out = j;
            advance(p);
            return true;
        }
    return fail(p, p->t.col, "%s is one of %s, not `%.*s`", prm->name, names, (int)(p->t.len > 64 ? 64 : p->t.len), p->t.start), false;
}

static bool integer(sparser *p, int64_t *out) {
    if (p->t.kind != T_INT) return unexpected(p, "a whole number"), false;
    char buf[32];
    if (p->t.len >= sizeof buf) return fail(p, p->t.col, "the number `%.*s` is too large", (int)p->t.len, p->t.start), false;
    memcpy(buf, p->t.start, p->t.len);
    buf[p->t.len] = 0;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE) return fail(p, p->t.col, "the number %s is too large", buf), false;
    *out = v;
    advance(p);
    return true;
}

static bool pattern(sparser *p, st_pattern *out) {
    bool top = p->t.kind == T_NAME && is(&p->t, "top");
    if (top) advance(p);
    if (p->t.kind != T_NAME) return unexpected(p, "a pattern: a primitive's name (scan, map, …), let, lambda or any, after `top` or not"), false;
    if (is(&p->t, "let")) *out = (st_pattern){.kind = ST_PAT_LET};
    else if (is(&p->t, "lambda")) *out = (st_pattern){.kind = ST_PAT_LAMBDA};
    else if (is(&p->t, "any")) *out = (st_pattern){.kind = ST_PAT_ANY};
    else if (st_prim_from_name(p->t.start, p->t.len, &out->prim)) out->kind = ST_PAT_PRIM;
    else {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(p->t.len > 40 ? 40 : p->t.len), p->t.start);
        return fail(p, p->t.col, "`%s` is not a pattern: use a primitive's name (scan, map, …), let, lambda or any", name), false;
    }
    out->top = top;
    advance(p);
    return true;
}

/* The closest rule and combinator names, for a name that is neither. */
static void unknown_name(sparser *p, const tok *t) {
    static const char *const combinators[] = {"id", "fail", "try", "repeat", "iterate", "first", "each",
                                              "topdown", "bottomup", "all", "one", "normalize"};
    size_t n = st_registry_count(p->reg);
    const char **cands = malloc((n + 12) * sizeof *cands);
    char name[72], hint[200] = "";
    snprintf(name, sizeof name, "%.*s", (int)(t->len > 64 ? 64 : t->len), t->start);
    if (cands) {
        for (size_t i = 0; i < n; i++) cands[i] = st_registry_at(p->reg, i)->name;
        for (size_t i = 0; i < 12; i++) cands[n + i] = combinators[i];
        const char *close[3];
        int k = st_closest_names(name, cands, (int)n + 12, close, 3);
        size_t len = 0;
        for (int i = 0; i < k && len < sizeof hint; i++)
            len += (size_t)snprintf(hint + len, sizeof hint - len, "%s`%s`", i == 0 ? "; did you mean " : i == k - 1 ? " or " : ", ", close[i]);
        if (k && len < sizeof hint) snprintf(hint + len, sizeof hint - len, "?");
        free(cands);
    }
    fail(p, t->col, "unknown rule `%s`%s (`strata strategies` lists them; rules from a plugin need --plugin PATH.so)", name, hint);
}

/* RULE [ '(' args ')' ] */
static const st_strategy *rule(sparser *p) {
    tok name = p->t;
    char text[72];
    snprintf(text, sizeof text, "%.*s", (int)(name.len > 64 ? 64 : name.len), name.start);
    const st_rule *r = name.len > 64 ? NULL : st_registry_find(p->reg, text); /* no rule has a longer name */
    if (!r) return unknown_name(p, &name), NULL;
    advance(p);
    int64_t args[ST_RULE_MAX_PARAMS];
    bool given[ST_RULE_MAX_PARAMS] = {false};
    int cols[ST_RULE_MAX_PARAMS] = {0};
    for (uint32_t i = 0; i < r->nparams; i++) args[i] = ST_PARAM_UNSET;
    if (p->t.kind == T_LPAREN) {
        advance(p);
        uint32_t positional = 0;
        while (p->t.kind != T_RPAREN) {
            uint32_t k = positional;
            if (p->t.kind == T_NAME) {
                tok pn = p->t;
                for (k = 0; k < r->nparams; k++)
                    if (strlen(r->params[k].name) == pn.len && !memcmp(r->params[k].name, pn.start, pn.len)) break;
                char pname[72], list[200] = "";
                snprintf(pname, sizeof pname, "%.*s", (int)(pn.len > 64 ? 64 : pn.len), pn.start);
                if (k == r->nparams) {
                    size_t len = 0;
                    for (uint32_t j = 0; j < r->nparams && len < sizeof list; j++)
                        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", j ? ", " : "", r->params[j].name);
                    return fail(p, pn.col, "%s has no parameter `%s`; its parameters are %s", text, pname, r->nparams ? list : "none");
                }
                advance(p);
                if (!expect(p, T_EQ, "`=` after the parameter's name")) return NULL;
            } else if (k >= r->nparams) {
                return fail(p, p->t.col, "%s takes %s", text, r->nparams ? "fewer arguments" : "no arguments");
            }
            if (given[k]) return fail(p, p->t.col, "%s is given twice", r->params[k].name);
            cols[k] = p->t.col;
            if (!(st_param_nnames(&r->params[k]) ? named_value(p, &r->params[k], &args[k]) : integer(p, &args[k]))) return NULL;
            given[k] = true;
            positional = k + 1;
            if (p->t.kind == T_COMMA) advance(p);
            else if (p->t.kind != T_RPAREN) return unexpected(p, "`,` or `)` after an argument");
        }
        advance(p);
    }
    for (uint32_t i = 0; i < r->nparams; i++) {
        const st_param *prm = &r->params[i];
        if (!given[i]) {
            if (prm->has_default) args[i] = prm->def;
            continue;
        }
        if (!st_param_nnames(prm) && (args[i] < prm->min || args[i] > prm->max)) {
            fail(p, cols[i], "%s = %lld is out of range: %s (%s) is from %lld to %lld", prm->name, (long long)args[i],
                 prm->name, prm->doc ? prm->doc : "", (long long)prm->min, (long long)prm->max);
            p->err->arg = (int)i; /* the value is wrong, not the text: see st_strategy_parse */
            return NULL;
        }
    }
    for (uint32_t i = 0; i < r->nparams; i++)
        if (!given[i] && !r->params[i].has_default && !r->params[i].optional)
            return fail(p, name.col, "%s needs its parameter %s (%s), as in %s(%s=…)", text, r->params[i].name,
                        r->params[i].doc ? r->params[i].doc : "", text, r->params[i].name);
    st_err why = {0};
    if (r->check && !r->check(args, &why)) {
        fail(p, name.col, "%s: %s", text, why.message);
        p->err->arg = (int)r->nparams; /* the values together are wrong */
        return NULL;
    }
    return st_s_rule(p->cx, r, args);
}

static const st_strategy *term(sparser *p) {
    if (++p->depth > MAX_DEPTH) return fail(p, p->t.col, "the strategy is nested too deeply");
    if (++p->terms > MAX_TERMS) return fail(p, p->t.col, "the strategy is too long (more than %d terms)", MAX_TERMS);
    const st_strategy *s = NULL;
    tok t = p->t;
    static const struct { const char *name; st_strategy_kind kind; } unary[] = {
        {"try", ST_S_TRY}, {"repeat", ST_S_REPEAT}, {"topdown", ST_S_TOPDOWN}, {"bottomup", ST_S_BOTTOMUP},
        {"all", ST_S_ALL}, {"one", ST_S_ONE}, {"normalize", ST_S_NORMALIZE}};
    if (t.kind == T_LPAREN) {
        advance(p);
        s = strategy(p);
        if (s && !expect(p, T_RPAREN, "`)`")) s = NULL;
    } else if (t.kind != T_NAME) {
        s = unexpected(p, "a rule or a combinator");
    } else if (is(&t, "id") || is(&t, "fail")) {
        advance(p);
        s = st_s_unary(p->cx, is(&t, "id") ? ST_S_ID : ST_S_FAIL, NULL);
    } else if (is(&t, "iterate")) {
        advance(p);
        int64_t n;
        int col = 0;
        if (expect(p, T_LPAREN, "`(` after iterate") && (col = p->t.col) && integer(p, &n)) {
            if (n < 0 || n > 1000000) s = fail(p, col, "iterate's count must be from 0 to 1000000");
            else if (expect(p, T_COMMA, "`,` after iterate's count") && (s = strategy(p)) && expect(p, T_RPAREN, "`)`"))
                s = st_s_iterate(p->cx, n, s);
            else s = NULL;
        }
    } else if (is(&t, "first") || is(&t, "each")) {
        advance(p);
        st_pattern pat;
        if (expect(p, T_LPAREN, "`(`") && pattern(p, &pat) && expect(p, T_COMMA, "`,` after the pattern") &&
            (s = strategy(p)) && expect(p, T_RPAREN, "`)`"))
            s = st_s_at(p->cx, is(&t, "first") ? ST_S_FIRST : ST_S_EACH, pat, s);
        else s = NULL;
    } else {
        size_t k = 0;
        while (k < sizeof unary / sizeof *unary && !is(&t, unary[k].name)) k++;
        if (k < sizeof unary / sizeof *unary) {
            advance(p);
            if (expect(p, T_LPAREN, "`(`") && (s = strategy(p)) && expect(p, T_RPAREN, "`)`"))
                s = st_s_unary(p->cx, unary[k].kind, s);
            else s = NULL;
        } else {
            s = rule(p);
        }
    }
    p->depth--;
    return s;
}

/* operand (op operand)*, grouped to the left: `;` binds tighter than `<+`. */
static const st_strategy *chain(sparser *p, const st_strategy *(*operand)(sparser *), tkind op,
                                st_strategy_kind kind) {
    const st_strategy *s = operand(p);
    while (s && p->t.kind == op) {
        advance(p);
        const st_strategy *b = operand(p);
        s = b ? st_s_binary(p->cx, kind, s, b) : NULL;
    }
    return s;
}

static const st_strategy *seq(sparser *p) { return chain(p, term, T_SEMI, ST_S_SEQ); }

static const st_strategy *strategy(sparser *p) { return chain(p, seq, T_CHOICE, ST_S_CHOICE); }

const st_strategy *st_strategy_parse(st_ctx *cx, const st_registry *reg, const char *what,
                                     const char *text, st_err *err) {
    sparser p = {cx, reg, what, text, 0, {0}, 0, 0, err};
    advance(&p);
    if (p.t.kind == T_END) return fail(&p, 1, "the strategy is empty");
    const st_strategy *s = strategy(&p);
    if (s && p.t.kind != T_END) return unexpected(&p, "`;`, `<+` or the end of the strategy");
    return s;
}
