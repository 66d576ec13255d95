//! The polynomial working form behind `Sum` / `Prod` nodes.

use std::collections::BTreeMap;

use crate::{ArithExpr, ExprKind};

/// A sorted multiset of atoms (empty: the constant monomial).
pub(crate) type Mono = Vec<ArithExpr>;

/// Beyond this many monomials a product is kept unexpanded, so that
/// distributing nested sums cannot blow up.
const MAX_TERMS: usize = 256;

#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub(crate) struct Poly {
    /// Coefficients are never 0.
    pub terms: BTreeMap<Mono, i64>,
}

pub(crate) fn mono_mul(a: &Mono, b: &Mono) -> Mono {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i].clone());
            i += 1;
        } else {
            out.push(b[j].clone());
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// `a / b` as multisets, if `b` is contained in `a`.
pub(crate) fn mono_div(a: &Mono, b: &Mono) -> Option<Mono> {
    let mut out = Vec::with_capacity(a.len());
    let mut j = 0;
    for x in a {
        if j < b.len() && *x == b[j] {
            j += 1;
        } else if j < b.len() && b[j] < *x {
            return None;
        } else {
            out.push(x.clone());
        }
    }
    (j == b.len()).then_some(out)
}

pub(crate) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Poly {
    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.terms.insert(Vec::new(), c);
        }
        p
    }

    pub fn mono(c: i64, m: Mono) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.terms.insert(m, c);
        }
        p
    }

    pub fn from_expr(e: &ArithExpr) -> Poly {
        let mut p = Poly::default();
        match e.kind() {
            ExprKind::Sum(ts) => {
                for t in ts {
                    let (c, m) = Poly::split_mono(t);
                    p.terms.insert(m, c);
                }
            }
            _ => {
                let (c, m) = Poly::split_mono(e);
                if c != 0 {
                    p.terms.insert(m, c);
                }
            }
        }
        p
    }

    /// Coefficient and atoms of a monomial expression.
    pub fn split_mono(e: &ArithExpr) -> (i64, Mono) {
        match e.kind() {
            ExprKind::Cst(c) => (*c, Vec::new()),
            ExprKind::Prod(fs) => match fs[0].as_cst() {
                Some(c) => (c, fs[1..].to_vec()),
                None => (1, fs.clone()),
            },
            _ => (1, vec![e.clone()]),
        }
    }

    pub fn mono_expr(c: i64, m: &Mono) -> ArithExpr {
        if m.is_empty() || c == 0 {
            return ArithExpr::cst(c);
        }
        if c == 1 && m.len() == 1 {
            return m[0].clone();
        }
        let mut fs = Vec::with_capacity(m.len() + 1);
        if c != 1 {
            fs.push(ArithExpr::cst(c));
        }
        fs.extend(m.iter().cloned());
        ArithExpr::mk(ExprKind::Prod(fs))
    }

    pub fn to_expr(&self) -> ArithExpr {
        let mut ts: Vec<ArithExpr> = self
            .terms
            .iter()
            .filter(|(m, _)| !m.is_empty())
            .map(|(m, c)| Poly::mono_expr(*c, m))
            .collect();
        if let Some(c) = self.terms.get(&Vec::new()) {
            ts.push(ArithExpr::cst(*c));
        }
        match ts.len() {
            0 => ArithExpr::cst(0),
            1 => ts.pop().unwrap_or_else(|| ArithExpr::cst(0)),
            _ => ArithExpr::mk(ExprKind::Sum(ts)),
        }
    }

    fn add_term(&mut self, m: Mono, c: i64) -> Option<()> {
        use std::collections::btree_map::Entry;
        match self.terms.entry(m) {
            Entry::Vacant(v) => {
                if c != 0 {
                    v.insert(c);
                }
            }
            Entry::Occupied(mut o) => {
                let s = o.get().checked_add(c)?;
                if s == 0 {
                    o.remove();
                } else {
                    *o.get_mut() = s;
                }
            }
        }
        Some(())
    }

    /// `self + k*o`; `None` on overflow.
    pub fn checked_add_scaled(&self, o: &Poly, k: i64) -> Option<Poly> {
        let mut r = self.clone();
        for (m, c) in &o.terms {
            r.add_term(m.clone(), c.checked_mul(k)?)?;
        }
        Some(r)
    }

    pub fn checked_add(&self, o: &Poly) -> Option<Poly> {
        self.checked_add_scaled(o, 1)
    }

    pub fn checked_sub(&self, o: &Poly) -> Option<Poly> {
        // Negating a coefficient of i64::MIN overflows, so subtract directly.
        let mut r = self.clone();
        for (m, c) in &o.terms {
            let cur = r.terms.get(m).copied().unwrap_or(0);
            let s = cur.checked_sub(*c)?;
            if s == 0 {
                r.terms.remove(m);
            } else {
                r.terms.insert(m.clone(), s);
            }
        }
        Some(r)
    }

    /// `None` on coefficient overflow or when the expansion would be too big.
    pub fn checked_mul(&self, o: &Poly) -> Option<Poly> {
        if self.terms.len().saturating_mul(o.terms.len()) > MAX_TERMS * 4 {
            return None;
        }
        let mut r = Poly::default();
        for (m1, c1) in &self.terms {
            for (m2, c2) in &o.terms {
                r.add_term(mono_mul(m1, m2), c1.checked_mul(*c2)?)?;
            }
        }
        (r.terms.len() <= MAX_TERMS).then_some(r)
    }

    /// gcd of the absolute values of the coefficients (0 for the zero poly).
    pub fn content(&self) -> u64 {
        self.terms.values().fold(0, |g, c| gcd(g, c.unsigned_abs()))
    }

    /// Divides every coefficient by `k`, if all are divisible.
    pub fn div_const(&self, k: i64) -> Option<Poly> {
        if k == 0 {
            return None;
        }
        let mut r = Poly::default();
        for (m, c) in &self.terms {
            if c.checked_rem(k)? != 0 {
                return None;
            }
            r.terms.insert(m.clone(), c.checked_div(k)?);
        }
        Some(r)
    }

    /// Atoms that occur in every monomial (as a multiset intersection).
    pub fn common_atoms(&self) -> Mono {
        let mut it = self.terms.keys();
        let Some(first) = it.next() else {
            return Vec::new();
        };
        let mut common = first.clone();
        for m in it {
            common = intersect(&common, m);
            if common.is_empty() {
                break;
            }
        }
        common
    }

    /// Divides every monomial by the atoms `d` (which must be common).
    pub fn div_mono(&self, d: &Mono) -> Option<Poly> {
        let mut r = Poly::default();
        for (m, c) in &self.terms {
            r.terms.insert(mono_div(m, d)?, *c);
        }
        Some(r)
    }

    /// Distinct atoms occurring in monomials.
    pub fn atoms(&self) -> Vec<ArithExpr> {
        let mut v: Vec<ArithExpr> = self.terms.keys().flatten().cloned().collect();
        v.sort();
        v.dedup();
        v
    }

    /// Splits as `c * a + d` where `a` has degree at most 1 in every
    /// monomial; `None` if some monomial has `a` squared.
    pub fn split_linear(&self, a: &ArithExpr) -> Option<(Poly, Poly)> {
        let mut coef = Poly::default();
        let mut rest = Poly::default();
        for (m, c) in &self.terms {
            let n = m.iter().filter(|x| *x == a).count();
            match n {
                0 => {
                    rest.terms.insert(m.clone(), *c);
                }
                1 => {
                    let pos = m.iter().position(|x| x == a)?;
                    let mut m2 = m.clone();
                    m2.remove(pos);
                    coef.terms.insert(m2, *c);
                }
                _ => return None,
            }
        }
        Some((coef, rest))
    }
}

fn intersect(a: &Mono, b: &Mono) -> Mono {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => {
                out.push(a[i].clone());
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    out
}
