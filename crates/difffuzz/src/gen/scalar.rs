//! Scalars, tuples and values built backwards from their type: leaves from the environment,
//! literals, operators, elements of arrays, calls of defined functions, loops of one
//! work-item over a scalar, and integers of other widths (`ints.rs`) inside them.

use super::*;

impl Gen {
    /// A loop of one work-item over a scalar state (LANGUAGE.md, "Loops inside a work-item"):
    /// `iterate` with a literal count or the run-time count `K`, or `iterate-until` whose exit
    /// is a condition of the previous and the new state, so each work-item stops after its own
    /// number of steps. The step usually reads the state (the innermost variable) and whatever
    /// the enclosing function sees.
    pub(super) fn work_item_loop(&mut self, t: &Ty, env: &[Var], d: usize) -> String {
        let s = self.name("s");
        let init = self.scalar(t, env, d.min(2));
        let mut inner = env.to_vec();
        inner.push(Var {
            name: s.clone(),
            ty: t.clone(),
        });
        let step = if self.chance(50) {
            // the state combined with what the work-item sees: a trip that depends on the data
            let op = self.pick(&["+", "*", "-", "min", "max"]);
            let e = self.scalar(t, &inner, d.min(2));
            format!("({op} {s} {e})")
        } else {
            self.scalar(t, &inner, d.min(2))
        };
        if self.chance(40) {
            let count = if self.chance(30) {
                if self.run_time_steps.is_none() {
                    self.run_time_steps = Some(self.pick(&[4, 17, 40]));
                }
                "K".to_string()
            } else {
                format!("#{}", self.pick(&[1, 3, 7, 20]))
            };
            return format!("(iterate {count} (lambda ({s}) {step}) {init})");
        }
        let (prev, next) = (self.name("prev"), self.name("next"));
        let mut both = env.to_vec();
        for v in [&prev, &next] {
            both.push(Var {
                name: v.clone(),
                ty: t.clone(),
            });
        }
        let cond = if self.chance(50) {
            // the new state against the old one or a value of the data
            let cmp = self.pick(&["<", ">", "<=", ">=", "="]);
            let other = if self.chance(50) {
                prev.clone()
            } else {
                self.scalar(t, env, d.min(1))
            };
            format!("({cmp} {next} {other})")
        } else {
            self.scalar(&Ty::Bool, &both, d.min(2))
        };
        let max = self.pick(&[1, 4, 12, 50]);
        format!("(iterate-until #{max} (lambda ({prev} {next}) {cond}) (lambda ({s}) {step}) {init})")
    }

    /// A value of a flat type.
    pub(super) fn value(&mut self, t: &Ty, env: &[Var], depth: usize) -> String {
        match t {
            Ty::Float | Ty::Double | Ty::Int | Ty::Bool => self.scalar(t, env, depth),
            Ty::Vector(l, w) => self.vector(*l, *w, env, depth),
            Ty::Tuple(ts) => {
                if let Some(v) = self.leaf(t, env) {
                    if self.chance(40) {
                        return v;
                    }
                }
                if depth > 0 && self.chance(15) {
                    let c = self.scalar(&Ty::Bool, env, 1);
                    let a = self.value(t, env, depth - 1);
                    let b = self.value(t, env, depth - 1);
                    return format!("(if {c} {a} {b})");
                }
                let parts: Vec<String> = ts.iter().map(|c| self.value(c, env, depth.saturating_sub(1))).collect();
                format!("(tuple {})", parts.join(" "))
            }
            Ty::Array(..) | Ty::Exists(..) => unreachable!("values are flat"),
        }
    }

    /// A variable (or a component or element of one) of type `t`.
    pub(super) fn leaf(&mut self, t: &Ty, env: &[Var]) -> Option<String> {
        // The innermost variables (the element a lambda works on) first: a function that
        // ignores its argument tests little.
        let mut found = vec![];
        for v in env.iter().rev() {
            let mut here = vec![];
            paths(&v.name, &v.ty, t, &mut here, 0);
            if !here.is_empty() && self.chance(65) {
                return Some(self.pick(&here));
            }
            found.extend(here);
        }
        if found.is_empty() {
            None
        } else {
            Some(self.pick(&found))
        }
    }

