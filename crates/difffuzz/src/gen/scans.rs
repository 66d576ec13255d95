//! Scans in generated programs (LANGUAGE.md, "Array primitives"): high-level `scan` of floats,
//! ints, vectors and (through conversions) unsigned and 64-bit integers, with an operator that is
//! associative (`+`, `min`, `max`, the bit operations on integers) and any start value, over a
//! whole array or, under a `map`, over each row; often with a map before it or after it (which
//! the compiler fuses into the scan's kernel); and low-level `scanGlb` at host level.

use super::*;

impl Gen {
    /// Elements that a scan's associative operators take (rows of them: a scan of each row).
    pub(super) fn scannable(&self, elem: &Ty) -> bool {
        match elem {
            Ty::Float | Ty::Int => true,
            Ty::Vector(l, _) => matches!(l, Lane::Float | Lane::Int),
            Ty::Array(row, _) => !matches!(**row, Ty::Array(..)) && self.scannable(row),
            Ty::Double | Ty::Bool | Ty::Tuple(_) | Ty::Exists(..) => false,
        }
    }

    /// An associative operator over `elem`s and a start value.
    fn scan_op(&mut self, elem: &Ty) -> (String, String) {
        let op = match elem {
            Ty::Int | Ty::Vector(Lane::Int, _) => self.pick(&["+", "+", "max", "min", "bit-xor", "bit-or", "bit-and"]),
            _ => self.pick(&["+", "+", "+", "max", "min"]),
        };
        let z = match elem {
            Ty::Float => self.pick(&["0.0f", "0.0f", "1.5f", "-2.0f"]).to_string(),
            Ty::Int => self.pick(&["0", "0", "7", "-1"]).to_string(),
            _ => self.value(elem, &[], 0),
        };
        (op.to_string(), z)
    }

    /// `(scan op z a)` of `a : [elem]n` at high level, possibly of a map of `a`, possibly under a
    /// map, or of `uint`/`long`/`ulong` values converted from int elements and back.
    pub(super) fn hl_scan(&mut self, env: &[Var], a: String, elem: &Ty, n: Len) -> (String, Ty) {
        if let Ty::Array(row, m) = elem {
            // each row scanned: `map (λr. scan …)`, one launch for every row
            let row = (**row).clone();
            let r = self.name("r");
            let (s, st) = self.hl_scan(env, r.clone(), &row, m.clone());
            return (format!("(map (lambda ({r}) {s}) {a})"), Ty::arr(st, n));
        }
        if matches!(elem, Ty::Int | Ty::Float) && self.chance(30) {
            // a scan of wider integers: made from the elements (floats are quarters: times 4,
            // ints), scanned, brought back
            let w = self.pick(&[("to-uint", "0u"), ("to-long", "0l"), ("to-ulong", "0ul")]);
            let op = self.pick(&["+", "bit-xor", "max", "bit-or"]);
            let (x, y) = (self.name("x"), self.name("y"));
            let mut inner = env.to_vec();
            inner.push(Var {
                name: x.clone(),
                ty: Ty::Int,
            });
            let v = if *elem == Ty::Float {
                format!("(to-int (* 4.0f {x}))")
            } else {
                self.scalar(&Ty::Int, &inner, 1)
            };
            let back = self.pick(&["(to-int {})", "(to-int (shr {} 3))", "(to-float {})"]);
            let rt = if back.contains("float") { Ty::Float } else { Ty::Int };
            let scan = format!("(scan {op} {} (map (lambda ({x}) ({} {v})) {a}))", w.1, w.0);
            return (
                format!("(map (lambda ({y}) {}) {scan})", back.replace("{}", &y)),
                Ty::arr(rt, n),
            );
        }
        let (op, z) = self.scan_op(elem);
        let input = if self.chance(35) {
            let x = self.name("x");
            let mut inner = env.to_vec();
            inner.push(Var {
                name: x.clone(),
                ty: elem.clone(),
            });
            let v = self.value(elem, &inner, 1);
            format!("(map (lambda ({x}) {v}) {a})")
        } else {
            a
        };
        let scan = format!("(scan {op} {z} {input})");
        if self.chance(35) {
            let y = self.name("y");
            let mut inner = env.to_vec();
            inner.push(Var {
                name: y.clone(),
                ty: elem.clone(),
            });
            let v = self.value(elem, &inner, 1);
            return (format!("(map (lambda ({y}) {v}) {scan})"), Ty::arr(elem.clone(), n));
        }
        (scan, Ty::arr(elem.clone(), n))
    }

    /// `scanGlb` of `a : [elem]n` at host level (its own kernel, one launch).
    pub(super) fn host_scan(&mut self, a: &str, elem: &Ty) -> String {
        let (op, z) = self.scan_op(elem);
        format!("(toGlobal (scanGlb {op} {z} {a}))")
    }
}
