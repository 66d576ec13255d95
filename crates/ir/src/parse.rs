//! From `Sexp` to the core IR (`Program`): definitions inlined, `o` pipelines unfolded, partial
//! applications and function-valued arguments eta-expanded into lambdas, lambdas applied to
//! arguments turned into `let`s, and possibly-existential arguments K-normalized into `let`s.
//!
//! Elaboration works on compile-time values (`Val`): an expression already in the arena, a
//! variable, a size, or a function not yet applied. Functions only become IR when a primitive
//! needs one as an argument (`reify`), so no function value survives elaboration.

use crate::diag::{closest, Diagnostic, Span};
use crate::expr::*;
use crate::sexp::{read, too_deep, FloatSuffix, Sexp, SexpKind};
use crate::types::{Scalar, Type};
use arith::ArithExpr;
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
mod apply;
mod builtins;
use builtins::*;

type Result<T> = std::result::Result<T, Diagnostic>;

/// Reads and elaborates a whole `.lisp` file.
pub fn parse(src: &str) -> Result<Program> {
    let forms = read(src)?;
    let mut env = Env::default();
    let mut lift_form = None;
    for form in &forms {
        let items = form.as_list().unwrap_or(&[]);
        match items.first().and_then(Sexp::as_symbol) {
            Some("define") if lift_form.is_none() => define(items, form.span, &mut env)?,
            Some("define") => {
                return Err(Diagnostic::new(
                    form.span,
                    "definitions must come before the `lift` form",
                ))
            }
            Some("lift") if lift_form.is_none() => lift_form = Some(form),
            Some("lift") => return Err(Diagnostic::new(form.span, "a file holds exactly one `lift` form")),
            _ => {
                return Err(
                    Diagnostic::new(form.span, "expected `(define ...)` or `(lift ...)` at the top level")
                        .with_label("unexpected form"),
                )
            }
        }
    }
    let Some(lift) = lift_form else {
        let end = src.len();
        return Err(Diagnostic::new(
            Span::new(end, end),
            "no `(lift (sizes) (types) (lambda (params) body))` form in the file",
        ));
    };
    let prog = Elab::new().program(lift, env)?;
    check_depth(&prog)?;
    Ok(prog)
}

/// The expression tree may nest deeper than the text (`o` pipelines, inlined definitions):
/// bound it by the same limit, so later passes see nothing deeper than the reader allows.
fn check_depth(prog: &Program) -> Result<()> {
    let mut todo = vec![(prog.body, 1usize)];
    while let Some((id, depth)) = todo.pop() {
        if depth > crate::MAX_DEPTH {
            return Err(too_deep(prog.span(id)));
        }
        todo.extend(prog.children(id).into_iter().map(|c| (c, depth + 1)));
    }
    Ok(())
}

fn define(items: &[Sexp], span: Span, env: &mut Env) -> Result<()> {
    if items.len() != 3 {
        return Err(
            Diagnostic::new(span, "`define` takes a name (or `(name params...)`) and a body")
                .with_note("e.g. `(define (sq x) (* x x))` or `(define eps 0.0001f)`"),
        );
    }
    match &items[1].kind {
        SexpKind::Symbol(name) => {
            check_binder(name, items[1].span)?;
            let val = Val::Deferred(Rc::new((items[2].clone(), env.clone())));
            env.insert(name.clone(), val);
        }
        SexpKind::List(head) if !head.is_empty() => {
            let name = symbol(&head[0], "a function name")?;
            check_binder(name, head[0].span)?;
            let params = head[1..]
                .iter()
                .map(|p| Ok((symbol(p, "a parameter name")?.to_string(), p.span)))
                .collect::<Result<Vec<_>>>()?;
            let closure = Closure {
                params,
                body: items[2].clone(),
                env: env.clone(),
            };
            env.insert(name.to_string(), Val::Fun(Rc::new(Fun::Closure(closure, vec![]))));
        }
        _ => {
            return Err(Diagnostic::new(
                items[1].span,
                "expected a name or `(name params...)` after `define`",
            ))
        }
    }
    Ok(())
}

fn symbol<'a>(s: &'a Sexp, what: &str) -> Result<&'a str> {
    s.as_symbol()
        .ok_or_else(|| Diagnostic::new(s.span, format!("expected {what}")))
}

const KEYWORDS: &[&str] = &[
    "lambda", "let", "unpack", "pack", "if", "o", "define", "lift", "true", "false",
];

