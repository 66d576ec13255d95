use crate::ast::{self, AssignOp, BinOp, CType, Expr as CExpr, Fence, Module, Stmt, StructDef, UnOp};
use crate::namer::{Ident, Namer, SizeKey};
use crate::print;
use crate::{Kernel, KernelArg, KernelPlan, ResultSpec};
use arith::{ArithExpr, Range};
use ir::{
    AddressSpace, Diagnostic, Expr, ExprId, FilterKind, Lit, MapKind, Op, Prim, Program, ReduceKind, Scalar, Span,
    Type, VarId,
};
use memalloc::{dims_of, Enclosing, LoopKind, Memory, Role};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::rc::Rc;
use typeck::{Binder, TypeInfo};
use views::{c_scalar, c_type, Layout, Loc, Read, View};

type Result<T> = std::result::Result<T, Diagnostic>;

// A child module, so that it shares the generator's private state.
#[path = "filter.rs"]
mod filter;

/// Work-group size along dimension 0 of `mapGlb` kernels.
const GLB_LOCAL: usize = 256;
/// Indices per work-item of an outermost `mapGlb` over a run-time length. Scaling 10^8 floats on
/// the H200 took 1.05 times a device copy with 8, 1.13 with 4 and 1.07 with 16; a grid-stride
/// loop over a launch sized to the device (1056 to 4224 groups) took 1.10 to 1.21.
const GLB_COARSEN: usize = 8;
/// Expression nesting past which a subexpression is bound to a variable (the OpenCL compilers
/// we know accept 256 nested brackets; a statement adds a few of its own).
const MAX_DEPTH: usize = 64;

/// Generates the kernels and launch plan of a typed program.
pub fn emit(prog: &Program, info: &TypeInfo) -> Result<KernelPlan> {
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
        views: String::new(),
        needs_fp64: false,
    };
    let mut sizes = vec![];
    for s in &prog.sizes {
        let c = g.names.size(&SizeKey(s.clone()));
        g.lengths.insert(s.clone(), ArithExpr::size_var(c.as_str()));
        sizes.push((s.clone(), c.to_string()));
        g.size_names.push((s.clone(), c));
    }
    for (k, p) in prog.params.iter().enumerate() {
        let ident = g.names.exact(&format!("v_{}", prog.var(p.var).name));
        g.param_names.push(ident.clone());
        g.buf_ids.insert(ident.to_string(), ident.clone());
        let name = ident.to_string();
        let ty = g.c_type_of(&p.ty)?;
        let view = match &ty {
            Type::Array(..) => g.mem.input(&name, k, &ty).1,
            Type::Scalar(_) => Rc::new(View::Value {
                expr: name,
                ty: ty.clone(),
            }),
            Type::Vector(..) | Type::Tuple(_) | Type::Exists(_) | Type::Fun(..) => {
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
    let result_ty = g.cty(prog.body)?;
    let (data_ty, exist) = match &result_ty {
        Type::Exists(e) => (Type::array((**e).clone(), g.capacity_len(prog.body)?), true),
        t => (t.clone(), false),
    };
    let data_ty = match &data_ty {
        Type::Array(row, n) if matches!(**row, Type::Exists(_)) => {
            let Type::Exists(elem) = &**row else {
                unreachable!("matched")
            };
            let elem = g.c_type_of(elem)?;
            Type::array(Type::array(elem, g.capacity_len_rows(prog.body)?), n.clone())
        }
        t => g.capacity_type(t, prog.body)?,
    };
    let (data, view) = g
        .alloc("out", &data_ty, AddressSpace::Global, &[], Role::Output)
        .map_err(|m| Diagnostic::new(prog.span(prog.body), m))?;
    let _ = data;
    let rows_exist = matches!(&result_ty, Type::Array(e, _) if matches!(**e, Type::Exists(_)));
    let lengths = if exist {
        let (b, v) = g
            .alloc("out_len", &Type::int(), AddressSpace::Global, &[], Role::OutputLength)
            .map_err(|m| Diagnostic::new(prog.span(prog.body), m))?;
        Some((b, v))
    } else if rows_exist {
        let Type::Array(_, n) = &data_ty else {
            unreachable!("checked above")
        };
        let (b, v) = g
            .alloc(
                "out_lens",
                &Type::array(Type::int(), n.clone()),
                AddressSpace::Global,
                &[],
                Role::OutputLength,
            )
            .map_err(|m| Diagnostic::new(prog.span(prog.body), m))?;
        Some((b, v))
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
            lengths: lengths.map(|(b, _)| b),
            ty: prog_result_ty(info),
        },
        checks: g.checks,
        views: g.views,
    })
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
    device_lengths: BTreeMap<String, String>,
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
    views: String,
    needs_fp64: bool,
}

fn is_parallel_map(k: MapKind) -> bool {
    matches!(k, MapKind::Glb(_) | MapKind::Wrg(_))
}

