//! Convergence loops over ranks: `(iterate-until #max (lambda (prev next) c) f x)` whose step
//! `f` splits as a host loop's does ([`crate::host_loop`]) and whose condition holds of the
//! whole state exactly when it holds of every rank's rows. Each rank then tests its own rows
//! of the previous and the new state (the condition compiled with the state's length set to
//! its part's) and one all-reduce of the ranks' booleans decides the exit.
//!
//! Which conditions are such a conjunction, read from the program (anything else runs on one
//! rank, and the plan says why): a reduction over the elements of `prev`, `next` or their
//! `zip`, optionally in the one chunk of `split N`, whose operator folds each element in by
//! - `and` (the condition is the reduction itself: every element passes), or
//! - `max` followed by `(< m c)` / `(<= m c)` (the largest change below a tolerance: the
//!   largest is below it exactly when each rank's largest is), or `min` followed by `>`/`>=`.

use crate::*;
use ir::{Expr, ExprId, Op, Param, Prim, Program, Type, VarId};

/// A convergence loop's test, as each rank runs it.
#[derive(Clone, Debug)]
pub struct Until {
    /// `(lift (sizes) (state state) (lambda (prev next) c))`: the condition as a program.
    pub cond: String,
    /// The size variable of the state's length, set to a rank's rows when it tests them.
    pub size: String,
}

/// The convergence loop at the top of `prog` whose step splits and whose condition each rank
/// can test on its own rows; `Err(None)` where the program is no such loop.
pub fn until_loop(prog: &Program, info: &typeck::TypeInfo) -> Result<(HostLoop, Until), Option<String>> {
    let Expr::Prim {
        prim: Prim::IterateUntil(max),
        args,
    } = prog.expr(prog.body)
    else {
        return Err(None);
    };
    // Its steps are those of `iterate #max f x`, which the host-loop planner splits.
    let mut steps = prog.clone();
    steps.exprs[prog.body.index()] = Expr::Prim {
        prim: Prim::Iterate(max.clone()),
        args: vec![args[1], args[2]],
    };
    let hl = host_loop_or_why(&steps, info)?;
    let Expr::Lambda { params, body } = prog.expr(args[0]) else {
        return Err(Some("the condition is not a function of the two states".into()));
    };
    let [prev, next] = params.as_slice() else {
        return Err(Some("the condition is not a function of the two states".into()));
    };
    let state_ty = prog.params[hl.init].ty.clone();
    let size = match &state_ty {
        Type::Array(_, n) => n.as_var().map(|(v, _)| v.to_string()),
        _ => None,
    }
    .ok_or_else(|| Some("the state's length is not a size variable".to_string()))?;
    if ir::host::free_vars(prog, *body).iter().any(|v| v != prev && v != next) {
        return Err(Some("the condition reads more than the two states".into()));
    }
    let param = |var: VarId| Param {
        var,
        ty: state_ty.clone(),
        ty_span: prog.params[hl.init].ty_span,
    };
    let cond = ir::print::program(&ir::host::extract(prog, *body, vec![param(*prev), param(*next)]));
    let cp = ir::parse(&cond).map_err(|e| Some(format!("internal: the condition alone: {}", e.message)))?;
    let ci = typeck::infer(&cp).map_err(|e| Some(format!("the condition alone: {}", e.message)))?;
    let one_bool = match ci.result() {
        Type::Array(e, n) => n.as_cst() == Some(1) && **e == Type::Scalar(ir::Scalar::Bool),
        _ => false,
    };
    if !one_bool {
        return Err(Some("the condition is not a `[bool]1` computed on the device".into()));
    }
    each_row(&cp, &size).map_err(Some)?;
    Ok((hl, Until { cond, size }))
}

