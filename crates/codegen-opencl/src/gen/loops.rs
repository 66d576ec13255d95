//! Loops inside a work-item (LANGUAGE.md, "Loops inside a work-item"): `iterate K f x` with a
//! run-time count, `iterate #k f x` over a scalar, tuple or vector, and `iterate-until #max c
//! f x` inside a kernel, each one C `for` loop, never unrolled.
//!
//! A state that is a scalar, tuple or vector lives in private variables that every step
//! rewrites (a tuple's components all computed before any is assigned). An array state lives in
//! a buffer (private where its size is known and small, local at work-group level, else global)
//! beside a second one that each step writes before it is copied back, as a reduction's array
//! accumulator: writing the state in place would be wrong for a step that reads elements other
//! than the one it writes.
//!
//! `iterate-until` exits per work-item: its loop runs while `step < max && !done`, `done` being
//! the condition of the previous and the new state, so no `break` is needed and a work-item
//! whose state has converged stops while the others go on.

use super::*;

impl Gen<'_> {
    /// Whether `e` is an `iterate` or `iterate-until` generated as a loop of one work-item (as
    /// `typeck` decides it: every in-kernel `iterate-until`, and every in-kernel `iterate` but
    /// those of a literal count over an array, which are unrolled).
    pub(super) fn is_work_item_loop(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::IterateUntil(_),
                ..
            } => true,
            Expr::Prim {
                prim: Prim::Iterate(k),
                args,
            } => !(k.as_cst().is_some() && matches!(self.info.ty(args[1]), Type::Array(..))),
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

    /// The loop `e` computed into `dest`.
    pub(super) fn gen_work_item_loop(&mut self, e: ExprId, dest: &Dest) -> Result<()> {
        if let Type::Array(..) = self.cty(e)? {
            return self.gen_array_loop(e, dest);
        }
        let r = self.loop_value(e)?;
        self.write(&dest.view, &[], &r, e)
    }

    /// The parts of a loop: its function, its state's initial value, its step count (a size
    /// expression: `K`, `#k` or `#max`) and, for `iterate-until`, its condition.
    fn loop_parts(&self, e: ExprId) -> Result<(ExprId, ExprId, ArithExpr, Option<ExprId>)> {
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Iterate(k),
                args,
            } => Ok((args[0], args[1], k.clone(), None)),
            Expr::Prim {
                prim: Prim::IterateUntil(k),
                args,
            } => Ok((args[1], args[2], k.clone(), Some(args[0]))),
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => Err(self.err(e, "internal: not a loop")),
        }
    }

    /// Opens `for (int s = 0; s < steps [&& !done]; s += 1)`, with `done`'s declaration before
    /// it for `iterate-until`; returns `done`'s name.
    fn open_steps(&mut self, steps: &ArithExpr, until: bool) -> Option<Ident> {
        // a size variable as the kernel's argument spells it
        let steps = &self.c_len(steps);
        let done = until.then(|| {
            let d = self.fresh("done");
            self.push(Stmt::decl(CType::INT, &d, CExpr::Int(0)));
            d
        });
        let s = self.fresh("step");
        let mut cond = CExpr::bin(BinOp::Lt, CExpr::var(&s), arith(steps));
        if let Some(d) = &done {
            cond = CExpr::bin(BinOp::And, cond, CExpr::un(UnOp::Not, CExpr::var(d)));
        }
        self.open(Head::For {
            var: s.clone(),
            init: CExpr::Int(0),
            cond,
            step: (AssignOp::Add, CExpr::Int(1)),
            unroll: false,
        });
        self.push_loop(
            ArithExpr::var(s.as_str(), Range::upto(steps.clone())),
            steps.clone(),
            LoopKind::Sequential,
        );
        done
    }

    fn close_steps(&mut self) {
        self.pop_loop();
        self.close();
    }

    /// `done = c(prev, next)`: the condition as an `int`, read from a `[bool]1` where it is one.
    fn set_done(&mut self, c: ExprId, prev: Rc<View>, next: Rc<View>, done: &Ident) -> Result<()> {
        let (params, body) = self.lambda(c)?;
        self.bind(params[0], Bound::View(prev));
        self.bind(params[1], Bound::View(next));
        let v = match self.cty(body)? {
            Type::Array(..) => {
                let view = self.value(body)?;
                let r = view.read(&[ArithExpr::cst(0)]).map_err(|m| self.err(body, m.0))?;
                match self.val_of(r) {
                    Val::E(x) => x,
                    Val::T(_) => return Err(self.err(body, "internal: loop condition")),
                }
            }
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Exists(_) | Type::Fun(..) => {
                self.scalar_expr(body)?
            }
        };
        self.push(Stmt::assign(CExpr::var(done), v));
        Ok(())
    }

    /// A loop over a scalar, tuple or vector state: its final value, held in private variables.
    pub(super) fn loop_value(&mut self, e: ExprId) -> Result<Read> {
        let (f, x, steps, until) = self.loop_parts(e)?;
        let (params, body) = self.lambda(f)?;
        let ty = self.cty(x)?;
        let x0 = self.scalar(x)?;
        let state = self.declare(&x0, &ty, "st")?;
        let state_view = self.read_view(state.clone(), &ty);
        let done = self.open_steps(&steps, until.is_some());
        self.bind(params[0], Bound::View(state_view.clone()));
        let next = self.scalar(body)?;
        match (until, &done) {
            (Some(c), Some(d)) => {
                // the condition reads the previous state, so the new one is held apart first
                let next = self.declare(&next, &ty, "nx")?;
                let next_view = self.read_view(next.clone(), &ty);
                self.set_done(c, state_view, next_view, d)?;
                reduce::assign(self, &state, &next, &ty)?;
            }
            (Some(_), None) | (None, Some(_)) | (None, None) => reduce::assign(self, &state, &next, &ty)?,
        }
        self.close_steps();
        Ok(state)
    }

    /// A loop over an array state of a length the types give: two buffers, the step's result
    /// copied back into the state (see the module doc), the final state copied into `dest`.
    fn gen_array_loop(&mut self, e: ExprId, dest: &Dest) -> Result<()> {
        let (f, x, steps, until) = self.loop_parts(e)?;
        let (params, body) = self.lambda(f)?;
        let ty = self.capacity_type(&self.cty(x)?, x)?;
        if ty.has_existential() {
            return Err(self.err(x, "internal: a loop state of run-time length"));
        }
        let (state, next) = self.two_state_buffers(("st", "nx"), &ty, x, e)?;
        let plain = |view: &Rc<View>| Dest {
            view: view.clone(),
            len: None,
            rows: false,
        };
        let done = self.open_steps(&steps, until.is_some());
        self.bind(params[0], Bound::View(state.clone()));
        self.gen_into(body, &plain(&next))?;
        self.sync_copy(&next, body)?;
        if let (Some(c), Some(d)) = (until, &done) {
            self.set_done(c, state.clone(), next.clone(), d)?;
        }
        self.copy_acc(e, &next, &state, &ty)?;
        self.sync_copy(&state, e)?;
        self.close_steps();
        self.copy_acc(e, &state, &dest.view, &ty)?;
        self.sync_copy(&dest.view, e)
    }
}

