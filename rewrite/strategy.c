/* rewrite/strategy.c — strategy values: building them and printing them. */
#include "rewrite.h"

#include <string.h>

static st_strategy *make(st_ctx *cx, st_strategy_kind kind) {
    st_strategy *s = st_ctx_alloc(cx, sizeof *s);
    if (s) {
        memset(s, 0, sizeof *s);
        s->kind = kind;
    }
    return s;
}

const st_strategy *st_s_rule(st_ctx *cx, const st_rule *rule, const int64_t *args) {
    st_strategy *s = make(cx, ST_S_RULE);
    if (!s) return NULL;
    s->rule = rule;
    for (uint32_t i = 0; i < rule->nparams; i++) s->args[i] = args[i];
    return s;
}

const st_strategy *st_s_unary(st_ctx *cx, st_strategy_kind kind, const st_strategy *a) {
    st_strategy *s = a || kind == ST_S_ID || kind == ST_S_FAIL ? make(cx, kind) : NULL;
    if (s) s->a = a;
    return s;
}

const st_strategy *st_s_binary(st_ctx *cx, st_strategy_kind kind, const st_strategy *a,
                               const st_strategy *b) {
    st_strategy *s = a && b ? make(cx, kind) : NULL;
    if (s) {
        s->a = a;
        s->b = b;
    }
    return s;
}

const st_strategy *st_s_iterate(st_ctx *cx, int64_t n, const st_strategy *a) {
    st_strategy *s = a ? make(cx, ST_S_ITERATE) : NULL;
    if (s) {
        s->a = a;
        s->n = n;
    }
    return s;
}

const st_strategy *st_s_at(st_ctx *cx, st_strategy_kind kind, st_pattern pattern,
                           const st_strategy *a) {
    st_strategy *s = a ? make(cx, kind) : NULL;
    if (s) {
        s->a = a;
        s->pattern = pattern;
    }
    return s;
}

const st_strategy *st_s_seq(st_ctx *cx, const st_strategy *a, const st_strategy *b) {
    return st_s_binary(cx, ST_S_SEQ, a, b);
}

const st_strategy *st_s_first(st_ctx *cx, st_prim prim, const st_strategy *a) {
    return st_s_at(cx, ST_S_FIRST, st_pattern_of(prim), a);
}

const st_strategy *st_s_try(st_ctx *cx, const st_strategy *a) { return st_s_unary(cx, ST_S_TRY, a); }

/* ---- printing ---- */

static const char *unary_name(st_strategy_kind k) {
    switch (k) {
    case ST_S_TRY: return "try";
    case ST_S_REPEAT: return "repeat";
    case ST_S_TOPDOWN: return "topdown";
    case ST_S_BOTTOMUP: return "bottomup";
    case ST_S_ALL: return "all";
    case ST_S_ONE: return "one";
    case ST_S_NORMALIZE: return "normalize";
    default: return "?";
    }
}

static void pattern(st_pattern p, st_buf *out) {
    if (p.top) st_buf_puts(out, "top ");
    switch (p.kind) {
    case ST_PAT_PRIM: st_buf_puts(out, st_prim_get(p.prim)->name); return;
    case ST_PAT_LET: st_buf_puts(out, "let"); return;
    case ST_PAT_LAMBDA: st_buf_puts(out, "lambda"); return;
    default: st_buf_puts(out, "any"); return;
    }
}

/* prec: 0 inside parentheses or at the top, 1 as an operand of `<+`, 2 of `;` */
static void print(const st_strategy *s, int prec, st_buf *out) {
    switch (s->kind) {
    case ST_S_RULE:
        st_buf_puts(out, s->rule->name);
        if (s->rule->nparams) {
            bool first = true;
            st_buf_puts(out, "(");
            for (uint32_t i = 0; i < s->rule->nparams; i++) {
                if (s->args[i] == ST_PARAM_UNSET && s->rule->params[i].optional) continue; /* left out */
                st_buf_printf(out, "%s%s=", first ? "" : ", ", s->rule->params[i].name);
                st_param_print(&s->rule->params[i], s->args[i], out);
                first = false;
            }
            st_buf_puts(out, ")");
        }
        return;
    case ST_S_ID: st_buf_puts(out, "id"); return;
    case ST_S_FAIL: st_buf_puts(out, "fail"); return;
    case ST_S_SEQ:
    case ST_S_CHOICE: {
        int mine = s->kind == ST_S_SEQ ? 2 : 1;
        if (prec > mine) st_buf_puts(out, "(");
        print(s->a, mine, out);
        st_buf_puts(out, s->kind == ST_S_SEQ ? " ; " : " <+ ");
        print(s->b, mine + 1, out);
        if (prec > mine) st_buf_puts(out, ")");
        return;
    }
    case ST_S_ITERATE:
        st_buf_printf(out, "iterate(%lld, ", (long long)s->n);
        print(s->a, 0, out);
        st_buf_puts(out, ")");
        return;
    case ST_S_FIRST:
    case ST_S_EACH:
        st_buf_puts(out, s->kind == ST_S_FIRST ? "first(" : "each(");
        pattern(s->pattern, out);
        st_buf_puts(out, ", ");
        print(s->a, 0, out);
        st_buf_puts(out, ")");
        return;
    default:
        st_buf_printf(out, "%s(", unary_name(s->kind));
        print(s->a, 0, out);
        st_buf_puts(out, ")");
        return;
    }
}

void st_strategy_print(const st_strategy *s, st_buf *out) { print(s, 0, out); }
