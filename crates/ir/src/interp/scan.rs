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

#[cfg(test)]
mod tests {
    use crate::interp::{eval, eval_with, Approx, Arith, Options, Value};

    fn run(src: &str, xs: Value, n: i64, arith: Arith) -> Value {
        let prog = crate::parse(src).unwrap_or_else(|d| panic!("parse error: {}", d.message));
        let sizes = move |s: &str| (s == "N").then_some(n);
        let opts = Options {
            arith,
            max_steps: None,
            precision: crate::Precision::F32,
        };
        eval_with(&prog, &[xs], &sizes, &opts).expect("runs")
    }

    fn approx(v: &Value) -> Vec<Approx> {
        match v {
            Value::Array(xs) => xs
                .iter()
                .map(|x| match x {
                    Value::Approx(a) => *a,
                    other => panic!("not an Approx: {other:?}"),
                })
                .collect(),
            other => panic!("not an array: {other:?}"),
        }
    }

    #[test]
    fn scan_is_inclusive_with_the_start_combined_once() {
        let prog = crate::parse("(lift (N) ((array-type int N)) (lambda (xs) (scan + 10 xs)))").expect("parses");
        let xs = Value::Array([1, 2, 3, 4].map(Value::Int).to_vec());
        let got = eval(&prog, &[xs], &|s| (s == "N").then_some(4)).expect("runs");
        assert_eq!(got, Value::Array([11, 13, 16, 20].map(Value::Int).to_vec()));
    }

    #[test]
    fn scan_seq_folds_into_an_accumulator_of_another_type() {
        let src = "(lift (N) ((array-type int N)) (lambda (xs) (scanSeq (lambda (a x) (+ a (to-float x))) 0.5f xs)))";
        let xs = Value::Array([1, 2, 3].map(Value::Int).to_vec());
        let got = run(src, xs, 3, Arith::Native);
        assert_eq!(got, Value::Array([1.5f32, 3.5, 6.5].map(Value::Float).to_vec()));
    }

    #[test]
    fn bounded_scan_covers_every_order_of_each_prefix() {
        let xs: Vec<f32> = (0..3000).map(|i| ((i * 7919 % 1000) as f32) * 0.013 - 6.1).collect();
        let v = Value::Array(xs.iter().map(|x| Value::Float(*x)).collect());
        let src = "(lift (N) ((array-type float N)) (lambda (xs) (scan + 0.0f xs)))";
        let bounds = approx(&run(src, v.clone(), 3000, Arith::Bounded));
        // left to right, and in tiles of 64 whose sums are added afterwards (as scanGlb does)
        let mut seq = 0.0f32;
        let mut tile_base = 0.0f32;
        let mut in_tile = 0.0f32;
        for (i, x) in xs.iter().enumerate() {
            seq += x;
            if i % 64 == 0 {
                tile_base += in_tile;
                in_tile = 0.0;
            }
            in_tile += x;
            let tiled = tile_base + in_tile;
            let b = &bounds[i];
            for d in [seq, tiled] {
                assert!(
                    (f64::from(d) - b.value).abs() <= f64::from(b.own) + f64::from(b.dev),
                    "prefix {i}: {d} outside {b:?}"
                );
            }
        }
        // an operator the interpreter cannot bound in every order gets no device bound
        let other = "(lift (N) ((array-type float N)) (lambda (xs) (scan (lambda (a b) (+ (* 0.5f a) b)) 0.0f xs)))";
        assert!(approx(&run(other, v, 3000, Arith::Bounded))
            .iter()
            .all(|a| a.dev.is_infinite()));
    }
}
