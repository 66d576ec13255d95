//! Inclusive prefixes: `scanSeq` (and a high-level `scan` inside a kernel) as one work-item's
//! loop, the host-level forms that `scanGlb` takes (a map after it, rows of a matrix), and the
//! application of a scan's operator to C values. The `scanGlb` kernel itself is `scan/glb.rs`,
//! and `scan/striped.rs` for 4-byte scalars.

use super::filter::{device_macros, filter_wg, local_array, STATUS_LOAD};
use super::*;
use crate::ast::{BinOp, CType, Expr, Fence, Stmt};
use crate::namer::Ident;
use arith::{ArithExpr, Range};
use ir::{Expr as IrExpr, ExprId, Prim, ScanKind, Type};
use memalloc::Role;
use reduce::assign;

mod glb;
mod striped;

/// The operator of a scan, applied to C values.
struct Op2 {
    params: Vec<ir::VarId>,
    body: ExprId,
    ty: Type,
}

impl Gen<'_> {
    /// `scanSeq f z xs` (or `scan` inside a kernel): the accumulator in a private variable,
    /// written to the destination after each step.
    pub(super) fn gen_scan_seq(&mut self, e: ExprId, f: ExprId, z: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let (params, body) = self.lambda(f)?;
        let acc_ty = self.cty(z)?;
        if matches!(acc_ty, Type::Array(..) | Type::Exists(_) | Type::Fun(..)) {
            return Err(self.err(e, format!("internal: scan accumulator of type {acc_ty}")));
        }
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        let z0 = self.scalar(z)?;
        let acc = self.declare(&z0, &acc_ty, "acc")?;
        let acc_view = self.read_view(acc.clone(), &acc_ty);
        self.emit_loop(e, MapKind::Seq, &n, |g, i| {
            g.bind(params[0], Bound::View(acc_view.clone()));
            let x = g.loop_elem(xv.access(i.clone()), params[1], body)?;
            g.bind(params[1], Bound::View(x));
            let r = g.scalar(body)?;
            assign(g, &acc, &r, &acc_ty)?;
            g.write(&dest.view, &[i], &acc, e)
        })
    }

    /// `map h (scan f z xs)` at host level, `h` computing a scalar or vector without parallel
    /// maps: the scan node and `h`, so that the scan's kernel applies `h` as it stores.
    pub(super) fn scan_map_fusion(&self, e: ExprId, dest: &Dest) -> Option<(ExprId, ExprId)> {
        if dest.len.is_some() || dest.rows {
            return None;
        }
        let IrExpr::Prim {
            prim: Prim::Map(MapKind::Glb(0) | MapKind::Plain),
            args,
        } = self.prog.expr(e)
        else {
            return None;
        };
        if self.layout_map(e).is_some() {
            return None;
        }
        let scan = self.strip_to(args[1]);
        if !matches!(
            self.prog.expr(scan),
            IrExpr::Prim {
                prim: Prim::Scan(ScanKind::Glb | ScanKind::Plain),
                ..
            }
        ) || self.pre.contains_key(&scan)
        {
            return None;
        }
        let (_, body) = self.lambda(args[0]).ok()?;
        if self.contains_parallel(body) || !matches!(self.info.ty(body), Type::Scalar(_) | Type::Vector(..)) {
            return None;
        }
        Some((scan, args[0]))
    }

    /// `map (λr. scanGlb f z xs) xss` at host level, `xs` a view of `r` or a map of a scalar
    /// function over one: the scan node, and the map node, `r` and `xss` (see [`Gen::scan_glb`]).
    #[allow(clippy::type_complexity)]
    pub(super) fn scan_rows_form(&self, e: ExprId, dest: &Dest) -> Option<(ExprId, (ExprId, VarId, ExprId))> {
        if dest.len.is_some() || dest.rows {
            return None;
        }
        let IrExpr::Prim {
            prim: Prim::Map(MapKind::Glb(0) | MapKind::Plain),
            args,
        } = self.prog.expr(e)
        else {
            return None;
        };
        let (params, body) = self.lambda(args[0]).ok()?;
        let scan = self.strip_to(body);
        let IrExpr::Prim {
            prim: Prim::Scan(ScanKind::Glb),
            args: sargs,
        } = self.prog.expr(scan)
        else {
            return None;
        };
        let xs = sargs[2];
        let read = match self.filter_producer(xs) {
            Some((_, _, ys)) => ys,
            None => xs,
        };
        (params.len() == 1 && self.is_view(read)).then_some((scan, (e, params[0], args[1])))
    }

    /// Applies the scan's operator to two values held in C expressions, into a fresh variable.
    fn combine(&mut self, op: &Op2, a: Expr, b: Expr) -> Result<Expr> {
        let va = Rc::new(View::Value {
            expr: a,
            ty: op.ty.clone(),
        });
        let vb = Rc::new(View::Value {
            expr: b,
            ty: op.ty.clone(),
        });
        self.bind(op.params[0], Bound::View(va));
        self.bind(op.params[1], Bound::View(vb));
        let r = self.scalar(op.body)?;
        match r {
            Read::Expr(a) => Ok(self.access_expr(&a)),
            Read::Tuple(_) => Err(Diagnostic::new(
                self.prog.span(op.body),
                "internal: a tuple accumulator of scanGlb",
            )),
        }
    }

    /// `lhs = f(a, b)`.
    fn combine_into(&mut self, op: &Op2, lhs: Expr, a: Expr, b: Expr) -> Result<()> {
        let r = self.combine(op, a, b)?;
        self.push(Stmt::assign(lhs, r));
        Ok(())
    }

    /// A private value of the scan's type, `init` until it is assigned (so that no path reads
    /// an uninitialized variable).
    fn decl_value(&mut self, ty: &CType, hint: &str, init: &Expr) -> Ident {
        let name = self.fresh(hint);
        self.push(Stmt::decl(ty.clone(), &name, init.clone()));
        name
    }

    fn decl_int(&mut self, hint: &str, init: Expr) -> Ident {
        let name = self.fresh(hint);
        self.push(Stmt::decl(CType::INT, &name, init));
        name
    }
}

