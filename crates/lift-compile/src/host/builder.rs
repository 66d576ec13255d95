//! Building a [`HostProgram`]: the walk that cuts a host program into units around its host
//! sections, compiles each unit through the ordinary pipeline, and fuses maps that meet across
//! a unit boundary.

use super::*;
use ir::Op;

mod tuples;

use tuples::on_host_read;

/// Splits a typed host program into units and steps, compiling every unit once.
pub fn build(prog: &Program, info: &TypeInfo, opts: &Options) -> Result<HostProgram, Error> {
    let mut b = Builder {
        prog,
        info,
        opts,
        var_slot: HashMap::new(),
        units: vec![],
        slots: vec![],
        caps: vec![],
        tuples: BTreeMap::new(),
        direct: BTreeSet::new(),
        on_host: BTreeMap::new(),
    };
    let mut params = vec![];
    for p in &prog.params {
        let s = b.slot(p.ty.clone());
        b.var_slot.insert(p.var, s);
        params.push(s);
    }
    let main = b.block(prog.body)?;
    b.check_on_host(&main)?;
    Ok(HostProgram {
        units: b.units,
        slots: b.slots,
        caps: b.caps,
        tuples: b.tuples,
        direct: b.direct,
        params,
        main,
    })
}

struct Builder<'a> {
    prog: &'a Program,
    info: &'a TypeInfo,
    opts: &'a Options,
    var_slot: HashMap<VarId, Slot>,
    units: Vec<Unit>,
    slots: Vec<Type>,
    caps: Vec<Option<ArithExpr>>,
    tuples: BTreeMap<Slot, Vec<Slot>>,
    direct: BTreeSet<usize>,
    /// Slots whose value stays on the host (a direct unit's, a host `if`'s choosing one), with
    /// the span of what computes them.
    on_host: BTreeMap<Slot, Span>,
}

