//! Views: lazy descriptions of where the elements of an array live.
//!
//! Layout primitives (split, join, transpose, zip, slide, pad, reorder-stride, reverse,
//! generate, asVector/asScalar) never copy; the code generator builds a `View` for them and only
//! scalar reads and writes consume views, producing one index expression per access (Lift's
//! CGO'17 §5.3). Indices are `ArithExpr`s, so `join ∘ split` and friends simplify back to the
//! plain loop index as they are built.
//!
//! Reads and writes return structured accesses ([`Access`]: a buffer element, a vector load, a
//! struct component, a lane, a guarded read, ...), never C text; values the code generator holds
//! (scalars in variables, the fill of a pad, the function of a generate) are of its own type `V`.
//!
//! Invariant: all index arithmetic of generated code comes from `read` and `write`; the code
//! generator never computes an index itself.

use arith::ArithExpr;
use ir::{Scalar, Type};
use std::fmt;
use std::rc::Rc;

/// A view of a (possibly nested) array, or of one value; `V` is the code generator's type of
/// values (its expressions).
#[derive(Clone, Debug)]
pub enum View<V> {
    /// A row-major buffer `name` with storage dimensions `dims` (outermost first) of `elem`s.
    /// Vector elements are stored as `w` consecutive scalars and accessed with vload/vstore.
    Mem {
        name: String,
        dims: Vec<ArithExpr>,
        elem: Type,
    },
    /// A value held by the code generator (a scalar, vector or struct expression).
    Value { expr: V, ty: Type },
    /// A tuple of values (components of a zip element, or a `tuple` expression).
    Tuple(Vec<Rc<View<V>>>),
    /// The sub-array (or element) at `idx` of `inner`.
    Access { idx: ArithExpr, inner: Rc<View<V>> },
    /// `split k`: `[a][b]` reads `inner[a*k + b]`.
    Split { k: ArithExpr, inner: Rc<View<V>> },
    /// `join` of rows of length `m`: `[a]` reads `inner[a/m][a%m]`.
    Join { m: ArithExpr, inner: Rc<View<V>> },
    /// `[a][b]` reads `inner[b][a]`.
    Transpose { inner: Rc<View<V>> },
    /// `slide size step`: `[a][b]` reads `inner[a*step + b]`.
    Slide { step: ArithExpr, inner: Rc<View<V>> },
    /// `pad l r` below the first `skip` dimensions (`map (λr. pad l r v r)` has `skip` 1):
    /// `[i…][a][k…]` reads `inner[i…][a - l][k…]`; out of range it reads `fill[k…]` (a
    /// `Value` for a scalar fill, an array's view for a row of `pad` over rows), or clamps if
    /// `None`.
    Pad {
        skip: usize,
        l: ArithExpr,
        n: ArithExpr,
        fill: Option<Rc<View<V>>>,
        inner: Rc<View<V>>,
    },
    /// `reorder-stride s` of length `n`: `[a]` reads `inner[a/(n/s) + s*(a%(n/s))]`.
    Reorder {
        s: ArithExpr,
        n: ArithExpr,
        inner: Rc<View<V>>,
    },
    /// `[a]` reads `inner[n - 1 - a]`.
    Reverse { n: ArithExpr, inner: Rc<View<V>> },
    /// Element-wise tuples of several arrays of one length.
    Zip(Vec<Rc<View<V>>>),
    /// Component `c` of every element.
    Component { c: usize, inner: Rc<View<V>> },
    /// `generate`: `[a]` is the code generator's `body` with its `param` bound to `a`.
    Generate { param: V, body: V },
    /// `asVector w` over scalars of type `scalar`. The type is carried rather than found
    /// below, because a `generate` or a zip's component below does not know it, and a vector
    /// of the wrong element type reinterprets the lanes' bits.
    AsVector { w: u8, scalar: Scalar, inner: Rc<View<V>> },
    /// `asScalar` over vectors of width `w`.
    AsScalar { w: u8, inner: Rc<View<V>> },
    /// A re-indexing applied below the first `skip` dimensions: `map (λx. join x)` is
    /// `Nested { skip: 1, op: Join(m) }`.
    Nested {
        skip: usize,
        op: Layout,
        inner: Rc<View<V>>,
    },
}

