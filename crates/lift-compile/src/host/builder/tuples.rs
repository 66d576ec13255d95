//! Tuples holding arrays at host level, and values kept on the host. A unit's value is one
//! buffer, so such a tuple has a slot per component (`HostProgram::tuples`), a host `if`
//! choosing between tuples a slot per component of its own, and a unit reading a tuple takes
//! each component as a parameter. A value stored in several buffers (`HostProgram::direct`)
//! stays on the host: [`Builder::check_on_host`] admits it only as part of the program's value.

use super::*;

impl Builder<'_> {
    /// The slot of a host `if`'s value of type `t` whose branches leave it in slots `a` and
    /// `b`: either branch's buffers hold the value (a loop copies it into its state), and an
    /// array branch where the other returns a filter result is packed. A tuple holding arrays
    /// gets a slot per component.
    pub(super) fn branch_slot(&mut self, a: Slot, b: Slot, t: &Type, span: Span) -> Result<Slot, Error> {
        match (self.tuples.get(&a).cloned(), self.tuples.get(&b).cloned(), t) {
            (Some(pa), Some(pb), Type::Tuple(ts)) if pa.len() == ts.len() && pb.len() == ts.len() => {
                let mut parts = vec![];
                for ((x, y), ct) in pa.into_iter().zip(pb).zip(ts) {
                    parts.push(self.branch_slot(x, y, &device_type(ct.clone()), span)?);
                }
                Ok(self.tuple_slot(parts))
            }
            (None, None, _) => {
                let (ca, cb) = (self.init_cap(a, t), self.init_cap(b, t));
                if let (Some(x), Some(y)) = (&ca, &cb) {
                    if !(x.prove_le(y) && y.prove_le(x)) {
                        return Err(Error::Source(Diagnostic::new(
                            span,
                            format!("the branches of this `if` return filter results of different capacities ({x} and {y}), which is not supported yet"),
                        )));
                    }
                }
                let out = self.slot(t.clone());
                self.caps[out] = ca;
                if let Some(sp) = self.on_host.get(&a).or_else(|| self.on_host.get(&b)).copied() {
                    self.on_host.insert(out, sp);
                }
                Ok(out)
            }
            _ => Err(internal(
                span,
                "the branches of a host `if` return tuples of different shapes",
            )),
        }
    }

    /// A slot for the tuple of the values in `parts` (a tuple holding arrays).
    pub(super) fn tuple_slot(&mut self, parts: Vec<Slot>) -> Slot {
        let out = self.slot(Type::Tuple(parts.iter().map(|p| self.slots[*p].clone()).collect()));
        self.tuples.insert(out, parts);
        out
    }

    /// `(tuple p…)` in `prog` of fresh variables bound to the slots of tuple slot `s`'s
    /// components (nested tuples rebuilt alike), so that a unit reading the tuple takes each
    /// of its arrays as a parameter of its own.
    fn parts_expr(&mut self, prog: &mut Program, s: Slot, span: Span) -> ExprId {
        match self.tuples.get(&s).cloned() {
            Some(parts) => {
                let args = parts.iter().map(|p| self.parts_expr(prog, *p, span)).collect();
                prog.push(Expr::Op { op: Op::Tuple, args }, span)
            }
            None => {
                let v = prog.new_var("p", span);
                self.var_slot.insert(v, s);
                prog.push(Expr::Var(v), span)
            }
        }
    }

    /// `e` (of `prog`) rebound for a unit where a free variable of it (`free`) is a tuple slot:
    /// `(let v (tuple p…) e)` on a copy of the program, `p…` fresh variables bound to the
    /// components' slots. `None` when no free variable is one.
    pub(super) fn bind_tuples(&mut self, prog: &Program, e: ExprId, free: &[VarId]) -> Option<(Program, ExprId)> {
        let tuple_of = |b: &Self, v: &VarId| b.var_slot.get(v).copied().filter(|s| b.tuples.contains_key(s));
        if !free.iter().any(|v| tuple_of(self, v).is_some()) {
            return None;
        }
        let mut copy = prog.clone();
        let mut root = e;
        for v in free {
            if let Some(s) = tuple_of(self, v) {
                let span = copy.var(*v).span;
                let value = self.parts_expr(&mut copy, s, span);
                root = copy.push(
                    Expr::Let {
                        kind: ir::LetKind::Let,
                        var: *v,
                        value,
                        body: root,
                    },
                    span,
                );
            }
        }
        Some((copy, root))
    }

    /// Values kept on the host (`on_host`) are only read back: refused where a kernel, a loop
    /// or a condition reads one, or where a direct unit runs as a loop's step or a condition.
    pub(super) fn check_on_host(&self, main: &Block) -> Result<(), Error> {
        let refuse = |span: Span| Err(on_host_read(span));
        for u in &self.units {
            for a in &u.args {
                if let Some(sp) = self.on_host.get(a) {
                    return refuse(*sp);
                }
            }
        }
        // Blocks, each with whether it is a loop's step (whose value goes into the state's
        // buffers).
        let mut work = vec![(main, false)];
        while let Some((b, step)) = work.pop() {
            for st in &b.steps {
                let (reads, inner): (Vec<Slot>, Vec<(&Block, bool)>) = match st {
                    Step::Kernels { .. } => (vec![], vec![]),
                    Step::Iterate { init, body, fusion, .. } => {
                        let fused = fusion.as_ref().map_or(vec![], |f| {
                            f.pre
                                .iter()
                                .flat_map(|(a, b)| [*a, *b])
                                .chain(f.post.iter().flat_map(|(a, b, _)| [*a, *b]))
                                .chain(f.both)
                                .collect()
                        });
                        if let Some(u) = fused.iter().find(|u| self.direct.contains(u)) {
                            return refuse(self.units[*u].compiled.given.span(self.units[*u].compiled.given.body));
                        }
                        (vec![*init], vec![(body, true)])
                    }
                    Step::Until { init, body, cond, .. } => {
                        if self.direct.contains(cond) {
                            return refuse(
                                self.units[*cond]
                                    .compiled
                                    .given
                                    .span(self.units[*cond].compiled.given.body),
                            );
                        }
                        (vec![*init], vec![(body, true)])
                    }
                    Step::If { cond, then, els, .. } => (vec![*cond], vec![(then, false), (els, false)]),
                };
                for r in reads {
                    if let Some(sp) = self.on_host.get(&r) {
                        return refuse(*sp);
                    }
                }
                work.extend(inner);
            }
            if step && self.on_host.contains_key(&b.result) {
                return refuse(self.on_host[&b.result]);
            }
        }
        Ok(())
    }
}

/// The error for a value kept on the host (`Builder::on_host`) that a kernel or a loop reads.
pub(super) fn on_host_read(span: Span) -> Error {
    Error::Source(Diagnostic::new(
        span,
        "a value stored in several buffers (arrays of tuples holding arrays, rows of filter results) read again after a host section is not supported yet: only the program's value may be one",
    ))
}
