//! Several devices for one program (issue 14, NUDA's `nudevs`): the outermost parallel map of a
//! program is split into contiguous slices of its index range, one per device, each computed in
//! its own host thread with its own OpenCL context and queue (`--devices 0:0,0:0` opens two
//! contexts on one device).
//!
//! The split is decided on the program as given, before any lowering, from how each parameter
//! reaches the outermost map: a parameter that *is* the map's input (or one operand of the
//! `zip` it reads) is read at the map's index and is sliced along its outer dimension; every
//! other parameter is read whole by each iteration (mm's second operand) and is copied whole to
//! every device; a map over layouts of inputs (`slide`, `pad`, `split`, `transpose`, nested, each
//! operand of a `zip` its own) takes the rows or columns its slice of windows or chunks reads
//! ([`Take`]). Each device then compiles
//! and runs the *slice program*: the given program with the sliced parameters' outer length
//! replaced by a fresh size variable, so that the usual pipeline (tuning cache, rewrite,
//! validate, codegen) chooses the variant for the slice and device at hand. The slices follow
//! each device's estimated speed ([`shares`]). The parts are gathered in order:
//!
//! - a map (under any number of `join`s) or a filter: the parts are concatenated (a filter's
//!   parts are existential arrays; their lengths are the parts' lengths);
//! - `reduce op init xs` whose `init` is the identity of `op` (`+` with 0, `*` with 1): one
//!   partial per device, combined by the same reduction on the host;
//! - `let parts = P in F` whose `P` splits into concatenated parts (a lowered reduction's
//!   per-group partial results): each device computes its slice of `P`, and `F` (the final
//!   group) runs on the host on the gathered partials;
//! - anything else runs whole on the first device, and the plan says why.

use crate::data::Inputs;
use crate::{Error, Options, RunResult};
use ir::interp::Value;
use ir::{Expr, ExprId, Lit, Op, Param, Prim, Program, Type};
use std::collections::BTreeMap;
use std::ops::Range;

/// How the parts of the devices are put together.
#[derive(Clone, Debug, PartialEq)]
pub enum Gather {
    /// The parts are consecutive pieces of the result (a map, a join of one, a filter).
    Concat,
    /// One partial result per device (each an array of one element), reduced on the host by
    /// this program (`(lift (P) ([T]P) (lambda (ps) (reduce op init ps)))`).
    Reduce { combine: String },
    /// The parts are consecutive pieces of a `let`-bound value `name` (a lowered reduction's
    /// per-group partial results); `rest`, the given program with `name` as its last
    /// parameter (the final group), makes the result from them on the host.
    Finish { rest: String, name: String },
}

/// What one parameter of a slice program takes from the given program's inputs, for the
/// slice `lo..hi` of the split range.
#[derive(Clone, Debug, PartialEq)]
pub enum Take {
    /// The given parameter whole.
    Whole(usize),
    /// The given parameter `param` or, with `pre`, the array this one-parameter program (a
    /// layout of it: pads, splits, ...) makes of it on the host first, cut along dimension `dim`
    /// (0: its rows; 1: the columns of each row, under a `transpose`): windows `lo..hi` of
    /// `window = (size, step)` read its elements `lo*step .. (hi-1)*step + size` (`(1, 1)`:
    /// `lo..hi`; a `slide`'s slices carry their halo, the `size - step` elements each shares
    /// with the next; `split #k` is windows of k every k).
    Cut {
        param: usize,
        dim: usize,
        window: (usize, usize),
        pre: Option<String>,
    },
}

/// How a program is spread over several devices.
#[derive(Clone, Debug)]
pub struct Split {
    /// The split dimension as the plan shows it, and the fresh size variable of a slice: the
    /// number of the outermost map's elements it computes.
    pub size: String,
    pub part: String,
    /// The length of the split dimension (the outermost map's length), in the program's sizes.
    pub count: arith::ArithExpr,
    /// The slice program's source text.
    pub slice_src: String,
    /// For each parameter of the slice program: what it takes.
    pub params: Vec<Take>,
    /// The given program's parameter names: sliced, and copied whole.
    pub sliced: Vec<String>,
    pub whole: Vec<String>,
    /// How the sliced inputs are cut, for the plan (empty: by rows).
    pub notes: Vec<String>,
    pub gather: Gather,
}

/// The decision for a program: split, or run whole on the first device (with the reason).
#[derive(Clone, Debug)]
pub enum Decision {
    Split(Split),
    Whole(String),
}

/// `--devices`: `gpus` (every GPU), `all` (every device) or comma-separated `P:D` ids / name
/// parts, as `lift devices` lists them. The same device may be named twice (two contexts).
pub fn resolve(spec: &str) -> Result<Vec<String>, Error> {
    let spec = spec.trim();
    let pick = |want_gpu: bool| -> Result<Vec<String>, Error> {
        let devs = host_runner::devices().map_err(|e| Error::plain(format!("--devices {spec}: {e}")))?;
        let ids: Vec<String> = devs
            .iter()
            .filter(|d| !want_gpu || d.kind == host_runner::DeviceKind::Gpu)
            .map(|d| d.id.clone())
            .collect();
        if ids.is_empty() {
            return Err(Error::plain(format!(
                "--devices {spec}: no {} found (see `lift devices`)",
                if want_gpu { "GPU" } else { "OpenCL device" }
            )));
        }
        Ok(ids)
    };
    match spec {
        "gpus" => pick(true),
        "all" => pick(false),
        _ => {
            let ids: Vec<String> = spec.split(',').map(|s| s.trim().to_string()).collect();
            if ids.iter().any(String::is_empty) {
                return Err(Error::plain(format!(
                    "--devices {spec}: expected `gpus`, `all` or comma-separated devices such as 0:0,0:1"
                )));
            }
            Ok(ids)
        }
    }
}

/// The contiguous slices of `0..n` in proportion to `weights` (one per device; a device whose
/// share rounds to nothing gets an empty range). Rounding follows the running sum, so the
/// slices always cover `0..n` exactly.
pub fn slices(n: usize, weights: &[f64]) -> Vec<Range<usize>> {
    let total: f64 = weights.iter().map(|w| w.max(0.0)).sum();
    let mut out = Vec::with_capacity(weights.len());
    let mut acc = 0.0;
    let mut lo = 0;
    for (i, w) in weights.iter().enumerate() {
        acc += w.max(0.0);
        let hi = if i + 1 == weights.len() || total <= 0.0 {
            if total <= 0.0 && i + 1 < weights.len() {
                lo
            } else {
                n
            }
        } else {
            ((acc / total) * n as f64).round().clamp(lo as f64, n as f64) as usize
        };
        out.push(lo..hi);
        lo = hi;
    }
    out
}

/// Decides how `prog` (as given, typed by `info`) is split over devices.
pub fn decide(prog: &Program, info: &typeck::TypeInfo) -> Decision {
    match find_split(prog, info) {
        Ok(s) => Decision::Split(s),
        Err(why) => Decision::Whole(why),
    }
}

fn find_split(prog: &Program, info: &typeck::TypeInfo) -> Result<Split, String> {
    match split_top(prog, info) {
        Ok(s) => Ok(s),
        // A reduction lowered by hand or by the rewrite (`let parts = <per-group partials> in
        // <final group>`): the partials split, the final combination runs on the host.
        Err(why) => combine_at_end(prog, info).ok_or(why),
    }
}

fn split_top(prog: &Program, info: &typeck::TypeInfo) -> Result<Split, String> {
    if prog.params.is_empty() {
        return Err("the program has no input to split".into());
    }
    // `join` and `toX` commute with concatenation: parts of the map below them are parts of
    // the result. A `let` above the map (K-normal form binds a filter that way) is looked
    // through; its value is sliced with the map only when the map's input is its one use.
    let mut top = prog.body;
    let mut joined = false;
    let mut lets: BTreeMap<ir::VarId, ExprId> = BTreeMap::new();
    loop {
        match prog.expr(top) {
            Expr::Prim {
                prim: prim @ (Prim::Join | Prim::To(_)),
                args,
            } => {
                joined |= *prim == Prim::Join;
                top = args[0];
            }
            Expr::Let { var, value, body, .. } => {
                lets.insert(*var, *value);
                top = *body;
            }
            _ => break,
        }
    }
    let (input, gather) = match prog.expr(top) {
        Expr::Prim {
            prim: Prim::Map(ir::MapKind::Plain | ir::MapKind::Glb(_) | ir::MapKind::Wrg(_)),
            args,
        } => (args[1], Gather::Concat),
        Expr::Prim {
            prim: Prim::Filter(ir::FilterKind::Plain | ir::FilterKind::Glb),
            args,
        } => (args[1], Gather::Concat),
        Expr::Prim {
            prim: Prim::Reduce(ir::ReduceKind::Plain),
            args,
        } if !joined => {
            if !identity_init(prog, args[0], args[1]) {
                return Err(
                    "the reduction's initial value is not known to be its operator's identity \
                            (+ with 0, * with 1), so partial results per device could not be combined"
                        .into(),
                );
            }
            (args[2], Gather::Reduce { combine: String::new() })
        }
        _ => {
            return Err("the program's outermost primitive is not a map over its inputs \
                        (map, mapGlb, mapWrg), a filter or a reduction"
                .into())
        }
    };
    let mut leaves = vec![];
    cut_leaves(prog, &lets, input, 0, (1, 1), &mut leaves)?;
    let layout = slice_program(prog, info, &leaves)?;
    finish(prog, info, top, gather, layout)
}

/// Where the slice program cuts one input: the expression `root` of the given program, which
/// is parameter `param` or (`pre`) a layout of it made on the host first, is cut along its
/// dimension `dim` (0: rows, 1: the columns of every row), windows `lo..hi` of the split range
/// reading its elements `lo*t .. (hi-1)*t + s` for `window = (s, t)`.
struct Leaf {
    root: ExprId,
    param: usize,
    dim: usize,
    window: (usize, usize),
    pre: bool,
}

