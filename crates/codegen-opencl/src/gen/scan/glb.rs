//! `scanGlb` (a high-level `scan` at host level): one kernel that reads each input element once
//! and writes each output element once, a single pass with a decoupled look-back (Merrill and
//! Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016). This is the
//! kernel of values other than 4-byte scalars (vectors, 8-byte scalars), and of groups smaller
//! than a warp; `float`, `int` and `uint` take `striped.rs`, which shares the ticket protocol,
//! the status word and `tile_functions`.
//!
//! Work-groups take tile tickets from word 0 of a zeroed status buffer in the order they start
//! (the filter's protocol, `filter.rs`: a group only waits for tiles of groups already running).
//! A tile is `wg * items` consecutive elements: for a whole array `items` of 64 bytes a
//! work-item (4,096 floats with 256 work-items), for rows 128 (8,192 floats, so that a row of
//! 8,192 is one group's tile with no look-back); fewer where the device's local memory is
//! smaller (`scan_items`). Measured on the H200 (`bench/results/scan-nvidia-h200-2026-12-02.md`,
//! section of 2026-12-02 04:00): 2^28 floats in 1.034 ms with 64 bytes against 1.175 with 128
//! (a group that waits in the look-back holds fewer bytes), rows of 8,192 in 0.702 ms with 128
//! against 0.985 with 64 (two tiles a row, which look back).The
//! group loads it with consecutive work-items reading consecutive elements (coalesced) into
//! local memory, each work-item moves its `items` consecutive elements into registers (a private
//! array, unrolled loops) and scans them there, the group scans the work-items' totals (runs of
//! 8 serially, then the runs), work-item 0 publishes the tile's aggregate and the group looks
//! back for its exclusive prefix, each work-item applies its prefix in registers, and the tile
//! goes back through local memory to be stored as it was loaded. A map before the scan
//! (`scan f z (map g xs)`) is applied as each element is loaded and a map after it
//! (`map h (scan f z xs)`) as each is stored, so either is the same launch. No identity of the
//! operator is needed: a work-item, group or tile without a predecessor takes its first value as
//! it is, and `z` is combined with element 0 alone (`z ⊕ x0 ⊕ …`), as the interpreter does.
//! Rows of a matrix scan in the same launch, their tiles numbered row after row; a row no
//! longer than a tile is one work-group's tile and looks back at nothing.
//!
//! A tile's state (0 unpublished, 1 its aggregate, 2 its inclusive prefix) and its value are
//! published and read by two generated functions, `lift_tile_store_T` and `lift_tile_load_T`,
//! so the look-back is one code for every type: for 4-byte values the state and the value's
//! bits are one 64-bit word (one atomic exchange publishes both, one load reads both);
//! otherwise the value goes to its slot of a value buffer (an aggregate's and an inclusive
//! prefix's slots apart, so that a reader of state 1 never reads a half-replaced value) before
//! the state word, after a global fence. Loads are volatile on a GPU (`LIFT_GPU_DEVICE`, they
//! read the L2 cache where the exchanges land) and atomics elsewhere, so that Oclgrind sees no
//! race between groups.
//!
//! The look-back reads a window of `w` predecessors at once, one a work-item (`w` = the group's
//! size for values of at most 16 bytes): a local `atomic_min` finds the nearest lane that is
//! not an aggregate, runs of `WRUN` lanes are combined by as many work-items at once (farthest
//! lane first), and work-item 0 combines the runs. A trip costs one global load a work-item
//! and three barriers, and moves the window past `w` aggregates, so the chain of tiles that
//! wait for an inclusive prefix advances `w` tiles a trip.
//!
//! Local arrays are padded by one slot every 32 elements so that work-items reading their
//! consecutive elements hit distinct banks.

use super::*;

/// Serial runs of the work-group scan of the work-items' totals.
const RUN: usize = 8;
/// Lanes of the look-back window that one work-item combines serially.
const WRUN: usize = 16;
/// Bytes of a tile's elements each work-item holds in registers (values of at most 16 bytes):
/// in a whole-array scan, and in a scan of rows.
const ITEM_BYTES: usize = 64;
const ROW_ITEM_BYTES: usize = 128;
/// Elements a work-item holds at most.
const MAX_ITEMS: usize = 32;
/// Bytes of the look-back window's values at most (a lane a work-item).
const WINDOW_BYTES: usize = 4096;