/// The re-indexings that `Nested` applies at depth.
#[derive(Clone, Debug, PartialEq)]
pub enum Layout {
    Split(ArithExpr),
    Join(ArithExpr),
    Transpose,
    /// `slide size step`: `[a][b]` is `[a*step + b]` of the argument. Read only: windows
    /// overlap, so nothing can be written through it.
    Slide(ArithExpr),
    /// The first `n` indices name the work-item that owns the element, which keeps its part
    /// in private memory: they are dropped (a register block of a matrix product).
    PerItem(usize),
}

impl Layout {
    /// Rewrites the front of `idx` (indices into the result) into indices into the argument.
    fn reindex(&self, idx: &mut Vec<ArithExpr>) -> Result<()> {
        match self {
            Layout::Split(k) => split_index(k, idx),
            Layout::Join(m) => join_index(m, idx),
            Layout::Transpose => transpose_index(idx),
            Layout::Slide(step) => split_index(step, idx),
            Layout::PerItem(n) => {
                if idx.len() < *n {
                    return err("internal: a view was read with too few indices");
                }
                idx.drain(..*n);
                Ok(())
            }
        }
    }
}

/// `split k`: `[a][b]` is `[a*k + b]` of the argument.
fn split_index(k: &ArithExpr, idx: &mut Vec<ArithExpr>) -> Result<()> {
    let (a, b) = pop2(idx)?;
    idx.insert(0, a.mul(k).add(&b));
    Ok(())
}

/// `join` of rows of length `m`: `[a]` is `[a/m][a%m]` of the argument.
fn join_index(m: &ArithExpr, idx: &mut Vec<ArithExpr>) -> Result<()> {
    let a = pop1(idx)?;
    idx.insert(0, a.rem(m));
    idx.insert(0, a.div(m));
    Ok(())
}

/// `j` clamped into `0..n`, with only the bounds that ranges cannot prove.
fn clamp_index(j: &ArithExpr, n: &ArithExpr) -> ArithExpr {
    let zero = ArithExpr::cst(0);
    let last = n.sub(&ArithExpr::cst(1));
    let mut c = j.clone();
    if !c.prove_le(&last) {
        c = ArithExpr::min(&c, &last);
    }
    if !zero.prove_le(&c) {
        c = ArithExpr::max(&c, &zero);
    }
    c
}

/// `transpose`: `[a][b]` is `[b][a]` of the argument.
fn transpose_index(idx: &mut Vec<ArithExpr>) -> Result<()> {
    let (a, b) = pop2(idx)?;
    idx.insert(0, a);
    idx.insert(0, b);
    Ok(())
}

/// `reindex` below `skip` leading indices.
fn reindex_nested(skip: usize, op: &Layout, idx: &mut Vec<ArithExpr>) -> Result<()> {
    if idx.len() < skip {
        return err("internal: a view was read with too few indices");
    }
    let mut rest = idx.split_off(skip);
    op.reindex(&mut rest)?;
    idx.append(&mut rest);
    Ok(())
}

/// Why a view could not be consumed; the code generator turns it into a diagnostic.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewError(pub String);

