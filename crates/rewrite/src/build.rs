//! Building a low-level program in the IR's arena, with the invariants `ir::parse` establishes
//! (see `ir::expr`): every primitive fully applied with `Lambda` function arguments, lambdas
//! applied to arguments turned into `let`s (variables substituted), arguments that may be
//! existential bound by `let` (K-normal form). Names are resolved lexically, innermost binding
//! first, as the reader would resolve the same program written as text.

use ir::{AddressSpace, Expr, ExprId, LetKind, Lit, Op, Param, Prim, Program, Span, VarId};
use std::collections::BTreeMap;

/// An argument of a function applied during lowering: a variable (substituted, as the reader
/// does) or a computed value (bound by `let`).
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    Var(VarId),
    Expr(ExprId),
}

pub struct Builder<'a> {
    /// The high-level program being lowered; leaves are copied from it.
    pub src: &'a Program,
    /// Display names of `src`'s variables (`ir::print::var_names`), the names terms use.
    names: &'a [String],
    pub out: Program,
    scope: Vec<(String, VarId)>,
    /// Span of nodes that come from no node of `src`: the program's body.
    span: Span,
    fresh: usize,
    /// Why the program cannot be built (a name out of scope, a leaf that is not a function),
    /// if it cannot: the variant is then rejected, as text that does not parse was.
    pub broken: Option<String>,
}

/// Mark of the arena's state, to undo what a trial build added.
pub struct Mark {
    exprs: usize,
    vars: usize,
    fresh: usize,
}