impl Gen<'_> {
    fn fresh(&mut self, base: &str) -> Ident {
        self.names.fresh(&format!("v_{base}"))
    }

    /// The identifier of a buffer (handed out by the namer when it was allocated).
    fn buf_ident(&self, name: &str) -> Ident {
        self.buf_ids.get(name).cloned().expect("buffers are named by the namer")
    }

    /// Allocates a buffer named by the namer after its space and `hint`.
    fn alloc(
        &mut self,
        hint: &str,
        ty: &Type,
        space: AddressSpace,
        loops: &[Enclosing],
        role: Role,
    ) -> std::result::Result<(usize, Rc<View>), String> {
        let prefix = match space {
            AddressSpace::Global => "g",
            AddressSpace::Local => "l",
            AddressSpace::Private => "p",
        };
        let name = self.names.fresh(&format!("v_{prefix}{hint}"));
        self.buf_ids.insert(name.to_string(), name.clone());
        self.mem.allocate(name.as_str(), ty, space, loops, role)
    }

    fn bind(&mut self, v: VarId, b: Bound) {
        if let Bound::View(view) = &b {
            let _ = writeln!(self.views, "{} = {}", self.prog.var(v).name, view.describe());
        }
        self.env[v.index()] = Some(b);
    }

    fn err(&self, e: ExprId, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.prog.span(e), msg)
    }

    // ---- types at C level ----

    /// Replaces type-level length variables by their C-level lengths.
    fn c_type_of(&self, t: &Type) -> Result<Type> {
        let mut t = t.clone();
        let mut names = BTreeSet::new();
        collect_len_vars(&t, &mut names);
        for n in names {
            let Some(by) = self.lengths.get(&n) else {
                return Err(Diagnostic::new(
                    Span::default(),
                    format!("internal: length {n} is not bound during code generation"),
                ));
            };
            t = t.subst(&n, by);
        }
        Ok(t)
    }

    fn cty(&self, e: ExprId) -> Result<Type> {
        self.c_type_of(self.info.ty(e))
    }

    /// Array lengths with run-time lengths replaced by their capacities (for allocation).
    fn capacity_type(&self, t: &Type, e: ExprId) -> Result<Type> {
        let mut t = t.clone();
        let mut names = BTreeSet::new();
        collect_len_vars(&t, &mut names);
        for n in names {
            if let Some(cap) = self.caps.get(&n) {
                t = t.subst(&n, cap);
            }
        }
        let mut left = BTreeSet::new();
        collect_len_vars(&t, &mut left);
        if left.iter().any(|n| !n.starts_with("v_") || self.caps.contains_key(n)) {
            return Err(self.err(e, format!("cannot bound the size of {t} for allocation")));
        }
        Ok(t)
    }

    fn capacity(&self, len: &ArithExpr) -> ArithExpr {
        let mut l = len.clone();
        for (n, cap) in &self.caps {
            if l.mentions(n) {
                l = l.subst(n, cap);
            }
        }
        l
    }

    /// Capacity (an upper bound over the size variables) of an existential value's length:
    /// the length of the filter input it comes from, carried through packs and lets.
    fn capacity_len(&self, e: ExprId) -> Result<ArithExpr> {
        Ok(self.c_len(&self.tcap(e, 0)?))
    }

    fn capacity_len_rows(&self, e: ExprId) -> Result<ArithExpr> {
        Ok(self.c_len(&self.row_cap(e, 0)?))
    }

    /// A type-level length (over size variables) at C level.
    fn c_len(&self, l: &ArithExpr) -> ArithExpr {
        let mut l = l.clone();
        for (s, c) in &self.size_names {
            if l.mentions(s) {
                l = l.subst(s, &ArithExpr::size_var(c.as_str()));
            }
        }
        l
    }

    fn tcap(&self, e: ExprId, depth: usize) -> Result<ArithExpr> {
        if depth > 64 {
            return Err(self.err(e, "cannot bound the length of this filter result"));
        }
        let array_len = |t: &Type| match t {
            Type::Array(_, n) => Ok(n.clone()),
            t => Err(self.err(e, format!("internal: expected an array, found {t}"))),
        };
        if self.info.packs.contains(&e) {
            return self.close_caps(&array_len(self.info.ty(e))?, depth);
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Filter(_),
                args,
            } => self.close_caps(&array_len(self.info.ty(args[1]))?, depth),
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.tcap(args[0], depth + 1),
            Expr::Pack(inner) => self.close_caps(&array_len(self.info.ty(*inner))?, depth),
            Expr::Let { body, .. } => self.tcap(*body, depth + 1),
            Expr::Op { op: Op::At, args } => self.row_cap(args[1], depth + 1),
            _ => Err(self.err(e, "the OpenCL back end cannot bound the length of this filter result")),
        }
    }

    /// Replaces run-time lengths by their capacities.
    fn close_caps(&self, l: &ArithExpr, depth: usize) -> Result<ArithExpr> {
        let mut l = l.clone();
        for v in l.free_vars() {
            let binder = self.info.unpacks.iter().find(|(_, x)| **x == v).map(|(b, _)| *b);
            let Some(binder) = binder else { continue };
            let cap = match binder {
                Binder::Let(letnode) => match self.prog.expr(letnode) {
                    Expr::Let { value, .. } => self.tcap(*value, depth + 1)?,
                    _ => return Err(self.err(letnode, "internal: unpack binder")),
                },
                Binder::Param(lam, _) => {
                    let map = (0..self.prog.exprs.len() as u32).map(ExprId).find(
                        |id| matches!(self.prog.expr(*id), Expr::Prim { args, .. } if args.first() == Some(&lam)),
                    );
                    match map.map(|m| self.prog.expr(m)) {
                        Some(Expr::Prim { args, .. }) if args.len() > 1 => self.row_cap(args[1], depth + 1)?,
                        _ => return Err(self.err(lam, "internal: row parameter")),
                    }
                }
            };
            l = l.subst(&v, &cap);
        }
        Ok(l)
    }

    /// Capacity of the rows of an array of filter results.
    fn row_cap(&self, e: ExprId, depth: usize) -> Result<ArithExpr> {
        if depth > 64 {
            return Err(self.err(e, "cannot bound the length of these filter results"));
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => match self.prog.expr(args[0]) {
                Expr::Lambda { body, .. } => self.tcap(*body, depth + 1),
                _ => Err(self.err(e, "internal: map")),
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
                    _ => Err(self.err(
                        e,
                        "the OpenCL back end supports arrays of filter results only when bound by let",
                    )),
                }
            }
            _ => Err(self.err(
                e,
                "the OpenCL back end supports arrays of filter results only as the direct result of a map",
            )),
        }
    }

    /// `map (λx. L x)` (a plain map) where `L` only re-indexes `x` (join, split, transpose and
    /// plain maps of those) is a view, not a computation: its re-indexings in the order they
    /// apply (innermost first), each with the number of outer dimensions it leaves alone.
    fn layout_map(&self, e: ExprId) -> Option<Vec<(usize, ExprId)>> {
        let mut ops = vec![];
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(MapKind::Plain),
                args,
            } => {
                let Expr::Lambda { params, body } = self.prog.expr(args[0]) else {
                    return None;
                };
                (params.len() == 1 && self.layout_chain(*body, params[0], 1, &mut ops) && !ops.is_empty())
                    .then_some(ops)
            }
            _ => None,
        }
    }

    fn layout_chain(&self, e: ExprId, x: VarId, skip: usize, ops: &mut Vec<(usize, ExprId)>) -> bool {
        match self.prog.expr(e) {
            Expr::Var(v) => *v == x,
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose,
                args,
            } => {
                let ok = self.layout_chain(args[0], x, skip, ops);
                ops.push((skip, e));
                ok
            }
            Expr::Prim {
                prim: Prim::Map(MapKind::Plain),
                args,
            } => match self.prog.expr(args[0]) {
                Expr::Lambda { params, body } if params.len() == 1 => {
                    self.layout_chain(args[1], x, skip, ops) && self.layout_chain(*body, params[0], skip + 1, ops)
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The re-indexing of a join, split or transpose node; `dual` gives the one its destination
    /// is written through.
    fn layout_of(&self, op: ExprId, dual: bool) -> Result<Layout> {
        let Expr::Prim { prim, args } = self.prog.expr(op) else {
            return Err(self.err(op, "internal: not a layout primitive"));
        };
        Ok(match (prim, dual) {
            (Prim::Join, false) | (Prim::Split(_), true) => {
                let m = match prim {
                    Prim::Split(k) => k.clone(),
                    _ => self.row_len(args[0])?,
                };
                Layout::Join(m)
            }
            (Prim::Join, true) => Layout::Split(self.row_len(args[0])?),
            (Prim::Split(k), false) => Layout::Split(k.clone()),
            (Prim::Transpose, _) => Layout::Transpose,
            _ => return Err(self.err(op, "internal: not a join, split or transpose")),
        })
    }

    /// `ops` applied in order over `view`: the view of a layout map over the view of its
    /// argument, or with `dual` the view its argument is written through.
    fn layout_map_view(&self, ops: &[(usize, ExprId)], mut view: Rc<View>, dual: bool) -> Result<Rc<View>> {
        for &(skip, op) in ops {
            view = Rc::new(View::Nested {
                skip,
                op: self.layout_of(op, dual)?,
                inner: view,
            });
        }
        Ok(view)
    }

    /// `e` is `x` under re-indexing primitives that can be written through (join, split,
    /// transpose, asScalar, asVector, toX).
    fn is_layout_of_var(&self, e: ExprId, x: VarId) -> bool {
        match self.prog.expr(e) {
            Expr::Var(v) => *v == x,
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_) | Prim::To(_),
                args,
            } => self.is_layout_of_var(args[0], x),
            _ => false,
        }
    }

    /// A layout primitive in destination position writes its argument through the dual view
    /// of the destination: `join` of rows of length m splits it, `split k` joins it,
    /// `transpose` transposes it, `asScalar` views it as vectors and `asVector` as scalars.
    fn reindexed_dest(&self, e: ExprId, dest: &Dest) -> Result<(ExprId, Dest)> {
        let Expr::Prim { prim, args } = self.prog.expr(e) else {
            return Err(self.err(e, "internal: not a layout primitive"));
        };
        let inner = dest.view.clone();
        let view = match prim {
            Prim::Join => View::Split {
                k: self.row_len(args[0])?,
                inner,
            },
            Prim::Split(k) => View::Join { m: k.clone(), inner },
            Prim::Transpose => View::Transpose { inner },
            Prim::AsScalar => View::AsVector {
                w: self.vector_width(args[0])?,
                inner,
            },
            Prim::AsVector(w) => View::AsScalar { w: *w, inner },
            Prim::Map(_)
            | Prim::Reduce(_)
            | Prim::Zip
            | Prim::Slide(..)
            | Prim::Pad(..)
            | Prim::PadClamp(..)
            | Prim::ReorderStride(_)
            | Prim::Reverse
            | Prim::Generate(_)
            | Prim::Iterate(_)
            | Prim::Filter(_)
            | Prim::To(_) => return Err(self.err(e, "internal: not a re-indexing primitive")),
        };
        Ok((
            args[0],
            Dest {
                view: Rc::new(view),
                len: None,
                rows: false,
            },
        ))
    }

    /// The length of the rows of an array of arrays.
    fn row_len(&self, e: ExprId) -> Result<ArithExpr> {
        match self.cty(e)? {
            Type::Array(row, _) => match *row {
                Type::Array(_, m) => Ok(m),
                t => Err(self.err(e, format!("internal: join of {t}"))),
            },
            t => Err(self.err(e, format!("internal: join of {t}"))),
        }
    }

    fn vector_width(&self, e: ExprId) -> Result<u8> {
        match self.cty(e)? {
            Type::Array(v, _) => match *v {
                Type::Vector(_, w) => Ok(w),
                t => Err(self.err(e, format!("internal: asScalar of {t}"))),
            },
            t => Err(self.err(e, format!("internal: asScalar of {t}"))),
        }
    }

    fn len_of(&self, e: ExprId) -> Result<ArithExpr> {
        match self.cty(e)? {
            Type::Array(_, n) => Ok(n),
            t => Err(self.err(e, format!("expected an array, found {t}"))),
        }
    }

    /// The C type of a scalar, vector or tuple value (tuples become struct typedefs, named by
    /// the namer after their components).
    fn ctype(&mut self, t: &Type) -> Result<CType> {
        let scalar = |g: &mut Self, s: Scalar| {
            if s == Scalar::Double {
                g.needs_fp64 = true;
            }
            ast_scalar(s)
        };
        match t {
            Type::Scalar(s) => Ok(CType::Scalar(scalar(self, *s))),
            Type::Vector(s, w) => Ok(CType::Vector(scalar(self, *s), *w)),
            Type::Tuple(ts) => {
                let key = c_type(t);
                if let Some((_, id)) = self.struct_ids.iter().find(|(k, _)| *k == key) {
                    return Ok(CType::Struct(id.clone()));
                }
                let mut fields = vec![];
                for c in ts {
                    match c {
                        Type::Scalar(_) | Type::Tuple(_) => fields.push(self.ctype(c)?),
                        Type::Vector(..) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                            return Err(Diagnostic::new(
                                Span::default(),
                                format!("tuples containing {c} are not supported yet by the OpenCL back end"),
                            ))
                        }
                    }
                }
                let name = self.names.exact(&key);
                self.struct_ids.push((key, name.clone()));
                self.structs.push(StructDef {
                    name: name.clone(),
                    fields,
                });
                Ok(CType::Struct(name))
            }
            Type::Array(..) | Type::Exists(_) | Type::Fun(..) => Err(Diagnostic::new(
                Span::default(),
                format!("internal: {t} is not a value type in C"),
            )),
        }
    }

    // ---- emission helpers ----

    /// Appends a statement to the innermost open statement.
    fn push(&mut self, s: Stmt) {
        let k = self.k.as_mut().expect("inside a kernel");
        k.emitted += 1;
        k.stack.last_mut().expect("the root frame").body.push(s);
    }

    /// Opens a block, `if` or `for`; the statements up to the matching `close` go in its body.
    fn open(&mut self, head: Head) {
        let k = self.k.as_mut().expect("inside a kernel");
        k.emitted += 1;
        k.stack.push(Frame { head, body: vec![] });
    }

    fn open_block(&mut self) {
        self.open(Head::Block);
    }

    fn open_if(&mut self, cond: CExpr) {
        self.open(Head::If(cond));
    }

    /// `for (int var = init; var < end; var += step)`
    fn open_for(&mut self, var: &Ident, init: CExpr, end: CExpr, step: CExpr, unroll: bool) {
        self.open(Head::For {
            var: var.clone(),
            init,
            cond: CExpr::bin(BinOp::Lt, CExpr::var(var), end),
            step: (AssignOp::Add, step),
            unroll,
        });
    }

    fn close(&mut self) {
        let k = self.k.as_mut().expect("inside a kernel");
        let f = k.stack.pop().expect("an open statement");
        let s = match f.head {
            Head::Block => Stmt::Block(f.body),
            Head::If(cond) => Stmt::If {
                cond,
                then: f.body,
                els: vec![],
            },
            Head::For {
                var,
                init,
                cond,
                step,
                unroll,
            } => Stmt::For {
                var,
                init,
                cond,
                step,
                unroll,
                body: f.body,
            },
            Head::Root => unreachable!("close without open"),
        };
        k.stack.last_mut().expect("the root frame").body.push(s);
    }

    /// The number of statements emitted so far in this kernel.
    fn emitted(&self) -> usize {
        self.k.as_ref().map_or(0, |k| k.emitted)
    }

    fn level(&self) -> Level {
        self.k.as_ref().map_or(Level::Top, |k| k.level)
    }

    fn set_level(&mut self, l: Level) -> Level {
        let k = self.k.as_mut().expect("inside a kernel");
        std::mem::replace(&mut k.level, l)
    }

    fn store(&mut self, loc: &Loc, v: &Read, at: ExprId) -> Result<()> {
        match (loc, v) {
            (Loc::Plain(l), Read::Expr(e)) => self.push(Stmt::assign(text(l), text(e))),
            (Loc::Plain(l), Read::Tuple(cs)) => {
                for (i, c) in cs.iter().enumerate() {
                    self.store(&Loc::Plain(format!("{l}.c{i}")), c, at)?;
                }
            }
            (Loc::Vector { base, offset, w }, Read::Expr(e)) => self.push(Stmt::VStore {
                w: *w,
                value: text(e),
                ptr: text(base),
                offset: arith(offset),
            }),
            (Loc::Vector { .. }, Read::Tuple(_)) => return Err(self.err(at, "cannot store a tuple into a vector")),
        }
        Ok(())
    }

    /// Writes `v` to `dest` at index path `idx`, refusing writes that every work-item of a group
    /// would repeat.
    fn write(&mut self, dest: &Rc<View>, idx: &[ArithExpr], v: &Read, at: ExprId) -> Result<()> {
        let loc = dest.write(idx).map_err(|m| self.err(at, m.0))?;
        if self.level() == Level::Group && !self.is_private(&loc) {
            return Err(self.err(at, "this value is computed directly inside `mapWrg`, so every work-item of the group would write it; distribute the work with `mapLcl`"));
        }
        self.store(&loc, v, at)
    }

    fn is_private(&self, loc: &Loc) -> bool {
        let name = match loc {
            Loc::Plain(l) => l.split(['[', '.']).next().unwrap_or(""),
            Loc::Vector { base, .. } => base.as_str(),
        };
        self.mem.by_name(name).is_some_and(|b| b.space == AddressSpace::Private) || self.mem.by_name(name).is_none()
    }

    /// Stores a value every work-item agrees on (a length) from a single work-item.
    fn store_uniform(&mut self, loc: &Loc, v: &str, at: ExprId) -> Result<()> {
        let first = |id: &'static str| {
            (0..3)
                .map(|d| CExpr::bin(BinOp::Eq, CExpr::call(id, vec![CExpr::Int(d)]), CExpr::Int(0)))
                .reduce(|a, b| CExpr::bin(BinOp::And, a, b))
                .expect("three dimensions")
        };
        let guard = match self.level() {
            Level::Item => None,
            Level::Group => Some(first("get_local_id")),
            Level::Top => Some(first("get_global_id")),
        };
        if let Some(g) = guard {
            self.open_if(g);
            self.store(loc, &Read::Expr(v.to_string()), at)?;
            self.close();
        } else {
            self.store(loc, &Read::Expr(v.to_string()), at)?;
        }
        Ok(())
    }

    // ---- host level: one kernel per computed value ----

    fn host(&mut self, e: ExprId, dest: &Dest) -> Result<()> {
        if self.info.packs.contains(&e) && dest.len.is_some() && !dest.rows {
            return self.host_packed(e, dest, e);
        }
        match self.prog.expr(e).clone() {
            Expr::Let { var, value, body, .. } => {
                self.host_bind(e, var, value)?;
                self.host(body, dest)
            }
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.host(args[0], dest),
            Expr::Pack(inner) => self.host_packed(inner, dest, e),
            Expr::Prim {
                prim: Prim::Filter(FilterKind::Glb | FilterKind::Plain),
                args,
            } => self.filter_glb(e, args[0], args[1], dest),
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_),
                ..
            } => {
                let (inner, d) = self.reindexed_dest(e, dest)?;
                self.host(inner, &d)
            }
            _ => {
                // Computed inputs of this kernel come from earlier kernels: a kernel boundary is
                // the only synchronization between work-groups.
                self.host_prepare(e)?;
                // A result that only re-indexes existing data is copied by one work-item per element.
                let parallel = self.contains_parallel(e) || self.is_view(e);
                self.kernel(e, parallel, |g| g.gen_into(e, dest))
            }
        }
    }

    /// A value whose type is `[T]L` with `L` a run-time length, stored with its length.
    fn host_packed(&mut self, e: ExprId, dest: &Dest, at: ExprId) -> Result<()> {
        let n = self.len_of(e)?;
        let parallel = self.contains_parallel(e);
        let len_view = dest
            .len
            .clone()
            .ok_or_else(|| self.err(at, "internal: packed value without a length destination"))?;
        self.kernel(e, parallel, |g| {
            g.gen_into(
                e,
                &Dest {
                    view: dest.view.clone(),
                    len: None,
                    rows: false,
                },
            )?;
            let loc = len_view.write(&[]).map_err(|m| g.err(at, m.0))?;
            g.store_uniform(&loc, &n.to_string(), at)
        })
    }

    fn host_bind(&mut self, letnode: ExprId, var: VarId, value: ExprId) -> Result<()> {
        let tv = self.info.ty(value).clone();
        if let Some(x) = self.info.unpacks.get(&Binder::Let(letnode)).cloned() {
            // A filter result: data and length in device memory.
            let elem = match &tv {
                Type::Exists(e) => self.c_type_of(e)?,
                _ => return Err(self.err(value, "internal: unpack of a non-existential")),
            };
            let cap = self.capacity_len(value)?;
            let ty = Type::array(elem.clone(), cap.clone());
            let (_, data_view) = self
                .alloc("t", &ty, AddressSpace::Global, &[], Role::Temp)
                .map_err(|m| self.err(value, m))?;
            let (lb, len) = self
                .alloc("len", &Type::int(), AddressSpace::Global, &[], Role::TempLength)
                .map_err(|m| self.err(value, m))?;
            self.host(
                value,
                &Dest {
                    view: data_view.clone(),
                    len: Some(len),
                    rows: false,
                },
            )?;
            let len_expr = format!("{}[0]", self.mem.buffers[lb].name);
            let c = self.names.size(&SizeKey(x.clone())).to_string();
            self.caps.insert(c.clone(), cap.clone());
            self.device_lengths.insert(c.clone(), len_expr);
            self.lengths.insert(
                x,
                ArithExpr::var(&c, Range::new(ArithExpr::cst(0), Some(cap.add(&ArithExpr::cst(1))))),
            );
            self.bind(var, Bound::View(data_view));
            return Ok(());
        }
        if self.is_view(value) {
            let v = self.host_view(value)?;
            self.bind(var, v);
            return Ok(());
        }
        let ty = self.capacity_type(&self.cty(value)?, value)?;
        if let Type::Array(elem, n) = &ty {
            if let Type::Exists(_) = **elem {
                let row = self.c_type_of(&exist_elem_as_array(elem, ArithExpr::cst(0)))?;
                let row = match row {
                    Type::Array(t, _) => Type::array(*t, self.capacity_len_rows(value)?),
                    t => t,
                };
                let inner = Type::array(row, n.clone());
                let (_, data) = self
                    .alloc("t", &inner, AddressSpace::Global, &[], Role::Temp)
                    .map_err(|m| self.err(value, m))?;
                let (_, lens) = self
                    .alloc(
                        "lens",
                        &Type::array(Type::int(), n.clone()),
                        AddressSpace::Global,
                        &[],
                        Role::TempLength,
                    )
                    .map_err(|m| self.err(value, m))?;
                self.host(
                    value,
                    &Dest {
                        view: data.clone(),
                        len: Some(lens.clone()),
                        rows: true,
                    },
                )?;
                self.bind(var, Bound::Rows { data, lens });
                return Ok(());
            }
        }
        match &ty {
            Type::Array(..) => {
                let (_, data) = self
                    .alloc("t", &ty, AddressSpace::Global, &[], Role::Temp)
                    .map_err(|m| self.err(value, m))?;
                self.host(
                    value,
                    &Dest {
                        view: data.clone(),
                        len: None,
                        rows: false,
                    },
                )?;
                self.bind(var, Bound::View(data));
            }
            _ => {
                // A scalar computed at host level is recomputed where it is used.
                let v = self.host_view(value)?;
                self.bind(var, v);
            }
        }
        Ok(())
    }

    fn host_view(&mut self, e: ExprId) -> Result<Bound> {
        // Views at host level are built without a kernel; scalar code is not allowed to emit
        // statements here, which `value` guarantees by not materializing anything.
        let saved = self.k.take();
        self.k = Some(KernelCx::new(Level::Item));
        let r = self.value(e);
        let k = std::mem::replace(&mut self.k, saved).expect("set above");
        let v = r?;
        if k.emitted > 0 {
            return Err(self.err(
                e,
                "a scalar computation outside any map needs statements; compute it inside the map that uses it",
            ));
        }
        Ok(Bound::View(v))
    }

    /// Materializes, each by its own kernel(s), the computed data arguments of the top-level
    /// computation `e` (looking through layout primitives).
    fn host_prepare(&mut self, e: ExprId) -> Result<()> {
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
            if self.pre.contains_key(&a) {
                continue;
            }
            let computes = match self.prog.expr(a) {
                Expr::Prim { prim: Prim::Map(_), .. } => self.layout_map(a).is_none(),
                Expr::Prim {
                    prim: Prim::Reduce(_) | Prim::Iterate(_),
                    ..
                } => true,
                Expr::Prim {
                    prim: Prim::To(_),
                    args,
                } => !self.is_view(args[0]),
                _ => false,
            };
            let ty = self.cty(a)?;
            if computes && matches!(ty, Type::Array(..)) && !ty.has_existential() {
                let ty = self.capacity_type(&ty, a)?;
                let (_, view) = self
                    .alloc("t", &ty, AddressSpace::Global, &[], Role::Temp)
                    .map_err(|m| self.err(a, m))?;
                self.host(
                    a,
                    &Dest {
                        view: view.clone(),
                        len: None,
                        rows: false,
                    },
                )?;
                self.pre.insert(a, view);
            } else if !computes {
                self.host_prepare(a)?;
            }
        }
        Ok(())
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

    fn contains_parallel(&self, e: ExprId) -> bool {
        if self.pre.contains_key(&e) {
            return false;
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } if self.layout_map(e).is_some() => self.contains_parallel(args[1]),
            Expr::Prim {
                prim: Prim::Map(k),
                args,
            } => is_parallel_map(*k) || *k == MapKind::Plain || args.iter().any(|a| self.contains_parallel(*a)),
            Expr::Lambda { .. } => false,
            _ => self.prog.children(e).iter().any(|c| self.contains_parallel(*c)),
        }
    }

    /// Runs `f` to generate the body of a new kernel, then assembles it.
    fn kernel(&mut self, e: ExprId, parallel: bool, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        if self.k.is_some() {
            return Err(self.err(e, "internal: nested kernel"));
        }
        let mut cx = KernelCx::new(if parallel { Level::Top } else { Level::Item });
        // A work-group is as wide as its widest `mapLcl` of known length in each dimension, so
        // the maps the tile sizes shape run one index per work-item and only the others stride.
        for (d, l) in self.local_hints(e).into_iter().enumerate() {
            cx.local[d] = l;
        }
        self.k = Some(cx);
        let r = f(self);
        let k = self.k.take().expect("set above");
        r?;
        self.finish_kernel(k, e)
    }

    fn local_hints(&self, e: ExprId) -> [Option<usize>; 3] {
        // [computing maps, copies] per dimension: the widest known length of each
        let mut widest = [[None; 3]; 2];
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if let Expr::Prim {
                prim: Prim::Map(MapKind::Lcl(d)),
                args,
            } = self.prog.expr(x)
            {
                if let Type::Array(_, n) = self.info.ty(args[1]) {
                    if let Some(c) = n.as_cst().filter(|c| (1..=1024).contains(c)) {
                        let kind = usize::from(self.is_copy_fn(args[0]));
                        let h: &mut Option<usize> = &mut widest[kind][usize::from(*d).min(2)];
                        *h = Some(h.unwrap_or(0).max(c as usize));
                    }
                }
            }
            stack.extend(self.prog.children(x));
        }
        // Copies (staging into local memory) stride over any work-group shape, so the computing
        // maps decide it; a dimension with only copies takes their width.
        let [mut hints, copies] = widest;
        for (h, c) in hints.iter_mut().zip(copies) {
            *h = h.or(c);
        }
        hints
    }

    /// `λx. x`, or `λr. mapX (λx. x) r` and so on: a function that only copies its argument.
    fn is_copy_fn(&self, f: ExprId) -> bool {
        let Expr::Lambda { params, body } = self.prog.expr(f) else {
            return false;
        };
        match self.prog.expr(*body) {
            Expr::Var(v) => params.len() == 1 && *v == params[0],
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => {
                matches!(self.prog.expr(args[1]), Expr::Var(v) if params.len() == 1 && *v == params[0])
                    && self.is_copy_fn(args[0])
            }
            _ => false,
        }
    }

    fn finish_kernel(&mut self, mut k: KernelCx, e: ExprId) -> Result<()> {
        let name = self.names.exact(&format!("KERNEL_{}", self.kernels.len()));
        let root = k
            .stack
            .pop()
            .filter(|f| k.stack.is_empty() && matches!(f.head, Head::Root));
        let Some(root) = root else {
            return Err(self.err(e, "internal: a statement was left open"));
        };
        let mut body = std::mem::take(&mut k.decls);
        let used = ast::idents(&root.body);
        for (c, read) in &self.device_lengths {
            if used.contains(c.as_str()) {
                body.push(Stmt::decl(CType::INT, &self.names.fixed(c), text(read)));
            }
        }
        body.extend(root.body);
        let used = ast::idents(&body);
        let (params, args) = self.kernel_params(&used)?;
        let (global, local) = self.launch_sizes(&k, e)?;
        // Known work-group sizes are declared, so the driver can compile for them.
        let work_group = local.as_ref().map(|l| {
            [
                l.first().copied().unwrap_or(1),
                l.get(1).copied().unwrap_or(1),
                l.get(2).copied().unwrap_or(1),
            ]
        });
        let kernel = ast::Kernel {
            name: name.clone(),
            work_group,
            params,
            body,
        };
        let mut text = print::kernel_text(&kernel);
        for b in &self.mem.buffers {
            if b.space == AddressSpace::Private {
                text = scalarize(&text, &b.name);
            }
        }
        self.source.push_str(&text);
        self.kernels.push(Kernel {
            name: name.to_string(),
            args,
            global,
            local,
        });
        Ok(())
    }

    fn launch_sizes(&self, k: &KernelCx, e: ExprId) -> Result<(Vec<ArithExpr>, Option<Vec<usize>>)> {
        if k.wrg && k.glb {
            return Err(self.err(e, "a kernel cannot mix mapGlb with mapWrg/mapLcl"));
        }
        let dims = (0..3).rev().find(|d| k.global[*d].is_some()).map_or(1, |d| d + 1);
        let mut global = vec![];
        let mut local = vec![];
        for d in 0..dims {
            let l = k.local[d].unwrap_or(1);
            let g = k.global[d].clone().unwrap_or_else(|| ArithExpr::cst(1));
            let g = self.capacity(&g);
            let lc = ArithExpr::cst(l as i64);
            if k.wrg {
                global.push(g.mul(&lc));
            } else if k.glb {
                global.push(g.add(&ArithExpr::cst(l as i64 - 1)).div(&lc).mul(&lc));
            } else {
                global.push(g);
            }
            local.push(l);
        }
        Ok((global, (k.wrg || k.glb).then_some(local)))
    }

    /// Kernel parameters in ABI order, for the names the kernel text uses.
    /// Kernel parameters in ABI order, for the identifiers the kernel body uses.
    fn kernel_params(&mut self, used: &BTreeSet<String>) -> Result<(Vec<ast::Param>, Vec<KernelArg>)> {
        let mut params = vec![];
        let mut args = vec![];
        let mut bufs: Vec<(usize, Role)> = vec![];
        for (i, b) in self.mem.buffers.iter().enumerate() {
            if b.space == AddressSpace::Global && used.contains(&b.name) {
                bufs.push((i, b.role));
            }
        }
        let rank = |r: Role| match r {
            Role::Input(k) => (0, k),
            Role::Output => (1, 0),
            Role::OutputLength => (2, 0),
            Role::Temp | Role::TempLength | Role::Scratch => (3, 0),
        };
        let ptr = |space, elem, is_const, restrict| CType::Ptr {
            space,
            elem: Box::new(elem),
            is_const,
            restrict,
        };
        // Inputs and scalar parameters interleave in parameter order.
        let mut inputs: Vec<(usize, ast::Param, KernelArg)> = vec![];
        for (k, p) in self.prog.params.iter().enumerate() {
            let name = self.param_names[k].clone();
            if !used.contains(name.as_str()) {
                continue;
            }
            match &p.ty {
                Type::Scalar(s) => {
                    let ty = self.ctype(&Type::Scalar(*s))?;
                    inputs.push((k, ast::Param { ty, name }, KernelArg::Param(k)))
                }
                _ => {
                    let (i, _) = bufs
                        .iter()
                        .find(|(i, _)| self.mem.buffers[*i].name == name.as_str())
                        .copied()
                        .expect("input buffer registered");
                    let elem = self.mem.buffers[i].elem.clone();
                    let t = self.buffer_ctype(&elem)?;
                    let ty = ptr(AddressSpace::Global, t, true, true);
                    inputs.push((k, ast::Param { ty, name }, KernelArg::Buffer(i)));
                }
            }
        }
        inputs.sort_by_key(|(k, _, _)| *k);
        for (_, p, a) in inputs {
            params.push(p);
            args.push(a);
        }
        let mut rest: Vec<(usize, Role)> = bufs.into_iter().filter(|(_, r)| !matches!(r, Role::Input(_))).collect();
        rest.sort_by_key(|(i, r)| (rank(*r), *i));
        for (i, _) in rest {
            let elem = self.mem.buffers[i].elem.clone();
            let t = self.buffer_ctype(&elem)?;
            // Every buffer is passed once, so no two pointers alias.
            let name = self.buf_ident(&self.mem.buffers[i].name);
            params.push(ast::Param {
                ty: ptr(AddressSpace::Global, t, false, true),
                name,
            });
            args.push(KernelArg::Buffer(i));
        }
        let dynamic_local: Vec<(usize, Type, String)> = (self.mem.buffers.iter().enumerate())
            .filter(|(_, b)| b.space == AddressSpace::Local && b.len.as_cst().is_none() && used.contains(&b.name))
            .map(|(i, b)| (i, b.elem.clone(), b.name.clone()))
            .collect();
        for (i, elem, name) in dynamic_local {
            let t = self.buffer_ctype(&elem)?;
            params.push(ast::Param {
                ty: ptr(AddressSpace::Local, t, false, true),
                name: self.buf_ident(&name),
            });
            args.push(KernelArg::Local(i));
        }
        if used.contains(self.error_flag.as_str()) {
            params.push(ast::Param {
                ty: ptr(AddressSpace::Global, CType::INT, false, false),
                name: self.error_flag.clone(),
            });
            args.push(KernelArg::ErrorFlag);
        }
        let mut sizes: Vec<&(String, Ident)> = self.size_names.iter().collect();
        sizes.sort();
        for (_, c) in sizes {
            if used.contains(c.as_str()) {
                params.push(ast::Param {
                    ty: CType::INT,
                    name: c.clone(),
                });
                args.push(KernelArg::Size(c.to_string()));
            }
        }
        Ok((params, args))
    }

    /// The C type of a buffer's elements (vectors are stored as their scalars).
    fn buffer_ctype(&mut self, elem: &Type) -> Result<CType> {
        match elem {
            Type::Vector(s, _) => self.ctype(&Type::Scalar(*s)),
            t => self.ctype(t),
        }
    }

    // ---- inside a kernel ----

    /// Whether `e` only re-indexes existing data (no computation, no allocation).
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
                | Prim::AsScalar => args.iter().all(|a| self.is_view(*a)),
                Prim::Pad(..) => args.iter().all(|a| self.is_view(*a)),
                Prim::Generate(_) => true,
                Prim::To(_) => args.iter().all(|a| self.is_view(*a)),
                Prim::Map(_) => self.layout_map(e).is_some() && self.is_view(args[1]),
                Prim::Reduce(_) | Prim::Iterate(_) | Prim::Filter(_) => false,
            },
            Expr::Op { .. } | Expr::If { .. } => !matches!(self.info.ty(e), Type::Array(..) | Type::Exists(_)),
            Expr::Let { value, body, .. } => self.is_view(*value) && self.is_view(*body),
            Expr::Pack(_) | Expr::Lambda { .. } => false,
        }
    }

    /// The value of `e` as a view, materializing computed arrays into buffers.
    fn value(&mut self, e: ExprId) -> Result<Rc<View>> {
        if let Some(v) = self.pre.get(&e) {
            return Ok(v.clone());
        }
        match self.prog.expr(e).clone() {
            Expr::Var(v) => match &self.env[v.index()] {
                Some(Bound::View(view)) => Ok(view.clone()),
                Some(Bound::Rows { .. }) => Err(self.err(e, "an array of filter results can only be mapped over here")),
                None => Err(self.err(e, "internal: unbound variable in code generation")),
            },
            // An array component of a tuple (e.g. of a zip of arrays of arrays) stays a view.
            Expr::Op { op: Op::Get(i), args }
                if matches!(self.cty(e)?, Type::Array(..))
                    && matches!(self.prog.expr(args[0]), Expr::Var(_) | Expr::Prim { .. }) =>
            {
                Ok(self.value(args[0])?.component(i as usize))
            }
            Expr::Lit(_) | Expr::Op { .. } | Expr::If { .. } => {
                let r = self.scalar(e)?;
                let ty = self.cty(e)?;
                Ok(read_to_view(r, &ty))
            }
            Expr::Let { var, value, body, .. } => {
                self.kernel_bind(e, var, value)?;
                self.value(body)
            }
            Expr::Pack(inner) => self.value(inner),
            Expr::Lambda { .. } => Err(self.err(e, "internal: lambda as a value")),
            Expr::Prim { prim, args } => {
                let n_of = |g: &Self, a: ExprId| g.len_of(a);
                Ok(match prim {
                    Prim::Zip => {
                        let vs = args.iter().map(|a| self.value(*a)).collect::<Result<Vec<_>>>()?;
                        Rc::new(View::Zip(vs))
                    }
                    Prim::Split(k) => Rc::new(View::Split {
                        k,
                        inner: self.value(args[0])?,
                    }),
                    Prim::Join => Rc::new(View::Join {
                        m: self.row_len(args[0])?,
                        inner: self.value(args[0])?,
                    }),
                    Prim::Transpose => Rc::new(View::Transpose {
                        inner: self.value(args[0])?,
                    }),
                    Prim::Slide(_, step) => Rc::new(View::Slide {
                        step,
                        inner: self.value(args[0])?,
                    }),
                    Prim::Pad(l, _) => {
                        let fill = match self.scalar(args[0])? {
                            Read::Expr(s) => s,
                            Read::Tuple(_) => return Err(self.err(args[0], "padding with tuples is not supported yet")),
                        };
                        let n = n_of(self, args[1])?;
                        Rc::new(View::Pad {
                            l,
                            n,
                            fill: Some(fill),
                            inner: self.value(args[1])?,
                        })
                    }
                    Prim::PadClamp(l, _) => {
                        let n = n_of(self, args[0])?;
                        Rc::new(View::Pad {
                            l,
                            n,
                            fill: None,
                            inner: self.value(args[0])?,
                        })
                    }
                    Prim::ReorderStride(s) => {
                        let n = n_of(self, args[0])?;
                        Rc::new(View::Reorder {
                            s,
                            n,
                            inner: self.value(args[0])?,
                        })
                    }
                    Prim::Reverse => {
                        let n = n_of(self, args[0])?;
                        Rc::new(View::Reverse {
                            n,
                            inner: self.value(args[0])?,
                        })
                    }
                    Prim::AsVector(w) => Rc::new(View::AsVector {
                        w,
                        inner: self.value(args[0])?,
                    }),
                    Prim::AsScalar => Rc::new(View::AsScalar {
                        w: self.vector_width(args[0])?,
                        inner: self.value(args[0])?,
                    }),
                    Prim::Generate(_) => {
                        let Expr::Lambda { params, body } = self.prog.expr(args[0]).clone() else {
                            return Err(self.err(e, "internal: generate"));
                        };
                        let token = format!("@GEN{}@", self.fresh("g"));
                        self.bind(
                            params[0],
                            Bound::View(Rc::new(View::Value {
                                expr: token.clone(),
                                ty: Type::int(),
                            })),
                        );
                        let before = self.emitted();
                        let r = self.scalar(body)?;
                        if self.emitted() != before {
                            return Err(self.err(
                                args[0],
                                "the function of `generate` must be a scalar expression without local bindings here",
                            ));
                        }
                        match r {
                            Read::Expr(template) => Rc::new(View::Generate { template, token }),
                            Read::Tuple(_) => return Err(self.err(args[0], "generate of tuples is not supported yet")),
                        }
                    }
                    Prim::To(space) if !self.is_view(args[0]) => self.materialize(args[0], Some(space))?,
                    Prim::To(_) => self.value(args[0])?,
                    Prim::Map(_) => match self.layout_map(e) {
                        Some(ops) => {
                            let inner = self.value(args[1])?;
                            self.layout_map_view(&ops, inner, false)?
                        }
                        None => self.materialize(e, None)?,
                    },
                    Prim::Reduce(_) | Prim::Iterate(_) => self.materialize(e, None)?,
                    Prim::Filter(_) => return Err(self.err(e, "internal: a filter result must be bound before use")),
                })
            }
        }
    }

    /// Where a computation's result goes by default: the space its innermost `toX` names.
    fn space_of(&self, e: ExprId) -> Option<AddressSpace> {
        match self.prog.expr(e) {
            Expr::Prim { prim: Prim::To(s), .. } => Some(*s),
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => match self.prog.expr(args[0]) {
                Expr::Lambda { body, .. } => self.space_of(*body),
                _ => None,
            },
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_),
                args,
            } => self.space_of(args[0]),
            Expr::Prim {
                prim: Prim::Iterate(_),
                args,
            } => match self.prog.expr(args[0]) {
                Expr::Lambda { body, .. } => self.space_of(*body),
                _ => None,
            },
            Expr::Let { body, .. } => self.space_of(*body),
            _ => None,
        }
    }

    fn materialize(&mut self, e: ExprId, space: Option<AddressSpace>) -> Result<Rc<View>> {
        let ty = self.capacity_type(&self.cty(e)?, e)?;
        if let Type::Exists(_) = ty {
            return Err(self.err(e, "internal: materializing a filter result without its binder"));
        }
        let level = self.level();
        let space = space.or_else(|| self.space_of(e)).unwrap_or({
            let constant = dims_of(&ty).0.iter().all(|d| d.as_cst().is_some());
            if level == Level::Item && constant {
                AddressSpace::Private
            } else {
                AddressSpace::Global
            }
        });
        if space == AddressSpace::Private && level == Level::Group {
            return Err(self.err(
                e,
                "a private array at work-group level would be written by every work-item; use toLocal",
            ));
        }
        if space == AddressSpace::Private && self.contains_lcl(e) {
            return Err(self.err(
                e,
                "this array is computed by several work-items (`mapLcl`), so it cannot be kept in the private memory of one; write it to local memory with toLocal, or straight into the result",
            ));
        }
        let view = self.temp_buffer("t", &ty, space, e)?;
        let _ = writeln!(
            self.views,
            "materialize {} in {:?} memory: {}",
            self.prog.span(e).start,
            space,
            view.describe()
        );
        self.gen_into(
            e,
            &Dest {
                view: view.clone(),
                len: None,
                rows: false,
            },
        )?;
        Ok(view)
    }

    fn kernel_bind(&mut self, letnode: ExprId, var: VarId, value: ExprId) -> Result<()> {
        if let Some(x) = self.info.unpacks.get(&Binder::Let(letnode)).cloned() {
            let cap = self.capacity_len(value)?;
            let elem = match self.info.ty(value) {
                Type::Exists(e) => self.c_type_of(e)?,
                t => return Err(self.err(value, format!("internal: unpack of {t}"))),
            };
            let ty = Type::array(elem, cap.clone());
            let level = self.level();
            let constant = cap.as_cst().is_some();
            let space = self.space_of(value).unwrap_or(if level == Level::Item && constant {
                AddressSpace::Private
            } else {
                AddressSpace::Global
            });
            let loops = self.k.as_ref().map(|k| k.loops.clone()).unwrap_or_default();
            let (_, data) = self
                .alloc("t", &ty, space, &loops, Role::Temp)
                .map_err(|m| self.err(value, m))?;
            let b = self.mem.buffers.len() - 1;
            if space == AddressSpace::Private {
                let buf = self.mem.buffers[b].clone();
                let ty = self.buffer_ctype(&buf.elem)?;
                self.push(Stmt::Decl {
                    ty,
                    name: self.buf_ident(&buf.name),
                    space: None,
                    len: buf.len.as_cst().map(|n| n as usize),
                    init: None,
                    is_const: false,
                });
            }
            let c = self.names.size(&SizeKey(x.clone()));
            self.push(Stmt::decl(CType::INT, &c, CExpr::Int(0)));
            let c = c.to_string();
            let len = Rc::new(View::Value {
                expr: c.clone(),
                ty: Type::int(),
            });
            self.gen_into(
                value,
                &Dest {
                    view: data.clone(),
                    len: Some(len),
                    rows: false,
                },
            )?;
            self.caps.insert(c.clone(), cap.clone());
            self.lengths.insert(
                x,
                ArithExpr::var(&c, Range::new(ArithExpr::cst(0), Some(cap.add(&ArithExpr::cst(1))))),
            );
            self.bind(var, Bound::View(data));
            return Ok(());
        }
        let ty = self.info.ty(value).clone();
        match ty {
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) => {
                let r = self.scalar(value)?;
                let cty = self.cty(value)?;
                let v = self.declare(&r, &cty, &self.prog.var(var).name.clone())?;
                self.bind(var, Bound::View(read_to_view(v, &cty)));
            }
            _ => {
                let v = self.value(value)?;
                self.bind(var, Bound::View(v));
            }
        }
        Ok(())
    }

    /// Declares private variables holding a value (tuples component by component).
    fn declare(&mut self, r: &Read, ty: &Type, hint: &str) -> Result<Read> {
        match (r, ty) {
            (Read::Tuple(rs), Type::Tuple(ts)) => Ok(Read::Tuple(
                rs.iter()
                    .zip(ts)
                    .map(|(r, t)| self.declare(r, t, hint))
                    .collect::<Result<_>>()?,
            )),
            (Read::Expr(e), t) => {
                let name = self.fresh(hint);
                let ty = self.ctype(t)?;
                self.push(Stmt::decl(ty, &name, text(e)));
                Ok(Read::Expr(name.to_string()))
            }
            (Read::Tuple(_), t) => Err(Diagnostic::new(
                Span::default(),
                format!("internal: tuple value of type {t}"),
            )),
        }
    }

    /// Generates code computing `e` into `dest`.
    fn gen_into(&mut self, e: ExprId, dest: &Dest) -> Result<()> {
        if self.info.packs.contains(&e) && dest.len.is_some() && !dest.rows {
            return self.gen_packed(e, dest, e);
        }
        match self.prog.expr(e).clone() {
            // `let k = v in layout(k)` (as K-normalization leaves it): `v` is computed straight
            // into the destination seen through the layout, never into a temporary (a
            // temporary of a `mapLcl` inside another `mapLcl` would be private to each
            // work-item, though every work-item wrote part of it).
            Expr::Let { var, value, body, .. }
                if !self.info.unpacks.contains_key(&Binder::Let(e)) && self.is_layout_of_var(body, var) =>
            {
                let (mut cur, mut d) = (body, dest.clone());
                while cur != value {
                    (cur, d) = match self.prog.expr(cur).clone() {
                        Expr::Var(_) => (value, d),
                        Expr::Prim {
                            prim: Prim::To(_),
                            args,
                        } => (args[0], d),
                        _ => self.reindexed_dest(cur, &d)?,
                    };
                }
                self.gen_into(value, &d)
            }
            Expr::Let { var, value, body, .. } => {
                self.kernel_bind(e, var, value)?;
                self.gen_into(body, dest)
            }
            Expr::Pack(inner) => self.gen_packed(inner, dest, e),
            Expr::Prim { prim, args } => match prim {
                Prim::To(_) => self.gen_into(args[0], dest),
                Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_) => {
                    let (inner, d) = self.reindexed_dest(e, dest)?;
                    self.gen_into(inner, &d)
                }
                Prim::Map(kind) => match self.layout_map(e) {
                    // written through the dual re-indexings, outermost first
                    Some(ops) => {
                        let duals: Vec<(usize, ExprId)> = ops.into_iter().rev().collect();
                        let d = Dest {
                            view: self.layout_map_view(&duals, dest.view.clone(), true)?,
                            len: None,
                            rows: false,
                        };
                        self.gen_into(args[1], &d)
                    }
                    None => self.gen_map(e, kind, args[0], args[1], dest),
                },
                Prim::Reduce(_) => self.gen_reduce(e, args[0], args[1], args[2], dest),
                Prim::Filter(FilterKind::Seq | FilterKind::Plain) => self.gen_filter_seq(e, args[0], args[1], dest),
                Prim::Filter(FilterKind::Glb) => Err(self.err(e, "`filterGlb` needs several kernels, so it must be at the top level of the program (bind its result with let/unpack), not inside a map")),
                Prim::Iterate(k) => self.gen_iterate(e, &k, args[0], args[1], dest),
                Prim::Zip | Prim::Slide(..) | Prim::Pad(..) | Prim::PadClamp(..) | Prim::ReorderStride(_) | Prim::Reverse | Prim::Generate(_) => {
                    self.gen_copy(e, dest)
                }
            },
            Expr::Var(_) => self.gen_copy(e, dest),
            Expr::Lit(_) | Expr::Op { .. } | Expr::If { .. } => {
                if let Type::Array(..) = self.cty(e)? {
                    return self.gen_copy(e, dest);
                }
                let r = self.scalar(e)?;
                self.write(&dest.view, &[], &r, e)
            }
            Expr::Lambda { .. } => Err(self.err(e, "internal: lambda in destination position")),
        }
    }

    fn gen_packed(&mut self, e: ExprId, dest: &Dest, at: ExprId) -> Result<()> {
        let n = self.len_of(e)?;
        self.gen_into(
            e,
            &Dest {
                view: dest.view.clone(),
                len: None,
                rows: false,
            },
        )?;
        let len = dest
            .len
            .clone()
            .ok_or_else(|| self.err(at, "internal: packed value without a length destination"))?;
        let loc = len.write(&[]).map_err(|m| self.err(at, m.0))?;
        self.store_uniform(&loc, &n.to_string(), at)
    }

    /// Copies a view (no computation) element by element.
    fn gen_copy(&mut self, e: ExprId, dest: &Dest) -> Result<()> {
        let src = self.value(e)?;
        let ty = self.cty(e)?;
        let (dims, _) = dims_of(&ty);
        if self.level() == Level::Group && !dims.is_empty() {
            return Err(self.err(
                e,
                "copying an array directly inside `mapWrg` would be done by every work-item; use `mapLcl` to copy it",
            ));
        }
        let kind = if self.level() == Level::Top {
            MapKind::Glb(0)
        } else {
            MapKind::Seq
        };
        self.copy_dims(e, &src, &dest.view, &dims, vec![], kind)
    }

    fn copy_dims(
        &mut self,
        e: ExprId,
        src: &Rc<View>,
        dst: &Rc<View>,
        dims: &[ArithExpr],
        idx: Vec<ArithExpr>,
        kind: MapKind,
    ) -> Result<()> {
        if dims.is_empty() {
            let r = src.read(&idx).map_err(|m| self.err(e, m.0))?;
            return self.write(dst, &idx, &r, e);
        }
        let (n, rest) = (dims[0].clone(), dims[1..].to_vec());
        self.emit_loop(e, kind, &n, |g, i| {
            let mut idx = idx.clone();
            idx.push(i);
            g.copy_dims(e, src, dst, &rest, idx, MapKind::Seq)
        })
    }

    /// Emits a loop of `kind` over `0..n`, calling `body` with the index expression.
    fn emit_loop(
        &mut self,
        e: ExprId,
        kind: MapKind,
        n: &ArithExpr,
        mut body: impl FnMut(&mut Self, ArithExpr) -> Result<()>,
    ) -> Result<()> {
        let zero = ArithExpr::cst(0);
        let level = self.level();
        match kind {
            MapKind::Seq | MapKind::Plain | MapKind::Vec => {
                if n.as_cst() == Some(0) {
                    return Ok(());
                }
                if n.as_cst() == Some(1) {
                    self.open_block();
                    self.push_loop(zero.clone(), n.clone(), LoopKind::Sequential);
                    body(self, zero)?;
                    self.pop_loop();
                    self.close();
                    return Ok(());
                }
                let v = self.fresh("i");
                let i = ArithExpr::var(v.as_str(), Range::upto(n.clone()));
                self.open_for(&v, CExpr::Int(0), arith(n), CExpr::Int(1), false);
                self.push_loop(i.clone(), n.clone(), LoopKind::Sequential);
                body(self, i)?;
                self.pop_loop();
                self.close();
            }
            MapKind::SeqUnroll => {
                let Some(c) = n.as_cst() else {
                    return Err(self.err(
                        e,
                        format!("`mapSeqUnroll`/`reduceSeqUnroll` need a length known at compile time, not {n}"),
                    ));
                };
                // Unrolling inlines the body once per index; each copy gets a constant index, so
                // private arrays indexed by it become plain registers.
                if c > 0 {
                    self.open_block();
                    for k in 0..c {
                        self.push_loop(ArithExpr::cst(k), n.clone(), LoopKind::Sequential);
                        body(self, ArithExpr::cst(k))?;
                        self.pop_loop();
                    }
                    self.close();
                }
            }
            MapKind::Glb(d) | MapKind::Wrg(d) | MapKind::Lcl(d) => {
                let d = d as usize;
                let (getid, getsize, lk, inner_level) = match kind {
                    MapKind::Glb(_) => ("get_global_id", "get_global_size", LoopKind::Global, Level::Item),
                    MapKind::Wrg(_) => ("get_group_id", "get_num_groups", LoopKind::WorkGroup, Level::Group),
                    _ => ("get_local_id", "get_local_size", LoopKind::Local, Level::Item),
                };
                let active = self.k.as_ref().map(|k| k.active.clone()).unwrap_or_default();
                let same_dim = |f: fn(MapKind) -> Option<u8>| active.iter().any(|a| f(*a) == Some(d as u8));
                let ok = match kind {
                    // Nested global/group maps are fine in other dimensions (2-D and 3-D kernels).
                    MapKind::Glb(_) => {
                        (level == Level::Top
                            || (level == Level::Item
                                && !active.is_empty()
                                && active.iter().all(|a| matches!(a, MapKind::Glb(_)))))
                            && !same_dim(|a| if let MapKind::Glb(x) = a { Some(x) } else { None })
                    }
                    MapKind::Wrg(_) => {
                        (level == Level::Top
                            || (level == Level::Group && active.iter().all(|a| matches!(a, MapKind::Wrg(_)))))
                            && !same_dim(|a| if let MapKind::Wrg(x) = a { Some(x) } else { None })
                    }
                    _ => {
                        same_dim(|a| if let MapKind::Wrg(x) = a { Some(x) } else { None })
                            && !same_dim(|a| if let MapKind::Lcl(x) = a { Some(x) } else { None })
                    }
                };
                if !ok {
                    let name = ir::Prim::Map(kind).name();
                    return Err(self.err(e, match kind {
                        MapKind::Glb(_) => format!("`{name}` must be the outermost map of a kernel, or directly inside `mapGlb` of other dimensions"),
                        MapKind::Wrg(_) => format!("`{name}` must be the outermost map of a kernel, or directly inside `mapWrg` of other dimensions"),
                        _ => format!("`{name}` must be inside `mapWrg{}` (and not inside another `{name}`)", dim_suffix(d)),
                    }));
                }
                let cap = self.capacity(n);
                if kind == MapKind::Glb(0) && active.is_empty() && cap.as_cst().is_none() && self.coarsen_scalars {
                    return self.coarsened_glb(n, &cap, body);
                }
                let k = self.k.as_mut().expect("in kernel");
                // The launch covers the map's (capacity) length exactly: one id per index.
                let size = match kind {
                    MapKind::Glb(_) => {
                        k.glb = true;
                        if let Some(g) = &k.global[d] {
                            if *g != cap {
                                return Err(Diagnostic::new(
                                    Span::default(),
                                    "two mapGlb of different lengths in one dimension of one kernel",
                                ));
                            }
                        }
                        k.global[d] = Some(cap.clone());
                        // Work-groups of 256 along dimension 0 (coalesced), 1 elsewhere; the launch
                        // is rounded up to whole groups, so only an exact fit needs no guard.
                        let l = if d == 0 { GLB_LOCAL } else { 1 };
                        k.local[d] = Some(l);
                        match cap.as_cst() {
                            Some(c) if c % l as i64 == 0 => cap.clone(),
                            _ => ArithExpr::size_var(self.rounded_launch.as_str()),
                        }
                    }
                    MapKind::Wrg(_) => {
                        k.wrg = true;
                        k.global[d] = Some(cap.clone());
                        cap.clone()
                    }
                    _ => {
                        let l = *k.local[d].get_or_insert_with(|| match cap.as_cst() {
                            Some(c) if (1..=1024).contains(&c) => c as usize,
                            _ => 128,
                        });
                        ArithExpr::cst(l as i64)
                    }
                };
                let v = self.fresh(match kind {
                    MapKind::Glb(_) => "gl_id",
                    MapKind::Wrg(_) => "wg_id",
                    _ => "l_id",
                });
                let i = ArithExpr::var(v.as_str(), Range::upto(n.clone()));
                let old = self.set_level(inner_level);
                let dim = || vec![CExpr::Int(d as i64)];
                if size == *n {
                    self.open_block();
                    self.push(Stmt::decl(CType::INT, &v, CExpr::call(getid, dim())));
                } else if n.prove_le(&size) || cap == size || matches!(kind, MapKind::Glb(_) | MapKind::Wrg(_)) {
                    // Global and group launches always cover the capacity of the map's length.
                    self.push(Stmt::decl(CType::INT, &v, CExpr::call(getid, dim())));
                    self.open_if(CExpr::bin(BinOp::Lt, CExpr::var(&v), arith(n)));
                } else {
                    self.open_for(
                        &v,
                        CExpr::call(getid, dim()),
                        arith(n),
                        CExpr::call(getsize, dim()),
                        false,
                    );
                }
                self.push_loop(i.clone(), n.clone(), lk);
                self.k.as_mut().expect("in kernel").active.push(kind);
                let r = body(self, i);
                self.k.as_mut().expect("in kernel").active.pop();
                self.pop_loop();
                self.close();
                self.set_level(old);
                r?;
            }
        }
        Ok(())
    }

    /// The outermost `mapGlb` over a length known only at run time: each work-item handles
    /// `GLB_COARSEN` indices a launch apart, so loads stay coalesced and each work-item keeps
    /// several independent memory accesses in flight (one per work-item cannot saturate HBM).
    fn coarsened_glb(
        &mut self,
        n: &ArithExpr,
        cap: &ArithExpr,
        mut body: impl FnMut(&mut Self, ArithExpr) -> Result<()>,
    ) -> Result<()> {
        let c = GLB_COARSEN as i64;
        {
            let k = self.k.as_mut().expect("in kernel");
            k.glb = true;
            k.global[0] = Some(cap.add(&ArithExpr::cst(c - 1)).div(&ArithExpr::cst(c)));
            k.local[0] = Some(GLB_LOCAL);
        }
        let gid = self.fresh("gl_id");
        let rep = self.fresh("c");
        let v = self.fresh("i");
        let i = ArithExpr::var(v.as_str(), Range::upto(n.clone()));
        let old = self.set_level(Level::Item);
        self.push(Stmt::decl(
            CType::INT,
            &gid,
            CExpr::call("get_global_id", vec![CExpr::Int(0)]),
        ));
        self.open_for(&rep, CExpr::Int(0), CExpr::Int(c), CExpr::Int(1), true);
        let size = CExpr::cast(CType::INT, CExpr::call("get_global_size", vec![CExpr::Int(0)]));
        let at = CExpr::bin(
            BinOp::Add,
            CExpr::var(&gid),
            CExpr::bin(BinOp::Mul, CExpr::var(&rep), size),
        );
        self.push(Stmt::decl(CType::INT, &v, at));
        self.open_if(CExpr::bin(BinOp::Lt, CExpr::var(&v), arith(n)));
        self.push_loop(i.clone(), n.clone(), LoopKind::Global);
        self.k.as_mut().expect("in kernel").active.push(MapKind::Glb(0));
        let r = body(self, i);
        self.k.as_mut().expect("in kernel").active.pop();
        self.pop_loop();
        self.close();
        self.close();
        self.set_level(old);
        r
    }

    fn push_loop(&mut self, var: ArithExpr, len: ArithExpr, kind: LoopKind) {
        self.k
            .as_mut()
            .expect("in kernel")
            .loops
            .push(Enclosing { var, len, kind });
    }

    fn pop_loop(&mut self) {
        self.k.as_mut().expect("in kernel").loops.pop();
    }

    fn lambda(&self, f: ExprId) -> Result<(Vec<VarId>, ExprId)> {
        match self.prog.expr(f) {
            Expr::Lambda { params, body } => Ok((params.clone(), *body)),
            _ => Err(self.err(f, "internal: expected a lambda")),
        }
    }

    fn gen_map(&mut self, e: ExprId, kind: MapKind, f: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let (params, body) = self.lambda(f)?;
        if kind == MapKind::Vec {
            let Type::Vector(s, w) = self.cty(xs)? else {
                return Err(self.err(xs, "internal: mapVec"));
            };
            let v = match self.scalar(xs)? {
                Read::Expr(v) => v,
                Read::Tuple(_) => return Err(self.err(xs, "internal: mapVec of a tuple")),
            };
            let v = self.declare(&Read::Expr(v), &Type::Vector(s, w), "v")?;
            let Read::Expr(v) = v else {
                unreachable!("declare of a vector")
            };
            let mut lanes = vec![];
            let mut rt = c_scalar(s).to_string();
            for k in 0..w {
                self.bind(
                    params[0],
                    Bound::View(Rc::new(View::Value {
                        expr: format!("{v}.s{}", std::char::from_digit(u32::from(k), 16).unwrap_or('0')),
                        ty: Type::Scalar(s),
                    })),
                );
                match self.scalar(body)? {
                    Read::Expr(x) => lanes.push(x),
                    Read::Tuple(_) => return Err(self.err(body, "mapVec functions return scalars")),
                }
                if let Some(t) = self.cty(body)?.scalar() {
                    rt = c_scalar(t).to_string();
                }
            }
            let r = Read::Expr(format!("(({rt}{w})({}))", lanes.join(", ")));
            return self.write(&dest.view, &[], &r, e);
        }
        let n = self.len_of(xs)?;
        let kind = match kind {
            MapKind::Plain => {
                if self.level() == Level::Top {
                    MapKind::Glb(0)
                } else {
                    MapKind::Seq
                }
            }
            k => k,
        };
        // An array of filter results is mapped row by row, each row unpacked with its length.
        let rows = match self.prog.expr(xs) {
            Expr::Var(v) => match &self.env[v.index()] {
                Some(Bound::Rows { data, lens }) => Some((data.clone(), lens.clone())),
                _ => None,
            },
            _ => None,
        };
        let xv = if rows.is_some() { None } else { Some(self.value(xs)?) };
        let level = self.level();
        let elem_exist = matches!(self.cty(e)?, Type::Array(ref t, _) if matches!(**t, Type::Exists(_)));
        self.coarsen_scalars = !matches!(self.cty(xs)?, Type::Array(ref t, _) if matches!(**t, Type::Vector(..)));
        self.emit_loop(e, kind, &n, |g, i| {
            match (&rows, &xv) {
                (Some((data, lens)), _) => {
                    let Some(x) = g.info.unpacks.get(&Binder::Param(f, 0)).cloned() else {
                        return Err(g.err(f, "internal: row parameter without unpack"));
                    };
                    let c = g.fresh(&x);
                    let len = match lens.read(std::slice::from_ref(&i)).map_err(|m| g.err(xs, m.0))? {
                        Read::Expr(l) => l,
                        Read::Tuple(_) => return Err(g.err(xs, "internal: lengths")),
                    };
                    g.push(Stmt::decl(CType::INT, &c, text(&len)));
                    let c = c.to_string();
                    let Type::Array(_, _) = g.cty(xs)? else {
                        return Err(g.err(xs, "internal: rows"));
                    };
                    let cap = match &**data {
                        View::Mem { dims, .. } if dims.len() >= 2 => dims[1].clone(),
                        _ => g.capacity_len_rows(xs).unwrap_or_else(|_| ArithExpr::cst(1)),
                    };
                    g.caps.insert(c.clone(), cap.clone());
                    g.lengths.insert(
                        x,
                        ArithExpr::var(&c, Range::new(ArithExpr::cst(0), Some(cap.add(&ArithExpr::cst(1))))),
                    );
                    g.bind(params[0], Bound::View(data.access(i.clone())));
                }
                (None, Some(xv)) => {
                    if let Some(x) = g.info.unpacks.get(&Binder::Param(f, 0)).cloned() {
                        return Err(g.err(f, format!("internal: unpacking parameter {x} of a view")));
                    }
                    let elem = xv.access(i.clone());
                    g.bind(params[0], Bound::View(elem));
                }
                (None, None) => unreachable!("one of rows or value is set"),
            }
            let d = Dest {
                view: dest.view.access(i.clone()),
                len: if elem_exist {
                    dest.len.as_ref().map(|l| l.access(i.clone()))
                } else {
                    None
                },
                rows: false,
            };
            g.gen_into(body, &d)
        })?;
        if matches!(kind, MapKind::Lcl(_)) && level == Level::Group {
            let fence = self.fence_of(&dest.view);
            self.push(Stmt::Barrier(fence));
        }
        Ok(())
    }

    fn fence_of(&self, v: &Rc<View>) -> Fence {
        let names = v.buffers();
        let spaces: BTreeSet<AddressSpace> = names
            .iter()
            .filter_map(|n| self.mem.by_name(n))
            .map(|b| b.space)
            .collect();
        match (
            spaces.contains(&AddressSpace::Local),
            spaces.contains(&AddressSpace::Global),
        ) {
            (true, true) => Fence::Both,
            (false, true) => Fence::Global,
            (true | false, false) => Fence::Local,
        }
    }

    fn gen_reduce(&mut self, e: ExprId, f: ExprId, z: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let Expr::Prim {
            prim: Prim::Reduce(kind),
            ..
        } = self.prog.expr(e).clone()
        else {
            unreachable!("called on reduce")
        };
        let (params, body) = self.lambda(f)?;
        let acc_ty = self.cty(z)?;
        if let Type::Array(..) = acc_ty {
            return self.gen_reduce_array(e, kind, &params, body, z, xs, dest);
        }
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        let z0 = self.scalar(z)?;
        let acc = self.declare(&z0, &acc_ty, "acc")?;
        let loop_kind = match kind {
            ReduceKind::SeqUnroll => MapKind::SeqUnroll,
            ReduceKind::Seq | ReduceKind::Plain => MapKind::Seq,
        };
        let acc2 = acc.clone();
        let acc_ty2 = acc_ty.clone();
        let acc_view = read_to_view(acc.clone(), &acc_ty);
        self.emit_loop(e, loop_kind, &n, |g, i| {
            g.bind(params[0], Bound::View(acc_view.clone()));
            g.bind(params[1], Bound::View(xv.access(i)));
            let r = g.scalar(body)?;
            assign(g, &acc2, &r, &acc_ty2)
        })?;
        self.write(&dest.view, &[ArithExpr::cst(0)], &acc, e)
    }

    /// A reduction whose accumulator is an array: the accumulator lives in a buffer (local
    /// memory at work-group level, private memory in a work-item when its size is known, else
    /// global), each step writes the function's result into a second buffer, which is then
    /// copied back. Writing the new accumulator over the old one directly would be wrong for
    /// functions that read other elements than the one they write (e.g. `reverse acc`).
    #[allow(clippy::too_many_arguments)]
    fn gen_reduce_array(
        &mut self,
        e: ExprId,
        kind: ReduceKind,
        params: &[VarId],
        body: ExprId,
        z: ExprId,
        xs: ExprId,
        dest: &Dest,
    ) -> Result<()> {
        let acc_ty = self.capacity_type(&self.cty(z)?, z)?;
        if acc_ty.has_existential() {
            return Err(self.err(z, "a reduction accumulator cannot hold filter results"));
        }
        let level = self.level();
        let constant = dims_of(&acc_ty).0.iter().all(|d| d.as_cst().is_some());
        let space = match level {
            Level::Group => AddressSpace::Local,
            Level::Item if constant => AddressSpace::Private,
            Level::Item | Level::Top => AddressSpace::Global,
        };
        let acc = self.temp_buffer("acc", &acc_ty, space, z)?;
        let next = self.temp_buffer("nxt", &acc_ty, space, e)?;
        let plain = |view: &Rc<View>| Dest {
            view: view.clone(),
            len: None,
            rows: false,
        };
        self.gen_into(z, &plain(&acc))?;
        self.sync_copy(&acc, z)?;
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        let loop_kind = match kind {
            ReduceKind::SeqUnroll => MapKind::SeqUnroll,
            ReduceKind::Seq | ReduceKind::Plain => MapKind::Seq,
        };
        self.emit_loop(e, loop_kind, &n, |g, i| {
            g.bind(params[0], Bound::View(acc.clone()));
            g.bind(params[1], Bound::View(xv.access(i)));
            g.gen_into(body, &plain(&next))?;
            g.sync_copy(&next, body)?;
            g.copy_acc(e, &next, &acc, &acc_ty)?;
            g.sync_copy(&acc, e)
        })?;
        self.copy_acc(e, &acc, &dest.view.access(ArithExpr::cst(0)), &acc_ty)?;
        self.sync_copy(&dest.view, e)
    }

    /// A buffer for a temporary array of type `ty` in `space`, in the current kernel.
    fn temp_buffer(&mut self, hint: &str, ty: &Type, space: AddressSpace, at: ExprId) -> Result<Rc<View>> {
        let loops = self.k.as_ref().map(|k| k.loops.clone()).unwrap_or_default();
        let (b, view) = self
            .alloc(hint, ty, space, &loops, Role::Temp)
            .map_err(|m| self.err(at, m))?;
        let buf = self.mem.buffers[b].clone();
        if let Some(n) = buf.len.as_cst() {
            let ty = self.buffer_ctype(&buf.elem)?;
            let len = if let Type::Vector(_, w) = buf.elem {
                n * i64::from(w)
            } else {
                n
            };
            let decl = |space| Stmt::Decl {
                ty,
                name: self.buf_ident(&buf.name),
                space,
                len: Some(len as usize),
                init: None,
                is_const: false,
            };
            match space {
                AddressSpace::Private => {
                    let d = decl(None);
                    self.push(d)
                }
                AddressSpace::Local => {
                    let d = decl(Some(AddressSpace::Local));
                    self.k.as_mut().expect("in kernel").decls.push(d)
                }
                AddressSpace::Global => {}
            }
        }
        Ok(view)
    }

    /// At work-group level, a barrier after writes to `v` that other work-items may read.
    fn sync_copy(&mut self, v: &Rc<View>, _at: ExprId) -> Result<()> {
        if self.level() == Level::Group {
            let barrier = Stmt::Barrier(self.fence_of(v));
            // a `mapLcl` that wrote `v` has just placed the same barrier
            let last = self.k.as_ref().and_then(|k| k.stack.last()?.body.last());
            if last != Some(&barrier) {
                self.push(barrier);
            }
        }
        Ok(())
    }

    /// Copies an array between views: at work-group level the work-items share the copy (the
    /// outer two dimensions over local ids 1 and 0 where the enclosing `mapWrg`s allow it),
    /// inside a work-item sequentially.
    fn copy_acc(&mut self, e: ExprId, src: &Rc<View>, dst: &Rc<View>, ty: &Type) -> Result<()> {
        let (dims, _) = dims_of(ty);
        if self.level() != Level::Group || dims.is_empty() {
            return self.copy_dims(e, src, dst, &dims, vec![], MapKind::Seq);
        }
        let wrg1 = self.k.as_ref().is_some_and(|k| k.active.contains(&MapKind::Wrg(1)));
        if dims.len() >= 2 && wrg1 {
            let (d0, d1, rest) = (dims[0].clone(), dims[1].clone(), dims[2..].to_vec());
            return self.emit_loop(e, MapKind::Lcl(1), &d0, |g, i| {
                g.emit_loop(e, MapKind::Lcl(0), &d1, |g, j| {
                    g.copy_dims(e, src, dst, &rest, vec![i.clone(), j], MapKind::Seq)
                })
            });
        }
        let (d0, rest) = (dims[0].clone(), dims[1..].to_vec());
        self.emit_loop(e, MapKind::Lcl(0), &d0, |g, i| {
            g.copy_dims(e, src, dst, &rest, vec![i], MapKind::Seq)
        })
    }

    fn gen_filter_seq(&mut self, e: ExprId, p: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let (params, body) = self.lambda(p)?;
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        let len = dest
            .len
            .clone()
            .ok_or_else(|| self.err(e, "internal: filter without a length destination"))?;
        let cnt = self.fresh("cnt");
        self.push(Stmt::decl(CType::INT, &cnt, CExpr::Int(0)));
        let c = ArithExpr::var(cnt.as_str(), Range::upto(n.clone()));
        self.emit_loop(e, MapKind::Seq, &n, |g, i| {
            let x = xv.access(i);
            g.bind(params[0], Bound::View(x.clone()));
            let cond = match g.scalar(body)? {
                Read::Expr(c) => c,
                Read::Tuple(_) => return Err(g.err(body, "internal: tuple predicate")),
            };
            g.open_if(text(&cond));
            let v = x.read(&[]).map_err(|m| g.err(xs, m.0))?;
            g.write(&dest.view, std::slice::from_ref(&c), &v, e)?;
            g.push(Stmt::Assign {
                lhs: CExpr::var(&cnt),
                op: AssignOp::Add,
                rhs: CExpr::Int(1),
            });
            g.close();
            Ok(())
        })?;
        let loc = len.write(&[]).map_err(|m| self.err(e, m.0))?;
        self.store(&loc, &Read::Expr(cnt.to_string()), e)
    }

    /// `iterate #k f xs`, unrolled: step `s` reads the previous step's buffer and writes a new
    /// one (the last step writes the destination), each step typed with its own length.
    fn gen_iterate(&mut self, _e: ExprId, k: &ArithExpr, f: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let (params, body) = self.lambda(f)?;
        let steps = k.as_cst().unwrap_or(0);
        if steps > typeck::MAX_ITERATE {
            return Err(self.err(
                _e,
                format!(
                    "`iterate` is unrolled in generated code and limited to {} steps",
                    typeck::MAX_ITERATE
                ),
            ));
        }
        let lname = self.iter_var_of(f)?;
        let mut cur = self.value(xs)?;
        let mut len = self.len_of(xs)?;
        if steps == 0 {
            return self.gen_copy(xs, dest);
        }
        // Two buffers alternate: step `s` writes the one step `s-2` wrote, which is at least as
        // large whenever the function does not grow its input (checked on the sizes).
        let mut bufs: Vec<(Rc<View>, ArithExpr)> = vec![];
        for s in 0..steps {
            self.lengths.insert(lname.clone(), len.clone());
            self.bind(params[0], Bound::View(cur.clone()));
            if s + 1 == steps {
                self.gen_into(body, dest)?;
            } else {
                let out_ty = self.cty(body)?;
                let (dims, _) = dims_of(&out_ty);
                let need = dims.iter().fold(ArithExpr::cst(1), |a, d| a.mul(d));
                let reuse = (s >= 2)
                    .then(|| bufs[(s % 2) as usize].clone())
                    .filter(|(_, have)| need.prove_le(have));
                match reuse {
                    Some((view, _)) => {
                        self.gen_into(
                            body,
                            &Dest {
                                view: view.clone(),
                                len: None,
                                rows: false,
                            },
                        )?;
                        cur = view;
                    }
                    None => {
                        cur = self.materialize(body, None)?;
                        if s < 2 {
                            bufs.push((cur.clone(), need));
                        }
                    }
                }
            }
            len = self.len_of(body)?;
        }
        Ok(())
    }

    fn iter_var_of(&self, f: ExprId) -> Result<String> {
        match self.info.ty(f) {
            Type::Fun(ps, _) => match &ps[0] {
                Type::Array(_, l) => l
                    .free_vars()
                    .into_iter()
                    .find(|v| v.starts_with('L'))
                    .ok_or_else(|| self.err(f, "internal: iterate length")),
                _ => Err(self.err(f, "internal: iterate parameter")),
            },
            _ => Err(self.err(f, "internal: iterate function type")),
        }
    }

    // ---- scalar expressions ----

    /// The value of a scalar, vector or tuple expression, as C text (see `scalar_val`).
    fn scalar(&mut self, e: ExprId) -> Result<Read> {
        Ok(self.scalar_val(e)?.into_read())
    }

    /// The value of a scalar, vector or tuple expression as expression trees (one per tuple
    /// component). Statements it needs (bounds checks, bindings) are emitted before it.
    fn scalar_val(&mut self, e: ExprId) -> Result<Val> {
        match self.prog.expr(e).clone() {
            Expr::Var(_) | Expr::Prim { .. } => {
                let v = self.value(e)?;
                Ok(Val::from_read(v.read(&[]).map_err(|m| self.err(e, m.0))?))
            }
            Expr::Lit(l) => Ok(Val::E(match l {
                Lit::Float(f) => CExpr::Float(f),
                Lit::Double(d) => {
                    self.needs_fp64 = true;
                    CExpr::Double(d)
                }
                Lit::Int(i) => CExpr::Int(i.into()),
                Lit::Bool(b) => CExpr::Int(i64::from(b)),
            })),
            Expr::If { cond, then, els } => {
                let c = self.scalar_expr(cond)?;
                let a = self.scalar_val(then)?;
                let b = self.scalar_val(els)?;
                Ok(select(&c, a, b))
            }
            Expr::Let { var, value, body, .. } => {
                self.kernel_bind(e, var, value)?;
                self.scalar_val(body)
            }
            Expr::Pack(_) | Expr::Lambda { .. } => Err(self.err(e, "internal: not a scalar")),
            Expr::Op { op, args } => {
                let v = self.op(e, op, &args)?;
                self.bound_depth(e, v)
            }
        }
    }

    /// Binds an expression nested deeper than `MAX_DEPTH` to a `const` private variable, so
    /// generated expressions stay within what OpenCL compilers accept (clang refuses more than
    /// 256 nested brackets).
    fn bound_depth(&mut self, e: ExprId, v: Val) -> Result<Val> {
        match v {
            Val::E(x) if x.depth() > MAX_DEPTH && self.k.is_some() => {
                let t = self.cty(e)?;
                let ty = self.ctype(&t)?;
                let name = self.names.fresh("v_t");
                self.push(Stmt::Decl {
                    ty,
                    name: name.clone(),
                    space: None,
                    len: None,
                    init: Some(x),
                    is_const: true,
                });
                Ok(Val::E(CExpr::Var(name)))
            }
            v => Ok(v),
        }
    }

    fn scalar_expr(&mut self, e: ExprId) -> Result<CExpr> {
        match self.scalar_val(e)? {
            Val::E(s) => Ok(s),
            Val::T(_) => Err(self.err(e, "expected a scalar, found a tuple")),
        }
    }

    /// `x` as an expression that may be repeated: itself when it is a variable, else a fresh
    /// private variable holding it (a vector read from memory is loaded once).
    fn shareable(&mut self, x: CExpr, t: &Type) -> Result<CExpr> {
        match x {
            CExpr::Var(_) => Ok(x),
            CExpr::Text(t) if t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => Ok(CExpr::Text(t)),
            x => {
                let ty = self.ctype(t)?;
                let name = self.names.fresh("v_v");
                self.push(Stmt::decl(ty, &name, x));
                Ok(CExpr::Var(name))
            }
        }
    }

    fn op(&mut self, e: ExprId, op: Op, args: &[ExprId]) -> Result<Val> {
        let t0 = self.info.ty(args[0]).clone();
        let float = matches!(t0.scalar(), Some(Scalar::Float | Scalar::Double));
        match op {
            Op::Tuple => {
                let rs = args.iter().map(|a| self.scalar_val(*a)).collect::<Result<Vec<_>>>()?;
                return Ok(Val::T(rs));
            }
            Op::Get(i) => {
                return match self.prog.expr(args[0]) {
                    Expr::Var(_) | Expr::Prim { .. } => {
                        let v = self.value(args[0])?.component(i as usize);
                        Ok(Val::from_read(v.read(&[]).map_err(|m| self.err(e, m.0))?))
                    }
                    _ => match self.scalar_val(args[0])? {
                        Val::T(mut rs) if (i as usize) < rs.len() => Ok(rs.swap_remove(i as usize)),
                        Val::T(_) => Err(self.err(e, "internal: get out of range")),
                        Val::E(s) => Ok(Val::E(s.component(i as usize))),
                    },
                };
            }
            Op::At => {
                let xs = self.value(args[1])?;
                let n = self.len_of(args[1])?;
                let i = self.scalar_expr(args[0])?;
                let v = self.fresh("idx");
                let site = self.checks.len() + 1;
                self.checks.push(self.prog.span(e));
                self.push(Stmt::decl(CType::INT, &v, i));
                let out = CExpr::bin(
                    BinOp::Or,
                    CExpr::bin(BinOp::Lt, CExpr::var(&v), CExpr::Int(0)),
                    CExpr::bin(BinOp::Ge, CExpr::var(&v), arith(&n)),
                );
                self.open_if(out);
                let flag = CExpr::var(&self.error_flag);
                self.push(Stmt::Call(CExpr::call(
                    "atomic_max",
                    vec![flag, CExpr::Int(site as i64)],
                )));
                self.push(Stmt::assign(CExpr::var(&v), CExpr::Int(0)));
                self.close();
                let idx = ArithExpr::var(v.as_str(), Range::upto(n));
                return Ok(Val::from_read(xs.read(&[idx]).map_err(|m| self.err(e, m.0))?));
            }
            Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Div
            | Op::Rem
            | Op::Lt
            | Op::Le
            | Op::Gt
            | Op::Ge
            | Op::Eq
            | Op::Ne
            | Op::And
            | Op::Or
            | Op::Not
            | Op::Neg
            | Op::Min
            | Op::Max
            | Op::Abs
            | Op::Sqrt
            | Op::Exp
            | Op::Log
            | Op::Sin
            | Op::Cos
            | Op::Pow
            | Op::Fma
            | Op::ToFloat
            | Op::ToInt
            | Op::ToDouble
            | Op::Dot
            | Op::Length
            | Op::MakeVec
            | Op::VGet(_) => {}
        }
        let mut a = args.iter().map(|x| self.scalar_expr(*x)).collect::<Result<Vec<_>>>()?;
        let bin = |o: BinOp, a: &mut Vec<CExpr>| {
            let y = a.pop().expect("two operands");
            let x = a.pop().expect("two operands");
            CExpr::bin(o, x, y)
        };
        let call = |f: &'static str, a: Vec<CExpr>| CExpr::call(f, a);
        let rt = self.cty(e)?;
        Ok(Val::E(match op {
            Op::Add => bin(BinOp::Add, &mut a),
            Op::Sub => bin(BinOp::Sub, &mut a),
            Op::Mul => bin(BinOp::Mul, &mut a),
            Op::Div => bin(BinOp::Div, &mut a),
            Op::Rem if float => call("fmod", a),
            Op::Rem => bin(BinOp::Rem, &mut a),
            Op::Lt => bin(BinOp::Lt, &mut a),
            Op::Le => bin(BinOp::Le, &mut a),
            Op::Gt => bin(BinOp::Gt, &mut a),
            Op::Ge => bin(BinOp::Ge, &mut a),
            Op::Eq => bin(BinOp::Eq, &mut a),
            Op::Ne => bin(BinOp::Ne, &mut a),
            Op::And => bin(BinOp::And, &mut a),
            Op::Or => bin(BinOp::Or, &mut a),
            Op::Not => CExpr::un(UnOp::Not, a.swap_remove(0)),
            Op::Neg => CExpr::un(UnOp::Neg, a.swap_remove(0)),
            Op::Min if float => call("fmin", a),
            Op::Max if float => call("fmax", a),
            Op::Min => call("min", a),
            Op::Max => call("max", a),
            Op::Abs if float => call("fabs", a),
            // `abs` of an int is an unsigned int in OpenCL C
            Op::Abs => CExpr::cast(CType::INT, call("abs", a)),
            Op::Sqrt => call("sqrt", a),
            Op::Exp => call("exp", a),
            Op::Log => call("log", a),
            Op::Sin => call("sin", a),
            Op::Cos => call("cos", a),
            Op::Pow => call("pow", a),
            Op::Fma => call("fma", a),
            Op::ToFloat => CExpr::cast(CType::FLOAT, a.swap_remove(0)),
            Op::ToInt => CExpr::cast(CType::INT, a.swap_remove(0)),
            Op::ToDouble => {
                self.needs_fp64 = true;
                CExpr::cast(CType::Scalar(ast::Scalar::Double), a.swap_remove(0))
            }
            Op::Dot | Op::Length => {
                let w = match &t0 {
                    Type::Vector(_, w) => *w,
                    _ => 1,
                };
                if w <= 4 {
                    call(if op == Op::Dot { "dot" } else { "length" }, a)
                } else {
                    // OpenCL has `dot` and `length` only up to 4 lanes: sum the lane products.
                    let mut xs = vec![];
                    for x in a {
                        xs.push(self.shareable(x, &t0)?);
                    }
                    let (x, y) = (xs[0].clone(), xs.get(1).cloned().unwrap_or_else(|| xs[0].clone()));
                    let sum = (0..u32::from(w))
                        .map(|k| CExpr::bin(BinOp::Mul, x.clone().lane(k), y.clone().lane(k)))
                        .reduce(|s, p| CExpr::bin(BinOp::Add, s, p))
                        .expect("at least one lane");
                    if op == Op::Dot {
                        sum
                    } else {
                        call("sqrt", vec![sum])
                    }
                }
            }
            Op::MakeVec => CExpr::VecLit(self.ctype(&rt)?, a),
            Op::VGet(i) => a.swap_remove(0).lane(u32::from(i)),
            Op::Tuple | Op::Get(_) | Op::At => unreachable!("handled above"),
        }))
    }
}