impl fmt::Display for ViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One access to a value: what a read yields and what a write stores to.
#[derive(Clone, Debug, PartialEq)]
pub enum Access<V> {
    /// Element `idx` of buffer `buf` (a scalar or a struct).
    Elem { buf: String, idx: ArithExpr },
    /// Vector `idx` of a buffer of `w`-lane vectors stored as scalars: `vloadW(idx, buf)`.
    VLoad { buf: String, idx: ArithExpr, w: u8 },
    /// `w` consecutive scalars from scalar `off` of `buf`: `vloadW(0, buf + off)`.
    VLoadAt { buf: String, off: ArithExpr, w: u8 },
    /// A value the code generator holds.
    Value(V),
    /// Struct component `c`.
    Field(Box<Access<V>>, usize),
    /// Vector lane `k`.
    Lane(Box<Access<V>>, u8),
    /// The lane of a `w`-lane vector chosen at run time (`lane` in `0..w`): a vector read
    /// through a view that is not plain memory (a pad, say) has no address to index.
    DynLane {
        vector: Box<Access<V>>,
        lane: ArithExpr,
        w: u8,
    },
    /// `inner` where `0 <= j < n`, else `fill` (a pad).
    Guard {
        j: ArithExpr,
        n: ArithExpr,
        fill: Box<Access<V>>,
        inner: Box<Access<V>>,
    },
    /// A vector of `scalar`s built from one read per lane.
    Vector { scalar: Scalar, lanes: Vec<Access<V>> },
    /// The function of a `generate` (`body` over `param`) at index `idx`.
    Generate { param: V, body: V, idx: ArithExpr },
}

/// The result of reading: one access, or a tuple of them.
#[derive(Clone, Debug, PartialEq)]
pub enum Read<V> {
    Expr(Access<V>),
    Tuple(Vec<Read<V>>),
}

/// Where a write goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Loc<V> {
    /// An lvalue, e.g. `out[i]` or `out[i].c0`.
    Plain(Access<V>),
    /// A vector of width `w` stored as scalars from `base + offset` (use `vstoreW`).
    Vector { base: String, offset: ArithExpr, w: u8 },
    /// A vector whose lanes a re-indexing outside its vector view scatters (`transpose (split
    /// k (asScalar v))`): lane `k` is stored to the `k`-th lvalue.
    Lanes(Vec<Access<V>>),
}

impl<V> Access<V> {
    /// The buffer an lvalue lives in, if any.
    pub fn buffer(&self) -> Option<&str> {
        match self {
            Access::Elem { buf, .. } | Access::VLoad { buf, .. } | Access::VLoadAt { buf, .. } => Some(buf),
            Access::Field(a, _) | Access::Lane(a, _) => a.buffer(),
            Access::Value(_)
            | Access::Guard { .. }
            | Access::Vector { .. }
            | Access::Generate { .. }
            | Access::DynLane { .. } => None,
        }
    }
}

/// C-like text of an access (for tests and `--emit views`).
impl<V: fmt::Display> fmt::Display for Access<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Access::Elem { buf, idx } => write!(f, "{buf}[{idx}]"),
            Access::VLoad { buf, idx, w } => write!(f, "vload{w}({idx}, {buf})"),
            Access::VLoadAt { buf, off, w } => write!(f, "vload{w}(0, {buf} + {off})"),
            Access::Value(v) => write!(f, "{v}"),
            Access::Field(a, c) => write!(f, "{a}.c{c}"),
            Access::Lane(a, k) => write!(f, "({a}).{}", vec_component(i64::from(*k))),
            Access::DynLane { vector, lane, w } => write!(f, "({vector}).lane[{lane} of {w}]"),
            Access::Guard { j, n, fill, inner } => write!(f, "((({j}) < 0 || ({j}) >= ({n})) ? {fill} : {inner})"),
            Access::Vector { scalar, lanes } => {
                let ls: Vec<String> = lanes.iter().map(|l| l.to_string()).collect();
                write!(f, "(({}{})({}))", c_scalar(*scalar), lanes.len(), ls.join(", "))
            }
            Access::Generate { param, body, idx } => write!(f, "({param} => {body})({idx})"),
        }
    }
}

pub type Result<T> = std::result::Result<T, ViewError>;

fn err<T>(msg: impl Into<String>) -> Result<T> {
    Err(ViewError(msg.into()))
}

/// C spelling of a scalar type in memory (`bool` is stored as `int`).
pub fn c_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::Float => "float",
        Scalar::Double => "double",
        Scalar::Int | Scalar::Bool => "int",
        Scalar::Uint => "uint",
        Scalar::Long => "long",
        Scalar::Ulong => "ulong",
    }
}