/// The cuts of the inputs that the outermost map's input `e` reads, with `e`'s dimension `dim`
/// being cut in windows `window`. Going down: a `zip` passes the cut to each operand; a map or a
/// copy keeps it (element i of `map f x` reads element i of `x`, whatever the windows); a filter
/// keeps a plain cut (its parts concatenate); `slide #s #t` and `split #k` (windows of k every
/// k) of the cut dimension compose with the windows above (windows `(s1, t1)` over a slide
/// `(s2, t2)` read `((s1-1)·t2 + s2, t1·t2)` of its input); `transpose` moves the cut to the
/// other dimension; any other layout of one parameter (pads, a split of the uncut dimension,
/// ...) is made on the host first and cut there.
fn cut_leaves(
    prog: &Program,
    lets: &BTreeMap<ir::VarId, ExprId>,
    e: ExprId,
    dim: usize,
    window: (usize, usize),
    out: &mut Vec<Leaf>,
) -> Result<(), String> {
    let param_of = |v: &ir::VarId| prog.params.iter().position(|p| p.var == *v);
    let windows = |s: &arith::ArithExpr, t: &arith::ArithExpr, what: &str| -> Result<(usize, usize), String> {
        match (
            s.as_cst().and_then(|s| usize::try_from(s).ok()),
            t.as_cst().and_then(|t| usize::try_from(t).ok()),
        ) {
            (Some(s), Some(t)) if s > 0 && t > 0 => Ok(((window.0 - 1) * t + s, window.1 * t)),
            _ => Err(format!(
                "the outermost map reads a `{what}` whose window is not a positive constant"
            )),
        }
    };
    match prog.expr(e) {
        Expr::Var(v) if lets.contains_key(v) => {
            if var_uses(prog, *v) != 1 {
                return Err(format!(
                    "`{}` is both the outermost map's input and read elsewhere",
                    prog.var(*v).name
                ));
            }
            cut_leaves(prog, lets, lets[v], dim, window, out)
        }
        Expr::Var(v) => {
            let param = param_of(v).ok_or("the outermost map's input is not built from the program's parameters")?;
            out.push(Leaf {
                root: e,
                param,
                dim,
                window,
                pre: false,
            });
            Ok(())
        }
        Expr::Prim { prim: Prim::Zip, args } if dim == 0 => args
            .iter()
            .try_for_each(|a| cut_leaves(prog, lets, *a, dim, window, out)),
        Expr::Prim {
            prim: Prim::Map(ir::MapKind::Plain | ir::MapKind::Glb(_) | ir::MapKind::Seq) | Prim::To(_),
            args,
        } if dim == 0 => cut_leaves(prog, lets, *args.last().expect("an array argument"), dim, window, out),
        Expr::Prim {
            prim: Prim::Filter(_),
            args,
        } if dim == 0 && window == (1, 1) => {
            cut_leaves(prog, lets, *args.last().expect("an array argument"), dim, window, out)
        }
        Expr::Prim {
            prim: Prim::Slide(s, t),
            args,
        } if dim == 0 => cut_leaves(prog, lets, args[0], dim, windows(s, t, "slide")?, out),
        Expr::Prim {
            prim: Prim::Split(k),
            args,
        } if dim == 0 => cut_leaves(prog, lets, args[0], dim, windows(k, k, "split")?, out),
        Expr::Prim {
            prim: Prim::Transpose,
            args,
        } if dim < 2 => cut_leaves(prog, lets, args[0], 1 - dim, window, out),
        _ => match layout_param(prog, e) {
            Some(param) => {
                out.push(Leaf {
                    root: e,
                    param,
                    dim,
                    window,
                    pre: true,
                });
                Ok(())
            }
            None => Err(
                "the outermost map's input is not made of the program's parameters by zips, maps, \
                         filters and layouts (slide, split, pad, transpose)"
                    .into(),
            ),
        },
    }
}

/// The one parameter that `e` is a layout of (pads, splits, joins, slides, transposes and
/// literals only), which the host can make before cutting it.
fn layout_param(prog: &Program, e: ExprId) -> Option<usize> {
    let mut param = None;
    let mut work = vec![e];
    while let Some(x) = work.pop() {
        match prog.expr(x) {
            Expr::Var(v) => {
                let k = prog.params.iter().position(|p| p.var == *v)?;
                if param.replace(k).is_some_and(|old| old != k) {
                    return None;
                }
            }
            Expr::Lit(_) => {}
            Expr::Prim {
                prim:
                    Prim::Pad(..) | Prim::PadClamp(..) | Prim::Split(_) | Prim::Join | Prim::Transpose | Prim::Slide(..),
                args,
            } => work.extend(args.iter().copied()),
            _ => return None,
        }
    }
    param
}

/// `t` with the length of its dimension `dim` (0 or 1) replaced by `len`.
fn with_dim(t: &Type, dim: usize, len: arith::ArithExpr) -> Option<Type> {
    match (t, dim) {
        (Type::Array(e, _), 0) => Some(Type::Array(e.clone(), len)),
        (Type::Array(e, n), 1) => Some(Type::Array(Box::new(with_dim(e, 0, len)?), n.clone())),
        _ => None,
    }
}

/// The slice program of the cuts `leaves` of the outermost map's input: each cut is a
/// parameter whose cut dimension has the length its slice of `part` windows reads,
/// `part·t + (s - t)`, so that the map above goes over exactly `part` elements. A parameter
/// read only as plain rows keeps its place (retyped); any other cut is a new parameter, and a
/// given parameter then read nowhere else is dropped.
fn slice_program(prog: &Program, info: &typeck::TypeInfo, leaves: &[Leaf]) -> Result<Layout, String> {
    // The count is the first cut's (a filter's existential length above it is no size).
    let first = leaves.first().ok_or("the outermost map's input reads no parameter")?;
    let dim_len = |t: &Type, dim: usize| match (t, dim) {
        (Type::Array(_, n), 0) => Some(n.clone()),
        (Type::Array(e, _), 1) => match &**e {
            Type::Array(_, n) => Some(n.clone()),
            _ => None,
        },
        _ => None,
    };
    let len = dim_len(info.ty(first.root), first.dim).ok_or("the outermost map's input is not an array")?;
    let (s, t) = (first.window.0 as i64, first.window.1 as i64);
    let count = len.sub(&arith::ArithExpr::cst(s - t)).div(&arith::ArithExpr::cst(t));
    // (named after the split dimension's size variable: `N` for the `N-2` windows of a stencil)
    let base = count
        .free_vars()
        .into_iter()
        .next()
        .or_else(|| leaves.iter().find_map(|l| outer_size(&prog.params[l.param].ty)))
        .unwrap_or_else(|| "N".into());
    let part = fresh_part(prog, &base);
    let part_e = arith::ArithExpr::size_var(&part);
    let mut sp = prog.clone();
    sp.sizes.push(part.clone());
    sp.size_spans.push(ir::Span { start: 0, end: 0 });
    let mut params: Vec<Take> = (0..prog.params.len()).map(Take::Whole).collect();
    let mut sliced: Vec<usize> = vec![];
    for l in leaves {
        if !sliced.contains(&l.param) {
            sliced.push(l.param);
        }
    }
    let plain = |l: &Leaf| !l.pre && l.dim == 0 && l.window == (1, 1);
    let mut in_place = vec![];
    for &k in &sliced {
        let mine: Vec<&Leaf> = leaves.iter().filter(|l| l.param == k).collect();
        if mine.iter().all(|l| plain(l)) && var_uses(prog, prog.params[k].var) == mine.len() {
            sp.params[k].ty = with_outer(&prog.params[k].ty, part_e.clone());
            params[k] = Take::Cut {
                param: k,
                dim: 0,
                window: (1, 1),
                pre: None,
            };
            in_place.push(k);
        }
    }
    let mut notes = vec![];
    let mut named: Vec<usize> = vec![];
    for l in leaves.iter().filter(|l| !in_place.contains(&l.param)) {
        let x = prog.params[l.param].var;
        let xname = prog.var(x).name.clone();
        let (s, t) = (l.window.0 as i64, l.window.1 as i64);
        let len = part_e.mul(&arith::ArithExpr::cst(t)).add(&arith::ArithExpr::cst(s - t));
        let ty = with_dim(info.ty(l.root), l.dim, len)
            .ok_or_else(|| format!("input {xname} is not an array along the dimension the map goes over"))?;
        // (`xspart`, then `xspart2` for a second cut of `xs`)
        let nth = named.iter().filter(|k| **k == l.param).count() + 1;
        named.push(l.param);
        let name = if nth == 1 {
            format!("{xname}part")
        } else {
            format!("{xname}part{nth}")
        };
        let nv = sp.new_var(&name, prog.var(x).span);
        sp.params.push(Param {
            var: nv,
            ty,
            ty_span: prog.params[l.param].ty_span,
        });
        sp.exprs[l.root.index()] = Expr::Var(nv);
        let pre = l.pre.then(|| {
            let param = prog.params[l.param].clone();
            ir::print::program(&ir::host::extract(prog, l.root, vec![param]))
        });
        if l.dim == 1 {
            notes.push(format!(
                "{xname}: the map goes over its columns (`transpose`): each row is cut"
            ));
        }
        if l.window.0 == l.window.1 && l.window.0 > 1 {
            notes.push(format!(
                "{xname}: chunks of {} (`split`): each slice takes whole chunks",
                l.window.0
            ));
        } else if l.window != (1, 1) {
            notes.push(format!(
                "{xname}: windows of {} every {}: each slice carries the {} element(s) it shares with the next (its halo)",
                l.window.0,
                l.window.1,
                l.window.0.saturating_sub(l.window.1)
            ));
        }
        if pre.is_some() {
            notes.push(format!(
                "{xname}: its layout below the cut (pads, splits, ...) is made on the host first and cut there \
                 (only the end slices hold its padding)"
            ));
        }
        params.push(Take::Cut {
            param: l.param,
            dim: l.dim,
            window: l.window,
            pre,
        });
    }
    // A given parameter now read only through its cuts is not needed whole on the devices.
    for k in (0..prog.params.len()).rev() {
        if sliced.contains(&k) && !in_place.contains(&k) && reachable_uses(&sp, prog.params[k].var) == 0 {
            sp.params.remove(k);
            params.remove(k);
        }
    }
    Ok(Layout {
        size: count.as_var().map_or_else(|| count.to_string(), |(n, _)| n.to_string()),
        part,
        count,
        slice: sp,
        params,
        sliced,
        notes,
    })
}

