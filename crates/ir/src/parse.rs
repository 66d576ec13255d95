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

/// Built-in operations, by name.
#[derive(Clone, Debug)]
enum Builtin {
    Prim(PrimHead),
    Op(Op),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum PrimHead {
    Map(MapKind),
    Reduce(ReduceKind),
    Zip,
    Split,
    Join,
    Transpose,
    Slide,
    Pad,
    PadClamp,
    ReorderStride,
    Reverse,
    Generate,
    Iterate,
    IterateUntil,
    Filter(FilterKind),
    AsVector,
    AsScalar,
    To(AddressSpace),
}

/// How a builtin is applied.
struct Shape {
    sizes: usize,
    /// Positions (after the sizes) that take functions, with the function's arity.
    funs: &'static [(usize, usize)],
    /// Arguments after the sizes; `None` means variadic (at least two, all at once).
    args: Option<usize>,
}

impl PrimHead {
    fn shape(self) -> Shape {
        let (sizes, funs, args): (usize, &'static [(usize, usize)], Option<usize>) = match self {
            PrimHead::Map(_) => (0, &[(0, 1)], Some(2)),
            PrimHead::Reduce(_) => (0, &[(0, 2)], Some(3)),
            PrimHead::Zip => (0, &[], None),
            PrimHead::Split | PrimHead::ReorderStride | PrimHead::AsVector => (1, &[], Some(1)),
            PrimHead::Join | PrimHead::Transpose | PrimHead::Reverse | PrimHead::AsScalar | PrimHead::To(_) => {
                (0, &[], Some(1))
            }
            PrimHead::Slide | PrimHead::PadClamp => (2, &[], Some(1)),
            PrimHead::Pad => (2, &[], Some(2)),
            PrimHead::Generate => (1, &[(0, 1)], Some(1)),
            PrimHead::Iterate => (1, &[(0, 1)], Some(2)),
            PrimHead::IterateUntil => (1, &[(0, 2), (1, 1)], Some(3)),
            PrimHead::Filter(_) => (0, &[(0, 1)], Some(2)),
        };
        Shape { sizes, funs, args }
    }
}

fn op_shape(op: Op) -> Shape {
    let (sizes, args) = match op {
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem | Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne => {
            (0, Some(2))
        }
        Op::And | Op::Or | Op::Min | Op::Max | Op::Pow | Op::Dot | Op::At => (0, Some(2)),
        Op::Not | Op::Neg | Op::Abs | Op::Sqrt | Op::Exp | Op::Log | Op::Sin | Op::Cos => (0, Some(1)),
        Op::ToFloat | Op::ToInt | Op::ToDouble | Op::ToUint | Op::ToLong | Op::ToUlong | Op::Length => (0, Some(1)),
        Op::As(_) | Op::BitNot => (0, Some(1)),
        Op::BitAnd | Op::BitOr | Op::BitXor | Op::Shl | Op::Shr | Op::Rotl => (0, Some(2)),
        Op::Fma => (0, Some(3)),
        Op::MakeVec | Op::Tuple => (0, None),
        Op::VGet(_) | Op::Get(_) => (1, Some(1)),
    };
    Shape { sizes, funs: &[], args }
}

fn builtin(name: &str) -> Option<Builtin> {
    use PrimHead as P;
    let prim = |p| Some(Builtin::Prim(p));
    let op = |o| Some(Builtin::Op(o));
    match name {
        "map" => prim(P::Map(MapKind::Plain)),
        "mapGlb" | "mapGlb0" => prim(P::Map(MapKind::Glb(0))),
        "mapGlb1" => prim(P::Map(MapKind::Glb(1))),
        "mapGlb2" => prim(P::Map(MapKind::Glb(2))),
        "mapWrg" | "mapWrg0" => prim(P::Map(MapKind::Wrg(0))),
        "mapWrg1" => prim(P::Map(MapKind::Wrg(1))),
        "mapWrg2" => prim(P::Map(MapKind::Wrg(2))),
        "mapLcl" | "mapLcl0" => prim(P::Map(MapKind::Lcl(0))),
        "mapLcl1" => prim(P::Map(MapKind::Lcl(1))),
        "mapLcl2" => prim(P::Map(MapKind::Lcl(2))),
        "mapSeq" => prim(P::Map(MapKind::Seq)),
        "mapSeqUnroll" => prim(P::Map(MapKind::SeqUnroll)),
        "mapVec" => prim(P::Map(MapKind::Vec)),
        "reduce" => prim(P::Reduce(ReduceKind::Plain)),
        "reduceSeq" => prim(P::Reduce(ReduceKind::Seq)),
        "reduceSeqUnroll" => prim(P::Reduce(ReduceKind::SeqUnroll)),
        "zip" => prim(P::Zip),
        "split" => prim(P::Split),
        "join" => prim(P::Join),
        "transpose" => prim(P::Transpose),
        "slide" => prim(P::Slide),
        "pad" => prim(P::Pad),
        "pad-clamp" => prim(P::PadClamp),
        "reorder-stride" => prim(P::ReorderStride),
        "reverse" => prim(P::Reverse),
        "generate" => prim(P::Generate),
        "iterate" => prim(P::Iterate),
        "iterate-until" => prim(P::IterateUntil),
        "filter" => prim(P::Filter(FilterKind::Plain)),
        "filterSeq" => prim(P::Filter(FilterKind::Seq)),
        "filterGlb" => prim(P::Filter(FilterKind::Glb)),
        "asVector" => prim(P::AsVector),
        "asScalar" => prim(P::AsScalar),
        "toGlobal" => prim(P::To(AddressSpace::Global)),
        "toLocal" => prim(P::To(AddressSpace::Local)),
        "toPrivate" => prim(P::To(AddressSpace::Private)),
        "+" => op(Op::Add),
        "-" => op(Op::Sub),
        "*" => op(Op::Mul),
        "/" => op(Op::Div),
        "%" => op(Op::Rem),
        "<" => op(Op::Lt),
        "<=" => op(Op::Le),
        ">" => op(Op::Gt),
        ">=" => op(Op::Ge),
        "=" => op(Op::Eq),
        "!=" => op(Op::Ne),
        "and" => op(Op::And),
        "or" => op(Op::Or),
        "not" => op(Op::Not),
        "min" => op(Op::Min),
        "max" => op(Op::Max),
        "abs" => op(Op::Abs),
        "sqrt" => op(Op::Sqrt),
        "exp" => op(Op::Exp),
        "log" => op(Op::Log),
        "sin" => op(Op::Sin),
        "cos" => op(Op::Cos),
        "pow" => op(Op::Pow),
        "fma" => op(Op::Fma),
        "to-float" => op(Op::ToFloat),
        "to-int" => op(Op::ToInt),
        "to-double" => op(Op::ToDouble),
        "to-uint" => op(Op::ToUint),
        "to-long" => op(Op::ToLong),
        "to-ulong" => op(Op::ToUlong),
        "as-int" => op(Op::As(Scalar::Int)),
        "as-uint" => op(Op::As(Scalar::Uint)),
        "as-long" => op(Op::As(Scalar::Long)),
        "as-ulong" => op(Op::As(Scalar::Ulong)),
        "as-float" => op(Op::As(Scalar::Float)),
        "as-double" => op(Op::As(Scalar::Double)),
        "bit-and" => op(Op::BitAnd),
        "bit-or" => op(Op::BitOr),
        "bit-xor" => op(Op::BitXor),
        "bit-not" => op(Op::BitNot),
        "shl" => op(Op::Shl),
        "shr" => op(Op::Shr),
        "rotl" => op(Op::Rotl),
        "dot" => op(Op::Dot),
        "length" => op(Op::Length),
        "vec" => op(Op::MakeVec),
        "vget" => op(Op::VGet(0)),
        "tuple" => op(Op::Tuple),
        "get" => op(Op::Get(0)),
        "at" => op(Op::At),
        _ => None,
    }
}

/// Every name a user may write, for "did you mean" notes.
const BUILTIN_NAMES: &[&str] = &[
    "map",
    "mapGlb",
    "mapGlb1",
    "mapGlb2",
    "mapWrg",
    "mapWrg1",
    "mapWrg2",
    "mapLcl",
    "mapLcl1",
    "mapLcl2",
    "mapSeq",
    "mapSeqUnroll",
    "mapVec",
    "reduce",
    "reduceSeq",
    "reduceSeqUnroll",
    "zip",
    "split",
    "join",
    "transpose",
    "slide",
    "pad",
    "pad-clamp",
    "reorder-stride",
    "reverse",
    "generate",
    "iterate",
    "iterate-until",
    "filter",
    "filterSeq",
    "filterGlb",
    "asVector",
    "asScalar",
    "toGlobal",
    "toLocal",
    "toPrivate",
    "and",
    "or",
    "not",
    "min",
    "max",
    "abs",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "pow",
    "fma",
    "to-float",
    "to-int",
    "to-double",
    "dot",
    "length",
    "vec",
    "vget",
    "tuple",
    "get",
    "at",
    "lambda",
    "let",
    "unpack",
    "pack",
    "if",
];

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

