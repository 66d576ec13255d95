//! One program over MPI ranks (`mpirun -n R lift run … --mpi`), one device each: the second
//! transport of the `--devices` planner. The split is the planner's ([`decide`], [`slices`],
//! [`crate::host_loop`]): rank `r` takes slice `r`, as device `r` would. What differs is how
//! values travel: between processes, as bytes ([`wire`]), instead of between threads.
//!
//! Here, with no MPI needed: what a host loop's step reads of the state ([`state_reads`], so
//! that between steps a rank receives only the rows its next step reads: everything for
//! n-body, its neighbours' halo rows for a stencil of `slide`/`pad`), and the plan that
//! `lift compile --emit plan --mpi R` prints ([`describe`]), and which convergence loops each
//! rank can test on its own rows ([`until`]). The transport itself (feature `mpi`, rsmpi over
//! the system's MPI) is `transport` (the byte collectives, agreement on failures), `bytes`
//! (inputs and parts as device-buffer bytes), `combine` (a reduction by `MPI_Reduce`),
//! `compile` (a slice's variant chosen once), `exec` (running, `lift bench --mpi`), `steps`
//! and `halo` (host loops).

pub mod until;
pub mod wire;

#[cfg(feature = "mpi")]
mod bytes;
#[cfg(feature = "mpi")]
mod combine;
#[cfg(feature = "mpi")]
mod compile;
#[cfg(feature = "mpi")]
mod exec;
#[cfg(feature = "mpi")]
mod halo;
#[cfg(feature = "mpi")]
mod steps;
#[cfg(feature = "mpi")]
mod transport;
#[cfg(feature = "mpi")]
pub use exec::{bench, run_files, Choice, Outcome};

use crate::run::*;
use crate::*;
use ir::interp::Value;
use ir::{Expr, Prim};
use lift_compile::{Error, Options};
use lift_data::Inputs;
use std::collections::BTreeMap;
use std::ops::Range;
pub use until::{until_loop, Until};

/// What a host loop's step reads of its state, beyond the slice it computes.
#[derive(Clone, Debug, PartialEq)]
pub enum Reads {
    /// Every rank reads the whole state (n-body: each body against every body): all-gather.
    Whole(String),
    /// Windows `lo..hi` of the split read rows `lo·t − shift .. (hi−1)·t + s − shift` of the
    /// state (clamped to it) for each `((s, t), shift)`: a `slide` over the state, `shift` its
    /// left padding (`pad`, `pad-clamp`); plain rows are `((1, 1), 0)`.
    Rows(Vec<((usize, usize), usize)>),
}

/// What the step `step` (the state being its given parameter `state`) reads of the state.
pub fn state_reads(step: &Split, state: usize) -> Reads {
    let mut rows = vec![];
    for t in &step.params {
        match t {
            Take::Whole(k) if *k == state => {
                return Reads::Whole("each step reads the whole state (as n-body's forces do)".into())
            }
            Take::Cut {
                param,
                dim,
                window,
                pre,
                ..
            } if *param == state => {
                if *dim != 0 {
                    return Reads::Whole("each step's slice is a set of the state's columns (`transpose`)".into());
                }
                let shift = match pre {
                    None => 0,
                    Some(src) => match left_padding(src) {
                        Some(l) => l,
                        None => {
                            return Reads::Whole(
                                "the state's layout below the cut is more than a padding (`pad`, `pad-clamp`)".into(),
                            )
                        }
                    },
                };
                rows.push((*window, shift));
            }
            Take::Whole(_) | Take::Cut { .. } => {}
        }
    }
    Reads::Rows(rows)
}

/// The left padding of a layout program made only of `pad`/`pad-clamp` of its one parameter's
/// outer dimension with constant amounts.
fn left_padding(src: &str) -> Option<usize> {
    let prog = ir::parse(src).ok()?;
    let mut e = prog.body;
    let mut shift = 0usize;
    loop {
        match prog.expr(e) {
            // (`pad`'s arguments are its value and the array; `pad-clamp`'s the array)
            Expr::Prim {
                prim: Prim::Pad(l, _) | Prim::PadClamp(l, _),
                args,
            } => {
                shift += usize::try_from(l.as_cst()?).ok()?;
                e = *args.last().expect("an array argument");
            }
            Expr::Var(v) if prog.params.first().is_some_and(|p| p.var == *v) => return Some(shift),
            _ => return None,
        }
    }
}

/// For each parameter of `split`'s slice program, whether the program never reads it (a loop
/// step's copy of an input only the loop's start reads): no rank needs its value.
pub fn unread(split: &Split) -> Result<Vec<bool>, Error> {
    let prog = ir::parse(&split.slice_src)?;
    Ok(prog
        .params
        .iter()
        .map(|p| crate::decide::reachable_uses(&prog, p.var) == 0)
        .collect())
}

