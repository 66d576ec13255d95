//! The rewrite rules, in files by family, and the phases of saturation that run them
//! (`crate::saturate` runs the phases in the order below, each to saturation or its limits).
//!
//! Each rule reads as an equation, `lhs = rhs`, in a comment beside it, with its side
//! condition (the `conditional` closure, or the `Applier` that checks it before it adds the
//! right-hand side). Families:
//! - `algorithmic`: map fusion and fission, a map through `join`, `let`s moved into their use;
//! - `tiling`: split-join, 2-D work-group tiles, the tiled transpose, K-tiling;
//! - `regblock`: register-blocked matrix products (also under a map over a batch);
//! - `tensor`: the same on TF32 tensor cores, where the options allow them;
//! - `workgroups`: cooperative reductions by the work-items of a work-group;
//! - `reductions`: partial, strided, column-block and one-launch (grid) reductions, unrolling;
//! - `staging`: copies into local memory (rows, tiles, arrays read whole by every work-item);
//! - `vectors`: maps and reductions over 4-vectors;
//! - `stencil`: overlapped tiling of maps over `slide` windows in 1 to 3 dimensions.
//! - `scan`: whole arrays and rows of scans in one launch, maps before and after them fused.
//!
//! There are no rules about `filter`: a host loop's filter is left to the back end.
//!
//! The order of the rules within a phase is part of the behaviour (egg applies the matches of
//! an iteration in rule order, and the names of the variables an applier makes carry e-class
//! ids), so the phases list them explicitly.

pub mod algorithmic;
pub mod reductions;
pub mod regblock;
pub mod scan;
pub mod staging;
pub mod stencil;
pub mod tensor;
pub mod tiling;
pub mod vectors;
pub mod workgroups;

use crate::egraph::{Lift, LiftAnalysis, EG, HAS_MAPF};
use crate::sizes::may_split;
use egg::{Id, Pattern, Rewrite, Subst, Symbol, Var};

pub use reductions::{col_reduce_rules, grid_reduce_rules, sequential_rules};
pub use regblock::{batch_reg_block_rules, reg_block_rows_rules};
pub use staging::{reuse_rules, reuse_tilings};
pub use stencil::stencil_rules;
pub use tiling::tiling_rules;
pub use vectors::grid_reduce_lanes_rules;
pub use workgroups::{wg_reduce_pad_rules, wg_reduce_rules};

/// The algorithmic phase: fusion, vectorization, partial reductions, `let`s moved into use.
pub fn algorithmic_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules = algorithmic::fusion_rules();
    rules.push(vectors::vectorize_rule(opts.vector_width));
    rules.extend(reductions::strided_partial_rules(opts));
    rules.extend(reductions::partial_reduce_rules(opts));
    rules.extend(algorithmic::let_rules());
    rules.extend(scan::scan_rules());
    rules
}

/// The OpenCL rules that shape work-groups: 2-D work-group tiles and their staging in local
/// memory, local-memory reuse, register blocking.
pub fn workgroup_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let default = opts.default_size;
    let mut rules = tiling::tile_2d_rules(opts);
    rules.extend(tiling::transpose_tile_rules(opts));
    rules.extend(tiling::ktile_rules(opts));
    rules.push(staging::stage_rows_rule(default));
    rules.push(staging::stage_local_rule(default));
    rules.extend(reuse_rules(opts));
    rules.extend(regblock::reg_block_rules(opts));
    rules.push(staging::stage_rows_vec(default));
    rules.extend(reg_block_rows_rules(opts));
    rules.extend(batch_reg_block_rules(opts));
    rules.extend(tensor::mma_block_rules(opts));
    rules
}

fn var(s: &str) -> Var {
    s.parse().expect("pattern variable")
}

fn cond_split(k: i64) -> impl Fn(&mut EG, Id, &Subst) -> bool + Send + Sync {
    move |eg, _, s| {
        let (f, x) = (&eg[s[var("?f")]].data, &eg[s[var("?x")]].data);
        f.flags & HAS_MAPF == 0
            && x.len
                .as_ref()
                .is_some_and(|n| may_split(n, k, &eg.analysis.sizes, &eg.analysis.declared))
    }
}

fn pat(s: &str) -> Pattern<Lift> {
    s.parse().expect("pattern")
}

fn conditional(
    name: String,
    lhs: &str,
    rhs: String,
    cond: impl Fn(&mut EG, Id, &Subst) -> bool + Send + Sync + 'static,
) -> Rewrite<Lift, LiftAnalysis> {
    let applier = egg::ConditionalApplier {
        condition: cond,
        applier: pat(&rhs),
    };
    Rewrite::new(name, pat(lhs), applier).expect("rule")
}

/// Whether the variable `x` may occur free in none of `ids`.
fn not_free_in(eg: &EG, x: Id, ids: &[Id]) -> bool {
    symbol_of(eg, x).is_some_and(|x| ids.iter().all(|i| !eg[*i].data.free.contains(&x)))
}

/// Whether the rows of `id` are columns of a stored array: a transpose, or a zip with one.
fn columns(eg: &EG, id: Id, depth: usize) -> bool {
    depth < 4
        && eg[id].nodes.iter().any(|n| match n {
            Lift::Transpose(_) => true,
            Lift::Other(h, kids) => {
                let head = h.as_str().split('|').next().unwrap_or("");
                head == "transpose" || (head == "zip" && kids.iter().any(|k| columns(eg, *k, depth + 1)))
            }
            _ => false,
        })
}

fn symbol_of(eg: &EG, id: Id) -> Option<Symbol> {
    eg[id].nodes.iter().find_map(|n| match n {
        Lift::Sym(s) => Some(*s),
        _ => None,
    })
}

/// The matrix `m` when the class holds `transpose m`.
fn transposed_of(eg: &EG, id: Id) -> Option<Id> {
    eg[id].nodes.iter().find_map(|n| match n {
        Lift::Transpose(m) => Some(*m),
        Lift::Other(s, kids) if kids.len() == 1 && s.as_str().split('|').next() == Some("transpose") => Some(kids[0]),
        _ => None,
    })
}