/// C spelling of a value type; tuples are structs named after their components.
pub fn c_type(t: &Type) -> String {
    match t {
        Type::Scalar(s) => c_scalar(*s).to_string(),
        Type::Vector(s, w) => format!("{}{w}", c_scalar(*s)),
        Type::Tuple(ts) => format!(
            "Tuple_{}",
            ts.iter()
                .map(|t| c_type(t).replace(' ', "_"))
                .collect::<Vec<_>>()
                .join("_")
        ),
        Type::Array(..) | Type::Exists(_) | Type::Fun(..) => format!("/* {t} */"),
    }
}

fn vec_component(k: i64) -> String {
    format!("s{}", std::char::from_digit(k as u32, 16).unwrap_or('0'))
}

impl<V: Clone + fmt::Display> View<V> {
    pub fn access(self: &Rc<View<V>>, idx: ArithExpr) -> Rc<View<V>> {
        Rc::new(View::Access {
            idx,
            inner: self.clone(),
        })
    }

    /// Component `c` of the elements (or of the value) seen through this view.
    pub fn component(self: &Rc<View<V>>, c: usize) -> Rc<View<V>> {
        match &**self {
            View::Tuple(vs) if c < vs.len() => vs[c].clone(),
            View::Zip(vs) if c < vs.len() => vs[c].clone(),
            View::Access { idx, inner } => inner.component(c).access(idx.clone()),
            // Re-indexings move the elements of a zip as a whole, so they commute with taking a
            // component. Pushing the component down matters: reading a whole zip element at
            // indices meant for one component reads the others with the wrong number of
            // indices (`split` of a zip of a matrix and a vector).
            View::Split { k, inner } => Rc::new(View::Split {
                k: k.clone(),
                inner: inner.component(c),
            }),
            View::Join { m, inner } => Rc::new(View::Join {
                m: m.clone(),
                inner: inner.component(c),
            }),
            View::Transpose { inner } => Rc::new(View::Transpose {
                inner: inner.component(c),
            }),
            View::Slide { step, inner } => Rc::new(View::Slide {
                step: step.clone(),
                inner: inner.component(c),
            }),
            View::Reorder { s, n, inner } => Rc::new(View::Reorder {
                s: s.clone(),
                n: n.clone(),
                inner: inner.component(c),
            }),
            View::Reverse { n, inner } => Rc::new(View::Reverse {
                n: n.clone(),
                inner: inner.component(c),
            }),
            View::Pad {
                skip,
                l,
                n,
                fill: None,
                inner,
            } => Rc::new(View::Pad {
                skip: *skip,
                l: l.clone(),
                n: n.clone(),
                fill: None,
                inner: inner.component(c),
            }),
            View::Mem { .. }
            | View::Value { .. }
            | View::Tuple(_)
            | View::Zip(_)
            | View::Pad { fill: Some(_), .. }
            | View::Component { .. }
            | View::Generate { .. }
            | View::AsVector { .. }
            | View::AsScalar { .. }
            | View::Nested { .. } => Rc::new(View::Component { c, inner: self.clone() }),
        }
    }

    /// For the views that only re-index the one below them (access, split, join, transpose,
    /// slide, reorder-stride, reverse, nested layouts): rewrites `idx` (indices into this view,
    /// outermost first) into indices into the view below, and returns that view.
    fn reindex(&self, idx: &mut Vec<ArithExpr>) -> Result<&Rc<View<V>>> {
        match self {
            View::Access { idx: i, inner } => {
                idx.insert(0, i.clone());
                Ok(inner)
            }
            View::Split { k, inner } => split_index(k, idx).map(|_| inner),
            View::Join { m, inner } => join_index(m, idx).map(|_| inner),
            View::Transpose { inner } => transpose_index(idx).map(|_| inner),
            View::Slide { step, inner } => split_index(step, idx).map(|_| inner),
            View::Reorder { s, n, inner } => {
                let a = pop1(idx)?;
                let q = n.div_assume_exact(s);
                idx.insert(0, a.div(&q).add(&s.mul(&a.rem(&q))));
                Ok(inner)
            }
            View::Reverse { n, inner } => {
                let a = pop1(idx)?;
                idx.insert(0, n.sub(&ArithExpr::cst(1)).sub(&a));
                Ok(inner)
            }
            View::Nested { skip, op, inner } => reindex_nested(*skip, op, idx).map(|_| inner),
            View::Mem { .. }
            | View::Value { .. }
            | View::Tuple(_)
            | View::Pad { .. }
            | View::Zip(_)
            | View::Component { .. }
            | View::Generate { .. }
            | View::AsVector { .. }
            | View::AsScalar { .. } => err("internal: not a re-indexing view"),
        }
    }

