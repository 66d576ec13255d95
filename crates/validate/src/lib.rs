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
//!   array of filter results bound at host level is only mapped over, and no array of arrays of
//!   filter results (not supported yet).
//!
//! High-level `map`/`reduce`/`filter` are checked as the default lowering treats them (a plain
//! `map` at the top of a kernel is `mapGlb`, elsewhere `mapSeq`). The code generator keeps its
//! own checks as internal errors: a program this crate accepts and `emit` refuses is a bug
//! (`agree.rs` tests this on mutated examples, the rewrite property test on every variant). The
//! one rule stricter than the code generator: `toLocal` outside a work-group, which it would emit
//! as one local array written by all work-items of a group at once.
//!
//! All diagnostics are returned, in source order, so a user sees every problem at once.

use ir::{AddressSpace, Diagnostic, Expr, ExprId, FilterKind, MapKind, Op, Prim, Program, ReduceKind, Type};
use std::collections::{BTreeMap, BTreeSet};
use typeck::{Binder, TypeInfo, MAX_PRIVATE_VALUES, MAX_UNROLLED_STEPS};

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
const TUPLE_OF_ARRAYS_FILTER: &str = "filtering tuples containing arrays is not supported yet by the OpenCL back end";
const TUPLE_OF_ARRAYS_IF: &str =
    "`if` choosing between tuples containing arrays is not supported yet by the OpenCL back end";
const TUPLE_OF_ARRAYS_ITERATE: &str =
    "iterating over tuples containing arrays is not supported yet by the OpenCL back end";

