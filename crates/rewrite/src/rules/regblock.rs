//! Register-blocking rules: a matrix product whose work-groups compute tiles of the result and
//! whose work-items compute register blocks of a tile (`reg-block-*`, `reg-block-rows-*`), and
//! the same under a map over a batch of products (`batch-reg-block-*`).

use super::{not_free_in, pat, symbol_of, var};
use crate::egraph::{Lift, LiftAnalysis, DOT_FN, EG, FLOAT_ROWS};
use crate::sizes::{may_split, RegBlockSizes, RBLOCK_BATCH, RBLOCK_ROWS};
use arith::ArithExpr;
use egg::{Applier, Id, PatternAst, Rewrite, Subst, Symbol};

/// `reg-block-{sizes}` for each setting of `Options::reg_blocks`.
pub fn reg_block_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.reg_blocks
        .iter()
        .map(|&c| {
            // map (λr. join (map g ys)) x = rblock c r g x ys; see `RegBlock`
            Rewrite::new(
                format!("reg-block-{}", c.name()),
                pat("(map (lam ?r (join (map ?g ?c))) ?x)"),
                RegBlock {
                    c,
                    max_group: opts.max_group,
                    rows: false,
                },
            )
            .expect("rule")
        })
        .collect()
}

/// Register-blocked matrix product:
/// `map (λr. join (map g ys)) x` = `rblock c r g x ys`
/// when `g = λc. reduce f z (map h (zip r c))` is a dot product (`DOT_FN`), `x` and `ys` are
/// matrices of floats, `tm` divides the rows of `x`, `tk` its rows' length (that of the rows
/// of `ys`), `tn` the rows of `ys`, a work-group of one work-item per `rm × rn` block of a
/// `tm × tn` tile fits `Options::max_group`, and the sizes fit the vectors of the lowering
/// (`RegBlockSizes::valid`: `tk` and `rn` multiples of `VEC`). `ys` is usually `transpose m` (`m` the right
/// operand, whose rows the work-groups then copy along); any matrix of floats is sound.
struct RegBlock {
    c: RegBlockSizes,
    max_group: i64,
    /// The product written without `join` (`reg-block-rows-*`): `RBLOCK_ROWS` in the sizes.
    rows: bool,
}

impl RegBlock {
    /// Whether `map (λr. join? (map g ys)) x` may be register-blocked with these sizes.
    fn admits(&self, eg: &EG, r: Id, g: Id, x: Id, ys: Id) -> bool {
        let (xd, yd) = (&eg[x].data, &eg[ys].data);
        let splits = |e: &Option<ArithExpr>, k: i64| {
            e.as_ref()
                .is_some_and(|n| may_split(n, k, &eg.analysis.sizes, &eg.analysis.declared))
        };
        let rb = self.c;
        // `ys` is one matrix for every row: a stencil's windows of the row (convolution's
        // `slide` of `r`) are not
        if !rb.valid()
            || !not_free_in(eg, r, &[ys])
            || eg[g].data.flags & DOT_FN == 0
            || xd.flags & FLOAT_ROWS == 0
            || yd.flags & FLOAT_ROWS == 0
            || !splits(&xd.len, rb.tm)
            || !splits(&xd.inner, rb.tk)
            || !splits(&yd.len, rb.tn)
            || rb.items() > self.max_group
        {
            return false;
        }
        true
    }
}

