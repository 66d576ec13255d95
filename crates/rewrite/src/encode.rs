//! Program → e-graph term. Lambdas without array primitives become opaque leaves (their source
//! text kept in a table), one-parameter lambdas with array primitives inside become `lam` nodes,
//! everything the rules do not look at is an `Other` node or an opaque leaf.

use crate::egraph::{
    Assoc, Data, LeafInfo, Lift, Ret, FLOAT_ELEMS, FLOAT_ROWS, LANEWISE, SCALAR_ROWS, ZERO_PRODUCT, ZIP2,
};
use arith::ArithExpr;
use egg::{Id, RecExpr, Symbol};
use ir::{Expr, ExprId, LetKind, Lit, MapKind, Op, Prim, Program, ReduceKind, Scalar, ScanKind, Type};
use std::collections::BTreeMap;
use typeck::TypeInfo;

pub struct Encoded {
    pub expr: RecExpr<Lift>,
    pub leaves: BTreeMap<Symbol, LeafInfo>,
    /// Source text of opaque leaves (`@i`) and heads of `Other` nodes (`head|i`), for
    /// descriptions and the cost model.
    pub text: BTreeMap<Symbol, String>,
    /// The source node of each opaque leaf and `Other` head, which lowering copies.
    pub origin: BTreeMap<Symbol, ExprId>,
    /// The opaque leaves that are a component of a variable, `get #k v`: `(k, v)` (a zipped
    /// stencil's function reads its window and its grids' points so, `rules::stencil`).
    pub components: BTreeMap<Symbol, (usize, Symbol)>,
    /// Every variable name of the program, so fresh names avoid them.
    pub names: Vec<String>,
}

pub fn encode(prog: &Program, info: &TypeInfo) -> Encoded {
    let names = ir::print::var_names(prog);
    let mut e = Enc {
        prog,
        info,
        names: &names,
        out: Encoded {
            expr: RecExpr::default(),
            leaves: BTreeMap::new(),
            text: BTreeMap::new(),
            origin: BTreeMap::new(),
            components: BTreeMap::new(),
            names: names.clone(),
        },
        counter: 0,
    };
    e.expr(prog.body);
    e.out
}

struct Enc<'a> {
    prog: &'a Program,
    info: &'a TypeInfo,
    names: &'a [String],
    out: Encoded,
    counter: usize,
}

/// Data of a value of type `t`.
fn type_data(t: &Type) -> Data {
    let mut d = Data::default();
    if let Type::Array(e, n) = t {
        d.len = Some(n.clone());
        match &**e {
            Type::Array(r, m) => {
                d.inner = Some(m.clone());
                if matches!(**r, Type::Scalar(_) | Type::Vector(..)) {
                    d.flags |= SCALAR_ROWS;
                }
                if **r == Type::Scalar(Scalar::Float) {
                    d.flags |= FLOAT_ROWS;
                }
            }
            Type::Scalar(Scalar::Float) => d.flags |= FLOAT_ELEMS,
            _ => {}
        }
    }
    d
}