/// `let v = P in F` at the top of `prog` (below `join`s and copies) where `P` splits into
/// parts that concatenate (per-group partial results of a lowered reduction): each device
/// computes its slice of `P`, and `F` (the final group) runs on the host on the gathered `P`.
fn combine_at_end(prog: &Program, info: &typeck::TypeInfo) -> Option<Split> {
    // Only a combination: its result has a constant size (a reduction's one value), so the
    // host's share is small; anything bigger runs whole on a device rather than on the host.
    fn constant(t: &Type) -> bool {
        match t {
            Type::Array(e, n) => n.as_cst().is_some() && constant(e),
            Type::Tuple(ts) => ts.iter().all(constant),
            Type::Scalar(_) | Type::Vector(..) => true,
            Type::Exists(_) | Type::Fun(..) => false,
        }
    }
    if !constant(info.result()) {
        return None;
    }
    let mut e = prog.body;
    let (var, value, body) = loop {
        match prog.expr(e) {
            Expr::Prim {
                prim: Prim::Join | Prim::To(_),
                args,
            } => e = args[0],
            Expr::Let { var, value, body, .. } => break (*var, *value, *body),
            _ => return None,
        }
    };
    let partials = ir::parse(&ir::print::program(&ir::host::extract(
        prog,
        value,
        prog.params.clone(),
    )))
    .ok()?;
    let partials_info = typeck::infer(&partials).ok()?;
    let Decision::Split(mut split) = decide(&partials, &partials_info) else {
        return None;
    };
    if split.gather != Gather::Concat {
        return None;
    }
    let mut rest = prog.clone();
    rest.exprs[e.index()] = prog.expr(body).clone();
    rest.params.push(Param {
        var,
        ty: info.ty(value).clone(),
        ty_span: ir::Span { start: 0, end: 0 },
    });
    split.gather = Gather::Finish {
        rest: ir::print::program(&rest),
        name: prog.var(var).name.clone(),
    };
    Some(split)
}

/// A split before its gather: what [`split_top`] decides.
struct Layout {
    size: String,
    part: String,
    count: arith::ArithExpr,
    slice: Program,
    params: Vec<Take>,
    /// The given parameters that are cut (the others are copied whole).
    sliced: Vec<usize>,
    notes: Vec<String>,
}

fn finish(prog: &Program, info: &typeck::TypeInfo, top: ExprId, gather: Gather, l: Layout) -> Result<Split, String> {
    let gather = match gather {
        Gather::Reduce { .. } => Gather::Reduce {
            combine: combine_program(prog, info, top)?,
        },
        other => other,
    };
    let name_of = |k: usize| prog.var(prog.params[k].var).name.clone();
    Ok(Split {
        size: l.size,
        part: l.part,
        count: l.count,
        slice_src: ir::print::program(&l.slice),
        params: l.params,
        sliced: l.sliced.iter().map(|&k| name_of(k)).collect(),
        whole: (0..prog.params.len())
            .filter(|k| !l.sliced.contains(k))
            .map(name_of)
            .collect(),
        notes: l.notes,
        gather,
    })
}

fn fresh_part(prog: &Program, size: &str) -> String {
    let mut part = format!("{size}part");
    while prog.sizes.contains(&part) {
        part.push('_');
    }
    part
}

fn var_uses(prog: &Program, v: ir::VarId) -> usize {
    prog.exprs
        .iter()
        .filter(|e| matches!(e, Expr::Var(x) if *x == v))
        .count()
}

/// The reads of `v` in what `prog`'s body reaches (its arena may hold replaced nodes).
fn reachable_uses(prog: &Program, v: ir::VarId) -> usize {
    let mut n = 0;
    let mut work = vec![prog.body];
    while let Some(e) = work.pop() {
        if matches!(prog.expr(e), Expr::Var(x) if *x == v) {
            n += 1;
        }
        work.extend(prog.children(e));
    }
    n
}

/// `op` is `+` with init 0 or `*` with init 1 (so any number of partials may each start from
/// init).
fn identity_init(prog: &Program, op: ExprId, init: ExprId) -> bool {
    let Expr::Lambda { params, body } = prog.expr(op) else {
        return false;
    };
    let [a, b] = params.as_slice() else {
        return false;
    };
    let Expr::Op { op, args } = prog.expr(*body) else {
        return false;
    };
    let reads = |x: ExprId, v: ir::VarId| matches!(prog.expr(x), Expr::Var(y) if *y == v);
    let operands_ok =
        args.len() == 2 && ((reads(args[0], *a) && reads(args[1], *b)) || (reads(args[0], *b) && reads(args[1], *a)));
    let lit = match prog.expr(init) {
        Expr::Lit(l) => l,
        _ => return false,
    };
    let is = |x: f64| match lit {
        Lit::Float(f) => f64::from(*f) == x,
        Lit::Double(d) => *d == x,
        Lit::Int(i) => f64::from(*i) == x,
        Lit::Uint(u) => f64::from(*u) == x,
        Lit::Long(l) => *l as f64 == x,
        Lit::Ulong(u) => *u as f64 == x,
        Lit::Bool(_) => false,
    };
    operands_ok
        && match op {
            Op::Add => is(0.0),
            Op::Mul => is(1.0),
            _ => false,
        }
}

/// `(lift (.. P) ((array-type T P)) (lambda (partials) (reduce op init partials)))` for the
/// reduction at `top`, whose result is `[T]1`.
fn combine_program(prog: &Program, info: &typeck::TypeInfo, top: ExprId) -> Result<String, String> {
    let elem = match info.ty(top) {
        Type::Array(t, _) => (**t).clone(),
        other => return Err(format!("internal: a reduction of type {other}")),
    };
    let mut cp = prog.clone();
    let mut p = String::from("P");
    while cp.sizes.contains(&p) {
        p.push('_');
    }
    cp.sizes.push(p.clone());
    cp.size_spans.push(ir::Span { start: 0, end: 0 });
    let v = cp.new_var("partials", ir::Span { start: 0, end: 0 });
    cp.params = vec![Param {
        var: v,
        ty: Type::Array(Box::new(elem), arith::ArithExpr::size_var(&p)),
        ty_span: ir::Span { start: 0, end: 0 },
    }];
    let read = cp.push(Expr::Var(v), ir::Span { start: 0, end: 0 });
    if let Expr::Prim { args, .. } = &mut cp.exprs[top.index()] {
        args[2] = read;
    }
    cp.body = top;
    Ok(ir::print::program(&cp))
}

fn outer_size(t: &Type) -> Option<String> {
    match t {
        Type::Array(_, n) => n.as_var().map(|(name, _)| name.to_string()),
        _ => None,
    }
}

fn with_outer(t: &Type, len: arith::ArithExpr) -> Type {
    match t {
        Type::Array(e, _) => Type::Array(e.clone(), len),
        other => other.clone(),
    }
}

/// The text `--emit plan --devices` prints: the split, then the slice program's kernels.
/// With `sizes` (`N=4096`), each device's share at those sizes and why (the estimates of
/// [`shares`]: cached, or probed on random inputs).
pub fn describe(src: &str, devices: &[String], sizes: &[String]) -> Result<String, Error> {
    let typed = crate::compile(src, &Options::types_only())?;
    let mut out = format!("devices: {}\n", devices.join(", "));
    let inputs = if sizes.is_empty() {
        None
    } else {
        let given: BTreeMap<String, i64> = crate::parse_sizes(sizes)?.into_iter().collect();
        let inputs = crate::data::random_inputs(&typed.given, &given, 42)?;
        crate::verify_checks(&typed.given_info, &inputs)?;
        Some(inputs)
    };
    match decide(&typed.given, &typed.given_info) {
        Decision::Whole(why) => match host_loop_or_why(&typed.given, &typed.given_info) {
            Ok(hl) => {
                out.push_str(&format!(
                    "host loop: {} steps, each split over the devices; the gathered state goes to every \
                     device before the next step\n",
                    hl.steps
                ));
                let step_inputs = inputs.map(|mut ins| {
                    ins.values.push(ins.values[hl.init].clone());
                    ins
                });
                describe_split(&mut out, None, &hl.step, devices, step_inputs.as_ref())?;
            }
            Err(looped) => {
                out.push_str(&format!(
                    "not split: {}; the whole program runs on the first device ({})\n",
                    looped.map_or(why, |w| format!("a host loop whose step is not split ({w})")),
                    devices[0]
                ));
                let first = Options {
                    work_group_limit: smallest_limit(&devices[..1]),
                    ..Options::default()
                };
                out.push_str(&crate::compile(src, &first)?.text(crate::Emit::Plan)?);
            }
        },
        Decision::Split(s) => describe_split(&mut out, Some(src), &s, devices, inputs.as_ref())?,
    }
    Ok(out)
}

fn describe_split(
    out: &mut String,
    given_src: Option<&str>,
    s: &Split,
    devices: &[String],
    inputs: Option<&Inputs>,
) -> Result<(), Error> {
    let n = devices.len();
    out.push_str(&format!(
        "split: {size} into {n} contiguous slices of length {part} (shares: equal for identical \
         devices; else each device's fixed cost and time per element, from the tuning cache or a \
         small probe cached per device and program, decide: the devices that end soonest together, \
         none with less than {min:.0}%)\n",
        size = s.size,
        part = s.part,
        min = 100.0 * MIN_SHARE
    ));
    let shared = match inputs {
        Some(ins) => {
            let len = split_len(s, &ins.sizes)?;
            let sh = shares(given_src, s, ins, devices, len)?;
            Some((slices(len, &sh.weights), sh))
        }
        None => None,
    };
    for (i, d) in devices.iter().enumerate() {
        match &shared {
            Some((ranges, sh)) => out.push_str(&format!(
                "  slice {i}: device {d}, {}..{}: {}\n",
                ranges[i].start, ranges[i].end, sh.why[i]
            )),
            None => out.push_str(&format!(
                "  slice {i}: device {d}, its own host thread, context and queue\n"
            )),
        }
    }
    out.push_str(&format!("sliced by {}: {}\n", s.size, s.sliced.join(", ")));
    for note in &s.notes {
        out.push_str(&format!("  {note}\n"));
    }
    if !s.whole.is_empty() {
        out.push_str(&format!("copied whole to every device: {}\n", s.whole.join(", ")));
    }
    match &s.gather {
        Gather::Concat => out.push_str("gathered: the parts concatenated in slice order\n"),
        Gather::Reduce { .. } => out.push_str("gathered: one partial per device, reduced on the host\n"),
        Gather::Finish { name, .. } => out.push_str(&format!(
            "gathered: the parts of `{name}` (each device's partial results) concatenated in slice order; \
             the rest of the program (the final combination) runs on the host on them\n"
        )),
    }
    out.push_str("each slice runs:\n");
    let limited = Options {
        work_group_limit: smallest_limit(devices),
        ..Options::default()
    };
    let slice = crate::compile(&s.slice_src, &limited)?;
    out.push_str(&slice.text(crate::Emit::Plan)?);
    Ok(())
}