impl Builder<'_> {
    fn slot(&mut self, t: Type) -> Slot {
        self.slots.push(device_type(t));
        self.caps.push(None);
        self.slots.len() - 1
    }

    /// The capacity of a filter result that unit `u` returns, over the program's sizes: the
    /// length of its output buffer, whose C names are the unit's sizes and the capacities of
    /// its filter-result parameters (`codegen_opencl::capacity_size`).
    fn unit_cap(&self, u: usize) -> Result<Option<ArithExpr>, Error> {
        let unit = &self.units[u];
        let Some(plan) = &unit.compiled.plan else {
            return Ok(None);
        };
        if !matches!(plan.result.ty, Type::Exists(_)) {
            return Ok(None);
        }
        let mut cap = plan.memory.buffers[plan.result.data].len.clone();
        for (user, c) in &plan.sizes {
            let by = match (0..unit.args.len()).find(|k| codegen_opencl::capacity_size(*k) == *user) {
                Some(k) => self.caps[unit.args[k]]
                    .clone()
                    .ok_or_else(|| internal(Span::default(), "a filter-result argument without a capacity"))?,
                None => ArithExpr::size_var(user),
            };
            cap = cap.subst(c, &by);
        }
        Ok(Some(cap))
    }

    /// The slot of unit `u`'s value, `e`'s: a unit over a filter-result state that returns an
    /// array of the state's length (`[T]X`, `X` bound by the loop's function) returns it packed.
    fn unit_slot(&mut self, u: usize, e: ExprId) -> Result<Slot, Error> {
        let cap = self.unit_cap(u)?;
        let ty = match (&cap, &self.units[u].compiled.plan) {
            (Some(_), Some(plan)) => plan.result.ty.clone(),
            _ => self.info.ty(e).clone(),
        };
        let out = self.slot(ty);
        self.caps[out] = cap;
        if self.direct.contains(&u) {
            self.on_host.insert(out, self.prog.span(e));
        }
        Ok(out)
    }

    /// The capacity of a loop's state starting from slot `init`: a filter result's, or the
    /// length of an array whose step returns filter results (`backend` gives it a length).
    fn init_cap(&self, init: Slot, state: &Type) -> Option<ArithExpr> {
        if !matches!(state, Type::Exists(_)) {
            return None;
        }
        match &self.slots[init] {
            Type::Array(_, n) => Some(n.clone()),
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Exists(_) | Type::Fun(..) => {
                self.caps[init].clone()
            }
        }
    }

    /// A loop's step or a branch returns a filter result into buffers of capacity `have`
    /// (the loop's initial state's): refused where its own capacity `need` may be larger. A
    /// filter never grows its input, but a step can (`(filter p (join (map (lambda (x) (tuple
    /// x x)) …)))` has twice its state's capacity).
    fn check_capacity(&self, need: &Option<ArithExpr>, have: &Option<ArithExpr>, span: Span) -> Result<(), Error> {
        match (need, have) {
            (Some(n), Some(h)) if !n.prove_le(h) => Err(Error::Source(Diagnostic::new(
                span,
                format!("this step may return a longer filter result (up to {n} elements) than the state it starts from (up to {h}), which is not supported yet"),
            )
            .with_note("a host loop keeps its state in two buffers of its initial state's capacity: a step may keep fewer elements, not more"))),
            _ => Ok(()),
        }
    }

    /// Whether `e` holds a host section (the type checker's `ir::host::HostPlan`).
    fn contains_section(&self, e: ExprId) -> bool {
        self.info.host.holds_section(e)
    }

    fn block(&mut self, e: ExprId) -> Result<Block, Error> {
        let mut steps = vec![];
        let result = self.value(e, &mut steps)?;
        Ok(Block { steps, result })
    }

    fn lambda(&self, f: ExprId) -> Result<(Vec<VarId>, ExprId), Error> {
        match self.prog.expr(f) {
            Expr::Lambda { params, body } => Ok((params.clone(), *body)),
            _ => Err(internal(self.prog.span(f), "a host loop's function is not a lambda")),
        }
    }

    fn state_slot(&mut self, v: VarId, t: &Type) -> Slot {
        let s = self.slot(t.clone());
        self.var_slot.insert(v, s);
        s
    }

    fn value(&mut self, e: ExprId, steps: &mut Vec<Step>) -> Result<Slot, Error> {
        let span = self.prog.span(e);
        match self.prog.expr(e).clone() {
            // A tuple holding arrays: each component in slots of its own.
            Expr::Op { op: Op::Tuple, args } if holds_array(self.info.ty(e)) => {
                let mut parts = vec![];
                for a in args {
                    parts.push(self.value(a, steps)?);
                }
                return Ok(self.tuple_slot(parts));
            }
            // A component of such a tuple is its slot.
            Expr::Op { op: Op::Get(k), args } => {
                if let Expr::Var(v) = self.prog.expr(args[0]) {
                    let part = self
                        .var_slot
                        .get(v)
                        .and_then(|s| self.tuples.get(s))
                        .and_then(|parts| parts.get(usize::from(k)));
                    if let Some(p) = part {
                        return Ok(*p);
                    }
                }
            }
            _ => {}
        }
        if !self.contains_section(e) {
            if let Expr::Var(v) = self.prog.expr(e) {
                return self
                    .var_slot
                    .get(v)
                    .copied()
                    .ok_or_else(|| internal(span, "a host variable without a value"));
            }
            let unit = self.unit(e)?;
            let out = self.unit_slot(unit, e)?;
            steps.push(Step::Kernels { out, unit });
            return Ok(out);
        }
        let t = device_type(self.info.ty(e).clone());
        if let Some(out) = self.fused(e, steps)? {
            return Ok(out);
        }
        match self.prog.expr(e).clone() {
            Expr::Let { var, value, body, .. } => {
                let s = if self.device_bool(value)
                    && ir::host::only_section_conditions(self.prog, var, body, |i| self.info.host.section(i).is_some())
                {
                    let unit = self.cond_unit(value)?;
                    let out = self.slot(Type::array(Type::bool(), ArithExpr::cst(1)));
                    steps.push(Step::Kernels { out, unit });
                    out
                } else {
                    self.value(value, steps)?
                };
                self.var_slot.insert(var, s);
                self.value(body, steps)
            }
            Expr::Prim {
                prim: Prim::Iterate(_) | Prim::IterateUntil(_),
                ..
            } if matches!(t, Type::Tuple(_)) && holds_array(&t) => Err(Error::Source(Diagnostic::new(
                span,
                format!("a tuple holding arrays ({t}) as the state of a host loop is not supported yet: each array is stored in a buffer of its own"),
            ))),
            Expr::Prim {
                prim: Prim::Iterate(count),
                args,
            } if self.info.host.is_loop(e) => {
                let init = self.value(args[1], steps)?;
                let (ps, fbody) = self.lambda(args[0])?;
                let state = self.state_slot(ps[0], &t);
                self.caps[state] = self.init_cap(init, &t);
                let body = self.block(fbody)?;
                self.check_capacity(&self.caps[body.result], &self.caps[state], self.prog.span(fbody))?;
                let cap = self.init_cap(init, &t);
                let out = self.slot(t);
                self.caps[out] = cap;
                steps.push(Step::Iterate {
                    out,
                    count,
                    init,
                    state,
                    body,
                    span,
                    fusion: None,
                });
                Ok(out)
            }
            Expr::Prim {
                prim: Prim::IterateUntil(max),
                args,
            } => {
                let init = self.value(args[2], steps)?;
                let (ps, fbody) = self.lambda(args[1])?;
                let state = self.state_slot(ps[0], &t);
                self.caps[state] = self.init_cap(init, &t);
                let body = self.block(fbody)?;
                self.check_capacity(&self.caps[body.result], &self.caps[state], self.prog.span(fbody))?;
                let (cs, cbody) = self.lambda(args[0])?;
                let prev = self.state_slot(cs[0], &t);
                let next = self.state_slot(cs[1], &t);
                self.caps[prev] = self.init_cap(init, &t);
                self.caps[next] = self.init_cap(init, &t);
                if self.contains_section(cbody) {
                    return Err(Error::Source(Diagnostic::new(
                        self.prog.span(cbody),
                        "the condition of `iterate-until` cannot itself hold a host section (not supported yet)",
                    )));
                }
                let cond = self.cond_unit(cbody)?;
                let cap = self.init_cap(init, &t);
                let out = self.slot(t);
                self.caps[out] = cap;
                steps.push(Step::Until {
                    out,
                    max,
                    init,
                    state,
                    body,
                    prev,
                    next,
                    cond,
                    span,
                });
                Ok(out)
            }
            Expr::If { cond, then, els } => {
                let cond = if self.device_bool(cond) {
                    let unit = self.cond_unit(cond)?;
                    let out = self.slot(Type::array(Type::bool(), ArithExpr::cst(1)));
                    steps.push(Step::Kernels { out, unit });
                    out
                } else {
                    self.value(cond, steps)?
                };
                let then = self.block(then)?;
                let els = self.block(els)?;
                let out = self.branch_slot(then.result, els.result, &t, span)?;
                steps.push(Step::If { out, cond, then, els });
                Ok(out)
            }
            // A section inside another expression (`(mapGlb f (iterate …))`): the sections
            // run first, and the expression is a unit that reads their values.
            _ => {
                let mut copy = Fuser {
                    prog: self.prog.clone(),
                };
                let root = self.lift_sections(&mut copy, e, steps)?;
                let unit = self.unit_in(&copy.prog, root)?;
                let out = self.unit_slot(unit, e)?;
                steps.push(Step::Kernels { out, unit });
                Ok(out)
            }
        }
    }

    /// `e` rebuilt in `copy` with every host section in it replaced by a fresh variable whose
    /// slot the section's steps (pushed onto `steps`) compute.
    fn lift_sections(&mut self, copy: &mut Fuser, e: ExprId, steps: &mut Vec<Step>) -> Result<ExprId, Error> {
        if !self.contains_section(e) {
            return Ok(e);
        }
        let span = self.prog.span(e);
        let rebuilt = match self.prog.expr(e).clone() {
            Expr::Prim { prim, args } if !self.info.host.is_loop(e) => {
                let mut new = vec![];
                for a in args {
                    new.push(match self.prog.expr(a) {
                        Expr::Lambda { .. } => a,
                        _ => self.lift_sections(copy, a, steps)?,
                    });
                }
                Expr::Prim { prim, args: new }
            }
            Expr::Op { op, args } => {
                let mut new = vec![];
                for a in args {
                    new.push(self.lift_sections(copy, a, steps)?);
                }
                Expr::Op { op, args: new }
            }
            Expr::Pack(inner) => Expr::Pack(self.lift_sections(copy, inner, steps)?),
            _ => {
                let slot = self.value(e, steps)?;
                let v = copy.prog.new_var("h", span);
                self.var_slot.insert(v, slot);
                Expr::Var(v)
            }
        };
        Ok(copy.prog.push(rebuilt, span))
    }

    /// `(f xs)` of a map of kind `kind`: its lambda and argument.
    fn map_of(&self, e: ExprId) -> Option<(ir::MapKind, ExprId, ExprId)> {
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(k @ (ir::MapKind::Glb(0) | ir::MapKind::Plain)),
                args,
            } if matches!(self.prog.expr(args[0]), Expr::Lambda { .. }) => Some((*k, args[0], args[1])),
            _ => None,
        }
    }

    fn uses(&self, e: ExprId, v: VarId) -> usize {
        let mut n = 0;
        let mut work = vec![e];
        while let Some(e) = work.pop() {
            if matches!(self.prog.expr(e), Expr::Var(x) if *x == v) {
                n += 1;
            }
            work.extend(self.prog.children(e));
        }
        n
    }

    /// A host `iterate` with maps fused across its boundary (see [`Fusion`]); `None` when `e`
    /// is not of that form.
    fn fused(&mut self, e: ExprId, steps: &mut Vec<Step>) -> Result<Option<Slot>, Error> {
        let prog = self.prog;
        // (let s0 (map p xs) LOOP-OR-POST), s0 used once: as the loop's initial state.
        let (pre, rest) = match prog.expr(e) {
            Expr::Let { var, value, body, .. } if !self.contains_section(*value) && self.uses(*body, *var) == 1 => {
                match self.map_of(*value) {
                    Some(m) => (Some((*var, *value, m)), *body),
                    None => (None, e),
                }
            }
            _ => (None, e),
        };
        // (let r LOOP (map f r)), r used once.
        let (lp, post) = match prog.expr(rest) {
            Expr::Let { var, value, body, .. } if self.info.host.is_loop(*value) => match self.map_of(*body) {
                Some((k, f, xs)) if matches!(prog.expr(xs), Expr::Var(v) if v == var) && self.uses(f, *var) == 0 => {
                    (*value, Some((*var, *body, k, f)))
                }
                _ => (*value, None),
            },
            _ => (rest, None),
        };
        let Expr::Prim {
            prim: Prim::Iterate(count),
            args,
        } = prog.expr(lp).clone()
        else {
            return Ok(None);
        };
        // A filter result's length lives in a buffer of its own: maps over it are not fused.
        if !self.info.host.is_loop(lp) || self.info.ty(lp).has_existential() {
            return Ok(None);
        }
        let (ps, fbody) = self.lambda(args[0])?;
        let Some((gk, g, gxs)) = self.map_of(fbody).filter(|_| !self.contains_section(fbody)) else {
            return Ok(None);
        };
        let s = ps[0];
        // Same location for the map before: the body reads the state only as its map's input.
        let pre = pre.filter(|(s0, _, (pk, _, _))| {
            *pk == gk
                && matches!(prog.expr(args[1]), Expr::Var(v) if v == s0)
                && matches!(prog.expr(gxs), Expr::Var(v) if *v == s)
                && self.uses(g, s) == 0
        });
        let post = post.filter(|(_, _, fk, _)| *fk == gk);
        if pre.is_none() && post.is_none() {
            return Ok(None);
        }
        let t = self.info.ty(lp).clone();
        let span = prog.span(lp);
        // The unfused parts: the map before, the loop, the map after.
        let (init, pre_units) = match pre {
            Some((s0, pv, (pk, p, pxs))) => {
                let pre_unit = self.unit(pv)?;
                let init = self.slot(self.info.ty(pv).clone());
                self.var_slot.insert(s0, init);
                let first = self.unit_of(|b| {
                    let gp = b.compose(g, p);
                    b.push_map(pk, gp, pxs)
                })?;
                (init, Some((pre_unit, first)))
            }
            None => (self.value(args[1], steps)?, None),
        };
        let state = self.state_slot(s, &t);
        let body = self.block(fbody)?;
        let out = self.slot(t);
        let mut fusion = Fusion {
            pre: pre_units,
            post: None,
            post_in: out,
            both: None,
        };
        let mut result = out;
        if let Some((r, pe, fk, f)) = post {
            self.var_slot.insert(r, out);
            let post_unit = self.unit(pe)?;
            let last = self.unit_of(|b| {
                let fg = b.compose(f, g);
                b.push_map(fk, fg, gxs)
            })?;
            let post_out = self.slot(self.info.ty(pe).clone());
            fusion.post = Some((post_unit, last, post_out));
            if let Some((_, _, (pk, p, pxs))) = pre {
                fusion.both = Some(self.unit_of(|b| {
                    let gp = b.compose(g, p);
                    let fgp = b.compose(f, gp);
                    b.push_map(pk, fgp, pxs)
                })?);
            }
            result = post_out;
        }
        steps.push(Step::Iterate {
            out,
            count,
            init,
            state,
            body,
            span,
            fusion: Some(Box::new(fusion)),
        });
        Ok(Some(result))
    }

    /// Whether `c` is a `bool` that kernels compute (not a scalar parameter's function) from
    /// arrays that can be bound outside it: no `let` of its own scalar code names a value they
    /// read (such a `c` stays a unit of its own, which `validate` refuses clearly).
    fn device_bool(&self, c: ExprId) -> bool {
        let mut work = vec![c];
        while let Some(e) = work.pop() {
            match (self.prog.expr(e), self.info.types[e.index()].as_ref()) {
                (Expr::Let { .. }, _) => return false,
                (Expr::Lambda { .. }, _) | (_, Some(Type::Array(..) | Type::Exists(_))) => {}
                _ => work.extend(self.prog.children(e)),
            }
        }
        *self.info.ty(c) == Type::bool() && !self.contains_section(c) && self.info.host.launches(c)
    }

    /// The unit computing a host condition: a `[bool]1` as it is, a `bool` computed from
    /// arrays as a one-element buffer, since a kernel program's value outside every map cannot
    /// be a scalar that needs kernels: `c` becomes `(let a1 A1 … (mapGlb (lambda (i) c') (generate
    /// #1 …)))`, each array `Ak` of `c` that kernels compute bound outside the one-work-item map
    /// that reads it.
    fn cond_unit(&mut self, c: ExprId) -> Result<usize, Error> {
        if !self.device_bool(c) {
            return self.unit(c);
        }
        let info = self.info;
        self.unit_of(|b| {
            let mut lifted = vec![];
            let scalar = b.lift_arrays(info, c, &mut lifted);
            let span = b.prog.span(c);
            let i = b.prog.new_var("i", span);
            let j = b.prog.new_var("j", span);
            let index = b.prog.push(Expr::Var(j), span);
            let ident = b.prog.push(
                Expr::Lambda {
                    params: vec![j],
                    body: index,
                },
                span,
            );
            let one = b.prog.push(
                Expr::Prim {
                    prim: Prim::Generate(ArithExpr::cst(1)),
                    args: vec![ident],
                },
                span,
            );
            let f = b.prog.push(
                Expr::Lambda {
                    params: vec![i],
                    body: scalar,
                },
                span,
            );
            let mut e = b.push_map(ir::MapKind::Glb(0), f, one);
            for (v, a) in lifted.into_iter().rev() {
                e = b.prog.push(
                    Expr::Let {
                        kind: ir::LetKind::Let,
                        var: v,
                        value: a,
                        body: e,
                    },
                    span,
                );
            }
            e
        })
    }

    /// Compiles an expression built on a copy of the program (a fused map) as a unit.
    fn unit_of(&mut self, build: impl FnOnce(&mut Fuser) -> ExprId) -> Result<usize, Error> {
        let mut f = Fuser {
            prog: self.prog.clone(),
        };
        let root = build(&mut f);
        self.unit_in(&f.prog, root)
    }

    /// Compiles the host-level expression `e` (no host section inside) as a kernel program
    /// over the host values it uses.
    fn unit(&mut self, e: ExprId) -> Result<usize, Error> {
        let prog = self.prog;
        self.unit_in(prog, e)
    }

    fn unit_in(&mut self, prog: &Program, e: ExprId) -> Result<usize, Error> {
        let free = ir::host::free_vars(prog, e);
        // A tuple slot has no buffer: the unit binds the tuple of its components' parameters.
        if let Some((copy, root)) = self.bind_tuples(prog, e, &free) {
            return self.unit_in(&copy, root);
        }
        let mut params = vec![];
        let mut args = vec![];
        for v in free {
            let vspan = prog.var(v).span;
            let slot = self
                .var_slot
                .get(&v)
                .copied()
                .ok_or_else(|| internal(vspan, "a host variable without a value"))?;
            let ty = self.slots[slot].clone();
            match &ty {
                Type::Exists(elem) if !elem.has_existential() && !holds_array(elem) => {}
                // A filter result of rows would need a capacity per row; one of tuples holding
                // arrays, a parameter per component buffer.
                Type::Exists(_) => {
                    return Err(Error::Source(Diagnostic::new(
                        vspan,
                        format!("a filter result of arrays or of tuples holding arrays ({ty}) crossing a host section is not supported yet"),
                    )))
                }
                // `validate` refuses the others.
                t if t.has_existential() => {
                    return Err(internal(vspan, "arrays of filter results cross a host section"))
                }
                _ => {}
            }
            params.push(Param {
                var: v,
                ty,
                ty_span: vspan,
            });
            args.push(slot);
        }
        if let Some(sp) = args.iter().find_map(|a| self.on_host.get(a)) {
            return Err(on_host_read(*sp));
        }
        let sub = ir::host::extract(prog, e, params);
        let opts = Options {
            types_only: false,
            ..self.opts.clone()
        };
        let compiled = crate::compile_program(sub, &opts)?;
        // A unit's value lives in one device buffer between the host's steps; one stored in
        // several (a struct of arrays, rows of filter results and their lengths) runs on its
        // own, on its arguments read back (`HostProgram::direct`).
        let direct = compiled.plan.as_ref().is_some_and(|p| {
            p.result.parts.len() > 1 || (p.result.lengths.is_some() && !matches!(p.result.ty, Type::Exists(_)))
        });
        if direct && args.iter().any(|a| self.caps[*a].is_some()) {
            return Err(Error::Source(Diagnostic::new(
                prog.span(e),
                "a value stored in several buffers (arrays of tuples holding arrays, rows of filter results) computed from a filter result in a program with host sections is not supported yet",
            )));
        }
        if direct {
            self.direct.insert(self.units.len());
        }
        self.units.push(Unit { compiled, args });
        Ok(self.units.len() - 1)
    }
}