    /// Reads the value at `idx` (outermost first) below this view.
    pub fn read(&self, idx: &[ArithExpr]) -> Result<Read<V>> {
        let mut stack: Vec<ArithExpr> = idx.to_vec();
        self.read_rev(&mut stack)
    }

    fn read_rev(&self, idx: &mut Vec<ArithExpr>) -> Result<Read<V>> {
        // `idx` holds indices outermost first; each view pops from the front.
        match self {
            View::Mem { name, dims, elem } => {
                let (off, rest) = flatten(dims, idx)?;
                if !rest.is_empty() {
                    return err(format!("internal: too many indices for buffer {name}"));
                }
                Ok(Read::Expr(match elem {
                    Type::Vector(_, w) => Access::VLoad {
                        buf: name.clone(),
                        idx: off,
                        w: *w,
                    },
                    _ => Access::Elem {
                        buf: name.clone(),
                        idx: off,
                    },
                }))
            }
            View::Value { expr, ty } => {
                if !idx.is_empty() {
                    return err(format!("cannot index a value of type {ty}"));
                }
                Ok(Read::Expr(Access::Value(expr.clone())))
            }
            View::Tuple(vs) => {
                let rs = vs
                    .iter()
                    .map(|v| v.read_rev(&mut idx.clone()))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Read::Tuple(rs))
            }
            View::Access { .. }
            | View::Split { .. }
            | View::Join { .. }
            | View::Transpose { .. }
            | View::Slide { .. }
            | View::Reorder { .. }
            | View::Reverse { .. }
            | View::Nested { .. } => self.reindex(idx)?.read_rev(idx),
            View::Pad {
                skip,
                l,
                n,
                fill,
                inner,
            } => {
                if idx.len() <= *skip {
                    return err("internal: a view was read with too few indices");
                }
                let a = idx.remove(*skip);
                let j = a.sub(l);
                let zero = ArithExpr::cst(0);
                let in_range = zero.prove_le(&j) && j.prove_lt(n);
                match fill {
                    _ if in_range => {
                        idx.insert(*skip, j);
                        inner.read_rev(idx)
                    }
                    None => {
                        idx.insert(*skip, clamp_index(&j, n));
                        inner.read_rev(idx)
                    }
                    Some(v) => {
                        // the fill is read at the indices below the padded dimension: none
                        // for a scalar, a row's for a pad of rows
                        let mut below = idx[*skip..].to_vec();
                        idx.insert(*skip, j.clone());
                        match (inner.read_rev(idx)?, v.read_rev(&mut below)?) {
                            (Read::Expr(e), Read::Expr(f)) => Ok(Read::Expr(Access::Guard {
                                j,
                                n: n.clone(),
                                fill: Box::new(f),
                                inner: Box::new(e),
                            })),
                            (Read::Tuple(_), _) | (_, Read::Tuple(_)) => {
                                err("pad of an array of tuples is not supported yet")
                            }
                        }
                    }
                }
            }
            View::Zip(vs) => {
                let a = pop1(idx)?;
                let rs = vs
                    .iter()
                    .map(|v| {
                        let mut i = idx.clone();
                        i.insert(0, a.clone());
                        v.read_rev(&mut i)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Read::Tuple(rs))
            }
            View::Component { c, inner } => match inner.read_rev(idx)? {
                Read::Tuple(mut rs) if *c < rs.len() => Ok(rs.swap_remove(*c)),
                Read::Tuple(_) => err("tuple component out of range"),
                Read::Expr(e) => Ok(Read::Expr(Access::Field(Box::new(e), *c))),
            },
            View::Generate { param, body } => {
                let a = pop1(idx)?;
                if !idx.is_empty() {
                    return err("generate of arrays is not supported yet");
                }
                Ok(Read::Expr(Access::Generate {
                    param: param.clone(),
                    body: body.clone(),
                    idx: a,
                }))
            }
            View::AsVector { w, scalar, inner } => {
                let a = pop1(idx)?;
                let base = a.mul(&ArithExpr::cst(i64::from(*w)));
                if let Some((name, off)) = inner.contiguous_address(&base, *w)? {
                    return Ok(Read::Expr(Access::VLoadAt { buf: name, off, w: *w }));
                }
                let mut lanes = vec![];
                for k in 0..*w {
                    let mut i = vec![base.add(&ArithExpr::cst(i64::from(k)))];
                    match inner.read_rev(&mut i)? {
                        Read::Expr(e) => lanes.push(e),
                        Read::Tuple(_) => return err("asVector of tuples"),
                    }
                }
                Ok(Read::Expr(Access::Vector { scalar: *scalar, lanes }))
            }
            View::AsScalar { w, inner } => {
                let a = pop1(idx)?;
                let wc = ArithExpr::cst(i64::from(*w));
                if let Some((name, off)) = inner.vector_scalar_address(&a, *w)? {
                    return Ok(Read::Expr(Access::Elem { buf: name, idx: off }));
                }
                let lane = a.rem(&wc);
                let Some(k) = lane.as_cst() else {
                    // `asScalar (asVector xs)` at any index is `xs` at that index
                    if let View::AsVector {
                        w: v, inner: scalars, ..
                    } = &**inner
                    {
                        if v == w {
                            return scalars.read_rev(&mut vec![a]);
                        }
                    }
                    let mut i = vec![a.div(&wc)];
                    return match inner.read_rev(&mut i)? {
                        Read::Expr(e) => Ok(Read::Expr(Access::DynLane {
                            vector: Box::new(e),
                            lane,
                            w: *w,
                        })),
                        Read::Tuple(_) => err("asScalar of tuples"),
                    };
                };
                let mut i = vec![a.div(&wc)];
                match inner.read_rev(&mut i)? {
                    Read::Expr(e) => Ok(Read::Expr(Access::Lane(Box::new(e), k as u8))),
                    Read::Tuple(_) => err("asScalar of tuples"),
                }
            }
        }
    }

