//! Legality of a typed low-level program for the OpenCL back end, decided before code generation.
//!
//! [`validate`] walks the program the way `codegen_opencl::emit` will lay it out in kernels —
//! host level (one kernel per computed value), then inside each kernel the execution level:
//! *top* (every work-item of the launch, outside its maps), *group* (inside `mapWrg`, outside
//! `mapLcl`: every work-item of a group in lockstep) and *item* (one work-item's own code) — and
//! reports every construct the back end cannot emit, each with the span of the offending node:
//!
//! - map nesting per dimension: `mapGlb`/`mapWrg` outermost in a kernel or directly inside maps
//!   of their own kind in other dimensions, `mapLcl` only inside `mapWrg` of its dimension and
//!   not inside another `mapLcl` of it, no kernel mixing `mapGlb` with `mapWrg`/`mapLcl`;
//! - what runs at work-group level: values computed or arrays copied directly inside `mapWrg`
//!   (also in the body of a sequential loop or reduction there, and a reduction's initial value)
//!   would be written by every work-item of the group (they must be distributed with `mapLcl`);
//! - address spaces of temporaries (a `toX` read as an input, or the innermost `toX` a computed
//!   input's elements are made by; a `toX` whose result goes straight into a destination takes
//!   the destination's space): `toLocal` only inside a work-group, `toPrivate` neither at
//!   work-group level nor around a `mapLcl`, private arrays of a size known at compile time;
//! - vector stores: no re-indexing between `asScalar`/`asVector` and the computation writing
//!   through it;
//! - barriers: a `mapLcl` at work-group level is followed by a barrier that the whole group must
//!   reach, so it may not sit in a branch of an `if`;
//! - kernels: `filterGlb` only at host level (it is several kernels), one length per dimension
//!   for the `mapGlb`s of a kernel (its launch size), unrolled loops of a length known at
//!   compile time, `iterate` within the unrolling limit, host-level scalar values without
//!   statements, parameters of supported types, no reduction accumulator of filter results;
//! - single primitives: `generate` of a scalar expression without bindings (not of tuples or
//!   arrays), no padding with
//!   tuples, `mapVec` functions returning scalars, no tuple containing a vector stored by a map
//!   or accumulated (not supported yet);
//! - filter results: every run-time length the back end allocates for has a capacity it can
//!   find (through `toX`, `let`, packs, `at` and the map that made an array of them), and an
//!   array of filter results bound at host level is only mapped over, no array of arrays of
//!   filter results, and tuples hold filter results only as whole components of the program's
//!   result (each with its own length; not supported yet elsewhere). Filter results of tuples
//!   holding arrays are stored as one buffer per component with the one length.
//!
//! High-level `map`/`reduce`/`filter` are checked as the default lowering treats them (a plain
//! `map` at the top of a kernel is `mapGlb`, elsewhere `mapSeq`). The code generator keeps its
//! own checks as internal errors: a program this crate accepts and `emit` refuses is a bug
//! (`agree.rs` tests this on mutated examples, the rewrite property test on every variant). The
//! one rule stricter than the code generator: `toLocal` outside a work-group, which it would emit
//! as one local array written by all work-items of a group at once.
//!
//! All diagnostics are returned, in source order, so a user sees every problem at once.

use ir::{AddressSpace, Diagnostic, Expr, ExprId, FilterKind, MapKind, Op, Prim, Program, ReduceKind, ScanKind, Type};
use std::collections::{BTreeMap, BTreeSet};
use typeck::{Binder, TypeInfo, MAX_PRIVATE_VALUES, MAX_UNROLLED_STEPS};
mod host;
mod kernel;
mod loops;
mod program;

/// Checks that `prog` (typed by `info`) can be emitted as OpenCL; every violation as a
/// diagnostic with the span of the node at fault.
pub fn validate(prog: &Program, info: &TypeInfo) -> Result<(), Vec<Diagnostic>> {
    validate_with(prog, info, &BTreeMap::new())
}

