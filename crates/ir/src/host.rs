//! Host sections (LANGUAGE.md, "Host sections"): which parts of a program run on the host.
//!
//! The host level is the program's body outside every kernel: `let`s, `if`s, the data
//! arguments of primitives, and the functions of *host loops*. A host loop is an
//! `iterate-until` at host level, or an `iterate` at host level whose count is a size variable
//! or whose function launches kernels: it runs as a loop on the host over device buffers, its
//! function's kernels generated once. The same loops inside a kernel (below a map, or in any
//! other primitive's function) are loops of one work-item (LANGUAGE.md, "Loops inside a
//! work-item"): an `iterate-until` there, and an `iterate` of a run-time count or over a
//! non-array state, is one sequential loop in the kernel, never a host section; an in-kernel
//! `iterate #k` over an array is unrolled. The type checker admits array-valued `if`s and
//! `[bool]1` conditions only at host level; the driver splits a program with host sections
//! into kernel programs around them.
//!
//! [`HostPlan`] is that split, computed once per program: the type checker makes it and keeps
//! it in its side tables, and validation, the driver's host builder and the tuner read it.

use crate::expr::*;

/// The host/kernel split of one program, computed once ([`HostPlan::of`], completed by the
/// type checker with the array-valued `if`s it admits at host level) and kept beside its types
/// (`typeck::TypeInfo::host`): later stages consult it by node id instead of walking again.
///
/// Its units: the host sections (loops and branches, [`HostPlan::sections`]) run on the host;
/// every maximal host-level expression without a section inside ([`HostPlan::kernels`]) is one
/// kernel program; everything else is inside a kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostPlan {
    /// Per node: evaluated at host level.
    level: Vec<bool>,
    /// Per node: starts kernels of its own at host level (see [`HostPlan::launches`]).
    launches: Vec<bool>,
    /// The host sections, all at host level.
    sections: std::collections::BTreeMap<ExprId, Section>,
    /// Per node: a host section at it or below it.
    holds: Vec<bool>,
}

/// What a host section is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// A host loop ([`host_loop`]): its functions run on the host and launch its kernels.
    Loop,
    /// An `if` one of whose parts launches kernels: the host chooses which run next.
    Branch,
    /// An array-valued `if` whose parts launch no kernels: the host chooses a buffer (added by
    /// the type checker, which knows the `if`'s type).
    Select,
}

impl HostPlan {
    /// The split of an untyped program: its host level, host loops and branches.
    pub fn of(prog: &Program) -> HostPlan {
        let launches = launch_table(prog);
        let mut level = vec![false; prog.exprs.len()];
        let mut sections = std::collections::BTreeMap::new();
        let mut work = vec![prog.body];
        while let Some(e) = work.pop() {
            if level[e.index()] {
                continue;
            }
            level[e.index()] = true;
            match prog.expr(e) {
                Expr::Prim { args, .. } => {
                    let on_host = host_loop(prog, e, |f| launches[f.index()]);
                    if on_host {
                        sections.insert(e, Section::Loop);
                    }
                    for a in args {
                        match prog.expr(*a) {
                            // A loop's functions run on the host (their bodies launch kernels);
                            // every other primitive's function is kernel code.
                            Expr::Lambda { body, .. } if on_host => work.push(*body),
                            Expr::Lambda { .. } => {}
                            _ => work.push(*a),
                        }
                    }
                }
                Expr::Lambda { .. } => {}
                Expr::If { cond, then, els } => {
                    if [cond, then, els].iter().any(|p| launches[p.index()]) {
                        sections.insert(e, Section::Branch);
                    }
                    work.extend(prog.children(e));
                }
                _ => work.extend(prog.children(e)),
            }
        }
        let mut plan = HostPlan {
            level,
            launches,
            sections,
            holds: vec![],
        };
        plan.holds = plan.hold_table(prog);
        plan
    }

    /// Adds the array-valued `if`s at host level that are not sections yet (the type checker's:
    /// it admits them there only) as [`Section::Select`]s.
    pub fn add_selects(&mut self, prog: &Program, ifs: impl IntoIterator<Item = ExprId>) {
        for e in ifs {
            if self.at_host(e) && matches!(prog.expr(e), Expr::If { .. }) {
                self.sections.entry(e).or_insert(Section::Select);
            }
        }
        self.holds = self.hold_table(prog);
    }

    /// Whether node `e` is evaluated at host level (outside every kernel).
    pub fn at_host(&self, e: ExprId) -> bool {
        self.level.get(e.index()).copied().unwrap_or(false)
    }

