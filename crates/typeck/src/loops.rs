//! Loops inside a work-item (LANGUAGE.md, "Loops inside a work-item"): `iterate K f x` with a
//! run-time count, `iterate #k f x` over a non-array state, and `iterate-until #max c f x`,
//! inside a kernel. They are one sequential loop of one work-item, not unrolled, so the
//! function is typed once, on the state's own type, and must return that type: the state is
//! one set of private variables (or one buffer) that every step reads and rewrites.

use super::*;

impl Checker<'_> {
    /// Whether an in-kernel `iterate` over `state` with count `k` is a loop of one work-item
    /// (true) or unrolled step by step (false: a literal count over an array, which may change
    /// its length each step).
    pub(super) fn is_work_item_loop(k: &ArithExpr, state: &Type) -> bool {
        !(k.as_cst().is_some() && matches!(state, Type::Array(..)))
    }

    /// Types the function `f` of a loop inside a work-item on the state type `t` and checks
    /// that it returns `t` (`what` names the loop in messages).
    pub(super) fn work_item_state(&mut self, f: ExprId, state: ExprId, t: Type, what: &str) -> Result<Type> {
        match &t {
            Type::Scalar(_) | Type::Vector(..) => {}
            Type::Tuple(_) | Type::Array(..) if !run_time_length(&t) => {}
            Type::Tuple(_) | Type::Array(..) | Type::Exists(_) => {
                return Err(ir::unsupported::loop_state_of_run_time_length(
                    self.span(state),
                    what,
                    &t.to_string(),
                ))
            }
            Type::Fun(..) => {
                return Err(Diagnostic::new(
                    self.span(state),
                    format!("the state of `{what}` must be a value, not a function ({t})"),
                ))
            }
        }
        let r = self.lambda(f, std::slice::from_ref(&t))?;
        if !self.same(&r, &t) {
            let (ts, rs) = distinct_texts(&t, &r);
            let mut d = Diagnostic::new(
                self.span(f),
                format!(
                    "the function of `{what}` inside a kernel must keep the state's type {ts}, but it returns {rs}"
                ),
            )
            .with_label(format!("returns {rs}"));
            if let (Type::Array(..), Type::Array(..), true) = (&t, &r, what == "iterate") {
                d = d.with_note("a loop of one work-item keeps its state in one place; only `iterate` with a literal count (#k) may change an array's length, each step unrolled");
            }
            return Err(d);
        }
        Ok(t)
    }

    /// `(iterate-until #max (lambda (prev next) c) f x)` inside a kernel: `f` keeps the
    /// state's type and `c` is a `bool` or `[bool]1`, decided by each work-item for itself.
    pub(super) fn iterate_until_in_kernel(&mut self, args: &[ExprId]) -> Result<Type> {
        let t = self.infer(args[2])?;
        let t = self.work_item_state(args[1], args[2], t, "iterate-until")?;
        let c = self.lambda(args[0], &[t.clone(), t.clone()])?;
        if c != Type::bool() && !self.is_bool1(&c) {
            return Err(Diagnostic::new(
                self.span(args[0]),
                format!("the condition of `iterate-until` must be a bool or [bool]1, but it is {c}"),
            ));
        }
        Ok(t)
    }
}

/// Whether a value of `t` holds an array whose length is known only at run time: a filter
/// result, packed (`{∃X. [T]X}`) or unpacked (its length an existential variable `Xk`).
fn run_time_length(t: &Type) -> bool {
    match t {
        Type::Exists(_) => true,
        Type::Array(elem, n) => !n.free_vars_of_kind(VarKind::Existential).is_empty() || run_time_length(elem),
        Type::Tuple(ts) => ts.iter().any(run_time_length),
        Type::Scalar(_) | Type::Vector(..) | Type::Fun(..) => false,
    }
}
