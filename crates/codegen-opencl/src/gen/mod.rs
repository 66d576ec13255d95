//! The generator: its state (`Gen`, one per program; `KernelCx`, one per kernel), the entry
//! point `emit`, and the statement stack a kernel body is built on (`push`, `open_*`, `close`).
//! What is generated lives in the child modules, one concern each: `host` (kernel boundaries
//! and the host plan), `layout` (values as views, destinations), `maps` (work distribution),
//! `reduce` (reductions and unrolled iterate), `loops` (loops inside a work-item), `filter` (filters), `memory` (buffers and barriers),
//! `scalar` (scalar expressions) and `types` (types and lengths at C level).

use crate::ast::{self, AssignOp, BinOp, CType, Expr as CExpr, Fence, Module, Stmt, StructDef, UnOp};
use crate::namer::{Ident, Namer, SizeKey};
use crate::print;
use crate::{Kernel, KernelArg, KernelPlan, ResultSpec};
use arith::{ArithExpr, Range};
use ir::{
    AddressSpace, Diagnostic, Expr, ExprId, FilterKind, Lit, MapKind, Op, Prim, Program, ReduceKind, Scalar, ScanKind,
    Span, Type, VarId,
};
use memalloc::{dims_of, Enclosing, LoopKind, Memory, Role};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::rc::Rc;
use typeck::{Binder, TypeInfo};
use views::{c_type, Layout};

/// Views, reads, locations and accesses over the generator's expressions.
type View = views::View<CExpr>;
type Read = views::Read<CExpr>;
type Loc = views::Loc<CExpr>;
type Access = views::Access<CExpr>;

type Result<T> = std::result::Result<T, Diagnostic>;

mod build;
mod filter;
mod generate;
mod host;
mod inline;
mod ints;
mod lanes;
mod layout;
mod locals;
mod loops;
mod maps;
mod memory;
mod mma;
mod reduce;
mod regblock;
mod result;
mod scalar;
mod scan;
mod types;

pub use types::storage_parts;
use types::{soa_components, soa_unsupported};

use locals::{scalarize, vector_locals};
use scalar::Val;
use types::{arith, fits_private, specialised, specialised_type, specialising, Specialised};

/// Most work-items of one work-group when no device is known (`lift compile`): the common limit
/// of GPUs (NVIDIA and Intel allow 1024). A run knows its device and passes its own limit
/// ([`WorkGroupLimit`]).
const MAX_WORK_GROUP: usize = 1024;
/// Work-group size along dimension 0 of `mapGlb` kernels.
const GLB_LOCAL: usize = 256;

/// The most work-items a `mapLcl` of constant length gets one each (a longer one strides):
/// NVIDIA's driver reports 256 as the most work-items of a `mapWrg` × `mapLcl` kernel whose
/// `reqd_work_group_size` is above 256 and refuses its launch, though the device's limit is
/// 1024 (an H200, 2026-11-24: such kernels of 288, 500, 512, 1000 and 1024 work-items, a few
/// registers each, all refused; 128 and 256 ran). `mapGlb` kernels are not capped: the same
/// fuzz runs ran variants at `lift tune`'s work-groups of 512 and 1024 without such refusals.
/// Found by difffuzz's variants mode: a strided partial reduction's chunks of 500.
pub(crate) const LCL_LOCAL_MAX: usize = 256;
/// Indices per work-item of an outermost `mapGlb` over a run-time length. Scaling 10^8 floats on
/// the H200 took 1.05 times a device copy with 8, 1.13 with 4 and 1.07 with 16; a grid-stride
/// loop over a launch sized to the device (1056 to 4224 groups) took 1.10 to 1.21.
const GLB_COARSEN: usize = 8;
/// Expression nesting past which a subexpression is bound to a variable (the OpenCL compilers
/// we know accept 256 nested brackets; a statement adds a few of its own).
const MAX_DEPTH: usize = 64;

/// The note on every error that is ours, not the program's.
pub const BUG_NOTE: &str = "this is a bug in lift: please report it with the program";

