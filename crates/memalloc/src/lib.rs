//! Memory allocation: buffers in global, local and private memory, sized symbolically.
//!
//! Only computations allocate (a map, reduce, filter or iterate whose result is not written
//! straight into its consumer's destination); layout primitives never allocate. A buffer made
//! inside parallel loops needs one slice per work-item that may hold it at the same time, so its
//! size is multiplied by the lengths of the enclosing loops that run concurrently in its address
//! space (Lift's `numGlb`/`numLcl`/`numPvt`):
//! - global: every enclosing `mapGlb`, `mapWrg` and `mapLcl`;
//! - local: the enclosing `mapLcl`s only (a work-group has its own local memory);
//! - private: none (each work-item has its own), and the size must be a constant.
//!
//! Sequential loops reuse their buffer on every iteration, so they multiply nothing.

use arith::ArithExpr;
use ir::{AddressSpace, Type};
use std::fmt;
use std::rc::Rc;
use views::View;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Program parameter `k`.
    Input(usize),
    Output,
    /// The run-time length(s) of an existential output.
    OutputLength,
    Temp,
    /// Run-time length(s) of an existential temporary.
    TempLength,
    /// Scratch of the multi-kernel filter (group counts and offsets).
    Scratch,
    /// The run-time length of program parameter `k`, a filter result (a host loop's state).
    InputLength(usize),
}

#[derive(Clone, Debug)]
pub struct Buffer {
    pub name: String,
    pub space: AddressSpace,
    /// Element type: a scalar, vector or tuple (nested arrays are flattened into `len`).
    pub elem: Type,
    /// Number of elements.
    pub len: ArithExpr,
    pub role: Role,
}

/// A loop enclosing an allocation.
#[derive(Clone, Debug)]
pub struct Enclosing {
    pub var: ArithExpr,
    pub len: ArithExpr,
    pub kind: LoopKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    Global,
    WorkGroup,
    Local,
    Sequential,
}

#[derive(Clone, Debug, Default)]
pub struct Memory {
    pub buffers: Vec<Buffer>,
}

/// Splits a (nested) array type into its lengths and element type.
pub fn dims_of(ty: &Type) -> (Vec<ArithExpr>, Type) {
    let mut dims = vec![];
    let mut t = ty;
    loop {
        match t {
            Type::Array(e, n) => {
                dims.push(n.clone());
                t = e;
            }
            Type::Exists(e) => t = e,
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Fun(..) => return (dims, t.clone()),
        }
    }
}

impl Memory {
    /// Allocates a buffer named `name` (the caller's namer makes names unique) for a value of
    /// type `ty` (array lengths already replaced by their capacities) and returns the view of
    /// this work-item's slice.
    pub fn allocate<V: Clone + fmt::Display>(
        &mut self,
        name: &str,
        ty: &Type,
        space: AddressSpace,
        enclosing: &[Enclosing],
        role: Role,
    ) -> Result<(usize, Rc<View<V>>), String> {
        let (mut dims, elem) = dims_of(ty);
        if let Type::Fun(..) = elem {
            return Err("internal: a function value cannot be stored".into());
        }
        let concurrent: Vec<&Enclosing> = enclosing
            .iter()
            .filter(|l| match (space, l.kind) {
                (AddressSpace::Global, LoopKind::Global | LoopKind::WorkGroup | LoopKind::Local) => true,
                (AddressSpace::Local, LoopKind::Local) => true,
                (AddressSpace::Global | AddressSpace::Local | AddressSpace::Private, _) => false,
            })
            .collect();
        let mut all = concurrent.iter().map(|l| l.len.clone()).collect::<Vec<_>>();
        all.append(&mut dims);
        let len = all.iter().fold(ArithExpr::cst(1), |a, d| a.mul(d));
        match space {
            // Local arrays of run-time size are kernel parameters sized by the host at launch.
            AddressSpace::Private if len.as_cst().is_none() => {
                return Err(format!(
                    "a private array must have a size known at compile time, but this one holds {len} elements; use a constant split size, toLocal or toGlobal"
                ));
            }
            _ => {}
        }
        let name = name.to_string();
        self.buffers.push(Buffer {
            name: name.clone(),
            space,
            elem: elem.clone(),
            len,
            role,
        });
        let mut view = Rc::new(View::Mem { name, dims: all, elem });
        for l in &concurrent {
            view = view.access(l.var.clone());
        }
        Ok((self.buffers.len() - 1, view))
    }

    /// Registers an input buffer of parameter `k`.
    pub fn input<V: Clone + fmt::Display>(&mut self, name: &str, k: usize, ty: &Type) -> (usize, Rc<View<V>>) {
        let (dims, elem) = dims_of(ty);
        let len = dims.iter().fold(ArithExpr::cst(1), |a, d| a.mul(d));
        self.buffers.push(Buffer {
            name: name.to_string(),
            space: AddressSpace::Global,
            elem: elem.clone(),
            len,
            role: Role::Input(k),
        });
        (
            self.buffers.len() - 1,
            Rc::new(View::Mem {
                name: name.to_string(),
                dims,
                elem,
            }),
        )
    }

    pub fn by_name(&self, name: &str) -> Option<&Buffer> {
        self.buffers.iter().find(|b| b.name == name)
    }
}

impl fmt::Display for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.buffers {
            writeln!(
                f,
                "buffer {} : {:?} {:?} {} x {}",
                b.name, b.role, b.space, b.len, b.elem
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arith::Range;

    #[test]
    fn global_temporaries_get_one_slice_per_parallel_iteration() {
        let n = ArithExpr::size_var("N");
        let i = ArithExpr::var("i", Range::upto(n.clone()));
        let mut m = Memory::default();
        let ty = Type::array(Type::float(), ArithExpr::cst(4));
        let encl = [Enclosing {
            var: i.clone(),
            len: n.clone(),
            kind: LoopKind::Global,
        }];
        let (b, v) = m
            .allocate::<String>("v_gt_0", &ty, AddressSpace::Global, &encl, Role::Temp)
            .unwrap();
        assert_eq!(m.buffers[b].len, n.mul(&ArithExpr::cst(4)));
        let j = ArithExpr::var("j", Range::upto(ArithExpr::cst(4)));
        assert_eq!(
            v.read(std::slice::from_ref(&j)).unwrap(),
            views::Read::Expr(views::Access::Elem {
                buf: "v_gt_0".into(),
                idx: i.mul(&ArithExpr::cst(4)).add(&j)
            })
        );
        let (p, _) = m
            .allocate::<String>("v_pt_1", &ty, AddressSpace::Private, &encl, Role::Temp)
            .unwrap();
        assert_eq!(m.buffers[p].len, ArithExpr::cst(4));
    }

    #[test]
    fn private_arrays_need_constant_sizes() {
        let mut m = Memory::default();
        let ty = Type::array(Type::float(), ArithExpr::size_var("N"));
        assert!(m
            .allocate::<String>("v_pt_0", &ty, AddressSpace::Private, &[], Role::Temp)
            .unwrap_err()
            .contains("compile time"));
    }
}
