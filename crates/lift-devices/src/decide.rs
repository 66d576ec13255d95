//! Deciding the split: how each parameter reaches the outermost parallel map, the slice
//! program with the sliced lengths replaced by a fresh size, and how the parts are gathered.

use crate::*;
use ir::{Expr, ExprId, Lit, Op, Param, Prim, Program, Type};
use std::collections::BTreeMap;

/// Decides how `prog` (as given, typed by `info`) is split over devices.
pub fn decide(prog: &Program, info: &typeck::TypeInfo) -> Decision {
    match find_split(prog, info) {
        Ok(s) => Decision::Split(s),
        Err(why) => Decision::Whole(why),
    }
}

pub(crate) fn find_split(prog: &Program, info: &typeck::TypeInfo) -> Result<Split, String> {
    match split_top(prog, info) {
        Ok(s) => Ok(s),
        // A reduction lowered by hand or by the rewrite (`let parts = <per-group partials> in
        // <final group>`): the partials split, the final combination runs on the host.
        Err(why) => combine_at_end(prog, info).ok_or(why),
    }
}

pub(crate) fn split_top(prog: &Program, info: &typeck::TypeInfo) -> Result<Split, String> {
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
pub(crate) struct Leaf {
    pub(crate) root: ExprId,
    pub(crate) param: usize,
    pub(crate) dim: usize,
    pub(crate) window: (usize, usize),
    pub(crate) pre: bool,
}

/// The cuts of the inputs that the outermost map's input `e` reads, with `e`'s dimension `dim`
/// being cut in windows `window`. Going down: a `zip` passes the cut to each operand; a map or a
/// copy keeps it (element i of `map f x` reads element i of `x`, whatever the windows); a filter
/// keeps a plain cut (its parts concatenate); `slide #s #t` and `split #k` (windows of k every
/// k) of the cut dimension compose with the windows above (windows `(s1, t1)` over a slide
/// `(s2, t2)` read `((s1-1)·t2 + s2, t1·t2)` of its input); `transpose` moves the cut to the
/// other dimension; any other layout of one parameter (pads, a split of the uncut dimension,
/// ...) is made on the host first and cut there.
pub(crate) fn cut_leaves(
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
pub(crate) fn layout_param(prog: &Program, e: ExprId) -> Option<usize> {
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
pub(crate) fn with_dim(t: &Type, dim: usize, len: arith::ArithExpr) -> Option<Type> {
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
pub(crate) fn slice_program(prog: &Program, info: &typeck::TypeInfo, leaves: &[Leaf]) -> Result<Layout, String> {
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
pub(crate) fn combine_at_end(prog: &Program, info: &typeck::TypeInfo) -> Option<Split> {
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
pub(crate) struct Layout {
    pub(crate) size: String,
    pub(crate) part: String,
    pub(crate) count: arith::ArithExpr,
    pub(crate) slice: Program,
    pub(crate) params: Vec<Take>,
    /// The given parameters that are cut (the others are copied whole).
    pub(crate) sliced: Vec<usize>,
    pub(crate) notes: Vec<String>,
}

pub(crate) fn finish(
    prog: &Program,
    info: &typeck::TypeInfo,
    top: ExprId,
    gather: Gather,
    l: Layout,
) -> Result<Split, String> {
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

pub(crate) fn fresh_part(prog: &Program, size: &str) -> String {
    let mut part = format!("{size}part");
    while prog.sizes.contains(&part) {
        part.push('_');
    }
    part
}

pub(crate) fn var_uses(prog: &Program, v: ir::VarId) -> usize {
    prog.exprs
        .iter()
        .filter(|e| matches!(e, Expr::Var(x) if *x == v))
        .count()
}

/// The reads of `v` in what `prog`'s body reaches (its arena may hold replaced nodes).
pub(crate) fn reachable_uses(prog: &Program, v: ir::VarId) -> usize {
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
pub(crate) fn identity_init(prog: &Program, op: ExprId, init: ExprId) -> bool {
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
pub(crate) fn combine_program(prog: &Program, info: &typeck::TypeInfo, top: ExprId) -> Result<String, String> {
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

pub(crate) fn outer_size(t: &Type) -> Option<String> {
    match t {
        Type::Array(_, n) => n.as_var().map(|(name, _)| name.to_string()),
        _ => None,
    }
}

pub(crate) fn with_outer(t: &Type, len: arith::ArithExpr) -> Type {
    match t {
        Type::Array(e, _) => Type::Array(e.clone(), len),
        other => other.clone(),
    }
}