/// Generates the kernels and launch plan of a typed program that `validate` accepts.
///
/// Every legality rule is `validate`'s, so an error here is a case the code generator does not
/// handle: it comes back as an internal error (see [`internal`]).
pub fn emit(prog: &Program, info: &TypeInfo) -> Result<KernelPlan> {
    emit_with(prog, info, &EmitOptions::default())
}

/// Choices of code generation that do not change what a program computes: tuning parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmitOptions {
    /// Work-group size of `mapGlb` kernels per dimension (empty: 256 along dimension 0, 1 along
    /// the others). A size is taken only where it keeps the launch covered by the kernel's
    /// bounds checks (see `Gen::launch_sizes`); elsewhere the default stays.
    pub glb_work_group: Vec<usize>,
    /// The target device's work-group limits: every work-group size chosen or tuned stays
    /// within them (maps stride over the rest), so no launch is refused for its shape.
    pub work_group_limit: WorkGroupLimit,
    /// Values of size variables (by the program's names) known when the kernels are built
    /// (`lift run`/`bench`/`tune` at given sizes): substituted into every index, loop bound and
    /// length the kernels compute, so that they fold (`F * i + f` with `F = 34`, a loop
    /// `f < 34` the driver unrolls). The launch plan keeps them as variables, and a kernel no
    /// longer naming a size does not take it as an argument. Empty: every size is a kernel
    /// argument, the kernels serve every size.
    pub known_sizes: BTreeMap<String, i64>,
    /// `--precision`: with `tf32` and [`EmitOptions::compute_capability`] 8.0 or later, the
    /// tile products of `rewrite`'s tensor-core variant are computed by tensor cores
    /// (`gen/mma.rs`); anything else is generated as written.
    pub precision: ir::Precision,
    /// The NVIDIA compute capability of the target device (`None`: not NVIDIA, or unknown).
    pub compute_capability: Option<(u32, u32)>,
}

impl EmitOptions {
    /// Whether products may be computed by TF32 tensor cores: `tf32` asked for, on an NVIDIA
    /// device of compute capability 8.0 or later (which alone take `mma.sync` TF32 PTX).
    pub fn tensor_cores(&self) -> bool {
        self.precision == ir::Precision::Tf32 && self.compute_capability.is_some_and(|cc| cc >= (8, 0))
    }

    /// Whether kernels may exchange values between a warp's lanes through PTX (`shfl.sync`,
    /// `vote.sync`): an NVIDIA device of compute capability 7.0 or later, whose warps are 32
    /// lanes (the scan's tiles, `gen/scan/striped.rs`).
    pub fn warp_shuffles(&self) -> bool {
        self.compute_capability.is_some_and(|cc| cc >= (7, 0))
    }
}

/// The most work-items of one work-group: in all (`CL_DEVICE_MAX_WORK_GROUP_SIZE`) and along
/// each dimension (`CL_DEVICE_MAX_WORK_ITEM_SIZES`). The default is [`MAX_WORK_GROUP`] for both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkGroupLimit {
    pub total: usize,
    pub per_dim: [usize; 3],
    /// Bytes of local memory a work-group may use (`CL_DEVICE_LOCAL_MEM_SIZE`);
    /// [`DEFAULT_LOCAL_MEM`] where no device is known.
    pub local_mem: usize,
}

/// Local memory assumed where the device is not known: a common GPU's 48 KiB.
pub const DEFAULT_LOCAL_MEM: usize = 48 * 1024;

impl Default for WorkGroupLimit {
    fn default() -> WorkGroupLimit {
        WorkGroupLimit {
            total: MAX_WORK_GROUP,
            per_dim: [MAX_WORK_GROUP; 3],
            local_mem: DEFAULT_LOCAL_MEM,
        }
    }
}

impl WorkGroupLimit {
    /// A device's limits; a zero (no answer) counts as 1, and the first dimension's limit is
    /// repeated for dimensions a device does not list.
    pub fn new(total: usize, per_dim: &[usize]) -> WorkGroupLimit {
        let at = |d: usize| per_dim.get(d).or(per_dim.first()).copied().unwrap_or(total).max(1);
        WorkGroupLimit {
            total: total.max(1),
            per_dim: [at(0), at(1), at(2)],
            local_mem: DEFAULT_LOCAL_MEM,
        }
    }