fn check_binder(name: &str, span: Span) -> Result<()> {
    if KEYWORDS.contains(&name) {
        return Err(Diagnostic::new(
            span,
            format!("`{name}` is a keyword and cannot be rebound"),
        ));
    }
    Ok(())
}

#[derive(Clone, Default)]
struct Env {
    names: HashMap<String, Val>,
}

impl Env {
    fn insert(&mut self, name: String, val: Val) {
        self.names.insert(name, val);
    }
}

#[derive(Clone)]
enum Val {
    /// An expression node, consumed by its one use.
    Expr(ExprId),
    /// A bound variable; every use makes a fresh `Var` node.
    Var(VarId),
    Size(ArithExpr),
    Fun(Rc<Fun>),
    /// A constant definition, elaborated where it is used.
    Deferred(Rc<(Sexp, Env)>),
}

#[derive(Clone)]
struct Closure {
    params: Vec<(String, Span)>,
    body: Sexp,
    env: Env,
}

enum Fun {
    /// A lambda or defined function, with the arguments given so far.
    Closure(Closure, Vec<Val>),
    /// A builtin with the arguments given so far (sizes included).
    Builtin(Builtin, Vec<Val>, Span),
    /// `(toGlobal f)` of a function `f`: apply `f`, then place the result.
    Place(AddressSpace, Rc<Fun>, Span),
}

struct Elab {
    prog: Program,
    fresh: u32,
    /// Current nesting of `elab`/`ty`/`size`: definitions inline into each other, so this can
    /// exceed the nesting of the text.
    depth: Rc<Cell<usize>>,
}

/// One level of elaboration; leaving it (drop) pops the level.
struct Level(Rc<Cell<usize>>);

impl Drop for Level {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

impl Elab {
    fn new() -> Elab {
        Elab {
            prog: Program {
                sizes: vec![],
                size_spans: vec![],
                params: vec![],
                exprs: vec![],
                spans: vec![],
                vars: vec![],
                body: ExprId(0),
            },
            fresh: 0,
            depth: Rc::new(Cell::new(0)),
        }
    }

    fn enter(&self, span: Span) -> Result<Level> {
        let d = self.depth.get() + 1;
        if d > crate::MAX_DEPTH {
            return Err(too_deep(span));
        }
        self.depth.set(d);
        Ok(Level(self.depth.clone()))
    }

    fn program(mut self, form: &Sexp, mut env: Env) -> Result<Program> {
        let items = form.as_list().expect("checked by caller");
        if items.len() != 4 {
            return Err(Diagnostic::new(
                form.span,
                "a `lift` form is `(lift (sizes...) (param types...) (lambda (params...) body))`",
            )
            .with_label(format!("has {} parts, expected 4", items.len())));
        }
        let sizes = items[1]
            .as_list()
            .ok_or_else(|| Diagnostic::new(items[1].span, "expected the list of size variables, e.g. `(N M)`"))?;
        for s in sizes {
            let name = symbol(s, "a size variable name")?;
            check_binder(name, s.span)?;
            if self.prog.sizes.iter().any(|n| n == name) {
                return Err(Diagnostic::new(
                    s.span,
                    format!("size variable `{name}` is declared twice"),
                ));
            }
            self.prog.sizes.push(name.to_string());
            self.prog.size_spans.push(s.span);
            env.insert(name.to_string(), Val::Size(ArithExpr::size_var(name)));
        }
        let types = items[2]
            .as_list()
            .ok_or_else(|| Diagnostic::new(items[2].span, "expected the list of parameter types"))?;
        let types = types
            .iter()
            .map(|t| Ok((self.ty(t, &env)?, t.span)))
            .collect::<Result<Vec<_>>>()?;
        let lam = items[3]
            .as_list()
            .filter(|l| l.len() == 3 && l[0].as_symbol() == Some("lambda"));
        let Some(lam) = lam else {
            return Err(Diagnostic::new(
                items[3].span,
                "expected `(lambda (params...) body)` as the program",
            ));
        };
        let params = lam[1]
            .as_list()
            .ok_or_else(|| Diagnostic::new(lam[1].span, "expected the parameter list"))?;
        if params.len() != types.len() {
            return Err(Diagnostic::new(
                lam[1].span,
                format!("{} parameters but {} parameter types", params.len(), types.len()),
            )
            .with_note("give one type per parameter, in order"));
        }
        for (p, (ty, ty_span)) in params.iter().zip(types) {
            let name = symbol(p, "a parameter name")?;
            check_binder(name, p.span)?;
            if let Some(prev) = self
                .prog
                .params
                .iter()
                .find(|q| self.prog.vars[q.var.index()].name == name)
            {
                let _ = prev;
                return Err(Diagnostic::new(p.span, format!("parameter `{name}` is declared twice")));
            }
            let var = self.prog.new_var(name, p.span);
            self.prog.params.push(Param { var, ty, ty_span });
            env.insert(name.to_string(), Val::Var(var));
        }
        let body = self.elab(&lam[2], &env)?;
        self.prog.body = self.expr(body, lam[2].span)?;
        Ok(self.prog)
    }

