//! Reduction rules: partial reductions over chunks (consecutive or strided), whole-array
//! reductions in one launch (`grid-reduce-*`), column-block reductions across the rows of a
//! matrix (`col-reduce-*`) and unrolled sequential reductions. Each needs its operator
//! associative (and, where chunks are combined out of order, commutative) with a neutral
//! element: `neutral_of`.

use super::{conditional, pat, symbol_of, transposed_of, var};
use crate::egraph::{neutral_of, Assoc, Lift, LiftAnalysis, EG, FLOAT_ELEMS, ZERO_PRODUCT};
use crate::sizes::{estimate, may_split, MAX_UNROLL};
use arith::ArithExpr;
use egg::{Applier, Id, PatternAst, Rewrite, Subst, Symbol};

/// `partial-reduce-strided-{target}` for each of `Options::stride_targets`.
pub fn strided_partial_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.stride_targets
        .iter()
        .map(|&target| {
            Rewrite::new(
                format!("partial-reduce-strided-{target}"),
                pat("(reduce ?f ?z ?x)"),
                StridedPartial { target },
            )
            .expect("rule")
        })
        .collect()
}

/// `partial-reduce-{k}` for each of `Options::split_factors`.
pub fn partial_reduce_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.split_factors
        .iter()
        .map(|&k| {
            // reduce f z xs = reduce f z (join (map (reducef f z) (split k xs))), f associative,
            // z its neutral element (any z for min/max), k | len(xs)
            conditional(
                format!("partial-reduce-{k}"),
                "(reduce ?f ?z ?x)",
                format!("(reduce ?f ?z (join (map (reducef ?f ?z) (split {k} ?x))))"),
                move |eg: &mut EG, _: Id, s: &Subst| {
                    let (f, z, x) = (&eg[s[var("?f")]].data, &eg[s[var("?z")]].data, &eg[s[var("?x")]].data);
                    neutral_of(f, z)
                        && x.partial < 2
                        && x.len
                            .as_ref()
                            .is_some_and(|n| may_split(n, k, &eg.analysis.sizes, &eg.analysis.declared))
                },
            )
        })
        .collect()
}

/// Partial reduction over strided chunks: `reduce f z xs` =
/// `reduce f z (join (map (reducef f z) (transpose (split s xs))))`: chunk `i` holds
/// `xs[i], xs[i+s], ...`, so the `s` work-items that reduce the chunks read consecutive
/// elements at every step (coalesced). Needs `f` commutative as well as associative (all the
/// operators we recognise are). `s` is the largest divisor of a known length not above
/// `target`, or `target` itself for a symbolic length (checked at run time).
struct StridedPartial {
    target: i64,
}