    /// Applies a function value to arguments; too few makes a partial application, too many
    /// applies the result to the rest.
    fn apply(&mut self, f: Val, args: Vec<(Val, Span)>, span: Span, head_span: Span) -> Result<Val> {
        let f = match f {
            Val::Fun(f) => f,
            Val::Deferred(d) => {
                let v = self.elab(&d.0, &d.1)?;
                return self.apply(v, args, span, head_span);
            }
            Val::Size(_) => return Err(Diagnostic::new(head_span, "a size cannot be applied to arguments")),
            Val::Expr(_) | Val::Var(_) => {
                return Err(Diagnostic::new(
                    head_span,
                    "this is a value, not a function, so it cannot be applied to arguments",
                ))
            }
        };
        match &*f {
            Fun::Closure(c, given) => {
                let mut all: Vec<Val> = given.clone();
                let mut rest = args.into_iter();
                let mut spans = vec![];
                while all.len() < c.params.len() {
                    match rest.next() {
                        Some((v, s)) => {
                            all.push(v);
                            spans.push(s);
                        }
                        None => return Ok(Val::Fun(Rc::new(Fun::Closure(c.clone(), all)))),
                    }
                }
                let result = self.call_closure(c, all, span)?;
                let takes = c.params.len();
                self.apply_rest(result, rest.collect(), span, head_span, takes)
            }
            Fun::Builtin(b, given, bspan) => {
                let shape = match b {
                    Builtin::Prim(p) => p.shape(),
                    Builtin::Op(o) => op_shape(*o),
                };
                let mut all: Vec<(Val, Span)> = given.iter().map(|v| (v.clone(), *bspan)).collect();
                let Some(n_args) = shape.args else {
                    // Variadic builtins take all their arguments in one application.
                    all.extend(args);
                    return self.build_builtin(b, all, span, head_span);
                };
                let need = shape.sizes + n_args;
                let mut rest = args.into_iter();
                while all.len() < need {
                    match rest.next() {
                        Some(a) => all.push(a),
                        None => {
                            let vals = all.into_iter().map(|(v, _)| v).collect();
                            return Ok(Val::Fun(Rc::new(Fun::Builtin(b.clone(), vals, head_span))));
                        }
                    }
                }
                let result = self.build_builtin(b, all, span, head_span)?;
                self.apply_rest(result, rest.collect(), span, head_span, need)
            }
            Fun::Place(space, inner, pspan) => {
                let v = self.apply(Val::Fun(inner.clone()), args, span, head_span)?;
                match v {
                    Val::Fun(g) => Ok(Val::Fun(Rc::new(Fun::Place(*space, g, *pspan)))),
                    v => {
                        let e = self.expr(v, span)?;
                        Ok(Val::Expr(self.prog.push(
                            Expr::Prim {
                                prim: Prim::To(*space),
                                args: vec![e],
                            },
                            span,
                        )))
                    }
                }
            }
        }
    }

