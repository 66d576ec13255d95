//! What loops inside a work-item (LANGUAGE.md, "Loops inside a work-item") cost: a loop's
//! functions weigh once per step (`#max` for `iterate-until`), also inside opaque leaves, and a
//! kernel whose work-items run loops waits for its busiest one (`LOOP_SPAN_WAVES`).

use super::*;

impl Lowerer<'_> {
    /// What the loops inside a work-item within the opaque leaf `s` (`get #2 (iterate-until
    /// …)`, encoded whole) add to its cost as written, which counts their functions once:
    /// every further step, as [`Lowerer::loop_steps`] counts a loop the rules see. 0 for a
    /// leaf without loops.
    pub(super) fn hidden_steps(&self, s: &Symbol) -> f64 {
        self.origin
            .get(s)
            .map_or(0.0, |id| self.weight(*id, true) - self.weight(*id, false))
    }

    /// The operations of `e`, a loop's functions counted once per step (`stepped`) or once.
    fn weight(&self, e: ExprId, stepped: bool) -> f64 {
        let src = self.b.src;
        match src.expr(e) {
            Expr::Prim {
                prim: Prim::Iterate(k) | Prim::IterateUntil(k),
                args,
            } => {
                let steps = if stepped { self.eval(Some(k)).max(1.0) } else { 1.0 };
                let (funs, state) = args.split_at(args.len() - 1);
                1.0 + self.weight(state[0], stepped)
                    + steps * funs.iter().map(|f| self.weight(*f, stepped)).sum::<f64>()
            }
            Expr::Var(_) | Expr::Lit(_) => 0.0,
            Expr::Lambda { body, .. } => self.weight(*body, stepped),
            Expr::Prim { .. } | Expr::Op { .. } | Expr::If { .. } | Expr::Let { .. } | Expr::Pack(_) => {
                1.0 + src.children(e).iter().map(|c| self.weight(*c, stepped)).sum::<f64>()
            }
        }
    }

    /// The steps of `t` when it is a loop inside a work-item (an `iterate` or `iterate-until`
    /// head of an `Other` node): its count, or `#max` for `iterate-until` (the most it may run),
    /// so that Mandelbrot's escape time weighs a thousand steps of its dozen operations, as a
    /// sequential map weighs its body once per element; 1 for any other node.
    pub(super) fn loop_steps(&self, t: &Term) -> f64 {
        let TOp::Other(s) = &t.op else { return 1.0 };
        let Some(id) = self.origin.get(s) else { return 1.0 };
        match self.b.src.expr(*id) {
            Expr::Prim {
                prim: Prim::Iterate(k) | Prim::IterateUntil(k),
                ..
            } => self.eval(Some(k)).max(1.0),
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => 1.0,
        }
    }

    /// The waves a kernel of `waves` waves of work-items running `f` is charged: where `f` runs
    /// loops inside a work-item, [`LOOP_SPAN_WAVES`] more for its busiest work-item's chain of
    /// dependent steps (a work-item of many elements makes it long).
    pub(super) fn loop_waves(&self, waves: f64, f: &Term) -> f64 {
        if self.has_loop(f) {
            waves + LOOP_SPAN_WAVES
        } else {
            waves
        }
    }

    /// Whether `t` holds a loop inside a work-item: an `iterate` or `iterate-until` head, or one
    /// within an opaque leaf.
    pub(super) fn has_loop(&self, t: &Term) -> bool {
        let loop_at = |id: ExprId| {
            let src = self.b.src;
            let mut work = vec![id];
            while let Some(e) = work.pop() {
                if let Expr::Prim {
                    prim: Prim::Iterate(_) | Prim::IterateUntil(_),
                    ..
                } = src.expr(e)
                {
                    return true;
                }
                work.extend(src.children(e));
            }
            false
        };
        match &t.op {
            TOp::Sym(s) | TOp::Other(s) if self.origin.get(s).is_some_and(|id| loop_at(*id)) => true,
            _ => t.kids.iter().any(|k| self.has_loop(k)),
        }
    }
}