    /// The buffer and offset of `w` scalars from `idx` on when they are adjacent in memory, in
    /// order (what one `vloadW` reads); `None` when the view reorders them (a transposed,
    /// reversed or strided row), so they must be read one by one.
    fn contiguous_address(&self, idx: &ArithExpr, w: u8) -> Result<Option<(String, ArithExpr)>> {
        let Some((name, off)) = self.scalar_address(idx)? else {
            return Ok(None);
        };
        for k in 1..i64::from(w) {
            match self.scalar_address(&idx.add(&ArithExpr::cst(k)))? {
                Some((n, o)) if n == name && o == off.add(&ArithExpr::cst(k)) => {}
                _ => return Ok(None),
            }
        }
        Ok(Some((name, off)))
    }

    /// For views that bottom out in a scalar buffer: the buffer and the scalar offset of `idx`.
    fn scalar_address(&self, idx: &ArithExpr) -> Result<Option<(String, ArithExpr)>> {
        match self.resolve(&mut vec![idx.clone()])? {
            Some((name, off, Type::Scalar(_))) => Ok(Some((name, off))),
            _ => Ok(None),
        }
    }

    /// Scalar `a` of a view of vectors (width `w`) that lives in memory.
    fn vector_scalar_address(&self, a: &ArithExpr, w: u8) -> Result<Option<(String, ArithExpr)>> {
        let wc = ArithExpr::cst(i64::from(w));
        match self.resolve(&mut vec![a.div(&wc)])? {
            Some((name, off, Type::Vector(..))) => Ok(Some((name, off.mul(&wc).add(&a.rem(&wc))))),
            _ => Ok(None),
        }
    }