impl Enc<'_> {
    fn add(&mut self, n: Lift) -> Id {
        self.out.expr.add(n)
    }

    /// A variable of the program as a leaf.
    fn var_leaf(&mut self, v: ir::VarId) -> Id {
        let sym = Symbol::from(self.names[v.index()].as_str());
        let mut d = self.info.var_types[v.index()]
            .as_ref()
            .map(type_data)
            .unwrap_or_default();
        d.free = vec![sym];
        self.out.leaves.insert(sym, LeafInfo { data: d });
        self.add(Lift::Sym(sym))
    }

    /// An opaque leaf for the subtree `id`, which may mention variables bound outside it.
    fn opaque(&mut self, id: ExprId, mut data: Data) -> Id {
        let mut free: Vec<Symbol> = ir_free_vars(self.prog, id)
            .into_iter()
            .map(|v| Symbol::from(self.names[v.index()].as_str()))
            .collect();
        free.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
        free.dedup();
        data.free = free;
        let text = self.text(id);
        let sym = Symbol::from(format!("@{}", self.counter));
        self.counter += 1;
        if let Expr::Op { op: Op::Get(k), args } = self.prog.expr(id) {
            if let [a] = args.as_slice() {
                if let Expr::Var(v) = self.prog.expr(*a) {
                    let var = Symbol::from(self.names[v.index()].as_str());
                    self.out.components.insert(sym, (usize::from(*k), var));
                }
            }
        }
        self.out.text.insert(sym, text);
        self.out.origin.insert(sym, id);
        self.out.leaves.insert(sym, LeafInfo { data });
        self.add(Lift::Sym(sym))
    }

    fn has_array_prim(&self, id: ExprId) -> bool {
        matches!(self.prog.expr(id), Expr::Prim { .. })
            || self.prog.children(id).into_iter().any(|c| self.has_array_prim(c))
    }

    fn expr(&mut self, id: ExprId) -> Id {
        let ty = self.info.types[id.index()].clone();
        let data = ty.as_ref().map(type_data).unwrap_or_default();
        match self.prog.expr(id).clone() {
            Expr::Var(v) => self.var_leaf(v),
            Expr::Prim { prim, args } => match (&prim, args.as_slice()) {
                (Prim::Map(MapKind::Plain), [f, x]) => {
                    let f = self.func(*f);
                    let x = self.expr(*x);
                    self.add(Lift::Map([f, x]))
                }
                (Prim::Reduce(ReduceKind::Plain), [f, z, x]) => {
                    let f = self.func(*f);
                    let z = self.expr(*z);
                    let x = self.expr(*x);
                    self.add(Lift::Reduce([f, z, x]))
                }
                // only scans that code generation can run across the device (`scanGlb`)
                (Prim::Scan(ScanKind::Plain), [f, z, x])
                    if matches!(self.info.types[z.index()], Some(Type::Scalar(_) | Type::Vector(..))) =>
                {
                    let f = self.func(*f);
                    let z = self.expr(*z);
                    let x = self.expr(*x);
                    self.add(Lift::Scan([f, z, x]))
                }
                (Prim::Split(k), [x]) if k.as_cst().is_some() => {
                    let k = self.add(Lift::Num(k.as_cst().unwrap_or(1)));
                    let x = self.expr(*x);
                    self.add(Lift::Split([k, x]))
                }
                (Prim::Join, [x]) => {
                    let x = self.expr(*x);
                    self.add(Lift::Join(x))
                }
                (Prim::AsVector(w), [x]) => {
                    let w = self.add(Lift::Num(i64::from(*w)));
                    let x = self.expr(*x);
                    self.add(Lift::AsVector([w, x]))
                }
                (Prim::AsScalar, [x]) => {
                    let x = self.expr(*x);
                    self.add(Lift::AsScalar(x))
                }
                _ => {
                    let mut head = prim.name();
                    for s in prim.size_args() {
                        head.push(' ');
                        head.push_str(&size_text(&s));
                    }
                    let kids: Vec<Id> = args
                        .iter()
                        .map(|a| match self.prog.expr(*a) {
                            Expr::Lambda { .. } => self.func(*a),
                            _ => self.expr(*a),
                        })
                        .collect();
                    let sym = Symbol::from(format!("{head}|{}", self.counter));
                    self.counter += 1;
                    self.out.text.insert(sym, head);
                    self.out.origin.insert(sym, id);
                    let mut data = data;
                    if prim == Prim::Zip && args.len() == 2 {
                        data.flags |= ZIP2;
                    }
                    self.out.leaves.insert(sym, LeafInfo { data });
                    self.add(Lift::Other(sym, kids))
                }
            },
            Expr::Let {
                kind: LetKind::Let,
                var,
                value,
                body,
            } => {
                let x = self.var_leaf(var);
                let v = self.expr(value);
                let b = self.expr(body);
                self.add(Lift::Let([x, v, b]))
            }
            _ => {
                let mut d = data;
                if let Expr::Lit(l) = self.prog.expr(id) {
                    d.lit = match l {
                        Lit::Float(f) => Some(f64::from(*f)),
                        Lit::Double(f) => Some(*f),
                        Lit::Int(i) => Some(f64::from(*i)),
                        Lit::Bool(_) => None,
                        Lit::Uint(u) => Some(f64::from(*u)),
                        Lit::Long(l) => Some(*l as f64),
                        Lit::Ulong(u) => Some(*u as f64),
                    };
                }
                self.opaque(id, d)
            }
        }
    }

    /// A function argument (always a `Lambda` after parsing).
    fn func(&mut self, id: ExprId) -> Id {
        let Expr::Lambda { params, body } = self.prog.expr(id).clone() else {
            return self.expr(id);
        };
        if params.len() == 1 && self.has_array_prim(body) {
            let x = self.var_leaf(params[0]);
            let b = self.expr(body);
            return self.add(Lift::Lam([x, b]));
        }
        let mut d = Data::default();
        if let Some(Type::Fun(_, r)) = &self.info.types[id.index()] {
            if let Type::Array(_, n) = &**r {
                d.ret = Ret::Const(n.clone());
            }
        }
        // a body that never reads its argument (a constant, a float from outside) stays a
        // float when the argument is a vector: `asScalar` of its map does not type-check
        if params.len() == 1
            && self.lanewise(body)
            && ir_free_vars(self.prog, body).contains(&params[0])
            && self.fma_operands_vary(body, params[0])
        {
            d.flags |= LANEWISE;
        }
        if params.len() == 1 && self.product_of_components(params[0], body) {
            d.flags |= ZERO_PRODUCT;
        }
        if params.len() == 2 {
            if let Expr::Op { op, args } = self.prog.expr(body) {
                let vars: Vec<_> = args
                    .iter()
                    .map(|a| match self.prog.expr(*a) {
                        Expr::Var(v) => Some(*v),
                        _ => None,
                    })
                    .collect();
                let both = vars.len() == 2
                    && vars[0].is_some()
                    && vars[1].is_some()
                    && vars[0] != vars[1]
                    && vars.iter().all(|v| v.is_some_and(|v| params.contains(&v)));
                if both {
                    d.assoc = match op {
                        Op::Add => Some(Assoc::Add),
                        Op::Mul => Some(Assoc::Mul),
                        Op::Min | Op::Max => Some(Assoc::MinMax),
                        _ => None,
                    };
                }
            }
        }
        self.opaque(id, d)
    }

    /// `(* (get #i p) (get #j p))` with `float` components, or sums, differences and products
    /// of such components (`a·b + c`, `bench/indep/zip3sum.lisp`): zero where every component
    /// is (`zero_at_zero`).
    fn product_of_components(&self, p: ir::VarId, body: ExprId) -> bool {
        let float = |a: ExprId| matches!(self.info.types[a.index()], Some(Type::Scalar(Scalar::Float)));
        matches!(
            self.prog.expr(body),
            Expr::Op {
                op: Op::Add | Op::Sub | Op::Mul,
                ..
            }
        ) && zero_at_zero(self.prog, p, body, &float)
    }

    /// Only float arithmetic on float variables and literals: the same code works on `float4`.
    fn lanewise(&self, id: ExprId) -> bool {
        let float = |t: Option<&Type>| matches!(t, Some(Type::Scalar(Scalar::Float)));
        match self.prog.expr(id) {
            Expr::Var(v) => float(self.info.var_types[v.index()].as_ref()),
            Expr::Lit(Lit::Float(_)) => true,
            Expr::Op { op, args } => {
                matches!(
                    op,
                    Op::Add
                        | Op::Sub
                        | Op::Mul
                        | Op::Div
                        | Op::Neg
                        | Op::Min
                        | Op::Max
                        | Op::Abs
                        | Op::Sqrt
                        | Op::Exp
                        | Op::Log
                        | Op::Sin
                        | Op::Cos
                        | Op::Fma
                ) && float(self.info.types[id.index()].as_ref())
                    && args.iter().all(|a| self.lanewise(*a))
            }
            _ => false,
        }
    }

    /// Every `fma` in `id` has the three operands read `x`: `fma` takes no mix of vectors and
    /// floats (unlike `+` or `min`), so one operand that stays a float when `x` is a vector
    /// makes the vectorized function ill-typed.
    fn fma_operands_vary(&self, id: ExprId, x: ir::VarId) -> bool {
        match self.prog.expr(id) {
            Expr::Op { op, args } => {
                (*op != Op::Fma || args.iter().all(|a| ir_free_vars(self.prog, *a).contains(&x)))
                    && args.iter().all(|a| self.fma_operands_vary(*a, x))
            }
            _ => true,
        }
    }

    /// Flat LIFT source of a subtree, with the program's variable names.
    pub fn text(&self, id: ExprId) -> String {
        subtree_text(self.prog, self.names, id)
    }
}