#[cfg(test)]
mod tests {
    use super::super::emit;

    fn source(src: &str) -> String {
        let prog = ir::parse(src).expect("parse");
        let info = typeck::infer(&prog).expect("types");
        emit(&prog, &info).expect("emit").source
    }

    fn vec1(body: &str) -> String {
        format!("(lift (N K) ((array-type float N)) (lambda (xs) {body}))")
    }

    /// A run-time count is one `for` over the kernel's size argument, the step once in it.
    #[test]
    fn a_run_time_count_is_one_loop_over_the_size_argument() {
        let cl = source(&vec1(
            "(toGlobal (mapGlb (lambda (a) (iterate K (lambda (x) (* 0.5f (+ x (/ a x)))) a)) xs))",
        ));
        assert!(cl.contains("int v_K"), "{cl}");
        assert!(
            cl.contains("for (int v_step_1 = 0; v_step_1 < v_K; v_step_1 += 1)"),
            "{cl}"
        );
        assert_eq!(cl.matches("0.5f *").count(), 1, "{cl}");
    }

    /// A literal count over a scalar is a loop too, not 64 copies of the step.
    #[test]
    fn a_literal_count_over_a_scalar_is_not_unrolled() {
        let cl = source(&vec1(
            "(toGlobal (mapGlb (lambda (a) (iterate #64 (lambda (x) (* x 1.5f)) a)) xs))",
        ));
        assert!(cl.contains("v_step_1 < 64;"), "{cl}");
        assert_eq!(cl.matches("* 1.5f").count(), 1, "{cl}");
        assert!(!cl.contains("#pragma unroll\n      for (int v_step"), "{cl}");
    }

    /// `iterate-until` exits per work-item: `done` is the condition of the previous and the new
    /// state, computed before the state is overwritten, and ends the loop of that work-item.
    #[test]
    fn iterate_until_exits_per_work_item() {
        let cl = source(&vec1(
            "(toGlobal (mapGlb (lambda (a) (iterate-until #100 (lambda (p q) (< (- p q) 0.25f)) (lambda (x) (* x 0.5f)) a)) xs))",
        ));
        assert!(cl.contains("v_step_1 < 100 && !v_done_1"), "{cl}");
        let done = cl
            .find("v_done_1 = v_st_1 - v_nx_1 < 0.25f;")
            .expect("the condition of prev and next");
        let update = cl.find("v_st_1 = v_nx_1;").expect("the state updated");
        assert!(done < update, "{cl}");
    }

    /// A tuple state is one private variable per component, each assigned after all are
    /// computed (the step reads the old components).
    #[test]
    fn a_tuple_state_is_private_variables() {
        let cl = source(&vec1(
            "(toGlobal (mapGlb (lambda (a) (get #0 (iterate K (lambda (s) (tuple (get #1 s) (get #0 s))) (tuple a 1.0f)))) xs))",
        ));
        assert!(cl.contains("float v_st_1 = v_xs["), "{cl}");
        assert!(cl.contains("float v_st_2 = 1.0f;"), "{cl}");
        let held = cl.find("= v_st_1;").expect("the old first component held");
        let assigned = cl.find("v_st_1 = v_st_2;").expect("the first component assigned");
        assert!(held < assigned, "{cl}");
    }

    /// An array state of a known length stays in private memory, copied back after each step.
    #[test]
    fn a_small_array_state_is_private() {
        let cl = source(&vec1(
            "(join (mapGlb (lambda (c) (toGlobal (mapSeq (lambda (x) x) (iterate K (lambda (s) (toPrivate (mapSeq (lambda (x) (* x 2.0f)) (reverse s)))) (toPrivate (mapSeq (lambda (x) x) c)))))) (split #4 xs)))",
        ));
        assert!(
            cl.contains("float v_pst_1[4];") && cl.contains("float v_pnx_1[4];"),
            "{cl}"
        );
        assert!(cl.contains("v_pst_1[v_i_") && cl.contains("= v_pnx_1[v_i_"), "{cl}");
    }
}