/// What one device did.
struct Part {
    value: Value,
    timing: Option<String>,
}

/// Runs `src` (given program text) on `inputs` over `devices`, with slices in proportion to
/// `weights` (one per device; `None`: equal). Every device's error is reported, first by slice
/// order; no partial result is returned.
pub fn run(
    src: &str,
    inputs: &Inputs,
    devices: &[String],
    weights: Option<&[f64]>,
    time: bool,
) -> Result<RunResult, Error> {
    if devices.is_empty() {
        return Err(Error::plain("--devices: no device given"));
    }
    let typed = crate::compile(src, &Options::types_only())?;
    crate::verify_checks(&typed.given_info, inputs)?;
    let ty = typed.given_info.result().clone();
    let split = match decide(&typed.given, &typed.given_info) {
        Decision::Split(s) => s,
        Decision::Whole(why) => {
            if let Some(hl) = host_loop(&typed.given, &typed.given_info) {
                let (value, timing) = run_host_loop(&hl, inputs, devices, weights, time)?;
                return Ok(result(value, ty, timing));
            }
            let _ = why;
            let part = run_on(src, inputs, &devices[0], time).map_err(|e| on_device(0, &devices[0], e))?;
            return Ok(result(part.value, ty, part.timing));
        }
    };
    let (value, timing) = run_split(src, &split, inputs, devices, weights, time)?;
    Ok(result(value, ty, timing))
}

/// A host loop `iterate K (lambda (s) body) x` (x a parameter) whose body splits over `s`: each
/// step runs split, and its gathered state is the next step's input on every device (n-body:
/// the new positions of every slice go to every device each step).
pub struct HostLoop {
    pub steps: arith::ArithExpr,
    /// The parameter the loop starts from.
    pub init: usize,
    /// The body as a program of the given parameters and the state (last), and its split.
    pub step: Split,
}

/// The host loop at the top of `prog`, when its step splits.
pub fn host_loop(prog: &Program, info: &typeck::TypeInfo) -> Option<HostLoop> {
    host_loop_or_why(prog, info).ok()
}

/// [`host_loop`], or why the program is not such a loop (`None`: it is no host loop at all).
pub fn host_loop_or_why(prog: &Program, info: &typeck::TypeInfo) -> Result<HostLoop, Option<String>> {
    let Expr::Prim {
        prim: Prim::Iterate(k),
        args,
    } = prog.expr(prog.body)
    else {
        return Err(None);
    };
    let Expr::Lambda { params, body } = prog.expr(args[0]) else {
        return Err(Some("the loop's step is not a function of its state".into()));
    };
    let [st] = params.as_slice() else {
        return Err(Some("the loop's step is not a function of its state".into()));
    };
    let Some(init) = (match prog.expr(args[1]) {
        Expr::Var(x) => prog.params.iter().position(|p| p.var == *x),
        _ => None,
    }) else {
        return Err(Some("the loop does not start from an input".into()));
    };
    // The state keeps its type from step to step, so every step is the same program.
    if info.var_ty(*st) != &prog.params[init].ty {
        return Err(Some("the loop's state changes type from step to step".into()));
    }
    let mut sp = prog.clone();
    sp.params.push(Param {
        var: *st,
        ty: prog.params[init].ty.clone(),
        ty_span: prog.params[init].ty_span,
    });
    sp.body = *body;
    let step_prog =
        ir::parse(&ir::print::program(&sp)).map_err(|e| Some(format!("internal: its step: {}", e.message)))?;
    let step_info = typeck::infer(&step_prog).map_err(|e| Some(format!("its step alone: {}", e.message)))?;
    match decide(&step_prog, &step_info) {
        // A reduction's combined partials are the next state as a map's concatenated parts are.
        Decision::Split(step) if matches!(step.gather, Gather::Concat | Gather::Reduce { .. }) => Ok(HostLoop {
            steps: k.clone(),
            init,
            step,
        }),
        Decision::Split(_) => Err(Some(
            "its step ends in a combination on the host (a lowered reduction's final group), which a \
             loop would run every step"
                .into(),
        )),
        Decision::Whole(why) => Err(Some(format!("its step does not split: {why}"))),
    }
}

fn run_host_loop(
    hl: &HostLoop,
    inputs: &Inputs,
    devices: &[String],
    weights: Option<&[f64]>,
    time: bool,
) -> Result<(Value, Option<String>), Error> {
    let k = hl
        .steps
        .eval(&|n| inputs.sizes.get(n).copied())
        .map_err(|e| Error::plain(format!("cannot evaluate the number of steps {}: {e}", hl.steps)))?;
    let mut step_inputs = Inputs {
        values: inputs.values.clone(),
        sizes: inputs.sizes.clone(),
    };
    step_inputs.values.push(inputs.values[hl.init].clone());
    let n = split_len(&hl.step, &step_inputs.sizes)?;
    // Estimated once, on the first state: every step is the same program on the same sizes.
    let chosen = match weights {
        Some(_) => None,
        None => Some(shares(None, &hl.step, &step_inputs, devices, n)?),
    };
    let weights = chosen
        .as_ref()
        .map_or_else(|| weights.unwrap_or(&[]), |c| &c.weights[..]);
    let ranges = slices(n, weights);
    let jobs: Vec<(usize, Range<usize>)> = ranges.into_iter().enumerate().filter(|(_, r)| !r.is_empty()).collect();
    let state_param = inputs.values.len();
    let started = std::time::Instant::now();
    // One thread per device keeps its session, kernels and buffers for every step; the host
    // sends it each new state (the one input that changes) and gets its slice back.
    let state = std::thread::scope(|scope| -> Result<Value, Error> {
        let (part_tx, part_rx) = std::sync::mpsc::channel::<(usize, Result<Value, Error>)>();
        let mut to_workers = vec![];
        for (slot, (i, r)) in jobs.iter().enumerate() {
            let (tx, rx) = std::sync::mpsc::channel::<std::sync::Arc<Value>>();
            to_workers.push(tx);
            let (part_tx, r, device, first) = (part_tx.clone(), r.clone(), &devices[*i], &step_inputs);
            let step = &hl.step;
            let worker = move || {
                let send = |v: Result<Value, Error>| part_tx.send((slot, v)).is_ok();
                let made = slice_inputs(step, first, r.clone()).and_then(|ins| {
                    let c = compile_for(&step.slice_src, &ins, device, None)?;
                    let plan = c
                        .plan
                        .as_ref()
                        .ok_or_else(|| Error::plain("internal: a step without kernels"))?;
                    crate::backend::Resident::new(plan, c.info.result(), &ins, Some(device))
                });
                let mut dev = match made {
                    Ok(d) => d,
                    Err(e) => {
                        send(Err(e));
                        return;
                    }
                };
                if !send(dev.launch()) {
                    return;
                }
                while let Ok(state) = rx.recv() {
                    let given = |k: usize| if k == state_param { &*state } else { &first.values[k] };
                    let set = step.params.iter().enumerate().try_for_each(|(j, t)| match t {
                        Take::Whole(k) if *k == state_param => dev.set(j, &state),
                        Take::Cut { param: k, .. } if *k == state_param => {
                            dev.set(j, &take(t, &given, &first.sizes, &r)?)
                        }
                        _ => Ok(()),
                    });
                    if !send(set.and_then(|()| dev.launch())) {
                        return;
                    }
                }
            };
            std::thread::Builder::new()
                .name(format!("lift-device-{i}"))
                .stack_size(ir::STACK_BYTES)
                .spawn_scoped(scope, worker)
                .map_err(|e| on_device(*i, &devices[*i], Error::plain(format!("cannot start its thread: {e}"))))?;
        }
        drop(part_tx);
        let mut state = Value::Array(vec![]);
        for step in 0..k {
            if step > 0 {
                let shared = std::sync::Arc::new(std::mem::replace(&mut state, Value::Array(vec![])));
                for tx in &to_workers {
                    // A worker that stopped has sent its error, read below.
                    let _ = tx.send(shared.clone());
                }
            }
            let mut parts: Vec<Option<Value>> = vec![None; jobs.len()];
            for _ in 0..jobs.len() {
                let (slot, part) = part_rx
                    .recv()
                    .map_err(|_| Error::plain("internal: a device thread ended without its part"))?;
                let i = jobs[slot].0;
                parts[slot] = Some(part.map_err(|e| on_device(i, &devices[i], e))?);
            }
            state = gather(&hl.step, parts.into_iter().flatten().collect(), &step_inputs)?;
        }
        // Closing the channels ends the workers.
        drop(to_workers);
        Ok(state)
    });
    let state = if k == 0 { inputs.values[hl.init].clone() } else { state? };
    let timing = time.then(|| {
        format!(
            "{}host loop over {} device(s): {k} steps in {:.3} ms (wall, with every exchange)\n",
            shares_text(chosen.as_ref(), devices),
            jobs.len(),
            started.elapsed().as_secs_f64() * 1e3
        )
    });
    Ok((state, timing))
}

