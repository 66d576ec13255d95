//! The kernel under construction: reads and accesses turned into C expressions, fresh names and
//! buffers, bindings of variables, statements pushed into the open block, and blocks, branches and
//! loops opened and closed at an execution level.

use super::*;

impl Gen<'_> {
    /// A global buffer of scalars seen as `w`-lane vectors, `(const global floatW*)buf`, for
    /// reads of whole vectors at vector-aligned places: `vloadW` promises only the scalar's
    /// alignment and NVPTX splits it into `w` loads, where this is one (OpenCL aligns a buffer
    /// to `CL_DEVICE_MEM_BASE_ADDR_ALIGN`, far beyond a vector, and kernels get whole
    /// buffers). The one place this rewrite is decided: in kernels built for known sizes
    /// ([`EmitOptions::known_sizes`]), whose offsets the sizes make constant multiples of `w`
    /// (k-means' block of 128 rows of 34 floats), and in the grid reduction's first stage
    /// ([`Gen::aligned_reads`]); other generic kernels keep `vloadW`.
    pub(super) fn aligned_vectors(&self, buf: &str, w: u8) -> Option<CExpr> {
        if !types::specialising() && !self.aligned_reads {
            return None;
        }
        let b = self.mem.buffers.iter().find(|b| b.name == buf)?;
        // (a buffer of vectors holds packed lanes; `float3` is four floats wide in C)
        let s = match b.elem {
            Type::Scalar(s) => s,
            Type::Vector(s, n) if n == w => s,
            Type::Vector(..) | Type::Tuple(_) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => return None,
        };
        if b.space != AddressSpace::Global || s == Scalar::Bool || !matches!(w, 2 | 4 | 8 | 16) {
            return None;
        }
        Some(vector_pointer(
            CExpr::var(&self.buf_ident(buf)),
            types::ast_scalar(s),
            w,
        ))
    }

    /// The expression of an access through a view.
    pub(super) fn access_expr(&self, a: &Access) -> CExpr {
        match a {
            Access::Elem { buf, idx } => CExpr::var(&self.buf_ident(buf)).index(arith(idx)),
            Access::VLoad { buf, idx, w } => match self.aligned_vectors(buf, *w) {
                Some(vectors) => vectors.index(arith(idx)),
                None => CExpr::call(format!("vload{w}"), vec![arith(idx), CExpr::var(&self.buf_ident(buf))]),
            },
            Access::VLoadAt { buf, off, w } => {
                let whole = ArithExpr::cst(i64::from(*w));
                let known = types::specialised(off);
                match self.aligned_vectors(buf, *w).filter(|_| known.is_multiple_of(&whole)) {
                    Some(vectors) => vectors.index(arith(&known.div_assume_exact(&whole))),
                    None => {
                        let at = CExpr::bin(BinOp::Add, CExpr::var(&self.buf_ident(buf)), arith(off));
                        CExpr::call(format!("vload{w}"), vec![CExpr::Int(0), at])
                    }
                }
            }
            Access::Value(v) => v.clone(),
            Access::Field(a, c) => self.access_expr(a).component(*c),
            Access::Lane(a, k) => self.access_expr(a).lane(u32::from(*k)),
            Access::DynLane { vector, lane, w } => {
                // `lane == 0 ? v.s0 : lane == 1 ? v.s1 : … : v.s(w-1)`: OpenCL C indexes
                // vector lanes only by constants
                let v = self.access_expr(vector);
                let at = arith(lane);
                (0..u32::from(*w) - 1)
                    .rev()
                    .fold(v.clone().lane(u32::from(*w) - 1), |rest, k| {
                        let is_k = CExpr::bin(BinOp::Eq, at.clone(), CExpr::Int(i64::from(k)));
                        CExpr::select(is_k, v.clone().lane(k), rest)
                    })
            }
            Access::Guard { j, n, fill, inner } => {
                let out = CExpr::bin(
                    BinOp::Or,
                    CExpr::bin(BinOp::Lt, arith(j), CExpr::Int(0)),
                    CExpr::bin(BinOp::Ge, arith(j), arith(n)),
                );
                CExpr::select(out, self.access_expr(fill), self.access_expr(inner))
            }
            Access::Vector { scalar, lanes } => CExpr::VecLit(
                CType::Vector(types::ast_scalar(*scalar), lanes.len() as u8),
                lanes.iter().map(|l| self.access_expr(l)).collect(),
            ),
            Access::Generate { param, body, idx } => body.subst(param, &arith(idx)),
        }
    }

    /// A read through a view as expression trees.
    pub(super) fn val_of(&self, r: Read) -> Val {
        match r {
            Read::Expr(a) => Val::E(self.access_expr(&a)),
            Read::Tuple(rs) => Val::T(rs.into_iter().map(|r| self.val_of(r)).collect()),
        }
    }

    /// The one-access read of a scalar expression.
    pub(super) fn expr_of(&self, r: Read, at: ExprId) -> Result<CExpr> {
        match r {
            Read::Expr(a) => Ok(self.access_expr(&a)),
            Read::Tuple(_) => Err(self.err(at, "internal: a tuple where a scalar was expected")),
        }
    }

    pub(crate) fn fresh(&mut self, base: &str) -> Ident {
        self.names.fresh(&format!("v_{base}"))
    }

    /// The identifier of a buffer (handed out by the namer when it was allocated).
    pub(crate) fn buf_ident(&self, name: &str) -> Ident {
        self.buf_ids.get(name).cloned().expect("buffers are named by the namer")
    }

    /// Allocates a buffer named by the namer after its space and `hint`.
    pub(crate) fn alloc(
        &mut self,
        hint: &str,
        ty: &Type,
        space: AddressSpace,
        loops: &[Enclosing],
        role: Role,
    ) -> std::result::Result<(usize, Rc<View>), String> {
        let prefix = match space {
            AddressSpace::Global => "g",
            AddressSpace::Local => "l",
            AddressSpace::Private => "p",
        };
        // A buffer holds C values; an array inside a tuple has no C value type (its length may
        // be a size variable), so tuples holding arrays are stored as a struct of arrays: one
        // buffer per component, the first one's index returned, the others right after it.
        if let Some((dims, cs)) = soa_components(ty) {
            if let Some(why) = soa_unsupported(ty) {
                return Err(why.into());
            }
            let mut first = None;
            let mut views = vec![];
            for (c, ct) in cs.iter().enumerate() {
                let (b, v) = self.alloc(&format!("{hint}{c}"), ct, space, loops, role)?;
                first.get_or_insert(b);
                views.push(v);
            }
            let view = if dims.is_empty() {
                View::Tuple(views)
            } else {
                View::Zip(views)
            };
            return Ok((first.expect("a tuple has components"), Rc::new(view)));
        }
        // A private array is declared with a constant length: one the built-in sizes fix is
        // that constant (`validate_with` admitted it, within its limit).
        let fixed;
        let ty = if space == AddressSpace::Private && specialising() {
            fixed = specialised_type(ty);
            &fixed
        } else {
            ty
        };
        let name = self.names.fresh(&format!("v_{prefix}{hint}"));
        self.buf_ids.insert(name.to_string(), name.clone());
        self.mem.allocate(name.as_str(), ty, space, loops, role)
    }

    pub(crate) fn bind(&mut self, v: VarId, b: Bound) {
        if let Bound::View(view) = &b {
            let _ = writeln!(self.views, "{} = {}", self.prog.var(v).name, view.describe());
        }
        self.env[v.index()] = Some(b);
    }

    pub(crate) fn err(&self, e: ExprId, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.prog.span(e), msg)
    }

    /// Appends a statement to the innermost open statement.
    pub(crate) fn push(&mut self, s: Stmt) {
        let k = self.k.as_mut().expect("inside a kernel");
        k.emitted += 1;
        k.stack.last_mut().expect("the root frame").body.push(s);
    }

    /// Opens a block, `if` or `for`; the statements up to the matching `close` go in its body.
    pub(crate) fn open(&mut self, head: Head) {
        let k = self.k.as_mut().expect("inside a kernel");
        k.emitted += 1;
        k.stack.push(Frame { head, body: vec![] });
    }

    pub(crate) fn open_block(&mut self) {
        self.open(Head::Block);
    }

    pub(crate) fn open_if(&mut self, cond: CExpr) {
        self.open(Head::If(cond));
    }

    /// `for (int var = init; var < end; var += step)`
    pub(crate) fn open_for(&mut self, var: &Ident, init: CExpr, end: CExpr, step: CExpr, unroll: bool) {
        self.open(Head::For {
            var: var.clone(),
            init,
            cond: CExpr::bin(BinOp::Lt, CExpr::var(var), end),
            step: (AssignOp::Add, step),
            unroll,
        });
    }

    pub(crate) fn close(&mut self) {
        let k = self.k.as_mut().expect("inside a kernel");
        let f = k.stack.pop().expect("an open statement");
        let s = match f.head {
            Head::Block => Stmt::Block(f.body),
            Head::If(cond) => Stmt::If {
                cond,
                then: f.body,
                els: vec![],
            },
            Head::For {
                var,
                init,
                cond,
                step,
                unroll,
            } => Stmt::For {
                var,
                init,
                cond,
                step,
                unroll,
                body: f.body,
            },
            Head::Root => unreachable!("close without open"),
        };
        k.stack.last_mut().expect("the root frame").body.push(s);
    }

    /// The number of statements emitted so far in this kernel.
    pub(crate) fn emitted(&self) -> usize {
        self.k.as_ref().map_or(0, |k| k.emitted)
    }

    pub(crate) fn level(&self) -> Level {
        self.k.as_ref().map_or(Level::Top, |k| k.level)
    }

    pub(crate) fn set_level(&mut self, l: Level) -> Level {
        let k = self.k.as_mut().expect("inside a kernel");
        std::mem::replace(&mut k.level, l)
    }

    pub(crate) fn lambda(&self, f: ExprId) -> Result<(Vec<VarId>, ExprId)> {
        match self.prog.expr(f) {
            Expr::Lambda { params, body } => Ok((params.clone(), *body)),
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => Err(self.err(f, "internal: expected a lambda")),
        }
    }
}

impl KernelCx {
    pub(super) fn new(level: Level) -> KernelCx {
        KernelCx {
            stack: vec![Frame {
                head: Head::Root,
                body: vec![],
            }],
            emitted: 0,
            decls: vec![],
            global: [None, None, None],
            local: [None, None, None],
            wrg: false,
            glb: false,
            loops: vec![],
            level,
            active: vec![],
            one_group: false,
            notes: vec![],
            first_buffer: None,
        }
    }
}
