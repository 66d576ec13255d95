//! Inclusive prefixes (`scan`, `scanSeq`, `scanGlb`): element `i` is `z ⊕ x0 ⊕ … ⊕ xi`, computed
//! here left to right. Under [`Arith::Bounded`] a `scan` or `scanGlb` of `+` bounds each element
//! for every order of its additions (the device combines tiles, work-items and elements in a
//! tree), as `reduce` does; `*`, `min` and `max` keep the sequential bound, which holds in every
//! order; any other operator of a parallel scan gets no device bound. `scanSeq` runs in its
//! order on the device, so the sequential bound is its bound.

use super::approx::{without_dev_bound, AnyOrderSum, ReduceOp, B};
use super::*;
use crate::expr::ScanKind;

impl Interp<'_> {
    pub(super) fn scan(&mut self, id: ExprId, kind: ScanKind, f: ExprId, z: ExprId, xs: ExprId) -> Res<Value> {
        let name = Prim::Scan(kind).name();
        let z = self.eval(z)?;
        let op = self.binary_op_of(f);
        let parallel = matches!(kind, ScanKind::Plain | ScanKind::Glb);
        if self.bounded && parallel && op.map(|(_, k)| k) == Some(ReduceOp::Sum) {
            if let Some(first) = lanes_of(&z) {
                let vector = matches!(z, Value::Vector(_));
                return self.scan_sum_any_order(id, (first, vector), xs, &name);
            }
        }
        let at = match self.prog.expr(f) {
            Expr::Lambda { body, .. } => *body,
            _ => f,
        };
        let mut acc = z;
        let mut out = vec![];
        self.each(xs, &name, |s, x| {
            acc = match op {
                Some((o, _)) => {
                    s.step(at)?;
                    s.lanewise(at, o, &[acc.clone(), x])?
                }
                None => s.apply(f, [acc.clone(), x])?,
            };
            out.push(acc.clone());
            Ok(())
        })?;
        if self.bounded && parallel && op.is_none() {
            out = out.into_iter().map(without_dev_bound).collect();
        }
        Ok(Value::Array(out))
    }

    /// A parallel scan of `+` of floats or float vectors: each prefix, lane by lane, as a sum in
    /// any order of its terms.
    fn scan_sum_any_order(&mut self, id: ExprId, (z, vector): (Vec<B>, bool), xs: ExprId, name: &str) -> Res<Value> {
        let mut sums = vec![AnyOrderSum::new(); z.len()];
        for (s, b) in sums.iter_mut().zip(&z) {
            s.add(*b);
        }
        let mut out = vec![];
        self.each(xs, name, |s, x| {
            s.step(id)?;
            match lanes_of(&x) {
                Some(l) if l.len() == sums.len() => sums.iter_mut().zip(l).for_each(|(sum, b)| sum.add(b)),
                Some(_) | None => return s.err(id, format!("`{name}` of {} with a float start", describe(&x))),
            }
            let lanes: Vec<Value> = sums.iter().map(|s| s.done()).collect();
            out.push(if vector {
                Value::Vector(lanes)
            } else {
                lanes.into_iter().next().expect("one lane")
            });
            Ok(())
        })?;
        Ok(Value::Array(out))
    }
}

/// The floats of a float scalar or vector.
fn lanes_of(v: &Value) -> Option<Vec<B>> {
    match v {
        Value::Vector(l) => l.iter().map(B::of).collect(),
        x => B::of(x).map(|b| vec![b]),
    }
}