impl Applier<Lift, LiftAnalysis> for StridedPartial {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, z, x) = (s[var("?f")], s[var("?z")], s[var("?x")]);
        let (fd, zd, xd) = (&eg[f].data, &eg[z].data, &eg[x].data);
        if !neutral_of(fd, zd) || xd.partial >= 2 {
            return vec![];
        }
        let Some(n) = xd.len.clone() else { return vec![] };
        let an = &eg.analysis;
        let chunks = match n.eval(&|v| an.sizes.get(v).copied()) {
            Ok(n) => (2..=self.target.min(n / 2)).rev().find(|d| n % d == 0),
            Err(_) => may_split(&n, self.target, &an.sizes, &an.declared).then_some(self.target),
        };
        let Some(chunks) = chunks else { return vec![] };
        let k = eg.add(Lift::Num(chunks));
        let split = eg.add(Lift::Split([k, x]));
        let tr = eg.add(Lift::Transpose(split));
        let rf = eg.add(Lift::ReduceF([f, z]));
        let partials = eg.add(Lift::Map([rf, tr]));
        let joined = eg.add(Lift::Join(partials));
        let res = eg.add(Lift::Reduce([f, z, joined]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

/// The OpenCL rules for sequential code: `map (reducef f z) xs` = `map (reducefu f z) xs`
/// when the chunks of `xs` have a known length of at most `MAX_UNROLL` (`reduceSeqUnroll`).
pub fn sequential_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let default = opts.default_size;
    vec![conditional(
        "unroll-reduce".into(),
        "(map (reducef ?f ?z) ?x)",
        "(map (reducefu ?f ?z) ?x)".into(),
        move |eg: &mut EG, _: Id, s: &Subst| {
            let x = &eg[s[var("?x")]].data;
            let sizes = &eg.analysis.sizes;
            x.inner
                .as_ref()
                .and_then(|m| estimate(m, sizes, default))
                .is_some_and(|m| (2..=MAX_UNROLL).contains(&m))
        },
    )]
}

/// Column-block partial reduction (Lift's `partialReduceWithReorder` across the rows of a
/// matrix, as CLBlast's transposed matrix-vector kernels do):
/// `map (λc. … reduce f z X(c) …) xs` = `colreduce bc r g (λc. … reduce f z X(c) …) xs`, where
/// `xs` is `transpose m` (or a zip holding it), so `c` is a column of the stored row-major `m`;
/// the body computes exactly one reduction itself (through `let`s, maps' arguments and joins),
/// over an array `X(c)` of the column's length (made from the column; any other array of that
/// length is reduced the same way all the same); `f` associative and commutative with neutral
/// `z` (the chunks are reduced out of order); `bc | len xs`, `r·g | len X`; and the map is at
/// host level (it mentions no function's parameter: the lowering makes a kernel of it).
/// Lowered to work-groups of `bc × r` work-items, `g` per block of `bc` columns: work-item
/// `(j, i)` of group `k` reduces `X(c_j)[k + g·i], X(c_j)[k + g·(i + r)], …` (consecutive
/// work-items read consecutive addresses of a row of `m`), the `r` partial results of a column
/// meet in local memory and the first row of work-items reduces them and runs the rest of the
/// body (for `g > 1` a second kernel reduces the groups' results and runs it). Without it, one
/// work-item per column reads its whole column: coalesced, but too few work-items to keep the
/// memory busy.
struct ColReduceRule {
    bc: i64,
    r: i64,
    g: i64,
}

/// The matrix whose columns are the rows of `xs`: `transpose m`, or `zip` holding one.
fn column_matrix(eg: &EG, xs: Id) -> Option<Id> {
    transposed_of(eg, xs).or_else(|| {
        eg[xs].nodes.iter().find_map(|n| match n {
            Lift::Other(s, kids) if s.as_str().split('|').next() == Some("zip") => {
                kids.iter().find_map(|k| transposed_of(eg, *k))
            }
            _ => None,
        })
    })
}

/// The variables some `lam` of the e-graph binds: a term mentioning one is inside a function.
fn lam_params(eg: &EG) -> Vec<Symbol> {
    let mut out: Vec<Symbol> = eg
        .classes()
        .flat_map(|c| c.nodes.iter())
        .filter_map(|n| match n {
            Lift::Lam([x, _]) => symbol_of(eg, *x),
            _ => None,
        })
        .collect();
    out.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
    out.dedup();
    out
}

/// The reductions a function body computes at its own level (through `let`s, the array
/// arguments of maps and other primitives, joins; not inside functions): each class with its
/// `reduce f z x` nodes.
fn body_reductions(eg: &EG, class: Id, seen: &mut Vec<Id>, found: &mut Vec<(Id, [Id; 3])>) {
    let class = eg.find(class);
    if seen.contains(&class) || seen.len() > 64 {
        return;
    }
    seen.push(class);
    for node in &eg[class].nodes {
        match node {
            Lift::Reduce(kids) => found.push((class, *kids)),
            Lift::Let([_, v, b]) => {
                body_reductions(eg, *v, seen, found);
                body_reductions(eg, *b, seen, found);
            }
            Lift::Map([_, x]) | Lift::Join(x) => body_reductions(eg, *x, seen, found),
            Lift::Other(_, kids) => {
                for k in kids {
                    body_reductions(eg, *k, seen, found);
                }
            }
            // a work-group reduction is a reduction too
            Lift::WgReduce([_, f, z, x]) => found.push((class, [*f, *z, *x])),
            Lift::GridReduce([_, _, f, z, x]) => found.push((class, [*f, *z, *x])),
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
            | Lift::TTile(_)
            | Lift::Stage(_)
            | Lift::StageVec(_)
            | Lift::Scan(_)
            | Lift::ScanGlb(_)
            | Lift::ScanRows(_)
            | Lift::MapScan(_)
            | Lift::Tiles(_)
            | Lift::RBlock(_)
            | Lift::Stencil(_)
            | Lift::ColReduce(_)
            | Lift::Num(_)
            | Lift::Sym(_) => {}
        }
    }
}

impl Applier<Lift, LiftAnalysis> for ColReduceRule {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (c, b, xs) = (s[var("?c")], s[var("?b")], s[var("?xs")]);
        if symbol_of(eg, c).is_none() {
            return vec![];
        }
        let Some(m) = column_matrix(eg, xs) else { return vec![] };
        let Some(col_len) = eg[m].data.len.clone() else {
            return vec![];
        };
        let an = &eg.analysis;
        let splits =
            |len: &Option<ArithExpr>, k: i64| len.as_ref().is_some_and(|n| may_split(n, k, &an.sizes, &an.declared));
        if !splits(&eg[xs].data.len, self.bc) || !splits(&Some(col_len.clone()), self.r * self.g) {
            return vec![];
        }
        let params = lam_params(eg);
        if eg[eclass].data.free.iter().any(|v| params.contains(v)) {
            return vec![];
        }
        // one reduction, whatever its operator: the rule splits only that one
        let mut found = vec![];
        body_reductions(eg, b, &mut vec![], &mut found);
        let mut classes: Vec<Id> = found.iter().map(|(class, _)| *class).collect();
        classes.sort();
        classes.dedup();
        let along_column = found.iter().any(|(_, [f, z, x])| {
            let (fd, zd, xd) = (&eg[*f].data, &eg[*z].data, &eg[*x].data);
            neutral_of(fd, zd) && xd.partial == 0 && xd.len.as_ref() == Some(&col_len)
        });
        if classes.len() != 1 || !along_column {
            return vec![];
        }
        let f = eg.add(Lift::Lam([c, b]));
        let (bc, r, g) = (
            eg.add(Lift::Num(self.bc)),
            eg.add(Lift::Num(self.r)),
            eg.add(Lift::Num(self.g)),
        );
        let res = eg.add(Lift::ColReduce([bc, r, g, f, xs]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

/// `col-reduce-{bc}x{r}-g{g}` for each block of columns, number of row chunks (of a work-group
/// that fits) and number of work-groups per block of columns of the options.
pub fn col_reduce_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules = vec![];
    for &bc in &opts.col_blocks {
        for &r in opts.col_rows.iter().filter(|r| bc * **r <= opts.max_group) {
            for &g in &opts.col_groups {
                // map (lam c b) xs = colreduce bc r g (lam c b) xs, xs columns of a stored
                // matrix, b one reduction of an associative f from its neutral element over an
                // array of the columns' length, bc | len xs, r·g | column length, host level
                rules.push(
                    Rewrite::new(
                        format!("col-reduce-{bc}x{r}-g{g}"),
                        pat("(map (lam ?c ?b) ?xs)"),
                        ColReduceRule { bc, r, g },
                    )
                    .expect("rule"),
                );
            }
        }
    }
    rules
}

/// The whole-array reductions in one launch: `grid-reduce-{g}x{s}` for each number
/// of work-groups `g` of `Options::grid_groups`, `s` the largest work-group size.
pub fn grid_reduce_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let Some(s) = opts
        .wg_sizes
        .iter()
        .copied()
        .filter(|s| s.count_ones() == 1 && *s <= opts.max_group)
        .max()
    else {
        return vec![];
    };
    opts.grid_groups
        .iter()
        .filter(|g| **g > 0)
        .map(|&g| {
            // reduce f z xs = gridreduce g s f z xs, f associative and commutative, z its
            // neutral element, xs a parameter of floats (read a grid of g·s apart, padded with z
            // up to a multiple of g·s, so any length) or a dot product `map h (zip p q)` of
            // parameters of floats (`h` a product of two components: padded with zeros) or
            // `map h ys` of such a parameter or zip (`h` opaque: applied to the elements read
            // only, never to the padding), and longer than two elements a work-item where its
            // length is known
            Rewrite::new(
                format!("grid-reduce-{g}x{s}"),
                pat("(reduce ?f ?z ?x)"),
                GridPartial { g, s },
            )
            .expect("rule")
        })
        .collect()
}

/// See `grid-reduce-*`.
struct GridPartial {
    g: i64,
    s: i64,
}

impl Applier<Lift, LiftAnalysis> for GridPartial {
    fn apply_one(&self, eg: &mut EG, eclass: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, z, x) = (sub[var("?f")], sub[var("?z")], sub[var("?x")]);
        let (fd, zd, xd) = (&eg[f].data, &eg[z].data, &eg[x].data);
        let an = &eg.analysis;
        // a parameter of floats, padded with z; or `map h (zip p q …)` of such parameters with
        // `h` a product of two components and `f` a sum, the parameters padded with zeros
        let float_param =
            |id: Id| symbol_of(eg, id).is_some_and(|p| an.params.contains(&p)) && eg[id].data.flags & FLOAT_ELEMS != 0;
        let products = fd.assoc == Some(Assoc::Add)
            && eg[x].nodes.iter().any(|n| match n {
                Lift::Map([h, zs]) => {
                    eg[*h].data.flags & ZERO_PRODUCT != 0
                        && eg[*zs].nodes.iter().any(|z| match z {
                            Lift::Other(head, kids) => {
                                head.as_str().starts_with("zip|") && kids.iter().all(|k| float_param(*k))
                            }
                            _ => false,
                        })
                }
                _ => false,
            });
        // `map h ys`, `h` an opaque function of one element and `ys` a parameter of floats or
        // a zip of such: lowered with the padding lanes marked, `h` applied to elements only
        let zip_of_params = |id: Id| {
            eg[id].nodes.iter().any(|z| match z {
                Lift::Other(head, kids) => head.as_str().starts_with("zip|") && kids.iter().all(|k| float_param(*k)),
                _ => false,
            })
        };
        let mapped = eg[x].nodes.iter().any(|n| match n {
            Lift::Map([h, ys]) => {
                symbol_of(eg, *h).is_some_and(|h| h.as_str().starts_with('@'))
                    && (float_param(*ys) || zip_of_params(*ys))
            }
            _ => false,
        });
        let param = float_param(x) || products || mapped;
        let Some(n) = xd.len.clone() else { return vec![] };
        let long = match n.eval(&|v| an.sizes.get(v).copied()) {
            Ok(n) => n >= 2 * self.g * self.s,
            Err(_) => n.free_vars().iter().all(|v| an.declared.contains(v)),
        };
        if !neutral_of(fd, zd) || xd.partial != 0 || !param || !long {
            return vec![];
        }
        let gn = eg.add(Lift::Num(self.g));
        let sn = eg.add(Lift::Num(self.s));
        let grid = eg.add(Lift::GridReduce([gn, sn, f, z, x]));
        if eg.union(eclass, grid) {
            vec![grid]
        } else {
            vec![]
        }
    }
}