impl KernelCx {
    fn new(level: Level) -> KernelCx {
        KernelCx {
            stack: vec![Frame {
                head: Head::Root,
                body: vec![],
            }],
            emitted: 0,
            decls: vec![],
            global: [None, None, None],
            local: [None, None, None],
            wrg: false,
            glb: false,
            loops: vec![],
            level,
            active: vec![],
        }
    }
}

fn assign(g: &mut Gen, acc: &Read, v: &Read, ty: &Type) -> Result<()> {
    match (acc, v) {
        (Read::Expr(a), Read::Expr(x)) => g.push(Stmt::assign(text(a), text(x))),
        (Read::Tuple(a), _) => {
            // Compute every component before assigning any: they may read the accumulator.
            let Type::Tuple(ts) = ty else {
                return Err(Diagnostic::new(Span::default(), "internal: tuple accumulator type"));
            };
            let x: Vec<Read> = match v {
                Read::Tuple(x) => x.clone(),
                Read::Expr(x) => (0..ts.len()).map(|i| Read::Expr(format!("{x}.c{i}"))).collect(),
            };
            let tmps = x
                .iter()
                .zip(ts)
                .map(|(xv, t)| g.declare(xv, t, "t"))
                .collect::<Result<Vec<_>>>()?;
            for ((a, t), ty) in a.iter().zip(&tmps).zip(ts) {
                assign(g, a, t, ty)?;
            }
        }
        (Read::Expr(a), Read::Tuple(x)) => {
            let Type::Tuple(ts) = ty else {
                return Err(Diagnostic::new(Span::default(), "internal: tuple accumulator type"));
            };
            for ((i, xv), t) in x.iter().enumerate().zip(ts) {
                assign(g, &Read::Expr(format!("{a}.c{i}")), xv, t)?;
            }
        }
    }
    Ok(())
}