/// The rows of a state of `n` rows that each rank's next step reads, for split ranges `ranges`
/// (an empty range reads nothing).
pub fn needs(reads: &Reads, ranges: &[Range<usize>], n: usize) -> Vec<Range<usize>> {
    ranges
        .iter()
        .map(|r| {
            if r.is_empty() {
                return 0..0;
            }
            match reads {
                Reads::Whole(_) => 0..n,
                Reads::Rows(rows) => rows
                    .iter()
                    .map(|&((s, t), shift)| {
                        let lo = (r.start * t).saturating_sub(shift).min(n);
                        let hi = ((r.end - 1) * t + s).saturating_sub(shift).min(n);
                        lo..hi.max(lo)
                    })
                    .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end))
                    .unwrap_or(0..0),
            }
        })
        .collect()
}

/// The text `lift compile --emit plan --mpi R` prints: the split over the ranks, what is
/// scattered, broadcast and gathered, a host loop's exchange per step, and the slice program's
/// kernels. With `sizes`, each rank's range and the bytes it receives.
pub fn describe(src: &str, ranks: usize, sizes: &[String]) -> Result<String, Error> {
    if ranks == 0 {
        return Err(Error::plain("--mpi 0: a run needs at least one rank"));
    }
    let typed = lift_compile::compile(src, &Options::types_only())?;
    let mut out = format!(
        "ranks: {ranks} (`mpirun -n {ranks} lift run … --mpi`), one process each on its own device (by \
         default rank r takes its host's device r mod their count; `--device`/`--devices` choose among \
         them); rank 0 reads the data and prints the result\n"
    );
    let inputs = if sizes.is_empty() {
        None
    } else {
        let given: BTreeMap<String, i64> = lift_compile::parse_sizes(sizes)?.into_iter().collect();
        let inputs = lift_data::random_inputs(&typed.given, &given, 42)?;
        lift_runtime::verify_checks(&typed.given_info, &inputs)?;
        Some(inputs)
    };
    match decide(&typed.given, &typed.given_info) {
        Decision::Split(s) => describe_split(&mut out, &s, ranks, inputs.as_ref())?,
        Decision::Whole(why) => match host_loop_or_why(&typed.given, &typed.given_info)
            .map(|hl| (hl, None))
            .or_else(|e| match e {
                None => until_loop(&typed.given, &typed.given_info).map(|(hl, u)| (hl, Some(u))),
                Some(why) => Err(Some(why)),
            }) {
            Ok((hl, until)) => {
                let state = typed.given.params.len();
                out.push_str(&format!(
                    "host loop: {} steps, each split over the ranks; each rank keeps its slice program and \
                     buffers on its device between steps\n",
                    hl.steps
                ));
                let step_inputs = inputs.map(|mut ins| {
                    ins.values.push(ins.values[hl.init].clone());
                    ins
                });
                describe_split(&mut out, &hl.step, ranks, step_inputs.as_ref())?;
                describe_exchange(&mut out, &hl, state, ranks, step_inputs.as_ref())?;
                if let Some(u) = until {
                    out.push_str(&format!(
                        "convergence test after each step: each rank tests its own rows of the previous and the new \
                         state (the condition with {} set to its rows); one all-reduce of the ranks' verdicts \
                         (MPI_Allreduce, MPI_MIN) decides the exit, at most {} steps\n",
                        u.size, hl.steps
                    ));
                }
            }
            Err(looped) => {
                out.push_str(&format!(
                    "not split: {}; rank 0 runs the whole program on its device, the other ranks wait\n",
                    looped.map_or(why, |w| format!("a host loop whose step is not split ({w})"))
                ));
                out.push_str(&lift_compile::compile(src, &Options::default())?.text(lift_compile::Emit::Plan)?);
            }
        },
    }
    Ok(out)
}

