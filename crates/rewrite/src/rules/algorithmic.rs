//! Algorithmic rules: fusion and fission of maps, a map moved through `join`, and a `let`
//! moved into the reduction or map that consumes its value. They hold for every function, so
//! they have no side condition beyond the scoping of the variables they move.

use super::{conditional, not_free_in, var};
use crate::egraph::{Lift, LiftAnalysis, EG};
use egg::{Id, Rewrite, Subst};

/// Fusion and fission of maps, and a map through `join`.
pub fn fusion_rules() -> Vec<Rewrite<Lift, LiftAnalysis>> {
    vec![
        // map f (map g xs) = map (f ∘ g) xs
        egg::rewrite!("map-fusion"; "(map ?f (map ?g ?x))" => "(map (comp ?f ?g) ?x)"),
        // map (f ∘ g) xs = map f (map g xs)
        egg::rewrite!("map-fission"; "(map (comp ?f ?g) ?x)" => "(map ?f (map ?g ?x))"),
        // map f (join xs) = join (map (map f) xs): lets a map fuse with the map that made the
        // rows (one kernel instead of two)
        egg::rewrite!("map-join"; "(map ?f (join ?x))" => "(join (map (mapf ?f) ?x))"),
    ]
}

/// A `let` whose body only reduces or maps its variable (what the reader's K-normalization
/// makes of `reduce f z (map g xs)` where `xs` is a component of a tuple, as md's neighbour
/// list): the value moves into the body, so that `reduce ∘ map` fuses into one loop instead
/// of an array of the mapped values stored and read back (md at N = 73728, M = 128 on an H200:
/// 0.052 ms against 0.460).
pub fn let_rules() -> Vec<Rewrite<Lift, LiftAnalysis>> {
    vec![
        // let x v (reduce f z x) = reduce f z v, x free in neither f nor z
        conditional(
            "let-reduce".into(),
            "(let ?x ?v (reduce ?f ?z ?x))",
            "(reduce ?f ?z ?v)".into(),
            |eg: &mut EG, _: Id, s: &Subst| not_free_in(eg, s[var("?x")], &[s[var("?f")], s[var("?z")]]),
        ),
        // let x v (map g x) = map g v, x not free in g, v a leaf (a value computed elsewhere
        // or a view: moving a computation would only duplicate terms)
        conditional(
            "let-map".into(),
            "(let ?x ?v (map ?g ?x))",
            "(map ?g ?v)".into(),
            |eg: &mut EG, _: Id, s: &Subst| {
                let leaf = eg[s[var("?v")]].nodes.iter().any(|n| matches!(n, Lift::Sym(_)));
                leaf && not_free_in(eg, s[var("?x")], &[s[var("?g")]])
            },
        ),
    ]
}