    /// The same limits on a device whose work-groups may use `bytes` of local memory.
    pub fn with_local_mem(self, bytes: u64) -> WorkGroupLimit {
        WorkGroupLimit {
            local_mem: usize::try_from(bytes).unwrap_or(usize::MAX),
            ..self
        }
    }

    /// The most work-items along dimension `d` when the other dimensions hold `others`.
    fn room(&self, d: usize, others: usize) -> usize {
        (self.total / others.max(1)).clamp(1, self.per_dim[d.min(2)])
    }

    /// The most work-items along dimension `d` of a work-group of `mapLcl`s when the other
    /// dimensions hold `others`: [`WorkGroupLimit::room`], and at most [`LCL_LOCAL_MAX`] in all.
    fn lcl_room(&self, d: usize, others: usize) -> usize {
        self.room(d, others).min((LCL_LOCAL_MAX / others.max(1)).max(1))
    }

    /// The work-group size of `mapGlb` kernels along dimension `d` (`GLB_LOCAL` along 0).
    fn glb_local(&self, d: usize) -> usize {
        if d == 0 {
            GLB_LOCAL.min(self.room(0, 1))
        } else {
            1
        }
    }

    fn admits(&self, local: &[usize]) -> bool {
        local.iter().product::<usize>() <= self.total && local.iter().zip(self.per_dim).all(|(&l, m)| l <= m)
    }
}

/// [`emit`] with tuning parameters.
pub fn emit_with(prog: &Program, info: &TypeInfo, opts: &EmitOptions) -> Result<KernelPlan> {
    generate(prog, info, opts).map_err(|d| internal(prog, d))
}

/// A code-generation failure as an internal error: `internal:` once, the bug note, and the
/// program's span where the failing site knew no place.
pub fn internal(prog: &Program, d: Diagnostic) -> Diagnostic {
    let message = d.message.strip_prefix("internal: ").unwrap_or(&d.message);
    let span = if d.span == Span::default() {
        prog.span(prog.body)
    } else {
        d.span
    };
    let mut notes = d.notes.clone();
    notes.push(BUG_NOTE.into());
    Diagnostic {
        span,
        message: format!("internal: {message}"),
        label: d.label,
        notes,
    }
}