/// Variables occurring free in a subtree.
fn ir_free_vars(prog: &Program, id: ExprId) -> Vec<ir::VarId> {
    let mut out = vec![];
    let mut bound = vec![];
    collect_free(prog, id, &mut bound, &mut out);
    out
}

fn collect_free(prog: &Program, id: ExprId, bound: &mut Vec<ir::VarId>, out: &mut Vec<ir::VarId>) {
    match prog.expr(id) {
        Expr::Var(v) => {
            if !bound.contains(v) {
                out.push(*v);
            }
        }
        Expr::Lambda { params, body } => {
            let n = bound.len();
            bound.extend(params.iter().copied());
            collect_free(prog, *body, bound, out);
            bound.truncate(n);
        }
        Expr::Let { var, value, body, .. } => {
            collect_free(prog, *value, bound, out);
            bound.push(*var);
            collect_free(prog, *body, bound, out);
            bound.pop();
        }
        _ => {
            for c in prog.children(id) {
                collect_free(prog, c, bound, out);
            }
        }
    }
}

fn size_text(e: &ArithExpr) -> String {
    match e.as_cst() {
        Some(c) if c >= 0 => format!("#{c}"),
        _ => e.to_string(),
    }
}

/// Flat LIFT source of one subtree (the same spelling as `ir::print::program`).
pub fn subtree_text(prog: &Program, names: &[String], id: ExprId) -> String {
    let n = |v: &ir::VarId| names[v.index()].clone();
    let kids = |args: &[ExprId]| -> String {
        args.iter()
            .map(|a| format!(" {}", subtree_text(prog, names, *a)))
            .collect()
    };
    match prog.expr(id) {
        Expr::Var(v) => n(v),
        Expr::Lit(l) => ir::print::lit(l),
        Expr::Lambda { params, body } => format!(
            "(lambda ({}) {})",
            params.iter().map(n).collect::<Vec<_>>().join(" "),
            subtree_text(prog, names, *body)
        ),
        Expr::Prim { prim, args } => {
            let mut head = prim.name();
            for s in prim.size_args() {
                head.push(' ');
                head.push_str(&size_text(&s));
            }
            format!("({head}{})", kids(args))
        }
        Expr::Op { op, args } => {
            let head = match op {
                Op::Get(i) | Op::VGet(i) => format!("{} #{i}", op.name()),
                _ => op.name(),
            };
            format!("({head}{})", kids(args))
        }
        Expr::If { cond, then, els } => format!("(if{})", kids(&[*cond, *then, *els])),
        Expr::Let { kind, var, value, body } => {
            let kw = match kind {
                LetKind::Let => "let",
                LetKind::Unpack => "unpack",
            };
            format!("({kw} {}{})", n(var), kids(&[*value, *body]))
        }
        Expr::Pack(e) => format!("(pack {})", subtree_text(prog, names, *e)),
    }
}