fn describe_split(out: &mut String, s: &Split, ranks: usize, inputs: Option<&Inputs>) -> Result<(), Error> {
    out.push_str(&format!(
        "split: {size} into {ranks} contiguous slices of length {part}, the `--devices` planner's: equal \
         for ranks on identical devices, else in proportion to each rank's measured speed\n",
        size = s.size,
        part = s.part,
    ));
    let ranges = match inputs {
        Some(ins) => Some(slices(split_len(s, &ins.sizes)?, &vec![1.0; ranks])),
        None => None,
    };
    for r in 0..ranks {
        match &ranges {
            Some(rs) => {
                let bytes = slice_bytes(s, inputs.expect("sizes given"), &rs[r])?;
                out.push_str(&format!(
                    "  rank {r}: {}..{} (receives {} of sliced inputs)\n",
                    rs[r].start,
                    rs[r].end,
                    human(bytes)
                ));
            }
            None => out.push_str(&format!("  rank {r}: slice {r}\n")),
        }
    }
    out.push_str(&format!(
        "scattered from rank 0 by {} (each rank receives only its slice; MPI_Scatterv): {}\n",
        s.size,
        s.sliced.join(", ")
    ));
    for note in &s.notes {
        out.push_str(&format!("  {note}\n"));
    }
    let unread = unread(s)?;
    let given_names = given_names(s);
    let (mut sent, mut made) = (vec![], vec![]);
    for (t, u) in s.params.iter().zip(&unread) {
        if let Take::Whole(k) = t {
            let name = given_names.get(*k).cloned().unwrap_or_else(|| format!("#{k}"));
            if *u {
                made.push(name)
            } else {
                sent.push(name)
            }
        }
    }
    if !sent.is_empty() {
        out.push_str(&format!(
            "broadcast whole from rank 0 (MPI_Bcast): {}\n",
            sent.join(", ")
        ));
    }
    if !made.is_empty() {
        out.push_str(&format!(
            "not sent (the slice program declares it and never reads it; each rank makes zeros): {}\n",
            made.join(", ")
        ));
    }
    match &s.gather {
        Gather::Concat => out.push_str(
            "gathered on rank 0: the parts concatenated in rank order (MPI_Gatherv; a filter's parts carry \
             their lengths)\n",
        ),
        Gather::Reduce { .. } => out.push_str(
            "combined on rank 0: one partial per rank, by MPI_Reduce with the reduction's operator (`+`: MPI_SUM, \
             `*`: MPI_PROD; partials of vectors are gathered and combined there by the program's reduction)\n",
        ),
        Gather::Finish { name, .. } => out.push_str(&format!(
            "gathered on rank 0: the parts of `{name}` (each rank's partial results) concatenated in rank \
             order (MPI_Gatherv); the rest of the program (the final combination) runs on rank 0\n"
        )),
    }
    out.push_str("each rank runs:\n");
    let slice = lift_compile::compile(&s.slice_src, &Options::default())?;
    out.push_str(&slice.text(lift_compile::Emit::Plan)?);
    Ok(())
}

/// The given program's parameter names by index, as far as the split names them.
fn given_names(s: &Split) -> Vec<String> {
    let mut names = vec![String::new(); s.sliced.len() + s.whole.len()];
    // (`sliced` and `whole` partition the given parameters; their order is the given order)
    let (mut i, mut j) = (0, 0);
    for slot in names.iter_mut() {
        let k = i + j;
        let cut = s
            .params
            .iter()
            .any(|t| matches!(t, Take::Cut { param, .. } if *param == k));
        if cut && i < s.sliced.len() {
            *slot = s.sliced[i].clone();
            i += 1;
        } else if j < s.whole.len() {
            *slot = s.whole[j].clone();
            j += 1;
        }
    }
    names
}

fn describe_exchange(
    out: &mut String,
    hl: &HostLoop,
    state: usize,
    ranks: usize,
    inputs: Option<&Inputs>,
) -> Result<(), Error> {
    let reads = state_reads(&hl.step, state);
    let reduced = matches!(hl.step.gather, Gather::Reduce { .. });
    match (&reads, reduced) {
        (_, true) => out.push_str(
            "between steps: every rank's partial goes to every rank (MPI_Allgatherv), each combines them \
             into the next state\n",
        ),
        (Reads::Whole(why), false) => out.push_str(&format!(
            "between steps: all-gather (MPI_Allgatherv): {why}, so every rank receives every other rank's \
             part\n"
        )),
        (Reads::Rows(_), false) => out.push_str(
            "between steps: halo exchange (MPI point-to-point): each rank receives, from the ranks that \
             computed them, only the rows of the new state its next step reads beyond its own\n",
        ),
    }
    if let Some(ins) = inputs {
        let n = split_len(&hl.step, &ins.sizes)?;
        let ranges = slices(n, &vec![1.0; ranks]);
        let Value::Array(rows) = &ins.values[state] else {
            return Err(Error::plain("internal: a host loop's state is not an array"));
        };
        let row = rows.first().map_or(0, wire::payload);
        let wanted = needs(&reads, &ranges, rows.len());
        for (r, (want, own)) in wanted.iter().zip(&ranges).enumerate() {
            // (the state's rows as the step's map makes them: row i from window i)
            let extra = if reduced {
                ranks.saturating_sub(1) * row
            } else {
                (want.len() - overlap(want, own).len()) * row
            };
            out.push_str(&format!(
                "  rank {r}: receives {} per step (rows {}..{} read, {}..{} its own)\n",
                human(extra),
                want.start,
                want.end,
                own.start,
                own.end
            ));
        }
    }
    out.push_str("after the last step: the parts gathered on rank 0 (MPI_Gatherv)\n");
    Ok(())
}