/// [`validate`] for kernels built for the sizes `known` (by the program's size names, as
/// `codegen_opencl::EmitOptions::known_sizes`): lengths they fix are constants there, so a
/// private array or an unrolled loop of such a length is legal, within
/// [`typeck::MAX_PRIVATE_VALUES`] and [`typeck::MAX_UNROLLED_STEPS`].
pub fn validate_with(prog: &Program, info: &TypeInfo, known: &BTreeMap<String, i64>) -> Result<(), Vec<Diagnostic>> {
    let mut v = Validator {
        prog,
        info,
        known,
        errs: vec![],
        pre: BTreeSet::new(),
        kernel: None,
        steps: BTreeMap::new(),
    };
    for p in &prog.params {
        match &p.ty {
            // A filter result: only the driver's units over a host loop's state have one.
            Type::Scalar(_) | Type::Array(..) | Type::Exists(_) => {}
            Type::Vector(..) | Type::Tuple(_) | Type::Fun(..) => v.errs.push(Diagnostic::new(
                p.ty_span,
                format!(
                    "parameters of type {} are not supported yet by the OpenCL back end (scalars and arrays are)",
                    p.ty
                ),
            )),
        }
    }
    v.host(prog.body, None);
    // (after the walk, which records the lengths of `iterate` bodies)
    v.constant_indices();
    v.shapes();
    v.capacities();
    v.nested_rows();
    if v.errs.is_empty() {
        return Ok(());
    }
    // in source order, whatever order the kernels are checked in
    v.errs.sort_by_key(|d| (d.span.start, d.span.end));
    v.errs.dedup_by(|a, b| a.span == b.span && a.message == b.message);
    Err(v.errs)
}

/// How far capacities are followed, as in the code generator (cyclic `let`s cannot occur; deep
/// chains are refused rather than followed without end).
const MAX_CAP_DEPTH: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Top,
    Group,
    Item,
}

/// Where a node of kernel code runs.
#[derive(Clone, Debug)]
struct Cx {
    level: Level,
    /// Parallel maps around this node, outermost first.
    active: Vec<MapKind>,
    /// Inside a branch of an `if` that not every work-item of a group may take.
    branch: bool,
    /// The `asScalar`/`asVector` whose dual view is the outermost layer of the destination
    /// (stores through it are vector or lane stores, and nothing may re-index them before).
    vec_dest: Option<ExprId>,
    /// Copies of this node's code that the unrolled loops around it make: the product of
    /// their steps (1 outside every unrolled loop).
    unrolled: i64,
}

/// The parallel maps seen so far in the kernel being checked.
#[derive(Default)]
struct Kernel {
    glb: Option<ExprId>,
    /// The length of the `mapGlb` of each dimension: the launch's size there.
    glb_len: [Option<ir::ArithExpr>; 3],
    wrg: Option<ExprId>,
    mixed: bool,
    /// A map was misplaced: its body's maps would only repeat that error as a mix of kinds.
    misplaced: bool,
}

struct Validator<'a> {
    prog: &'a Program,
    info: &'a TypeInfo,
    /// The sizes built into the kernels (empty: generic kernels).
    known: &'a BTreeMap<String, i64>,
    errs: Vec<Diagnostic>,
    /// Arguments computed by their own kernels before the kernel that reads them.
    pre: BTreeSet<ExprId>,
    kernel: Option<Kernel>,
    /// The lengths an `iterate` body's length variable takes, one per step (the body is typed
    /// once over the variable and emitted once per step, with each of these).
    steps: BTreeMap<String, Vec<ir::ArithExpr>>,
}

const TUPLE_OF_ARRAYS_ACC: &str =
    "reductions whose accumulator is a tuple containing arrays are not supported yet by the OpenCL back end";
const TUPLE_OF_ARRAYS_IF: &str =
    "`if` choosing between tuples containing arrays is not supported yet by the OpenCL back end";
const TUPLE_OF_ARRAYS_ITERATE: &str =
    "iterating over tuples containing arrays is not supported yet by the OpenCL back end";

/// Why a stored value of type `t` (arrays of tuples holding arrays, or one such tuple) has no
/// layout in the OpenCL back end, which stores those tuples as one buffer per component with
/// the outer lengths: a run-time length has no length buffer there. `None` when it has one.
fn tuple_storage_unsupported(t: &Type) -> Option<&'static str> {
    let mut el = t;
    while let Type::Array(x, _) | Type::Exists(x) = el {
        el = x;
    }
    // Outer run-time lengths are the component buffers' own (one length for all of them);
    // a run-time length inside a component would need a length per element.
    let Type::Tuple(cs) = el else { return None };
    if tuple_with_array(el) && cs.iter().any(exist_inside) {
        return Some("tuples containing filter results, and filter results of tuples containing arrays, are not supported yet by the OpenCL back end");
    }
    None
}

/// Whether a run-time length (a filter result) appears anywhere in `t`.
fn exist_inside(t: &Type) -> bool {
    match t {
        Type::Exists(_) => true,
        Type::Array(x, _) => exist_inside(x),
        Type::Tuple(cs) => cs.iter().any(exist_inside),
        Type::Scalar(_) | Type::Vector(..) | Type::Fun(..) => false,
    }
}