/// Whether `cond` (a program of `prev` and `next`) holds of the whole state exactly when it
/// holds of each part of its rows (the forms in the module doc), or why not.
pub(crate) fn each_row(cond: &Program, size: &str) -> Result<(), String> {
    let not = |what: &str| Err(format!("the condition is not a test of every element ({what})"));
    let states: Vec<VarId> = cond.params.iter().map(|p| p.var).collect();
    let strip = |mut e: ExprId| loop {
        match cond.expr(e) {
            Expr::Prim {
                prim: Prim::Join | Prim::To(_),
                args,
            } => e = args[0],
            _ => return e,
        }
    };
    let mut e = strip(cond.body);
    // `(map (lambda (all) E) (split N z))`: E on the one chunk, which is z whole.
    let mut chunk: Option<(VarId, ExprId)> = None;
    if let Expr::Prim {
        prim: Prim::Map(_),
        args,
    } = cond.expr(e)
    {
        let (
            Expr::Lambda { params, body },
            Expr::Prim {
                prim: Prim::Split(k),
                args: inner,
            },
        ) = (cond.expr(args[0]), cond.expr(args[1]))
        else {
            return not("a map over more than one chunk");
        };
        if k.as_var().map(|(v, _)| v) != Some(size) || params.len() != 1 {
            return not("a map over more than one chunk");
        }
        chunk = Some((params[0], inner[0]));
        e = strip(*body);
    }
    // Then `(map (lambda (m) p) R)` or `R`, R a reduction.
    let (pred, red) = match cond.expr(e) {
        Expr::Prim {
            prim: Prim::Map(_),
            args,
        } => match cond.expr(args[0]) {
            Expr::Lambda { params, body } if params.len() == 1 => (Some((params[0], *body)), strip(args[1])),
            _ => return not("a map of another function"),
        },
        _ => (None, e),
    };
    let Expr::Prim {
        prim: Prim::Reduce(_),
        args,
    } = cond.expr(red)
    else {
        return not("no reduction");
    };
    // The reduced array: the states' elements, zipped or not.
    let over = match (chunk, cond.expr(args[2])) {
        (Some((all, z)), Expr::Var(v)) if *v == all => z,
        (Some(_), _) => return not("a reduction of something else than the chunk"),
        (None, _) => args[2],
    };
    let is_state = |x: ExprId| matches!(cond.expr(x), Expr::Var(v) if states.contains(v));
    let elementwise = match cond.expr(over) {
        Expr::Prim { prim: Prim::Zip, args } => args.iter().all(|a| is_state(*a)),
        _ => is_state(over),
    };
    if !elementwise {
        return not("a reduction over more than the states' elements");
    }
    // The operator folds each element in by `and`, `max` or `min`, reading only its own two.
    let Expr::Lambda { params, body } = cond.expr(args[0]) else {
        return not("an operator that is not a function");
    };
    let [acc, x] = params.as_slice() else {
        return not("an operator of more than two arguments");
    };
    let reads_only = |e: ExprId, vs: &[VarId]| ir::host::free_vars(cond, e).iter().all(|v| vs.contains(v));
    let fold = match cond.expr(*body) {
        Expr::Op {
            op: op @ (Op::And | Op::Max | Op::Min),
            args: ops,
        } if ops.len() == 2 => {
            let acc_at = ops
                .iter()
                .position(|o| matches!(cond.expr(*o), Expr::Var(v) if v == acc));
            match acc_at {
                Some(i) if reads_only(ops[1 - i], &[*x]) => *op,
                _ => return not("an operator that does not fold each element into the accumulator"),
            }
        }
        _ => return not("an operator other than `and`, `max` or `min`"),
    };
    // The test of the reduced value.
    let below = |op: Op, a: ExprId, b: ExprId, m: VarId| {
        let is_m = |e: ExprId| matches!(cond.expr(e), Expr::Var(v) if *v == m);
        match op {
            Op::Lt | Op::Le if is_m(a) && reads_only(b, &[]) => Some(true),
            Op::Gt | Op::Ge if is_m(b) && reads_only(a, &[]) => Some(true),
            Op::Gt | Op::Ge if is_m(a) && reads_only(b, &[]) => Some(false),
            Op::Lt | Op::Le if is_m(b) && reads_only(a, &[]) => Some(false),
            _ => None,
        }
    };
    let ok = match (fold, pred) {
        (Op::And, None) => true,
        (Op::Max | Op::Min, Some((m, p))) => match cond.expr(p) {
            Expr::Op { op, args } if args.len() == 2 => below(*op, args[0], args[1], m) == Some(fold == Op::Max),
            _ => false,
        },
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        not("its test of the reduced value is not a tolerance on a `max`, or on a `min` from below")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn until(src: &str) -> Result<(HostLoop, Until), Option<String>> {
        let prog = ir::parse(src).expect("parses");
        let info = typeck::infer(&prog).expect("types");
        until_loop(&prog, &info)
    }

    fn jacobi(test: &str) -> String {
        format!(
            "(lift (N) ((array-type float N))
              (lambda (xs)
                (iterate-until #50
                  (lambda (prev next)
                    (join (mapGlb (lambda (all) {test}) (split N (zip prev next)))))
                  (lambda (s) (mapGlb (lambda (w) (* (+ (+ (at 0 w) (at 1 w)) (at 2 w)) 0.3333f))
                                      (slide #3 #1 (pad-clamp #1 #1 s))))
                  xs)))"
        )
    }

    #[test]
    fn a_tolerance_on_the_largest_change_is_tested_on_each_ranks_rows() {
        let max = "(mapSeq (lambda (m) (< m 0.001f))
                     (reduceSeq (lambda (a pq) (max a (abs (- (get #0 pq) (get #1 pq))))) 0.0f all))";
        let (hl, u) = until(&jacobi(max)).expect("splits");
        assert_eq!(u.size, "N");
        assert!(matches!(hl.step.gather, Gather::Concat));
        // Every element unchanged, as a fold by `and`.
        let all = "(reduceSeq (lambda (ok pq) (and ok (= (get #0 pq) (get #1 pq)))) true all)";
        assert!(until(&jacobi(all)).is_ok());
    }

    #[test]
    fn a_test_of_a_sum_or_of_a_max_from_above_is_not_split() {
        let sum = "(mapSeq (lambda (m) (< m 0.001f))
                     (reduceSeq (lambda (a pq) (+ a (abs (- (get #0 pq) (get #1 pq))))) 0.0f all))";
        let why = until(&jacobi(sum)).err().flatten().expect("a reason");
        assert!(why.contains("other than `and`, `max` or `min`"), "{why}");
        let above = "(mapSeq (lambda (m) (> m 0.001f))
                       (reduceSeq (lambda (a pq) (max a (abs (- (get #0 pq) (get #1 pq))))) 0.0f all))";
        let why = until(&jacobi(above)).err().flatten().expect("a reason");
        assert!(why.contains("tolerance"), "{why}");
        // Not a convergence loop at all.
        assert!(matches!(
            until("(lift (N) ((array-type float N)) (lambda (xs) (mapGlb (lambda (x) x) xs)))"),
            Err(None)
        ));
    }
}
