//! The program's result where it holds several run-time lengths: a `tuple` of filter results
//! (and other values), each component stored as a result of its own with its length, or a map
//! of maps of filter results, with a length per row of each row.

use super::*;

impl Gen<'_> {
    /// The storage type of a result `tuple` of components `cs` (at C level) computed by `args`:
    /// a filter result at its capacity, rows of filter results at their rows' capacity.
    pub(super) fn result_tuple_type(&self, cs: &[Type], args: &[ExprId]) -> Result<Type> {
        let comps = cs
            .iter()
            .zip(args)
            .map(|(c, a)| match c {
                Type::Exists(x) => Ok(Type::array((**x).clone(), self.capacity_len(*a)?)),
                Type::Array(r, n) if matches!(**r, Type::Exists(_)) => {
                    let Type::Exists(x) = &**r else { unreachable!("matched") };
                    let cap = self.capacity_len_rows(*a)?;
                    Ok(Type::array(Type::array((**x).clone(), cap), n.clone()))
                }
                c @ Type::Scalar(_)
                | c @ Type::Vector(..)
                | c @ Type::Tuple(_)
                | c @ Type::Array(..)
                | c @ Type::Fun(..) => self.capacity_type(c, *a),
            })
            .collect::<Result<_>>()?;
        Ok(Type::Tuple(comps))
    }

    /// The lengths buffer of a result `tuple` of components `cs`: one row of `L` ints for each
    /// component holding run-time lengths, in order (`L` the most rows of filter results any
    /// component has, 1 at least); a filter result's length is its row's first int, rows of
    /// filter results have one int a row. The view is a tuple of each component's length
    /// places (an empty tuple for a component without).
    pub(super) fn result_tuple_lengths(&mut self, cs: &[Type]) -> std::result::Result<(usize, Rc<View>), String> {
        let rows = |c: &Type| match c {
            Type::Exists(_) => Some(ArithExpr::cst(1)),
            Type::Array(r, n) if matches!(**r, Type::Exists(_)) => Some(n.clone()),
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Array(..) | Type::Fun(..) => None,
        };
        let k = cs.iter().filter_map(rows).count();
        let widest = cs
            .iter()
            .filter_map(rows)
            .fold(ArithExpr::cst(1), |m, n| ArithExpr::max(&m, &n));
        let (b, v) = self.alloc(
            "out_lens",
            &Type::array(Type::array(Type::int(), widest), ArithExpr::cst(k as i64)),
            AddressSpace::Global,
            &[],
            Role::OutputLength,
        )?;
        let mut j = 0;
        let per = cs
            .iter()
            .map(|c| {
                let Some(_) = rows(c) else {
                    return Rc::new(View::Tuple(vec![]));
                };
                j += 1;
                let row = v.access(ArithExpr::cst(j as i64 - 1));
                match c {
                    Type::Exists(_) => row.access(ArithExpr::cst(0)),
                    Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Array(..) | Type::Fun(..) => row,
                }
            })
            .collect();
        Ok((b, Rc::new(View::Tuple(per))))
    }
}

/// The body of the outer map when the result is a map (below `let`s and `toX`) of maps of
/// filter results (`[[∃X. T]m]n`, validate's `rows_of_rows`): its rows' capacity is that of the
/// inner map's.
pub(super) fn rows_of_rows(prog: &Program, info: &TypeInfo, body: ExprId) -> Option<ExprId> {
    let mut e = body;
    loop {
        e = match prog.expr(e) {
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => args[0],
            Expr::Let { body, .. } => *body,
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Pack(_) => break,
        };
    }
    let Type::Array(row, _) = info.ty(e) else { return None };
    let Type::Array(r, _) = &**row else { return None };
    let Type::Exists(t) = &**r else { return None };
    if t.has_existential() {
        return None;
    }
    let Expr::Prim {
        prim: Prim::Map(_),
        args,
    } = prog.expr(e)
    else {
        return None;
    };
    let Expr::Lambda { body: inner, .. } = prog.expr(args[0]) else {
        return None;
    };
    Some(*inner)
}

/// The components of the result `tuple` (below `let`s and `toX`), when the body ends in one.
pub(super) fn result_tuple_args(prog: &Program, e: ExprId) -> Option<Vec<ExprId>> {
    match prog.expr(e) {
        Expr::Let { body, .. } => result_tuple_args(prog, *body),
        Expr::Prim {
            prim: Prim::To(_),
            args,
        } => result_tuple_args(prog, args[0]),
        Expr::Op { op: Op::Tuple, args } => Some(args.clone()),
        Expr::Var(_)
        | Expr::Lit(_)
        | Expr::Lambda { .. }
        | Expr::Prim { .. }
        | Expr::Op { .. }
        | Expr::If { .. }
        | Expr::Pack(_) => None,
    }
}