    fn ty(&self, t: &Sexp, env: &Env) -> Result<Type> {
        let _level = self.enter(t.span)?;
        match &t.kind {
            SexpKind::Symbol(s) => match s.as_str() {
                "float" => Ok(Type::Scalar(Scalar::Float)),
                "double" => Ok(Type::Scalar(Scalar::Double)),
                "int" => Ok(Type::Scalar(Scalar::Int)),
                "bool" => Ok(Type::Scalar(Scalar::Bool)),
                "uint" => Ok(Type::Scalar(Scalar::Uint)),
                "long" => Ok(Type::Scalar(Scalar::Long)),
                "ulong" => Ok(Type::Scalar(Scalar::Ulong)),
                _ => Err(Diagnostic::new(t.span, format!("unknown type `{s}`")).with_note(
                    "types are float, double, int, uint, long, ulong, bool, (array-type T n), (tuple-type T ...), (vector-type float 4)",
                )),
            },
            SexpKind::List(items) if !items.is_empty() => {
                let head = items[0].as_symbol().unwrap_or("");
                match head {
                    "array-type" if items.len() == 3 => Ok(Type::array(self.ty(&items[1], env)?, self.size(&items[2], env)?)),
                    "tuple-type" if items.len() >= 2 => Ok(Type::Tuple(items[1..].iter().map(|i| self.ty(i, env)).collect::<Result<_>>()?)),
                    "vector-type" if items.len() == 3 => {
                        let Type::Scalar(s) = self.ty(&items[1], env)? else {
                            return Err(Diagnostic::new(items[1].span, "vector elements must be a scalar type"));
                        };
                        let w = match items[2].kind {
                            SexpKind::Int(w) => w,
                            SexpKind::Size(w) => w as i64,
                            _ => -1,
                        };
                        if ![2, 3, 4, 8, 16].contains(&w) {
                            return Err(Diagnostic::new(items[2].span, "vector width must be 2, 3, 4, 8 or 16"));
                        }
                        Ok(Type::Vector(s, w as u8))
                    }
                    _ => Err(Diagnostic::new(t.span, "malformed type")
                        .with_note("types are float, double, int, uint, long, ulong, bool, (array-type T n), (tuple-type T ...), (vector-type float 4)")),
                }
            }
            _ => Err(Diagnostic::new(t.span, "expected a type")),
        }
    }

    /// A size expression: `#4`, `4`, a size variable, or `(+ a b)` etc.
    fn size(&self, s: &Sexp, env: &Env) -> Result<ArithExpr> {
        let _level = self.enter(s.span)?;
        let bad = || {
            Diagnostic::new(s.span, "expected a size expression")
                .with_note("sizes are size variables, natural numbers like #4, or (+ a b), (- a b), (* a b), (/ a b), (% a b), (pow a b)")
        };
        match &s.kind {
            SexpKind::Size(n) => Ok(ArithExpr::cst(*n as i64)),
            SexpKind::Int(n) if *n >= 0 => Ok(ArithExpr::cst(*n)),
            SexpKind::Symbol(name) => match env.names.get(name) {
                Some(Val::Size(e)) => Ok(e.clone()),
                Some(Val::Deferred(d)) => self.size(&d.0, &d.1),
                Some(_) => Err(Diagnostic::new(s.span, format!("`{name}` is not a size"))),
                None => Err(Diagnostic::new(s.span, format!("unknown size variable `{name}`"))
                    .with_note("declare size variables in the first list of the `lift` form")),
            },
            SexpKind::List(items) if items.len() == 3 => {
                let a = self.size(&items[1], env)?;
                let b = self.size(&items[2], env)?;
                size_op(items[0].as_symbol().unwrap_or(""), &a, &b, s.span).ok_or_else(bad)?
            }
            _ => Err(bad()),
        }
    }