/// Slot `i` of a local array padded by one slot every 32.
fn pad(i: Expr) -> Expr {
    add(i.clone(), Expr::bin(BinOp::Div, i, int(32)))
}
fn padded(len: usize) -> usize {
    len + len / 32 + 1
}

/// Elements a work-item of the scan kernel holds for values of `bytes` bytes in groups of `wg`
/// (`rows`: a scan of rows): `ITEM_BYTES` or `ROW_ITEM_BYTES` of them (half for values wider
/// than 16 bytes), at least one, at most 32, halved until the kernel's local arrays fit
/// `local_mem` bytes (Oclgrind has 32 KiB, NVIDIA GPUs 48).
pub(crate) fn scan_items(bytes: usize, wg: usize, local_mem: usize, rows: bool) -> usize {
    let room = if rows { ROW_ITEM_BYTES } else { ITEM_BYTES };
    let room = if bytes <= 16 { room } else { room / 2 };
    let mut items = (room / bytes).clamp(1, MAX_ITEMS);
    while items > 1 && local_bytes(bytes, wg, items) > local_mem {
        items /= 2;
    }
    items
}

/// Bytes of the kernel's local arrays (as declared in [`Gen::scan_glb`]).
fn local_bytes(bytes: usize, wg: usize, items: usize) -> usize {
    let (w, runs) = (window(wg, bytes), wg / RUN);
    bytes * (padded(wg * items) + wg + wg / RUN + 2 * runs + w + w / WRUN + 1) + 4 * (w + 3)
}

/// The look-back window of groups of `wg` work-items for values of `bytes` bytes: the group's
/// size, fewer lanes for values wider than 16 bytes, a multiple of `WRUN`.
fn window(wg: usize, bytes: usize) -> usize {
    (WINDOW_BYTES / bytes).clamp(WRUN, wg)
}

