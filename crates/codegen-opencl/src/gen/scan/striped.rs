//! `scanGlb` of 4-byte scalars (`float`, `int`, `uint`): tiles in registers with no trip
//! through local memory, the in-group scan and the look-back done by warps of 32 lanes.
//!
//! The work-groups take tile tickets and publish a tile's state and value in one 64-bit word as
//! `glb.rs` does (its protocol and `lift_tile_store_T`). What differs is the tile's own work:
//! - A tile is `VECS` strips of `wg` vectors of 4 elements (`ROW_VECS` in a scan of rows, so
//!   that a row of 8,192 floats is one group's tile). Work-item `l` holds vector `l` of every
//!   strip, read with one 16-byte load where the input is a buffer read in order (`float4`
//!   through a vector pointer when the offset is a known multiple of 4, else `vload4`), so a
//!   warp's load is 512 consecutive bytes; a map before the scan is applied to each lane.
//! - Each work-item scans its vectors' lanes in registers; the lanes' totals are scanned
//!   within each warp (`shfl.sync.up` on NVIDIA, no local memory and no barrier); the last
//!   valid lane of each warp writes its strip's warp total to local memory and, after the one
//!   barrier of the tile's scan, every work-item combines the totals before its warp in its
//!   strips (the tile's aggregate is all of them).
//! - Work-item 0 publishes the aggregate and warp 0 looks back 32 predecessors a trip: a lane
//!   a status word, three ballots (`vote.sync.ballot`) find the nearest lane that is not an
//!   aggregate and its state, a tree of shuffles (`shfl.sync.down`) combines the lanes before
//!   it, farthest first. The other warps wait at the barrier that shares the prefix.
//! - Each work-item applies its prefix in registers and stores its vectors as it loaded them
//!   (`vstore4` or a vector pointer), through the map after the scan.
//!
//! The same algorithm runs everywhere: without NVIDIA's warps ([`EmitOptions::warp_shuffles`])
//! each exchange is emulated through local memory between two barriers, the look-back run by
//! the whole group (warp 0's lanes load, the others follow), so that PoCL and Oclgrind test
//! the algorithm that the GPU runs. No identity of the operator is needed: a lane past the
//! end combines nothing, and lanes, warps and tiles without a predecessor take their value as
//! it is (`z` is combined with element 0 alone, as the interpreter does).
//!
//! [`EmitOptions::warp_shuffles`]: crate::EmitOptions::warp_shuffles

use super::*;
use crate::ptx::{Asm, PtxOp};
use warps::Exchange;

mod warps;

/// Elements of a vector, and vectors a work-item holds: whole arrays, rows. Measured on the
/// H200 (`bench/results/scan-fast-nvidia-h200-2026-12-02.md`): 2^28 floats in 0.611 ms with 8
/// (1.19× a copy) against 0.686 with 4; rows of 8,192 at 1.01× a copy (one tile a row, no
/// look-back). Reading 4 predecessors a lane in the look-back instead of one was slower (0.91).
const LANES: usize = 4;
const VECS: usize = 8;
const ROW_VECS: usize = 8;
/// Lanes of a warp.
const WARP: usize = 32;
/// Warp-level steps of a scan of 32 lanes.
const STEPS: [usize; 5] = [1, 2, 4, 8, 16];

/// What `scan_glb` has worked out before it chooses this kernel.
pub(super) struct Parts {
    pub op: Op2,
    pub ct: CType,
    pub z: ExprId,
    pub xs: ExprId,
    pub producer: Option<(ExprId, ExprId, ExprId)>,
    pub rows: Option<(ExprId, VarId, ExprId)>,
    pub consumer: Option<ExprId>,
    pub wg: usize,
}

/// Whether a scan of values of C type `ct` in groups of `wg` takes this kernel.
pub(super) fn fits(ct: &CType, wg: usize) -> bool {
    let four = match ct {
        CType::Scalar(s) => matches!(
            s,
            crate::ast::Scalar::Int | crate::ast::Scalar::UInt | crate::ast::Scalar::Float
        ),
        CType::Vector(..) | CType::Struct(_) | CType::Ptr { .. } => false,
    };
    four && wg >= WARP && wg.is_multiple_of(WARP)
}

fn le(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Le, a, b)
}
fn or(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Or, a, b)
}
fn uint(k: usize) -> Expr {
    Expr::TypedInt(crate::ast::Scalar::UInt, k as u64)
}
fn bit(m: &Ident, k: Expr) -> Expr {
    Expr::bin(
        BinOp::Ne,
        Expr::bin(BinOp::BitAnd, Expr::bin(BinOp::Shr, v(m), k), uint(1)),
        uint(0),
    )
}

