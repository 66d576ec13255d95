//! Code inside a work-item and high-level programs: sequential maps and their bodies,
//! accumulators, folds, scans and predicates, flat element types, and high-level programs for
//! the rewriter (their scans: `scans.rs`).

use super::*;

impl Gen {
    /// A function of one `elem` for one work-item, and its result type.
    pub(super) fn seq_fn(&mut self, elem: &Ty, env: &[Var], depth: usize) -> (String, Ty) {
        let x = self.name("x");
        let mut inner = env.to_vec();
        inner.push(Var {
            name: x.clone(),
            ty: elem.clone(),
        });
        let (body, rt) = self.seq_body(&x, elem, &inner, depth);
        (format!("(lambda ({x}) {body})"), rt)
    }

    /// The body of a per-element function whose argument `x` has type `xt`.
    pub(super) fn seq_body(&mut self, x: &str, xt: &Ty, env: &[Var], depth: usize) -> (String, Ty) {
        match xt {
            Ty::Array(e, n) if depth > 0 => {
                let e = (**e).clone();
                match self.rng.below(8) {
                    0 | 1 => {
                        let (f, rt) = self.seq_fn(&e, env, depth - 1);
                        let map = self.pick(&["mapSeq", "mapSeq", "mapSeqUnroll"]);
                        let mut out = if self.chance(15) {
                            // partially applied, then applied to the array
                            format!("(({map} {f}) {x})")
                        } else {
                            format!("({map} {f} {x})")
                        };
                        if rt.flat() && self.chance(30) {
                            out = format!("(toPrivate {out})");
                            let (g, gt) = self.seq_fn(&rt, env, 0);
                            if gt.flat() {
                                out = format!("(mapSeq {g} {out})");
                                return (out, Ty::arr(gt, n.clone()));
                            }
                        }
                        (out, Ty::arr(rt, n.clone()))
                    }
                    // inclusive prefixes in one work-item: `[zt]n`
                    2 if self.chance(40) => {
                        let (z, zt) = self.accumulator(&e);
                        let f = self.fold_fn(&zt, &e, env);
                        (format!("(scanSeq {f} {z} {x})"), Ty::arr(zt, n.clone()))
                    }
                    2 | 3 => {
                        let (z, zt) = self.accumulator(&e);
                        let f = self.fold_fn(&zt, &e, env);
                        let red = self.pick(&["reduceSeq", "reduceSeq", "reduceSeqUnroll"]);
                        if self.chance(15) {
                            return (format!("(({red} {f} {z}) {x})"), Ty::arr(zt, Len::lit(1)));
                        }
                        (format!("({red} {f} {z} {x})"), Ty::arr(zt, Len::lit(1)))
                    }
                    // filters of flat elements, of rows of them (a kept row is copied) and of
                    // tuples of those (a kept tuple is copied component by component)
                    4 if e.filterable() => {
                        let p = self.pred_fn(&e, env);
                        if e.flat() && self.chance(50) {
                            let ys = self.name("ys");
                            let (f, rt) = self.seq_fn(&e, env, 0);
                            return (
                                format!("(let {ys} (filterSeq {p} {x}) (toGlobal (mapSeq {f} {ys})))"),
                                Ty::Exists(Box::new(rt), n.clone()),
                            );
                        }
                        (format!("(filterSeq {p} {x})"), Ty::Exists(Box::new(e), n.clone()))
                    }
                    5 if e.flat() && n.val <= 16 => {
                        let k = self.pick(&[1, 2, 3]);
                        let y = self.name("y");
                        let mut inner = env.to_vec();
                        inner.push(Var {
                            name: y.clone(),
                            ty: e.clone(),
                        });
                        let step = self.value(&e, &inner, 1);
                        let a = self.name("a");
                        let space = self.pick(&["toPrivate", "toPrivate", "toGlobal"]);
                        (
                            format!(
                                "(mapSeq (lambda (q) q) (iterate #{k} (lambda ({a}) ({space} (mapSeq (lambda ({y}) {step}) {a}))) (toPrivate (mapSeq (lambda (q) q) {x}))))"
                            ),
                            Ty::arr(e, n.clone()),
                        )
                    }
                    6 => {
                        let (v, vt) = self.layout(env, x.to_string(), xt.clone());
                        let (f, rt) = self.seq_fn(
                            match &vt {
                                Ty::Array(e, _) => e,
                                _ => unreachable!("layouts give arrays"),
                            },
                            env,
                            depth - 1,
                        );
                        let Ty::Array(_, m) = vt else { unreachable!("an array") };
                        (format!("(mapSeq {f} {v})"), Ty::arr(rt, m))
                    }
                    // a tuple holding arrays (stored as one buffer per component): a mapped
                    // copy of the row, or a reduction, next to a scalar, a vector or another
                    _ if self.chance(30) => {
                        let (f, rt) = self.seq_fn(&e, env, 0);
                        let a = (format!("(mapSeq {f} {x})"), Ty::arr(rt, n.clone()));
                        let (z, zt) = self.accumulator(&e);
                        let g = self.fold_fn(&zt, &e, env);
                        let b = (format!("(reduceSeq {g} {z} {x})"), Ty::arr(zt, Len::lit(1)));
                        let (c, ct) = if self.chance(50) {
                            b
                        } else {
                            let t = self.flat_type(env);
                            (self.value(&t, env, 1), t)
                        };
                        let (l, r) = if self.chance(50) { (a, (c, ct)) } else { ((c, ct), a) };
                        (format!("(tuple {} {})", l.0, r.0), Ty::Tuple(vec![l.1, r.1]))
                    }
                    _ => {
                        let t = self.flat_type(env);
                        (self.value(&t, env, 2), t)
                    }
                }
            }
            _ => {
                let t = if xt.flat() && self.chance(60) {
                    xt.clone()
                } else {
                    self.flat_type(env)
                };
                (self.value(&t, env, 3), t)
            }
        }
    }