    /// Applies the result of a saturated call to the arguments left over; `takes` is how many
    /// the called function took, for the message when the result is not a function.
    fn apply_rest(
        &mut self,
        result: Val,
        rest: Vec<(Val, Span)>,
        span: Span,
        head_span: Span,
        takes: usize,
    ) -> Result<Val> {
        if rest.is_empty() {
            return Ok(result);
        }
        match result {
            Val::Fun(_) | Val::Deferred(_) => self.apply(result, rest, span, head_span),
            _ => {
                let given = takes + rest.len();
                Err(Diagnostic::new(
                    rest[0].1,
                    format!("too many arguments: this function takes {takes}, but is given {given}"),
                )
                .with_label("this argument is not expected"))
            }
        }
    }

    fn call_closure(&mut self, c: &Closure, args: Vec<Val>, span: Span) -> Result<Val> {
        let mut env = c.env.clone();
        let mut lets = vec![];
        for ((name, pspan), v) in c.params.iter().zip(args) {
            let v = match v {
                // A computed value used by a parameter that may appear several times: share it.
                Val::Expr(e) => {
                    let var = self.prog.new_var(name, *pspan);
                    lets.push((var, e));
                    Val::Var(var)
                }
                other => other,
            };
            env.insert(name.clone(), v);
        }
        let body = self.elab(&c.body, &env)?;
        if lets.is_empty() {
            return Ok(body);
        }
        let mut e = self.expr(body, c.body.span)?;
        for (var, value) in lets.into_iter().rev() {
            e = self.prog.push(
                Expr::Let {
                    kind: LetKind::Let,
                    var,
                    value,
                    body: e,
                },
                span,
            );
        }
        Ok(Val::Expr(e))
    }