    pub(super) fn literal(&mut self, t: &Ty) -> String {
        match t {
            Ty::Float => self.pick(FLOAT_LITS).to_string(),
            Ty::Double => self.pick(&["0.0d", "1.0d", "-0.5d", "2.0d"]).to_string(),
            Ty::Int => self.pick(INT_LITS).to_string(),
            Ty::Bool => self.pick(&["true", "false"]).to_string(),
            _ => self.value(t, &[], 0),
        }
    }

    pub(super) fn scalar(&mut self, t: &Ty, env: &[Var], depth: usize) -> String {
        if depth == 0 || self.chance(20) {
            if let Some(v) = self.leaf(t, env) {
                if self.chance(90) {
                    return v;
                }
            }
            if depth == 0 {
                return self.literal(t);
            }
        }
        let d = depth - 1;
        if self.chance(8) {
            let c = self.scalar(&Ty::Bool, env, d.min(1));
            let a = self.scalar(t, env, d);
            let b = self.scalar(t, env, d);
            return format!("(if {c} {a} {b})");
        }
        if self.chance(5) {
            let v = self.name("v");
            let vt = if self.chance(60) { Ty::Float } else { Ty::Int };
            let e = self.scalar(&vt, env, d);
            let mut inner = env.to_vec();
            inner.push(Var {
                name: v.clone(),
                ty: vt,
            });
            let body = self.scalar(t, &inner, d);
            return format!("(let {v} {e} {body})");
        }
        if self.chance(4) {
            return self.call_definition(t, env, d);
        }
        if self.chance(3) {
            // a function applied where it is written, or through a definition that takes it
            let v = self.name("v");
            let vt = if self.chance(60) { Ty::Float } else { Ty::Int };
            let arg = self.scalar(&vt, env, d);
            let mut inner = env.to_vec();
            inner.push(Var {
                name: v.clone(),
                ty: vt,
            });
            let body = self.scalar(t, &inner, d);
            if self.chance(50) {
                return format!("((lambda ({v}) {body}) {arg})");
            }
            let (app, f, x) = (self.name("apply"), self.name("f"), self.name("a"));
            self.defs.push(format!("(define ({app} {f} {x}) ({f} {x}))"));
            return format!("({app} (lambda ({v}) {body}) {arg})");
        }
        if self.chance(4) {
            if let Some(e) = self.element_at(t, env, d) {
                return e;
            }
        }
        if matches!(t, Ty::Float | Ty::Int) && self.chance(3) {
            return self.work_item_loop(t, env, d);
        }
        // integers of every width and their bit operations (`ints.rs`)
        match t {
            Ty::Int if self.chance(12) => return self.int_of_wide(env, d),
            Ty::Float if self.chance(3) => return self.float_of_wide(env, d),
            Ty::Bool if self.chance(8) => return self.compare_wide(env, d),
            _ => {}
        }
        match t {
            Ty::Float => match self.rng.below(16) {
                0..=5 => {
                    let op = self.pick(&["+", "+", "*", "-", "min", "max"]);
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("({op} {a} {b})")
                }
                6 => {
                    let a = self.scalar(t, env, d);
                    format!("(- {a})")
                }
                7 => {
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("(/ {a} (+ (abs {b}) 1.0f))")
                }
                8 => {
                    let a = self.scalar(t, env, d);
                    let f = self.pick(&[
                        "(sqrt (abs {}))",
                        "(exp (min {} 2.0f))",
                        "(log (+ (abs {}) 1.0f))",
                        "(sin {})",
                        "(cos {})",
                        "(pow (abs {}) 2.0f)",
                        "(abs {})",
                    ]);
                    f.replace("{}", &a)
                }
                9 => {
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    let c = self.scalar(t, env, d);
                    format!("(fma {a} {b} {c})")
                }
                10 => {
                    let from = if self.chance(20) { Ty::Double } else { Ty::Int };
                    let a = self.scalar(&from, env, d);
                    format!("(to-float {a})")
                }
                11 => self.scalar_of_vector(Lane::Float, env, d),
                _ => {
                    let op = self.pick(&["+", "*", "-", "max"]);
                    let a = self.scalar(t, env, d);
                    let b = self.literal(t);
                    format!("({op} {a} {b})")
                }
            },
            Ty::Double if self.chance(15) => self.scalar_of_vector(Lane::Double, env, d),
            Ty::Int if self.chance(10) => self.scalar_of_vector(Lane::Int, env, d),
            Ty::Double => match self.rng.below(4) {
                0 | 1 => {
                    let op = self.pick(&["+", "*", "-", "min", "max"]);
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("({op} {a} {b})")
                }
                2 => {
                    let a = self.scalar(&Ty::Float, env, d);
                    format!("(to-double {a})")
                }
                _ => {
                    let a = self.scalar(t, env, d);
                    format!("(sqrt (abs {a}))")
                }
            },
            Ty::Int => match self.rng.below(8) {
                0..=3 => {
                    let op = self.pick(&["+", "+", "*", "-", "min", "max"]);
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("({op} {a} {b})")
                }
                4 => {
                    let op = self.pick(&["/", "%"]);
                    let a = self.scalar(t, env, d);
                    let k = self.pick(&["2", "3", "-4"]);
                    format!("({op} {a} {k})")
                }
                5 => {
                    let a = self.scalar(&Ty::Float, env, d);
                    format!("(to-int {a})")
                }
                _ => {
                    let a = self.scalar(t, env, d);
                    let b = self.literal(t);
                    format!("(+ {a} {b})")
                }
            },
            Ty::Bool => match self.rng.below(6) {
                0..=3 => {
                    let ot = if self.chance(60) { Ty::Float } else { Ty::Int };
                    let op = self.pick(&["<", "<=", ">", ">=", "=", "!="]);
                    let a = self.scalar(&ot, env, d);
                    let b = self.scalar(&ot, env, d);
                    format!("({op} {a} {b})")
                }
                4 => {
                    let op = self.pick(&["and", "or"]);
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("({op} {a} {b})")
                }
                _ => {
                    let a = self.scalar(t, env, d);
                    format!("(not {a})")
                }
            },
            _ => unreachable!("scalars only"),
        }
    }