/// A scalar, vector or tuple value as expression trees, one per tuple component.
#[derive(Clone, Debug)]
enum Val {
    E(CExpr),
    T(Vec<Val>),
}

impl Val {
    /// A value read through a view: its C text is one operand.
    fn from_read(r: Read) -> Val {
        match r {
            Read::Expr(s) => Val::E(CExpr::Text(s)),
            Read::Tuple(rs) => Val::T(rs.into_iter().map(Val::from_read).collect()),
        }
    }

    /// The value as C text that is safe to paste as an operand.
    fn into_read(self) -> Read {
        match self {
            Val::E(e) => Read::Expr(print::atom(&e)),
            Val::T(vs) => Read::Tuple(vs.into_iter().map(Val::into_read).collect()),
        }
    }
}

fn select(c: &CExpr, a: Val, b: Val) -> Val {
    match (a, b) {
        (Val::T(a), Val::T(b)) => Val::T(a.into_iter().zip(b).map(|(x, y)| select(c, x, y)).collect()),
        (Val::E(a), Val::E(b)) => Val::E(CExpr::select(c.clone(), a, b)),
        (Val::T(a), Val::E(b)) => Val::T(
            a.into_iter()
                .enumerate()
                .map(|(i, x)| select(c, x, Val::E(b.clone().component(i))))
                .collect(),
        ),
        (Val::E(a), Val::T(b)) => Val::T(
            b.into_iter()
                .enumerate()
                .map(|(i, y)| select(c, Val::E(a.clone().component(i)), y))
                .collect(),
        ),
    }
}