    /// Makes a lambda node of `arity` parameters from a function value (eta-expansion).
    fn reify(&mut self, f: Val, arity: usize, span: Span) -> Result<ExprId> {
        let f = match f {
            Val::Fun(f) => f,
            Val::Deferred(d) => {
                let v = self.elab(&d.0, &d.1)?;
                return self.reify(v, arity, span);
            }
            Val::Expr(_) | Val::Var(_) | Val::Size(_) => return Err(Diagnostic::new(span, "expected a function here")
                .with_label("not a function")
                .with_note(
                    "write `(lambda (x) ...)`, a defined function, or a partially applied primitive like `(mapSeq f)`",
                )),
        };
        // A lambda of k parameters applied to one k-tuple (as Lift's user functions are).
        if let Fun::Closure(c, given) = &*f {
            let k = c.params.len() - given.len();
            if arity == 1 && k > 1 {
                let name = self.fresh_name("t");
                let tvar = self.prog.new_var(&name, span);
                let mut args: Vec<(Val, Span)> = vec![];
                for i in 0..k {
                    let t = self.prog.push(Expr::Var(tvar), span);
                    let g = self.prog.push(
                        Expr::Op {
                            op: Op::Get(i as u8),
                            args: vec![t],
                        },
                        span,
                    );
                    args.push((Val::Expr(g), span));
                }
                let body = self.apply(Val::Fun(f.clone()), args, span, span)?;
                let body = self.expr(body, span)?;
                return Ok(self.prog.push(
                    Expr::Lambda {
                        params: vec![tvar],
                        body,
                    },
                    span,
                ));
            }
        }
        let mut params = vec![];
        let mut args = vec![];
        for i in 0..arity {
            let name = match &*f {
                Fun::Closure(c, given) => c.params.get(given.len() + i).map(|p| p.0.clone()),
                Fun::Builtin(..) | Fun::Place(..) => None,
            };
            let name = name.unwrap_or_else(|| self.fresh_name("p"));
            let var = self.prog.new_var(&name, span);
            params.push(var);
            args.push((Val::Var(var), span));
        }
        let takes = self.arity(&f);
        let called = |takes: usize| {
            Diagnostic::new(
                span,
                format!("this function takes {takes} argument(s), but is called with {arity} here"),
            )
        };
        let body = match self.apply(Val::Fun(f), args, span, span) {
            Ok(body) => body,
            // Called with more arguments than it takes: say so in the caller's terms.
            Err(_) if takes.is_some_and(|t| t < arity) => {
                return Err(
                    called(takes.unwrap_or(0)).with_note("the primitive calls it with more arguments than it takes")
                )
            }
            Err(e) => return Err(e),
        };
        if let Val::Fun(h) = body {
            let d = match takes {
                Some(t) if t > arity => {
                    called(t).with_note("the primitive calls it with fewer arguments than it takes")
                }
                // It takes what it is given, but its body still waits for arguments.
                _ => {
                    let missing = match self.arity(&h) {
                        Some(k) => format!("{k} more argument(s)"),
                        None => "more arguments".to_string(),
                    };
                    Diagnostic::new(
                        span,
                        format!("this function returns a function, not a value: its body needs {missing}"),
                    )
                    .with_note("a function or primitive in the body is applied to fewer arguments than it takes")
                }
            };
            return Err(d);
        }
        let body = self.expr(body, span)?;
        Ok(self.prog.push(Expr::Lambda { params, body }, span))
    }