fn generate(prog: &Program, info: &TypeInfo, opts: &EmitOptions) -> Result<KernelPlan> {
    let mut names = Namer::new();
    let error_flag = names.fixed("e_flag");
    filter::reserve(&mut names);
    let rounded_launch = names.fresh("v_rounded_launch");
    let mut g = Gen {
        prog,
        info,
        mem: Memory::default(),
        kernels: vec![],
        source: String::new(),
        structs: vec![],
        struct_ids: vec![],
        env: vec![None; prog.vars.len()],
        lengths: BTreeMap::new(),
        caps: BTreeMap::new(),
        device_lengths: BTreeMap::new(),
        k: None,
        pre: BTreeMap::new(),
        coarsen_scalars: true,
        names,
        buf_ids: BTreeMap::new(),
        param_names: vec![],
        size_names: vec![],
        rounded_launch,
        error_flag,
        checks: vec![],
        division_checks: vec![],
        length_checks: vec![],
        length_origins: BTreeMap::new(),
        guards: vec![],
        views: String::new(),
        needs_fp64: false,
        glb_work_group: opts.glb_work_group.clone(),
        wg_limit: opts.work_group_limit.clone(),
        param_caps: BTreeMap::new(),
        aligned_reads: false,
        tensor_cores: opts.tensor_cores(),
        warp_shuffles: opts.warp_shuffles(),
    };
    let mut sizes = vec![];
    for s in &prog.sizes {
        let c = g.names.size(&SizeKey(s.clone()));
        g.lengths.insert(s.clone(), ArithExpr::size_var(c.as_str()));
        sizes.push((s.clone(), c.to_string()));
        g.size_names.push((s.clone(), c));
    }
    // Only the program's own sizes: a filter-result parameter's capacity (`cap#k`) changes
    // from one host step to the next.
    let specialised: Vec<(String, i64)> = (prog.sizes.iter())
        .filter_map(|user| {
            let v = opts.known_sizes.get(user)?;
            let (_, c) = g.size_names.iter().find(|(u, _)| u == user)?;
            Some((c.to_string(), *v))
        })
        .collect();
    let _specialised = Specialised::enter(specialised.clone());
    for (k, p) in prog.params.iter().enumerate() {
        let ident = g.names.exact(&format!("v_{}", prog.var(p.var).name));
        g.param_names.push(ident.clone());
        g.buf_ids.insert(ident.to_string(), ident.clone());
        let name = ident.to_string();
        let ty = g.c_type_of(&p.ty)?;
        let view = match &ty {
            Type::Array(..) => g.mem.input(&name, k, &ty).1,
            Type::Scalar(_) => Rc::new(View::Value {
                expr: CExpr::var(&ident),
                ty: ty.clone(),
            }),
            Type::Exists(_) => g.exist_param(k, p, &mut sizes)?,
            Type::Vector(..) | Type::Tuple(_) | Type::Fun(..) => {
                return Err(Diagnostic::new(
                    p.ty_span,
                    format!(
                        "parameters of type {} are not supported yet by the OpenCL back end (scalars and arrays are)",
                        p.ty
                    ),
                ));
            }
        };
        g.bind(p.var, Bound::View(view));
    }
    // A body of the length of a filter-result parameter is packed by the program itself.
    let result_ty = if info.packs.contains(&prog.body) {
        g.c_type_of(info.result())?
    } else {
        g.cty(prog.body)?
    };
    // The host reads back one length per filter result at most one array level deep.
    // A map of maps of filter results has a length per row of each row.
    let rows2 = result::rows_of_rows(prog, info, prog.body);
    if let Type::Array(row, _) = &result_ty {
        if let Type::Array(inner, _) = &**row {
            if exist_below(inner) && rows2.is_none() {
                return Err(Diagnostic::new(
                    prog.span(prog.body),
                    "a result holding filter results two or more array levels deep (a filter inside two maps) is not supported yet by the OpenCL back end",
                ));
            }
        }
    }
    // A `tuple` of filter results (and other arrays or scalars) as the result: each component
    // stored as a result of its own, a filter result's length at its place in `out_lens`.
    let tuple_lens = match (&result_ty, result::result_tuple_args(prog, prog.body)) {
        (Type::Tuple(cs), Some(args)) if cs.iter().any(exist_below) => Some((cs.clone(), args)),
        _ => None,
    };
    let (data_ty, exist) = match &result_ty {
        Type::Exists(e) => (Type::array((**e).clone(), g.capacity_len(prog.body)?), true),
        t @ Type::Scalar(_) | t @ Type::Vector(..) | t @ Type::Tuple(_) | t @ Type::Array(..) | t @ Type::Fun(..) => {
            (t.clone(), false)
        }
    };
    let data_ty = match (&data_ty, rows2) {
        (Type::Array(row, n), Some(inner)) => {
            let Type::Array(r, m) = &**row else {
                unreachable!("rows_of_rows checked")
            };
            let Type::Exists(elem) = &**r else {
                unreachable!("rows_of_rows checked")
            };
            let cap = g.capacity_len_rows(inner)?;
            Type::array(Type::array(Type::array((**elem).clone(), cap), m.clone()), n.clone())
        }
        (Type::Array(row, n), _) if matches!(**row, Type::Exists(_)) => {
            let Type::Exists(elem) = &**row else {
                unreachable!("matched")
            };
            // `result_ty` is at C level already (rows of rows name their sizes' C variables)
            Type::array(
                Type::array((**elem).clone(), g.capacity_len_rows(prog.body)?),
                n.clone(),
            )
        }
        (
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Array(..)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..),
            _,
        ) => match &tuple_lens {
            Some((cs, args)) => g.result_tuple_type(cs, args)?,
            None => g.capacity_type(t, prog.body)?,
        },
    };
    let (data, view) = g
        .alloc("out", &data_ty, AddressSpace::Global, &[], Role::Output)
        .map_err(|m| Diagnostic::new(prog.span(prog.body), m))?;
    // a struct of arrays allocates its component buffers one after the other
    let parts = (data..g.mem.buffers.len()).collect();
    let rows_exist = matches!(&result_ty, Type::Array(e, _) if matches!(**e, Type::Exists(_))) || rows2.is_some();
    let lengths = if exist {
        let (b, v) = g
            .alloc("out_len", &Type::int(), AddressSpace::Global, &[], Role::OutputLength)
            .map_err(|m| Diagnostic::new(prog.span(prog.body), m))?;
        Some((b, v))
    } else if rows_exist {
        let Type::Array(row, n) = &data_ty else {
            unreachable!("checked above")
        };
        let lens_ty = match (&**row, rows2) {
            (Type::Array(_, m), Some(_)) => Type::array(Type::array(Type::int(), m.clone()), n.clone()),
            (_, None) => Type::array(Type::int(), n.clone()),
            (Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Exists(_) | Type::Fun(..), Some(_)) => {
                unreachable!("rows_of_rows checked")
            }
        };
        let (b, v) = g
            .alloc("out_lens", &lens_ty, AddressSpace::Global, &[], Role::OutputLength)
            .map_err(|m| Diagnostic::new(prog.span(prog.body), m))?;
        Some((b, v))
    } else if let Some((cs, _)) = &tuple_lens {
        Some(
            g.result_tuple_lengths(cs)
                .map_err(|m| Diagnostic::new(prog.span(prog.body), m))?,
        )
    } else {
        None
    };
    let dest = Dest {
        view,
        len: lengths.as_ref().map(|(_, v)| v.clone()),
        rows: rows_exist,
    };
    g.host(prog.body, &dest)?;
    let mut source = print::module(&Module::new(std::mem::take(&mut g.structs), vec![], g.needs_fp64));
    source.push_str(&g.source);
    let capacities = g.caps.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    Ok(KernelPlan {
        source,
        kernels: g.kernels,
        memory: g.mem,
        sizes,
        capacities,
        result: ResultSpec {
            data,
            parts,
            lengths: lengths.map(|(b, _)| b),
            ty: prog_result_ty(info),
        },
        checks: g.checks,
        division_checks: g.division_checks,
        length_checks: g.length_checks.into_iter().map(|(_, c)| c).collect(),
        views: g.views,
        specialised: (prog.sizes.iter())
            .filter_map(|user| opts.known_sizes.get(user).map(|v| (user.clone(), *v)))
            .collect(),
    })
}

