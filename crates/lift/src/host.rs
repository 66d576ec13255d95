//! Host programs (LANGUAGE.md, "Host sections"): a program with a host loop or a host `if`
//! is split into *units*, kernel programs compiled once each through the ordinary pipeline
//! (`compile_program`: variant choice, validation, code generation), and a tree of host
//! [`Step`]s that launches them. Values between units are device buffers (`Slot`s): a loop's
//! state alternates between two of them and never crosses to the host; only the boolean of an
//! `iterate-until` or a host `if` is read back. `backend::run_host` runs it.
//!
//! Where a unit begins: every maximal host-level expression without a host section inside is
//! one unit, whose parameters are the host values it uses (the program's parameters, `let`
//! bindings and loop states around it).

use crate::{Compiled, Error, Options};
use arith::ArithExpr;
use ir::{Diagnostic, Expr, ExprId, Param, Prim, Program, Span, Type, VarId};
use std::collections::HashMap;
use typeck::TypeInfo;

/// A host value: a device buffer, or a scalar parameter known on the host.
pub type Slot = usize;

/// A kernel program and the slots its parameters are bound to, in parameter order.
#[derive(Clone, Debug)]
pub struct Unit {
    pub compiled: Compiled,
    pub args: Vec<Slot>,
}

#[derive(Clone, Debug)]
pub enum Step {
    /// `out` = the unit's result.
    Kernels { out: Slot, unit: usize },
    /// `out` = `body` applied `count` times to `init`, `state` naming its argument.
    Iterate {
        out: Slot,
        count: ArithExpr,
        init: Slot,
        state: Slot,
        body: Block,
        span: Span,
    },
    /// `out` = `body` applied to `init` until unit `cond` (on `prev`, `next`) is true, at most
    /// `max` times.
    Until {
        out: Slot,
        max: ArithExpr,
        init: Slot,
        state: Slot,
        body: Block,
        prev: Slot,
        next: Slot,
        cond: usize,
        span: Span,
    },
    /// `out` = `then` or `els` by the boolean in `cond`.
    If {
        out: Slot,
        cond: Slot,
        then: Block,
        els: Block,
    },
}

/// Steps in order and the slot holding their value.
#[derive(Clone, Debug)]
pub struct Block {
    pub steps: Vec<Step>,
    pub result: Slot,
}

#[derive(Clone, Debug)]
pub struct HostProgram {
    pub units: Vec<Unit>,
    /// The type of each slot.
    pub slots: Vec<Type>,
    /// The slot of each program parameter, in order.
    pub params: Vec<Slot>,
    pub main: Block,
}

/// Whether a typed program needs the host path: it has a host loop or a host `if`.
pub fn is_host_program(prog: &Program, info: &TypeInfo) -> bool {
    let level = ir::host::host_level(prog);
    (0..prog.exprs.len()).any(|i| level[i] && is_section(prog, info, ExprId(i as u32)))
}

fn is_section(prog: &Program, info: &TypeInfo, e: ExprId) -> bool {
    ir::host::is_host_loop(prog, e)
        || ir::host::is_host_if(prog, e)
        || matches!(prog.expr(e), Expr::If { .. }) && matches!(info.types[e.index()], Some(Type::Array(..)))
}

/// Splits a typed host program into units and steps, compiling every unit once.
pub fn build(prog: &Program, info: &TypeInfo, opts: &Options) -> Result<HostProgram, Error> {
    let level = ir::host::host_level(prog);
    let mut b = Builder {
        prog,
        info,
        opts,
        level,
        var_slot: HashMap::new(),
        units: vec![],
        slots: vec![],
    };
    let mut params = vec![];
    for p in &prog.params {
        let s = b.slot(p.ty.clone());
        b.var_slot.insert(p.var, s);
        params.push(s);
    }
    let main = b.block(prog.body)?;
    Ok(HostProgram {
        units: b.units,
        slots: b.slots,
        params,
        main,
    })
}

struct Builder<'a> {
    prog: &'a Program,
    info: &'a TypeInfo,
    opts: &'a Options,
    level: Vec<bool>,
    var_slot: HashMap<VarId, Slot>,
    units: Vec<Unit>,
    slots: Vec<Type>,
}