    /// The host section at `e`, if `e` is one.
    pub fn section(&self, e: ExprId) -> Option<Section> {
        self.sections.get(&e).copied()
    }

    /// Whether `e` is a host loop.
    pub fn is_loop(&self, e: ExprId) -> bool {
        self.section(e) == Some(Section::Loop)
    }

    /// The host sections in arena order.
    pub fn sections(&self) -> impl Iterator<Item = (ExprId, Section)> + '_ {
        self.sections.iter().map(|(e, s)| (*e, *s))
    }

    /// Whether the program has a host section of any kind: it runs as a host program.
    pub fn has_sections(&self) -> bool {
        !self.sections.is_empty()
    }

    /// Whether the program has a host section that launches kernels from the host (a loop or
    /// a branch): one that is never emitted as a single kernel program.
    pub fn launches_from_host(&self) -> bool {
        self.sections
            .values()
            .any(|s| matches!(s, Section::Loop | Section::Branch))
    }

    /// Whether `e` or a node below it is a host section.
    pub fn holds_section(&self, e: ExprId) -> bool {
        self.holds.get(e.index()).copied().unwrap_or(false)
    }

    /// Whether evaluating `e` at host level starts kernels of its own: a parallel or
    /// high-level map, reduction or filter, or an `iterate-until`, anywhere inside.
    pub fn launches(&self, e: ExprId) -> bool {
        self.launches.get(e.index()).copied().unwrap_or(false)
    }

    /// The kernel units: the maximal host-level expressions without a host section inside, in
    /// arena order (variables, which name host values, are none).
    pub fn kernels(&self, prog: &Program) -> Vec<ExprId> {
        let mut out = vec![];
        let mut work = vec![prog.body];
        while let Some(e) = work.pop() {
            if !self.at_host(e) {
                // a host loop's function: its body is host level
                if let Expr::Lambda { body, .. } = prog.expr(e) {
                    work.push(*body);
                }
                continue;
            }
            if !self.holds_section(e) {
                if !matches!(prog.expr(e), Expr::Var(_)) {
                    out.push(e);
                }
                continue;
            }
            work.extend(prog.children(e));
        }
        out.sort();
        out
    }

    fn hold_table(&self, prog: &Program) -> Vec<bool> {
        let mut holds = vec![false; prog.exprs.len()];
        for e in post_order(prog) {
            holds[e.index()] = self.sections.contains_key(&e) || prog.children(e).iter().any(|c| holds[c.index()]);
        }
        holds
    }
}

/// Whether the loop `e`, standing at host level, runs on the host: an `iterate-until`, or an
/// `iterate` whose count is a size variable or whose function launches kernels (`launches`).
/// This is the one place that classifies loops; [`HostPlan::of`] asks it only of host-level
/// nodes, so a loop inside a kernel (in the function of a map, reduction or filter) never is.
fn host_loop(prog: &Program, e: ExprId, launches: impl Fn(ExprId) -> bool) -> bool {
    match prog.expr(e) {
        Expr::Prim {
            prim: Prim::IterateUntil(_),
            ..
        } => true,
        Expr::Prim {
            prim: Prim::Iterate(k),
            args,
        } => k.as_cst().is_none() || args.first().is_some_and(|f| launches(*f)),
        _ => false,
    }
}

/// Every node of the arena, each after its children.
fn post_order(prog: &Program) -> Vec<ExprId> {
    let n = prog.exprs.len();
    let mut seen = vec![false; n];
    let mut out = Vec::with_capacity(n);
    for root in 0..n {
        if seen[root] {
            continue;
        }
        let mut stack = vec![(ExprId(root as u32), false)];
        while let Some((e, done)) = stack.pop() {
            if done {
                out.push(e);
                continue;
            }
            if seen[e.index()] {
                continue;
            }
            seen[e.index()] = true;
            stack.push((e, true));
            stack.extend(prog.children(e).into_iter().map(|c| (c, false)));
        }
    }
    out
}

/// Per node: whether evaluating it at host level starts kernels of its own (a parallel or
/// high-level map, reduction or filter, or a host loop, anywhere inside), children first.
fn launch_table(prog: &Program) -> Vec<bool> {
    let mut launches = vec![false; prog.exprs.len()];
    for e in post_order(prog) {
        launches[e.index()] = launches_itself(prog.expr(e)) || prog.children(e).iter().any(|c| launches[c.index()]);
    }
    launches
}

/// Whether the node itself (not its children) is a primitive that starts kernels.
fn launches_itself(e: &Expr) -> bool {
    let Expr::Prim { prim, .. } = e else {
        return false;
    };
    match prim {
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