    fn fresh_name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    /// Turns a value into an expression node (a fresh `Var` node for variables).
    fn expr(&mut self, v: Val, span: Span) -> Result<ExprId> {
        match v {
            Val::Expr(e) => Ok(e),
            Val::Var(var) => Ok(self.prog.push(Expr::Var(var), span)),
            Val::Size(s) => Err(Diagnostic::new(span, format!("the size `{s}` is used as a value"))
                .with_note("sizes describe array lengths; they are not run-time values here")),
            Val::Fun(_) => Err(Diagnostic::new(span, "expected a value, found a function")
                .with_note("a function must be applied to all its arguments here")),
            Val::Deferred(d) => {
                let v = self.elab(&d.0, &d.1)?;
                self.expr(v, span)
            }
        }
    }

    fn elab(&mut self, s: &Sexp, env: &Env) -> Result<Val> {
        let _level = self.enter(s.span)?;
        match &s.kind {
            SexpKind::Int(i) => Ok(self.lit(Lit::Int(*i as i32), s.span)),
            SexpKind::Uint(u) => Ok(self.lit(Lit::Uint(*u), s.span)),
            SexpKind::Long(l) => Ok(self.lit(Lit::Long(*l), s.span)),
            SexpKind::Ulong(u) => Ok(self.lit(Lit::Ulong(*u), s.span)),
            SexpKind::Float(f, FloatSuffix::D) => Ok(self.lit(Lit::Double(*f), s.span)),
            SexpKind::Float(f, FloatSuffix::F | FloatSuffix::None) => Ok(self.lit(Lit::Float(*f as f32), s.span)),
            SexpKind::Bool(b) => Ok(self.lit(Lit::Bool(*b), s.span)),
            SexpKind::Size(n) => Ok(Val::Size(ArithExpr::cst(*n as i64))),
            SexpKind::Symbol(name) => self.lookup(name, s.span, env),
            SexpKind::List(items) => {
                let Some(head) = items.first() else {
                    return Err(Diagnostic::new(s.span, "empty application `()`"));
                };
                match head.as_symbol() {
                    Some("lambda") => self.lambda(items, s.span, env),
                    Some("let") | Some("unpack") => self.let_form(items, s.span, env),
                    Some("pack") => {
                        if items.len() != 2 {
                            return Err(Diagnostic::new(s.span, "`pack` takes one expression"));
                        }
                        let v = self.elab(&items[1], env)?;
                        let e = self.expr(v, items[1].span)?;
                        Ok(Val::Expr(self.prog.push(Expr::Pack(e), s.span)))
                    }
                    Some("if") => {
                        if items.len() != 4 {
                            return Err(Diagnostic::new(
                                s.span,
                                "`if` takes a condition and two branches: `(if c a b)`",
                            ));
                        }
                        let mut ids = vec![];
                        for it in &items[1..] {
                            let v = self.elab(it, env)?;
                            ids.push(self.expr(v, it.span)?);
                        }
                        Ok(Val::Expr(self.prog.push(
                            Expr::If {
                                cond: ids[0],
                                then: ids[1],
                                els: ids[2],
                            },
                            s.span,
                        )))
                    }
                    Some("o") => {
                        if items.len() < 3 {
                            return Err(Diagnostic::new(
                                s.span,
                                "`o` takes functions and then the argument: `(o f g xs)` is `(f (g xs))`",
                            ));
                        }
                        let mut val = self.elab(&items[items.len() - 1], env)?;
                        for f in items[1..items.len() - 1].iter().rev() {
                            let fv = self.elab(f, env)?;
                            val = self.apply(
                                fv,
                                vec![(val, items[items.len() - 1].span)],
                                f.span.join(s.span),
                                f.span,
                            )?;
                        }
                        Ok(val)
                    }
                    Some("define") => Err(Diagnostic::new(
                        s.span,
                        "`define` is only allowed at the top level, before the `lift` form",
                    )),
                    Some("lift") => Err(Diagnostic::new(s.span, "a `lift` form cannot be nested")),
                    Some("-") if items.len() == 2 => {
                        let v = self.elab(&items[1], env)?;
                        if let Val::Size(_) = v {
                            return Err(Diagnostic::new(s.span, "sizes cannot be negative"));
                        }
                        let e = self.expr(v, items[1].span)?;
                        Ok(Val::Expr(self.prog.push(
                            Expr::Op {
                                op: Op::Neg,
                                args: vec![e],
                            },
                            s.span,
                        )))
                    }
                    _ => {
                        let f = self.elab(head, env)?;
                        let mut args = vec![];
                        for a in &items[1..] {
                            args.push((self.elab(a, env)?, a.span));
                        }
                        self.apply(f, args, s.span, head.span)
                    }
                }
            }
        }
    }