    /// How many more arguments a function value takes before it produces a value (`None`:
    /// variadic, or not known without applying it).
    fn arity(&self, f: &Fun) -> Option<usize> {
        match f {
            Fun::Closure(c, given) => Some(c.params.len() - given.len()),
            Fun::Builtin(b, given, _) => {
                let shape = match b {
                    Builtin::Prim(p) => p.shape(),
                    Builtin::Op(o) => op_shape(*o),
                };
                Some(shape.sizes + shape.args? - given.len())
            }
            Fun::Place(_, inner, _) => self.arity(inner),
        }
    }

    fn build_builtin(&mut self, b: &Builtin, args: Vec<(Val, Span)>, span: Span, head_span: Span) -> Result<Val> {
        let (name, shape) = match b {
            Builtin::Prim(p) => (format!("{p:?}"), p.shape()),
            Builtin::Op(o) => (o.name(), op_shape(*o)),
        };
        let _ = name;
        if let Builtin::Op(op @ (Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem | Op::Pow)) = b {
            if args.iter().any(|(v, _)| matches!(v, Val::Size(_))) {
                return self.size_arith(*op, args, span);
            }
        }
        let mut sizes = vec![];
        let mut rest = args.into_iter();
        for _ in 0..shape.sizes {
            let (v, s) = rest.next().expect("apply collected enough arguments");
            match v {
                Val::Size(e) => sizes.push((e, s)),
                Val::Deferred(d) => match self.elab(&d.0, &d.1)? {
                    Val::Size(e) => sizes.push((e, s)),
                    _ => return Err(size_expected(s)),
                },
                _ => return Err(size_expected(s)),
            }
        }
        let rest: Vec<(Val, Span)> = rest.collect();
        if shape.args.is_none() && rest.len() < 2 {
            let what = match b {
                Builtin::Prim(_) => "`zip` takes at least two arrays",
                Builtin::Op(Op::Tuple) => "`tuple` takes at least two components",
                Builtin::Op(_) => "`vec` takes 2, 3, 4, 8 or 16 components",
            };
            return Err(Diagnostic::new(span, what));
        }
        let mut ids = vec![];
        for (i, (v, s)) in rest.into_iter().enumerate() {
            if let Some((_, arity)) = shape.funs.iter().find(|(pos, _)| *pos == i) {
                ids.push(self.reify(v, *arity, s)?);
                continue;
            }
            // `(toGlobal f)` of a function places the function's result.
            if let (Builtin::Prim(PrimHead::To(space)), Val::Fun(g)) = (b, &v) {
                return Ok(Val::Fun(Rc::new(Fun::Place(*space, g.clone(), head_span))));
            }
            ids.push(self.expr(v, s)?);
        }
        match b {
            Builtin::Op(op) => {
                let op = match op {
                    Op::VGet(_) | Op::Get(_) => {
                        let (k, s) = &sizes[0];
                        let Some(k) = k.as_cst().filter(|k| (0..16).contains(k)) else {
                            return Err(Diagnostic::new(*s, "the component index must be a literal like #0"));
                        };
                        if let Op::Get(_) = op {
                            Op::Get(k as u8)
                        } else {
                            Op::VGet(k as u8)
                        }
                    }
                    other => *other,
                };
                Ok(Val::Expr(self.prog.push(Expr::Op { op, args: ids }, span)))
            }
            Builtin::Prim(p) => {
                let size = |i: usize| sizes[i].0.clone();
                let prim = match p {
                    PrimHead::Map(k) => Prim::Map(*k),
                    PrimHead::Reduce(k) => Prim::Reduce(*k),
                    PrimHead::Zip => Prim::Zip,
                    PrimHead::Split => Prim::Split(positive(&sizes[0])?),
                    PrimHead::Join => Prim::Join,
                    PrimHead::Transpose => Prim::Transpose,
                    PrimHead::Slide => Prim::Slide(positive(&sizes[0])?, positive(&sizes[1])?),
                    PrimHead::Pad => Prim::Pad(size(0), size(1)),
                    PrimHead::PadClamp => Prim::PadClamp(size(0), size(1)),
                    PrimHead::ReorderStride => Prim::ReorderStride(positive(&sizes[0])?),
                    PrimHead::Reverse => Prim::Reverse,
                    PrimHead::Generate => Prim::Generate(positive(&sizes[0])?),
                    PrimHead::Iterate => Prim::Iterate(size(0)),
                    PrimHead::IterateUntil => Prim::IterateUntil(positive(&sizes[0])?),
                    PrimHead::Filter(k) => Prim::Filter(*k),
                    PrimHead::AsVector => {
                        let (w, s) = &sizes[0];
                        match w.as_cst() {
                            Some(w @ (2 | 3 | 4 | 8 | 16)) => Prim::AsVector(w as u8),
                            _ => return Err(Diagnostic::new(*s, "the vector width must be #2, #3, #4, #8 or #16")),
                        }
                    }
                    PrimHead::AsScalar => Prim::AsScalar,
                    PrimHead::To(s) => Prim::To(*s),
                };
                let ids = self.k_normalize(&prim, ids, span);
                Ok(Val::Expr(ids))
            }
        }
    }