impl Gen<'_> {
    /// `scanGlb f z xs` into `dest` (see the module documentation); with `consumer`, the function
    /// of the map that consumed the result, applied to each element as it is stored. With
    /// `rows`, the scan is the body of `map (λr. scanGlb f z xs) xss` at host level (the map
    /// node, `r` and `xss`): every row is scanned by the same launch, its tiles numbered after
    /// the rows before it, and a tile's look-back stops at its row's first tile.
    pub(in crate::gen) fn scan_glb(
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
        let wg = filter_wg(&self.wg_limit);
        if striped::fits(&ct, wg) {
            let parts = striped::Parts {
                op,
                ct,
                z,
                xs,
                producer,
                rows,
                consumer,
                wg,
            };
            return self.scan_glb_striped(e, parts, dest);
        }
        let items = scan_items(bytes, wg, self.wg_limit.local_mem, rows.is_some());
        let tile = wg * items;
        let runs = wg / RUN;
        let w = window(wg, bytes);
        let wruns = w / WRUN;
        let packed = bytes == 4;
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
        let words = bytes / 4;
        // Values wider than a state word's half: an aggregate's and an inclusive prefix's slot a
        // tile, moved as 4-byte words (`tile_functions`).
        let vals = if packed {
            None
        } else {
            let (b, _) = self
                .alloc(
                    "vals",
                    &Type::array(Type::int(), tiles.mul(&ArithExpr::cst(2 * words as i64))),
                    AddressSpace::Global,
                    &[],
                    Role::Scratch,
                )
                .map_err(|m| self.err(e, m))?;
            Some(self.buf_ident(&self.mem.buffers[b].name.clone()))
        };
        let spelled = crate::print::ctype(&ct);
        let (load_fn, store_fn) = (
            format!("lift_tile_load_{spelled}"),
            format!("lift_tile_store_{spelled}"),
        );
        let state_args = |k: Expr| {
            let mut a = vec![v(&st)];
            a.extend(vals.iter().map(v));
            a.push(k);
            a
        };

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
        let wrun = self.fresh("wrun");
        let ctl = self.fresh("ctl");
        let sa = self.fresh("sa");
        k.decls.push(local_array(ct.clone(), &sx, padded(tile)));
        k.decls.push(local_array(ct.clone(), &tot, wg + wg / RUN));
        k.decls.push(local_array(ct.clone(), &runsum, runs));
        k.decls.push(local_array(ct.clone(), &runpre, runs));
        k.decls.push(local_array(ct.clone(), &win, w));
        k.decls.push(local_array(CType::INT, &wfl, w));
        k.decls.push(local_array(ct.clone(), &wrun, wruns));
        k.decls.push(local_array(CType::INT, &ctl, 3));
        k.decls.push(local_array(ct.clone(), &sa, 1));
        k.notes.push(format!(
            "scanGlb{}: tiles of {tile} elements ({items} a work-item in registers, loaded and stored by consecutive work-items through local memory), one pass with a decoupled look-back over windows of {w} tiles, {}{}{}",
            if rows.is_some() { " of every row in one launch" } else { "" },
            if packed { "a tile's state and value in one 64-bit word" } else { "a tile's value before its state word" },
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

        // Each work-item moves its `items` consecutive elements into registers and scans them.
        let o = self.decl_int("o", mul(v(&l), int(items)));
        let xr = self.fresh("xr");
        self.push(Stmt::Decl {
            ty: ct.clone(),
            name: xr.clone(),
            space: None,
            len: Some(items),
            init: None,
            is_const: false,
        });
        let slot = |i: Expr| v(&sx).index(pad(i));
        let reg = |i: &Ident| v(&xr).index(v(i));
        let within = |i: &Ident| lt(add(v(&base), add(v(&o), v(i))), nn.clone());
        let acc = self.decl_value(&ct, "acc", &zexpr);
        let r0 = self.fresh("r");
        self.open_for(&r0, int(0), int(items), int(1), true);
        self.open_if(within(&r0));
        self.push(Stmt::assign(reg(&r0), slot(add(v(&o), v(&r0)))));
        self.close();
        self.close();
        self.open_if(lt(add(v(&base), v(&o)), nn.clone()));
        self.push(Stmt::assign(v(&acc), v(&xr).index(int(0))));
        self.open_if(and(eq(v(&tk), int(0)), eq(v(&l), int(0))));
        self.combine_into(&op, v(&acc), zexpr.clone(), v(&acc))?;
        self.push(Stmt::assign(v(&xr).index(int(0)), v(&acc)));
        self.close();
        self.close();
        let r1 = self.fresh("r");
        self.open_for(&r1, int(1), int(items), int(1), true);
        self.open_if(within(&r1));
        self.combine_into(&op, v(&acc), v(&acc), reg(&r1))?;
        self.push(Stmt::assign(reg(&r1), v(&acc)));
        self.close();
        self.close();
        // Work-items past the end leave totals `z`, which no work-item before them reads.
        let q = self.group_scan(&op, &ct, &zexpr, (&tot, &runsum, &runpre), (&l, &acc), wg)?;

        // Work-item 0 publishes the tile's aggregate (a row's first tile: its inclusive prefix).
        let agg = self.decl_value(&ct, "agg", &zexpr);
        let publish = |g: &mut Self, val: Expr, state: usize| {
            let mut a = state_args(v(&t));
            a.push(int(state));
            a.push(val);
            g.push(Stmt::Call(Expr::call(store_fn.clone(), a)));
        };
        self.open_if(eq(v(&l), int(0)));
        self.combine_into(
            &op,
            v(&agg),
            v(&runpre).index(int(runs - 1)),
            v(&runsum).index(int(runs - 1)),
        )?;
        self.open_if(eq(v(&tk), int(0)));
        publish(self, v(&agg), 2);
        self.close();
        self.open_if(lt(int(0), v(&tk)));
        publish(self, v(&agg), 1);
        self.close();
        self.close();

        // The look-back, in windows of `w` tiles below `jw`: lane `l` reads tile `jw - l`.
        self.open_if(lt(int(0), v(&tk)));
        let a = self.decl_value(&ct, "a", &zexpr);
        let has_a = self.decl_int("hasa", int(0));
        let jw = self.decl_int("jw", sub(v(&t), int(1)));
        let start = first.as_ref().map_or(int(0), v);
        let lb = self.fresh("lb");
        self.open(Head::For {
            var: lb,
            init: int(0),
            cond: Expr::bin(BinOp::Ge, v(&jw), start.clone()),
            step: (AssignOp::Add, int(0)),
            unroll: false,
        });
        self.open_if(lt(v(&l), int(w)));
        let wt = self.decl_int("w", sub(v(&jw), v(&l)));
        // 3: before the row's first tile, which stops the window as an inclusive prefix would.
        let fl = self.decl_int("fl", int(3));
        self.open_if(Expr::bin(BinOp::Ge, v(&wt), start));
        let mut la = state_args(v(&wt));
        la.push(add(v(&win), v(&l)));
        self.push(Stmt::assign(v(&fl), Expr::call(load_fn.clone(), la)));
        self.close();
        self.push(Stmt::assign(v(&wfl).index(v(&l)), v(&fl)));
        self.open_if(Expr::bin(BinOp::Ne, v(&fl), int(1)));
        self.push(Stmt::Call(Expr::call("atomic_min", vec![add(v(&ctl), int(1)), v(&l)])));
        self.close();
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        // Lanes `0..=hi` are combined: those before the nearest lane that is not an aggregate
        // (`stop`), and that lane if it is an inclusive prefix.
        let stop = self.decl_int("stop", v(&ctl).index(int(1)));
        let sst = self.decl_int(
            "sst",
            Expr::select(
                lt(v(&stop), int(w)),
                v(&wfl).index(Expr::bin(BinOp::Rem, v(&stop), int(w))),
                int(1),
            ),
        );
        let hi = self.decl_int("hi", Expr::select(eq(v(&sst), int(2)), v(&stop), sub(v(&stop), int(1))));
        self.open_if(and(
            lt(v(&l), int(wruns)),
            Expr::bin(BinOp::Le, mul(v(&l), int(WRUN)), v(&hi)),
        ));
        let top = self.decl_int(
            "top",
            Expr::call("min", vec![v(&hi), add(mul(v(&l), int(WRUN)), int(WRUN - 1))]),
        );
        let rv = self.decl_value(&ct, "rv", &v(&win).index(v(&top)));
        let kk = self.fresh("k");
        self.open(Head::For {
            var: kk.clone(),
            init: sub(v(&top), int(1)),
            cond: Expr::bin(BinOp::Ge, v(&kk), mul(v(&l), int(WRUN))),
            step: (AssignOp::Add, Expr::Int(-1)),
            unroll: false,
        });
        self.combine_into(&op, v(&rv), v(&rv), v(&win).index(v(&kk)))?;
        self.close();
        self.push(Stmt::assign(v(&wrun).index(v(&l)), v(&rv)));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        // Work-item 0 combines the runs, farthest first, in front of what it has, and moves the
        // window: past `w` aggregates, to the nearest unpublished tile, or done.
        self.open_if(eq(v(&l), int(0)));
        self.open_if(Expr::bin(BinOp::Ge, v(&hi), int(0)));
        let gtop = self.decl_int("g", Expr::bin(BinOp::Div, v(&hi), int(WRUN)));
        let wv = self.decl_value(&ct, "wv", &v(&wrun).index(v(&gtop)));
        let kg = self.fresh("k");
        self.open(Head::For {
            var: kg.clone(),
            init: sub(v(&gtop), int(1)),
            cond: Expr::bin(BinOp::Ge, v(&kg), int(0)),
            step: (AssignOp::Add, Expr::Int(-1)),
            unroll: false,
        });
        self.combine_into(&op, v(&wv), v(&wv), v(&wrun).index(v(&kg)))?;
        self.close();
        self.open_if(v(&has_a));
        self.combine_into(&op, v(&a), v(&wv), v(&a))?;
        self.close();
        self.open_if(Expr::un(crate::ast::UnOp::Not, v(&has_a)));
        self.push(Stmt::assign(v(&a), v(&wv)));
        self.close();
        self.push(Stmt::assign(v(&has_a), int(1)));
        self.close();
        self.push(Stmt::assign(v(&ctl).index(int(1)), int(w)));
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
        publish(self, inc, 2);
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
        // Every work-item but the very first applies its prefix to its elements in registers;
        // they go back to their slots.
        self.open_if(Expr::bin(BinOp::Or, lt(int(0), v(&tk)), lt(int(0), v(&l))));
        let r2 = self.fresh("r");
        self.open_for(&r2, int(0), int(items), int(1), true);
        self.open_if(within(&r2));
        self.combine_into(&op, reg(&r2), v(&q), reg(&r2))?;
        self.close();
        self.close();
        self.close();
        let r4 = self.fresh("r");
        self.open_for(&r4, int(0), int(items), int(1), true);
        self.open_if(within(&r4));
        self.push(Stmt::assign(slot(add(v(&o), v(&r4))), reg(&r4)));
        self.close();
        self.close();
        self.push(Stmt::Barrier(Fence::Local));

        // Store as loaded, through the map after the scan.
        let r3 = self.fresh("r");
        self.open_for(&r3, int(0), int(items), int(1), true);
        let e3 = self.decl_int("e", add(v(&base), add(mul(v(&r3), int(wg)), v(&l))));
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
        let functions = tile_functions(&spelled, words, filled_words(&ct));
        if !self.source.contains(&functions) {
            self.source.insert_str(at, &functions);
        }
        let k = self.k.take().expect("set");
        self.finish_kernel(k, e)
    }

    /// The work-group scan of the work-items' totals (`acc` of work-item `l`): runs of `RUN`
    /// totals serially, then the runs; returns `q`, the work-item's exclusive prefix in the tile
    /// (left `z` in work-item 0), with `runpre` and `runsum` holding the runs' prefixes and sums.
    fn group_scan(
        &mut self,
        op: &Op2,
        ct: &CType,
        zexpr: &Expr,
        (tot, runsum, runpre): (&Ident, &Ident, &Ident),
        (l, acc): (&Ident, &Ident),
        wg: usize,
    ) -> Result<Ident> {
        let runs = wg / RUN;
        let tslot = |x: Expr| v(tot).index(add(x.clone(), Expr::bin(BinOp::Div, x, int(RUN))));
        self.push(Stmt::assign(tslot(v(l)), v(acc)));
        self.push(Stmt::Barrier(Fence::Local));
        // Runs of RUN totals, inclusive in place.
        self.open_if(lt(v(l), int(runs)));
        let j = self.fresh("j");
        self.open_for(&j, int(1), int(RUN), int(1), true);
        let s = self.decl_int("s", add(mul(v(l), int(RUN + 1)), v(&j)));
        let prev = v(tot).index(sub(v(&s), int(1)));
        self.combine_into(op, v(tot).index(v(&s)), prev, v(tot).index(v(&s)))?;
        self.close();
        self.push(Stmt::assign(
            v(runsum).index(v(l)),
            v(tot).index(add(mul(v(l), int(RUN + 1)), int(RUN - 1))),
        ));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        // The exclusive prefix of each run but the first.
        self.open_if(and(lt(int(0), v(l)), lt(v(l), int(runs))));
        let p = self.decl_value(ct, "p", zexpr);
        self.push(Stmt::assign(v(&p), v(runsum).index(int(0))));
        let j2 = self.fresh("j");
        self.open_for(&j2, int(1), v(l), int(1), false);
        self.combine_into(op, v(&p), v(&p), v(runsum).index(v(&j2)))?;
        self.close();
        self.push(Stmt::assign(v(runpre).index(v(l)), v(&p)));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        // This work-item's exclusive prefix in the tile (none for work-item 0).
        let q = self.decl_value(ct, "q", zexpr);
        let rr = self.decl_int("rr", Expr::bin(BinOp::Div, v(l), int(RUN)));
        let jj = self.decl_int("jj", Expr::bin(BinOp::Rem, v(l), int(RUN)));
        self.open_if(lt(int(0), v(&jj)));
        self.push(Stmt::assign(
            v(&q),
            v(tot).index(add(mul(v(&rr), int(RUN + 1)), sub(v(&jj), int(1)))),
        ));
        self.open_if(lt(int(0), v(&rr)));
        self.combine_into(op, v(&q), v(runpre).index(v(&rr)), v(&q))?;
        self.close();
        self.close();
        self.open_if(and(eq(v(&jj), int(0)), lt(int(0), v(&rr))));
        self.push(Stmt::assign(v(&q), v(runpre).index(v(&rr))));
        self.close();
        Ok(q)
    }

    /// Element `e` of the scan's input as a C value: read from `xs`, or `g` applied to element
    /// `e` of `ys` where `xs` is `map g ys`.
    pub(super) fn scan_elem(
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

/// The functions that publish a tile's state and value (`lift_tile_store_T(status, [values,]
/// tile, state, value)`) and read them (`lift_tile_load_T(status, [values,] tile, out)`
/// returns the state and, for states 1 and 2, writes the value to `out`), for values of the C
/// type `t` of `words` 4-byte words; a union holds a value and its words. One word: the state
/// in the high half of a 64-bit word, the value's bits in the low half. More: the value in its
/// slot of the value buffer, then (after a global fence) the state. On a GPU
/// (`LIFT_GPU_DEVICE`) reads are volatile loads (they bypass the non-coherent L1 cache; the
/// state is read first and a fence orders the value's read after it); elsewhere atomics, over
/// the `filled` words that hold lanes (a 3-vector's fourth lane is padding that no one wrote:
/// moving it wrote an undefined value to global memory, which Oclgrind reports; difffuzz seed
/// 2700, case 6420).
pub(super) fn tile_functions(t: &str, words: usize, filled: usize) -> String {
    if words == 1 {
        return format!(
            "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef union {{ {t} v; int w[1]; }} lift_words_{t};
void lift_tile_store_{t}(global int* st, int k, int state, {t} x) {{
  lift_words_{t} u;
  u.v = x;
  atom_xchg((volatile global ulong*)(st + 2 + 2 * k), ((ulong)state << 32) | (uint)u.w[0]);
}}
int lift_tile_load_{t}(global int* st, int k, local {t}* out) {{
#if LIFT_GPU_DEVICE
  ulong s = *(volatile global ulong*)(st + 2 + 2 * k);
#else
  ulong s = atom_or((volatile global ulong*)(st + 2 + 2 * k), (ulong)0);
#endif
  lift_words_{t} u;
  u.w[0] = (int)(uint)s;
  *out = u.v;
  return (int)(s >> 32);
}}
"
        );
    }
    format!(
        "typedef union {{ {t} v; int w[{words}]; }} lift_words_{t};
void lift_tile_store_{t}(global int* st, global int* vals, int k, int state, {t} x) {{
  global int* p = vals + (2 * k + state - 1) * {words};
#if LIFT_GPU_DEVICE
  *(global {t}*)p = x;
#else
  lift_words_{t} u;
  u.v = x;
  for (int i = 0; i < {filled}; i++) atomic_xchg(p + i, u.w[i]);
#endif
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  atomic_xchg(st + 2 + 2 * k, state);
}}
int lift_tile_load_{t}(global int* st, global int* vals, int k, local {t}* out) {{
  int s = {STATUS_LOAD}(st + 2 + 2 * k);
  read_mem_fence(CLK_GLOBAL_MEM_FENCE);
  if (s == 1 || s == 2) {{
    global int* p = vals + (2 * k + s - 1) * {words};
    lift_words_{t} u;
#if LIFT_GPU_DEVICE
    u.v = *(volatile global {t}*)p;
#else
    for (int i = 0; i < {filled}; i++) u.w[i] = atomic_or(p + i, 0);
#endif
    *out = u.v;
  }}
  return s;
}}
"
    )
}

/// The 4-byte words of a value of a scalar or vector C type that hold its lanes (a 3-vector's
/// fourth lane is padding).
fn filled_words(t: &CType) -> usize {
    match t {
        CType::Vector(_, 3) => c_bytes(t) / 4 * 3 / 4,
        CType::Scalar(_) | CType::Vector(..) | CType::Struct(_) | CType::Ptr { .. } => c_bytes(t) / 4,
    }
}

/// Bytes of a value of a scalar or vector C type (a 3-vector takes 4 lanes).
pub(crate) fn c_bytes(t: &CType) -> usize {
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