impl Builder<'_> {
    fn slot(&mut self, t: Type) -> Slot {
        self.slots.push(t);
        self.slots.len() - 1
    }

    fn contains_section(&self, e: ExprId) -> bool {
        let mut work = vec![e];
        while let Some(e) = work.pop() {
            if self.level[e.index()] && is_section(self.prog, self.info, e) {
                return true;
            }
            work.extend(self.prog.children(e));
        }
        false
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
        if !self.contains_section(e) {
            if let Expr::Var(v) = self.prog.expr(e) {
                return self
                    .var_slot
                    .get(v)
                    .copied()
                    .ok_or_else(|| internal(span, "a host variable without a value"));
            }
            let unit = self.unit(e)?;
            let out = self.slot(self.info.ty(e).clone());
            steps.push(Step::Kernels { out, unit });
            return Ok(out);
        }
        let t = self.info.ty(e).clone();
        match self.prog.expr(e).clone() {
            Expr::Let { var, value, body, .. } => {
                let s = self.value(value, steps)?;
                self.var_slot.insert(var, s);
                self.value(body, steps)
            }
            Expr::Prim {
                prim: Prim::Iterate(count),
                args,
            } if ir::host::is_host_loop(self.prog, e) => {
                let init = self.value(args[1], steps)?;
                let (ps, fbody) = self.lambda(args[0])?;
                let state = self.state_slot(ps[0], &t);
                let body = self.block(fbody)?;
                let out = self.slot(t);
                steps.push(Step::Iterate {
                    out,
                    count,
                    init,
                    state,
                    body,
                    span,
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
                let body = self.block(fbody)?;
                let (cs, cbody) = self.lambda(args[0])?;
                let prev = self.state_slot(cs[0], &t);
                let next = self.state_slot(cs[1], &t);
                if self.contains_section(cbody) {
                    return Err(Error::Source(Diagnostic::new(
                        self.prog.span(cbody),
                        "the condition of `iterate-until` cannot itself hold a host section (not supported yet)",
                    )));
                }
                let cond = self.unit(cbody)?;
                let out = self.slot(t);
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
                let cond = self.value(cond, steps)?;
                let then = self.block(then)?;
                let els = self.block(els)?;
                let out = self.slot(t);
                steps.push(Step::If { out, cond, then, els });
                Ok(out)
            }
            _ => Err(Error::Source(
                Diagnostic::new(
                    span,
                    "a host section (`iterate` over kernels, `iterate-until`, `if` over kernels) is used inside this expression (not supported yet)",
                )
                .with_note("bind the section's result with `let` and use the variable here"),
            )),
        }
    }

    /// Compiles the host-level expression `e` (no host section inside) as a kernel program
    /// over the host values it uses.
    fn unit(&mut self, e: ExprId) -> Result<usize, Error> {
        let free = ir::host::free_vars(self.prog, e);
        let mut params = vec![];
        let mut args = vec![];
        for v in free {
            let ty = self.info.var_ty(v).clone();
            let vspan = self.prog.var(v).span;
            if ty.has_existential() {
                return Err(Error::Source(Diagnostic::new(
                    vspan,
                    "a filter result used across a host section is not supported yet",
                )));
            }
            let slot = self
                .var_slot
                .get(&v)
                .copied()
                .ok_or_else(|| internal(vspan, "a host variable without a value"))?;
            params.push(Param {
                var: v,
                ty,
                ty_span: vspan,
            });
            args.push(slot);
        }
        let sub = ir::host::extract(self.prog, e, params);
        let opts = Options {
            types_only: false,
            ..self.opts.clone()
        };
        let compiled = crate::compile_program(sub, &opts)?;
        self.units.push(Unit { compiled, args });
        Ok(self.units.len() - 1)
    }
}

fn internal(span: Span, what: &str) -> Error {
    Error::Source(Diagnostic::new(span, format!("internal: {what}")).with_note(codegen_opencl::BUG_NOTE))
}

impl HostProgram {
    /// `--emit cl`: every unit's kernels, each under a header naming it.
    pub fn source(&self) -> String {
        let mut s = String::new();
        for (i, u) in self.units.iter().enumerate() {
            if let Some(p) = &u.compiled.plan {
                s.push_str(&format!("// ---- unit {i} ----\n"));
                s.push_str(&p.source);
            }
        }
        s
    }

    /// `--emit plan`: the host steps, then every unit's launch plan.
    pub fn describe(&self) -> String {
        let mut s = String::from("host program\n");
        describe_block(&self.main, 1, &mut s);
        for (i, u) in self.units.iter().enumerate() {
            if let Some(p) = &u.compiled.plan {
                s.push_str(&format!("unit {i} (parameters: {:?}):\n", u.args));
                s.push_str(&p.describe());
            }
        }
        s
    }

    /// `--emit views`.
    pub fn views(&self) -> String {
        let mut s = String::new();
        for (i, u) in self.units.iter().enumerate() {
            if let Some(p) = &u.compiled.plan {
                s.push_str(&format!("// ---- unit {i} ----\n"));
                s.push_str(&p.views);
            }
        }
        s
    }
}

fn describe_block(b: &Block, depth: usize, s: &mut String) {
    let pad = "  ".repeat(depth);
    for st in &b.steps {
        match st {
            Step::Kernels { out, unit } => s.push_str(&format!("{pad}s{out} = unit {unit}\n")),
            Step::Iterate {
                out,
                count,
                init,
                state,
                body,
                ..
            } => {
                s.push_str(&format!(
                    "{pad}s{out} = iterate {count} from s{init} (state s{state}):\n"
                ));
                describe_block(body, depth + 1, s);
            }
            Step::Until {
                out,
                max,
                init,
                state,
                body,
                prev,
                next,
                cond,
                ..
            } => {
                s.push_str(&format!(
                    "{pad}s{out} = iterate-until (at most {max}) from s{init} (state s{state}), until unit {cond} on (s{prev}, s{next}):\n"
                ));
                describe_block(body, depth + 1, s);
            }
            Step::If { out, cond, then, els } => {
                s.push_str(&format!("{pad}s{out} = if s{cond} then:\n"));
                describe_block(then, depth + 1, s);
                s.push_str(&format!("{pad}else:\n"));
                describe_block(els, depth + 1, s);
            }
        }
    }
    s.push_str(&format!("{pad}result s{}\n", b.result));
}