/// The type of a host value of type `t`: an array whose length only the device knows (`[T]X`,
/// a loop over an unpacked filter result keeping its length) is a filter result, its length
/// in a buffer of its own.
/// Likewise for each component of a tuple holding arrays, which has a slot per component.
fn device_type(t: Type) -> Type {
    match t {
        Type::Array(elem, n)
            if !n.free_vars_of_kind(arith::VarKind::Existential).is_empty() && !elem.has_existential() =>
        {
            Type::Exists(elem)
        }
        Type::Tuple(cs) if cs.iter().any(holds_array) => Type::Tuple(cs.into_iter().map(device_type).collect()),
        t => t,
    }
}

/// Builds fused maps on a copy of the program.
struct Fuser {
    prog: Program,
}

impl Fuser {
    /// `outer ∘ inner` of two one-parameter lambdas: `(lambda (x) (let y inner-body
    /// outer-body))` with `x` the inner parameter and `y` the outer one, so every variable
    /// keeps its single binder.
    fn compose(&mut self, outer: ExprId, inner: ExprId) -> ExprId {
        let (Expr::Lambda { params: op, body: ob }, Expr::Lambda { params: ip, body: ib }) =
            (self.prog.expr(outer).clone(), self.prog.expr(inner).clone())
        else {
            unreachable!("map_of checked both are lambdas")
        };
        let span = self.prog.span(outer);
        let body = self.prog.push(
            Expr::Let {
                kind: ir::LetKind::Let,
                var: op[0],
                value: ib,
                body: ob,
            },
            span,
        );
        self.prog.push(Expr::Lambda { params: ip, body }, span)
    }