    /// The initial value of a fold over `elem`s and the accumulator type.
    pub(super) fn accumulator(&mut self, elem: &Ty) -> (String, Ty) {
        match elem {
            Ty::Int => (self.pick(&["0", "1"]).to_string(), Ty::Int),
            Ty::Vector(..) => (self.value(elem, &[], 0), elem.clone()),
            Ty::Tuple(_) if self.chance(30) => {
                let t = Ty::Tuple(vec![Ty::Float, Ty::Int]);
                (self.value(&t, &[], 0), t)
            }
            _ => (self.pick(&["0.0f", "0.0f", "1.0f", "-2.0f"]).to_string(), Ty::Float),
        }
    }

    /// `(lambda (acc x) ...)`: accumulator `acc` of `zt`, element `x` of `elem`.
    pub(super) fn fold_fn(&mut self, zt: &Ty, elem: &Ty, env: &[Var]) -> String {
        let (acc, x) = (self.name("acc"), self.name("x"));
        if *zt == Ty::Float && *elem == Ty::Float && self.chance(40) {
            return self.pick(&["+", "max", "min"]).to_string();
        }
        let mut inner = env.to_vec();
        inner.push(Var {
            name: acc.clone(),
            ty: zt.clone(),
        });
        inner.push(Var {
            name: x.clone(),
            ty: elem.clone(),
        });
        // The accumulator is always used, so the fold really folds.
        let body = match zt {
            Ty::Float => {
                let v = self.value(&Ty::Float, &inner, 2);
                let op = self.pick(&["+", "+", "max", "min"]);
                format!("({op} {acc} {v})")
            }
            Ty::Int => {
                let v = self.value(&Ty::Int, &inner, 2);
                format!("(+ {acc} {v})")
            }
            Ty::Vector(..) => {
                let v = self.value(zt, &inner, 1);
                format!("(+ {acc} {v})")
            }
            _ => self.value(zt, &inner, 2),
        };
        format!("(lambda ({acc} {x}) {body})")
    }

    pub(super) fn pred_fn(&mut self, elem: &Ty, env: &[Var]) -> String {
        let x = self.name("x");
        let mut inner = env.to_vec();
        inner.push(Var {
            name: x.clone(),
            ty: elem.clone(),
        });
        let body = self.scalar(&Ty::Bool, &inner, 2);
        format!("(lambda ({x}) {body})")
    }