    /// `(* N 2)` where a size is expected: arithmetic on sizes and natural literals.
    fn size_arith(&mut self, op: Op, args: Vec<(Val, Span)>, span: Span) -> Result<Val> {
        let mut sizes = vec![];
        for (v, s) in args {
            match v {
                Val::Size(e) => sizes.push(e),
                Val::Expr(e) => match self.prog.expr(e) {
                    Expr::Lit(Lit::Int(i)) if *i >= 0 => sizes.push(ArithExpr::cst(i64::from(*i))),
                    _ => {
                        return Err(Diagnostic::new(
                            s,
                            "sizes can only be combined with sizes and natural numbers",
                        ))
                    }
                },
                _ => {
                    return Err(Diagnostic::new(
                        s,
                        "sizes can only be combined with sizes and natural numbers",
                    ))
                }
            }
        }
        let name = match op {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            _ => "pow",
        };
        size_op(name, &sizes[0], &sizes[1], span)
            .expect("arithmetic operator")
            .map(Val::Size)
    }

    /// Whether an expression may produce an existential array (syntactically).
    fn may_be_existential(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Filter(_), ..
            }
            | Expr::Pack(_) => true,
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.may_be_existential(args[0]),
            // A let that unpacks may pack its body: always bind it.
            Expr::Let { .. } => true,
            Expr::Op {
                op: Op::At | Op::Get(_),
                ..
            } => true,
            Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. } => false,
        }
    }

    /// Binds arguments that may be existential arrays with `let`, so that the type checker can
    /// unpack them there (thesis §4.2.1 step 1). Other arguments stay nested.
    fn k_normalize(&mut self, prim: &Prim, args: Vec<ExprId>, span: Span) -> ExprId {
        if let Prim::To(_) = prim {
            return self.prog.push(
                Expr::Prim {
                    prim: prim.clone(),
                    args,
                },
                span,
            );
        }
        let mut lets = vec![];
        let mut new_args = vec![];
        for a in args {
            if self.may_be_existential(a) {
                let name = self.fresh_name("k");
                let aspan = self.prog.span(a);
                let var = self.prog.new_var(&name, aspan);
                lets.push((var, a));
                new_args.push(self.prog.push(Expr::Var(var), aspan));
            } else {
                new_args.push(a);
            }
        }
        let mut e = self.prog.push(
            Expr::Prim {
                prim: prim.clone(),
                args: new_args,
            },
            span,
        );
        for (var, value) in lets.into_iter().rev() {
            e = self.prog.push(
                Expr::Let {
                    kind: LetKind::Let,
                    var,
                    value,
                    body: e,
                },
                span,
            );
        }
        e
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