/// Whether a tuple holds an array at some depth.
fn tuple_with_array(t: &Type) -> bool {
    let Type::Tuple(cs) = t else { return false };
    cs.iter().any(|c| match c {
        Type::Array(..) | Type::Exists(_) => true,
        Type::Tuple(_) => tuple_with_array(c),
        Type::Scalar(_) | Type::Vector(..) | Type::Fun(..) => false,
    })
}

/// The element type below every array level.
fn innermost(t: &Type) -> &Type {
    match t {
        Type::Array(el, _) => innermost(el),
        Type::Exists(x) => innermost(x),
        Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Fun(..) => t,
    }
}

fn dim_suffix(d: u8) -> String {
    if d == 0 {
        String::new()
    } else {
        d.to_string()
    }
}

impl Validator<'_> {
    fn err(&mut self, e: ExprId, msg: impl Into<String>) {
        self.errs.push(Diagnostic::new(self.prog.span(e), msg));
    }

    fn ty(&self, e: ExprId) -> Option<&Type> {
        self.info.types.get(e.index()).and_then(|t| t.as_ref())
    }

    fn is_array(&self, e: ExprId) -> bool {
        matches!(self.ty(e), Some(Type::Array(..) | Type::Exists(_)))
    }

    fn lambda(&self, f: ExprId) -> Option<ExprId> {
        match self.prog.expr(f) {
            Expr::Lambda { body, .. } => Some(*body),
            _ => None,
        }
    }

    // ----- shapes the back end treats as views (mirrors of its own predicates) -----

    /// `map (λx. L x)` with `L` only join/split/transpose/slide/pad-clamp/pad by a literal and
    /// plain maps of those.
    fn layout_map(&self, e: ExprId) -> bool {
        let Expr::Prim {
            prim: Prim::Map(MapKind::Plain),
            args,
        } = self.prog.expr(e)
        else {
            return false;
        };
        match self.prog.expr(args[0]) {
            Expr::Lambda { params, body } if params.len() == 1 => {
                let mut any = false;
                self.layout_chain(*body, params[0], &mut any) && any
            }
            _ => false,
        }
    }

    fn layout_chain(&self, e: ExprId, x: ir::VarId, any: &mut bool) -> bool {
        match self.prog.expr(e) {
            Expr::Var(v) => *v == x,
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::Slide(..) | Prim::PadClamp(..),
                args,
            } => {
                *any = true;
                self.layout_chain(args[0], x, any)
            }
            Expr::Prim {
                prim: Prim::Pad(..),
                args,
            } if matches!(self.prog.expr(args[0]), Expr::Lit(_)) => {
                *any = true;
                self.layout_chain(args[1], x, any)
            }
            Expr::Prim {
                prim: Prim::Map(MapKind::Plain),
                args,
            } => match self.prog.expr(args[0]) {
                Expr::Lambda { params, body } if params.len() == 1 => {
                    self.layout_chain(args[1], x, any) && self.layout_chain(*body, params[0], any)
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// A layout map that a destination can be written through: no slide or pad in it (the
    /// back end's `layout_map_writable`).
    fn writable_layout_map(&self, e: ExprId) -> bool {
        let Expr::Prim {
            prim: Prim::Map(MapKind::Plain),
            args,
        } = self.prog.expr(e)
        else {
            return false;
        };
        self.layout_map(e) && self.lambda(args[0]).is_some_and(|b| self.only_duals(b))
    }

    /// `e` (a layout chain) re-indexes only by join, split and transpose.
    fn only_duals(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Prim { prim, args } => match prim {
                Prim::Join | Prim::Split(_) | Prim::Transpose => self.only_duals(args[0]),
                Prim::Map(MapKind::Plain) => {
                    self.only_duals(args[1]) && self.lambda(args[0]).is_some_and(|b| self.only_duals(b))
                }
                Prim::Map(_)
                | Prim::Slide(..)
                | Prim::Pad(..)
                | Prim::PadClamp(..)
                | Prim::Reduce(_)
                | Prim::Zip
                | Prim::ReorderStride(_)
                | Prim::Reverse
                | Prim::Generate(_)
                | Prim::Iterate(_)
                | Prim::IterateUntil(_)
                | Prim::Filter(_)
                | Prim::Scan(_)
                | Prim::AsVector(_)
                | Prim::AsScalar
                | Prim::To(_) => false,
            },
            Expr::Var(_) => true,
            Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => false,
        }
    }

    /// Whether `e` only rearranges existing data (no computation, no buffer).
    fn is_view(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Var(_) | Expr::Lit(_) => true,
            Expr::Prim { prim, args } => match prim {
                Prim::Zip
                | Prim::Split(_)
                | Prim::Join
                | Prim::Transpose
                | Prim::Slide(..)
                | Prim::PadClamp(..)
                | Prim::ReorderStride(_)
                | Prim::Reverse
                | Prim::AsVector(_)
                | Prim::AsScalar
                | Prim::Pad(..)
                | Prim::To(_) => args.iter().all(|a| self.is_view(*a)),
                Prim::Generate(_) => true,
                Prim::Map(_) => self.layout_map(e) && self.is_view(args[1]),
                Prim::Reduce(_) | Prim::Iterate(_) | Prim::Filter(_) | Prim::Scan(_) => false,
                Prim::IterateUntil(_) => false,
            },
            // a tuple holding arrays is the tuple of its components' views (struct of arrays);
            // `at` checks its index with statements
            Expr::Op { op, args } if self.ty(e).is_some_and(tuple_with_array) => {
                if matches!(op, Op::Tuple) {
                    args.iter().all(|a| self.is_view(*a))
                } else {
                    matches!(op, Op::Get(_)) && self.is_view(args[0])
                }
            }
            Expr::Op { .. } | Expr::If { .. } => !self.is_array(e),
            Expr::Let { value, body, .. } => self.is_view(*value) && self.is_view(*body),
            Expr::Pack(_) | Expr::Lambda { .. } => false,
        }
    }

    fn contains_parallel(&self, e: ExprId) -> bool {
        if self.pre.contains(&e) {
            return false;
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } if self.layout_map(e) => self.contains_parallel(args[1]),
            Expr::Prim {
                prim: Prim::Map(k),
                args,
            } => {
                matches!(k, MapKind::Glb(_) | MapKind::Wrg(_) | MapKind::Plain)
                    || args.iter().any(|a| self.contains_parallel(*a))
            }
            Expr::Lambda { .. } => false,
            _ => self.prog.children(e).iter().any(|c| self.contains_parallel(*c)),
        }
    }

    /// The address space a computed value is materialized in when no `toX` wraps it: that of
    /// the `toX` its elements are computed by, through maps, layouts and `let` bodies.
    fn space_of(&self, e: ExprId) -> Option<AddressSpace> {
        match self.prog.expr(e) {
            Expr::Prim { prim: Prim::To(s), .. } => Some(*s),
            Expr::Prim {
                prim: Prim::Map(_) | Prim::Iterate(_),
                args,
            } => self.lambda(args[0]).and_then(|b| self.space_of(b)),
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_),
                args,
            } => self.space_of(args[0]),
            Expr::Let { body, .. } => self.space_of(*body),
            _ => None,
        }
    }

    fn is_layout_of_var(&self, e: ExprId, x: ir::VarId) -> bool {
        match self.prog.expr(e) {
            Expr::Var(v) => *v == x,
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_) | Prim::To(_),
                args,
            } => self.is_layout_of_var(args[0], x),
            _ => false,
        }
    }

    fn contains_lcl(&self, e: ExprId) -> bool {
        matches!(
            self.prog.expr(e),
            Expr::Prim {
                prim: Prim::Map(MapKind::Lcl(_)),
                ..
            }
        ) || self.prog.children(e).iter().any(|c| self.contains_lcl(*c))
    }

    /// Whether evaluating `e` (outside its function arguments) computes anything.
    fn computes(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Prim { prim, args } => match prim {
                Prim::Map(_) => !self.layout_map(e) || self.computes(args[1]),
                Prim::Reduce(_) | Prim::Iterate(_) | Prim::Filter(_) | Prim::Scan(_) => true,
                _ => args.iter().any(|a| self.computes(*a)),
            },
            Expr::Lambda { .. } => false,
            _ => self.prog.children(e).iter().any(|c| self.computes(*c)),
        }
    }

    // ----- host level -----
}

/// The value of an `int` literal, seen through `let`s binding it (a `define`d function's
/// parameters are bound so), and the literal's node: where the value was written.
fn int_literal(prog: &Program, e: ExprId) -> Option<(i64, ExprId)> {
    let mut e = e;
    // (a chain of variables bound to variables: as deep as the program, bounded for safety)
    for _ in 0..64 {
        match prog.expr(e) {
            Expr::Lit(ir::Lit::Int(c)) => return Some((i64::from(*c), e)),
            Expr::Var(v) => {
                e = prog.exprs.iter().find_map(|x| match x {
                    Expr::Let {
                        kind: ir::LetKind::Let,
                        var,
                        value,
                        ..
                    } if var == v => Some(*value),
                    _ => None,
                })?;
            }
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod agree;
#[cfg(test)]
mod tests;