impl Gen<'_> {
    /// Where the tile of ticket `t` lies, for both scan kernels: a whole array's tile `t`
    /// (`tk = t`); over rows (`rows`: the map's row variable bound to its row of `xss`, `m`
    /// rows of `row_tiles` tiles each), its row `t / row_tiles`, its place `tk` in that row and
    /// the row's first tile `first`, with the row variable bound. Returns `(tk, first, the row
    /// index)`.
    fn tile_place(
        &mut self,
        t: &Ident,
        rows: &Option<(ExprId, ir::VarId, ExprId)>,
        n_rows: &Option<ArithExpr>,
        row_tiles: &ArithExpr,
    ) -> Result<(Ident, Option<Ident>, Option<ArithExpr>)> {
        Ok(match (rows, n_rows) {
            (Some((_, r, xss)), Some(m)) => {
                let per = arith(row_tiles);
                let row = self.decl_int("row", Expr::bin(BinOp::Div, v(t), per.clone()));
                let tk = self.decl_int("tk", Expr::bin(BinOp::Rem, v(t), per.clone()));
                let first = self.decl_int("first", mul(v(&row), per));
                let xv = self.value(*xss)?;
                let ri = ArithExpr::var(row.as_str(), Range::upto(m.clone()));
                self.bind(*r, Bound::View(xv.access(ri.clone())));
                (tk, Some(first), Some(ri))
            }
            _ => (t.clone(), None, None),
        })
    }
}

// Builders of the C expressions that both scan kernels (`glb`, `striped`) write.
fn v(i: &Ident) -> Expr {
    Expr::var(i)
}
fn int(k: usize) -> Expr {
    Expr::Int(k as i64)
}
fn add(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Add, a, b)
}
fn sub(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Sub, a, b)
}
fn mul(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Mul, a, b)
}
fn lt(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Lt, a, b)
}
fn eq(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Eq, a, b)
}
fn and(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::And, a, b)
}