/// Runs a split program: one thread per device with a non-empty slice, parts gathered in
/// order; any device's error is the result.
fn run_split(
    given_src: &str,
    split: &Split,
    inputs: &Inputs,
    devices: &[String],
    weights: Option<&[f64]>,
    time: bool,
) -> Result<(Value, Option<String>), Error> {
    let n = split_len(split, &inputs.sizes)?;
    let chosen = match weights {
        Some(_) => None,
        None => Some(shares(Some(given_src), split, inputs, devices, n)?),
    };
    let weights = chosen
        .as_ref()
        .map_or_else(|| weights.unwrap_or(&[]), |c| &c.weights[..]);
    let ranges = slices(n, weights);
    let jobs: Vec<(usize, Range<usize>)> = ranges
        .iter()
        .cloned()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .collect();
    // A device given the whole range runs the program as given on the inputs as read: cutting
    // and copying them for a slice program (mm 4096³: 32 M elements) would be for nothing.
    if let [(i, r)] = &jobs[..] {
        if *r == (0..n) && !forced_failure(*i) {
            let d = &devices[*i];
            let part = run_on(given_src, inputs, d, time).map_err(|e| on_device(*i, d, e))?;
            let timing = time.then(|| {
                format!(
                    "{}device {i} ({d}), the whole range:\n{}",
                    shares_text(chosen.as_ref(), devices),
                    part.timing.clone().unwrap_or_default()
                )
            });
            return Ok((part.value, timing));
        }
    }
    // One compilation per distinct device: the slices of one device (named twice) differ in
    // length only, which the kernels take at run time; the first of them compiles, the others
    // wait for it (a slice whose size checks the shared program fails compiles its own).
    let shared: BTreeMap<&String, std::sync::OnceLock<Result<crate::Compiled, Error>>> = jobs
        .iter()
        .map(|(i, _)| (&devices[*i], std::sync::OnceLock::new()))
        .collect();
    let outcomes: Vec<(usize, Result<Part, Error>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|(i, r)| {
                let (i, r) = (*i, r.clone());
                let split = &split;
                let device = &devices[i];
                let shared = &shared[device];
                let handle = std::thread::Builder::new()
                    .name(format!("lift-device-{i}"))
                    .stack_size(ir::STACK_BYTES)
                    .spawn_scoped(scope, move || -> Result<Part, Error> {
                        let slice_inputs = slice_inputs(split, inputs, r)?;
                        let own;
                        let compiled = match shared
                            .get_or_init(|| compile_for(&split.slice_src, &slice_inputs, device, Some(&split.part)))
                        {
                            Ok(c) if crate::verify_checks(&c.info, &slice_inputs).is_ok() => c,
                            Ok(_) => {
                                own = compile_for(&split.slice_src, &slice_inputs, device, Some(&split.part))?;
                                &own
                            }
                            // (each waiting slice reports the one failure as its own)
                            Err(e) => return Err(Error::plain(e.message())),
                        };
                        if forced_failure(i) {
                            let mut failing = compile_for(&split.slice_src, &slice_inputs, device, Some(&split.part))?;
                            if let Some(plan) = failing.plan.as_mut() {
                                plan.source
                                    .push_str("\n#error \"a failure forced by LIFT_DEVICES_FAIL\"\n");
                            }
                            return run_compiled_on(&failing, &slice_inputs, device, time);
                        }
                        run_compiled_on(compiled, &slice_inputs, device, time)
                    });
                (i, handle)
            })
            .collect();
        handles
            .into_iter()
            .map(|(i, h)| {
                let out = match h {
                    Ok(h) => h
                        .join()
                        .unwrap_or_else(|_| Err(Error::plain("internal error in its thread (a bug)"))),
                    Err(e) => Err(Error::plain(format!("cannot start its thread: {e}"))),
                };
                (i, out)
            })
            .collect()
    });
    let mut parts = vec![];
    let mut failed = vec![];
    for (i, o) in outcomes {
        match o {
            Ok(p) => parts.push((i, p)),
            Err(e) => failed.push(on_device(i, &devices[i], e)),
        }
    }
    if !failed.is_empty() {
        let first = failed.remove(0);
        return Err(match first {
            Error::Plain { message, mut notes } => {
                notes.extend(failed.iter().map(Error::message));
                notes.push("no result: every slice must succeed".into());
                Error::Plain { message, notes }
            }
            other => other,
        });
    }
    let timing = time.then(|| {
        let mut t = shares_text(chosen.as_ref(), devices);
        for (i, p) in &parts {
            t.push_str(&format!(
                "device {i} ({}):\n{}",
                devices[*i],
                p.timing.clone().unwrap_or_default()
            ));
        }
        t
    });
    let value = gather(split, parts.into_iter().map(|(_, p)| p.value).collect(), inputs)?;
    Ok((value, timing))
}

/// `lift run --devices`: loads the inputs as `lift run` does and runs over `devices`.
pub fn run_files(
    src: &str,
    data: &[String],
    sizes: &[String],
    devices: &[String],
    time: bool,
) -> Result<RunResult, Error> {
    let typed = crate::compile(src, &Options::types_only())?;
    let sources = crate::read_sources(data)?;
    let given = crate::parse_sizes(sizes)?;
    let inputs = crate::data::load(&typed.given, &sources, &given)?;
    run(src, &inputs, devices, None, time)
}

/// Each device's share and why (nothing when the shares were given).
fn shares_text(chosen: Option<&Shares>, devices: &[String]) -> String {
    let Some(c) = chosen else { return String::new() };
    devices
        .iter()
        .zip(&c.why)
        .enumerate()
        .map(|(i, (d, why))| format!("share of device {i} ({d}): {why}\n"))
        .collect()
}

/// A device's share of the split range is left out below this fraction of it: a sliver costs
/// its device's fixed costs (build, copies, launch) for next to nothing.
pub const MIN_SHARE: f64 = 0.02;

/// A device whose kernels take less than this for the whole range keeps it: any other device
/// needs about as long to open its context and build its kernels (PoCL: 0.1–1 s), so it could
/// not end sooner.
pub const MIN_GAIN_MS: f64 = 50.0;

/// Below this kernel time a calibration probe is mostly launch overhead: the probe grows (4×)
/// until its kernels take this long or it reaches 1/8 of the range.
const PROBE_MS: f64 = 2.0;

/// What one device is expected to take: `fixed_ms` whatever its share (building its kernels,
/// copying the inputs it reads whole, launching) plus `ns_per_elem` per element of its share.
#[derive(Clone, Debug)]
pub struct Estimate {
    pub ns_per_elem: f64,
    pub fixed_ms: f64,
    /// Where it comes from: the tuning cache, the calibration cache, or a probe just run.
    pub from: String,
    /// Whether the time per element is measured on kernels long enough to trust (else it is
    /// the first, small probe's: an overestimate of a fast device, mostly launch overhead).
    pub settled: bool,
}

impl Estimate {
    fn ms(&self, elems: f64) -> f64 {
        self.fixed_ms + elems * self.ns_per_elem / 1e6
    }
}

/// How the split range is shared: elements per device (0: nothing) and, per device, why.
#[derive(Clone, Debug)]
pub struct Shares {
    pub weights: Vec<f64>,
    pub why: Vec<String>,
}

/// The shares of `n` elements over `devices`: equal when every device is named the same;
/// otherwise from each device's [`Estimate`] (the tuning cache's time for the given program
/// `given_src` at these sizes, else a calibration cached per device and program, else a probe
/// at a small size, then cached), the devices that finish soonest together: the fastest alone,
/// then each next one while adding it makes the whole end sooner and its share is at least
/// [`MIN_SHARE`]. Shares make the chosen devices end together (`fixed + share × per-element`
/// equal).
pub fn shares(
    given_src: Option<&str>,
    split: &Split,
    inputs: &Inputs,
    devices: &[String],
    n: usize,
) -> Result<Shares, Error> {
    let mut distinct: Vec<&String> = vec![];
    for d in devices {
        if !distinct.contains(&d) {
            distinct.push(d);
        }
    }
    if distinct.len() < 2 || n == 0 {
        return Ok(Shares {
            weights: vec![1.0; devices.len()],
            why: devices
                .iter()
                .map(|_| "an equal share: every device is the same".to_string())
                .collect(),
        });
    }
    // A GPU first: when its kernels for the whole range take less than any other device
    // needs just to build its own (`MIN_GAIN_MS`), no other device can end sooner, and it is
    // not probed at all (mri-q on the H200 beside PoCL: a 1.2 ms kernel, and PoCL's probe,
    // building and opening cost the run 0.4–1.8 s for a device that then got nothing).
    // (every device is looked up, so that one that does not exist is an error even when it
    // would get nothing)
    let mut gpus = vec![];
    for (i, d) in devices.iter().enumerate() {
        let info = host_runner::device_info(Some(d)).map_err(|e| on_device(i, d, Error::plain(e.to_string())))?;
        if info.kind == host_runner::DeviceKind::Gpu {
            gpus.push(d);
        }
    }
    distinct.sort_by_key(|d| !gpus.contains(d));
    let lead = distinct[0];
    let li = devices.iter().position(|d| d == lead).expect("a named device");
    let first_est = estimate(given_src, split, inputs, lead, n, false).map_err(|e| on_device(li, lead, e))?;
    let lead_kernel_ms = n as f64 * first_est.ns_per_elem / 1e6;
    if lead_kernel_ms < MIN_GAIN_MS {
        let mut weights = vec![0.0; devices.len()];
        weights[li] = n as f64;
        let why = devices
            .iter()
            .enumerate()
            .map(|(i, d)| {
                if i == li {
                    format!(
                        "100.0% of the range: ends at {:.1} ms ({:.3} ns per element, {:.1} ms fixed; {})",
                        first_est.ms(n as f64),
                        first_est.ns_per_elem,
                        first_est.fixed_ms,
                        first_est.from
                    )
                } else if d == lead {
                    "nothing: the range goes to the first slice of this device".to_string()
                } else {
                    format!(
                        "nothing, not probed: device {li} ({lead}) takes about {lead_kernel_ms:.1} ms for the whole \
                         range, less than another device needs to build its kernels ({MIN_GAIN_MS:.0} ms)"
                    )
                }
            })
            .collect();
        return Ok(Shares { weights, why });
    }
    // Then one small probe per device: a device that gets nothing even against the fast
    // device's overestimated time per element would get nothing against its true one, and a
    // device that gets everything needs no more precise time. Only devices that share the
    // range are probed further.
    let mut known: BTreeMap<&String, Estimate> = BTreeMap::new();
    known.insert(lead, first_est);
    for (i, d) in devices.iter().enumerate() {
        if !known.contains_key(d) {
            let e = estimate(given_src, split, inputs, d, n, false).map_err(|e| on_device(i, d, e))?;
            known.insert(d, e);
        }
    }
    let est: Vec<Estimate> = devices.iter().map(|d| known[d].clone()).collect();
    let first = choose(n, &est);
    if first.weights.iter().filter(|w| **w > 0.0).count() < 2 {
        return Ok(first);
    }
    let mut settled_any = false;
    for (i, d) in devices.iter().enumerate() {
        if first.weights[i] > 0.0 && !known[d].settled {
            let e = estimate(given_src, split, inputs, d, n, true).map_err(|e| on_device(i, d, e))?;
            known.insert(d, e);
            settled_any = true;
        }
    }
    if !settled_any {
        return Ok(first);
    }
    let est: Vec<Estimate> = devices.iter().map(|d| known[d].clone()).collect();
    Ok(choose(n, &est))
}