/// Whether an array type is inside the tuple type `t` (not inside arrays of tuples: those are
/// the buffer's own dimensions).
fn array_in_tuple(t: &Type) -> bool {
    match t {
        Type::Tuple(ts) => ts.iter().any(|c| match c {
            Type::Array(..) | Type::Exists(_) => true,
            Type::Tuple(_) => array_in_tuple(c),
            Type::Scalar(_) | Type::Vector(..) | Type::Fun(..) => false,
        }),
        Type::Scalar(_) | Type::Vector(..) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => false,
    }
}

/// Whether `t` is or holds an existential (run-time length) array.
fn exist_below(t: &Type) -> bool {
    match t {
        Type::Exists(_) => true,
        Type::Array(e, _) => exist_below(e),
        Type::Tuple(ts) => ts.iter().any(exist_below),
        Type::Scalar(_) | Type::Vector(..) | Type::Fun(..) => false,
    }
}

fn prog_result_ty(info: &TypeInfo) -> Type {
    info.result().clone()
}

#[derive(Clone)]
enum Bound {
    View(Rc<View>),
    /// An array of filter results: data rows (at capacity) and their lengths.
    Rows {
        data: Rc<View>,
        lens: Rc<View>,
    },
}

/// Where a computation writes: the data, and for existential values the length location(s).
#[derive(Clone)]
struct Dest {
    view: Rc<View>,
    len: Option<Rc<View>>,
    /// `len` holds one length per row (an array of filter results).
    rows: bool,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Level {
    /// Kernel code run by every work-item of a parallel launch (outside its maps).
    Top,
    /// Inside `mapWrg`, outside `mapLcl`: run by every work-item of a group in lockstep.
    Group,
    /// One work-item's own code.
    Item,
}

/// A statement being built: its kind, and the statements of its body so far.
struct Frame {
    head: Head,
    body: Vec<Stmt>,
}

enum Head {
    Root,
    Block,
    If(CExpr),
    For {
        var: Ident,
        init: CExpr,
        cond: CExpr,
        step: (AssignOp, CExpr),
        unroll: bool,
    },
}

struct KernelCx {
    /// The kernel body: the root frame, then the statements opened inside it.
    stack: Vec<Frame>,
    /// Statements emitted so far (to tell whether some code needed statements).
    emitted: usize,
    /// `local` arrays declared at kernel scope.
    decls: Vec<Stmt>,
    global: [Option<ArithExpr>; 3],
    local: [Option<usize>; 3],
    wrg: bool,
    glb: bool,
    loops: Vec<Enclosing>,
    level: Level,
    /// Parallel maps being generated, outermost first.
    active: Vec<MapKind>,
    /// A `mapWrg` of one group here runs in whichever group of the launch gets there (the last
    /// group of a one-launch reduction, `reduce::last_group`): its group index is 0 and it
    /// leaves the launch size to the kernel's other `mapWrg`.
    one_group: bool,
    /// Choices of the kernel that `--emit plan` names ([`crate::Kernel::notes`]).
    notes: Vec<String>,
    /// The first buffer allocated while generating this kernel, where every buffer from it on
    /// belongs to this kernel alone (`Gen::kernel`); `None` where that is not known.
    first_buffer: Option<usize>,
}

struct Gen<'a> {
    prog: &'a Program,
    info: &'a TypeInfo,
    mem: Memory,
    kernels: Vec<Kernel>,
    source: String,
    /// Struct typedefs in the order they were first needed (the module orders them).
    structs: Vec<StructDef>,
    /// Tuple types (by their spelling in types) and their struct names.
    struct_ids: Vec<(String, Ident)>,
    env: Vec<Option<Bound>>,
    /// Type-level length variables to C-level lengths (N -> v_N, X1 -> v_X1, L1 -> ...).
    lengths: BTreeMap<String, ArithExpr>,
    /// Capacities of run-time lengths, by C name.
    caps: BTreeMap<String, ArithExpr>,
    /// Run-time lengths held in device memory at host level: C name -> C expression reading it.
    device_lengths: BTreeMap<String, (Ident, CExpr)>,
    k: Option<KernelCx>,
    /// Values computed by earlier kernels, by the expression they replace.
    pre: BTreeMap<ExprId, Rc<View>>,
    /// Whether the map being emitted reads scalars (vector elements already move 16 bytes per
    /// access, and coarsening them measured slower on the H200).
    coarsen_scalars: bool,
    names: Namer,
    /// Buffers' identifiers by name.
    buf_ids: BTreeMap<String, Ident>,
    /// C names of the program parameters, in order.
    param_names: Vec<Ident>,
    /// Size variables: (user name, C name), in the program's order.
    size_names: Vec<(String, Ident)>,
    /// The launch size of a `mapGlb` rounded up to whole work-groups, a placeholder in index
    /// proofs (never printed).
    rounded_launch: Ident,
    error_flag: Ident,
    checks: Vec<Span>,
    /// The indices in `checks` of integer divisors tested for zero.
    division_checks: Vec<usize>,
    /// Device-side checks of run-time lengths, by the index of the type checker's check.
    length_checks: Vec<(usize, crate::LengthCheck)>,
    /// Run-time lengths held on the device: C name -> the filter computing it, its buffer.
    length_origins: BTreeMap<String, (Span, usize)>,
    /// Conditions of the enclosing `if` branches of the scalar code being generated: both
    /// branches are evaluated (then selected), so a bounds check in one reports only when its
    /// branch is the one taken.
    guards: Vec<CExpr>,
    views: String,
    needs_fp64: bool,
    /// [`EmitOptions::glb_work_group`].
    glb_work_group: Vec<usize>,
    /// [`EmitOptions::work_group_limit`].
    wg_limit: WorkGroupLimit,
    /// Capacities of the run-time lengths of filter-result parameters (type-level name ->
    /// [`capacity_size`] of the parameter).
    param_caps: BTreeMap<String, ArithExpr>,
    /// Whole-vector reads take the aligned form ([`Gen::aligned_vectors`]) in a generic kernel
    /// too: set while the grid reduction's first stage is generated (`reduce.rs`
    /// `last_group`), whose `float4` reads sit at offsets a multiple of 4 by their form.
    aligned_reads: bool,
    /// [`EmitOptions::tensor_cores`].
    tensor_cores: bool,
    /// [`EmitOptions::warp_shuffles`].
    warp_shuffles: bool,
}

