/* ir/parse.c — the parser: tokens to a located syntax tree.
 *
 * Recursive descent with precedence climbing for binary operators (C's
 * precedence, `|>` lowest). Two bits of sugar are resolved here: `x |> f(a)`
 * becomes the call f(a, x), and a minus in front of a number literal becomes
 * part of the literal (so that -2147483648 is an i32). */
#include "ast.h"
#include "lex.h"

#include <stdio.h>
#include <string.h>

/* Every pass after the parser (type checking, printing, the interpreter)
 * recurses over the tree, so the parser bounds both its own recursion and the
 * depth of what it builds: `a + a + … + a` is parsed by a loop but is a deep
 * tree all the same. */
enum { MAX_DEPTH = ST_MAX_DEPTH };

typedef struct parser {
    st_ctx *cx;
    st_arena *scratch;
    const char *file;
    const token *toks;
    size_t n, i;
    int depth;
    st_err *err;
} parser;

static const token *peek(const parser *p) { return &p->toks[p->i]; }
static const token *peek_at(const parser *p, size_t k) {
    return &p->toks[p->i + k < p->n ? p->i + k : p->n - 1];
}
static bool at(const parser *p, tok_kind k) { return peek(p)->kind == k; }
static const token *next(parser *p) {
    const token *t = &p->toks[p->i];
    if (p->i + 1 < p->n) p->i++;
    return t;
}
static bool accept(parser *p, tok_kind k) {
    if (!at(p, k)) return false;
    next(p);
    return true;
}

static void *fail_tok(parser *p, const token *t, const char *expected) {
    char found[96];
    st_token_describe(t, found, sizeof found);
    st_fail(p->err, t->loc, "expected %s but found %s", expected, found);
    return NULL;
}

static bool expect(parser *p, tok_kind k, const char *expected) {
    if (accept(p, k)) return true;
    fail_tok(p, peek(p), expected);
    return false;
}

static void *oom(parser *p) {
    st_fail_internal(p->err, "out of memory while parsing %s", p->file);
    return NULL;
}

static ast *new_ast(parser *p, ast_kind kind, st_loc loc) {
    ast *a = st_arena_zalloc(p->scratch, sizeof *a);
    if (!a) return oom(p);
    a->kind = kind;
    a->loc = loc;
    return a;
}

static const char *name_of(parser *p, const token *t) {
    const char *s = st_intern(p->cx, t->start, t->len);
    if (!s) oom(p);
    return s;
}

/* A growable array of pointers in the scratch arena. */
typedef struct vec {
    void **items;
    uint32_t n, cap;
} vec;

static bool push(parser *p, vec *v, void *item) {
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 4;
        void **items = st_arena_alloc(p->scratch, cap * sizeof *items);
        if (!items) return oom(p), false;
        if (v->n) memcpy(items, v->items, v->n * sizeof *items);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->n++] = item;
    return true;
}

static bool enter(parser *p) {
    if (++p->depth <= MAX_DEPTH) return true;
    st_fail(p->err, peek(p)->loc, "the expression is nested too deeply (more than %d levels)", MAX_DEPTH);
    return false;
}

static ast *parse_expr(parser *p);
static ast_type *parse_type(parser *p);

/* ---- literals ---- */

static ast *int_literal(parser *p, const token *t) {
    ast *a = new_ast(p, A_INT, t->loc);
    if (!a) return NULL;
    uint64_t v = 0, radix = (uint64_t)(t->radix ? t->radix : 10);
    for (size_t k = radix == 10 ? 0 : 2; k < t->digits_len; k++) {
        char c = t->start[k];
        unsigned d = c >= 'a' ? (unsigned)(c - 'a' + 10) : c >= 'A' ? (unsigned)(c - 'A' + 10) : (unsigned)(c - '0');
        if (v > (UINT64_MAX - d) / radix) {
            st_fail(p->err, t->loc, "the integer literal `%.*s` is too large for any integer type",
                    (int)t->digits_len, t->start);
            return NULL;
        }
        v = v * radix + d;
    }
    a->magnitude = v;
    a->has_suffix = t->has_suffix;
    a->suffix = t->suffix;
    if (a->has_suffix && st_scalar_is_float(a->suffix)) {
        a->kind = A_FLOAT;
        char *text = st_arena_alloc(p->scratch, t->digits_len + 1);
        if (!text) return oom(p);
        memcpy(text, t->start, t->digits_len);
        text[t->digits_len] = 0;
        a->text = text;
    }
    return a;
}

