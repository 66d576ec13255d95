//! Rewrite exploration: equality saturation (egg) over high-level LIFT, extraction of distinct
//! variants, their lowering to OpenCL mappings, and a cost model that ranks them.
//!
//! Pipeline of [`explore`]:
//! 1. `encode`: the program body becomes an e-graph term (see `egraph.rs` for the encoding);
//! 2. phase 1 (algorithmic: fusion/fission, vectorization, partial reductions) and phase 2
//!    (tiling: split-join, split-map, join-split) run with iteration and node limits;
//! 3. `extract`: the smallest distinct terms of the root class;
//! 4. `lower`: each term gets its OpenCL mapping and a cost estimate and becomes an
//!    `ir::Program` directly (`build`), which is type-checked once and checked by `validate`;
//!    rejected ones are counted, the rest ranked. Their LIFT text (`ir::print`) is only for
//!    people and the tuning cache.
//!
//! Results depend only on the program and the options (egg's `deterministic` feature, no time
//! limit reaches the output unless the generous `time_limit` is hit).

pub mod build;
pub mod egraph;
pub mod encode;
pub mod extract;
pub mod lower;

use egraph::{LiftAnalysis, EG};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Options {
    /// Tuning factors for `split` (tiles, chunks of partial reductions).
    pub split_factors: Vec<i64>,
    pub vector_width: u8,
    /// Per phase.
    pub iter_limit: usize,
    pub node_limit: usize,
    pub time_limit: Duration,
    /// How many variants to keep.
    pub top_k: usize,
    /// Distinct terms kept per e-class during extraction.
    pub per_class: usize,
    /// Known sizes: divisibility side conditions are decided with them; other sizes are
    /// symbolic (a split then becomes a run-time size check) and cost `default_size`.
    pub sizes: BTreeMap<String, i64>,
    pub default_size: i64,
    /// Work-items that run at once, for the cost model.
    pub lanes: f64,
    /// Numbers of strided chunks (work-items) for partial reductions over strided chunks.
    pub stride_targets: Vec<i64>,
    /// Lengths of the tiles along the dot products of a work-group block (`ktile-*`).
    pub ktile_factors: Vec<i64>,
    /// Sizes of the 2-D work-group tiles (each dimension).
    pub tile_factors: Vec<i64>,
    /// Sizes of the square tiles of a transpose staged in local memory (`transpose-tile-*`).
    pub transpose_tiles: Vec<i64>,
    /// Most work-items in one work-group.
    pub max_group: i64,
    /// Work-group sizes of cooperative reductions (`wg-reduce-*`, `wg-partial-*`): powers of 2.
    pub wg_sizes: Vec<i64>,
    /// Elements each work-item reduces in a whole-array cooperative reduction (`wg-partial-*`),
    /// as targets: the largest divisor of the length per work-item not above each.
    pub wg_items: Vec<i64>,
    /// Only the rules whose names contain one of these (all rules when empty): to test rules
    /// one at a time.
    pub only_rules: Vec<String>,
    /// Tile lengths of an array every work-item of a group reads whole, staged in local
    /// memory tile by tile (`reuse-tiles-*`).
    pub reuse_tiles: Vec<i64>,
    /// Columns per work-group of a column-block reduction (`col-reduce-*`): consecutive
    /// work-items read consecutive columns of a row.
    pub col_blocks: Vec<i64>,
    /// Row chunks per work-group of a column-block reduction (`col-reduce-*`): the work-items
    /// that share a column.
    pub col_rows: Vec<i64>,
    /// Work-groups per block of columns of a column-block reduction (`col-reduce-*`), each
    /// over every `g`-th row; above 1, a second kernel reduces their partial results.
    pub col_groups: Vec<i64>,
    /// Numbers of work-groups of a whole-array reduction in one launch (`grid-reduce-*`):
    /// multiples of the compute units of the GPUs we run on (132 on the H200), up to the 8
    /// groups of 256 work-items that one of its compute units holds at once.
    pub grid_groups: Vec<i64>,
    /// Tile and block sizes of register-blocked matrix products (`reg-block-*`).
    pub reg_blocks: Vec<egraph::RegBlockSizes>,
    /// Rows per work-item of a map whose reduction reads an array in tiles (`reuse-tiles-T-bB`,
    /// above 1): each element read from local memory is folded into that many rows' results.
    /// Two by default: on an H200, once n-body's step lost its dead w-lane arithmetic
    /// (`bench/results/runs/nvidia-h200-2026-11-24-s8-nbody-speed2.md`), two rows per
    /// work-item in groups of 64 took 11.64 ms against 12.33 for the best one-row variant;
    /// before that they tied (13.52 against 13.44, `...-nbody.md`), and four rows lost (20.4 ms).
    pub reuse_blocks: Vec<i64>,
    /// The sizes the kernels will be built for (`lift::Options::specialise`; empty: generic
    /// kernels): variants are validated with them (`validate::validate_with`), so a private
    /// array or an unrolled loop of a length they fix is a legal variant.
    pub built_in: BTreeMap<String, i64>,
    /// Tile and block sizes of register-blocked matrix products under a map over a batch
    /// (`batch-reg-block-*`): small products, one tile each (`bench/indep/bmm.lisp`, 32³).
    pub batch_blocks: Vec<egraph::RegBlockSizes>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            split_factors: vec![4, 16, 64, 128],
            vector_width: 4,
            iter_limit: 8,
            node_limit: 20_000,
            time_limit: Duration::from_secs(60),
            top_k: 8,
            per_class: 8,
            sizes: BTreeMap::new(),
            default_size: 1024,
            lanes: 32768.0,
            only_rules: vec![],
            tile_factors: vec![4, 8, 16],
            ktile_factors: vec![8, 16, 32],
            stride_targets: vec![2048, 16384, 131072],
            max_group: 256,
            wg_sizes: vec![64, 128, 256],
            wg_items: vec![128, 1024],
            transpose_tiles: vec![16, 32],
            reuse_tiles: vec![64, 256],
            // measured on an H200 (gemv T, 8192²): 32×8 work-items beat 32×4 and 64×4, and
            // larger work-groups were refused there (256 at most for this kernel); 4 groups per
            // block of columns beat 8, 2 and 1
            col_blocks: vec![32],
            col_rows: vec![8],
            col_groups: vec![1, 4, 8],
            grid_groups: vec![264, 528, 1056],
            reg_blocks: [
                (128, 128, 8, 8, 16),
                (128, 128, 8, 8, 8),
                (64, 64, 4, 4, 16),
                (128, 64, 8, 4, 16),
                (64, 128, 8, 8, 8),
                (128, 64, 8, 8, 8),
            ]
            .map(|(tm, tn, rm, rn, tk)| egraph::RegBlockSizes { tm, tn, rm, rn, tk })
            .to_vec(),
            reuse_blocks: vec![2],
            built_in: BTreeMap::new(),
            // a 32 × 32 product per work-group: 256 work-items of 1 × 4 outputs, or 128 of
            // 2 × 4; 64 × 64 products by 256 work-items of 4 × 4
            batch_blocks: [(32, 32, 1, 4, 32), (32, 32, 2, 4, 32), (64, 64, 4, 4, 16)]
                .map(|(tm, tn, rm, rn, tk)| egraph::RegBlockSizes { tm, tn, rm, rn, tk })
                .to_vec(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Variant {
    /// The low-level program, type-checked and accepted by `validate`.
    pub program: ir::Program,
    pub info: typeck::TypeInfo,
    /// Its LIFT source (`ir::print::program`), for `lift explore`, `--emit` and the tuning cache.
    pub source: String,
    pub cost: f64,
    pub description: String,
}

/// Variants are equal when their programs print the same (types follow from the program).
impl PartialEq for Variant {
    fn eq(&self, other: &Variant) -> bool {
        self.source == other.source && self.cost == other.cost && self.description == other.description
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub nodes: usize,
    pub classes: usize,
    pub iterations: usize,
    pub stop_reason: String,
    /// Extracted terms whose lowering failed type checking or validation.
    pub rejected: usize,
    /// Extracted terms before lowering and deduplication.
    pub extracted: usize,
    /// Why each rejected term was rejected (`lowering: `, `types: ` or `validation: ` and the
    /// message, then the term on a line of its own), in extraction order: a lowering that does not type-check is a bug of a rule or
    /// of `lower` that would otherwise only shrink the explored space (the differential
    /// fuzzer's variants mode reports these).
    pub rejections: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Exploration {
    pub variants: Vec<Variant>,
    pub stats: Stats,
}

impl fmt::Display for Exploration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        writeln!(
            f,
            "e-graph: {} nodes, {} classes, {} iterations, stopped: {}",
            s.nodes, s.classes, s.iterations, s.stop_reason
        )?;
        writeln!(
            f,
            "variants: {} kept of {} extracted terms ({} rejected by type checking or validation)",
            self.variants.len(),
            s.extracted,
            s.rejected
        )?;
        for (i, v) in self.variants.iter().enumerate() {
            writeln!(f, "\n;; variant {i}: estimated cost {:.1}", v.cost)?;
            writeln!(f, ";; {}", v.description)?;
            f.write_str(&v.source)?;
        }
        Ok(())
    }
}

fn stop_text(r: &Option<egg::StopReason>) -> String {
    match r {
        Some(egg::StopReason::Saturated) => "saturated".into(),
        Some(egg::StopReason::IterationLimit(n)) => format!("iteration limit {n}"),
        Some(egg::StopReason::NodeLimit(n)) => format!("node limit {n}"),
        Some(egg::StopReason::TimeLimit(t)) => format!("time limit {t:.1}s"),
        Some(egg::StopReason::Other(s)) => s.clone(),
        None => "not run".into(),
    }
}

/// The saturated e-graph and its root, for inspection and tests.
pub fn saturate(prog: &ir::Program, info: &typeck::TypeInfo, opts: &Options) -> (EG, egg::Id, encode::Encoded, Stats) {
    let enc = encode::encode(prog, info);
    let analysis = LiftAnalysis {
        leaves: enc.leaves.clone(),
        sizes: opts.sizes.clone(),
        declared: prog.sizes.clone(),
        params: prog
            .params
            .iter()
            .map(|p| egg::Symbol::from(enc.names[p.var.index()].as_str()))
            .collect(),
    };
    let mut eg = EG::new(analysis);
    let root = eg.add_expr(&enc.expr);
    eg.rebuild();
    let mut stats = Stats::default();
    let mut reasons = vec![];
    for (name, rules) in [
        ("algorithmic", egraph::algorithmic_rules(opts)),
        ("tiling", egraph::tiling_rules(opts)),
        ("work-group reductions", egraph::wg_reduce_rules(opts)),
        ("work-groups", egraph::workgroup_rules(opts)),
        ("sequential", egraph::sequential_rules(opts)),
        ("column reductions", egraph::col_reduce_rules(opts)),
    ] {
        let rules: Vec<_> = rules
            .into_iter()
            .filter(|r| {
                opts.only_rules.is_empty() || opts.only_rules.iter().any(|o| r.name.as_str().contains(o.as_str()))
            })
            .collect();
        let runner = egg::Runner::default()
            .with_egraph(eg)
            .with_iter_limit(opts.iter_limit)
            .with_node_limit(opts.node_limit)
            .with_time_limit(opts.time_limit)
            .with_scheduler(egg::SimpleScheduler)
            .run(&rules);
        stats.iterations += runner.iterations.len();
        reasons.push(format!("{name}: {}", stop_text(&runner.stop_reason)));
        eg = runner.egraph;
    }
    stats.nodes = eg.total_number_of_nodes();
    stats.classes = eg.number_of_classes();
    stats.stop_reason = reasons.join(", ");
    let root = eg.find(root);
    (eg, root, enc, stats)
}

/// Explores rewrites of a high-level program; see the crate docs.
pub fn explore(prog: &ir::Program, info: &typeck::TypeInfo, opts: &Options) -> Result<Exploration, ir::Diagnostic> {
    let (eg, root, enc, mut stats) = saturate(prog, info, opts);
    let terms = extract::top_terms(&eg, root, opts.per_class, opts.per_class * 24, 30);
    // one row a work-item only: a two-row sibling changed n-body's first variant (groups of
    // 128 instead of the 64 timed best on the H200) without a measurement
    let one_row: Vec<(i64, i64)> = egraph::reuse_tilings(opts)
        .into_iter()
        .filter(|&(_, b)| b == 1)
        .collect();
    let terms = extract::with_tile_siblings(terms, &one_row, |n, t| {
        egraph::may_split(n, t, &eg.analysis.sizes, &eg.analysis.declared)
    });
    stats.extracted = terms.len();
    let names = ir::print::var_names(prog);
    let mut seen = BTreeSet::new();
    let mut variants = vec![];
    for t in &terms {
        let t = lower::simplify(t);
        let mut low = lower::Lowerer {
            text: &enc.text,
            origin: &enc.origin,
            b: build::Builder::new(prog, info, &names),
            taken: enc.names.iter().cloned().collect(),
            sizes: &opts.sizes,
            default_size: opts.default_size,
            lanes: opts.lanes,
            fresh: 0,
            notes: vec![],
        };
        let (body, cost) = low.host(&t);
        let program = match low.b.finish(body) {
            Ok(p) => p,
            Err(why) => {
                stats.rejected += 1;
                stats.rejections.push(format!("lowering: {why}\n{}", t.sexp()));
                continue;
            }
        };
        // The flat text of the body identifies a variant (as its printed program would) and
        // breaks ties in cost; the laid-out text costs more than building and checking the
        // variant, so only the kept ones are printed.
        let key = encode::subtree_text(&program, &ir::print::var_names(&program), program.body);
        // terms that lower to one program up to its binders' names are one variant: an `rblock`
        // lowered as the map it marks, a `let` moved into a reduction (`encode::canonical_names`)
        let same = encode::subtree_text(&program, &encode::canonical_names(&program), program.body);
        if !seen.insert(same) {
            continue;
        }
        let info = match legal(&program, &opts.built_in) {
            Ok(info) => info,
            Err(why) => {
                stats.rejected += 1;
                stats.rejections.push(format!("{why}\n{}", t.sexp()));
                continue;
            }
        };
        let mut notes = low.notes.clone();
        notes.dedup();
        variants.push(Variant {
            program,
            info,
            source: key,
            cost,
            description: format!("{} | {}", notes.join("; "), t.sexp()),
        });
    }
    variants.sort_by(|a, b| a.cost.total_cmp(&b.cost).then_with(|| a.source.cmp(&b.source)));
    let mut variants = keep_diverse(variants, opts.top_k.max(1));
    for v in &mut variants {
        v.source = ir::print::program(&v.program);
    }
    if variants.is_empty() {
        return Err(ir::Diagnostic::new(
            prog.span(prog.body),
            "rewrite exploration found no variant that compiles",
        ));
    }
    Ok(Exploration { variants, stats })
}

/// The `k` cheapest variants, but first the cheapest of each mapping family (the mapping
/// notes without their numbers), so an estimate that is off for one family cannot hide the
/// others from `lift tune`. Keeps the cost order.
fn keep_diverse(sorted: Vec<Variant>, k: usize) -> Vec<Variant> {
    // numbers keep only their order of magnitude: 16000 and 125000 work-items differ in kind
    // on a GPU, 16 and 64 do not
    let family = |v: &Variant| -> String {
        let notes = v.description.split(" | ").next().unwrap_or("");
        let mut out = String::new();
        let mut digits = 0;
        for c in notes.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_digit() {
                digits += 1;
                continue;
            }
            if digits > 0 {
                out.push_str(&format!("#{}", (digits + 1) / 2));
                digits = 0;
            }
            out.push(c);
        }
        out
    };
    let mut seen = BTreeSet::new();
    let mut keep: Vec<bool> = sorted.iter().map(|v| seen.insert(family(v))).collect();
    let mut room = k.saturating_sub(keep.iter().filter(|x| **x).count());
    for x in keep.iter_mut() {
        if !*x && room > 0 {
            *x = true;
            room -= 1;
        }
    }
    let mut out: Vec<Variant> = sorted
        .into_iter()
        .zip(keep)
        .filter(|(_, x)| *x)
        .map(|(v, _)| v)
        .collect();
    out.truncate(k);
    out
}

/// The types of a variant, when it type-checks and is legal for the OpenCL back end; else why
/// not (`types: ` or `validation: ` and the first message).
fn legal(program: &ir::Program, built_in: &BTreeMap<String, i64>) -> Result<typeck::TypeInfo, String> {
    let info = typeck::infer(program).map_err(|d| format!("types: {}", d.message))?;
    validate::validate_with(program, &info, built_in).map_err(|ds| {
        format!(
            "validation: {}",
            ds.first().map_or("(no message)", |d| d.message.as_str())
        )
    })?;
    Ok(info)
}

#[cfg(test)]
mod tests;