/// Why a stored value of type `t` (arrays of tuples holding arrays, or one such tuple) has no
/// layout in the OpenCL back end, which stores those tuples as one buffer per component with
/// the outer lengths: a run-time length has no length buffer there. `None` when it has one.
fn tuple_storage_unsupported(t: &Type) -> Option<&'static str> {
    let mut exist = false;
    let mut el = t;
    loop {
        match el {
            Type::Array(x, _) => el = x,
            Type::Exists(x) => {
                exist = true;
                el = x;
            }
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Fun(..) => break,
        }
    }
    let Type::Tuple(cs) = el else { return None };
    if tuple_with_array(el) && (exist || cs.iter().any(exist_inside)) {
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
                Prim::Reduce(_) | Prim::Iterate(_) | Prim::Filter(_) => false,
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
                Prim::Reduce(_) | Prim::Iterate(_) | Prim::Filter(_) => true,
                _ => args.iter().any(|a| self.computes(*a)),
            },
            Expr::Lambda { .. } => false,
            _ => self.prog.children(e).iter().any(|c| self.computes(*c)),
        }
    }

    // ----- host level -----

    /// A host-level value written to a destination seen through `vec_dest` (see [`Cx`]).
    fn host(&mut self, e: ExprId, vec_dest: Option<ExprId>) {
        // A host section packed by its binder (a loop over an unpacked filter result) keeps
        // its length on the device by itself (`lift::host`).
        if self.info.packs.contains(&e) && self.section_parts(e).is_none() {
            // a value packed with its run-time length is one kernel, computed arguments included
            self.in_kernel(e, |v| {
                let cx = Cx {
                    level: if v.contains_parallel(e) {
                        Level::Top
                    } else {
                        Level::Item
                    },
                    active: vec![],
                    branch: false,
                    vec_dest,
                    unrolled: 1,
                };
                v.into(e, &cx);
            });
            return;
        }
        self.section_values(e);
        if let Some(parts) = self.section_parts(e) {
            for p in parts {
                self.section_part(p);
            }
            return;
        }
        match self.prog.expr(e).clone() {
            Expr::Let { var, value, body, .. } => {
                // A `bool` read only by host `if`s is computed like their conditions.
                if ir::host::only_section_conditions(self.prog, var, body, |i| self.section_parts(i).is_some()) {
                    self.section_part(value);
                } else {
                    self.host_bind(value);
                }
                if self.is_rows(value) && !self.is_view(value) {
                    self.rows_only_mapped(var, body);
                }
                self.host(body, vec_dest);
            }
            Expr::Pack(inner) => self.host(inner, vec_dest),
            Expr::Prim { prim, args } => match prim {
                Prim::To(_) => self.host(args[0], vec_dest),
                Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_) => {
                    let vec_dest = self.through(e, vec_dest);
                    self.host(args[0], vec_dest)
                }
                Prim::Filter(FilterKind::Glb | FilterKind::Plain) => {
                    // a counting and a scattering kernel over the input; the predicate is one
                    // work-item's code
                    self.prepare(args[1]);
                    self.in_kernel(e, |v| {
                        let cx = Cx {
                            level: Level::Item,
                            active: vec![MapKind::Glb(0)],
                            branch: false,
                            vec_dest: None,
                            unrolled: 1,
                        };
                        v.func(args[0], &cx);
                        v.value(args[1], &cx);
                    });
                }
                _ => self.kernel(e, vec_dest),
            },
            // a tuple holding arrays: each component computed like a result of its own
            Expr::Op { op: Op::Tuple, args } if self.ty(e).is_some_and(tuple_with_array) => {
                for a in args {
                    self.host(a, None);
                }
            }
            _ => self.kernel(e, vec_dest),
        }
    }

    /// The destination of the argument of a layout primitive `e` written through: the `vec_dest`
    /// of that argument, after reporting a re-indexing between a vector view and its writes.
    fn through(&mut self, e: ExprId, vec_dest: Option<ExprId>) -> Option<ExprId> {
        let vector = matches!(
            self.prog.expr(e),
            Expr::Prim {
                prim: Prim::AsScalar | Prim::AsVector(_),
                ..
            }
        );
        if let Some(v) = vec_dest {
            let (outer, name) = match self.prog.expr(v) {
                Expr::Prim { prim, .. } => (prim.name(), self.prim_name(e)),
                _ => (String::new(), String::new()),
            };
            self.err(
                e,
                format!("the result of `{name}` cannot be written through the `{outer}` around it: vector stores need `{outer}` directly around the computation that writes the elements; apply `{name}` to the inputs instead, or `{outer}` inside it"),
            );
            return None;
        }
        vector.then_some(e)
    }

    /// The parts of a host section (`ir::host`: a host loop, an `if` over kernels): they run on
    /// the host, and each part is host level (the driver makes kernels of each on its own).
    fn section_parts(&self, e: ExprId) -> Option<Vec<ExprId>> {
        match self.prog.expr(e) {
            Expr::Prim { args, .. } if ir::host::is_host_loop(self.prog, e) => Some(
                args.iter()
                    .map(|a| match self.prog.expr(*a) {
                        Expr::Lambda { body, .. } => *body,
                        _ => *a,
                    })
                    .collect(),
            ),
            Expr::If { cond, then, els } if ir::host::is_host_if(self.prog, e) || self.is_array(e) => {
                Some(vec![*cond, *then, *els])
            }
            _ => None,
        }
    }

    /// Values that cross a host section live in device buffers: a filter result is one with
    /// its length in a buffer of its own, but arrays or tuples of them cannot be one yet.
    fn section_values(&mut self, e: ExprId) {
        let exist = |v: &Self, x: ExprId| match v.ty(x) {
            Some(Type::Exists(elem)) => elem.has_existential(),
            Some(t) => t.has_existential(),
            None => false,
        };
        if !self.has_section(e) {
            return;
        }
        if exist(self, e) {
            self.err(
                e,
                "arrays or tuples of filter results computed from a host section's value are not supported yet",
            );
        }
        if let Expr::Let { value, .. } = self.prog.expr(e) {
            if exist(self, *value) {
                self.err(
                    *value,
                    "arrays or tuples of filter results bound at host level and used across a host section are not supported yet",
                );
            }
        }
    }

    /// A part of a host section. A `bool` condition that kernels compute runs as a one-element
    /// buffer (the driver binds each array it reads outside the one work-item computing it):
    /// those arrays are host-level values; the unit is validated again on its own.
    fn section_part(&mut self, p: ExprId) {
        if self.ty(p) != Some(&Type::bool()) || !self.computes(p) {
            return self.host_bind(p);
        }
        let mut work = vec![p];
        while let Some(x) = work.pop() {
            match self.ty(x) {
                Some(Type::Array(..) | Type::Exists(_)) if self.computes(x) => self.host_bind(x),
                _ if matches!(self.prog.expr(x), Expr::Lambda { .. }) => {}
                _ => work.extend(self.prog.children(x)),
            }
        }
    }

    fn has_section(&self, e: ExprId) -> bool {
        let mut work = vec![e];
        while let Some(x) = work.pop() {
            if self.section_parts(x).is_some() {
                return true;
            }
            work.extend(self.prog.children(x));
        }
        false
    }

    fn prim_name(&self, e: ExprId) -> String {
        match self.prog.expr(e) {
            Expr::Prim { prim, .. } => prim.name(),
            _ => "this expression".into(),
        }
    }

    fn host_bind(&mut self, value: ExprId) {
        let stored = self.is_array(value) || self.ty(value).is_some_and(tuple_with_array);
        if !stored && self.computes(value) {
            self.err(
                value,
                "a scalar computation outside any map needs statements; compute it inside the map that uses it",
            );
            return;
        }
        if self.is_view(value) {
            // bound without a kernel, as an expression that reads its inputs
            return;
        }
        self.host(value, None);
    }

    /// Whether `e` is an array of filter results.
    fn is_rows(&self, e: ExprId) -> bool {
        matches!(self.ty(e), Some(Type::Array(el, _)) if matches!(**el, Type::Exists(_)))
    }

    /// An array of filter results bound at host level is a buffer of rows and one of their
    /// lengths: a map unpacks each row with its length, but no other use knows the lengths.
    fn rows_only_mapped(&mut self, var: ir::VarId, body: ExprId) {
        let mut stack = vec![(body, false)];
        while let Some((e, mapped)) = stack.pop() {
            match self.prog.expr(e) {
                Expr::Var(v) if *v == var && !mapped => self.err(
                    e,
                    "this array of filter results can only be mapped over here (each row with its own length); to use it otherwise, compute it inside the map that uses it",
                ),
                Expr::Prim {
                    prim: Prim::Map(_),
                    args,
                } => {
                    stack.push((args[0], false));
                    stack.push((args[1], true));
                }
                _ => stack.extend(self.prog.children(e).into_iter().map(|c| (c, false))),
            }
        }
    }

    /// Computed array arguments of a top-level computation get kernels of their own first.
    fn prepare(&mut self, e: ExprId) {
        let args: Vec<ExprId> = match self.prog.expr(e) {
            Expr::Prim { args, .. } | Expr::Op { args, .. } => args
                .iter()
                .copied()
                .filter(|a| !matches!(self.prog.expr(*a), Expr::Lambda { .. }))
                .collect(),
            Expr::If { cond, then, els } => vec![*cond, *then, *els],
            Expr::Var(_) | Expr::Lit(_) | Expr::Lambda { .. } | Expr::Let { .. } | Expr::Pack(_) => vec![],
        };
        for a in args {
            if self.pre.contains(&a) {
                continue;
            }
            let computes = match self.prog.expr(a) {
                Expr::Prim { prim: Prim::Map(_), .. } => !self.layout_map(a),
                Expr::Prim {
                    prim: Prim::Reduce(_) | Prim::Iterate(_),
                    ..
                } => true,
                // a host section's value is computed before the kernel that reads it
                _ if self.section_parts(a).is_some() => true,
                Expr::Prim {
                    prim: Prim::To(_),
                    args,
                } => !self.is_view(args[0]),
                _ => false,
            };
            let plain_array =
                matches!(self.ty(a), Some(Type::Array(..))) && !self.ty(a).is_some_and(Type::has_existential);
            if computes && plain_array {
                self.host(a, None);
                self.pre.insert(a);
            } else if !computes {
                self.prepare(a);
            }
        }
    }

    fn kernel(&mut self, e: ExprId, vec_dest: Option<ExprId>) {
        self.prepare(e);
        let level = if self.contains_parallel(e) || self.is_view(e) {
            Level::Top
        } else {
            Level::Item
        };
        self.in_kernel(e, |v| {
            let cx = Cx {
                level,
                active: vec![],
                branch: false,
                vec_dest,
                unrolled: 1,
            };
            v.into(e, &cx);
        });
    }

    fn in_kernel(&mut self, e: ExprId, f: impl FnOnce(&mut Self)) {
        let saved = self.kernel.replace(Kernel::default());
        f(self);
        let k = std::mem::replace(&mut self.kernel, saved).unwrap_or_default();
        if k.mixed && !k.misplaced {
            let at = k.wrg.or(k.glb).unwrap_or(e);
            self.err(at, "a kernel cannot mix mapGlb with mapWrg/mapLcl");
        }
    }

    // ----- kernel code -----

    /// `e` computed into a destination (a buffer, or the enclosing map's element).
    fn into(&mut self, e: ExprId, cx: &Cx) {
        if self.pre.contains(&e) {
            return;
        }
        match self.prog.expr(e).clone() {
            // `let k = v in layout(k)`: `v` is computed straight into the destination seen
            // through the layout
            Expr::Let { var, value, body, .. }
                if !self.info.unpacks.contains_key(&typeck::Binder::Let(e)) && self.is_layout_of_var(body, var) =>
            {
                let mut cur = body;
                let mut cx = cx.clone();
                while let Expr::Prim { prim, args } = self.prog.expr(cur) {
                    if !matches!(prim, Prim::To(_)) {
                        cx.vec_dest = self.through(cur, cx.vec_dest);
                    }
                    cur = args[0];
                }
                self.into(value, &cx);
            }
            Expr::Let { value, body, .. } => {
                self.value(value, cx);
                self.into(body, cx);
            }
            Expr::Pack(inner) => self.into(inner, cx),
            Expr::Prim { prim, args } => match prim {
                // computed straight into the destination, which decides the address space
                Prim::To(_) => self.into(args[0], cx),
                Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_) => {
                    let vec_dest = self.through(e, cx.vec_dest);
                    self.into(args[0], &Cx { vec_dest, ..cx.clone() })
                }
                Prim::Map(_) if self.writable_layout_map(e) => {
                    let vec_dest = self.through(e, cx.vec_dest);
                    self.into(args[1], &Cx { vec_dest, ..cx.clone() })
                }
                Prim::Map(kind) => self.map(e, kind, args[0], args[1], cx),
                Prim::Reduce(kind) => self.reduce(e, kind, args[0], args[1], args[2], cx),
                Prim::Filter(FilterKind::Glb) => self.err(
                    e,
                    "`filterGlb` needs several kernels, so it must be at the top level of the program (bind its result with let/unpack), not inside a map",
                ),
                Prim::Filter(FilterKind::Seq | FilterKind::Plain) => {
                    self.group_write(e, cx);
                    self.func(args[0], &Cx { level: Level::Item, ..cx.clone() });
                    self.value(args[1], cx);
                }
                Prim::Iterate(k) => {
                    if k.as_cst().is_some_and(|k| k > typeck::MAX_ITERATE) {
                        self.err(
                            e,
                            format!(
                                "`iterate` is unrolled in generated code and limited to {} steps",
                                typeck::MAX_ITERATE
                            ),
                        );
                    }
                    self.iterate_steps(&k, args[0], args[1]);
                    self.func(args[0], cx);
                    self.value(args[1], cx);
                }
                // Host sections are split off by the driver before kernels are validated.
                Prim::IterateUntil(_) => self.err(e, "`iterate-until` runs only at host level, not inside a kernel"),
                Prim::Zip
                | Prim::Slide(..)
                | Prim::Pad(..)
                | Prim::PadClamp(..)
                | Prim::ReorderStride(_)
                | Prim::Reverse
                | Prim::Generate(_) => {
                    self.copy(e, cx);
                    for a in args {
                        self.value(a, cx);
                    }
                }
            },
            Expr::Var(_) | Expr::Lit(_) | Expr::Op { .. } | Expr::If { .. } => {
                if self.is_array(e) {
                    self.copy(e, cx);
                } else {
                    self.group_write(e, cx);
                }
                self.value(e, cx);
            }
            Expr::Lambda { .. } => {}
        }
    }

    /// A value computed at work-group level outside `mapLcl` is written by every work-item.
    fn group_write(&mut self, e: ExprId, cx: &Cx) {
        if cx.level == Level::Group {
            self.err(e, "this value is computed directly inside `mapWrg`, so every work-item of the group would write it; distribute the work with `mapLcl`");
        }
    }

    fn copy(&mut self, e: ExprId, cx: &Cx) {
        if cx.level == Level::Group && self.is_array(e) {
            self.err(
                e,
                "copying an array directly inside `mapWrg` would be done by every work-item; use `mapLcl` to copy it",
            );
        }
    }

    /// `e` read as an input: computed arrays are materialized into temporaries first.
    fn value(&mut self, e: ExprId, cx: &Cx) {
        if self.pre.contains(&e) {
            return;
        }
        match self.prog.expr(e).clone() {
            Expr::Var(_) | Expr::Lit(_) => {}
            // read where it is used (`generate`'s index function)
            Expr::Lambda { body, .. } => self.value(body, cx),
            Expr::Prim {
                prim: Prim::To(space),
                args,
            } if !self.is_view(args[0]) => {
                self.space(e, space, args[0], cx);
                self.into(
                    args[0],
                    &Cx {
                        vec_dest: None,
                        ..cx.clone()
                    },
                );
            }
            Expr::Prim {
                prim: Prim::Map(_) | Prim::Reduce(_) | Prim::Iterate(_) | Prim::Filter(_),
                ..
            } if !self.is_view(e) => {
                // a temporary in the address space its innermost `toX` asks for; an
                // `iterate`'s holds each step's result, counted at its largest step
                if let Some(space) = self.space_of(e) {
                    let held = match self.prog.expr(e) {
                        Expr::Prim {
                            prim: Prim::Iterate(k),
                            args,
                        } => {
                            let (k, f, xs) = (k.clone(), args[0], args[1]);
                            self.iterate_steps(&k, f, xs);
                            self.lambda(f).unwrap_or(e)
                        }
                        _ => e,
                    };
                    self.space(e, space, held, cx);
                }
                self.into(
                    e,
                    &Cx {
                        vec_dest: None,
                        ..cx.clone()
                    },
                )
            }
            // a layout map's function is re-indexing, not code
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => self.value(args[1], cx),
            Expr::Let { value, body, .. } => {
                self.value(value, cx);
                self.value(body, cx);
            }
            Expr::If { cond, then, els } => {
                self.value(cond, cx);
                let branch = Cx {
                    branch: true,
                    ..cx.clone()
                };
                self.value(then, &branch);
                self.value(els, &branch);
            }
            Expr::Prim { args, .. } | Expr::Op { args, .. } => {
                for a in args {
                    self.value(a, cx);
                }
            }
            Expr::Pack(inner) => self.value(inner, cx),
        }
    }

    /// The address-space rules of `toX e`.
    fn space(&mut self, at: ExprId, space: AddressSpace, arg: ExprId, cx: &Cx) {
        match space {
            AddressSpace::Global => {}
            AddressSpace::Local => {
                if !cx.active.iter().any(|k| matches!(k, MapKind::Wrg(_))) {
                    self.err(
                        at,
                        "`toLocal` needs a work-group: local memory exists only inside `mapWrg` (use toGlobal or toPrivate here)",
                    );
                }
            }
            AddressSpace::Private => {
                if cx.level == Level::Group {
                    self.err(
                        at,
                        "a private array at work-group level would be written by every work-item; use toLocal",
                    );
                } else if self.contains_lcl(arg) {
                    self.err(at, "this array is computed by several work-items (`mapLcl`), so it cannot be kept in the private memory of one; write it to local memory with toLocal, or straight into the result");
                } else if let Some(t) = self.ty(arg) {
                    let mut dims = vec![];
                    let mut t = t;
                    while let Type::Array(el, n) = t {
                        dims.push(n.clone());
                        t = el;
                    }
                    let unknown = dims.iter().find(|n| !self.known(n));
                    if let Some(n) = unknown {
                        self.err(
                            at,
                            format!("a private array must have a size known at compile time, but this one has length {n}; use a constant split size, toLocal or toGlobal"),
                        );
                    } else if let Some(msg) = self.private_too_large(&dims, t) {
                        self.err(at, msg);
                    }
                }
            }
        }
    }

    /// Why a private array of lengths `dims` (each known) and elements `el` is refused as too
    /// large or of a negative length; `None` when it fits. In an `iterate` body, a length
    /// that changes with the steps counts at its largest step.
    fn private_too_large(&self, dims: &[ir::ArithExpr], el: &Type) -> Option<String> {
        if let Some((_, shown)) = self.largest(dims, |d| {
            d.iter().any(|n| n.as_cst().is_some_and(|c| c < 0)).then_some(1)
        }) {
            let at = dims
                .iter()
                .zip(&shown)
                .find(|(n, _)| self.fixed(n).as_cst().is_none_or(|c| c < 0));
            return Some(format!(
                "this private array has a negative length, {}",
                at.map_or_else(|| shown.join(" × "), |(_, s)| s.clone())
            ));
        }
        let values = |d: &[ir::ArithExpr]| {
            let mut fixed = el.clone();
            for n in d.iter().rev() {
                fixed = Type::array(fixed, ir::ArithExpr::cst(n.as_cst()?));
            }
            // (too many to count is more than any limit)
            Some(typeck::private_values(&fixed).unwrap_or(i64::MAX))
        };
        let (v, shown) = self.largest(dims, values)?;
        if v <= MAX_PRIVATE_VALUES {
            return None;
        }
        Some(format!(
            "this private array holds {} values ({} {}), more than the {MAX_PRIVATE_VALUES} a work-item may keep in private memory; use toLocal or toGlobal",
            if v == i64::MAX { "too many".to_string() } else { v.to_string() },
            if shown.len() == 1 { "length" } else { "lengths" },
            shown.join(" × ")
        ))
    }

    /// ` = c with M = 4096` where a length is fixed only by the built-in sizes, else nothing.
    fn with_sizes(&self, n: &ir::ArithExpr) -> String {
        if n.as_cst().is_some() {
            return String::new();
        }
        let used: Vec<String> = (self.known.iter())
            .filter(|(k, _)| n.mentions(k))
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        match self.fixed(n).as_cst() {
            Some(c) if n.as_var().is_some() => format!(" = {c}"),
            Some(c) if !used.is_empty() => format!(" = {c} with {}", used.join(", ")),
            Some(_) | None => String::new(),
        }
    }

    /// The body of a function argument, run at `cx`.
    fn func(&mut self, f: ExprId, cx: &Cx) {
        match self.lambda(f) {
            Some(body) => self.into(body, cx),
            None => self.value(f, cx),
        }
    }

    fn map(&mut self, e: ExprId, kind: MapKind, f: ExprId, xs: ExprId, cx: &Cx) {
        self.value(xs, cx);
        let kind = match kind {
            MapKind::Plain if cx.level == Level::Top => MapKind::Glb(0),
            MapKind::Plain => MapKind::Seq,
            k => k,
        };
        let inner = match kind {
            MapKind::Seq | MapKind::SeqUnroll | MapKind::Vec | MapKind::Plain => {
                let unrolled = if kind == MapKind::SeqUnroll {
                    self.unrolled(e, xs, cx)
                } else {
                    cx.unrolled
                };
                // a loop run at the level it is in: at work-group level its body's writes
                // must be distributed by `mapLcl`s
                Cx {
                    vec_dest: None,
                    unrolled,
                    ..cx.clone()
                }
            }
            MapKind::Glb(d) | MapKind::Wrg(d) | MapKind::Lcl(d) => {
                self.parallel(e, kind, d, xs, cx);
                let mut active = cx.active.clone();
                active.push(kind);
                Cx {
                    level: if matches!(kind, MapKind::Wrg(_)) {
                        Level::Group
                    } else {
                        Level::Item
                    },
                    active,
                    branch: cx.branch && !matches!(kind, MapKind::Wrg(_)),
                    // each element is stored whole
                    vec_dest: None,
                    unrolled: cx.unrolled,
                }
            }
        };
        self.func(f, &inner);
    }

    fn parallel(&mut self, e: ExprId, kind: MapKind, d: u8, xs: ExprId, cx: &Cx) {
        let same = |k: fn(u8) -> MapKind| cx.active.contains(&k(d));
        let name = Prim::Map(kind).name();
        let ok = match kind {
            MapKind::Glb(_) => {
                (cx.level == Level::Top
                    || (cx.level == Level::Item
                        && !cx.active.is_empty()
                        && cx.active.iter().all(|a| matches!(a, MapKind::Glb(_)))))
                    && !same(MapKind::Glb)
            }
            MapKind::Wrg(_) => {
                (cx.level == Level::Top
                    || (cx.level == Level::Group && cx.active.iter().all(|a| matches!(a, MapKind::Wrg(_)))))
                    && !same(MapKind::Wrg)
            }
            _ => same(MapKind::Wrg) && !same(MapKind::Lcl),
        };
        if !ok {
            let msg = match kind {
                MapKind::Glb(_) => format!(
                    "`{name}` must be the outermost map of a kernel, or directly inside `mapGlb` of other dimensions"
                ),
                MapKind::Wrg(_) => format!(
                    "`{name}` must be the outermost map of a kernel, or directly inside `mapWrg` of other dimensions"
                ),
                _ => format!(
                    "`{name}` must be inside `mapWrg{}` (and not inside another `{name}`)",
                    dim_suffix(d)
                ),
            };
            self.err(e, msg);
            if let Some(k) = self.kernel.as_mut() {
                k.misplaced = true;
            }
        }
        if matches!(kind, MapKind::Lcl(_)) && cx.level == Level::Group && cx.branch {
            self.err(
                e,
                format!("`{name}` here runs only on the work-items that take this branch of `if`, but the barrier after it must be reached by the whole work-group; move it out of the `if`"),
            );
        }
        let len = match self.ty(xs) {
            Some(Type::Array(_, n)) => Some(n.clone()),
            _ => None,
        };
        let mut clash = None;
        if let Some(k) = self.kernel.as_mut() {
            match kind {
                MapKind::Glb(_) => {
                    k.glb.get_or_insert(e);
                    k.mixed |= k.wrg.is_some();
                    if let (true, Some(slot), Some(n)) = (ok, k.glb_len.get_mut(usize::from(d)), len) {
                        match slot {
                            Some(m) if *m != n => clash = Some((m.clone(), n)),
                            Some(_) => {}
                            None => *slot = Some(n),
                        }
                    }
                }
                _ => {
                    k.wrg.get_or_insert(e);
                    k.mixed |= k.glb.is_some();
                }
            }
        }
        if let Some((m, n)) = clash {
            let name = Prim::Map(kind).name();
            self.err(
                e,
                format!("this `{name}` runs over {n} elements but another `{name}` of the same kernel over {m}: a kernel's launch has one size per dimension; compute one of them in a kernel of its own (bind it with let at the top level)"),
            );
        }
    }

    /// Rules about single primitives, wherever they are.
    fn shapes(&mut self) {
        let mut seen = BTreeSet::new();
        let mut stack = vec![self.prog.body];
        let mut stored_tuple_of_arrays = false;
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            stack.extend(self.prog.children(e));
            // both branches are evaluated and their C values selected; an array has no C value
            if matches!(self.prog.expr(e), Expr::If { .. }) && self.ty(e).is_some_and(tuple_with_array) {
                self.err(e, TUPLE_OF_ARRAYS_IF);
                continue;
            }
            let Expr::Prim { prim, args } = self.prog.expr(e) else {
                continue;
            };
            let tuple = |v: &Self, x: ExprId| matches!(v.ty(x), Some(Type::Tuple(_)));
            match prim {
                Prim::Pad(..) if tuple(self, args[0]) => self.err(args[0], "padding with tuples is not supported yet"),
                Prim::Generate(_) => {
                    let Some(body) = self.lambda(args[0]) else { continue };
                    if tuple(self, body) {
                        self.err(args[0], "generate of tuples is not supported yet");
                    } else if self.is_array(body) {
                        self.err(args[0], "generate of arrays is not supported yet");
                    } else if self.has_statements(body) {
                        // With statements (`let`s, `at`'s bounds check) the function becomes a
                        // C function of the index, called where an element is read, with the
                        // scalars and vectors it reads from outside as arguments: it may read
                        // nothing else, and compute only scalars.
                        let captured = ir::host::free_vars(self.prog, args[0]);
                        let array = captured
                            .iter()
                            .find(|v| !matches!(self.info.var_ty(**v), Type::Scalar(_) | Type::Vector(..)));
                        if let Some(v) = array {
                            let name = self.prog.var(*v).name.clone();
                            self.err(
                                args[0],
                                format!("the function of `generate` binds names with `let` or reads with `at`, so it may read only its index and scalars or vectors from outside, not `{name}` of type {}", self.info.var_ty(*v)),
                            );
                        } else if self.has_array_work(body) {
                            self.err(
                                args[0],
                                "the function of `generate` must compute its element from scalars: array primitives inside it are not supported yet",
                            );
                        }
                    }
                }
                Prim::Filter(FilterKind::Seq) if matches!(self.ty(args[1]), Some(Type::Array(el, _)) if matches!(**el, Type::Array(..))) =>
                {
                    self.err(
                        e,
                        "`filterSeq` over rows (arrays of arrays) is not supported yet by the OpenCL back end; `filterGlb` filters rows",
                    );
                }
                Prim::Map(MapKind::Vec) => {
                    if let Some(body) = self.lambda(args[0]).filter(|b| tuple(self, *b)) {
                        self.err(body, "mapVec functions return scalars");
                    }
                }
                _ => {}
            }
            // Tuples holding arrays are stored as one buffer per component (struct of arrays),
            // with no room for run-time lengths; an accumulator is copied between steps as C
            // values, and a filter moves whole C elements.
            match prim {
                Prim::Map(_) if !self.layout_map(e) => {
                    let why = self.ty(e).and_then(tuple_storage_unsupported);
                    if let (Some(why), Some(body)) = (why, self.lambda(args[0])) {
                        self.err(body, why);
                        stored_tuple_of_arrays = true;
                    }
                }
                Prim::Reduce(_) => {
                    if let Some(body) = self
                        .lambda(args[0])
                        .filter(|b| self.ty(*b).is_some_and(tuple_with_array))
                    {
                        self.err(body, TUPLE_OF_ARRAYS_ACC);
                        stored_tuple_of_arrays = true;
                    }
                }
                Prim::Filter(_) if self.ty(e).is_some_and(|t| tuple_with_array(innermost(t))) => {
                    self.err(e, TUPLE_OF_ARRAYS_FILTER);
                    stored_tuple_of_arrays = true;
                }
                Prim::Iterate(_) if self.ty(e).is_some_and(|t| tuple_with_array(innermost(t))) => {
                    self.err(e, TUPLE_OF_ARRAYS_ITERATE);
                    stored_tuple_of_arrays = true;
                }
                _ => {}
            }
        }
        let body = self.prog.body;
        if !stored_tuple_of_arrays {
            if let Some(why) = self.ty(body).and_then(tuple_storage_unsupported) {
                self.err(body, why);
            }
        }
    }

    /// Buffers for filter results are allocated at their capacity, the length of the input
    /// they are filtered from: every run-time length the back end allocates for (the program's
    /// result, values unpacked by `let`) must lead back to a filter through the forms that
    /// carry it.
    fn capacities(&mut self) {
        let body = self.prog.body;
        // A host section's values are bounded by the driver (`lift::host`), unit by unit.
        let res = match self.ty(body) {
            _ if self.has_section(body) => Ok(()),
            Some(Type::Exists(_)) => self.cap(body, 0),
            Some(Type::Array(el, _)) if matches!(**el, Type::Exists(_)) => self.row_cap(body, 0),
            _ => Ok(()),
        };
        let mut found: Vec<(ExprId, &'static str)> = res.err().into_iter().collect();
        let lets: Vec<ExprId> = self
            .info
            .unpacks
            .keys()
            .filter_map(|b| match b {
                Binder::Let(l) => Some(*l),
                Binder::Param(..) => None,
            })
            .collect();
        for l in lets {
            if let Expr::Let { value, .. } = self.prog.expr(l) {
                if self.has_section(*value) {
                    continue;
                }
                if let Err(f) = self.cap(*value, 0) {
                    found.push(f);
                }
            }
        }
        for (e, msg) in found {
            self.err(e, msg);
        }
    }

    /// Arrays of filter results have one level of run-time lengths (a length per row); an array
    /// of arrays of them would need lengths per row of each row.
    fn nested_rows(&mut self) {
        fn depth(t: &Type) -> usize {
            match t {
                Type::Array(el, _) if el.has_existential() => 1 + depth(el),
                Type::Scalar(_)
                | Type::Vector(..)
                | Type::Tuple(_)
                | Type::Array(..)
                | Type::Exists(_)
                | Type::Fun(..) => 0,
            }
        }
        let mut stack = vec![self.prog.body];
        while let Some(e) = stack.pop() {
            if matches!(self.prog.expr(e), Expr::Lambda { .. }) {
                stack.extend(self.prog.children(e));
                continue;
            }
            match self.ty(e) {
                Some(t) if depth(t) >= 2 => {
                    let t = t.clone();
                    self.err(
                        e,
                        format!("arrays of arrays of filter results ({t}) are not supported yet by the OpenCL back end: only one level of rows with their own lengths is"),
                    );
                }
                _ => stack.extend(self.prog.children(e)),
            }
        }
    }

    /// `at c xs` with a literal index `c` out of range where the length is known (a literal,
    /// fixed by the built-in sizes, or at some step of an `iterate`) fails on every run that
    /// reaches it: refused here, at its place. (Within range, the code generator drops its
    /// run-time check; elsewhere the check stays.)
    fn constant_indices(&mut self) {
        for i in 0..self.prog.exprs.len() {
            let e = ExprId(i as u32);
            let Expr::Op { op: Op::At, args } = self.prog.expr(e) else {
                continue;
            };
            let Some((c, at)) = int_literal(self.prog, args[0]) else {
                continue;
            };
            if c < 0 {
                self.err(at, format!("the index of `at` is {c}, below 0"));
                continue;
            }
            let Some(Type::Array(_, n)) = self.ty(args[1]) else {
                continue;
            };
            let n = n.clone();
            let out = |d: &[ir::ArithExpr]| Some(i64::from(d[0].as_cst().is_some_and(|len| c >= len)));
            if let Some((1, shown)) = self.largest(std::slice::from_ref(&n), out) {
                self.err(
                    at,
                    format!(
                        "the index of `at` is {c}, out of range for an array of length {}",
                        shown[0]
                    ),
                );
            }
        }
    }

    /// Whether the capacity of the filter result `e` is known: followed through `toX`, `let`
    /// bodies, packs, `at` of an array of filter results, and the binders of the run-time
    /// lengths in its input's length.
    fn cap(&self, e: ExprId, depth: usize) -> Result<(), (ExprId, &'static str)> {
        if depth > MAX_CAP_DEPTH {
            return Err((e, "the OpenCL back end cannot bound the length of this filter result"));
        }
        if self.info.packs.contains(&e) {
            return self.close_caps(e, depth);
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Filter(_),
                args,
            } => self.close_caps(args[1], depth),
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.cap(args[0], depth + 1),
            Expr::Pack(inner) => self.close_caps(*inner, depth),
            Expr::Let { body, .. } => self.cap(*body, depth + 1),
            Expr::Op { op: Op::At, args } => self.row_cap(args[1], depth + 1),
            Expr::Var(_) | Expr::Lit(_) | Expr::Lambda { .. } | Expr::Prim { .. } | Expr::Op { .. } | Expr::If { .. } => Err((
                e,
                "the OpenCL back end cannot bound the length of this filter result: it must come from a filter through let, toX or `at`",
            )),
        }
    }

    /// The run-time lengths in the length of array `e`, each bounded through its binder.
    fn close_caps(&self, e: ExprId, depth: usize) -> Result<(), (ExprId, &'static str)> {
        let Some(Type::Array(_, n)) = self.ty(e) else {
            return Ok(());
        };
        for v in n.free_vars() {
            let Some(binder) = self.info.unpacks.iter().find(|(_, x)| **x == v).map(|(b, _)| *b) else {
                continue;
            };
            match binder {
                Binder::Let(l) => {
                    if let Expr::Let { value, .. } = self.prog.expr(l) {
                        self.cap(*value, depth + 1)?;
                    }
                }
                Binder::Param(lam, _) => {
                    let map = (0..self.prog.exprs.len() as u32).map(ExprId).find(
                        |id| matches!(self.prog.expr(*id), Expr::Prim { args, .. } if args.first() == Some(&lam)),
                    );
                    if let Some(Expr::Prim { args, .. }) = map.map(|m| self.prog.expr(m)) {
                        if args.len() > 1 {
                            self.row_cap(args[1], depth + 1)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the capacity of the rows of the array of filter results `e` is known.
    fn row_cap(&self, e: ExprId, depth: usize) -> Result<(), (ExprId, &'static str)> {
        if depth > MAX_CAP_DEPTH {
            return Err((e, "the OpenCL back end cannot bound the length of these filter results"));
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => match self.lambda(args[0]) {
                Some(body) => self.cap(body, depth + 1),
                None => Ok(()),
            },
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.row_cap(args[0], depth + 1),
            Expr::Let { body, .. } => self.row_cap(*body, depth + 1),
            Expr::Var(v) => {
                let def = (0..self.prog.exprs.len() as u32)
                    .map(ExprId)
                    .find(|id| matches!(self.prog.expr(*id), Expr::Let { var, .. } if var == v));
                match def.map(|d| self.prog.expr(d)) {
                    Some(Expr::Let { value, .. }) => self.row_cap(*value, depth + 1),
                    _ => Err((
                        e,
                        "the OpenCL back end supports arrays of filter results only when bound by let",
                    )),
                }
            }
            Expr::Lit(_) | Expr::Lambda { .. } | Expr::Prim { .. } | Expr::Op { .. } | Expr::If { .. } | Expr::Pack(_) => Err((
                e,
                "the OpenCL back end supports arrays of filter results only as the direct result of a map (or through let and toX), not rearranged",
            )),
        }
    }

    /// Whether a scalar expression needs statements in C (a binding, a loop, a temporary).
    /// Whether `e` holds an array primitive or a `pack` (work beyond scalar operators, `if`
    /// and `let`).
    fn has_array_work(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Prim { .. } | Expr::Pack(_) => true,
            _ => self.prog.children(e).iter().any(|c| self.has_array_work(*c)),
        }
    }

    fn has_statements(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Let { .. } | Expr::Prim { .. } | Expr::Pack(_) | Expr::Op { op: Op::At, .. } => true,
            _ => self.prog.children(e).iter().any(|c| self.has_statements(*c)),
        }
    }

    /// `n` as the generated code sees it: with the built-in sizes substituted (and simplified
    /// as the code generator does, so that both agree on which lengths are constants).
    fn fixed(&self, n: &ir::ArithExpr) -> ir::ArithExpr {
        let mut n = n.clone();
        for (name, v) in self.known {
            if n.mentions(name) {
                n = n.subst(name, &ir::ArithExpr::cst(*v));
            }
        }
        n
    }

    /// Whether a length is a constant in generated code: a literal, one the built-in sizes
    /// fix, or one of an `iterate` body, typed once over a symbolic length but emitted once
    /// per step, where that length is a constant.
    fn known(&self, n: &ir::ArithExpr) -> bool {
        let n = self.fixed(n);
        n.as_cst().is_some()
            || self.largest(std::slice::from_ref(&n), |d| d[0].as_cst()).is_some()
            || (n.free_vars().iter()).all(|v| self.info.iter_vars.contains(v) && !self.steps.contains_key(v))
    }

    /// The checks of an unrolled loop over `xs` inside `cx`; the copies of its body's code
    /// (the product of its steps and those of the unrolled loops around it) for the loops
    /// inside. Each loop within the limit, nested ones can still multiply past it: the
    /// innermost loop that does is refused, naming the product.
    fn unrolled(&mut self, e: ExprId, xs: ExprId, cx: &Cx) -> i64 {
        let Some(Type::Array(_, n)) = self.ty(xs) else {
            return cx.unrolled;
        };
        let n = n.clone();
        if !self.known(&n) {
            self.err(
                e,
                format!("`mapSeqUnroll`/`reduceSeqUnroll` need a length known at compile time, not {n}"),
            );
            return cx.unrolled;
        }
        // (an `iterate` body's loop is emitted once per step: its largest step counts)
        let Some((c, shown)) = self.largest(std::slice::from_ref(&n), |d| d[0].as_cst()) else {
            return cx.unrolled;
        };
        if c > MAX_UNROLLED_STEPS {
            self.err(
                e,
                format!("`mapSeqUnroll`/`reduceSeqUnroll` are limited to {MAX_UNROLLED_STEPS} steps, as the generated code holds the body once per step, but this one has {c} (length {}); use mapSeq/reduceSeq", shown[0]),
            );
            return cx.unrolled;
        }
        let total = cx.unrolled.saturating_mul(c.max(1));
        if total > MAX_UNROLLED_STEPS {
            self.err(
                e,
                format!("nested `mapSeqUnroll`/`reduceSeqUnroll` loops hold this loop's body {total} times ({} × {c} steps, length {}), more than the {MAX_UNROLLED_STEPS} steps the generated code may unroll; use mapSeq/reduceSeq for one of them", cx.unrolled, shown[0]),
            );
            // one error per nest: the loops inside are not counted again
            return 1;
        }
        total
    }

    /// Records the lengths `iterate #k f xs`'s body is emitted with: its length variable takes
    /// the input's length, then the body's result length of it, `k` times.
    fn iterate_steps(&mut self, k: &ir::ArithExpr, f: ExprId, xs: ExprId) {
        let (Some(count), Expr::Lambda { params, body }) = (k.as_cst(), self.prog.expr(f)) else {
            return;
        };
        let param_len = |t: Option<&Type>| match t {
            Some(Type::Array(_, n)) => n.as_var().map(|(v, _)| v.to_string()),
            _ => None,
        };
        let Some(var) = params
            .first()
            .and_then(|p| param_len(self.info.var_types.get(p.0 as usize).and_then(Option::as_ref)))
        else {
            return;
        };
        let (Some(Type::Array(_, step)), Some(Type::Array(_, first))) = (self.ty(*body), self.ty(xs)) else {
            return;
        };
        let (step, mut len) = (step.clone(), first.clone());
        let mut lens = vec![];
        for _ in 0..count.clamp(0, typeck::MAX_ITERATE) {
            lens.push(len.clone());
            len = step.subst(&var, &len);
        }
        self.steps.insert(var, lens);
    }

    /// The largest value `of` gives over the lengths `dims` as emitted: with the built-in sizes
    /// substituted and, for the length variables of `iterate` bodies, at each of their steps
    /// (the steps of nested ones combined). With it, `dims` as the message shows them: each
    /// with its value where a size or a step fixes it. `None` when `of` gives none for some
    /// instance (a length not a constant).
    fn largest(
        &self,
        dims: &[ir::ArithExpr],
        of: impl Fn(&[ir::ArithExpr]) -> Option<i64>,
    ) -> Option<(i64, Vec<String>)> {
        let mut instances = vec![dims.iter().map(|n| self.fixed(n)).collect::<Vec<_>>()];
        // (nested iterates within their limits: at most a few thousand instances)
        while let Some(var) = (instances.iter().flatten())
            .flat_map(|n| n.free_vars())
            .find(|v| self.steps.contains_key(v))
        {
            let (steps, var) = (&self.steps[&var], &var);
            instances = (instances.iter())
                .flat_map(|inst| {
                    steps.iter().map(move |s| {
                        inst.iter()
                            .map(|n| {
                                if n.mentions(var) {
                                    self.fixed(&n.subst(var, s))
                                } else {
                                    n.clone()
                                }
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            instances.dedup();
            if instances.len() > 4096 {
                return None;
            }
        }
        let mut best: Option<(i64, &Vec<ir::ArithExpr>)> = None;
        for inst in &instances {
            let v = of(inst)?;
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, inst));
            }
        }
        let (v, inst) = best?;
        let stepped = dims
            .iter()
            .any(|n| n.free_vars().iter().any(|x| self.steps.contains_key(x)));
        let shown = dims
            .iter()
            .zip(inst)
            .map(|(n, c)| match c.as_cst() {
                Some(c) if stepped && n.as_cst().is_none() => {
                    let vars: Vec<String> = (n.free_vars().into_iter())
                        .filter(|v| self.steps.contains_key(v))
                        .collect();
                    format!(
                        "{n} = {c} at the largest step of its `iterate`, {} being the length each step takes",
                        vars.join(", ")
                    )
                }
                _ => format!("{n}{}", self.with_sizes(n)),
            })
            .collect();
        Some((v, shown))
    }

    fn reduce(&mut self, e: ExprId, kind: ReduceKind, f: ExprId, z: ExprId, xs: ExprId, cx: &Cx) {
        // At work-group level the accumulator lives in local memory and the initial value and
        // each step are computed into it by group code: only `mapLcl`s may write it.
        if cx.level == Level::Group {
            self.into(z, cx);
        } else {
            self.value(z, cx);
        }
        self.value(xs, cx);
        let unrolled = if kind == ReduceKind::SeqUnroll {
            self.unrolled(e, xs, cx)
        } else {
            cx.unrolled
        };
        if self.ty(z).is_some_and(Type::has_existential) {
            self.err(z, "a reduction accumulator cannot hold filter results");
        }
        let inner = Cx {
            vec_dest: None,
            unrolled,
            ..cx.clone()
        };
        self.func(f, &inner);
    }
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