/// The size variable, given by the host, that holds the capacity of parameter `k` when it is a
/// filter result (a host loop's state, `lift::host`): no program names it, since `#` is not in
/// names.
pub fn capacity_size(k: usize) -> String {
    format!("cap#{k}")
}

impl Gen<'_> {
    /// A parameter holding a filter result: its data in an input buffer of the capacity the
    /// host gives ([`capacity_size`]), its length in a buffer of its own that kernels read on
    /// the device, like the length of a filter result bound at host level.
    fn exist_param(&mut self, k: usize, p: &ir::Param, sizes: &mut Vec<(String, String)>) -> Result<Rc<View>> {
        let Type::Exists(elem) = &p.ty else {
            return Err(Diagnostic::new(p.ty_span, "internal: not a filter result"));
        };
        let x =
            self.info.param_unpacks.get(&k).cloned().ok_or_else(|| {
                Diagnostic::new(p.ty_span, "internal: a filter-result parameter that is not unpacked")
            })?;
        let user = capacity_size(k);
        let cap_id = self.names.size(&SizeKey(user.clone()));
        sizes.push((user.clone(), cap_id.to_string()));
        self.size_names.push((user.clone(), cap_id.clone()));
        let cap = ArithExpr::size_var(cap_id.as_str());
        let elem = self.c_type_of(elem)?;
        let name = self.param_names[k].to_string();
        let (_, view) = self.mem.input(&name, k, &Type::array(elem, cap.clone()));
        let (lb, _) = self
            .alloc("len", &Type::int(), AddressSpace::Global, &[], Role::InputLength(k))
            .map_err(|m| Diagnostic::new(p.ty_span, m))?;
        let len_expr = CExpr::var(&self.buf_ident(&self.mem.buffers[lb].name)).index(CExpr::Int(0));
        let id = self.names.size(&SizeKey(x.clone()));
        let c = id.to_string();
        self.caps.insert(c.clone(), cap.clone());
        self.device_lengths.insert(c.clone(), (id, len_expr));
        self.length_origins.insert(c.clone(), (p.ty_span, lb));
        self.lengths.insert(
            x.clone(),
            ArithExpr::var(&c, Range::new(ArithExpr::cst(0), Some(cap.add(&ArithExpr::cst(1))))),
        );
        self.param_caps.insert(x, ArithExpr::size_var(&user));
        Ok(view)
    }
}