    fn lit(&mut self, l: Lit, span: Span) -> Val {
        Val::Expr(self.prog.push(Expr::Lit(l), span))
    }

    fn lookup(&mut self, name: &str, span: Span, env: &Env) -> Result<Val> {
        if let Some(v) = env.names.get(name) {
            return match v {
                Val::Deferred(d) => {
                    let d = d.clone();
                    self.elab(&d.0, &d.1)
                }
                other => Ok(other.clone()),
            };
        }
        if let Some(b) = builtin(name) {
            return Ok(Val::Fun(Rc::new(Fun::Builtin(b, vec![], span))));
        }
        if let Some(d) = crate::unsupported::primitive(name, span) {
            return Err(d);
        }
        let mut d = Diagnostic::new(span, format!("unknown name `{name}`")).with_label("not defined");
        let candidates = env
            .names
            .keys()
            .map(String::as_str)
            .chain(BUILTIN_NAMES.iter().copied());
        if let Some(c) = closest(name, candidates) {
            d = d.with_note(format!("did you mean `{c}`?"));
        }
        Err(d)
    }

    fn lambda(&mut self, items: &[Sexp], span: Span, env: &Env) -> Result<Val> {
        if items.len() != 3 {
            return Err(Diagnostic::new(
                span,
                "`lambda` takes a parameter list and one body: `(lambda (x) body)`",
            ));
        }
        let ps = items[1]
            .as_list()
            .ok_or_else(|| Diagnostic::new(items[1].span, "expected a parameter list like `(x y)`"))?;
        let mut params = vec![];
        for p in ps {
            let name = symbol(p, "a parameter name")?;
            check_binder(name, p.span)?;
            params.push((name.to_string(), p.span));
        }
        if params.is_empty() {
            return Err(Diagnostic::new(items[1].span, "a lambda needs at least one parameter"));
        }
        let closure = Closure {
            params,
            body: items[2].clone(),
            env: env.clone(),
        };
        Ok(Val::Fun(Rc::new(Fun::Closure(closure, vec![]))))
    }

    fn let_form(&mut self, items: &[Sexp], span: Span, env: &Env) -> Result<Val> {
        let kw = items[0].as_symbol().unwrap_or("let");
        if items.len() != 4 {
            return Err(Diagnostic::new(
                span,
                format!("`{kw}` takes a name, a value and a body: `({kw} x e body)`"),
            ));
        }
        let name = symbol(&items[1], "a variable name")?;
        check_binder(name, items[1].span)?;
        let value = self.elab(&items[2], env)?;
        let kind = if kw == "unpack" { LetKind::Unpack } else { LetKind::Let };
        let mut inner = env.clone();
        match value {
            // Functions and sizes are compile-time values: bind them and inline.
            Val::Fun(_) | Val::Size(_) | Val::Deferred(_) if kind == LetKind::Let => {
                inner.insert(name.to_string(), value);
                self.elab(&items[3], &inner)
            }
            value => {
                let value = self.expr(value, items[2].span)?;
                let var = self.prog.new_var(name, items[1].span);
                inner.insert(name.to_string(), Val::Var(var));
                let body = self.elab(&items[3], &inner)?;
                let body = self.expr(body, items[3].span)?;
                Ok(Val::Expr(self.prog.push(Expr::Let { kind, var, value, body }, span)))
            }
        }
    }
}

fn size_expected(span: Span) -> Diagnostic {
    Diagnostic::new(span, "expected a size here")
        .with_label("not a size")
        .with_note("write a size literal like #4 or a size variable like N")
}

fn positive((e, span): &(ArithExpr, Span)) -> Result<ArithExpr> {
    if e.as_cst().is_some_and(|c| c <= 0) {
        return Err(Diagnostic::new(*span, format!("this size must be positive, it is {e}")));
    }
    Ok(e.clone())
}

fn size_op(op: &str, a: &ArithExpr, b: &ArithExpr, span: Span) -> Option<Result<ArithExpr>> {
    let zero = |b: &ArithExpr| b.as_cst() == Some(0);
    Some(Ok(match op {
        "+" => a.add(b),
        "-" => a.sub(b),
        "*" => a.mul(b),
        "/" if zero(b) => return Some(Err(Diagnostic::new(span, "size division by zero"))),
        "/" => a.div(b),
        "%" if zero(b) => return Some(Err(Diagnostic::new(span, "size modulo by zero"))),
        "%" => a.rem(b),
        "pow" => a.pow(b),
        _ => return None,
    }))
}
