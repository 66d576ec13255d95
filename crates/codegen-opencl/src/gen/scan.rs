//! Inclusive prefixes: `scanSeq` (and a high-level `scan` inside a kernel) as one work-item's
//! loop, and `scanGlb` (a high-level `scan` at host level) as one kernel that reads each input
//! element once and writes each output element once: a single pass with a decoupled look-back
//! (Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016).
//!
//! The kernel shares the filter's protocol (`filter.rs`): a zeroed status buffer whose word 0 hands
//! out tile tickets in the order groups start (so a group only waits for tiles of groups already
//! running), the same work-group size and look-back window, status words read with
//! `LIFT_STATUS_LOAD` (a volatile load on a GPU, an atomic elsewhere). The filter's look-back sums
//! integer counts, which it keeps in the status words themselves (value + 1, reduced in the
//! window by local atomics); a scan's values have the element's type and its operator is only
//! associative, so a tile publishes its value in a buffer of that type before its status word
//! (after a global fence) and the window is combined in order, farthest tile first.
//!
//! A tile is `SCAN_WG * items` consecutive elements (16 of 4 bytes a work-item, 64 bytes in all).
//! The group loads it with consecutive work-items reading consecutive elements (coalesced) into
//! local memory, each work-item then scans its `items` consecutive elements there, the group scans
//! the work-items' totals (runs of 8 serially, then the runs), work-item 0 publishes the tile's
//! aggregate and the group looks back for its exclusive prefix, each element gets its prefix, and
//! the tile is stored as it was loaded. A map before the scan (`scan f z (map g xs)`) is applied
//! as each element is loaded and a map after it (`map h (scan f z xs)`) as each is stored, so
//! either is the same single launch. No identity of the operator is needed: a work-item, group or
//! tile without a predecessor takes its first value as it is, and `z` is combined with element 0
//! alone (`z ⊕ x0 ⊕ …`), as the interpreter does.
//!
//! Local arrays are padded by one slot every 32 elements so that work-items reading their
//! consecutive elements hit distinct banks.

use super::filter::{device_macros, filter_wg, local_array, LOOKBACK, STATUS_LOAD};
use super::*;
use crate::ast::{BinOp, CType, Expr, Fence, Stmt};
use crate::namer::Ident;
use arith::{ArithExpr, Range};
use ir::{Expr as IrExpr, ExprId, Prim, ScanKind, Type};
use memalloc::Role;
use reduce::assign;