fn is_parallel_map(k: MapKind) -> bool {
    matches!(k, MapKind::Glb(_) | MapKind::Wrg(_))
}

/// `(const global sW*)buf`: a global buffer of scalars `s` read as `w`-lane vectors, one vector
/// load each where `vloadW` promises only the scalar's alignment (both aligned-read rewrites:
/// [`Gen::aligned_vectors`] and the grid reduction's `aligned_vloads`).
pub(super) fn vector_pointer(buf: CExpr, s: ast::Scalar, w: u8) -> CExpr {
    let ty = CType::Ptr {
        space: AddressSpace::Global,
        elem: Box::new(CType::Vector(s, w)),
        is_const: true,
        restrict: false,
    };
    CExpr::cast(ty, buf)
}

fn exist_elem_as_array(elem: &Type, cap: ArithExpr) -> Type {
    match elem {
        Type::Exists(e) => Type::array((**e).clone(), cap),
        t @ Type::Scalar(_) | t @ Type::Vector(..) | t @ Type::Tuple(_) | t @ Type::Array(..) | t @ Type::Fun(..) => {
            t.clone()
        }
    }
}

fn collect_len_vars(t: &Type, out: &mut BTreeSet<String>) {
    match t {
        Type::Scalar(_) | Type::Vector(..) => {}
        Type::Tuple(ts) => ts.iter().for_each(|t| collect_len_vars(t, out)),
        Type::Array(e, n) => {
            out.extend(n.free_vars());
            collect_len_vars(e, out);
        }
        Type::Exists(e) => collect_len_vars(e, out),
        Type::Fun(ps, r) => {
            ps.iter().for_each(|t| collect_len_vars(t, out));
            collect_len_vars(r, out);
        }
    }
}