    /// `(at i xs)` of an array in scope whose elements have type `t`, with an index kept in
    /// range (mostly) by `min`/`max`.
    pub(super) fn element_at(&mut self, t: &Ty, env: &[Var], depth: usize) -> Option<String> {
        let mut cands = vec![];
        for v in env {
            if let Ty::Array(e, n) = &v.ty {
                if **e == *t {
                    cands.push((v.name.clone(), n.val));
                }
                if let Ty::Array(e2, m) = &**e {
                    if **e2 == *t {
                        // An element of a row picked by `at`.
                        let i = self.rng.below(n.val.max(1));
                        cands.push((format!("(at {i} {})", v.name), m.val));
                    }
                }
            }
        }
        if cands.is_empty() {
            return None;
        }
        let (arr, len) = self.pick(&cands);
        let idx = if self.chance(50) {
            self.rng.below(len.max(1)).to_string()
        } else {
            let i = self.scalar(&Ty::Int, env, depth.min(1));
            let hi = if self.unruly && self.chance(30) {
                len
            } else {
                len.saturating_sub(1)
            };
            format!("(min (max {i} 0) {hi})")
        };
        Some(format!("(at {idx} {arr})"))
    }

    /// A call of a new top-level definition (a function of one scalar, or a constant).
    pub(super) fn call_definition(&mut self, t: &Ty, env: &[Var], depth: usize) -> String {
        let f = self.name("def");
        if self.chance(30) {
            let v = self.literal(t);
            self.defs.push(format!("(define {f} {v})"));
            return f;
        }
        let pt = if self.chance(70) { Ty::Float } else { Ty::Int };
        let p = self.name("p");
        let penv = vec![Var {
            name: p.clone(),
            ty: pt.clone(),
        }];
        let body = self.scalar(t, &penv, depth.min(2));
        self.defs.push(format!("(define ({f} {p}) {body})"));
        let arg = self.scalar(&pt, env, depth);
        format!("({f} {arg})")
    }
}