    /// `e` (a scalar at host level) with every array in it that kernels compute replaced by a
    /// fresh variable, pushed with that array onto `lifted` (the arrays stay as they are:
    /// variables of the copy are the original's). `e` is a node of the original program, which
    /// `info` types and splits.
    fn lift_arrays(&mut self, info: &TypeInfo, e: ExprId, lifted: &mut Vec<(VarId, ExprId)>) -> ExprId {
        let ty = info.ty(e);
        if matches!(ty, Type::Array(..) | Type::Exists(_)) && info.host.launches(e) {
            let span = self.prog.span(e);
            let v = self.prog.new_var("a", span);
            lifted.push((v, e));
            return self.prog.push(Expr::Var(v), span);
        }
        if !info.host.launches(e) {
            return e;
        }
        let span = self.prog.span(e);
        let rebuilt = match self.prog.expr(e).clone() {
            Expr::Op { op, args } => Expr::Op {
                op,
                args: args.iter().map(|a| self.lift_arrays(info, *a, lifted)).collect(),
            },
            Expr::If { cond, then, els } => Expr::If {
                cond: self.lift_arrays(info, cond, lifted),
                then: self.lift_arrays(info, then, lifted),
                els: self.lift_arrays(info, els, lifted),
            },
            // `Builder::device_bool` keeps `let`s out of the scalar code.
            Expr::Let { kind, var, value, body } => Expr::Let {
                kind,
                var,
                value: self.lift_arrays(info, value, lifted),
                body: self.lift_arrays(info, body, lifted),
            },
            // A scalar primitive's data arguments, its functions kept.
            Expr::Prim { prim, args } => Expr::Prim {
                prim,
                args: args
                    .iter()
                    .map(|a| match self.prog.expr(*a) {
                        Expr::Lambda { .. } => *a,
                        _ => self.lift_arrays(info, *a, lifted),
                    })
                    .collect(),
            },
            other @ (Expr::Var(_) | Expr::Lit(_) | Expr::Lambda { .. } | Expr::Pack(_)) => other,
        };
        self.prog.push(rebuilt, span)
    }

    fn push_map(&mut self, kind: ir::MapKind, f: ExprId, xs: ExprId) -> ExprId {
        let span = self.prog.span(xs);
        self.prog.push(
            Expr::Prim {
                prim: Prim::Map(kind),
                args: vec![f, xs],
            },
            span,
        )
    }
}

fn internal(span: Span, what: &str) -> Error {
    Error::Source(Diagnostic::new(span, format!("internal: {what}")).with_note(codegen_opencl::BUG_NOTE))
}

/// Whether `t` is an array or a tuple holding one at some depth.
fn holds_array(t: &Type) -> bool {
    match t {
        Type::Array(..) | Type::Exists(_) => true,
        Type::Tuple(cs) => cs.iter().any(holds_array),
        Type::Scalar(_) | Type::Vector(..) | Type::Fun(..) => false,
    }
}