pub(crate) fn overlap(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    let lo = a.start.max(b.start);
    lo..a.end.min(b.end).max(lo)
}

/// The bytes rank of slice `r` receives of the sliced inputs.
fn slice_bytes(s: &Split, inputs: &Inputs, r: &Range<usize>) -> Result<usize, Error> {
    let mut total = 0;
    for t in s.params.iter().filter(|t| matches!(t, Take::Cut { .. })) {
        total += wire::payload(&take(t, &|k| &inputs.values[k], &inputs.sizes, r)?);
    }
    Ok(total)
}

pub(crate) fn human(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.2} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step_reads(src: &str) -> Reads {
        let typed = lift_compile::compile(src, &Options::types_only()).expect("types");
        let hl = host_loop(&typed.given, &typed.given_info).expect("the step splits");
        state_reads(&hl.step, typed.given.params.len())
    }

    #[test]
    fn a_stencil_loop_reads_its_neighbours_halo_rows() {
        let src = "(lift (N K) ((array-type float N))
          (lambda (xs)
            (iterate K
              (lambda (s)
                (join (mapGlb (lambda (w) (toGlobal (mapSeq (lambda (t) (* t 0.25f)) (reduceSeq + 0.0f w))))
                              (slide #3 #1 (pad-clamp #1 #1 s)))))
              xs)))";
        let reads = step_reads(src);
        assert_eq!(reads, Reads::Rows(vec![((3, 1), 1)]));
        // 10 rows over 3 ranks: each reads one row on each side of its own, none beyond the ends.
        let ranges = slices(10, &[1.0, 1.0, 1.0]);
        assert_eq!(ranges, vec![0..3, 3..7, 7..10]);
        assert_eq!(needs(&reads, &ranges, 10), vec![0..4, 2..8, 6..10]);
        // Without padding, windows 3..5 of a slide of 3 read rows 3..7.
        assert_eq!(
            needs(&Reads::Rows(vec![((3, 1), 0)]), &[0..3, 3..5], 7),
            vec![0..5, 3..7]
        );
    }

    #[test]
    fn an_all_pairs_loop_reads_the_whole_state() {
        let src = "(lift (N K) ((array-type float N))
          (lambda (xs)
            (iterate K
              (lambda (s)
                (join (mapGlb (lambda (x)
                                (mapSeq (lambda (t) (+ (* x 0.5f) (* t 0.01f)))
                                        (reduceSeq (lambda (acc y) (+ acc y)) 0.0f s)))
                              s)))
              xs)))";
        let reads = step_reads(src);
        assert!(matches!(reads, Reads::Whole(_)), "{reads:?}");
        assert_eq!(needs(&reads, &[0..2, 2..2, 2..5], 5), vec![0..5, 0..0, 0..5]);
    }

    #[test]
    fn the_plan_over_ranks_shows_scatter_broadcast_and_the_exchange() {
        let mm = "(lift (M K N)
          ((array-type (array-type float K) M) (array-type (array-type float N) K))
          (lambda (a b)
            (map (lambda (row)
                   (join (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col))))
                              (transpose b))))
                 a)))";
        let text = describe(mm, 3, &["M=6".into(), "K=4".into(), "N=5".into()]).expect("a plan");
        assert!(text.contains("rank 2: 4..6 (receives 32 B of sliced inputs)"), "{text}");
        assert!(text.contains("MPI_Scatterv): a\n"), "{text}");
        assert!(text.contains("broadcast whole from rank 0 (MPI_Bcast): b\n"), "{text}");
        let stencil = "(lift (N K) ((array-type float N))
          (lambda (xs)
            (iterate K
              (lambda (s)
                (join (mapGlb (lambda (w) (toGlobal (mapSeq (lambda (t) (* t 0.25f)) (reduceSeq + 0.0f w))))
                              (slide #3 #1 (pad-clamp #1 #1 s)))))
              xs)))";
        let text = describe(stencil, 2, &["N=10".into(), "K=3".into()]).expect("a plan");
        assert!(text.contains("halo exchange"), "{text}");
        // Rank 0 reads row 5 of rank 1 (one float), rank 1 row 4; the loop's input is not sent.
        assert!(text.contains("each rank makes zeros): xs\n"), "{text}");
        assert!(
            text.contains("rank 0: receives 4 B per step (rows 0..6 read, 0..5 its own)"),
            "{text}"
        );
        assert!(
            text.contains("rank 1: receives 4 B per step (rows 4..10 read, 5..10 its own)"),
            "{text}"
        );
        assert!(describe(stencil, 0, &[]).is_err());
    }
}
