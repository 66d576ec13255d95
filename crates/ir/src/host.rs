//! Host sections (LANGUAGE.md, "Host sections"): which parts of a program run on the host.
//!
//! The host level is the program's body outside every kernel: `let`s, `if`s, the data
//! arguments of primitives, and the functions of *host loops*. A host loop is an
//! `iterate-until` at host level, or an `iterate` at host level whose count is a size variable
//! or whose function launches kernels: it runs as a loop on the host over device buffers, its
//! function's kernels generated once. Every other `iterate` is unrolled inside its kernel, as
//! before. The type checker admits array-valued `if`s and `[bool]1` conditions only at host
//! level; the driver splits a program with host sections into kernel programs around them.

use crate::expr::*;

/// Which nodes are evaluated at host level, indexed by [`ExprId`].
pub fn host_level(prog: &Program) -> Vec<bool> {
    let mut level = vec![false; prog.exprs.len()];
    let mut work = vec![prog.body];
    while let Some(e) = work.pop() {
        if level[e.index()] {
            continue;
        }
        level[e.index()] = true;
        match prog.expr(e) {
            Expr::Prim { args, .. } => {
                let host_loop = is_host_loop(prog, e);
                for a in args {
                    match prog.expr(*a) {
                        // A loop's functions run on the host (their bodies launch kernels);
                        // every other primitive's function is kernel code.
                        Expr::Lambda { body, .. } if host_loop => work.push(*body),
                        Expr::Lambda { .. } => {}
                        _ => work.push(*a),
                    }
                }
            }
            Expr::Lambda { .. } => {}
            _ => work.extend(prog.children(e)),
        }
    }
    level
}

/// Whether the node is a host loop (see the module doc), wherever it stands; callers ask this
/// of host-level nodes.
pub fn is_host_loop(prog: &Program, e: ExprId) -> bool {
    match prog.expr(e) {
        Expr::Prim {
            prim: Prim::IterateUntil(_),
            ..
        } => true,
        Expr::Prim {
            prim: Prim::Iterate(k),
            args,
        } => k.as_cst().is_none() || args.first().is_some_and(|f| launches_kernels(prog, *f)),
        _ => false,
    }
}

/// Whether evaluating `e` at host level starts kernels of its own: a parallel or high-level
/// map, reduction or filter, or a host loop, anywhere inside.
pub fn launches_kernels(prog: &Program, e: ExprId) -> bool {
    let mut work = vec![e];
    while let Some(e) = work.pop() {
        if let Expr::Prim { prim, .. } = prog.expr(e) {
            let kernel = match prim {
                Prim::Map(k) => matches!(k, MapKind::Plain | MapKind::Glb(_) | MapKind::Wrg(_)),
                Prim::Reduce(k) => matches!(k, ReduceKind::Plain),
                Prim::Filter(k) => matches!(k, FilterKind::Plain | FilterKind::Glb),
                Prim::Scan(k) => matches!(k, ScanKind::Plain | ScanKind::Glb),
                Prim::IterateUntil(_) => true,
                Prim::Zip
                | Prim::Split(_)
                | Prim::Join
                | Prim::Transpose
                | Prim::Slide(..)
                | Prim::Pad(..)
                | Prim::PadClamp(..)
                | Prim::ReorderStride(_)
                | Prim::Reverse
                | Prim::Generate(_)
                | Prim::Iterate(_)
                | Prim::AsVector(_)
                | Prim::AsScalar
                | Prim::To(_) => false,
            };
            if kernel {
                return true;
            }
        }
        work.extend(prog.children(e));
    }
    false
}

/// Whether the program has a host section: a host loop, or an `if` at host level whose
/// branches launch kernels or whose condition is computed by kernels.
pub fn has_sections(prog: &Program) -> bool {
    let level = host_level(prog);
    (0..prog.exprs.len()).any(|i| {
        let e = ExprId(i as u32);
        level[i] && (is_host_loop(prog, e) || is_host_if(prog, e))
    })
}

