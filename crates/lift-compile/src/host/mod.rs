//! Host programs (LANGUAGE.md, "Host sections"): a program with a host loop or a host `if`
//! is split into *units*, kernel programs compiled once each through the ordinary pipeline
//! (`compile_program`: variant choice, validation, code generation), and a tree of host
//! [`Step`]s that launches them. Values between units are device buffers (`Slot`s): a loop's
//! state alternates between two of them and never crosses to the host; only the boolean of an
//! `iterate-until` or a host `if` is read back. `lift_runtime::run_host` runs it.
//!
//! Where a unit begins: every maximal host-level expression without a host section inside is
//! one unit, whose parameters are the host values it uses (the program's parameters, `let`
//! bindings and loop states around it).

mod builder;

pub use builder::build;

use crate::{Compiled, Error, Options};
use arith::ArithExpr;
use ir::{Diagnostic, Expr, ExprId, Param, Prim, Program, Span, Type, VarId};
use std::collections::{BTreeMap, BTreeSet, HashMap};
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
    /// `out` = `body` applied `count` times to `init`, `state` naming its argument; with
    /// `fusion`, maps before and after the loop run inside its first and last steps.
    Iterate {
        out: Slot,
        count: ArithExpr,
        init: Slot,
        state: Slot,
        body: Block,
        span: Span,
        fusion: Option<Box<Fusion>>,
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

/// Maps fused across a host loop's boundary (Ikra's rule: a map whose element `i` is computed
/// from element `i` of the other, in the same work-item, so no value moves between them):
/// `(let s0 (mapGlb p xs) (iterate K (lambda (s) (mapGlb g s)) s0))` runs `g ∘ p` as its
/// first step when `g` reads the state only through its element, and `(let r (iterate K
/// (lambda (s) (mapGlb g X)) x) (mapGlb f r))` runs `f ∘ g` as its last step. The unfused
/// units stay for `K = 0`. Every fused kernel is compiled once, before the run.
#[derive(Clone, Debug)]
pub struct Fusion {
    /// The map before the loop (computes `init`), and the first step with it fused in.
    pub pre: Option<(usize, usize)>,
    /// The map after the loop (reads `post_in`), the last step with it fused in, and the
    /// slot of its value.
    pub post: Option<(usize, usize, Slot)>,
    pub post_in: Slot,
    /// The one step with both fused in (`K = 1`).
    pub both: Option<usize>,
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
    /// The capacity of each slot holding a filter result (`{∃X. [T]X}`), over the program's
    /// sizes: its buffer holds that many elements, its length is on the device. A loop's two
    /// state buffers have the capacity of its initial state, since its step may not return
    /// a longer one (`Builder::check_capacity`).
    pub caps: Vec<Option<ArithExpr>>,
    /// The slots of tuples holding arrays, each with its components' slots: a unit's value is
    /// one buffer, so such a tuple's arrays are computed each into slots of their own (by the
    /// steps of its components) and the tuple's slot has no value of its own. Its slot's type
    /// is the tuple of its components' slot types.
    pub tuples: BTreeMap<Slot, Vec<Slot>>,
    /// Units whose value no device buffer of the host program holds (a struct of arrays: an
    /// array of tuples holding arrays; rows of filter results with their lengths): each runs as
    /// a program of its own on its arguments' values read back, and its value stays on the
    /// host. The builder admits them only where no kernel or loop reads their value (parts of
    /// the program's value, through tuples and host `if`s).
    pub direct: BTreeSet<usize>,
    /// The slot of each program parameter, in order.
    pub params: Vec<Slot>,
    pub main: Block,
}

/// Whether a typed program needs the host path: its host plan (`TypeInfo::host`) has a host
/// loop or a host `if`.
pub fn is_host_program(info: &TypeInfo) -> bool {
    info.host.has_sections()
}

impl HostProgram {
    /// The units a block may launch, nested sections included.
    pub fn block_units(&self, b: &Block) -> Vec<usize> {
        let mut out = vec![];
        for st in &b.steps {
            match st {
                Step::Kernels { unit, .. } => out.push(*unit),
                Step::Iterate { body, fusion, .. } => {
                    out.extend(self.block_units(body));
                    if let Some(f) = fusion {
                        out.extend(f.pre.iter().flat_map(|(a, b)| [*a, *b]));
                        out.extend(f.post.iter().flat_map(|(a, b, _)| [*a, *b]));
                        out.extend(f.both);
                    }
                }
                Step::Until { body, cond, .. } => {
                    out.extend(self.block_units(body));
                    out.push(*cond);
                }
                Step::If { then, els, .. } => {
                    out.extend(self.block_units(then));
                    out.extend(self.block_units(els));
                }
            }
        }
        out
    }

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
        for (i, cap) in self.caps.iter().enumerate() {
            if let Some(cap) = cap {
                s.push_str(&format!(
                    "  s{i} : {} in a buffer of {cap} elements, its length on the device\n",
                    self.slots[i]
                ));
            }
        }
        for (t, parts) in &self.tuples {
            let parts: Vec<String> = parts.iter().map(|p| format!("s{p}")).collect();
            s.push_str(&format!("  s{t} = ({})\n", parts.join(", ")));
        }
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
                fusion,
                ..
            } => {
                s.push_str(&format!(
                    "{pad}s{out} = iterate {count} from s{init} (state s{state}):\n"
                ));
                describe_block(body, depth + 1, s);
                if let Some(f) = fusion {
                    if let Some((pre, first)) = f.pre {
                        s.push_str(&format!(
                            "{pad}  first step: unit {first} (fused with unit {pre} computing s{init})\n"
                        ));
                    }
                    if let Some((post, last, o)) = f.post {
                        s.push_str(&format!(
                            "{pad}  last step: unit {last} into s{o} (fused with unit {post} reading s{})\n",
                            f.post_in
                        ));
                    }
                    if let Some(both) = f.both {
                        s.push_str(&format!("{pad}  a single step: unit {both}\n"));
                    }
                }
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