impl Gen<'_> {
    /// `scanGlb` of 4-byte scalars into `dest` (see the module documentation).
    pub(super) fn scan_glb_striped(&mut self, e: ExprId, p: Parts, dest: &Dest) -> Result<()> {
        let Parts {
            op,
            ct,
            z,
            xs,
            producer,
            rows,
            consumer,
            wg,
        } = p;
        let ty = op.ty.clone();
        let vecs = if rows.is_some() { ROW_VECS } else { VECS };
        let items = vecs * LANES;
        let tile = wg * items;
        let nw = wg / WARP;
        let warps = self.warp_shuffles;
        let n = self.len_of(xs)?;
        let cap = self.capacity(&n);
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
        // Int word 0: the ticket counter; tile t's state word (64 bits) at int word 2 + 2t.
        let (status_b, _) = self
            .alloc(
                "status",
                &Type::array(Type::int(), tiles.add(&ArithExpr::cst(1)).mul(&ArithExpr::cst(2))),
                AddressSpace::Global,
                &[],
                Role::Scratch,
            )
            .map_err(|m| self.err(e, m))?;
        let st = self.buf_ident(&self.mem.buffers[status_b].name.clone());
        let spelled = crate::print::ctype(&ct);
        let (get_fn, store_fn) = (format!("lift_tile_get_{spelled}"), format!("lift_tile_store_{spelled}"));

        let mut k = KernelCx::new(Level::Item);
        k.wrg = true;
        k.global[0] = Some(tiles.clone());
        k.local[0] = Some(wg);
        let wt = self.fresh("wt");
        let ctl = self.fresh("ctl");
        let sa = self.fresh("sa");
        k.decls.push(local_array(ct.clone(), &wt, vecs * nw));
        k.decls.push(local_array(CType::INT, &ctl, 1));
        k.decls.push(local_array(ct.clone(), &sa, 1));
        let xch = if warps {
            None
        } else {
            let x = Exchange {
                vals: self.fresh("xch"),
                flags: self.fresh("flg"),
            };
            k.decls.push(local_array(ct.clone(), &x.vals, vecs * wg));
            k.decls.push(local_array(CType::INT, &x.flags, WARP));
            Some(x)
        };
        k.notes.push(format!(
            "scanGlb{}: tiles of {tile} elements ({vecs} vectors of {LANES} a work-item in registers, loaded and stored whole by consecutive work-items), warps of {WARP} scanning the totals and looking back 32 tiles a trip{}, a tile's state and value in one 64-bit word{}{}",
            if rows.is_some() { " of every row in one launch" } else { "" },
            if warps { " (PTX shuffles and ballots)" } else { " (exchanges through local memory)" },
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
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        let t = self.decl_int("t", v(&ctl).index(int(0)));
        let (tk, first, row_index) = self.tile_place(&t, &rows, &n_rows, &row_tiles)?;
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
        let lane = self.decl_int("lane", Expr::bin(BinOp::Rem, v(&l), int(WARP)));
        let wp = self.decl_int("wp", Expr::bin(BinOp::Div, v(&l), int(WARP)));
        let xr = self.private_array(&ct, "xr", items, &zexpr);
        // Vector `l` of strip `r` starts at element `e0 + r * LANES * wg`.
        let e0 = self.decl_int("e0", add(v(&base), mul(v(&l), int(LANES))));
        let ev0 = self.decl_int("ev0", add(mul(v(&tk), int(tile / LANES)), v(&l)));
        let start = |r: &Ident| add(v(&e0), mul(v(r), int(LANES * wg)));
        let reg = |r: &Ident, c: Expr| v(&xr).index(add(mul(v(r), int(LANES)), c));

        // Load.
        let r = self.fresh("r");
        self.open_for(&r, int(0), int(vecs), int(1), true);
        let er = self.decl_int("e", start(&r));
        let evr = self.decl_int("ev", add(v(&ev0), mul(v(&r), int(wg))));
        let whole = self.vector_read(xs, producer, &evr, &n)?;
        let c = self.fresh("c");
        let has_whole = whole.is_some();
        if let Some((x4, lanes_of)) = whole {
            self.open_if(lt(add(v(&er), int(LANES - 1)), nn.clone()));
            let x4v = self.fresh("x4");
            self.push(Stmt::decl(x4.0, &x4v, x4.1));
            for c in 0..LANES {
                let x = lanes_of(self, v(&x4v).lane(c as u32))?;
                self.push(Stmt::assign(reg(&r, int(c)), x));
            }
            self.close();
            self.open_if(le(nn.clone(), add(v(&er), int(LANES - 1))));
        }
        self.open_for(&c, int(0), int(LANES), int(1), true);
        let ec = self.decl_int("ec", add(v(&er), v(&c)));
        self.open_if(lt(v(&ec), nn.clone()));
        let x = self.scan_elem(xs, producer, &ec, &n)?;
        self.push(Stmt::assign(reg(&r, v(&c)), x));
        self.close();
        self.close();
        if has_whole {
            self.close();
        }
        self.close();

        // Each work-item scans its vectors' lanes; `s[r]` is vector r's total.
        self.open_if(and(eq(v(&tk), int(0)), eq(v(&l), int(0))));
        self.combine_into(&op, v(&xr).index(int(0)), zexpr.clone(), v(&xr).index(int(0)))?;
        self.close();
        let s = self.private_array(&ct, "s", vecs, &zexpr);
        let r1 = self.fresh("r");
        self.open_for(&r1, int(0), int(vecs), int(1), true);
        self.push(Stmt::assign(v(&s).index(v(&r1)), reg(&r1, int(0))));
        let c1 = self.fresh("c");
        self.open_for(&c1, int(1), int(LANES), int(1), true);
        self.open_if(lt(add(start(&r1), v(&c1)), nn.clone()));
        self.combine_into(&op, v(&s).index(v(&r1)), v(&s).index(v(&r1)), reg(&r1, v(&c1)))?;
        self.push(Stmt::assign(reg(&r1, v(&c1)), v(&s).index(v(&r1))));
        self.close();
        self.close();
        self.close();

        // The totals scanned within each warp: lane i combines lane i - d's where it is valid
        // (a lane past the end is followed only by lanes past the end).
        let valid = |r: &Ident| lt(start(r), nn.clone());
        for d in STEPS {
            let got = self.exchange_up(e, (&ct, xch.as_ref()), &s, vecs, d, (&l, &lane, wg))?;
            let r2 = self.fresh("r");
            self.open_for(&r2, int(0), int(vecs), int(1), true);
            self.open_if(and(le(int(d), v(&lane)), valid(&r2)));
            self.combine_into(&op, v(&s).index(v(&r2)), v(&got).index(v(&r2)), v(&s).index(v(&r2)))?;
            self.close();
            self.close();
        }
        // The last valid lane of each warp holds the warp's total of its strip.
        let r3 = self.fresh("r");
        self.open_for(&r3, int(0), int(vecs), int(1), true);
        self.open_if(and(
            valid(&r3),
            or(eq(v(&lane), int(WARP - 1)), le(nn.clone(), add(start(&r3), int(LANES)))),
        ));
        self.push(Stmt::assign(
            v(&wt).index(add(mul(v(&r3), int(nw)), v(&wp))),
            v(&s).index(v(&r3)),
        ));
        self.close();
        self.close();
        // The exclusive prefix of each lane within its warp.
        let below = self.exchange_up(e, (&ct, xch.as_ref()), &s, vecs, 1, (&l, &lane, wg))?;
        self.push(Stmt::Barrier(Fence::Local));

        // The warps' totals before this work-item's warp in each strip (`pre`), and the tile's
        // aggregate (`run` at the end); a warp starting past the end adds nothing.
        let pre = self.private_array(&ct, "pre", vecs, &zexpr);
        let run = self.decl_value(&ct, "run", &v(&wt).index(int(0)));
        let (r4, w4) = (self.fresh("r"), self.fresh("w"));
        self.open_for(&r4, int(0), int(vecs), int(1), true);
        self.open_for(&w4, int(0), int(nw), int(1), true);
        self.open_if(lt(int(0), add(mul(v(&r4), int(nw)), v(&w4))));
        self.open_if(eq(v(&w4), v(&wp)));
        self.push(Stmt::assign(v(&pre).index(v(&r4)), v(&run)));
        self.close();
        let wstart = add(
            v(&base),
            mul(add(mul(v(&r4), int(wg)), mul(v(&w4), int(WARP))), int(LANES)),
        );
        self.open_if(lt(wstart, nn.clone()));
        self.combine_into(&op, v(&run), v(&run), v(&wt).index(add(mul(v(&r4), int(nw)), v(&w4))))?;
        self.close();
        self.close();
        self.close();
        self.close();
        // `q[r]`: the prefix of vector r in the tile, where it has one (`hq[r]`).
        let q = self.private_array(&ct, "q", vecs, &zexpr);
        let hq = self.private_array(&CType::INT, "hq", vecs, &int(0));
        let r5 = self.fresh("r");
        self.open_for(&r5, int(0), int(vecs), int(1), true);
        self.push(Stmt::assign(v(&q).index(v(&r5)), v(&pre).index(v(&r5))));
        self.push(Stmt::assign(
            v(&hq).index(v(&r5)),
            or(lt(int(0), v(&r5)), lt(int(0), v(&wp))),
        ));
        self.open_if(lt(int(0), v(&lane)));
        self.open_if(v(&hq).index(v(&r5)));
        self.combine_into(&op, v(&q).index(v(&r5)), v(&q).index(v(&r5)), v(&below).index(v(&r5)))?;
        self.close();
        self.open_if(Expr::un(crate::ast::UnOp::Not, v(&hq).index(v(&r5))));
        self.push(Stmt::assign(v(&q).index(v(&r5)), v(&below).index(v(&r5))));
        self.close();
        self.push(Stmt::assign(v(&hq).index(v(&r5)), int(1)));
        self.close();
        self.close();

        // Work-item 0 publishes the aggregate (a row's first tile: its inclusive prefix).
        let publish = |g: &mut Self, val: Expr, state: usize| {
            let a = vec![v(&st), v(&t), int(state), val];
            g.push(Stmt::Call(Expr::call(store_fn.clone(), a)));
        };
        self.open_if(eq(v(&l), int(0)));
        self.open_if(eq(v(&tk), int(0)));
        publish(self, v(&run), 2);
        self.close();
        self.open_if(lt(int(0), v(&tk)));
        publish(self, v(&run), 1);
        self.close();
        self.close();

        self.open_if(lt(int(0), v(&tk)));
        let first_tile = first.as_ref().map_or(int(0), v);
        let a = self.warp_look_back(&op, &ct, &zexpr, xch.as_ref(), (&st, &get_fn), (&l, &t, first_tile))?;
        self.open_if(eq(v(&l), int(0)));
        let inc = self.combine(&op, v(&a), v(&run))?;
        publish(self, inc, 2);
        self.push(Stmt::assign(v(&sa).index(int(0)), v(&a)));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        let r6 = self.fresh("r");
        self.open_for(&r6, int(0), int(vecs), int(1), true);
        self.open_if(v(&hq).index(v(&r6)));
        self.combine_into(&op, v(&q).index(v(&r6)), v(&sa).index(int(0)), v(&q).index(v(&r6)))?;
        self.close();
        self.open_if(Expr::un(crate::ast::UnOp::Not, v(&hq).index(v(&r6))));
        self.push(Stmt::assign(v(&q).index(v(&r6)), v(&sa).index(int(0))));
        self.close();
        self.push(Stmt::assign(v(&hq).index(v(&r6)), int(1)));
        self.close();
        self.close();

        // Each vector's prefix applied in registers.
        let r7 = self.fresh("r");
        self.open_for(&r7, int(0), int(vecs), int(1), true);
        self.open_if(v(&hq).index(v(&r7)));
        let c7 = self.fresh("c");
        self.open_for(&c7, int(0), int(LANES), int(1), true);
        self.open_if(lt(add(start(&r7), v(&c7)), nn.clone()));
        self.combine_into(&op, reg(&r7, v(&c7)), v(&q).index(v(&r7)), reg(&r7, v(&c7)))?;
        self.close();
        self.close();
        self.close();
        self.close();

        // Store as loaded, through the map after the scan.
        let row_dest = match row_index {
            Some(ri) => dest.view.access(ri),
            None => dest.view.clone(),
        };
        let r8 = self.fresh("r");
        self.open_for(&r8, int(0), int(vecs), int(1), true);
        let e8 = self.decl_int("e", start(&r8));
        let ev8 = self.decl_int("ev", add(v(&ev0), mul(v(&r8), int(wg))));
        let out_of = |g: &mut Self, y: Expr| -> Result<Read> {
            let yv = Rc::new(View::Value {
                expr: y,
                ty: ty.clone(),
            });
            match consumer {
                Some(h) => {
                    let (hp, hb) = g.lambda(h)?;
                    g.bind(hp[0], Bound::View(yv));
                    g.scalar(hb)
                }
                None => yv.read(&[]).map_err(|m| g.err(e, m.0)),
            }
        };
        let vstore = self.vector_write(&row_dest, &ev8, &n);
        if let Some(place) = &vstore {
            self.open_if(lt(add(v(&e8), int(LANES - 1)), nn.clone()));
            let mut lanes = vec![];
            for c in 0..LANES {
                let y = out_of(self, reg(&r8, int(c)))?;
                lanes.push(self.expr_of(y, e)?);
            }
            self.store_vector(place, lanes);
            self.close();
            self.open_if(le(nn.clone(), add(v(&e8), int(LANES - 1))));
        }
        let c8 = self.fresh("c");
        self.open_for(&c8, int(0), int(LANES), int(1), true);
        let ec8 = self.decl_int("ec", add(v(&e8), v(&c8)));
        self.open_if(lt(v(&ec8), nn.clone()));
        let y = out_of(self, reg(&r8, v(&c8)))?;
        let idx = ArithExpr::var(ec8.as_str(), Range::upto(n.clone()));
        self.write(&row_dest, &[idx], &y, e)?;
        self.close();
        self.close();
        if vstore.is_some() {
            self.close();
        }
        self.close();
        self.close();

        let at = device_macros(self);
        let functions = format!("{}{}", glb::tile_functions(&spelled, 1, 1), get_function(&spelled));
        if !self.source.contains(&functions) {
            self.source.insert_str(at, &functions);
        }
        let k = self.k.take().expect("set");
        self.finish_kernel(k, e)
    }

    /// `T name[len]`, each element `init`.
    fn private_array(&mut self, ct: &CType, hint: &str, len: usize, init: &Expr) -> Ident {
        let name = self.fresh(hint);
        self.push(Stmt::Decl {
            ty: ct.clone(),
            name: name.clone(),
            space: None,
            len: Some(len),
            init: None,
            is_const: false,
        });
        let i = self.fresh("i");
        self.open_for(&i, int(0), int(len), int(1), true);
        self.push(Stmt::assign(v(&name).index(v(&i)), init.clone()));
        self.close();
        name
    }

    /// The whole vector of 4 elements from element `4·ev` of the scan's input where it reads
    /// a buffer of scalars in order (`ys` of a map before the scan): its C type and read, and
    /// how a lane of it becomes an element (through the map).
    #[allow(clippy::type_complexity)]
    fn vector_read(
        &mut self,
        xs: ExprId,
        producer: Option<(ExprId, ExprId, ExprId)>,
        ev: &Ident,
        n: &ArithExpr,
    ) -> Result<Option<((CType, Expr), Box<dyn Fn(&mut Self, Expr) -> Result<Expr>>)>> {
        let src = producer.map_or(xs, |(_, _, ys)| ys);
        let view = self.value(src)?;
        let at = ArithExpr::cst(LANES as i64).mul(&ArithExpr::var(ev.as_str(), Range::upto(n.clone())));
        let Some((buf, off, s)) = self.in_order(&view, &at, false) else {
            return Ok(None);
        };
        let load = match self.vector_place(&buf, &off, s, true) {
            Some(p) => p,
            None => {
                let at = Expr::bin(BinOp::Add, v(&self.buf_ident(&buf)), arith(&off));
                Expr::call(format!("vload{LANES}"), vec![int(0), at])
            }
        };
        let elem_ty = Type::Scalar(s);
        let ct = self.ctype(&Type::Vector(s, LANES as u8))?;
        let lanes_of: Box<dyn Fn(&mut Self, Expr) -> Result<Expr>> = match producer {
            None => Box::new(|_, x| Ok(x)),
            Some((_, g, _)) => Box::new(move |gen: &mut Self, x: Expr| {
                let (gp, gb) = gen.lambda(g)?;
                let xv = Rc::new(View::Value {
                    expr: x,
                    ty: elem_ty.clone(),
                });
                gen.bind(gp[0], Bound::View(xv));
                let r = gen.scalar(gb)?;
                gen.expr_of(r, gb)
            }),
        };
        Ok(Some(((ct, load), lanes_of)))
    }

    /// Where the view's elements `at` to `at + LANES - 1` are consecutive scalars of one
    /// global buffer: the buffer, the offset of `at` and the scalar type (`write`: the view
    /// written). Every lane is checked: in `join (slide #2 #1 xs)` elements `4e` and `4e + 1`
    /// are consecutive but `4e + 2` repeats `4e + 1` (two lanes checked made the scan read the
    /// wrong elements; difffuzz seed 2800 on the H200, cases 5424, 7803, 28916, 32933).
    fn in_order(&self, view: &Rc<View>, at: &ArithExpr, write: bool) -> Option<(String, ArithExpr, ir::Scalar)> {
        let place = |i: &ArithExpr| -> Option<(String, ArithExpr)> {
            let a = if write {
                match view.write(std::slice::from_ref(i)).ok()? {
                    views::Loc::Plain(a) => a,
                    views::Loc::Vector { .. } | views::Loc::Lanes(_) => return None,
                }
            } else {
                match view.access(i.clone()).read(&[]).ok()? {
                    Read::Expr(a) => a,
                    Read::Tuple(_) => return None,
                }
            };
            match a {
                Access::Elem { buf, idx } => Some((buf, idx)),
                Access::VLoad { .. }
                | Access::VLoadAt { .. }
                | Access::Value(_)
                | Access::Field(..)
                | Access::Lane(..)
                | Access::DynLane { .. }
                | Access::Guard { .. }
                | Access::Vector { .. }
                | Access::Generate { .. } => None,
            }
        };
        let (buf, off) = place(at)?;
        for k in 1..LANES as i64 {
            let (buf_k, off_k) = place(&at.add(&ArithExpr::cst(k)))?;
            if buf_k != buf || off_k.sub(&off) != ArithExpr::cst(k) {
                return None;
            }
        }
        let b = self.mem.by_name(&buf)?;
        match (&b.elem, b.space) {
            (Type::Scalar(s), AddressSpace::Global) if *s != ir::Scalar::Bool => Some((buf, off, *s)),
            _ => None,
        }
    }

    /// `((global [const] T4*)buf)[off / 4]` where `off` is a known multiple of 4 (the buffer
    /// itself aligned far beyond a vector, `build.rs`'s `aligned_vectors`).
    fn vector_place(&self, buf: &str, off: &ArithExpr, s: ir::Scalar, read: bool) -> Option<Expr> {
        let known = types::specialised(off);
        let four = ArithExpr::cst(LANES as i64);
        if !known.is_multiple_of(&four) {
            return None;
        }
        let ptr = vector_pointer(v(&self.buf_ident(buf)), types::ast_scalar(s), LANES as u8);
        let ptr = match (ptr, read) {
            (p, true) => p,
            (
                Expr::Cast(
                    CType::Ptr {
                        space, elem, restrict, ..
                    },
                    b,
                ),
                false,
            ) => Expr::Cast(
                CType::Ptr {
                    space,
                    elem,
                    is_const: false,
                    restrict,
                },
                b,
            ),
            (p, false) => p,
        };
        Some(ptr.index(arith(&known.div_assume_exact(&four))))
    }

    /// Where a whole vector of the scan's result from element `4·ev` goes, if the destination
    /// holds consecutive scalars there: `(buffer, offset, scalar)`.
    fn vector_write(&self, dest: &Rc<View>, ev: &Ident, n: &ArithExpr) -> Option<(String, ArithExpr, ir::Scalar)> {
        let at = ArithExpr::cst(LANES as i64).mul(&ArithExpr::var(ev.as_str(), Range::upto(n.clone())));
        self.in_order(dest, &at, true)
    }

    /// Stores four lanes at a place of [`Gen::vector_write`].
    fn store_vector(&mut self, (buf, off, s): &(String, ArithExpr, ir::Scalar), lanes: Vec<Expr>) {
        let value = Expr::VecLit(CType::Vector(types::ast_scalar(*s), LANES as u8), lanes);
        match self.vector_place(buf, off, *s, false) {
            Some(p) => self.push(Stmt::assign(p, value)),
            None => self.push(Stmt::VStore {
                w: LANES as u8,
                value,
                ptr: v(&self.buf_ident(buf)),
                offset: arith(off),
            }),
        }
    }
}

/// `lift_tile_get_T(status, tile, out)`: the state of a tile and, in `out[0]` (private), its
/// value, from the one 64-bit word that `glb.rs`'s `lift_tile_store_T` writes.
fn get_function(t: &str) -> String {
    format!(
        "int lift_tile_get_{t}(global int* st, int k, {t}* out) {{
#if LIFT_GPU_DEVICE
  ulong s = *(volatile global ulong*)(st + 2 + 2 * k);
#else
  ulong s = atom_or((volatile global ulong*)(st + 2 + 2 * k), (ulong)0);
#endif
  lift_words_{t} u;
  u.w[0] = (int)(uint)s;
  out[0] = u.v;
  return (int)(s >> 32);
}}
"
    )
}