static ast *float_literal(parser *p, const token *t) {
    ast *a = new_ast(p, A_FLOAT, t->loc);
    char *text = st_arena_alloc(p->scratch, t->digits_len + 1);
    if (!a || !text) return oom(p);
    memcpy(text, t->start, t->digits_len);
    text[t->digits_len] = 0;
    a->text = text;
    a->has_suffix = t->has_suffix;
    a->suffix = t->suffix;
    return a;
}

/* `f32.inf`, `f64.nan`, `f32.pi`, `i32.min`, `u64.max`: constants named by their type */
static ast *type_constant(parser *p, const token *type_tok, st_scalar_kind k) {
    next(p); /* the dot */
    const token *c = next(p);
    char what[8] = "";
    if (c->kind == K_NAME && c->len < sizeof what) memcpy(what, c->start, c->len);
    if (st_scalar_is_float(k) && !strcmp(what, "pi")) {
        ast *a = new_ast(p, A_FLOAT, type_tok->loc);
        if (!a) return NULL;
        a->text = "3.14159265358979323846264338327950288";
        a->has_suffix = true;
        a->suffix = k;
        return a;
    }
    if (st_scalar_is_float(k) && (!strcmp(what, "inf") || !strcmp(what, "nan"))) {
        ast *a = new_ast(p, A_FLOAT, type_tok->loc);
        if (!a) return NULL;
        a->text = !strcmp(what, "inf") ? "inf" : "nan";
        a->has_suffix = true;
        a->suffix = k;
        return a;
    }
    if (st_scalar_is_int(k) && (!strcmp(what, "min") || !strcmp(what, "max"))) {
        ast *a = new_ast(p, A_INT, type_tok->loc);
        if (!a) return NULL;
        bool max = !strcmp(what, "max");
        a->has_suffix = true;
        a->suffix = k;
        uint64_t max_pos, max_neg;
        st_scalar_int_limits(k, &max_pos, &max_neg);
        a->magnitude = max ? max_pos : max_neg;
        a->negative = !max && st_scalar_is_signed(k) ;
        return a;
    }
    char msg[64];
    snprintf(msg, sizeof msg, "%s", st_scalar_is_float(k) ? "`inf`, `nan` or `pi`" : "`min` or `max`");
    return fail_tok(p, c, msg);
}

/* ---- expressions ---- */

