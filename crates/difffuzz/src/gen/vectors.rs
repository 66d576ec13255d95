//! Vectors in generated programs: their lane types, the vector expressions (operators and
//! built-ins of a vector beside a vector or a scalar on either side, lane-wise maps, selects,
//! divisions), scalars taken out of vectors, and lengths written as one division.

use super::{Gen, Ty, Var};

/// The lane type of a vector: every scalar but `bool`, which OpenCL has no vectors of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Float,
    Double,
    Int,
}

impl Lane {
    pub fn ty(self) -> Ty {
        match self {
            Lane::Float => Ty::Float,
            Lane::Double => Ty::Double,
            Lane::Int => Ty::Int,
        }
    }
    pub(super) fn of(t: &Ty) -> Option<Lane> {
        match t {
            Ty::Float => Some(Lane::Float),
            Ty::Double => Some(Lane::Double),
            Ty::Int => Some(Lane::Int),
            Ty::Bool | Ty::Vector(..) | Ty::Tuple(_) | Ty::Array(..) | Ty::Exists(..) => None,
        }
    }
}

impl Gen {
    /// Mostly float lanes, as most programs have, but every lane type.
    pub(super) fn lane(&mut self) -> Lane {
        match self.rng.below(6) {
            0..=2 => Lane::Float,
            3 | 4 => Lane::Int,
            _ => Lane::Double,
        }
    }

    /// A vector of `w` lanes `l`. Operators and built-ins take it beside a vector or a scalar
    /// on either side (`(min 3 v)`, `(pow v 2.0f)`), the mixed operands OpenCL C has no
    /// overload for.
    pub(super) fn vector(&mut self, l: Lane, w: usize, env: &[Var], depth: usize) -> String {
        let t = Ty::Vector(l, w);
        let lt = l.ty();
        if let Some(v) = self.leaf(&t, env) {
            if depth == 0 || self.chance(30) {
                return v;
            }
        }
        if depth == 0 || self.chance(25) {
            let lanes: Vec<String> = (0..w).map(|_| self.scalar(&lt, env, depth.min(1))).collect();
            return format!("(vec {})", lanes.join(" "));
        }
        match self.rng.below(6) {
            0 | 1 => {
                let op = self.pick(&["+", "*", "-", "min", "max"]);
                let a = self.vector(l, w, env, depth - 1);
                let b = if self.chance(30) {
                    self.scalar(&lt, env, 0)
                } else {
                    self.vector(l, w, env, depth - 1)
                };
                if self.chance(30) {
                    return format!("({op} {b} {a})");
                }
                format!("({op} {a} {b})")
            }
            2 => {
                let x = self.name("l");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: x.clone(),
                    ty: lt.clone(),
                });
                let body = self.scalar(&lt, &inner, 1);
                let v = self.vector(l, w, env, depth - 1);
                format!("(mapVec (lambda ({x}) {body}) {v})")
            }
            3 => {
                let c = self.scalar(&Ty::Bool, env, 1);
                let a = self.vector(l, w, env, depth - 1);
                let b = self.vector(l, w, env, depth - 1);
                format!("(if {c} {a} {b})")
            }
            4 => {
                // division and remainder by a divisor kept away from zero
                let a = self.vector(l, w, env, depth - 1);
                let (op, k) = match l {
                    Lane::Int => (self.pick(&["/", "%"]), self.pick(&["2", "3", "-4"]).to_string()),
                    Lane::Float | Lane::Double => {
                        let b = self.vector(l, w, env, depth - 1);
                        let one = if l == Lane::Float { "1.0f" } else { "1.0d" };
                        (self.pick(&["/", "%"]), format!("(+ (abs {b}) {one})"))
                    }
                };
                if l != Lane::Int && self.chance(40) {
                    // a scalar dividend beside the vector divisor
                    let x = self.scalar(&lt, env, 0);
                    return format!("({op} {x} {k})");
                }
                format!("({op} {a} {k})")
            }
            _ => {
                let a = self.vector(l, w, env, depth - 1);
                match l {
                    Lane::Int => format!("(abs {a})"),
                    Lane::Float | Lane::Double => {
                        let two = if l == Lane::Float { "2.0f" } else { "2.0d" };
                        match self.rng.below(4) {
                            0 => format!("(abs {a})"),
                            1 => format!("(sqrt (abs {a}))"),
                            2 => format!("(pow (abs {a}) {two})"),
                            _ => {
                                let b = self.vector(l, w, env, depth - 1);
                                format!("(fma {a} {b} {a})")
                            }
                        }
                    }
                }
            }
        }
    }

    /// A scalar of lane type `l` out of a vector: a lane, or for floating lanes a `dot` or a
    /// `length`. Mostly of a width in scope.
    pub(super) fn scalar_of_vector(&mut self, l: Lane, env: &[Var], d: usize) -> String {
        let vs: Vec<usize> = env
            .iter()
            .filter_map(|v| match v.ty {
                Ty::Vector(vl, w) if vl == l => Some(w),
                _ => None,
            })
            .collect();
        let w = if vs.is_empty() {
            self.pick(&[2, 4])
        } else {
            self.pick(&vs)
        };
        let v = self.vector(l, w, env, d);
        match self.rng.below(3) {
            0 if l != Lane::Int => format!("(dot {v} {})", self.vector(l, w, env, d)),
            1 if l != Lane::Int => format!("(length {v})"),
            _ => format!("(vget #{} {v})", self.rng.below(w)),
        }
    }
}

/// A length of nested divisions by literals, `(/ (/ N 2) 4)`, as one division, `(/ N 8)`;
/// `None` for any other length.
pub(super) fn flat_division(text: &str) -> Option<String> {
    fn parts(text: &str) -> Option<(&str, usize)> {
        let (inner, k) = text.strip_prefix("(/ ")?.strip_suffix(')')?.rsplit_once(' ')?;
        Some((inner, k.parse().ok()?))
    }
    let (inner, k) = parts(text)?;
    let (base, product) = match flat_division(inner) {
        Some(flat) => parts(&flat).map(|(b, j)| (b.to_string(), j * k))?,
        None => {
            let (b, j) = parts(inner)?;
            (b.to_string(), j * k)
        }
    };
    Some(format!("(/ {base} {product})"))
}