fn read_to_view(r: Read, ty: &Type) -> Rc<View> {
    match (r, ty) {
        (Read::Expr(expr), t) => Rc::new(View::Value { expr, ty: t.clone() }),
        (Read::Tuple(rs), Type::Tuple(ts)) => Rc::new(View::Tuple(
            rs.into_iter().zip(ts).map(|(r, t)| read_to_view(r, t)).collect(),
        )),
        (Read::Tuple(rs), t) => Rc::new(View::Tuple(rs.into_iter().map(|r| read_to_view(r, t)).collect())),
    }
}

fn exist_elem_as_array(elem: &Type, cap: ArithExpr) -> Type {
    match elem {
        Type::Exists(e) => Type::array((**e).clone(), cap),
        t => t.clone(),
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

/// A private array indexed only by constants (the accesses of unrolled loops) becomes one
/// scalar variable per element, so it lives in registers: `float a[2]; a[0] = x;` turns into
/// `float a_0, a_1; a_0 = x;`. Arrays with any computed index stay arrays.
fn scalarize(text: &str, name: &str) -> String {
    let pat = format!("{name}[");
    let mut decl = None;
    let mut uses = vec![];
    let mut start = 0;
    while let Some(pos) = text[start..].find(&pat) {
        let at = start + pos;
        start = at + pat.len();
        let word_start = at == 0 || !text.as_bytes()[at - 1].is_ascii_alphanumeric() && text.as_bytes()[at - 1] != b'_';
        if !word_start {
            continue;
        }
        let Some(close) = text[start..].find(']') else {
            return text.to_string();
        };
        let inner = &text[start..start + close];
        if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_digit()) {
            return text.to_string();
        }
        let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
        let after = &text[start + close + 1..];
        // The declaration is the only occurrence followed directly by `;` after a type name.
        if after.starts_with(';') && text[line_start..at].split_whitespace().count() == 1 && decl.is_none() {
            decl = Some((line_start, at, start + close + 2, inner.parse::<usize>().unwrap_or(0)));
        } else {
            uses.push((at, start + close + 1, inner.to_string()));
        }
    }
    let Some((line_start, at, end, n)) = decl else {
        return text.to_string();
    };
    if n == 0 || n > 64 {
        return text.to_string();
    }
    let ty = text[line_start..at].trim();
    let vars: Vec<String> = (0..n).map(|k| format!("{name}_{k}")).collect();
    let mut out = String::new();
    let mut last = 0;
    let mut edits: Vec<(usize, usize, String)> = uses
        .into_iter()
        .map(|(a, b, i)| (a, b, format!("{name}_{i}")))
        .collect();
    let indent = &text[line_start..line_start + (text[line_start..].len() - text[line_start..].trim_start().len())];
    edits.push((line_start, end, format!("{indent}{ty} {};", vars.join(", "))));
    edits.sort();
    for (a, b, rep) in edits {
        out.push_str(&text[last..a]);
        out.push_str(&rep);
        last = b;
    }
    out.push_str(&text[last..]);
    out
}

fn dim_suffix(d: usize) -> String {
    if d == 0 {
        String::new()
    } else {
        d.to_string()
    }
}

fn ast_scalar(s: Scalar) -> ast::Scalar {
    match s {
        Scalar::Float => ast::Scalar::Float,
        Scalar::Double => ast::Scalar::Double,
        // `bool` is stored and computed as `int`
        Scalar::Int | Scalar::Bool => ast::Scalar::Int,
    }
}

/// An index or length at C level: the one conversion of `ArithExpr` into the tree (its text is
/// fully parenthesized, so it is one operand).
fn arith(e: &ArithExpr) -> CExpr {
    CExpr::Text(e.to_string())
}

/// C text from `views` as one operand.
fn text(s: &str) -> CExpr {
    CExpr::Text(s.to_string())
}