/// Names for `subtree_text` under which two programs that differ only in the names of their
/// binders read the same: each variable bound in the body is `v{n}`, `n` its binder's place in
/// the text (the builder's fresh names depend on the term lowered: `let k4 (map …) (reduce …
/// k4)` and `reduce … (let k1 … (map … k1))` lower to one program). The program's parameters
/// keep their names.
pub fn canonical_names(prog: &Program) -> Vec<String> {
    fn walk(prog: &Program, id: ExprId, names: &mut [String], next: &mut usize) {
        let mut bind = |v: &ir::VarId, names: &mut [String]| {
            names[v.index()] = format!("v{next}");
            *next += 1;
        };
        match prog.expr(id) {
            Expr::Var(_) | Expr::Lit(_) => {}
            Expr::Lambda { params, body } => {
                for p in params {
                    bind(p, names);
                }
                walk(prog, *body, names, next);
            }
            Expr::Let { var, value, body, .. } => {
                bind(var, names);
                walk(prog, *value, names, next);
                walk(prog, *body, names, next);
            }
            Expr::Prim { args, .. } | Expr::Op { args, .. } => {
                for a in args {
                    walk(prog, *a, names, next);
                }
            }
            Expr::If { cond, then, els } => {
                for a in [cond, then, els] {
                    walk(prog, *a, names, next);
                }
            }
            Expr::Pack(e) => walk(prog, *e, names, next),
        }
    }
    let mut names = ir::print::var_names(prog);
    walk(prog, prog.body, &mut names, &mut 0);
    names
}

/// Whether `body` is zero wherever the components of `p` it reads are: a component `(get #i
/// p)` (`component` says it is a float), or a sum, difference or product of two such bodies
/// (no literal: `0·x` is not zero for an infinite `x`, and a constant term is not zero).
/// Padding every component with zeros then adds nothing to a sum of `body` (`grid-reduce-*`,
/// `wg-reduce-pad-*`), and the same arithmetic applies to vectors lane by lane.
pub(crate) fn zero_at_zero(prog: &ir::Program, p: ir::VarId, body: ExprId, component: &dyn Fn(ExprId) -> bool) -> bool {
    match prog.expr(body) {
        Expr::Op { op: Op::Get(_), args } => matches!(prog.expr(args[0]), Expr::Var(v) if *v == p) && component(body),
        Expr::Op {
            op: Op::Add | Op::Sub | Op::Mul,
            args,
        } => args.len() == 2 && args.iter().all(|a| zero_at_zero(prog, p, *a, component)),
        _ => false,
    }
}