fn dim_suffix(d: usize) -> String {
    if d == 0 {
        String::new()
    } else {
        d.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(src: &str) -> (Program, TypeInfo) {
        let prog = ir::parse(src).expect("parse");
        let info = typeck::infer(&prog).expect("types");
        (prog, info)
    }

    /// `validate` refuses this program; the code generator, asked anyway, finds a case it does
    /// not handle, which is reported as our bug, at the node where it was found.
    #[test]
    fn code_generation_errors_are_internal() {
        let src = "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapLcl (lambda (x) x) xs))))";
        let (prog, info) = typed(src);
        let d = emit(&prog, &info).expect_err("mapLcl outside mapWrg");
        assert!(d.message.starts_with("internal: "), "{}", d.message);
        assert!(
            !d.message["internal: ".len()..].starts_with("internal"),
            "{}",
            d.message
        );
        assert_eq!(d.notes.last().map(String::as_str), Some(BUG_NOTE));
        assert!(src[d.span.start as usize..d.span.end as usize].starts_with("(mapLcl"));
    }

    #[test]
    fn internal_errors_without_a_place_get_the_programs() {
        let (prog, _) = typed("(lift (N) ((array-type float N)) (lambda (xs) xs))");
        let d = internal(&prog, Diagnostic::new(Span::default(), "internal: no place"));
        assert_eq!(d.message, "internal: no place");
        assert_eq!(d.span, prog.span(prog.body));
        assert_ne!(d.span, Span::default());
        assert_eq!(d.notes, vec![BUG_NOTE.to_string()]);
    }

    #[test]
    fn indices_convert_with_minus_and_precedence() {
        let n = ArithExpr::size_var("v_N");
        let i = ArithExpr::var("v_i_1", Range::upto(n.clone()));
        let two = ArithExpr::cst(2);
        let e = n.sub(&two.mul(&i)).sub(&ArithExpr::cst(1));
        assert_eq!(print::expr(&arith(&e)), "v_N - 2 * v_i_1 - 1");
        let tiles = n.add(&ArithExpr::cst(2047)).div(&ArithExpr::cst(2048));
        assert_eq!(print::expr(&arith(&tiles)), "(v_N + 2047) / 2048");
        let clamp = ArithExpr::max(&ArithExpr::cst(0), &i.sub(&ArithExpr::cst(1)));
        assert_eq!(print::expr(&arith(&clamp)), "max(0, v_i_1 - 1)");
        assert_eq!(print::expr(&arith(&ArithExpr::cst(-3))), "-3");
        assert_eq!(
            print::expr(&CExpr::bin(BinOp::Sub, CExpr::Int(1), arith(&ArithExpr::cst(-3)))),
            "1 - -3"
        );
    }
}