/// Serial runs of the work-group scan of the work-items' totals.
const RUN: usize = 8;
/// Bytes of a tile's elements each work-item holds.
const ITEM_BYTES: usize = 64;

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
/// Slot `i` of a local array padded by one slot every 32.
fn pad(i: Expr) -> Expr {
    add(i.clone(), Expr::bin(BinOp::Div, i, int(32)))
}
fn padded(len: usize) -> usize {
    len + len / 32 + 1
}

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

    /// `scanGlb f z xs` into `dest` (see the module documentation); with `consumer`, the function
    /// of the map that consumed the result, applied to each element as it is stored. With
    /// `rows`, the scan is the body of `map (λr. scanGlb f z xs) xss` at host level (the map
    /// node, `r` and `xss`): every row is scanned by the same launch, its tiles numbered after
    /// the rows before it, and a tile's look-back stops at its row's first tile.
    pub(super) fn scan_glb(
        &mut self,
        e: ExprId,
        rows: Option<(ExprId, VarId, ExprId)>,
        consumer: Option<ExprId>,
        dest: &Dest,
    ) -> Result<()> {
        let IrExpr::Prim {
            prim: Prim::Scan(_),
            args,
        } = self.prog.expr(e).clone()
        else {
            return Err(self.err(e, "internal: not a scan"));
        };
        let (f, z, xs) = (args[0], args[1], args[2]);
        // A map producing the input is applied as each element is loaded; any other computed
        // input is computed by the kernels before.
        let producer = self.filter_producer(xs);
        match (rows, producer) {
            (Some((map, _, _)), _) => self.host_prepare(map)?,
            (None, Some((map, _, _))) => self.host_prepare(map)?,
            (None, None) => self.host_prepare(e)?,
        }
        let (params, body) = self.lambda(f)?;
        let ty = self.cty(z)?;
        if !matches!(ty, Type::Scalar(_) | Type::Vector(..)) {
            return Err(self.err(e, format!("internal: scanGlb of {ty}")));
        }
        let op = Op2 {
            params,
            body,
            ty: ty.clone(),
        };
        let ct = self.ctype(&ty)?;
        let bytes = c_bytes(&ct);
        let items = (ITEM_BYTES / bytes).clamp(2, 16);
        let wg = filter_wg(&self.wg_limit);
        let tile = wg * items;
        let runs = wg / RUN;
        let w = LOOKBACK;
        let n = self.len_of(xs)?;
        let cap = self.capacity(&n);
        // Tiles a row (the whole array is one row).
        let row_tiles = cap
            .add(&ArithExpr::cst(tile as i64 - 1))
            .div(&ArithExpr::cst(tile as i64));
        let n_rows = match rows {
            Some((_, _, xss)) => Some(self.len_of(xss)?),
            None => None,
        };
        let tiles = match &n_rows {
            Some(m) => self.capacity(m).mul(&row_tiles),
            None => row_tiles.clone(),
        };
        // Word 0: the ticket counter; word 1 + t: tile t's state (0 not published, 1 its
        // aggregate, 2 its inclusive prefix), each value in its buffer before its word.
        let (status_b, _) = self
            .alloc(
                "status",
                &Type::array(Type::int(), tiles.add(&ArithExpr::cst(1))),
                AddressSpace::Global,
                &[],
                Role::Scratch,
            )
            .map_err(|m| self.err(e, m))?;
        let st = self.buf_ident(&self.mem.buffers[status_b].name.clone());
        let words = bytes / 4;
        // Values are moved as 4-byte words (`value_functions`), so their buffers are of ints.
        let value_buf = |g: &mut Self, hint: &str| -> Result<Ident> {
            let (b, _) = g
                .alloc(
                    hint,
                    &Type::array(Type::int(), tiles.mul(&ArithExpr::cst(words as i64))),
                    AddressSpace::Global,
                    &[],
                    Role::Scratch,
                )
                .map_err(|m| g.err(e, m))?;
            Ok(g.buf_ident(&g.mem.buffers[b].name.clone()))
        };
        let aggv = value_buf(self, "agg")?;
        let incv = value_buf(self, "inc")?;
        let spelled = crate::print::ctype(&ct);
        let (load_fn, store_fn) = (
            format!("lift_value_load_{spelled}"),
            format!("lift_value_store_{spelled}"),
        );

        let mut k = KernelCx::new(Level::Item);
        k.wrg = true;
        k.global[0] = Some(tiles.clone());
        k.local[0] = Some(wg);
        let sx = self.fresh("sx");
        let tot = self.fresh("tot");
        let runsum = self.fresh("runsum");
        let runpre = self.fresh("runpre");
        let win = self.fresh("win");
        let wfl = self.fresh("wfl");
        let ctl = self.fresh("ctl");
        let sa = self.fresh("sa");
        k.decls.push(local_array(ct.clone(), &sx, padded(tile)));
        k.decls.push(local_array(ct.clone(), &tot, wg + wg / RUN));
        k.decls.push(local_array(ct.clone(), &runsum, runs));
        k.decls.push(local_array(ct.clone(), &runpre, runs));
        k.decls.push(local_array(ct.clone(), &win, w));
        k.decls.push(local_array(CType::INT, &wfl, w));
        k.decls.push(local_array(CType::INT, &ctl, 3));
        k.decls.push(local_array(ct.clone(), &sa, 1));
        k.notes.push(format!(
            "scanGlb{}: tiles of {tile} elements ({items} a work-item, loaded and stored by consecutive work-items through local memory), one pass with a decoupled look-back over windows of {w} tiles{}{}",
            if rows.is_some() { " of every row in one launch" } else { "" },
            if producer.is_some() { ", the map before it applied as elements are loaded" } else { "" },
            if consumer.is_some() { ", the map after it applied as elements are stored" } else { "" },
        ));
        self.k = Some(k);

        let l = self.decl_int("l", Expr::call("get_local_id", vec![int(0)]));
        self.open_if(eq(v(&l), int(0)));
        self.push(Stmt::assign(
            v(&ctl).index(int(0)),
            Expr::call("atomic_inc", vec![v(&st)]),
        ));
        self.push(Stmt::assign(v(&ctl).index(int(1)), int(w)));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        let t = self.decl_int("t", v(&ctl).index(int(0)));
        // `tk`: the tile's place in its row, `first`: its row's first tile.
        let (tk, first, row_index) = match (&rows, &n_rows) {
            (Some((_, r, xss)), Some(m)) => {
                let per = arith(&row_tiles);
                let row = self.decl_int("row", Expr::bin(BinOp::Div, v(&t), per.clone()));
                let tk = self.decl_int("tk", Expr::bin(BinOp::Rem, v(&t), per.clone()));
                let first = self.decl_int("first", mul(v(&row), per));
                let xv = self.value(*xss)?;
                let ri = ArithExpr::var(row.as_str(), Range::upto(m.clone()));
                self.bind(*r, Bound::View(xv.access(ri.clone())));
                (tk, Some(first), Some(ri))
            }
            _ => (t.clone(), None, None),
        };
        let base = self.decl_int("base", mul(v(&tk), int(tile)));
        let nn = arith(&n);
        // Groups past the end of a run-time length have nothing to do (uniform in a group).
        self.open_if(lt(v(&base), nn.clone()));
        let zc = self.scalar(z)?;
        let zv = self.declare(&zc, &ty, "z")?;
        let Read::Expr(za) = zv else {
            return Err(self.err(z, "internal: tuple start of scanGlb"));
        };
        let zexpr = self.access_expr(&za);

        // Load: element `base + r * wg + l` into slot `r * wg + l`.
        let r = self.fresh("r");
        self.open_for(&r, int(0), int(items), int(1), true);
        let eid = self.decl_int("e", add(v(&base), add(mul(v(&r), int(wg)), v(&l))));
        self.open_if(lt(v(&eid), nn.clone()));
        let x = self.scan_elem(xs, producer, &eid, &n)?;
        self.push(Stmt::assign(v(&sx).index(pad(add(mul(v(&r), int(wg)), v(&l)))), x));
        self.close();
        self.close();
        self.push(Stmt::Barrier(Fence::Local));

        // Each work-item scans its `items` consecutive elements in place.
        let o = self.decl_int("o", mul(v(&l), int(items)));
        let acc = self.decl_value(&ct, "acc", &zexpr);
        let slot = |i: Expr| v(&sx).index(pad(i));
        self.open_if(lt(add(v(&base), v(&o)), nn.clone()));
        self.push(Stmt::assign(v(&acc), slot(v(&o))));
        self.open_if(Expr::bin(BinOp::And, eq(v(&tk), int(0)), eq(v(&l), int(0))));
        self.combine_into(&op, v(&acc), zexpr.clone(), v(&acc))?;
        self.push(Stmt::assign(slot(v(&o)), v(&acc)));
        self.close();
        self.close();
        let r1 = self.fresh("r");
        self.open_for(&r1, int(1), int(items), int(1), true);
        let i = self.decl_int("i", add(v(&o), v(&r1)));
        self.open_if(lt(add(v(&base), v(&i)), nn.clone()));
        self.combine_into(&op, v(&acc), v(&acc), slot(v(&i)))?;
        self.push(Stmt::assign(slot(v(&i)), v(&acc)));
        self.close();
        self.close();
        // Work-items past the end leave garbage totals, which no work-item before them reads.
        let tslot = |x: Expr| v(&tot).index(add(x.clone(), Expr::bin(BinOp::Div, x, int(RUN))));
        self.push(Stmt::assign(tslot(v(&l)), v(&acc)));
        self.push(Stmt::Barrier(Fence::Local));
        // Runs of RUN totals, inclusive in place.
        self.open_if(lt(v(&l), int(runs)));
        let j = self.fresh("j");
        self.open_for(&j, int(1), int(RUN), int(1), true);
        let s = self.decl_int("s", add(mul(v(&l), int(RUN + 1)), v(&j)));
        let prev = v(&tot).index(sub(v(&s), int(1)));
        self.combine_into(&op, v(&tot).index(v(&s)), prev, v(&tot).index(v(&s)))?;
        self.close();
        self.push(Stmt::assign(
            v(&runsum).index(v(&l)),
            v(&tot).index(add(mul(v(&l), int(RUN + 1)), int(RUN - 1))),
        ));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        // The exclusive prefix of each run but the first.
        self.open_if(Expr::bin(BinOp::And, lt(int(0), v(&l)), lt(v(&l), int(runs))));
        let p = self.decl_value(&ct, "p", &zexpr);
        self.push(Stmt::assign(v(&p), v(&runsum).index(int(0))));
        let j2 = self.fresh("j");
        self.open_for(&j2, int(1), v(&l), int(1), false);
        self.combine_into(&op, v(&p), v(&p), v(&runsum).index(v(&j2)))?;
        self.close();
        self.push(Stmt::assign(v(&runpre).index(v(&l)), v(&p)));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        // This work-item's exclusive prefix in the tile (none for work-item 0).
        let q = self.decl_value(&ct, "q", &zexpr);
        let rr = self.decl_int("rr", Expr::bin(BinOp::Div, v(&l), int(RUN)));
        let jj = self.decl_int("jj", Expr::bin(BinOp::Rem, v(&l), int(RUN)));
        self.open_if(lt(int(0), v(&jj)));
        self.push(Stmt::assign(
            v(&q),
            v(&tot).index(add(mul(v(&rr), int(RUN + 1)), sub(v(&jj), int(1)))),
        ));
        self.open_if(lt(int(0), v(&rr)));
        self.combine_into(&op, v(&q), v(&runpre).index(v(&rr)), v(&q))?;
        self.close();
        self.close();
        self.open_if(Expr::bin(BinOp::And, eq(v(&jj), int(0)), lt(int(0), v(&rr))));
        self.push(Stmt::assign(v(&q), v(&runpre).index(v(&rr))));
        self.close();

        // Work-item 0 publishes the tile's aggregate (tile 0: its inclusive prefix).
        let agg = self.decl_value(&ct, "agg", &zexpr);
        let flag_at = |k: Expr| add(v(&st), add(int(1), k));
        let publish = |g: &mut Self, buf: &Ident, val: Expr, state: usize| {
            g.push(Stmt::Call(Expr::call(store_fn.clone(), vec![v(buf), v(&t), val])));
            g.push(Stmt::Call(Expr::call(
                "mem_fence",
                vec![Expr::Sym("CLK_GLOBAL_MEM_FENCE".into())],
            )));
            g.push(Stmt::Call(Expr::call("atomic_xchg", vec![flag_at(v(&t)), int(state)])));
        };
        self.open_if(eq(v(&l), int(0)));
        self.combine_into(
            &op,
            v(&agg),
            v(&runpre).index(int(runs - 1)),
            v(&runsum).index(int(runs - 1)),
        )?;
        self.open_if(eq(v(&tk), int(0)));
        publish(self, &incv, v(&agg), 2);
        self.close();
        self.open_if(lt(int(0), v(&tk)));
        publish(self, &aggv, v(&agg), 1);
        self.close();
        self.close();

        // The look-back: lane `l < w` reads tile `j - l`; the nearest lane that is not an
        // aggregate (an inclusive prefix, an unpublished tile, or before tile 0) stops the window.
        self.open_if(lt(int(0), v(&tk)));
        let a = self.decl_value(&ct, "a", &zexpr);
        let has_a = self.decl_int("hasa", int(0));
        let jw = self.decl_int("jw", sub(v(&t), int(1)));
        let lb = self.fresh("lb");
        self.open(Head::For {
            var: lb,
            init: int(0),
            cond: Expr::bin(BinOp::Ge, v(&jw), int(0)),
            step: (crate::ast::AssignOp::Add, int(0)),
            unroll: false,
        });
        self.open_if(lt(v(&l), int(w)));
        let wt = self.decl_int("w", sub(v(&jw), v(&l)));
        let fl = self.decl_int("fl", int(3));
        let start = first.as_ref().map_or(int(0), v);
        self.open_if(Expr::bin(BinOp::Ge, v(&wt), start));
        self.push(Stmt::assign(v(&fl), Expr::call(STATUS_LOAD, vec![flag_at(v(&wt))])));
        self.push(Stmt::Call(Expr::call(
            "read_mem_fence",
            vec![Expr::Sym("CLK_GLOBAL_MEM_FENCE".into())],
        )));
        let vload = |buf: &Ident| Expr::call(load_fn.clone(), vec![v(buf), v(&wt)]);
        self.open_if(eq(v(&fl), int(1)));
        self.push(Stmt::assign(v(&win).index(v(&l)), vload(&aggv)));
        self.close();
        self.open_if(eq(v(&fl), int(2)));
        self.push(Stmt::assign(v(&win).index(v(&l)), vload(&incv)));
        self.close();
        self.close();
        self.push(Stmt::assign(v(&wfl).index(v(&l)), v(&fl)));
        self.open_if(Expr::bin(BinOp::Ne, v(&fl), int(1)));
        self.push(Stmt::Call(Expr::call("atomic_min", vec![add(v(&ctl), int(1)), v(&l)])));
        self.close();
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        // Work-item 0 combines the window, farthest tile first, in front of what it has.
        self.open_if(eq(v(&l), int(0)));
        let stop = self.decl_int("stop", v(&ctl).index(int(1)));
        self.push(Stmt::assign(v(&ctl).index(int(1)), int(w)));
        let sst = self.decl_int(
            "sst",
            Expr::select(
                lt(v(&stop), int(w)),
                v(&wfl).index(Expr::bin(BinOp::Rem, v(&stop), int(w))),
                int(1),
            ),
        );
        let wv = self.decl_value(&ct, "wv", &zexpr);
        let has_w = self.decl_int("hasw", int(0));
        self.open_if(eq(v(&sst), int(2)));
        self.push(Stmt::assign(v(&wv), v(&win).index(v(&stop))));
        self.push(Stmt::assign(v(&has_w), int(1)));
        self.close();
        let kk = self.fresh("k");
        self.open(Head::For {
            var: kk.clone(),
            init: sub(v(&stop), int(1)),
            cond: Expr::bin(BinOp::Ge, v(&kk), int(0)),
            step: (crate::ast::AssignOp::Add, Expr::Int(-1)),
            unroll: false,
        });
        self.open_if(v(&has_w));
        self.combine_into(&op, v(&wv), v(&wv), v(&win).index(v(&kk)))?;
        self.close();
        self.open_if(Expr::un(crate::ast::UnOp::Not, v(&has_w)));
        self.push(Stmt::assign(v(&wv), v(&win).index(v(&kk))));
        self.push(Stmt::assign(v(&has_w), int(1)));
        self.close();
        self.close();
        self.open_if(v(&has_w));
        self.open_if(v(&has_a));
        self.combine_into(&op, v(&a), v(&wv), v(&a))?;
        self.close();
        self.open_if(Expr::un(crate::ast::UnOp::Not, v(&has_a)));
        self.push(Stmt::assign(v(&a), v(&wv)));
        self.close();
        self.push(Stmt::assign(v(&has_a), int(1)));
        self.close();
        // Next: past a window of aggregates, to an unpublished tile, or done.
        let next = Expr::select(
            eq(v(&sst), int(1)),
            sub(v(&jw), int(w)),
            Expr::select(eq(v(&sst), int(0)), sub(v(&jw), v(&stop)), Expr::Int(-1)),
        );
        self.push(Stmt::assign(v(&ctl).index(int(2)), next));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        self.push(Stmt::assign(v(&jw), v(&ctl).index(int(2))));
        self.close();
        // Work-item 0 publishes the tile's inclusive prefix and shares its exclusive one.
        self.open_if(eq(v(&l), int(0)));
        let inc = self.combine(&op, v(&a), v(&agg))?;
        publish(self, &incv, inc, 2);
        self.push(Stmt::assign(v(&sa).index(int(0)), v(&a)));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        // The tile's prefix goes in front of the work-item's own.
        self.open_if(lt(int(0), v(&l)));
        self.combine_into(&op, v(&q), v(&sa).index(int(0)), v(&q))?;
        self.close();
        self.open_if(eq(v(&l), int(0)));
        self.push(Stmt::assign(v(&q), v(&sa).index(int(0))));
        self.close();
        self.close();
        // Every work-item but the very first applies its prefix to its elements.
        self.open_if(Expr::bin(BinOp::Or, lt(int(0), v(&tk)), lt(int(0), v(&l))));
        let r2 = self.fresh("r");
        self.open_for(&r2, int(0), int(items), int(1), true);
        let i2 = self.decl_int("i", add(v(&o), v(&r2)));
        self.open_if(lt(add(v(&base), v(&i2)), nn.clone()));
        self.combine_into(&op, slot(v(&i2)), v(&q), slot(v(&i2)))?;
        self.close();
        self.close();
        self.close();
        self.push(Stmt::Barrier(Fence::Local));

        // Store as loaded, through the map after the scan.
        let r3 = self.fresh("r");
        self.open_for(&r3, int(0), int(items), int(1), true);
        let e3 = self.fresh("e");
        self.push(Stmt::decl(
            CType::INT,
            &e3,
            add(v(&base), add(mul(v(&r3), int(wg)), v(&l))),
        ));
        self.open_if(lt(v(&e3), nn.clone()));
        let y = slot(add(mul(v(&r3), int(wg)), v(&l)));
        let yv = Rc::new(View::Value {
            expr: y,
            ty: ty.clone(),
        });
        let out = match consumer {
            Some(h) => {
                let (hp, hb) = self.lambda(h)?;
                self.bind(hp[0], Bound::View(yv));
                self.scalar(hb)?
            }
            None => yv.read(&[]).map_err(|m| self.err(e, m.0))?,
        };
        let idx = ArithExpr::var(e3.as_str(), Range::upto(n.clone()));
        let row_dest = match row_index {
            Some(ri) => dest.view.access(ri),
            None => dest.view.clone(),
        };
        self.write(&row_dest, &[idx], &out, e)?;
        self.close();
        self.close();
        self.close();
        let at = device_macros(self);
        let functions = value_functions(&spelled, words);
        if !self.source.contains(&functions) {
            self.source.insert_str(at, &functions);
        }
        let k = self.k.take().expect("set");
        self.finish_kernel(k, e)
    }

    /// Element `e` of the scan's input as a C value: read from `xs`, or `g` applied to element
    /// `e` of `ys` where `xs` is `map g ys`.
    fn scan_elem(
        &mut self,
        xs: ExprId,
        producer: Option<(ExprId, ExprId, ExprId)>,
        e: &Ident,
        n: &ArithExpr,
    ) -> Result<Expr> {
        let idx = ArithExpr::var(e.as_str(), Range::upto(n.clone()));
        let r = match producer {
            Some((_, g, ys)) => {
                let (gp, gb) = self.lambda(g)?;
                let yv = self.value(ys)?;
                self.bind(gp[0], Bound::View(yv.access(idx)));
                self.scalar(gb)?
            }
            None => {
                let xv = self.value(xs)?;
                xv.access(idx).read(&[]).map_err(|m| self.err(xs, m.0))?
            }
        };
        match r {
            Read::Expr(a) => Ok(self.access_expr(&a)),
            Read::Tuple(_) => Err(self.err(xs, "internal: a tuple element of scanGlb")),
        }
    }
}