    /// The buffers this view reads or writes.
    pub fn buffers(&self) -> Vec<String> {
        match self {
            View::Mem { name, .. } => vec![name.clone()],
            View::Value { .. } | View::Generate { .. } => vec![],
            View::Tuple(vs) | View::Zip(vs) => vs.iter().flat_map(|v| v.buffers()).collect(),
            View::Access { inner, .. }
            | View::Split { inner, .. }
            | View::Join { inner, .. }
            | View::Transpose { inner }
            | View::Slide { inner, .. }
            | View::Pad { inner, .. }
            | View::Reorder { inner, .. }
            | View::Reverse { inner, .. }
            | View::Component { inner, .. }
            | View::AsVector { inner, .. }
            | View::AsScalar { inner, .. }
            | View::Nested { inner, .. } => inner.buffers(),
        }
    }

    /// Follows pure re-indexing views down to a buffer: `(name, element offset, element type)`.
    /// `None` when the path goes through a view that computes values (pad, generate, ...).
    fn resolve(&self, idx: &mut Vec<ArithExpr>) -> Result<Option<(String, ArithExpr, Type)>> {
        match self {
            View::Mem { name, dims, elem } => {
                let (off, rest) = flatten(dims, idx)?;
                if !rest.is_empty() {
                    return err(format!("internal: too many indices for buffer {name}"));
                }
                Ok(Some((name.clone(), off, elem.clone())))
            }
            View::Access { .. }
            | View::Split { .. }
            | View::Join { .. }
            | View::Transpose { .. }
            | View::Slide { .. }
            | View::Reorder { .. }
            | View::Reverse { .. }
            | View::Nested { .. } => self.reindex(idx)?.resolve(idx),
            View::Value { .. }
            | View::Tuple(_)
            | View::Pad { .. }
            | View::Zip(_)
            | View::Component { .. }
            | View::Generate { .. }
            | View::AsVector { .. }
            | View::AsScalar { .. } => Ok(None),
        }
    }

    /// The location written by a store of the element at `idx`.
    pub fn write(&self, idx: &[ArithExpr]) -> Result<Loc<V>> {
        match self {
            View::Access { idx: i, inner } => {
                let mut all = vec![i.clone()];
                all.extend_from_slice(idx);
                inner.write(&all)
            }
            View::Component { c, inner } => match inner.write(idx)? {
                Loc::Plain(l) => Ok(Loc::Plain(Access::Field(Box::new(l), *c))),
                Loc::Vector { .. } | Loc::Lanes(_) => err("cannot write a tuple component of a vector"),
            },
            View::Value { expr, .. } if idx.is_empty() => Ok(Loc::Plain(Access::Value(expr.clone()))),
            View::AsScalar { w, inner } if idx.len() == 1 => match inner.vector_scalar_address(&idx[0], *w)? {
                Some((name, off)) => Ok(Loc::Plain(Access::Elem { buf: name, idx: off })),
                None => err("cannot write through asScalar here"),
            },
            View::AsVector { w, inner, .. } if idx.len() == 1 => {
                let base = idx[0].mul(&ArithExpr::cst(i64::from(*w)));
                match inner.contiguous_address(&base, *w)? {
                    Some((name, off)) => Ok(Loc::Vector { base: name, offset: off, w: *w }),
                    // the lanes are not consecutive scalars: each is stored where it goes
                    None => (0..i64::from(*w))
                        .map(|k| match inner.write(&[base.add(&ArithExpr::cst(k))])? {
                            Loc::Plain(a) => Ok(a),
                            Loc::Vector { .. } | Loc::Lanes(_) => err("cannot write through asVector here"),
                        })
                        .collect::<Result<Vec<_>>>()
                        .map(Loc::Lanes),
                }
            }
            _ => match self.resolve(&mut idx.to_vec())? {
                Some((name, off, Type::Vector(_, w))) => Ok(Loc::Vector { base: name, offset: off.mul(&ArithExpr::cst(i64::from(w))), w }),
                Some((name, off, _)) => Ok(Loc::Plain(Access::Elem { buf: name, idx: off })),
                None => err("the result of this expression cannot be written through this layout (only split, join, transpose, slide, reorder-stride, reverse and tuple components can be written)"),
            },
        }
    }

