//! OpenCL C code generation: a typed low-level LIFT program to kernels and a launch plan.
//!
//! Input: a `Program` with its `TypeInfo`. High-level `map`/`reduce`/`filter` left in the
//! program get a default lowering (parallel at the top of a kernel, sequential inside); the
//! rewriting stage chooses better ones.
//!
//! Algorithm: destination-passing generation. At host level every computed value becomes one
//! kernel (`filterGlb` included, see `gen/filter.rs`); between kernels nothing returns to the host,
//! and run-time lengths of filter results stay in device buffers that later kernels read. Inside
//! a kernel, `gen_into(e, dest)` emits the statements computing `e` into the view `dest`: layout
//! primitives in destination position re-index `dest`, maps become loops over work-items,
//! groups or sequential indices, reductions fold in a private accumulator, and data arguments
//! become views (`value`), materialized into a buffer (`memalloc`) only when they compute.
//!
//! Structure: `gen/` builds a typed OpenCL C tree (`ast`), one module per concern; every
//! identifier comes from one `namer::Namer`; `print` is the only place that writes C text.
//!
//! Barriers: after every `mapLcl` run at work-group level (never inside code that only some
//! work-items of a group execute), with the fence of the memory it wrote.
//!
//! Kernel ABI: `KERNEL_k(inputs in parameter order (arrays `const global T* restrict`, scalars by
//! value), output, output lengths, temporaries, int per size variable sorted by name)`, each
//! kernel taking only the buffers it uses.

#![warn(clippy::wildcard_enum_match_arm)]

mod ast;
mod gen;
mod namer;
mod print;
mod ptx;

pub use gen::{capacity_size, emit, emit_with, storage_parts, EmitOptions, WorkGroupLimit, BUG_NOTE};

use arith::ArithExpr;
use ir::{AddressSpace, Span, Type};
use memalloc::{Buffer, Memory, Role};
use std::fmt::{self, Write};

/// A kernel argument, in ABI order.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelArg {
    /// A global buffer, by index into `KernelPlan::memory.buffers`.
    Buffer(usize),
    /// A scalar program parameter passed by value.
    Param(usize),
    /// The value of a size variable (its C name, e.g. `v_N`).
    Size(String),
    /// The run-time error flag buffer (bounds checks of `at`).
    ErrorFlag,
    /// A `__local` array whose length depends on size variables: the host sizes it at launch
    /// (by index into `KernelPlan::memory.buffers`).
    Local(usize),
}

#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub args: Vec<KernelArg>,
    /// Global work size per dimension (with run-time lengths replaced by their capacities).
    pub global: Vec<ArithExpr>,
    /// Local work size, when the kernel uses work-groups.
    pub local: Option<Vec<usize>>,
    /// Code paths of the kernel chosen where it runs, one line each for `--emit plan`.
    pub notes: Vec<String>,
}

/// What the program returns and where it is.
#[derive(Clone, Debug)]
pub struct ResultSpec {
    pub data: usize,
    /// The buffers holding the result, `data` first: more than one when the result holds tuples
    /// of arrays, stored as one buffer per component (`storage_parts` gives their types).
    pub parts: Vec<usize>,
    /// Buffer of run-time length(s): one int for an existential result, one per row for an
    /// array of filter results.
    pub lengths: Option<usize>,
    pub ty: Type,
}

/// A size condition on a run-time length that only the device knows (`split #4` of a filter
/// result): the first kernel that reads the length checks it and sets the error flag to
/// `flag + 1` (as a failed `at` sets it to its index + 1).
#[derive(Clone, Debug)]
pub struct LengthCheck {
    /// Index into `KernelPlan::checks`.
    pub flag: usize,
    /// The condition, over C names: size variables and the length `length`.
    pub check: typeck::SizeCheck,
    /// The filter whose result has the length.
    pub filter: Span,
    /// C name of the length and its buffer (by index into `KernelPlan::memory.buffers`, int 0).
    pub length: (String, usize),
}

#[derive(Clone, Debug)]
pub struct KernelPlan {
    pub source: String,
    pub kernels: Vec<Kernel>,
    pub memory: Memory,
    /// Size variables: (user name, C name).
    pub sizes: Vec<(String, String)>,
    /// Capacities of run-time lengths: (C name, capacity over the size variables).
    pub capacities: Vec<(String, ArithExpr)>,
    pub result: ResultSpec,
    /// Source places of `at` bounds checks; the error flag holds index + 1.
    pub checks: Vec<Span>,
    /// The checks among `checks` that are conditions on run-time lengths.
    pub length_checks: Vec<LengthCheck>,
    /// The checks among `checks` (by index) that are integer divisors tested for zero.
    pub division_checks: Vec<usize>,
    /// `--emit views`: one line per bound variable and materialized value.
    pub views: String,
    /// The sizes built into the kernels (`EmitOptions::known_sizes`), by the program's names:
    /// the kernels compute these sizes only.
    pub specialised: Vec<(String, i64)>,
}

impl KernelPlan {
    pub fn uses_error_flag(&self) -> bool {
        !self.checks.is_empty()
    }

    pub fn global_buffers(&self) -> impl Iterator<Item = (usize, &Buffer)> {
        self.memory
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| b.space == AddressSpace::Global)
    }

    /// `--emit plan`: buffers and launches, in order.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "buffers:");
        for (_, b) in self.global_buffers() {
            let role = match b.role {
                Role::Input(k) => format!("input {k}"),
                Role::Output => "output".into(),
                Role::OutputLength => "output length".into(),
                Role::Temp => "temporary".into(),
                Role::TempLength => "temporary length".into(),
                Role::Scratch => "scratch".into(),
                Role::InputLength(k) => format!("length of input {k}"),
            };
            let _ = writeln!(s, "  {} : {} x {} ({role})", b.name, b.len, views::c_type(&b.elem));
        }
        for (c, cap) in &self.capacities {
            let _ = writeln!(s, "  run-time length {c} <= {cap} (read on the device)");
        }
        if !self.specialised.is_empty() {
            let known: Vec<String> = self.specialised.iter().map(|(n, v)| format!("{n}={v}")).collect();
            let _ = writeln!(s, "sizes built into the kernels: {}", known.join(" "));
        }
        let _ = writeln!(s, "kernels:");
        for k in &self.kernels {
            let g: Vec<String> = k.global.iter().map(|e| e.to_string()).collect();
            let l = match &k.local {
                Some(l) => l.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "),
                None => "driver's choice".into(),
            };
            let args: Vec<String> = k
                .args
                .iter()
                .map(|a| match a {
                    KernelArg::Buffer(b) => self.memory.buffers[*b].name.clone(),
                    KernelArg::Param(p) => format!("param {p}"),
                    KernelArg::Size(n) => n.clone(),
                    KernelArg::ErrorFlag => "error flag".into(),
                    KernelArg::Local(b) => {
                        let b = &self.memory.buffers[*b];
                        format!("local {} ({} elements)", b.name, b.len)
                    }
                })
                .collect();
            let _ = writeln!(
                s,
                "  {} global [{}] local [{l}] args ({})",
                k.name,
                g.join(", "),
                args.join(", ")
            );
            for n in &k.notes {
                let _ = writeln!(s, "    {n}");
            }
        }
        let _ = writeln!(
            s,
            "result: {} in {}{}",
            self.result.ty,
            self.memory.buffers[self.result.data].name,
            self.result
                .lengths
                .map(|l| format!(", lengths in {}", self.memory.buffers[l].name))
                .unwrap_or_default()
        );
        s
    }
}

impl fmt::Display for KernelPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}