impl<'a> Builder<'a> {
    /// Parameter types are typeck's (`info`), which read divisions under the program's
    /// divisibility checks (a declared `(* (/ N 2) 2)` is `N` under `2 | N`): a variant may
    /// drop the primitive that gave the check (`join ∘ split = id`), and variants only run
    /// where the original's checks hold.
    pub fn new(src: &'a Program, info: &typeck::TypeInfo, names: &'a [String]) -> Builder<'a> {
        let mut out = Program {
            sizes: src.sizes.clone(),
            size_spans: src.size_spans.clone(),
            params: vec![],
            exprs: vec![],
            spans: vec![],
            vars: vec![],
            body: ExprId(0),
        };
        let mut scope = vec![];
        for p in &src.params {
            let name = names[p.var.index()].clone();
            let var = out.new_var(&name, src.var(p.var).span);
            scope.push((name, var));
            // A filter-result parameter (a host loop's state) stays existential: its variable's
            // type names a length that only this program's binder knows.
            let ty = match &p.ty {
                ir::Type::Exists(_) => p.ty.clone(),
                _ => info.var_types[p.var.index()].clone().unwrap_or_else(|| p.ty.clone()),
            };
            out.params.push(Param {
                var,
                ty,
                ty_span: p.ty_span,
            });
        }
        Builder {
            span: src.span(src.body),
            src,
            names,
            out,
            scope,
            fresh: 0,
            broken: None,
        }
    }

    pub fn finish(mut self, body: ExprId) -> Result<Program, String> {
        if let Some(why) = self.broken {
            return Err(why);
        }
        self.out.body = body;
        Ok(self.out)
    }

    pub fn mark(&self) -> Mark {
        Mark {
            exprs: self.out.exprs.len(),
            vars: self.out.vars.len(),
            fresh: self.fresh,
        }
    }

    /// Forgets every node and variable made since `m` (none of them may be in scope).
    pub fn rollback(&mut self, m: Mark) {
        self.out.exprs.truncate(m.exprs);
        self.out.spans.truncate(m.exprs);
        self.out.vars.truncate(m.vars);
        self.fresh = m.fresh;
    }

    fn push(&mut self, e: Expr, span: Span) -> ExprId {
        self.out.push(e, span)
    }

    /// A new variable named `name`, in scope until [`Builder::unbind`].
    pub fn bind(&mut self, name: &str) -> VarId {
        let v = self.out.new_var(name, self.span);
        self.scope.push((name.to_string(), v));
        v
    }

    /// A new variable named `name` that lookups of `alias` find (until [`Builder::unbind`]):
    /// for a second binder of a source variable in one program, which the printer would
    /// otherwise rename (and the program read back from its text would then differ).
    pub fn bind_alias(&mut self, alias: &str, name: &str) -> VarId {
        let v = self.out.new_var(name, self.span);
        self.scope.push((alias.to_string(), v));
        v
    }

    pub fn unbind(&mut self, v: VarId) {
        if let Some(i) = self.scope.iter().rposition(|(_, x)| *x == v) {
            self.scope.remove(i);
        }
    }

    pub fn lookup(&mut self, name: &str) -> VarId {
        match self.scope.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => *v,
            None => {
                self.broken
                    .get_or_insert_with(|| format!("`{name}` is used outside its binding"));
                VarId(0)
            }
        }
    }

    pub fn var(&mut self, v: VarId) -> ExprId {
        self.push(Expr::Var(v), self.span)
    }

    /// The variable `name` (innermost binding) as an expression.
    pub fn name(&mut self, name: &str) -> ExprId {
        let v = self.lookup(name);
        self.var(v)
    }

    pub fn int(&mut self, i: i64) -> ExprId {
        self.push(Expr::Lit(Lit::Int(i as i32)), self.span)
    }

    pub fn lit(&mut self, l: Lit) -> ExprId {
        self.push(Expr::Lit(l), self.span)
    }

    pub fn if_(&mut self, cond: ExprId, then: ExprId, els: ExprId) -> ExprId {
        self.push(Expr::If { cond, then, els }, self.span)
    }

    pub fn lambda(&mut self, params: Vec<VarId>, body: ExprId) -> ExprId {
        self.push(Expr::Lambda { params, body }, self.span)
    }

    pub fn let_(&mut self, var: VarId, value: ExprId, body: ExprId) -> ExprId {
        self.push(
            Expr::Let {
                kind: LetKind::Let,
                var,
                value,
                body,
            },
            self.span,
        )
    }

    pub fn op(&mut self, op: Op, args: Vec<ExprId>) -> ExprId {
        self.push(Expr::Op { op, args }, self.span)
    }

    pub fn to(&mut self, space: AddressSpace, e: ExprId) -> ExprId {
        self.push(
            Expr::Prim {
                prim: Prim::To(space),
                args: vec![e],
            },
            self.span,
        )
    }

    pub fn prim(&mut self, prim: Prim, args: Vec<ExprId>) -> ExprId {
        let span = self.span;
        self.prim_at(prim, args, span)
    }

    /// A primitive applied to `args`, arguments that may be existential bound by `let` first
    /// (as `ir::parse` binds them, so the type checker unpacks them there).
    pub fn prim_at(&mut self, prim: Prim, args: Vec<ExprId>, span: Span) -> ExprId {
        if let Prim::To(_) = prim {
            return self.push(Expr::Prim { prim, args }, span);
        }
        let mut lets = vec![];
        let mut new_args = vec![];
        for a in args {
            if self.may_be_existential(a) {
                self.fresh += 1;
                let name = format!("k{}", self.fresh);
                let aspan = self.out.span(a);
                let var = self.out.new_var(&name, aspan);
                lets.push((var, a));
                new_args.push(self.push(Expr::Var(var), aspan));
            } else {
                new_args.push(a);
            }
        }
        let mut e = self.push(Expr::Prim { prim, args: new_args }, span);
        for (var, value) in lets.into_iter().rev() {
            e = self.push(
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

    /// Whether an expression may produce an existential array (syntactically), as the reader
    /// decides it.
    fn may_be_existential(&self, e: ExprId) -> bool {
        match self.out.expr(e) {
            Expr::Prim {
                prim: Prim::Filter(_), ..
            }
            | Expr::Pack(_)
            | Expr::Let { .. }
            | Expr::Op {
                op: Op::At | Op::Get(_),
                ..
            } => true,
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.may_be_existential(args[0]),
            Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. } => false,
        }
    }

    /// A copy of the subtree `id` of the source program: its binders fresh, its free variables
    /// resolved by name in the current scope.
    pub fn copy(&mut self, id: ExprId) -> ExprId {
        self.copy_with(id, &mut BTreeMap::new())
    }

    /// The source lambda `f` applied to `args`: variables substituted for its parameters,
    /// computed arguments bound by `let` around its body (as the reader elaborates
    /// `((lambda (x y) body) a (g b))`).
    pub fn apply(&mut self, f: ExprId, args: &[Arg]) -> ExprId {
        let Expr::Lambda { params, body } = self.src.expr(f).clone() else {
            self.broken
                .get_or_insert_with(|| "an opaque leaf applied as a function is not a lambda".into());
            return self.int(0);
        };
        if params.len() != args.len() {
            self.broken
                .get_or_insert_with(|| format!("a function of {} parameters applied to {}", params.len(), args.len()));
            return self.int(0);
        }
        let mut subst = BTreeMap::new();
        let mut lets = vec![];
        for (p, a) in params.iter().zip(args) {
            let v = match a {
                Arg::Var(v) => *v,
                Arg::Expr(e) => {
                    let v = self.out.new_var(&self.names[p.index()], self.src.var(*p).span);
                    lets.push((v, *e));
                    v
                }
            };
            subst.insert(*p, v);
        }
        let mut e = self.copy_with(body, &mut subst);
        for (var, value) in lets.into_iter().rev() {
            e = self.let_(var, value, e);
        }
        e
    }

    fn copy_with(&mut self, id: ExprId, map: &mut BTreeMap<VarId, VarId>) -> ExprId {
        let span = self.src.span(id);
        let fresh = |b: &mut Self, v: VarId| b.out.new_var(&b.names[v.index()], b.src.var(v).span);
        let e = match self.src.expr(id).clone() {
            Expr::Var(v) => {
                let nv = match map.get(&v) {
                    Some(nv) => *nv,
                    None => {
                        let name = self.names[v.index()].clone();
                        self.lookup(&name)
                    }
                };
                Expr::Var(nv)
            }
            Expr::Lit(l) => Expr::Lit(l),
            Expr::Lambda { params, body } => {
                let saved: Vec<_> = params.iter().map(|p| (*p, map.get(p).copied())).collect();
                let new: Vec<VarId> = params.iter().map(|p| fresh(self, *p)).collect();
                for (p, n) in params.iter().zip(&new) {
                    map.insert(*p, *n);
                }
                let body = self.copy_with(body, map);
                restore(map, saved);
                Expr::Lambda { params: new, body }
            }
            Expr::Let { kind, var, value, body } => {
                let value = self.copy_with(value, map);
                let saved = vec![(var, map.get(&var).copied())];
                let nv = fresh(self, var);
                map.insert(var, nv);
                let body = self.copy_with(body, map);
                restore(map, saved);
                Expr::Let {
                    kind,
                    var: nv,
                    value,
                    body,
                }
            }
            Expr::Prim { prim, args } => Expr::Prim {
                prim,
                args: args.iter().map(|a| self.copy_with(*a, map)).collect(),
            },
            Expr::Op { op, args } => Expr::Op {
                op,
                args: args.iter().map(|a| self.copy_with(*a, map)).collect(),
            },
            Expr::If { cond, then, els } => Expr::If {
                cond: self.copy_with(cond, map),
                then: self.copy_with(then, map),
                els: self.copy_with(els, map),
            },
            Expr::Pack(inner) => Expr::Pack(self.copy_with(inner, map)),
        };
        self.push(e, span)
    }
}

fn restore(map: &mut BTreeMap<VarId, VarId>, saved: Vec<(VarId, Option<VarId>)>) {
    for (p, old) in saved {
        match old {
            Some(o) => map.insert(p, o),
            None => map.remove(&p),
        };
    }
}
