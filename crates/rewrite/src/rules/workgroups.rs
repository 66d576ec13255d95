//! Work-group rules: reductions computed cooperatively by the work-items of a work-group
//! (`wg-reduce-*`, `wg-reduce-pad-*` for lengths the group does not divide, and `wg-partial-*`
//! for a whole array, one group per chunk).

use super::reductions::grid_reduce_rules;
use super::vectors::grid_reduce_lanes_rules;
use super::{columns, pat, var};
use crate::egraph::{neutral_of, Data, LeafInfo, Lift, LiftAnalysis, EG, FLOAT_ELEMS};
use crate::sizes::may_split;
use arith::ArithExpr;
use egg::{Applier, Id, PatternAst, Rewrite, Subst, Symbol};

/// The cooperative reductions: a reduction spread over the work-items of a work-group.
pub fn wg_reduce_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules = vec![];
    for &s in opts
        .wg_sizes
        .iter()
        .filter(|s| s.count_ones() == 1 && **s <= opts.max_group)
    {
        // map (λr. … reduce f z xs …) rows = map (λr. … wgreduce s f z xs …) rows, for each
        // reduction the row function computes itself (not inside a function of its body: those
        // run per element): work-item l of a group of s reduces the strided slice
        // xs[l], xs[l+s], … (at every step consecutive work-items read consecutive elements),
        // then the s partial results are combined by a tree in local memory; f associative and
        // commutative (all we recognise are), z its neutral element, s | len(xs) and
        // len(xs) > s, xs not itself a partial reduction, rows not columns of an array
        rules.push(
            Rewrite::new(
                format!("wg-reduce-{s}"),
                pat("(map (lam ?r ?b) ?rows)"),
                WgRows { s, pad: false },
            )
            .expect("rule"),
        );
        for &items in &opts.wg_items {
            rules.push(
                Rewrite::new(
                    format!("wg-partial-{s}x{items}"),
                    pat("(reduce ?f ?z ?x)"),
                    WgPartial { s, items },
                )
                .expect("rule"),
            );
        }
    }
    rules.extend(grid_reduce_rules(opts));
    rules.extend(wg_reduce_pad_rules(opts));
    rules.extend(grid_reduce_lanes_rules(opts));
    rules
}

/// Whether `reduce f z x` may be a work-group reduction by `s` work-items.
fn wg_reducible(eg: &EG, f: Id, z: Id, x: Id, s: i64) -> bool {
    let (f, z, x) = (&eg[f].data, &eg[z].data, &eg[x].data);
    neutral_of(f, z)
        && x.partial == 0
        && x.len
            .as_ref()
            .is_some_and(|n| may_split(n, s, &eg.analysis.sizes, &eg.analysis.declared))
}

/// See `wg-reduce-*`: the reductions a row function computes at its own level (through `let`s,
/// the array arguments of maps and other primitives, joins) get their work-group form.
struct WgRows {
    s: i64,
    /// `wg-reduce-pad-*`: the reductions whose length `s` does not divide (`wg_padded`)
    pad: bool,
}

impl WgRows {
    fn collect(eg: &EG, class: Id, s: i64, pad: bool, seen: &mut Vec<Id>, found: &mut Vec<(Id, [Id; 3])>) {
        let class = eg.find(class);
        if seen.contains(&class) || seen.len() > 64 {
            return;
        }
        seen.push(class);
        for node in &eg[class].nodes {
            match node {
                Lift::Reduce([f, z, x]) => {
                    let ok = match pad {
                        false => wg_reducible(eg, *f, *z, *x, s),
                        true => wg_padded(eg, *f, *z, *x, s),
                    };
                    if ok {
                        found.push((class, [*f, *z, *x]));
                    }
                }
                Lift::Let([_, v, b]) => {
                    Self::collect(eg, *v, s, pad, seen, found);
                    Self::collect(eg, *b, s, pad, seen, found);
                }
                Lift::Map([_, x]) | Lift::Join(x) => Self::collect(eg, *x, s, pad, seen, found),
                Lift::Other(_, kids) => {
                    for k in kids {
                        Self::collect(eg, *k, s, pad, seen, found);
                    }
                }
                Lift::Split(_)
                | Lift::AsVector(_)
                | Lift::AsScalar(_)
                | Lift::Lam(_)
                | Lift::MapF(_)
                | Lift::ReduceF(_)
                | Lift::ReduceFU(_)
                | Lift::Comp(_)
                | Lift::Transpose(_)
                | Lift::Local(_)
                | Lift::KTile(_)
                | Lift::WgReduce(_)
                | Lift::TTile(_)
                | Lift::Stage(_)
                | Lift::StageVec(_)
                | Lift::Scan(_)
                | Lift::ScanGlb(_)
                | Lift::ScanRows(_)
                | Lift::MapScan(_)
                | Lift::Tiles(_)
                | Lift::Stencil(_)
                | Lift::ColReduce(_)
                | Lift::GridReduce(_)
                | Lift::RBlock(_)
                | Lift::Num(_)
                | Lift::Sym(_) => {}
            }
        }
    }
}