/// An `if` at host level that must run on the host: one of its parts launches kernels.
pub fn is_host_if(prog: &Program, e: ExprId) -> bool {
    match prog.expr(e) {
        Expr::If { cond, then, els } => [*cond, *then, *els].iter().any(|p| launches_kernels(prog, *p)),
        _ => false,
    }
}

/// Whether every use of `v` in `body` (one at least) is the condition of an `if` that
/// `section` says runs on the host: a `bool` bound to `v` is then only read on the host, and
/// kernels may compute it into a one-element buffer.
pub fn only_section_conditions(prog: &Program, v: VarId, body: ExprId, section: impl Fn(ExprId) -> bool) -> bool {
    let (mut uses, mut conds) = (0, 0);
    let mut work = vec![body];
    while let Some(e) = work.pop() {
        match prog.expr(e) {
            Expr::Var(x) if *x == v => uses += 1,
            Expr::If { cond, .. } if matches!(prog.expr(*cond), Expr::Var(x) if *x == v) && section(e) => conds += 1,
            _ => {}
        }
        work.extend(prog.children(e));
    }
    uses > 0 && uses == conds
}

/// The variables `root` uses but does not bind, in order of their ids.
pub fn free_vars(prog: &Program, root: ExprId) -> Vec<VarId> {
    let mut used = std::collections::BTreeSet::new();
    let mut bound = std::collections::BTreeSet::new();
    let mut work = vec![root];
    while let Some(e) = work.pop() {
        match prog.expr(e) {
            Expr::Var(v) => {
                used.insert(*v);
            }
            Expr::Lambda { params, .. } => bound.extend(params.iter().copied()),
            Expr::Let { var, .. } => {
                bound.insert(*var);
            }
            _ => {}
        }
        work.extend(prog.children(e));
    }
    used.difference(&bound).copied().collect()
}

/// The program that computes `root` from `params` (its free variables): the nodes under
/// `root` copied in arena order, with their spans, so that diagnostics about it point into
/// the original text. Variable ids are kept (the variable table is copied whole).
pub fn extract(prog: &Program, root: ExprId, params: Vec<Param>) -> Program {
    let n = prog.exprs.len();
    let mut keep = vec![false; n];
    let mut work = vec![root];
    while let Some(e) = work.pop() {
        if !keep[e.index()] {
            keep[e.index()] = true;
            work.extend(prog.children(e));
        }
    }
    let mut out = Program {
        sizes: prog.sizes.clone(),
        size_spans: prog.size_spans.clone(),
        params,
        exprs: vec![],
        spans: vec![],
        vars: prog.vars.clone(),
        body: root,
    };
    let mut map = vec![ExprId(0); n];
    for i in (0..n).filter(|i| keep[*i]) {
        let m = |e: &ExprId| map[e.index()];
        let e = match &prog.exprs[i] {
            Expr::Var(v) => Expr::Var(*v),
            Expr::Lit(l) => Expr::Lit(l.clone()),
            Expr::Lambda { params, body } => Expr::Lambda {
                params: params.clone(),
                body: m(body),
            },
            Expr::Prim { prim, args } => Expr::Prim {
                prim: prim.clone(),
                args: args.iter().map(m).collect(),
            },
            Expr::Op { op, args } => Expr::Op {
                op: *op,
                args: args.iter().map(m).collect(),
            },
            Expr::If { cond, then, els } => Expr::If {
                cond: m(cond),
                then: m(then),
                els: m(els),
            },
            Expr::Let { kind, var, value, body } => Expr::Let {
                kind: *kind,
                var: *var,
                value: m(value),
                body: m(body),
            },
            Expr::Pack(e) => Expr::Pack(m(e)),
        };
        map[i] = out.push(e, prog.spans[i]);
    }
    out.body = map[root.index()];
    out
}