static bool is_operator(tok_kind k, st_binop *op) {
    static const struct { tok_kind k; st_binop op; } ops[] = {
        {K_PLUS, ST_OP_ADD}, {K_MINUS, ST_OP_SUB}, {K_STAR, ST_OP_MUL}, {K_SLASH, ST_OP_DIV},
        {K_PERCENT, ST_OP_MOD}, {K_EQ, ST_OP_EQ}, {K_NE, ST_OP_NE}, {K_LT, ST_OP_LT},
        {K_LE, ST_OP_LE}, {K_GT, ST_OP_GT}, {K_GE, ST_OP_GE}, {K_ANDAND, ST_OP_AND},
        {K_OROR, ST_OP_OR}, {K_AMP, ST_OP_BAND}, {K_BAR, ST_OP_BOR}, {K_CARET, ST_OP_BXOR},
        {K_SHL, ST_OP_SHL}, {K_SHR, ST_OP_SHR}, {K_STARSTAR, ST_OP_POW}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (ops[i].k == k) return (*op = ops[i].op), true;
    return false;
}

static ast *finish_kids(parser *p, ast *a, vec *v) {
    a->nkids = v->n;
    a->kids = (ast **)v->items;
    a->depth = 0;
    for (uint32_t i = 0; i < a->nkids; i++)
        if (a->kids[i]->depth >= a->depth) a->depth = a->kids[i]->depth + 1;
    if (a->depth > MAX_DEPTH) {
        st_fail(p->err, a->loc, "the expression is nested too deeply (more than %d levels)", MAX_DEPTH);
        return NULL;
    }
    return a;
}

/* (args) after a callee name; a bare operator is an argument of its own */
static bool parse_args(parser *p, vec *args) {
    if (!expect(p, K_LPAREN, "`(`")) return false;
    if (accept(p, K_RPAREN)) return true;
    for (;;) {
        st_binop op;
        const token *t = peek(p);
        tok_kind after = peek_at(p, 1)->kind;
        ast *arg;
        if (is_operator(t->kind, &op) && (after == K_COMMA || after == K_RPAREN)) {
            next(p);
            arg = new_ast(p, A_OPREF, t->loc);
            if (arg) arg->binop = op;
        } else {
            arg = parse_expr(p);
        }
        if (!arg || !push(p, args, arg)) return false;
        if (accept(p, K_RPAREN)) return true;
        if (!expect(p, K_COMMA, "`,` or `)` in the arguments")) return false;
    }
}

/* Is the `(` at token `from` the start of a lambda's parameter list? */
static bool lambda_ahead_at(const parser *p, size_t from) {
    int depth = 0;
    for (size_t k = from; k < p->n; k++) {
        tok_kind kind = p->toks[k].kind;
        if (kind == K_LPAREN || kind == K_LBRACK) depth++;
        else if (kind == K_RPAREN || kind == K_RBRACK) {
            if (--depth == 0) return k + 1 < p->n && p->toks[k + 1].kind == K_ARROW;
        } else if (kind == K_EOF) return false;
    }
    return false;
}

/* Is the `(` at the cursor the start of a lambda's parameter list? */
static bool lambda_ahead(const parser *p) { return lambda_ahead_at(p, p->i); }

static bool parse_binder(parser *p, vec *names, vec *locs, vec *annots, bool typed) {
    const token *t = peek(p);
    if (!expect(p, K_NAME, "a name")) return false;
    const char *name = name_of(p, t);
    st_loc *loc = st_arena_alloc(p->scratch, sizeof *loc);
    if (!name || !loc) return oom(p), false;
    *loc = t->loc;
    ast_type *annot = NULL;
    if (typed && accept(p, K_COLON) && !(annot = parse_type(p))) return false;
    return push(p, names, (void *)name) && push(p, locs, loc) && push(p, annots, annot);
}

static bool set_names(parser *p, ast *a, vec *names, vec *locs, vec *annots) {
    a->nnames = names->n;
    a->names = (const char **)names->items;
    a->annots = (ast_type **)annots->items;
    a->name_locs = st_arena_alloc(p->scratch, (names->n ? names->n : 1) * sizeof(st_loc));
    if (!a->name_locs) return oom(p), false;
    for (uint32_t i = 0; i < names->n; i++) a->name_locs[i] = *(st_loc *)locs->items[i];
    return true;
}

static ast *parse_lambda(parser *p) {
    ast *a = new_ast(p, A_LAMBDA, peek(p)->loc);
    vec names = {0}, locs = {0}, annots = {0};
    if (!a) return NULL;
    if (accept(p, K_LPAREN)) {
        do {
            if (!parse_binder(p, &names, &locs, &annots, true)) return NULL;
        } while (accept(p, K_COMMA));
        if (!expect(p, K_RPAREN, "`,` or `)` after a lambda parameter")) return NULL;
    } else if (!parse_binder(p, &names, &locs, &annots, false)) {
        return NULL;
    }
    if (!set_names(p, a, &names, &locs, &annots)) return NULL;
    if (!expect(p, K_ARROW, "`=>`")) return NULL;
    ast *body = parse_expr(p);
    if (!body) return NULL;
    vec kids = {0};
    if (!push(p, &kids, body)) return NULL;
    return finish_kids(p, a, &kids);
}

/* let PATTERN [: TYPE] = EXPR (let …)* in EXPR */
/* The names a let or loop binds into a: `(a, b)`, or one name (with a
 * type, `x: t`, where annotated says it may have one). */
static bool parse_pattern(parser *p, ast *a, bool annotated) {
    vec names = {0}, locs = {0}, annots = {0};
    if (accept(p, K_LPAREN)) {
        a->tuple_pattern = true;
        do {
            if (!parse_binder(p, &names, &locs, &annots, false)) return false;
        } while (accept(p, K_COMMA));
        if (!expect(p, K_RPAREN, "`,` or `)` in the pattern")) return false;
    } else if (!parse_binder(p, &names, &locs, &annots, annotated)) {
        return false;
    }
    return set_names(p, a, &names, &locs, &annots);
}

static ast *parse_let(parser *p) {
    ast *a = new_ast(p, A_LET, peek(p)->loc);
    if (!a) return NULL;
    next(p); /* let */
    if (!parse_pattern(p, a, true)) return NULL;
    if (!expect(p, K_ASSIGN, "`=` after the name bound by `let`")) return NULL;
    ast *value = parse_expr(p);
    if (!value) return NULL;
    ast *body;
    if (at(p, K_LET)) {
        if (!enter(p)) return NULL;
        body = parse_let(p);
        p->depth--;
    } else {
        if (!expect(p, K_IN, "`let` or `in` after a binding")) return NULL;
        body = parse_expr(p);
    }
    if (!body) return NULL;
    vec kids = {0};
    if (!push(p, &kids, value) || !push(p, &kids, body)) return NULL;
    return finish_kids(p, a, &kids);
}

static ast *parse_if(parser *p) {
    ast *a = new_ast(p, A_IF, peek(p)->loc);
    if (!a) return NULL;
    next(p);
    vec kids = {0};
    ast *c = parse_expr(p);
    if (!c || !push(p, &kids, c) || !expect(p, K_THEN, "`then`")) return NULL;
    ast *t = parse_expr(p);
    if (!t || !push(p, &kids, t) || !expect(p, K_ELSE, "`else`")) return NULL;
    ast *e = parse_expr(p);
    if (!e || !push(p, &kids, e)) return NULL;
    return finish_kids(p, a, &kids);
}

/* [e1, e2, ...]: an array literal */
static ast *parse_array(parser *p) {
    ast *a = new_ast(p, A_ARRAY, peek(p)->loc);
    if (!a) return NULL;
    next(p);
    vec items = {0};
    if (!accept(p, K_RBRACK)) {
        do {
            ast *item = parse_expr(p);
            if (!item || !push(p, &items, item)) return NULL;
        } while (accept(p, K_COMMA));
        if (!expect(p, K_RBRACK, "`,` or `]` in an array literal")) return NULL;
    }
    return finish_kids(p, a, &items);
}

/* xs[i] (an element) or xs[a:b] (a slice, either bound may be left out) */
static ast *parse_subscript(parser *p, ast *xs) {
    ast *a = new_ast(p, A_INDEX, peek(p)->loc);
    if (!a) return NULL;
    next(p); /* [ */
    ast *lo = NULL, *hi = NULL;
    if (!at(p, K_COLON) && !(lo = parse_expr(p))) return NULL;
    if (accept(p, K_COLON)) {
        a->kind = A_SLICE;
        if (!at(p, K_RBRACK) && !(hi = parse_expr(p))) return NULL;
    }
    if (!expect(p, K_RBRACK, a->kind == A_SLICE ? "`]` after a slice" : "`:` or `]` after an index")) return NULL;
    /* finish_kids over the bounds present; the slots keep their places */
    vec kids = {0};
    if (!push(p, &kids, xs) || (lo && !push(p, &kids, lo)) || (hi && !push(p, &kids, hi))) return NULL;
    if (!finish_kids(p, a, &kids)) return NULL;
    if (a->kind == A_SLICE) {
        ast **slots = st_arena_zalloc(p->scratch, 3 * sizeof *slots);
        if (!slots) return oom(p);
        slots[0] = xs, slots[1] = lo, slots[2] = hi;
        a->kids = slots;
        a->nkids = 3;
    }
    return a;
}

/* loop PATTERN = EXPR (for NAME < EXPR | while EXPR) do EXPR */
static ast *parse_loop(parser *p) {
    ast *a = new_ast(p, A_LOOP, peek(p)->loc);
    if (!a) return NULL;
    next(p); /* loop */
    vec kids = {0};
    if (!parse_pattern(p, a, false)) return NULL;
    if (!expect(p, K_ASSIGN, "`=` after the loop's accumulator")) return NULL;
    ast *init = parse_expr(p);
    if (!init || !push(p, &kids, init)) return NULL;
    if (accept(p, K_WHILE)) {
        a->bval = true;
        ast *c = parse_expr(p);
        if (!c || !push(p, &kids, c)) return NULL;
    } else {
        if (!expect(p, K_FOR, "`for` or `while` after the loop's initial value")) return NULL;
        const token *t = peek(p);
        if (!expect(p, K_NAME, "the loop's index, as in `for i < n`")) return NULL;
        ast *index = new_ast(p, A_NAME, t->loc);
        if (!index || !(index->name = name_of(p, t)) || !push(p, &kids, index)) return NULL;
        if (!expect(p, K_LT, "`<` after the loop's index, as in `for i < n`")) return NULL;
        ast *n = parse_expr(p);
        if (!n || !push(p, &kids, n)) return NULL;
    }
    if (!expect(p, K_DO, "`do` before the loop's body")) return NULL;
    ast *body = parse_expr(p);
    if (!body || !push(p, &kids, body)) return NULL;
    return finish_kids(p, a, &kids);
}

static ast *parse_primary(parser *p) {
    const token *t = peek(p);
    switch (t->kind) {
    case K_INT: next(p); return int_literal(p, t);
    case K_FLOAT: next(p); return float_literal(p, t);
    case K_TRUE:
    case K_FALSE: {
        next(p);
        ast *a = new_ast(p, A_BOOL, t->loc);
        if (a) a->bval = t->kind == K_TRUE;
        return a;
    }
    case K_LET: return parse_let(p);
    case K_IF: return parse_if(p);
    case K_LOOP: return parse_loop(p);
    case K_NAME: {
        tok_kind after = peek_at(p, 1)->kind;
        st_scalar_kind k;
        if (after == K_ARROW) return parse_lambda(p);
        if (after == K_DOT && peek_at(p, 2)->kind == K_NAME && st_scalar_from_name(t->start, t->len, &k) && k != ST_BOOL) {
            next(p);
            return type_constant(p, t, k);
        }
        next(p);
        const char *name = name_of(p, t);
        if (!name) return NULL;
        if (after != K_LPAREN) {
            ast *a = new_ast(p, A_NAME, t->loc);
            if (a) a->name = name;
            return a;
        }
        ast *a = new_ast(p, A_CALL, t->loc);
        vec args = {0};
        if (!a || !parse_args(p, &args)) return NULL;
        a->name = name;
        return finish_kids(p, a, &args);
    }
    case K_LPAREN: {
        if (lambda_ahead(p)) return parse_lambda(p);
        next(p);
        if (at(p, K_RPAREN)) return fail_tok(p, peek(p), "an expression inside `()`");
        ast *first = parse_expr(p);
        if (!first) return NULL;
        if (accept(p, K_RPAREN)) return first;
        ast *tuple = new_ast(p, A_TUPLE, t->loc);
        vec items = {0};
        if (!tuple || !push(p, &items, first)) return NULL;
        while (accept(p, K_COMMA)) {
            ast *item = parse_expr(p);
            if (!item || !push(p, &items, item)) return NULL;
        }
        if (!expect(p, K_RPAREN, "`,` or `)`")) return NULL;
        return finish_kids(p, tuple, &items);
    }
    case K_LBRACK: return parse_array(p);
    default: {
        st_binop op;
        if (is_operator(t->kind, &op)) {
            st_fail(p->err, t->loc, "`%s` is an operator; as an argument on its own it is a function, as in `scan(%s, 0)`",
                    st_binop_name(op), st_binop_name(op));
            return NULL;
        }
        return fail_tok(p, t, "an expression");
    }
    }
}

static ast *parse_postfix(parser *p) {
    ast *a = parse_primary(p);
    while (a && (at(p, K_DOT) || at(p, K_LBRACK))) {
        if (at(p, K_LBRACK)) {
            if (!enter(p)) return NULL;
            a = parse_subscript(p, a);
            p->depth--;
            continue;
        }
        const token *dot = next(p);
        const token *t = peek(p);
        if (t->kind != K_INT || t->has_suffix) return fail_tok(p, t, "a component number after `.`, as in `p.0`");
        next(p);
        ast *proj = new_ast(p, A_PROJ, dot->loc);
        ast *lit = int_literal(p, t);
        if (!proj || !lit) return NULL;
        if (lit->magnitude > UINT32_MAX) {
            st_fail(p->err, t->loc, "component number %.*s is out of range", (int)t->len, t->start);
            return NULL;
        }
        proj->index = (uint32_t)lit->magnitude;
        vec kids = {0};
        if (!push(p, &kids, a)) return NULL;
        a = finish_kids(p, proj, &kids);
    }
    return a;
}

static ast *parse_unary(parser *p) {
    if (!enter(p)) return NULL;
    const token *t = peek(p);
    ast *a;
    if (t->kind == K_MINUS || t->kind == K_BANG) {
        next(p);
        /* `-128i8` is one literal, whose range is checked as a whole; `-(128i8)`
         * negates the literal 128i8, which must fit on its own */
        bool bare = peek(p)->kind != K_LPAREN;
        ast *operand = parse_unary(p);
        if (!operand) return NULL;
        if (t->kind == K_MINUS && bare && (operand->kind == A_INT || operand->kind == A_FLOAT) && !operand->negative) {
            operand->negative = true;
            operand->loc = t->loc;
            a = operand;
        } else {
            a = new_ast(p, A_UNOP, t->loc);
            vec kids = {0};
            if (!a || !push(p, &kids, operand)) return NULL;
            a->unop = t->kind == K_MINUS ? ST_OP_NEG : ST_OP_NOT;
            a = finish_kids(p, a, &kids);
        }
    } else {
        a = parse_postfix(p);
    }
    p->depth--;
    return a;
}

static ast *parse_binary(parser *p, int min_prec) {
    ast *left = parse_unary(p);
    for (;;) {
        if (!left) return NULL;
        st_binop op;
        const token *t = peek(p);
        if (!is_operator(t->kind, &op) || st_binop_precedence(op) < min_prec) return left;
        next(p);
        if (!enter(p)) return NULL;
        /* ** groups to the right: 2 ** 3 ** 2 is 2 ** 9 */
        ast *right = parse_binary(p, st_binop_precedence(op) + (op == ST_OP_POW ? 0 : 1));
        p->depth--;
        if (!right) return NULL;
        ast *a = new_ast(p, A_BINOP, t->loc);
        vec kids = {0};
        if (!a || !push(p, &kids, left) || !push(p, &kids, right)) return NULL;
        a->binop = op;
        left = finish_kids(p, a, &kids);
    }
}

/* Is a lambda at the cursor, bare (`y => …`, `(a, b) => …`) or in
 * parentheses (`(y => …)`)? *parens: the latter. */
static bool piped_lambda_ahead(const parser *p, bool *parens) {
    *parens = false;
    if (at(p, K_NAME)) return peek_at(p, 1)->kind == K_ARROW;
    if (!at(p, K_LPAREN)) return false;
    if (lambda_ahead(p)) return true;
    *parens = (peek_at(p, 1)->kind == K_NAME && peek_at(p, 2)->kind == K_ARROW) ||
              (peek_at(p, 1)->kind == K_LPAREN && lambda_ahead_at(p, p->i + 1));
    return *parens;
}

/* x |> (y => body), x |> y => body: let y = x in body, the anonymous
 * function applied to x (Futhark's `x |> \y -> body`); a lambda of several
 * parameters takes x's parts, as `let (a, b) = x` does. */
static ast *pipe_into_lambda(parser *p, ast *value, bool parens) {
    if (parens) next(p);
    ast *lam = parse_lambda(p);
    if (!lam) return NULL;
    if (parens && !expect(p, K_RPAREN, "`)` after the lambda")) return NULL;
    for (uint32_t i = 0; lam->nnames > 1 && i < lam->nnames; i++)
        if (lam->annots[i])
            return st_fail(p->err, lam->annots[i]->loc, "a lambda after `|>` of several parameters takes them "
                                                         "without types (they are the parts of what flows in)"),
                   NULL;
    ast *a = new_ast(p, A_LET, lam->loc); /* errors of the binding at its pattern */
    if (!a) return NULL;
    a->nnames = lam->nnames;
    a->names = lam->names;
    a->name_locs = lam->name_locs;
    a->annots = lam->annots;
    a->tuple_pattern = lam->nnames > 1;
    vec kids = {0};
    if (!push(p, &kids, value) || !push(p, &kids, lam->kids[0])) return NULL;
    return finish_kids(p, a, &kids);
}

/* x |> f(a, b) is f(a, b, x); x |> f is f(x); x |> (y => body) binds y */
static ast *parse_pipe(parser *p);

/* Is the cursor at `with [`, an update? `with` is a word only there: no
 * expression is followed by a bare name anywhere else. */
static bool with_ahead(const parser *p) {
    const token *t = peek(p);
    return t->kind == K_NAME && t->len == 4 && !memcmp(t->start, "with", 4) && peek_at(p, 1)->kind == K_LBRACK;
}

/* `a with [i] = v` and `a with [lo:hi] = b`, Futhark's, left to right:
 * `a with [0] = 1 with [1] = 2`. A call of `#with` (no name a program can
 * write) with a, the index or the bounds, and the value. */
static ast *parse_expr(parser *p) {
    ast *left = parse_pipe(p);
    while (left && with_ahead(p)) {
        const token *t = next(p);
        next(p); /* [ */
        vec args = {0};
        ast *call = new_ast(p, A_CALL, t->loc);
        ast *i = call && push(p, &args, left) ? parse_pipe(p) : NULL;
        if (!i || !push(p, &args, i)) return NULL;
        if (accept(p, K_COLON)) {
            ast *hi = parse_pipe(p);
            if (!hi || !push(p, &args, hi)) return NULL;
        }
        if (!expect(p, K_RBRACK, "`]` after the index of `with`") || !expect(p, K_ASSIGN, "`=` after `with [...]`"))
            return NULL;
        if (!enter(p)) return NULL;
        ast *v = parse_pipe(p);
        p->depth--;
        if (!v || !push(p, &args, v)) return NULL;
        if (!(call->name = st_intern_cstr(p->cx, "#with"))) return oom(p);
        left = finish_kids(p, call, &args);
    }
    return left;
}

static ast *parse_pipe(parser *p) {
    ast *left = parse_binary(p, 1);
    while (left && at(p, K_PIPE)) {
        next(p);
        bool parens;
        if (piped_lambda_ahead(p, &parens)) {
            if (!enter(p)) return NULL;
            left = pipe_into_lambda(p, left, parens);
            p->depth--;
            continue;
        }
        const token *t = peek(p);
        if (t->kind != K_NAME)
            return fail_tok(p, t, "a function after `|>`, as in `|> map(f)`, `|> unzip` or `|> (ys => …)`");
        next(p);
        ast *call = new_ast(p, A_CALL, t->loc);
        if (!call || !(call->name = name_of(p, t))) return NULL;
        vec args = {0};
        if (at(p, K_LPAREN) && !parse_args(p, &args)) return NULL;
        if (!push(p, &args, left)) return NULL;
        left = finish_kids(p, call, &args);
    }
    return left;
}

/* ---- types ---- */

static ast_type *parse_type(parser *p) {
    if (!enter(p)) return NULL;
    const token *t = peek(p);
    ast_type *ty = st_arena_zalloc(p->scratch, sizeof *ty);
    if (!ty) return oom(p);
    ty->loc = t->loc;
    if (t->kind == K_NAME && st_scalar_from_name(t->start, t->len, &ty->scalar)) {
        next(p);
        ty->kind = T_SCALAR;
    } else if (accept(p, K_LBRACK)) {
        ty->kind = T_ARRAY;
        if (!(ty->size = parse_expr(p)) || !expect(p, K_RBRACK, "`]` after the array length") ||
            !(ty->elem = parse_type(p)))
            return NULL;
    } else if (accept(p, K_LPAREN)) {
        vec items = {0};
        do {
            ast_type *item = parse_type(p);
            if (!item || !push(p, &items, item)) return NULL;
        } while (accept(p, K_COMMA));
        if (!expect(p, K_RPAREN, "`,` or `)` in a tuple type")) return NULL;
        if (items.n == 1) {
            p->depth--;
            return items.items[0];
        }
        ty->kind = T_TUPLE;
        ty->n = items.n;
        ty->items = (ast_type **)items.items;
    } else {
        return fail_tok(p, t, "a type (bool, i32, u32, i64, u64, f32, f64, [n]t or a tuple)");
    }
    p->depth--;
    return ty;
}

/* ---- definitions ---- */

static bool parse_fact(parser *p, vec *facts) {
    ast_fact *f = st_arena_zalloc(p->scratch, sizeof *f);
    if (!f) return oom(p), false;
    const token *t = peek(p);
    f->loc = t->loc;
    const char *shape = "a fact like `N % 256 == 0`";
    if (t->kind != K_NAME) return fail_tok(p, t, shape), false;
    next(p);
    if (!(f->name = name_of(p, t))) return false;
    if (!expect(p, K_PERCENT, "`%` in a fact like `N % 256 == 0`")) return false;
    const token *d = peek(p);
    if (d->kind != K_INT || d->has_suffix) return fail_tok(p, d, "a whole number in a fact like `N % 256 == 0`"), false;
    next(p);
    ast *dv = int_literal(p, d);
    if (!dv) return false;
    if (dv->magnitude == 0 || dv->magnitude > INT64_MAX) {
        st_fail(p->err, d->loc, "the divisor in a fact must be between 1 and %lld", (long long)INT64_MAX);
        return false;
    }
    f->divisor = (int64_t)dv->magnitude;
    if (!expect(p, K_EQ, "`==` in a fact like `N % 256 == 0`")) return false;
    const token *z = peek(p);
    if (z->kind != K_INT || z->len != 1 || z->start[0] != '0') return fail_tok(p, z, "`0`: a fact says that a size is a multiple of a number, `N % 256 == 0`"), false;
    next(p);
    return push(p, facts, f);
}

static bool parse_def(parser *p, ast_def *d) {
    if (!expect(p, K_DEF, "`def` to start a definition")) return false;
    const token *t = peek(p);
    if (!expect(p, K_NAME, "the definition's name after `def`")) return false;
    d->name = name_of(p, t);
    d->loc = t->loc;
    if (!d->name || !expect(p, K_LPAREN, "`(` and the parameters")) return false;
    vec params = {0};
    if (!at(p, K_RPAREN)) {
        do {
            ast_param *prm = st_arena_zalloc(p->scratch, sizeof *prm);
            if (!prm) return oom(p), false;
            const token *pt = peek(p);
            if (!expect(p, K_NAME, "a parameter name")) return false;
            prm->name = name_of(p, pt);
            prm->loc = pt->loc;
            if (!prm->name || !expect(p, K_COLON, "`:` and the parameter's type") ||
                !(prm->type = parse_type(p)) || !push(p, &params, prm))
                return false;
        } while (accept(p, K_COMMA));
    }
    if (!expect(p, K_RPAREN, "`,` or `)` after a parameter")) return false;
    d->nparams = params.n;
    d->params = st_arena_alloc(p->scratch, (params.n ? params.n : 1) * sizeof *d->params);
    if (!d->params) return oom(p), false;
    for (uint32_t i = 0; i < params.n; i++) d->params[i] = *(ast_param *)params.items[i];
    if (accept(p, K_COLON) && !(d->result = parse_type(p))) return false;
    vec facts = {0};
    if (accept(p, K_WHERE)) {
        do {
            if (!parse_fact(p, &facts)) return false;
        } while (accept(p, K_COMMA));
    }
    d->nfacts = facts.n;
    d->facts = st_arena_alloc(p->scratch, (facts.n ? facts.n : 1) * sizeof *d->facts);
    if (!d->facts) return oom(p), false;
    for (uint32_t i = 0; i < facts.n; i++) d->facts[i] = *(ast_fact *)facts.items[i];
    if (!expect(p, K_ASSIGN, d->result ? "`where` or `=` before the body" : "`:`, `where` or `=` before the body"))
        return false;
    return (d->body = parse_expr(p)) != NULL;
}

bool st_ast_parse(st_ctx *cx, st_arena *scratch, const char *file, const char *src, size_t len,
                  ast_program *out, st_err *err) {
    token *toks;
    size_t n;
    if (!st_lex(scratch, file, src, len, &toks, &n, err)) return false;
    parser p = {cx, scratch, file, toks, n, 0, 0, err};
    vec defs = {0};
    while (!at(&p, K_EOF)) {
        ast_def *d = st_arena_zalloc(scratch, sizeof *d);
        if (!d) return oom(&p), false;
        if (!parse_def(&p, d) || !push(&p, &defs, d)) return false;
        p.depth = 0;
    }
    if (defs.n == 0) return st_fail(err, (st_loc){file, 1, 1}, "the file defines nothing; a program is one or more `def`s");
    out->ndefs = defs.n;
    out->defs = st_arena_alloc(scratch, defs.n * sizeof *out->defs);
    if (!out->defs) return oom(&p), false;
    for (uint32_t i = 0; i < defs.n; i++) out->defs[i] = *(ast_def *)defs.items[i];
    return true;
}