    pub(super) fn flat_type(&mut self, env: &[Var]) -> Ty {
        let vectors: Vec<Ty> = env
            .iter()
            .filter_map(|v| match &v.ty {
                Ty::Vector(..) => Some(v.ty.clone()),
                _ => None,
            })
            .collect();
        match self.rng.below(12) {
            0..=4 => Ty::Float,
            5 | 6 => Ty::Int,
            7 => Ty::Bool,
            // tuples holding vectors: C structs whose vector members are aligned to their size
            8 if self.chance(35) => {
                let w = self.pick(&[2, 3, 4, 8]);
                let lane = self.lane();
                if self.chance(50) {
                    Ty::Tuple(vec![Ty::Vector(lane, w), Ty::Float])
                } else {
                    Ty::Tuple(vec![Ty::Int, Ty::Tuple(vec![Ty::Float, Ty::Vector(lane, w)])])
                }
            }
            8 => Ty::Tuple(vec![Ty::Float, Ty::Int]),
            9 if self.chance(40) => Ty::Tuple(vec![Ty::Float, Ty::Tuple(vec![Ty::Int, Ty::Float])]),
            9 => Ty::Double,
            10 if !vectors.is_empty() => self.pick(&vectors),
            11 => {
                let lane = self.lane();
                Ty::Vector(lane, self.pick(&[2, 3, 4, 4, 8, 16]))
            }
            _ => Ty::Float,
        }
    }

    // ---- high level ----------------------------------------------------------------------------

    /// A program of high-level primitives only; the compiler chooses how to run it.
    pub(super) fn high_level(&mut self, env: &[Var]) -> String {
        let (a, at) = self.source(env, 1);
        let (e, _) = self.hl(env, a, at, 2);
        e
    }

    pub(super) fn hl(&mut self, env: &[Var], a: String, at: Ty, depth: usize) -> (String, Ty) {
        let Ty::Array(elem, n) = at.clone() else {
            unreachable!("an array")
        };
        let elem = *elem;
        match self.rng.below(8) {
            0 | 1 => {
                let x = self.name("x");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: x.clone(),
                    ty: elem.clone(),
                });
                let (body, rt) = match &elem {
                    Ty::Array(..) if depth > 0 => self.hl(&inner, x.clone(), elem.clone(), depth - 1),
                    _ => {
                        let t = if elem.flat() && elem != Ty::Bool {
                            elem.clone()
                        } else {
                            Ty::Float
                        };
                        (self.value(&t, &inner, 2), t)
                    }
                };
                (format!("(map (lambda ({x}) {body}) {a})"), Ty::arr(rt, n))
            }
            2 if matches!(elem, Ty::Float | Ty::Int) => {
                let z = if elem == Ty::Float { "0.0f" } else { "0" };
                let op = self.pick(&["+", "+", "max", "min"]);
                (format!("(reduce {op} {z} {a})"), Ty::arr(elem, Len::lit(1)))
            }
            // filters of flat elements, or (less often) of rows or tuples holding rows
            3 if elem.flat() || (elem.filterable() && self.chance(40)) => {
                let p = self.pred_fn(&elem, env);
                let filtered = format!("(filter {p} {a})");
                if self.chance(60) {
                    let x = self.name("x");
                    let mut inner = env.to_vec();
                    inner.push(Var {
                        name: x.clone(),
                        ty: elem.clone(),
                    });
                    let body = self.value(&Ty::Float, &inner, 1);
                    return (
                        format!("(map (lambda ({x}) {body}) {filtered})"),
                        Ty::Exists(Box::new(Ty::Float), n),
                    );
                }
                (filtered, Ty::Exists(Box::new(elem), n))
            }
            5 | 6 if self.scannable(&elem) => self.hl_scan(env, a, &elem, n),
            4 if elem.flat() && elem != Ty::Bool => {
                let k = self.pick(&[1, 2]);
                let x = self.name("x");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: x.clone(),
                    ty: elem.clone(),
                });
                let body = self.value(&elem, &inner, 1);
                let s = self.name("s");
                (
                    format!("(iterate #{k} (lambda ({s}) (map (lambda ({x}) {body}) {s})) {a})"),
                    at,
                )
            }
            _ => {
                let (v, vt) = self.layout(env, a, at);
                if depth == 0 {
                    return (v, vt);
                }
                self.hl(env, v, vt, depth - 1)
            }
        }
    }

    // ---- shapes the rewrite rules fire on (the variants mode) ---------------------------------
}
