//! Vector rules: element-wise maps over `float`s as maps over 4-vectors, and whole-array
//! reductions whose work-items read vectors (`grid-reduce-v*`). The staging of rows as vectors
//! (`stage-rows-vec`) is with the other staging rules, in `staging.rs`.

use super::{conditional, pat};
use super::{symbol_of, var};
use crate::egraph::{neutral_of, Assoc, Lift, LiftAnalysis, EG, FLOAT_ELEMS, LANEWISE, ZERO_PRODUCT};
use crate::sizes::{may_split, GRID_LANES_SHIFT};
use egg::{Applier, Id, PatternAst, Rewrite, Subst, Symbol};

/// `vectorize-{w}`: a lane-wise map over floats as a map over `w`-vectors.
pub fn vectorize_rule(w: u8) -> Rewrite<Lift, LiftAnalysis> {
    // map f xs = asScalar (map f (asVector w xs)), f lane-wise arithmetic on floats, w | len
    conditional(
        format!("vectorize-{w}"),
        "(map ?f ?x)",
        format!("(asScalar (map ?f (asVector {w} ?x)))"),
        move |eg: &mut EG, _: Id, s: &Subst| {
            let (f, x) = (&eg[s[var("?f")]].data, &eg[s[var("?x")]].data);
            f.flags & LANEWISE != 0
                && x.flags & FLOAT_ELEMS != 0
                && x.len
                    .as_ref()
                    .is_some_and(|n| may_split(n, i64::from(w), &eg.analysis.sizes, &eg.analysis.declared))
        },
    )
}

/// Vector widths of `grid-reduce-v{w}-*`.
const GRID_LANES: [i64; 1] = [4];

/// The whole-array reductions in one launch reading vectors (`dot`: two inputs, so half the
/// loads in flight a scalar one has for the same bytes): `grid-reduce-v{w}-{g}x{s}` for each
/// `g` of `Options::grid_groups`, `s` the largest work-group size, as `grid-reduce-*`.
pub fn grid_reduce_lanes_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let Some(s) = opts
        .wg_sizes
        .iter()
        .copied()
        .filter(|s| s.count_ones() == 1 && *s <= opts.max_group)
        .max()
    else {
        return vec![];
    };
    GRID_LANES
        .iter()
        .flat_map(|&w| opts.grid_groups.iter().filter(|g| **g > 0).map(move |&g| (w, g)))
        .map(|(w, g)| {
            // reduce f z xs = gridreduce (g | w << GRID_LANES_SHIFT) s f z xs, f a sum, z its
            // neutral element, xs a parameter of floats or a dot product `map h (zip p q)` of
            // such (h a product of two components), len(xs) known from the sizes given, a
            // multiple of w and ≥ 2·g·s·w: read as w-lane vectors
            Rewrite::new(
                format!("grid-reduce-v{w}-{g}x{s}"),
                pat("(reduce ?f ?z ?x)"),
                GridLanes { g, s, w },
            )
            .expect("rule")
        })
        .collect()
}

/// See `grid-reduce-v*`.
struct GridLanes {
    g: i64,
    s: i64,
    w: i64,
}

impl Applier<Lift, LiftAnalysis> for GridLanes {
    fn apply_one(&self, eg: &mut EG, eclass: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, z, x) = (sub[var("?f")], sub[var("?z")], sub[var("?x")]);
        let (fd, zd, xd) = (&eg[f].data, &eg[z].data, &eg[x].data);
        let an = &eg.analysis;
        let float_param =
            |id: Id| symbol_of(eg, id).is_some_and(|p| an.params.contains(&p)) && eg[id].data.flags & FLOAT_ELEMS != 0;
        let zip_of_params = |id: Id| {
            eg[id].nodes.iter().any(|n| match n {
                Lift::Other(head, kids) => head.as_str().starts_with("zip|") && kids.iter().all(|k| float_param(*k)),
                _ => false,
            })
        };
        let products = eg[x].nodes.iter().any(|n| match n {
            Lift::Map([h, zs]) => eg[*h].data.flags & ZERO_PRODUCT != 0 && zip_of_params(*zs),
            _ => false,
        });
        let Some(n) = xd.len.clone() else { return vec![] };
        // a length known only at run time may not be whole vectors: reading its last
        // elements one at a time would make every read a per-lane one
        let whole = n.free_vars().iter().all(|v| an.declared.contains(v))
            && n.eval(&|v| an.sizes.get(v).copied())
                .is_ok_and(|n| n % self.w == 0 && n >= 2 * self.g * self.s * self.w);
        if fd.assoc != Some(Assoc::Add)
            || !neutral_of(fd, zd)
            || xd.partial != 0
            || !(float_param(x) || products)
            || !whole
        {
            return vec![];
        }
        let gn = eg.add(Lift::Num(self.g | self.w << GRID_LANES_SHIFT));
        let sn = eg.add(Lift::Num(self.s));
        let grid = eg.add(Lift::GridReduce([gn, sn, f, z, x]));
        if eg.union(eclass, grid) {
            vec![grid]
        } else {
            vec![]
        }
    }
}