    /// A short description for `--emit views`.
    pub fn describe(&self) -> String {
        match self {
            View::Mem { name, dims, elem } => {
                format!(
                    "mem {name}[{}] of {elem}",
                    dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("][")
                )
            }
            View::Value { expr, ty } => format!("value {expr} : {ty}"),
            View::Tuple(vs) => format!(
                "tuple({})",
                vs.iter().map(|v| v.describe()).collect::<Vec<_>>().join(", ")
            ),
            View::Access { idx, inner } => format!("{}[{idx}]", inner.describe()),
            View::Split { k, inner } => format!("split({k}, {})", inner.describe()),
            View::Join { m, inner } => format!("join({m}, {})", inner.describe()),
            View::Transpose { inner } => format!("transpose({})", inner.describe()),
            View::Slide { step, inner } => format!("slide(step {step}, {})", inner.describe()),
            View::Pad {
                skip,
                l,
                n,
                fill,
                inner,
            } => {
                let map = if *skip == 0 {
                    String::new()
                } else {
                    format!("map^{skip} ")
                };
                match fill {
                    Some(f) => format!("{map}pad({l}, len {n}, {}, {})", f.describe(), inner.describe()),
                    None => format!("{map}pad-clamp({l}, len {n}, {})", inner.describe()),
                }
            }
            View::Reorder { s, inner, .. } => format!("reorder-stride({s}, {})", inner.describe()),
            View::Reverse { inner, .. } => format!("reverse({})", inner.describe()),
            View::Zip(vs) => format!(
                "zip({})",
                vs.iter().map(|v| v.describe()).collect::<Vec<_>>().join(", ")
            ),
            View::Component { c, inner } => format!("get({c}, {})", inner.describe()),
            View::Generate { param, body } => format!("generate({param} => {body})"),
            View::AsVector { w, scalar, inner } => format!("asVector({w}, {}, {})", scalar.name(), inner.describe()),
            View::AsScalar { w, inner } => format!("asScalar({w}, {})", inner.describe()),
            View::Nested { skip, op, inner } => {
                let op = match op {
                    Layout::Split(k) => format!("split({k})"),
                    Layout::Join(m) => format!("join({m})"),
                    Layout::Transpose => "transpose".into(),
                    Layout::Slide(step) => format!("slide(step {step})"),
                    Layout::PerItem(n) => format!("per-item({n})"),
                };
                format!("map^{skip} {op}({})", inner.describe())
            }
        }
    }
}

fn pop1(idx: &mut Vec<ArithExpr>) -> Result<ArithExpr> {
    if idx.is_empty() {
        return err("internal: a view was read with too few indices");
    }
    Ok(idx.remove(0))
}

fn pop2(idx: &mut Vec<ArithExpr>) -> Result<(ArithExpr, ArithExpr)> {
    let a = pop1(idx)?;
    let b = pop1(idx)?;
    Ok((a, b))
}

/// Row-major offset of the leading `dims.len()` indices; returns the unused indices.
fn flatten(dims: &[ArithExpr], idx: &[ArithExpr]) -> Result<(ArithExpr, Vec<ArithExpr>)> {
    if idx.len() < dims.len() {
        return err("internal: a buffer was read with too few indices");
    }
    let mut off = ArithExpr::cst(0);
    for (k, i) in idx.iter().take(dims.len()).enumerate() {
        let stride = dims[k + 1..].iter().fold(ArithExpr::cst(1), |acc, d| acc.mul(d));
        off = off.add(&i.mul(&stride));
    }
    Ok((off, idx[dims.len()..].to_vec()))
}

#[cfg(test)]
mod tests;
