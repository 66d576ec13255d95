//! Rewrite exploration: equality saturation (egg) over high-level LIFT, extraction of distinct
//! variants, their lowering to OpenCL mappings, and a cost model that ranks them.
//!
//! Pipeline of [`explore`]:
//! 1. `encode`: the program body becomes an e-graph term (`egraph` holds the language, its
//!    encoding and the analysis);
//! 2. the phases of `rules` (algorithmic, tiling, work-group reductions, work-groups,
//!    sequential, column reductions) run in turn with iteration and node limits;
//! 3. `extract`: the smallest distinct terms of the root class;
//! 4. `lower`: each term gets its OpenCL mapping and a cost estimate (`cost`) and becomes an
//!    `ir::Program` directly (`build`), which is type-checked once and checked by `validate`;
//!    rejected ones are counted, the rest ranked. Their LIFT text (`ir::print`) is only for
//!    people and the tuning cache.
//!
//! Modules depend downwards only: `sizes` ← `egraph` ← `rules`, `encode`, `extract`;
//! `sizes` ← `cost` ← `lower` (with `extract`, `build`, `encode`); `options` ← `rules`; the
//! crate root runs them.
//!
//! Results depend only on the program and the options (egg's `deterministic` feature, no time
//! limit reaches the output unless the generous `time_limit` is hit).

pub mod build;
pub mod cost;
pub mod egraph;
pub mod encode;
pub mod extract;
pub mod lower;
pub mod normalise;
mod options;
pub mod rules;
pub mod sizes;
pub mod stencil_sizes;

use egraph::{LiftAnalysis, EG};
pub use normalise::split_tuple_lets;
pub use options::Options;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

#[derive(Clone, Debug)]
pub struct Variant {
    /// The low-level program, type-checked and accepted by `validate`.
    pub program: ir::Program,
    pub info: typeck::TypeInfo,
    /// Its LIFT source (`ir::print::program`), for `lift explore`, `--emit` and the tuning cache.
    pub source: String,
    pub cost: f64,
    /// Its kernels: how many, the bytes they read and write (`cost::time`).
    pub kernels: cost::time::Kernels,
    /// The estimated time in milliseconds on an H200-class device (`cost::time`): from the cost
    /// and the kernels, no less than a cheaper variant's.
    pub ms: f64,
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
            writeln!(
                f,
                "\n;; variant {i}: estimated cost {:.1}, about {:.4} ms ({} kernels, {} bytes read and written, {} scalars written)",
                v.cost, v.ms, v.kernels.count, v.kernels.bytes, v.kernels.written
            )?;
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
        components: enc.components.clone(),
    };
    let mut eg = EG::new(analysis);
    let root = eg.add_expr(&enc.expr);
    eg.rebuild();
    let mut stats = Stats::default();
    let mut reasons = vec![];
    for (name, rules) in [
        ("algorithmic", rules::algorithmic_rules(opts)),
        ("tiling", rules::tiling_rules(opts)),
        ("work-group reductions", rules::wg_reduce_rules(opts)),
        ("work-groups", rules::workgroup_rules(opts)),
        ("sequential", rules::sequential_rules(opts)),
        ("column reductions", rules::col_reduce_rules(opts)),
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
    // variants are built from the normalised program (its nodes are their leaves)
    let normal = opts.normalise.then(|| normalise::normalise(prog, info)).flatten();
    let (prog, info) = normal.as_ref().map_or((prog, info), |(p, i)| (p, i));
    // the other side of the equalities the cost decides (`normalise_tuple`): its variants
    // compete with the normal form's
    let other = opts.normalise.then(|| normalise::alternative(prog, info)).flatten();
    let mut seen = BTreeSet::new();
    let (mut variants, mut stats) = lowered(prog, info, opts, &mut seen);
    if let Some((p, i)) = &other {
        let (more, s) = lowered(p, i, opts, &mut seen);
        variants.extend(more);
        stats.nodes += s.nodes;
        stats.classes += s.classes;
        stats.iterations += s.iterations;
        stats.stop_reason = format!("{}; the split reductions: {}", stats.stop_reason, s.stop_reason);
        stats.rejected += s.rejected;
        stats.extracted += s.extracted;
        stats.rejections.extend(s.rejections);
    }
    variants.sort_by(|a, b| a.cost.total_cmp(&b.cost).then_with(|| a.source.cmp(&b.source)));
    let mut variants = keep_diverse(variants, opts.top_k.max(1));
    let ms = cost::time::ordered(variants.iter().map(|v| v.ms));
    for (v, ms) in variants.iter_mut().zip(ms) {
        v.source = ir::print::program(&v.program);
        v.ms = ms;
    }
    if variants.is_empty() {
        return Err(ir::Diagnostic::new(
            prog.span(prog.body),
            "rewrite exploration found no variant that compiles",
        ));
    }
    Ok(Exploration { variants, stats })
}

/// The variants of one program: saturated, extracted and lowered (those `seen` already left
/// out), unsorted.
fn lowered(
    prog: &ir::Program,
    info: &typeck::TypeInfo,
    opts: &Options,
    seen: &mut BTreeSet<String>,
) -> (Vec<Variant>, Stats) {
    let (eg, root, enc, mut stats) = saturate(prog, info, opts);
    let mut terms = extract::top_terms(&eg, root, opts.per_class, opts.per_class * 24, 30);
    terms.extend(rules::stencil::stencil_terms(&eg, root, opts, &mut stats));
    // one row a work-item only: a two-row sibling changed n-body's first variant (groups of
    // 128 instead of the 64 timed best on the H200) without a measurement
    let one_row: Vec<(i64, i64)> = rules::reuse_tilings(opts)
        .into_iter()
        .filter(|&(_, b)| b == 1)
        .collect();
    let terms = extract::with_tile_siblings(terms, &one_row, |n, t| {
        sizes::may_split(n, t, &eg.analysis.sizes, &eg.analysis.declared)
    });
    stats.extracted = terms.len();
    let names = ir::print::var_names(prog);
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
        let kernels = cost::time::Kernels::of(&program, &info, &opts.sizes, opts.default_size);
        let mut notes = low.notes.clone();
        notes.dedup();
        variants.push(Variant {
            program,
            info,
            source: key,
            cost,
            kernels,
            ms: kernels.ms(cost),
            description: format!("{} | {}", notes.join("; "), t.sexp()),
        });
    }
    (variants, stats)
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
mod scan_tests;
#[cfg(test)]
mod tests;