impl Applier<Lift, LiftAnalysis> for RegBlock {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (r, g, ys, x) = (s[var("?r")], s[var("?g")], s[var("?c")], s[var("?x")]);
        if !self.admits(eg, r, g, x, ys) {
            return vec![];
        }
        let flags = if self.rows { RBLOCK_ROWS } else { 0 };
        let cfg = eg.add(Lift::Num(self.c.pack() | flags));
        let res = eg.add(Lift::RBlock([cfg, r, g, x, ys]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

/// The register-blocked product of the form a user writes without `join` (`bench/indep/
/// mm_nt.lisp`, `C = A Bᵀ` dotting rows of `A` with rows of `Bt`; or `map g (transpose b)`):
/// `reg-block-rows-{sizes}` for each setting of `Options::reg_blocks`, lowered as `reg-block-*`'s
/// product whose result is read back as rows of one-element arrays (a view, no copy).
pub fn reg_block_rows_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.reg_blocks
        .iter()
        .map(|&c| {
            // map (λr. map g ys) x = rblock (c | ROWS) r g x ys, g = λc. reduce f z (map h (zip r
            // c)) a dot product, x and ys matrices of floats, tm | rows of x, tk | K, tn | rows
            // of ys, a tile's work-items fit a work-group (as `reg-block-*`)
            Rewrite::new(
                format!("reg-block-rows-{}", c.name()),
                pat("(map (lam ?r (map ?g ?c)) ?x)"),
                RegBlock {
                    c,
                    max_group: opts.max_group,
                    rows: true,
                },
            )
            .expect("rule")
        })
        .collect()
}

/// The register-blocked product under a map over a batch of matrix pairs
/// (`bench/indep/bmm.lisp`: `map (λab. map (λrow. map (λcol. dot row col) (transpose (get 1
/// ab))) (get 0 ab)) (zip as bs)`): `batch-reg-block-{sizes}` for each setting of
/// `Options::batch_blocks`, tiles that fit the small products of a batch (a 32 × 32 product
/// is one tile of one work-group), where `reg-block-*`'s tiles of 64 and 128 do not.
pub fn batch_reg_block_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.batch_blocks
        .iter()
        .map(|&c| {
            // map (λab. P) xs = map (λab. rblock (c | BATCH) r g x ys) xs, P one of
            // `map (λr. join (map g ys)) x`, `map (λr. map g ys) x` or `map (λr. let k ys (map g
            // k)) x` (the reader binds `transpose (get 1 ab)` so), with `reg-block-*`'s side
            // conditions (g a dot product, x and ys matrices of floats, tm | rows of x, tk | K,
            // tn | rows of ys, a tile's work-items fit a work-group), r not free in ys, and x,
            // ys reading no variable but ab and the parameters (the batch map is lowered at
            // host level, ab its only binder), and x, ys views of ab, no computation
            // (`view_of_leaves`: a computed operand would be a kernel of its own inside the
            // batch's work-group, which `validate` refuses)
            Rewrite::new(
                format!("batch-reg-block-{}", c.name()),
                pat("(map (lam ?ab ?b) ?xs)"),
                BatchRegBlock {
                    c,
                    max_group: opts.max_group,
                    mma: false,
                },
            )
            .expect("rule")
        })
        .collect()
}

/// `batch-mma-block-{sizes}` (`rules::tensor`): `batch-reg-block-*` with the tiles of the
/// tensor-core variant, whose lengths must be known multiples of the tile (the kernel is
/// built for them), tagged `RBLOCK_MMA`.
pub(super) fn batch_mma_rule(c: RegBlockSizes) -> Rewrite<Lift, LiftAnalysis> {
    Rewrite::new(
        format!("batch-mma-block-{}", c.name()),
        pat("(map (lam ?ab ?b) ?xs)"),
        BatchRegBlock {
            c,
            max_group: c.items(),
            mma: true,
        },
    )
    .expect("rule")
}

/// See `batch-reg-block-*` and `batch-mma-block-*`.
struct BatchRegBlock {
    c: RegBlockSizes,
    max_group: i64,
    /// The tensor-core variant's tiles (`RBLOCK_MMA`): the lengths known multiples of them.
    mma: bool,
}

/// The maps `(f, xs)` that an e-class holds: `map f xs`, or `let k xs (map f k)` (the reader's
/// binding of a component, `get #0 ab`), `k` not free in `f`.
fn maps_in(eg: &EG, class: Id) -> Vec<(Id, Id)> {
    let mut found = vec![];
    for n in &eg[class].nodes {
        match n {
            Lift::Map([f, x]) => found.push((*f, *x)),
            Lift::Let([k, v, m]) => {
                let Some(ks) = symbol_of(eg, *k) else { continue };
                for mn in &eg[*m].nodes {
                    if let Lift::Map([f, c]) = mn {
                        if symbol_of(eg, *c) == Some(ks) && not_free_in(eg, *k, &[*f]) {
                            found.push((*f, *v));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// The matrix products `(r, g, x, ys, rows)` that an e-class holds as one of the forms
/// `batch-reg-block-*` names (each map possibly over a `let`-bound array, `maps_in`), `rows`
/// when written without `join`.
fn products_in(eg: &EG, class: Id) -> Vec<(Id, Id, Id, Id, bool)> {
    let mut found = vec![];
    for (f, x) in maps_in(eg, class) {
        for fnode in &eg[f].nodes {
            let Lift::Lam([r, body]) = fnode else { continue };
            for (g, ys) in maps_in(eg, *body) {
                found.push((*r, g, x, ys, true));
            }
            for b in &eg[*body].nodes {
                if let Lift::Join(m) = b {
                    for (g, ys) in maps_in(eg, *m) {
                        found.push((*r, g, x, ys, false));
                    }
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Whether `k` divides the length `len`, equal to it included (a batch element's product may
/// be one tile): known from the sizes given, or symbolic as `may_split` allows.
fn tiles_exactly(len: &Option<ArithExpr>, k: i64, an: &LiftAnalysis) -> bool {
    len.as_ref()
        .is_some_and(|n| match n.eval(&|v| an.sizes.get(v).copied()) {
            Ok(n) => n >= k && n % k == 0,
            Err(_) => may_split(n, k, &an.sizes, &an.declared),
        })
}

impl BatchRegBlock {
    /// `RegBlock::admits`, with tiles as long as the matrices allowed.
    fn admits(&self, eg: &EG, r: Id, g: Id, x: Id, ys: Id) -> bool {
        let (xd, yd, an) = (&eg[x].data, &eg[ys].data, &eg.analysis);
        let rb = self.c;
        let tiles = |len: &Option<ArithExpr>, k: i64| match self.mma {
            true => super::tensor::known_multiple(len, k, an),
            false => tiles_exactly(len, k, an),
        };
        rb.valid()
            && not_free_in(eg, r, &[ys])
            && eg[g].data.flags & DOT_FN != 0
            && xd.flags & FLOAT_ROWS != 0
            && yd.flags & FLOAT_ROWS != 0
            && tiles(&xd.len, rb.tm)
            && tiles(&xd.inner, rb.tk)
            && tiles(&yd.len, rb.tn)
            && rb.items() <= self.max_group
    }
}

impl Applier<Lift, LiftAnalysis> for BatchRegBlock {
    fn apply_one(&self, eg: &mut EG, _: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (ab, body) = (sub[var("?ab")], sub[var("?b")]);
        let Some(abs) = symbol_of(eg, ab) else { return vec![] };
        let reads_batch_only = |eg: &EG, id: Id| {
            eg[id]
                .data
                .free
                .iter()
                .all(|v| *v == abs || eg.analysis.params.contains(v))
        };
        let mut out = vec![];
        for (r, g, x, ys, rows) in products_in(eg, body) {
            if !self.admits(eg, r, g, x, ys)
                || !reads_batch_only(eg, x)
                || !reads_batch_only(eg, ys)
                || !view_of_leaves(eg, x, &mut vec![])
                || !view_of_leaves(eg, ys, &mut vec![])
            {
                continue;
            }
            let mma = if self.mma { crate::sizes::RBLOCK_MMA } else { 0 };
            let flags = RBLOCK_BATCH | mma | if rows { RBLOCK_ROWS } else { 0 };
            let cfg = eg.add(Lift::Num(self.c.pack() | flags));
            let res = eg.add(Lift::RBlock([cfg, r, g, x, ys]));
            if eg.union(body, res) {
                out.push(res);
            }
        }
        out
    }
}

/// Whether e-class `id` holds an array that only re-indexes leaves (variables and the
/// encoder's opaque leaves, `get #0 ab`): transposes, splits, joins, vector views, `let`s of
/// such, the layout heads of `Other` (`zip`, `slide`, `pad`, ...), and maps of a function that
/// only re-indexes its parameter, as `Lowerer::computes` reads them. `visiting` holds the
/// classes on the path, so a cycle (`join (split k x)` in the class of `x`) is not followed.
fn view_of_leaves(eg: &EG, id: Id, visiting: &mut Vec<Id>) -> bool {
    let id = eg.find(id);
    if visiting.contains(&id) {
        return false;
    }
    visiting.push(id);
    let view = eg[id].nodes.iter().any(|n| match n {
        Lift::Sym(_) => true,
        Lift::Transpose(a) | Lift::Join(a) | Lift::AsScalar(a) | Lift::Split([_, a]) | Lift::AsVector([_, a]) => {
            view_of_leaves(eg, *a, visiting)
        }
        Lift::Let([_, v, b]) => view_of_leaves(eg, *v, visiting) && view_of_leaves(eg, *b, visiting),
        Lift::Other(head, kids) => {
            LAYOUT_HEADS.contains(&head.as_str().split('|').next().unwrap_or(""))
                && kids.iter().all(|k| view_of_leaves(eg, *k, visiting))
        }
        Lift::Map([f, x]) => reindexes(eg, *f, visiting) && view_of_leaves(eg, *x, visiting),
        _ => false,
    });
    visiting.pop();
    view
}

/// Heads of `Other` nodes that only re-index their arguments (`Lowerer::computes`'s).
const LAYOUT_HEADS: [&str; 7] = [
    "zip",
    "transpose",
    "slide",
    "pad",
    "pad-clamp",
    "reorder-stride",
    "reverse",
];

/// Whether e-class `f` holds `λp. b` with `b` the parameter `p` under re-indexings only.
fn reindexes(eg: &EG, f: Id, visiting: &mut Vec<Id>) -> bool {
    fn chain(eg: &EG, t: Id, p: Symbol, visiting: &mut Vec<Id>) -> bool {
        let t = eg.find(t);
        if visiting.contains(&t) {
            return false;
        }
        visiting.push(t);
        let ok = eg[t].nodes.iter().any(|n| match n {
            Lift::Sym(s) => *s == p,
            Lift::Transpose(a) | Lift::Join(a) | Lift::Split([_, a]) => chain(eg, *a, p, visiting),
            Lift::Other(head, kids) => {
                matches!(
                    head.as_str().split('|').next(),
                    Some("transpose" | "slide" | "pad-clamp")
                ) && kids.len() == 1
                    && chain(eg, kids[0], p, visiting)
            }
            _ => false,
        });
        visiting.pop();
        ok
    }
    eg[f].nodes.iter().any(|n| match n {
        Lift::Lam([p, b]) => symbol_of(eg, *p).is_some_and(|p| chain(eg, *b, p, visiting)),
        _ => false,
    })
}
