//! Sequential loops: unrolled loops and `iterate` within the unrolling limit, the largest
//! value a loop computes, reductions at each execution level, and loops inside a work-item
//! (`iterate` of a run-time count or over a non-array state, `iterate-until` in a kernel).

use super::*;

impl Validator<'_> {
    /// The checks of an unrolled loop over `xs` inside `cx`; the copies of its body's code
    /// (the product of its steps and those of the unrolled loops around it) for the loops
    /// inside. Each loop within the limit, nested ones can still multiply past it: the
    /// innermost loop that does is refused, naming the product.
    pub(super) fn unrolled(&mut self, e: ExprId, xs: ExprId, cx: &Cx) -> i64 {
        let Some(Type::Array(_, n)) = self.ty(xs) else {
            return cx.unrolled;
        };
        let n = n.clone();
        if !self.known(&n) {
            self.err(
                e,
                format!("`mapSeqUnroll`/`reduceSeqUnroll` need a length known at compile time, not {n}"),
            );
            return cx.unrolled;
        }
        // (an `iterate` body's loop is emitted once per step: its largest step counts)
        let Some((c, shown)) = self.largest(std::slice::from_ref(&n), |d| d[0].as_cst()) else {
            return cx.unrolled;
        };
        if c > MAX_UNROLLED_STEPS {
            self.err(
                e,
                format!("`mapSeqUnroll`/`reduceSeqUnroll` are limited to {MAX_UNROLLED_STEPS} steps, as the generated code holds the body once per step, but this one has {c} (length {}); use mapSeq/reduceSeq", shown[0]),
            );
            return cx.unrolled;
        }
        let total = cx.unrolled.saturating_mul(c.max(1));
        if total > MAX_UNROLLED_STEPS {
            self.err(
                e,
                format!("nested `mapSeqUnroll`/`reduceSeqUnroll` loops hold this loop's body {total} times ({} × {c} steps, length {}), more than the {MAX_UNROLLED_STEPS} steps the generated code may unroll; use mapSeq/reduceSeq for one of them", cx.unrolled, shown[0]),
            );
            // one error per nest: the loops inside are not counted again
            return 1;
        }
        total
    }

    /// Records the lengths `iterate #k f xs`'s body is emitted with: its length variable takes
    /// the input's length, then the body's result length of it, `k` times.
    pub(super) fn iterate_steps(&mut self, k: &ir::ArithExpr, f: ExprId, xs: ExprId) {
        let (Some(count), Expr::Lambda { params, body }) = (k.as_cst(), self.prog.expr(f)) else {
            return;
        };
        let param_len = |t: Option<&Type>| match t {
            Some(Type::Array(_, n)) => n.as_var().map(|(v, _)| v.to_string()),
            _ => None,
        };
        let Some(var) = params
            .first()
            .and_then(|p| param_len(self.info.var_types.get(p.0 as usize).and_then(Option::as_ref)))
        else {
            return;
        };
        let (Some(Type::Array(_, step)), Some(Type::Array(_, first))) = (self.ty(*body), self.ty(xs)) else {
            return;
        };
        let (step, mut len) = (step.clone(), first.clone());
        let mut lens = vec![];
        for _ in 0..count.clamp(0, typeck::MAX_ITERATE) {
            lens.push(len.clone());
            len = step.subst(&var, &len);
        }
        self.steps.insert(var, lens);
    }

    /// The largest value `of` gives over the lengths `dims` as emitted: with the built-in sizes
    /// substituted and, for the length variables of `iterate` bodies, at each of their steps
    /// (the steps of nested ones combined). With it, `dims` as the message shows them: each
    /// with its value where a size or a step fixes it. `None` when `of` gives none for some
    /// instance (a length not a constant).
    pub(super) fn largest(
        &self,
        dims: &[ir::ArithExpr],
        of: impl Fn(&[ir::ArithExpr]) -> Option<i64>,
    ) -> Option<(i64, Vec<String>)> {
        let mut instances = vec![dims.iter().map(|n| self.fixed(n)).collect::<Vec<_>>()];
        // (nested iterates within their limits: at most a few thousand instances)
        while let Some(var) = (instances.iter().flatten())
            .flat_map(|n| n.free_vars())
            .find(|v| self.steps.contains_key(v))
        {
            let (steps, var) = (&self.steps[&var], &var);
            instances = (instances.iter())
                .flat_map(|inst| {
                    steps.iter().map(move |s| {
                        inst.iter()
                            .map(|n| {
                                if n.mentions(var) {
                                    self.fixed(&n.subst(var, s))
                                } else {
                                    n.clone()
                                }
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            instances.dedup();
            if instances.len() > 4096 {
                return None;
            }
        }
        let mut best: Option<(i64, &Vec<ir::ArithExpr>)> = None;
        for inst in &instances {
            let v = of(inst)?;
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, inst));
            }
        }
        let (v, inst) = best?;
        let stepped = dims
            .iter()
            .any(|n| n.free_vars().iter().any(|x| self.steps.contains_key(x)));
        let shown = dims
            .iter()
            .zip(inst)
            .map(|(n, c)| match c.as_cst() {
                Some(c) if stepped && n.as_cst().is_none() => {
                    let vars: Vec<String> = (n.free_vars().into_iter())
                        .filter(|v| self.steps.contains_key(v))
                        .collect();
                    format!(
                        "{n} = {c} at the largest step of its `iterate`, {} being the length each step takes",
                        vars.join(", ")
                    )
                }
                _ => format!("{n}{}", self.with_sizes(n)),
            })
            .collect();
        Some((v, shown))
    }

    pub(super) fn reduce(&mut self, e: ExprId, kind: ReduceKind, f: ExprId, z: ExprId, xs: ExprId, cx: &Cx) {
        // At work-group level the accumulator lives in local memory and the initial value and
        // each step are computed into it by group code: only `mapLcl`s may write it.
        if cx.level == Level::Group {
            self.into(z, cx);
        } else {
            self.value(z, cx);
        }
        self.value(xs, cx);
        let unrolled = if kind == ReduceKind::SeqUnroll {
            self.unrolled(e, xs, cx)
        } else {
            cx.unrolled
        };
        if self.ty(z).is_some_and(Type::has_existential) {
            self.err(z, "a reduction accumulator cannot hold filter results");
        }
        let inner = Cx {
            vec_dest: None,
            unrolled,
            ..cx.clone()
        };
        self.func(f, &inner);
    }

    /// Whether `e` is a loop of one work-item (as `typeck` types it and the code generator
    /// emits it): an `iterate-until` inside a kernel, or an `iterate` inside a kernel but one of
    /// a literal count over an array (unrolled). Asked of nodes inside kernels.
    pub(super) fn is_work_item_loop(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::IterateUntil(_),
                ..
            } => true,
            Expr::Prim {
                prim: Prim::Iterate(k),
                args,
            } => !(k.as_cst().is_some() && matches!(self.ty(args[1]), Some(Type::Array(..)))),
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => false,
        }
    }

    /// A loop of one work-item: its state and step are that work-item's code, run once per
    /// step. At work-group level (inside `mapWrg`, outside `mapLcl`) every work-item of the
    /// group runs it, so its steps' writes must be distributed by `mapLcl`s (a scalar state
    /// would be written by all) and its exit must be the same for all of them: the barriers
    /// of those `mapLcl`s need every work-item, so an `iterate-until`, whose condition each
    /// work-item decides, is refused there.
    pub(super) fn work_item_loop(&mut self, e: ExprId, cx: &Cx) {
        let Expr::Prim { prim, args } = self.prog.expr(e).clone() else {
            return;
        };
        let (f, x, cond) = if matches!(prim, Prim::IterateUntil(_)) {
            (args[1], args[2], Some(args[0]))
        } else {
            (args[0], args[1], None)
        };
        if cond.is_some() && cx.level == Level::Group {
            self.err(
                e,
                "`iterate-until` directly inside `mapWrg` (outside `mapLcl`) is not supported yet: each work-item decides when it stops, but the barriers of the group's `mapLcl`s need all of them; put the loop inside `mapLcl`, or use `iterate` with a count",
            );
            return;
        }
        if self.is_array(e) {
            if cx.level == Level::Group {
                self.into(x, cx);
            } else {
                self.value(x, cx);
            }
        } else if cx.level == Level::Group {
            // one error for the loop, not one more for each value of its step
            self.group_write(e, cx);
            return;
        } else {
            self.value(x, cx);
        }
        let inner = Cx {
            vec_dest: None,
            ..cx.clone()
        };
        self.func(f, &inner);
        if let Some(c) = cond {
            self.func(c, &inner);
        }
    }
}