/// The end time (ms) of `set` sharing `n` elements so that all end together, and the shares;
/// a share may come out below zero (the device's fixed cost alone ends past the others).
fn together(n: f64, est: &[Estimate], set: &[usize]) -> (f64, Vec<f64>) {
    // fixed_i + share_i × c_i = T for all i, Σ share_i = n
    let speed: f64 = set.iter().map(|&i| 1e6 / est[i].ns_per_elem.max(1e-9)).sum();
    let lead: f64 = set
        .iter()
        .map(|&i| est[i].fixed_ms * 1e6 / est[i].ns_per_elem.max(1e-9))
        .sum();
    let t = (n + lead) / speed;
    let shares = set
        .iter()
        .map(|&i| (t - est[i].fixed_ms) * 1e6 / est[i].ns_per_elem.max(1e-9))
        .collect();
    (t, shares)
}

/// [`shares`]' choice from the estimates.
pub fn choose(n: usize, est: &[Estimate]) -> Shares {
    let nf = n as f64;
    let mut order: Vec<usize> = (0..est.len()).collect();
    order.sort_by(|&a, &b| est[a].ms(nf).total_cmp(&est[b].ms(nf)).then(a.cmp(&b)));
    let mut set = vec![order[0]];
    let (mut best_t, mut best_shares) = (est[order[0]].ms(nf), vec![nf]);
    let mut why: Vec<String> = vec![String::new(); est.len()];
    for &i in &order[1..] {
        let mut with = set.clone();
        with.push(i);
        let (t, sh) = together(nf, est, &with);
        let mine = *sh.last().expect("one share per device");
        // (a positive share always ends the whole sooner; none is left when the device's
        // fixed cost alone ends after the faster devices would have finished without it)
        if mine <= 0.0 || t >= best_t {
            why[i] = format!(
                "nothing: it would finish later than the faster device(s) alone (its fixed cost alone is \
                 {:.1} ms; they end at {best_t:.1} ms without it)",
                est[i].fixed_ms
            );
        } else if mine < MIN_SHARE * nf {
            why[i] = format!(
                "nothing: its share would be {:.1}% (below {:.0}%)",
                100.0 * mine / nf,
                100.0 * MIN_SHARE
            );
        } else {
            set = with;
            best_t = t;
            best_shares = sh;
        }
    }
    let mut weights = vec![0.0; est.len()];
    for (&i, &sh) in set.iter().zip(&best_shares) {
        weights[i] = sh;
        why[i] = format!(
            "{:.1}% of the range: ends at {best_t:.1} ms ({:.3} ns per element, {:.1} ms fixed; {})",
            100.0 * sh / nf,
            est[i].ns_per_elem,
            est[i].fixed_ms,
            est[i].from
        );
    }
    for i in 0..est.len() {
        if weights[i] == 0.0 {
            why[i] = format!(
                "{} ({:.3} ns per element, {:.1} ms fixed; {})",
                why[i], est[i].ns_per_elem, est[i].fixed_ms, est[i].from
            );
        }
    }
    Shares { weights, why }
}

/// One device's [`Estimate`] for the slice program at these sizes; with `settle`, probes grow
/// until their kernels are long enough to trust (see [`PROBE_MS`]), else one small probe.
fn estimate(
    given_src: Option<&str>,
    split: &Split,
    inputs: &Inputs,
    device: &str,
    n: usize,
    settle: bool,
) -> Result<Estimate, Error> {
    // The name alone: opening a context here cost a device that then gets nothing (PoCL beside
    // a GPU) about 0.4 s of the run.
    let name = host_runner::device_info(Some(device))
        .map_err(|e| Error::plain(e.to_string()))?
        .name;
    if let Some(ms) = given_src.and_then(|src| crate::tune::tuned_ms(src, &inputs.sizes, &name)) {
        return Ok(Estimate {
            ns_per_elem: ms * 1e6 / n as f64,
            fixed_ms: 0.0,
            from: "the tuning cache's time of the whole program".into(),
            settled: true,
        });
    }
    // Per program and device; the sizes of the split dimension are left out, as the time per
    // element does not depend on them.
    let split_sizes = split.count.free_vars();
    let sizes: BTreeMap<String, i64> = inputs
        .sizes
        .iter()
        .filter(|(k, _)| !split_sizes.contains(*k))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    let key = format!("devices|{}|{name}", crate::tune::program_key(&split.slice_src, &sizes));
    if let Some(v) = crate::tune::cached(&key) {
        let settled = v.get("settled").and_then(|x| x.as_bool()).unwrap_or(false);
        if let (Some(ns), Some(fixed), true) = (
            v.get("ns_per_elem").and_then(|x| x.as_f64()),
            v.get("fixed_ms").and_then(|x| x.as_f64()),
            settled || !settle,
        ) {
            return Ok(Estimate {
                ns_per_elem: ns,
                fixed_ms: fixed,
                from: "calibrated before (tuning cache)".into(),
                settled,
            });
        }
    }
    let mut c = (n / 1024).clamp(1, n);
    let mut fixed_ms = None;
    let (ns_per_elem, probed, settled) = loop {
        let probe = slice_inputs(split, inputs, 0..c)?;
        let started = std::time::Instant::now();
        let compiled = compile_for(&split.slice_src, &probe, device, None)?;
        let plan = compiled
            .plan
            .as_ref()
            .ok_or_else(|| Error::plain("internal: a slice program without kernels"))?;
        const REPEATS: usize = 3;
        let m = crate::backend::run_measured(plan, &probe, Some(device), true, REPEATS, false)?;
        let kernel_ms = m.kernel_ns.iter().map(|(_, ns)| *ns).sum::<u64>() as f64 / 1e6;
        // The first probe's wall time less its kernels: building, copying, launching.
        fixed_ms.get_or_insert((started.elapsed().as_secs_f64() * 1e3 - REPEATS as f64 * kernel_ms).max(0.0));
        let settled = kernel_ms >= PROBE_MS || c >= n / 8 || c >= n;
        if settled || !settle {
            break (kernel_ms * 1e6 / c as f64, c, settled);
        }
        c = (c * 4).min(n);
    };
    let fixed_ms = fixed_ms.unwrap_or(0.0);
    crate::tune::store_cached(
        &key,
        serde_json::json!({ "ns_per_elem": ns_per_elem, "fixed_ms": fixed_ms, "probe": probed, "settled": settled }),
    );
    Ok(Estimate {
        ns_per_elem,
        fixed_ms,
        from: format!("a probe of {probed} just now, cached"),
        settled,
    })
}

fn result(value: Value, ty: Type, timing: Option<String>) -> RunResult {
    let json = value.to_json();
    RunResult {
        value,
        ty,
        json,
        timing,
    }
}

/// One clean error naming the device of slice `i`.
fn on_device(i: usize, device: &str, e: Error) -> Error {
    let message = format!("device {i} ({device}) failed: {}", e.message());
    match e {
        // The driver's build log and the like stay with the message.
        Error::Plain { notes, .. } => Error::Plain { message, notes },
        Error::Source(_) | Error::Invalid(_) => Error::plain(message),
    }
}

/// The inputs of one slice program: sliced parameters cut to `r`, the rest whole.
fn slice_inputs(split: &Split, inputs: &Inputs, r: Range<usize>) -> Result<Inputs, Error> {
    let values = split
        .params
        .iter()
        .map(|t| take(t, &|k| &inputs.values[k], &inputs.sizes, &r))
        .collect::<Result<Vec<_>, _>>()?;
    let mut sizes = inputs.sizes.clone();
    sizes.insert(split.part.clone(), r.len() as i64);
    Ok(Inputs { values, sizes })
}

/// The value of one slice program parameter for the slice `r`, from the given program's
/// inputs (`given(k)`: its parameter `k`).
fn take<'a>(
    t: &Take,
    given: &dyn Fn(usize) -> &'a Value,
    sizes: &BTreeMap<String, i64>,
    r: &Range<usize>,
) -> Result<Value, Error> {
    let rows = |v: &Value, r: Range<usize>| match v {
        Value::Array(xs) if r.end <= xs.len() => Ok(Value::Array(xs[r].to_vec())),
        _ => Err(Error::plain(
            "internal: a sliced input is not an array of the split's length",
        )),
    };
    match t {
        Take::Whole(k) => Ok(given(*k).clone()),
        Take::Cut {
            param,
            dim,
            window: (size, step),
            pre,
        } => {
            let made;
            let whole = match pre {
                None => given(*param),
                Some(src) => {
                    let prog = ir::parse(src)?;
                    let lookup = |n: &str| sizes.get(n).copied();
                    made = ir::interp::eval(&prog, std::slice::from_ref(given(*param)), &lookup)
                        .map_err(|e| Error::plain(format!("making an input's layout on the host: {}", e.message)))?;
                    &made
                }
            };
            let read = if r.is_empty() {
                0..0
            } else {
                r.start * step..r.start * step + (r.len() - 1) * step + size
            };
            match (dim, whole) {
                (0, v) => rows(v, read),
                (_, Value::Array(xs)) => xs
                    .iter()
                    .map(|row| rows(row, read.clone()))
                    .collect::<Result<_, _>>()
                    .map(Value::Array),
                _ => Err(Error::plain("internal: a transposed input is not an array")),
            }
        }
    }
}

