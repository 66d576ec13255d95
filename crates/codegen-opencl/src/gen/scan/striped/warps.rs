//! The exchanges between the lanes of a warp of 32 that the scan of `striped.rs` needs, and its
//! look-back built on them: on NVIDIA (`EmitOptions::warp_shuffles`) PTX shuffles and ballots
//! inside the warp; elsewhere the same exchanges through local memory, each between two
//! barriers, which every work-item of the group then executes.

use super::*;

/// Local arrays of the emulated exchanges (none with NVIDIA's warps).
pub(super) struct Exchange {
    pub vals: Ident,
    pub flags: Ident,
}

impl Gen<'_> {
    /// `got[r]` = `vals[r]` of the lane `d` below in the warp (its own below `d`), for `r` in
    /// `0..n`: a shuffle each on NVIDIA, else through local memory (every work-item of the
    /// group calls it).
    pub(super) fn exchange_up(
        &mut self,
        op_at: ExprId,
        (ct, xch): (&CType, Option<&Exchange>),
        vals: &Ident,
        n: usize,
        d: usize,
        (l, lane, wg): (&Ident, &Ident, usize),
    ) -> Result<Ident> {
        let got = self.fresh("got");
        self.push(Stmt::Decl {
            ty: ct.clone(),
            name: got.clone(),
            space: None,
            len: Some(n),
            init: None,
            is_const: false,
        });
        let r = self.fresh("r");
        match xch {
            None => {
                self.open_for(&r, int(0), int(n), int(1), true);
                let y = self.shuffle(op_at, ct, PtxOp::ShflUpB32, v(vals).index(v(&r)), d)?;
                self.push(Stmt::assign(v(&got).index(v(&r)), y));
                self.close();
            }
            Some(x) => {
                self.open_for(&r, int(0), int(n), int(1), true);
                self.push(Stmt::assign(
                    v(&x.vals).index(add(mul(v(&r), int(wg)), v(l))),
                    v(vals).index(v(&r)),
                ));
                self.close();
                self.push(Stmt::Barrier(Fence::Local));
                let r2 = self.fresh("r");
                self.open_for(&r2, int(0), int(n), int(1), true);
                let from = Expr::select(
                    le(int(d), v(lane)),
                    v(&x.vals).index(sub(add(mul(v(&r2), int(wg)), v(l)), int(d))),
                    v(vals).index(v(&r2)),
                );
                self.push(Stmt::assign(v(&got).index(v(&r2)), from));
                self.close();
                self.push(Stmt::Barrier(Fence::Local));
            }
        }
        Ok(got)
    }

    /// A shuffle of a 4-byte value `x` by `k` lanes: its bits through a 32-bit register.
    fn shuffle(&mut self, at: ExprId, ct: &CType, op: PtxOp, x: Expr, k: usize) -> Result<Expr> {
        let u = self.fresh("u");
        self.push(Stmt::decl(CType::Scalar(crate::ast::Scalar::UInt), &u, uint(0)));
        let asm = Asm::new(
            op,
            vec![
                v(&u),
                Expr::call("as_uint", vec![x]),
                Expr::call("as_uint", vec![int(k)]),
            ],
        )
        .map_err(|m| self.err(at, format!("internal: {m}")))?;
        self.push(Stmt::Asm(asm));
        Ok(Expr::call(format!("as_{}", crate::print::ctype(ct)), vec![v(&u)]))
    }

    /// The look-back of tile `t` (after its row's first tile `first`): the combination of the
    /// tiles before it, in work-item 0 (see the module documentation).
    pub(super) fn warp_look_back(
        &mut self,
        op: &Op2,
        ct: &CType,
        zexpr: &Expr,
        xch: Option<&Exchange>,
        (st, get_fn): (&Ident, &str),
        (l, t, first): (&Ident, &Ident, Expr),
    ) -> Result<Ident> {
        let a = self.decl_value(ct, "a", zexpr);
        let has_a = self.decl_int("hasa", int(0));
        let jw = self.decl_int("jw", sub(v(t), int(1)));
        // NVIDIA: warp 0 alone; emulated: the whole group, so that its barriers are uniform.
        if xch.is_none() {
            self.open_if(lt(v(l), int(WARP)));
        }
        let lb = self.fresh("lb");
        self.open(Head::For {
            var: lb,
            init: int(0),
            cond: Expr::bin(BinOp::Ge, v(&jw), first.clone()),
            step: (AssignOp::Add, int(0)),
            unroll: false,
        });
        // Lane i reads tile jw - i; state 3: before the row's first tile.
        let val = self.private_array(ct, "val", 1, zexpr);
        let fl = self.decl_int("fl", int(3));
        let wt = self.decl_int("wt", sub(v(&jw), v(l)));
        self.open_if(and(lt(v(l), int(WARP)), Expr::bin(BinOp::Ge, v(&wt), first.clone())));
        self.push(Stmt::assign(
            v(&fl),
            Expr::call(get_fn.to_owned(), vec![v(st), v(&wt), v(&val)]),
        ));
        self.close();
        let [m1, m2, m0] = self.ballots(op.body, xch, &fl, l)?;
        let stop = self.decl_int(
            "stop",
            Expr::select(
                eq(v(&m1), uint(0)),
                int(WARP),
                Expr::cast(
                    CType::INT,
                    Expr::call(
                        "popcount",
                        vec![sub(Expr::bin(BinOp::BitAnd, v(&m1), sub(uint(0), v(&m1))), uint(1))],
                    ),
                ),
            ),
        );
        let sst = self.decl_int(
            "sst",
            Expr::select(
                eq(v(&stop), int(WARP)),
                int(1),
                Expr::select(
                    bit(&m2, v(&stop)),
                    int(2),
                    Expr::select(bit(&m0, v(&stop)), int(0), int(3)),
                ),
            ),
        );
        let hi = self.decl_int("hi", Expr::select(eq(v(&sst), int(2)), v(&stop), sub(v(&stop), int(1))));
        // Lanes 0..=hi combined by a tree, farther lanes first: after the step of `s`, lane i
        // holds lanes i..min(i + 2s - 1, hi).
        for s in STEPS {
            let y = match xch {
                None => self.shuffle(op.body, ct, PtxOp::ShflDownB32, v(&val).index(int(0)), s)?,
                Some(x) => {
                    self.push(Stmt::assign(v(&x.vals).index(v(l)), v(&val).index(int(0))));
                    self.push(Stmt::Barrier(Fence::Local));
                    let y = self.decl_value(
                        ct,
                        "y",
                        &Expr::select(
                            lt(add(v(l), int(s)), int(WARP)),
                            v(&x.vals).index(add(v(l), int(s))),
                            v(&val).index(int(0)),
                        ),
                    );
                    self.push(Stmt::Barrier(Fence::Local));
                    v(&y)
                }
            };
            self.open_if(le(add(v(l), int(s)), v(&hi)));
            self.combine_into(op, v(&val).index(int(0)), y, v(&val).index(int(0)))?;
            self.close();
        }
        self.open_if(and(eq(v(l), int(0)), le(int(0), v(&hi))));
        self.open_if(v(&has_a));
        self.combine_into(op, v(&a), v(&val).index(int(0)), v(&a))?;
        self.close();
        self.open_if(Expr::un(crate::ast::UnOp::Not, v(&has_a)));
        self.push(Stmt::assign(v(&a), v(&val).index(int(0))));
        self.close();
        self.push(Stmt::assign(v(&has_a), int(1)));
        self.close();
        let next = Expr::select(
            eq(v(&sst), int(1)),
            sub(v(&jw), int(WARP)),
            Expr::select(eq(v(&sst), int(0)), sub(v(&jw), v(&stop)), sub(first, int(1))),
        );
        self.push(Stmt::assign(v(&jw), next));
        self.close();
        if xch.is_none() {
            self.close();
        }
        Ok(a)
    }

    /// Warp 0's ballots of `fl != 1`, `fl == 2` and `fl == 0` (bit i: lane i), the same in
    /// every work-item that computes them.
    fn ballots(&mut self, at: ExprId, xch: Option<&Exchange>, fl: &Ident, l: &Ident) -> Result<[Ident; 3]> {
        let tests = [(BinOp::Ne, 1), (BinOp::Eq, 2), (BinOp::Eq, 0)];
        let names = ["m1", "m2", "m0"].map(|h| self.fresh(h));
        let uint_t = CType::Scalar(crate::ast::Scalar::UInt);
        match xch {
            None => {
                for ((o, k), m) in tests.iter().zip(&names) {
                    self.push(Stmt::decl(uint_t.clone(), m, uint(0)));
                    let asm = Asm::new(
                        PtxOp::BallotB32,
                        vec![
                            v(m),
                            Expr::call("as_uint", vec![Expr::cast(CType::INT, Expr::bin(*o, v(fl), int(*k)))]),
                        ],
                    )
                    .map_err(|m| self.err(at, format!("internal: {m}")))?;
                    self.push(Stmt::Asm(asm));
                }
            }
            Some(x) => {
                self.open_if(lt(v(l), int(WARP)));
                self.push(Stmt::assign(v(&x.flags).index(v(l)), v(fl)));
                self.close();
                self.push(Stmt::Barrier(Fence::Local));
                for m in &names {
                    self.push(Stmt::decl(uint_t.clone(), m, uint(0)));
                }
                let j = self.fresh("j");
                self.open_for(&j, int(0), int(WARP), int(1), true);
                for ((o, k), m) in tests.iter().zip(&names) {
                    let set = Expr::cast(uint_t.clone(), Expr::bin(*o, v(&x.flags).index(v(&j)), int(*k)));
                    self.push(Stmt::Assign {
                        lhs: v(m),
                        op: AssignOp::Or,
                        rhs: Expr::bin(BinOp::Shl, set, v(&j)),
                    });
                }
                self.close();
                self.push(Stmt::Barrier(Fence::Local));
            }
        }
        Ok(names)
    }
}
