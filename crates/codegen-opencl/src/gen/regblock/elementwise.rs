//! Which bodies a reduction in place may keep in registers: bodies that only read, updates of
//! each accumulator element from that element alone (through the paths an accumulator is reached
//! by), and reductions each work-item does on its own elements.

use super::*;

impl Gen<'_> {
    /// Whether `e` names data without computing it: a variable or a component of one.
    pub(super) fn reads_only(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Var(_) => true,
            Expr::Op { op: Op::Get(_), args } => matches!(self.prog.expr(args[0]), Expr::Var(_)),
            Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => false,
        }
    }

    /// Whether `e` writes each element of its result from the accumulator's element at the
    /// same place (`acc`) and from nothing else of the accumulator: maps over a `zip` holding
    /// the accumulator itself (element-wise in the map's function), scalars, and `join (reduce
    /// g acc ys)`, which reads the whole of `acc` into its own accumulator before writing.
    pub(super) fn elementwise(&self, e: ExprId, acc: AccPath) -> bool {
        self.elementwise_in(
            e,
            &Acc {
                paths: vec![acc],
                bound: vec![],
            },
        )
    }

    pub(super) fn elementwise_in(&self, e: ExprId, acc: &Acc) -> bool {
        if !self.mentions(e, acc) || self.is_path(e, acc) {
            return true;
        }
        match self.prog.expr(e) {
            // K-normalization binds the arguments of maps and reductions: an alias of the
            // accumulator's element is one more path to it, a value reading it is looked
            // through where a map or reduction uses it
            Expr::Let { var, value, body, .. } => {
                let mut inner = acc.clone();
                if self.is_path(*value, acc) {
                    inner.paths.push(AccPath::Var(*var));
                } else if self.mentions(*value, acc) {
                    inner.bound.push((*var, *value));
                }
                self.elementwise_in(*body, &inner)
            }
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.elementwise_in(args[0], acc),
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => {
                let (f, (xs, acc)) = (args[0], self.resolve(args[1], acc));
                let acc = &acc;
                let Expr::Lambda { params, body } = self.prog.expr(f) else {
                    return false;
                };
                if self.mentions(f, acc) {
                    return false;
                }
                let path = if self.is_path(xs, acc) {
                    AccPath::Var(params[0])
                } else {
                    let Expr::Prim {
                        prim: Prim::Zip,
                        args: zs,
                    } = self.prog.expr(xs)
                    else {
                        return false;
                    };
                    let at: Vec<usize> = (0..zs.len()).filter(|&c| self.is_path(zs[c], acc)).collect();
                    let others_clean = (0..zs.len())
                        .filter(|c| !at.contains(c))
                        .all(|c| !self.mentions(zs[c], acc));
                    match at[..] {
                        [c] if others_clean && c <= u8::MAX as usize => AccPath::Get(params[0], c as u8),
                        _ => return false,
                    }
                };
                self.elementwise_in(
                    *body,
                    &Acc {
                        paths: vec![path],
                        bound: vec![],
                    },
                )
            }
            Expr::Prim { prim: Prim::Join, args } => {
                let (r, acc) = self.resolve(args[0], acc);
                match self.prog.expr(r) {
                    Expr::Prim {
                        prim: Prim::Reduce(_),
                        args: r,
                    } => self.is_path(r[1], &acc) && !self.mentions(r[0], &acc) && !self.mentions(r[2], &acc),
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
            // a scalar (or tuple, vector) result is the element at the place written, and so
            // is the accumulator's part that it reads
            Expr::Op { .. } | Expr::If { .. } | Expr::Lit(_) => {
                !matches!(self.info.ty(e), Type::Array(..) | Type::Exists(_))
            }
            Expr::Var(_) | Expr::Lambda { .. } | Expr::Prim { .. } | Expr::Pack(_) => false,
        }
    }

    /// The value that `e` stands for where a map or a reduction uses it: a variable bound to
    /// a value reading the accumulator is that value, the `let`s K-normalization put around
    /// it taken into `acc`.
    pub(super) fn resolve(&self, e: ExprId, acc: &Acc) -> (ExprId, Acc) {
        let mut acc = acc.clone();
        let mut e = e;
        loop {
            match self.prog.expr(e) {
                Expr::Var(v) => match acc.bound.iter().rev().find(|(b, _)| b == v) {
                    Some((_, x)) => e = *x,
                    None => return (e, acc),
                },
                Expr::Let { var, value, body, .. } => {
                    if self.is_path(*value, &acc) {
                        acc.paths.push(AccPath::Var(*var));
                    } else if self.mentions(*value, &acc) {
                        acc.bound.push((*var, *value));
                    }
                    e = *body;
                }
                Expr::Lit(_)
                | Expr::Lambda { .. }
                | Expr::Prim { .. }
                | Expr::Op { .. }
                | Expr::If { .. }
                | Expr::Pack(_) => return (e, acc),
            }
        }
    }

    pub(super) fn is_path(&self, e: ExprId, acc: &Acc) -> bool {
        let here = match (self.prog.expr(e), self.get_of_var(e)) {
            (Expr::Var(v), _) => AccPath::Var(*v),
            (_, Some((i, v))) => AccPath::Get(v, i),
            (_, None) => return false,
        };
        acc.paths.contains(&here)
    }

    /// `(i, t)` when `e` is `get #i t` of a variable `t`.
    pub(super) fn get_of_var(&self, e: ExprId) -> Option<(u8, VarId)> {
        let Expr::Op { op: Op::Get(i), args } = self.prog.expr(e) else {
            return None;
        };
        match self.prog.expr(args[0]) {
            Expr::Var(v) => Some((*i, *v)),
            Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => None,
        }
    }

    /// Whether the accumulator occurs in `e`: a path to it, or a variable bound to a value
    /// reading it (a tuple variable's other components do not count).
    pub(super) fn mentions(&self, e: ExprId, acc: &Acc) -> bool {
        let bound = |v: VarId| acc.bound.iter().any(|(b, _)| *b == v);
        let whole = |v: VarId| acc.paths.contains(&AccPath::Var(v)) || bound(v);
        let tuple = |v: VarId| acc.paths.iter().any(|p| matches!(p, AccPath::Get(a, _) if *a == v));
        // `get #i t` of a tuple `t` one of whose components is the accumulator
        if let Some((i, v)) = self.get_of_var(e).filter(|(_, v)| tuple(*v)) {
            return acc.paths.contains(&AccPath::Get(v, i)) || whole(v);
        }
        match self.prog.expr(e) {
            Expr::Var(v) => whole(*v) || tuple(*v),
            Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => self.prog.children(e).iter().any(|c| self.mentions(*c, acc)),
        }
    }

    /// Whether an accumulator of `dims` at work-group level is a block per work-item: its
    /// initial value and the step are `mapLcl1 (λ. mapLcl0 …)` over its two outer dimensions,
    /// the remaining dimensions are known, and one work-item per index fits a work-group.
    pub(super) fn per_item(&self, z: ExprId, body: ExprId, dims: &[ArithExpr]) -> bool {
        if dims.len() < 3 || dims[2..].iter().any(|d| d.as_cst().is_none()) {
            return false;
        }
        let (Some(d0), Some(d1)) = (dims[0].as_cst(), dims[1].as_cst()) else {
            return false;
        };
        let Some(k) = self.k.as_ref() else { return false };
        // a dimension whose size no `mapLcl` fixed yet gets the length of the initial value's
        // `mapLcl` in it, as long as the work-group stays within its limit
        let l1 = k.local[1].map_or(d0, |l| l as i64);
        let l0 = k.local[0].map_or(d1, |l| l as i64);
        let l2 = k.local[2].map_or(1, |l| l as i64);
        d0 >= 1
            && d1 >= 1
            && d0 <= l1
            && d1 <= l0
            && l1 * l0 * l2 <= MAX_WORK_GROUP as i64
            && self.lcl_2d(z)
            && self.lcl_2d(body)
    }

    /// `mapLcl1 (λ. mapLcl0 …)`, under `let`s and `toX`.
    pub(super) fn lcl_2d(&self, e: ExprId) -> bool {
        let strip = |mut e: ExprId| loop {
            match self.prog.expr(e) {
                Expr::Let { body, .. } => e = *body,
                Expr::Prim {
                    prim: Prim::To(_),
                    args,
                } => e = args[0],
                Expr::Var(_)
                | Expr::Lit(_)
                | Expr::Lambda { .. }
                | Expr::Prim { .. }
                | Expr::Op { .. }
                | Expr::If { .. }
                | Expr::Pack(_) => return e,
            }
        };
        let Expr::Prim {
            prim: Prim::Map(MapKind::Lcl(1)),
            args,
        } = self.prog.expr(strip(e))
        else {
            return false;
        };
        let Expr::Lambda { body, .. } = self.prog.expr(args[0]) else {
            return false;
        };
        matches!(
            self.prog.expr(strip(*body)),
            Expr::Prim {
                prim: Prim::Map(MapKind::Lcl(0)),
                ..
            }
        )
    }

    /// After the initial value's `mapLcl`s fixed the work-group: one work-item per index of
    /// the accumulator's two outer dimensions (what `per_item` foresaw).
    pub(super) fn check_per_item(&self, e: ExprId, dims: &[ArithExpr]) -> Result<()> {
        let k = self.k.as_ref().expect("in kernel");
        let covers = |d: usize, n: &ArithExpr| k.local[d].is_some_and(|l| n.as_cst().is_some_and(|n| n as usize <= l));
        if covers(1, &dims[0]) && covers(0, &dims[1]) {
            Ok(())
        } else {
            Err(self.err(
                e,
                "internal: a per-work-item accumulator has more blocks than work-items",
            ))
        }
    }
}