impl Applier<Lift, LiftAnalysis> for WgRows {
    fn apply_one(&self, eg: &mut EG, _: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        // a work-group reading a column reads one element per row: never coalesced, and a
        // work-item per column reads consecutive columns already
        if columns(eg, sub[var("?rows")], 0) {
            return vec![];
        }
        let mut found = vec![];
        Self::collect(eg, sub[var("?b")], self.s, self.pad, &mut vec![], &mut found);
        let mut changed = vec![];
        for (class, [f, z, x]) in found {
            let sn = eg.add(Lift::Num(self.s));
            let wg = eg.add(Lift::WgReduce([sn, f, z, x]));
            if eg.union(class, wg) {
                changed.push(wg);
            }
        }
        changed
    }
}

/// A whole-array reduction as one work-group reduction per chunk, then a reduction of the
/// chunks' results: `reduce f z xs` =
/// `reduce f z (join (map (lam c (wgreduce s f z c)) (split (s·e) xs)))`, f associative and
/// commutative, z its neutral element, xs not itself a partial reduction and of the program's
/// parameters only (a reduction at host level, not one per element of a map); each of the `s`
/// work-items of a group reduces `e` elements, `e` the largest divisor of `len(xs)/s` not above
/// `items` and below `len(xs)/s` (a known length), or `items` (a symbolic one, checked at run time).
struct WgPartial {
    s: i64,
    items: i64,
}

impl Applier<Lift, LiftAnalysis> for WgPartial {
    fn apply_one(&self, eg: &mut EG, eclass: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, z, x) = (sub[var("?f")], sub[var("?z")], sub[var("?x")]);
        let (fd, zd, xd) = (&eg[f].data, &eg[z].data, &eg[x].data);
        let an = &eg.analysis;
        if !neutral_of(fd, zd) || xd.partial != 0 || !xd.free.iter().all(|v| an.params.contains(v)) {
            return vec![];
        }
        let Some(n) = xd.len.clone() else { return vec![] };
        let s = self.s;
        let e = match n.eval(&|v| an.sizes.get(v).copied()) {
            Ok(n) if n % s == 0 => (2..=self.items.min(n / s / 2)).rev().find(|d| (n / s) % d == 0),
            Ok(_) => None,
            Err(_) => may_split(&n, s * self.items, &an.sizes, &an.declared).then_some(self.items),
        };
        let Some(e) = e else { return vec![] };
        let chunk = s * e;
        let c = Symbol::from(format!("wg_chunk{}_{s}x{e}", usize::from(eclass)));
        let data = Data {
            len: Some(ArithExpr::cst(chunk)),
            flags: xd.flags & FLOAT_ELEMS,
            free: vec![c],
            ..Data::default()
        };
        eg.analysis.leaves.insert(c, LeafInfo { data });
        let cv = eg.add(Lift::Sym(c));
        let sn = eg.add(Lift::Num(s));
        let wg = eg.add(Lift::WgReduce([sn, f, z, cv]));
        let lam = eg.add(Lift::Lam([cv, wg]));
        let k = eg.add(Lift::Num(chunk));
        let split = eg.add(Lift::Split([k, x]));
        let partials = eg.add(Lift::Map([lam, split]));
        let joined = eg.add(Lift::Join(partials));
        let res = eg.add(Lift::Reduce([f, z, joined]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

/// The cooperative row reductions of lengths that the work-group does not divide (rows of
/// 1000, `bench/indep/rownorm.lisp`, `bench/indep/gemv_bias.lisp`): `wg-reduce-pad-{s}` for
/// each work-group size `s` of `Options::wg_sizes`. Lowering pads the row at its end
/// (`Lowerer::wg_tree_padded`): with zeros before the product of a dot product, with the
/// neutral `z` for a plain array, and otherwise with marked lanes that skip the mapped
/// function.
pub fn wg_reduce_pad_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.wg_sizes
        .iter()
        .filter(|s| s.count_ones() == 1 && **s <= opts.max_group)
        .map(|&s| {
            // map (λr. … reduce f z xs …) rows = map (λr. … wgreduce s f z xs …) rows, as
            // `wg-reduce-{s}` but for len(xs) = n known, s ∤ n and n > s (the rows padded to
            // ⌈n/s⌉·s), rows not columns of an array
            Rewrite::new(
                format!("wg-reduce-pad-{s}"),
                pat("(map (lam ?r ?b) ?rows)"),
                WgRows { s, pad: true },
            )
            .expect("rule")
        })
        .collect()
}

/// Whether `reduce f z x` may be a work-group reduction by `s` work-items over `x` padded:
/// `z` neutral for `f`, `x` not a partial reduction, its length known from the sizes given,
/// longer than `s` and not a multiple of it.
fn wg_padded(eg: &EG, f: Id, z: Id, x: Id, s: i64) -> bool {
    let (f, z, x) = (&eg[f].data, &eg[z].data, &eg[x].data);
    let an = &eg.analysis;
    neutral_of(f, z)
        && x.partial == 0
        && x.len.as_ref().is_some_and(|n| {
            n.free_vars().iter().all(|v| an.declared.contains(v))
                && n.eval(&|v| an.sizes.get(v).copied()).is_ok_and(|n| n > s && n % s != 0)
        })
}