/// The length of the split range at these sizes.
fn split_len(split: &Split, sizes: &BTreeMap<String, i64>) -> Result<usize, Error> {
    let n = split
        .count
        .eval(&|name| sizes.get(name).copied())
        .map_err(|e| Error::plain(format!("internal: the split's length {}: {e}", split.count)))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Compiles `src` for `device` at the inputs' sizes (its tuned variant when the cache has one)
/// and runs it there.
fn run_on(src: &str, inputs: &Inputs, device: &str, time: bool) -> Result<Part, Error> {
    run_compiled_on(&compile_for(src, inputs, device, None)?, inputs, device, time)
}

/// The variable that makes the build of one slice's kernels fail (its value: the slice's
/// index), so that the path of a device failing mid-run can be tested on any machine.
pub const FAIL_VAR: &str = "LIFT_DEVICES_FAIL";

fn forced_failure(slice: usize) -> bool {
    std::env::var(FAIL_VAR).is_ok_and(|v| v.trim() == slice.to_string())
}

fn run_compiled_on(compiled: &crate::Compiled, inputs: &Inputs, device: &str, time: bool) -> Result<Part, Error> {
    // A part's value only: its JSON text (as `run_compiled` makes) would be thrown away, and
    // formatting a large part costs as much as a short kernel.
    if let (Some(plan), None) = (&compiled.plan, &compiled.host) {
        crate::verify_checks(&compiled.info, inputs)?;
        let (value, timing) = crate::backend::run(plan, inputs, Some(device), time)?;
        return Ok(Part { value, timing });
    }
    let opts = crate::RunOptions {
        device: Some(device.to_string()),
        time,
        interp: false,
    };
    let r = crate::run_compiled(compiled, inputs, &opts)?;
    Ok(Part {
        value: r.value,
        timing: r.timing,
    })
}

/// Compiled as `lift run --device` compiles: the tuned variant for this device when the cache
/// has one, and kernels within the device's work-group limits (without them a variant could
/// be refused at launch, and it could differ from the one-device run's), built for the inputs'
/// sizes but `vary`: the size of a slice, where one compilation serves slices of several.
fn compile_for(src: &str, inputs: &Inputs, device: &str, vary: Option<&str>) -> Result<crate::Compiled, Error> {
    let typed = crate::compile(src, &Options::types_only())?;
    let info = host_runner::device_info(Some(device)).map_err(|e| Error::plain(e.to_string()))?;
    let mut opts = crate::run_options(&typed.given, &inputs.sizes, Some(&info));
    opts.vary.extend(vary.map(str::to_string));
    crate::compile(src, &opts)
}

/// The smallest of the devices' work-group limits, for a plan shown once for all of them
/// (`None` where a device cannot be queried: the plan is then the one without a device).
fn smallest_limit(devices: &[String]) -> Option<codegen_opencl::WorkGroupLimit> {
    let mut limits = devices.iter().map(|d| {
        host_runner::device_info(Some(d))
            .ok()
            .map(|i| crate::work_group_limit(&i))
    });
    let first = limits.next()??;
    limits.try_fold(first, |a, b| {
        let b = b?;
        Some(codegen_opencl::WorkGroupLimit {
            total: a.total.min(b.total),
            per_dim: [0, 1, 2].map(|d| a.per_dim[d].min(b.per_dim[d])),
            local_mem: a.local_mem.min(b.local_mem),
        })
    })
}

/// Puts the parts together in slice order (`inputs`: the given program's, which the rest of a
/// [`Gather::Finish`] may read).
fn gather(split: &Split, parts: Vec<Value>, inputs: &Inputs) -> Result<Value, Error> {
    let concat = |parts: Vec<Value>| {
        let mut all = vec![];
        for p in parts {
            match p {
                Value::Array(xs) => all.extend(xs),
                _ => return Err(Error::plain("internal: a part of the result is not an array")),
            }
        }
        Ok(Value::Array(all))
    };
    match &split.gather {
        Gather::Concat => concat(parts),
        Gather::Finish { rest, .. } => {
            let prog = ir::parse(rest)?;
            let mut values = inputs.values.clone();
            values.push(concat(parts)?);
            let lookup = |n: &str| inputs.sizes.get(n).copied();
            ir::interp::eval(&prog, &values, &lookup)
                .map_err(|e| Error::plain(format!("the final combination on the host: {}", e.message)))
        }
        Gather::Reduce { combine } => {
            let mut partials = vec![];
            for p in parts {
                match p {
                    Value::Array(mut xs) if xs.len() == 1 => partials.push(xs.remove(0)),
                    _ => return Err(Error::plain("internal: a partial result is not one value")),
                }
            }
            let prog = ir::parse(combine)?;
            let n = partials.len() as i64;
            let lookup = |name: &str| (prog.sizes.last().map(String::as_str) == Some(name)).then_some(n);
            ir::interp::eval(&prog, &[Value::Array(partials)], &lookup)
                .map_err(|e| Error::plain(format!("combining the partial results: {}", e.message)))
        }
    }
}

/// One device's phases in one measured run, in ms: `kernel_ms` on the device's clock (profiling
/// events, summed over kernels and steps), the rest on the host around blocking calls.
#[derive(Clone, Debug, Default)]
pub struct PhaseTimes {
    /// Writing the device's inputs (its slices and the inputs copied whole), bytes made before.
    pub upload_ms: f64,
    pub kernel_ms: f64,
    /// Reading its part of the result back (every step's, in a host loop).
    pub download_ms: f64,
    /// Turning the bytes read into values.
    pub decode_ms: f64,
    /// A host loop's new state sent to the device each step after the first (made into bytes
    /// and written).
    pub exchange_ms: f64,
}

impl PhaseTimes {
    fn add(&mut self, o: &PhaseTimes) {
        self.upload_ms += o.upload_ms;
        self.kernel_ms += o.kernel_ms;
        self.download_ms += o.download_ms;
        self.decode_ms += o.decode_ms;
        self.exchange_ms += o.exchange_ms;
    }
}

/// One device of a measured run.
#[derive(Clone, Debug)]
pub struct MeasuredDevice {
    /// Its position in the device list, the list's name for it and its OpenCL name.
    pub index: usize,
    pub device: String,
    pub name: String,
    /// Its slice of the split range.
    pub range: Range<usize>,
    pub times: PhaseTimes,
}

/// One whole run over the devices.
#[derive(Clone, Debug)]
pub struct MeasuredRun {
    pub devices: Vec<MeasuredDevice>,
    /// Putting the parts together on the host (every step's, in a host loop).
    pub gather_ms: f64,
    /// Host wall time from the first upload to the last part's bytes read back (a host loop's
    /// steps before the last include their decoding and gather: the next step needs them).
    pub wall_ms: f64,
    /// Host wall time from the first upload to the gathered result (values).
    pub total_ms: f64,
}

/// [`measure`]'s result: the run of median wall time of `repeats`, after a warm-up run.
#[derive(Clone, Debug)]
pub struct Measured {
    pub value: Value,
    pub median: MeasuredRun,
    /// Every timed run's wall time (ms), in order.
    pub walls_ms: Vec<f64>,
    /// The length of the split range, its size variable, and the steps of a host loop (1 for
    /// a program without one).
    pub n: usize,
    pub size: String,
    pub steps: usize,
    pub sliced: Vec<String>,
    pub whole: Vec<String>,
    /// Per device: its share and why.
    pub shares: Vec<String>,
    /// Per device with a slice: compiling its slice program, building it, making its
    /// buffers and the first upload (ms, host wall), before the warm-up run.
    pub setup_ms: Vec<f64>,
}

/// What a measuring device thread is asked to do.
enum Order {
    /// Upload every input, then launch.
    Start,
    /// Send the new state of a host loop, then launch.
    State(std::sync::Arc<Value>),
}

/// `lift bench --devices`: `run` split as [`run`] splits it (a split program, or a host loop
/// whose step splits), with each phase of each device timed. One thread per device compiles
/// its slice program, builds it and makes its buffers once; a warm-up run follows, then
/// `repeats` timed runs on the inputs as uploaded bytes made beforehand (the host's slicing
/// and encoding of the inputs are not timed). A program that does not split is an error:
/// there is nothing to compare.
pub fn measure(src: &str, inputs: &Inputs, devices: &[String], repeats: usize) -> Result<Measured, Error> {
    if devices.is_empty() {
        return Err(Error::plain("--devices: no device given"));
    }
    let typed = crate::compile(src, &Options::types_only())?;
    crate::verify_checks(&typed.given_info, inputs)?;
    // A host loop's step reads its state as one more input; a split program reads the inputs
    // as given (not copied: mm 8192³'s are 134 M values).
    let with_state;
    let mut step_inputs = inputs;
    let (split, steps, state_param, given_src) = match decide(&typed.given, &typed.given_info) {
        Decision::Split(s) => (s, 1, None, Some(src)),
        Decision::Whole(why) => {
            let Some(hl) = host_loop(&typed.given, &typed.given_info) else {
                return Err(Error::plain(format!(
                    "the program is not split over devices ({why}): there is nothing to measure per device"
                )));
            };
            let k = hl
                .steps
                .eval(&|n| inputs.sizes.get(n).copied())
                .map_err(|e| Error::plain(format!("cannot evaluate the number of steps {}: {e}", hl.steps)))?;
            let k = usize::try_from(k).unwrap_or(0);
            if k == 0 {
                return Err(Error::plain("the host loop takes no step: there is nothing to measure"));
            }
            let mut values = inputs.values.clone();
            values.push(inputs.values[hl.init].clone());
            with_state = Inputs {
                values,
                sizes: inputs.sizes.clone(),
            };
            step_inputs = &with_state;
            (hl.step, k, Some(inputs.values.len()), None)
        }
    };
    let n = split_len(&split, &step_inputs.sizes)?;
    let mut all_names = vec![];
    for (i, d) in devices.iter().enumerate() {
        let s = host_runner::Session::open(Some(d)).map_err(|e| on_device(i, d, Error::plain(e.to_string())))?;
        all_names.push(s.info().name.clone());
    }
    let chosen = if devices.len() == 1 {
        Shares {
            weights: vec![1.0],
            why: vec!["the whole range: the only device".into()],
        }
    } else if all_names.iter().all(|n| *n == all_names[0]) {
        // Devices of one model (two H200s) share equally: calibrating them would only add
        // its noise to the split (a few rows more on one than on the other), and cost probes.
        Shares {
            weights: vec![1.0; devices.len()],
            why: devices
                .iter()
                .map(|_| format!("an equal share: every device is a {}", all_names[0]))
                .collect(),
        }
    } else {
        shares(given_src, &split, step_inputs, devices, n)?
    };
    let jobs: Vec<(usize, Range<usize>)> = slices(n, &chosen.weights)
        .into_iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .collect();
    let names: Vec<String> = jobs.iter().map(|(i, _)| all_names[*i].clone()).collect();
    /// A part, its times and when its bytes were on the host.
    type Got = (Value, PhaseTimes, std::time::Instant);
    type Reply = (usize, Result<Option<Got>, Error>);
    /// Every timed run (its gathered value and times) and each device's setup time.
    type Runs = (Value, Vec<MeasuredRun>, Vec<f64>);
    let (value, runs, setup_ms) = std::thread::scope(|scope| -> Result<Runs, Error> {
        let (reply_tx, reply_rx) = std::sync::mpsc::channel::<Reply>();
        let mut to_workers = vec![];
        for (slot, (i, r)) in jobs.iter().enumerate() {
            let (tx, rx) = std::sync::mpsc::channel::<Order>();
            to_workers.push(tx);
            let (reply_tx, r, device, first, split) = (reply_tx.clone(), r.clone(), &devices[*i], step_inputs, &split);
            let worker = move || {
                let send = |v: Result<Option<Got>, Error>| reply_tx.send((slot, v)).is_ok();
                let made = slice_inputs(split, first, r.clone()).and_then(|ins| {
                    let c = compile_for(&split.slice_src, &ins, device, None)?;
                    let plan = match (&c.plan, &c.host) {
                        (Some(plan), None) => plan,
                        _ => return Err(Error::plain("its slice program is not one kernel plan")),
                    };
                    if plan.result.lengths.is_some() {
                        // Its buffers are sized by the run's outcome, not once before it.
                        return Err(Error::plain(
                            "`lift bench --devices` does not time a program whose result is a filter's \
                             (its length is known only after each run); `lift run --devices --time` runs it",
                        ));
                    }
                    crate::verify_checks(&c.info, &ins)?;
                    let dev = crate::backend::Resident::new(plan, c.info.result(), &ins, Some(device))?;
                    let bytes = ins
                        .values
                        .iter()
                        .enumerate()
                        .map(|(j, v)| dev.encode_param(j, v))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok((dev, bytes))
                });
                let (mut dev, bytes) = match made {
                    Ok(d) => d,
                    Err(e) => {
                        send(Err(e));
                        return;
                    }
                };
                if !send(Ok(None)) {
                    return;
                }
                while let Ok(order) = rx.recv() {
                    let mut t = PhaseTimes::default();
                    let sent = match order {
                        Order::Start => {
                            let clock = std::time::Instant::now();
                            let up = bytes.iter().enumerate().try_for_each(|(j, b)| match b {
                                Some(b) => dev.upload_param(j, b),
                                None => Ok(()),
                            });
                            t.upload_ms = clock.elapsed().as_secs_f64() * 1e3;
                            up
                        }
                        Order::State(state) => {
                            let clock = std::time::Instant::now();
                            let sp = state_param.unwrap_or(usize::MAX);
                            let given = |k: usize| if k == sp { &*state } else { &first.values[k] };
                            let set = split.params.iter().enumerate().try_for_each(|(j, tk)| match tk {
                                Take::Whole(k) if *k == sp => dev.set(j, &state),
                                Take::Cut { param: k, .. } if *k == sp => {
                                    dev.set(j, &take(tk, &given, &first.sizes, &r)?)
                                }
                                _ => Ok(()),
                            });
                            t.exchange_ms = clock.elapsed().as_secs_f64() * 1e3;
                            set
                        }
                    };
                    let out = sent.and_then(|()| dev.launch_profiled()).map(|(v, rt)| {
                        t.kernel_ms = rt.kernel_ns as f64 / 1e6;
                        t.download_ms = rt.download_ms;
                        t.decode_ms = rt.decode_ms;
                        let read = std::time::Instant::now() - std::time::Duration::from_secs_f64(rt.decode_ms / 1e3);
                        Some((v, t, read))
                    });
                    if !send(out) {
                        return;
                    }
                }
            };
            std::thread::Builder::new()
                .name(format!("lift-device-{i}"))
                .stack_size(ir::STACK_BYTES)
                .spawn_scoped(scope, worker)
                .map_err(|e| on_device(*i, &devices[*i], Error::plain(format!("cannot start its thread: {e}"))))?;
        }
        drop(reply_tx);
        let setup_clock = std::time::Instant::now();
        let mut setup_ms = vec![0.0; jobs.len()];
        let receive = |want: usize| -> Result<Vec<Option<Got>>, Error> {
            let mut got: Vec<Option<Option<Got>>> = vec![None; want];
            for _ in 0..want {
                let (slot, r) = reply_rx
                    .recv()
                    .map_err(|_| Error::plain("internal: a device thread ended without its part"))?;
                let i = jobs[slot].0;
                got[slot] = Some(r.map_err(|e| on_device(i, &devices[i], e))?);
            }
            Ok(got.into_iter().map(Option::flatten).collect())
        };
        // Setups report one by one, so that each device's time is its own.
        for _ in 0..jobs.len() {
            let (slot, r) = reply_rx
                .recv()
                .map_err(|_| Error::plain("internal: a device thread ended before it was ready"))?;
            let i = jobs[slot].0;
            r.map_err(|e| on_device(i, &devices[i], e))?;
            setup_ms[slot] = setup_clock.elapsed().as_secs_f64() * 1e3;
        }
        let mut runs = vec![];
        let mut value = None;
        for run in 0..=repeats.max(1) {
            let started = std::time::Instant::now();
            let mut per = vec![PhaseTimes::default(); jobs.len()];
            let mut gather_ms = 0.0;
            let mut last_read = None;
            let mut state = Value::Array(vec![]);
            for step in 0..steps {
                let order = if step == 0 {
                    None
                } else {
                    Some(std::sync::Arc::new(std::mem::replace(&mut state, Value::Array(vec![]))))
                };
                for tx in &to_workers {
                    // A worker that stopped has sent its error, read below.
                    let _ = tx.send(match &order {
                        None => Order::Start,
                        Some(s) => Order::State(s.clone()),
                    });
                }
                let mut parts = vec![];
                for (slot, p) in receive(jobs.len())?.into_iter().enumerate() {
                    let (v, t, read) =
                        p.ok_or_else(|| Error::plain("internal: a device answered a run with no part"))?;
                    per[slot].add(&t);
                    parts.push(v);
                    last_read = last_read.max(Some(read));
                }
                let clock = std::time::Instant::now();
                state = gather(&split, parts, step_inputs)?;
                gather_ms += clock.elapsed().as_secs_f64() * 1e3;
            }
            let total_ms = started.elapsed().as_secs_f64() * 1e3;
            let wall_ms = last_read.map_or(total_ms, |t| (t - started).as_secs_f64() * 1e3);
            let devices = jobs
                .iter()
                .zip(per)
                .zip(&names)
                .map(|(((i, r), times), name)| MeasuredDevice {
                    index: *i,
                    device: devices[*i].clone(),
                    name: name.clone(),
                    range: r.clone(),
                    times,
                })
                .collect();
            // The first run warmed up; one result is kept (mm 8192³'s is 67 M values).
            if run == 1 {
                value = Some(state);
            }
            if run > 0 {
                runs.push(MeasuredRun {
                    devices,
                    gather_ms,
                    wall_ms,
                    total_ms,
                });
            }
        }
        // Closing the channels ends the workers.
        drop(to_workers);
        let value = value.ok_or_else(|| Error::plain("internal: no timed run"))?;
        Ok((value, runs, setup_ms))
    })?;
    let walls_ms: Vec<f64> = runs.iter().map(|m| m.wall_ms).collect();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| walls_ms[a].total_cmp(&walls_ms[b]));
    let median = runs[order[order.len() / 2]].clone();
    Ok(Measured {
        value,
        median,
        walls_ms,
        n,
        size: split.size.clone(),
        steps,
        sliced: split.sliced.clone(),
        whole: split.whole.clone(),
        shares: devices
            .iter()
            .zip(&chosen.why)
            .enumerate()
            .map(|(i, (d, why))| format!("device {i} ({d}): {why}"))
            .collect(),
        setup_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(ns_per_elem: f64, fixed_ms: f64) -> Estimate {
        Estimate {
            ns_per_elem,
            fixed_ms,
            from: "test".into(),
            settled: true,
        }
    }

    #[test]
    fn a_slow_device_gets_nothing_when_it_would_end_after_the_fast_one_alone() {
        // mm 4096³'s shape: a GPU row in 1.4 µs, a CPU row in 2 ms, the CPU's build and
        // copies 300 ms: the GPU alone ends at 56 ms, before the CPU could start.
        let s = choose(4096, &[est(1_400.0, 50.0), est(2_000_000.0, 300.0)]);
        assert_eq!(s.weights, vec![4096.0, 0.0]);
        assert!(s.why[1].starts_with("nothing: it would finish later"), "{}", s.why[1]);
        // Named the other way round, the GPU is still chosen first.
        let s = choose(4096, &[est(2_000_000.0, 300.0), est(1_400.0, 50.0)]);
        assert_eq!(s.weights, vec![0.0, 4096.0]);
    }

    #[test]
    fn a_share_below_the_threshold_is_nothing() {
        // 100× slower without fixed costs: its share would be 1%.
        let s = choose(10_000, &[est(1_000.0, 0.0), est(100_000.0, 0.0)]);
        assert_eq!(s.weights[1], 0.0);
        assert!(s.why[1].contains("below 2%"), "{}", s.why[1]);
        assert_eq!(s.weights[0], 10_000.0);
    }

    #[test]
    fn comparable_devices_share_so_that_they_end_together() {
        let s = choose(1_000, &[est(1_000_000.0, 10.0), est(3_000_000.0, 10.0)]);
        assert!(
            (s.weights[0] - 750.0).abs() < 1e-6 && (s.weights[1] - 250.0).abs() < 1e-6,
            "{:?}",
            s.weights
        );
        // A fixed cost moves work to the other device: both still end together.
        let s = choose(1_000, &[est(1_000_000.0, 10.0), est(1_000_000.0, 110.0)]);
        assert!((s.weights[0] - 550.0).abs() < 1e-6, "{:?}", s.weights);
        assert_eq!(slices(1_000, &s.weights), vec![0..550, 550..1000]);
    }

    #[test]
    fn slices_cover_the_range_in_proportion() {
        assert_eq!(slices(10, &[1.0, 1.0]), vec![0..5, 5..10]);
        assert_eq!(slices(10, &[1.0, 1.0, 1.0]), vec![0..3, 3..7, 7..10]);
        assert_eq!(slices(100, &[9.0, 1.0]), vec![0..90, 90..100]);
        assert_eq!(slices(100, &[1000.0, 1.0]), vec![0..100, 100..100]);
        assert_eq!(slices(3, &[1.0, 1.0, 1.0, 1.0]), vec![0..1, 1..2, 2..2, 2..3]);
        assert_eq!(slices(0, &[1.0, 1.0]), vec![0..0, 0..0]);
    }
}