/// The functions that publish a tile's value and read another's, for values of the C type `t` of
/// `words` 4-byte words. On a GPU (`LIFT_GPU_DEVICE`) a plain store and a volatile load, which
/// bypasses the non-coherent L1 cache (the status word was read first and a fence orders the two
/// reads); elsewhere the value's words through atomics (a union holds the value and its words),
/// so that Oclgrind, which runs the groups of a launch one after another, sees no race between
/// the group that publishes and the groups that read.
fn value_functions(t: &str, words: usize) -> String {
    format!(
        "typedef union {{ {t} v; int w[{words}]; }} lift_words_{t};
{t} lift_value_load_{t}(global int* p, int i) {{
  lift_words_{t} u;
#if LIFT_GPU_DEVICE
  u.v = ((volatile global {t}*)p)[i];
#else
  for (int k = 0; k < {words}; k++) u.w[k] = atomic_or(p + i * {words} + k, 0);
#endif
  return u.v;
}}
void lift_value_store_{t}(global int* p, int i, {t} x) {{
#if LIFT_GPU_DEVICE
  ((global {t}*)p)[i] = x;
#else
  lift_words_{t} u;
  u.v = x;
  for (int k = 0; k < {words}; k++) atomic_xchg(p + i * {words} + k, u.w[k]);
#endif
}}
"
    )
}

/// Bytes of a value of a scalar or vector C type (a 3-vector takes 4 lanes).
fn c_bytes(t: &CType) -> usize {
    let scalar = |s: &crate::ast::Scalar| match s {
        crate::ast::Scalar::Int | crate::ast::Scalar::UInt | crate::ast::Scalar::Float => 4,
        crate::ast::Scalar::Long | crate::ast::Scalar::ULong | crate::ast::Scalar::Double => 8,
    };
    match t {
        CType::Scalar(s) => scalar(s),
        CType::Vector(s, w) => scalar(s) * usize::from(if *w == 3 { 4 } else { *w }),
        CType::Struct(_) | CType::Ptr { .. } => 16,
    }
}
