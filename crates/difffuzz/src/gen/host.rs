//! Host code of generated programs: host-level computations of one or more kernels, host sections
//! (\`if\`, \`iterate\`, \`iterate-until\`) whose parts map a state to its own type, the tests
//! and steps they take, and kernels of work-groups (\`mapWrg\` over chunks, \`mapLcl\` inside).

use super::*;

impl Gen {
    /// A host-level computation: one or more kernels.
    pub(super) fn host(&mut self, env: &[Var], depth: usize) -> String {
        let (a, at) = self.source(env, 2);
        let Ty::Array(elem, n) = at.clone() else {
            unreachable!("sources are arrays")
        };
        match self.rng.below(15) {
            // One work-item per element.
            0..=3 => {
                let (f, rt) = self.seq_fn(&elem, env, 3);
                let join = matches!(&rt, Ty::Array(_, l) if l.val == 1 && self.chance(70));
                let g = if self.chance(50) || !rt.flat() {
                    self.wrap_fn_body(&f, "toGlobal")
                } else {
                    f
                };
                let mut out = format!("(mapGlb {g} {a})");
                if rt.flat() && self.chance(60) {
                    out = if self.chance(25) {
                        // The same, as a pipeline of partial applications.
                        format!("(o toGlobal (mapGlb {g}) {a})")
                    } else {
                        format!("(toGlobal {out})")
                    };
                }
                if join {
                    out = format!("(join {out})");
                }
                out
            }
            // Chunks folded by one work-item each.
            4 => {
                let k = self.pick(&[2, 4, 8]);
                let (z, zt) = self.accumulator(&elem);
                let f = self.fold_fn(&zt, &elem, env);
                let red = if self.chance(30) {
                    "reduceSeqUnroll"
                } else {
                    "reduceSeq"
                };
                format!("(join (mapGlb (lambda (c) (toGlobal ({red} {f} {z} c))) (split #{k} {a})))")
            }
            // Two dimensions of work-items.
            5 => match *elem {
                Ty::Array(ref inner, _) => {
                    let (f, rt) = self.seq_fn(inner, env, 2);
                    let g = if rt.flat() {
                        f
                    } else {
                        self.wrap_fn_body(&f, "toGlobal")
                    };
                    let r = self.name("row");
                    let dim = if self.chance(80) { "mapGlb1" } else { "mapGlb2" };
                    format!("(toGlobal ({dim} (lambda ({r}) (mapGlb {g} {r})) {a}))")
                }
                _ => self.host(env, depth),
            },
            // Work-groups.
            6 | 7 => self.work_groups(env, a, &at),
            // The parallel filter.
            8 if elem.flat() || self.chance(30) => {
                let p = self.pred_fn(&elem, env);
                let filtered = format!("(toGlobal (filterGlb {p} {a}))");
                if self.chance(60) && elem.flat() {
                    let ys = self.name("ys");
                    let binder = if self.chance(30) { "unpack" } else { "let" };
                    let mut inner = env.to_vec();
                    inner.push(Var {
                        name: ys.clone(),
                        ty: Ty::Exists(elem.clone(), n.clone()),
                    });
                    let (f, _) = self.seq_fn(&elem, &inner, 2);
                    format!("({binder} {ys} {filtered} (toGlobal (mapGlb {f} {ys})))")
                } else {
                    filtered
                }
            }
            // A kernel boundary: the result of one kernel feeds the next.
            9 if depth > 0 && elem.flat() => {
                let t = self.name("t");
                let x = self.name("x");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: x.clone(),
                    ty: (*elem).clone(),
                });
                let rt = self.flat_type(env);
                let v = self.value(&rt, &inner, 2);
                let first = format!("(toGlobal (mapGlb (lambda ({x}) {v}) {a}))");
                let mut env2 = env.to_vec();
                env2.push(Var {
                    name: t.clone(),
                    ty: Ty::arr(rt, n.clone()),
                });
                let second = self.host(&env2, depth - 1);
                format!("(let {t} {first} {second})")
            }
            // Host control flow: a branch, a loop with a condition computed on the device as a
            // `[bool]1`, or a loop of a fixed or run-time number of steps, over kernels that
            // keep the state's type; their bodies may hold further sections.
            10 | 11 | 14
                if matches!(*elem, Ty::Float | Ty::Int) && n.text.chars().all(|c| c.is_ascii_alphanumeric()) =>
            {
                self.host_flow(env, &a, &elem, &n, depth)
            }
            10 if elem.flat() => {
                let k = self.pick(&[1, 2, 3]);
                let x = self.name("x");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: x.clone(),
                    ty: (*elem).clone(),
                });
                let body = self.value(&elem, &inner, 2);
                let s = self.name("s");
                format!("(iterate #{k} (lambda ({s}) (toGlobal (mapGlb (lambda ({x}) {body}) {s}))) {a})")
            }
            // The single-pass scan (`scans.rs`).
            13 if self.scannable(&elem) && !matches!(*elem, Ty::Array(..)) => self.host_scan(&a, &elem),
            // An existential array made explicitly (`pack`), then taken apart again.
            12 if elem.flat() => {
                let ys = self.name("ys");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: ys.clone(),
                    ty: Ty::Exists(elem.clone(), n.clone()),
                });
                let (f, _) = self.seq_fn(&elem, &inner, 1);
                format!("(unpack {ys} (pack {a}) (toGlobal (mapGlb {f} {ys})))")
            }
            _ => {
                let (f, _) = self.seq_fn(&elem, env, 2);
                let g = self.wrap_fn_body(&f, "toGlobal");
                format!("(mapGlb {g} {a})")
            }
        }
    }

    /// A host section over `a : [elem]n` (`elem` a float or an int): `if`, `iterate` (a literal
    /// or run-time count, up to 60 steps) or `iterate-until`, whose parts are kernels that map
    /// the state to the same type, and at `depth > 0` may hold sections of their own.
    pub(super) fn host_flow(&mut self, env: &[Var], a: &str, elem: &Ty, n: &Len, depth: usize) -> String {
        match self.rng.below(3) {
            0 => {
                let c = self.any_test(env, a, elem, n);
                let yes = self.state_step(env, a, elem, n, depth);
                let no = if self.chance(25) {
                    a.to_string()
                } else {
                    self.state_step(env, a, elem, n, depth)
                };
                format!("(if {c} {yes} {no})")
            }
            1 => {
                let count = if self.chance(40) {
                    if self.run_time_steps.is_none() {
                        self.run_time_steps = Some(self.pick(&[4, 17, 40]));
                    }
                    "K".to_string()
                } else {
                    format!("#{}", self.pick(&[1, 2, 3, 8, 25, 60]))
                };
                let s = self.name("s");
                let body = self.state_step(env, &s, elem, n, depth);
                format!("(iterate {count} (lambda ({s}) {body}) {a})")
            }
            _ => {
                let (prev, next) = (self.name("prev"), self.name("next"));
                let cond = if self.chance(50) {
                    self.any_test(env, &next, elem, n)
                } else {
                    // converged: every element changed by less than some amount
                    let (acc, pq) = (self.name("acc"), self.name("pq"));
                    let eps = if *elem == Ty::Float { "0.5f" } else { "1" };
                    let diff = format!("(abs (- (get #0 {pq}) (get #1 {pq})))");
                    format!(
                        "(join (mapGlb (lambda (all) (toGlobal (reduceSeq (lambda ({acc} {pq}) (and {acc} (< {diff} {eps}))) true all))) (split {} (zip {prev} {next}))))",
                        n.size_arg()
                    )
                };
                let s = self.name("s");
                let body = self.state_step(env, &s, elem, n, depth);
                let max = self.pick(&[2, 3, 5, 20, 60]);
                format!("(iterate-until #{max} (lambda ({prev} {next}) {cond}) (lambda ({s}) {body}) {a})")
            }
        }
    }

    /// `[bool]1`: whether some element of `arr` passes a random test (a fold by one work-item).
    pub(super) fn any_test(&mut self, env: &[Var], arr: &str, elem: &Ty, n: &Len) -> String {
        let (acc, x) = (self.name("acc"), self.name("x"));
        let mut inner = env.to_vec();
        inner.push(Var {
            name: x.clone(),
            ty: elem.clone(),
        });
        let test = self.scalar(&Ty::Bool, &inner, 1);
        let op = self.pick(&["or", "and"]);
        let z = if op == "or" { "false" } else { "true" };
        format!(
            "(join (mapGlb (lambda (c) (toGlobal (reduceSeq (lambda ({acc} {x}) ({op} {acc} {test})) {z} c))) (split {} {arr})))",
            n.size_arg()
        )
    }

    /// One step of a host loop or a branch: `[elem]n` to `[elem]n` in one kernel, two kernels
    /// (a `let` between them), or (at `depth > 0`) a nested section. Elements are clamped to
    /// [-64, 64], so that many steps neither overflow nor lose all precision.
    pub(super) fn state_step(&mut self, env: &[Var], s: &str, elem: &Ty, n: &Len, depth: usize) -> String {
        let kernel = |g: &mut Gen, arr: &str, env: &[Var]| {
            let x = g.name("x");
            let mut inner = env.to_vec();
            inner.push(Var {
                name: x.clone(),
                ty: elem.clone(),
            });
            let v = g.value(elem, &inner, 2);
            let clamped = if *elem == Ty::Float {
                format!("(min 64.0f (max -64.0f {v}))")
            } else {
                format!("(min 64 (max -64 {v}))")
            };
            format!("(toGlobal (mapGlb (lambda ({x}) {clamped}) {arr}))")
        };
        match self.rng.below(4) {
            0 if depth > 0 => self.host_flow(env, s, elem, n, depth - 1),
            1 => {
                let t = self.name("t");
                let first = kernel(self, s, env);
                let mut env2 = env.to_vec();
                env2.push(Var {
                    name: t.clone(),
                    ty: Ty::arr(elem.clone(), n.clone()),
                });
                let second = kernel(self, &t, &env2);
                format!("(let {t} {first} {second})")
            }
            _ => kernel(self, s, env),
        }
    }

    /// `(lambda (x) body)` to `(lambda (x) (wrap body))`.
    pub(super) fn wrap_fn_body(&self, f: &str, wrap: &str) -> String {
        let close = f.find(')').expect("a lambda has a parameter list") + 1;
        format!("{} ({wrap} {}))", &f[..close], &f[close + 1..f.len() - 1])
    }

    /// `mapWrg` over chunks (or rows), `mapLcl` inside, maybe staged in local memory.
    pub(super) fn work_groups(&mut self, env: &[Var], a: String, at: &Ty) -> String {
        let Ty::Array(elem, n) = at else {
            unreachable!("an array")
        };
        if let Ty::Array(inner, m) = &**elem {
            if inner.flat() && n.val % 2 == 0 && m.val % 2 == 0 && self.chance(45) {
                // 2-D work-groups of 2x2 tiles (as examples/tile_2d.lisp), in dimensions 0 and 1
                // or 0 and 2.
                let (rows, tile, col) = (self.name("rows"), self.name("tile"), self.name("col"));
                let (f, rt) = self.seq_fn(inner, env, 1);
                let f = if rt.flat() {
                    f
                } else {
                    self.wrap_fn_body(&f, "toGlobal")
                };
                let d = if self.chance(30) { 2 } else { 1 };
                return format!(
                    "(mapWrg{d} (lambda ({rows}) (mapWrg (lambda ({tile}) (toGlobal (mapLcl{d} (lambda ({col}) (mapLcl {f} {col})) {tile}))) (split #2 (transpose {rows})))) (split #2 {a}))"
                );
            }
        }
        let (chunks, row_ty, joined) = match &**elem {
            Ty::Array(inner, m) if self.chance(50) => (a.clone(), Ty::arr((**inner).clone(), m.clone()), false),
            _ => {
                let k = self.pick(&[2, 4, 8, 16]);
                if n.val % k != 0 && !self.unruly {
                    return self.host(env, 0);
                }
                (
                    format!("(split #{k} {a})"),
                    Ty::arr((**elem).clone(), Len::lit(k)),
                    true,
                )
            }
        };
        let Ty::Array(e, rl) = row_ty.clone() else {
            unreachable!("rows are arrays")
        };
        let c = self.name("chunk");
        let mut staged = c.clone();
        if self.chance(50) {
            let space = if self.chance(80) { "toLocal" } else { "toPrivate" };
            staged = format!("({space} (mapLcl (lambda (x) x) {c}))");
            if self.chance(40) {
                staged = format!("(reverse {staged})");
            }
        }
        if matches!(*e, Ty::Float | Ty::Int) && self.chance(30) && rl.val.is_power_of_two() && rl.val >= 2 {
            // The classic tree reduction in local memory.
            let steps = rl.val.trailing_zeros();
            let acc_z = if *e == Ty::Float { "0.0f" } else { "0" };
            let fold = self.fold_fn(&e, &e, env);
            let body = format!(
                "(toGlobal (mapLcl (lambda (x) x) (iterate #{steps} (lambda (a) (join (mapLcl (lambda (pair) (toLocal (reduceSeq {fold} {acc_z} pair))) (split #2 a)))) (toLocal (mapLcl (lambda (x) x) {c})))))"
            );
            let out = format!("(mapWrg (lambda ({c}) {body}) {chunks})");
            return if joined { format!("(join {out})") } else { out };
        }
        let mut inner = env.to_vec();
        inner.push(Var {
            name: c.clone(),
            ty: row_ty.clone(),
        });
        let (f, rt) = self.seq_fn(&e, &inner, 2);
        let f = if rt.flat() {
            f
        } else {
            self.wrap_fn_body(&f, "toGlobal")
        };
        let lcl = if self.unruly && self.chance(30) {
            "mapGlb"
        } else {
            "mapLcl"
        };
        let body = format!("(toGlobal ({lcl} {f} {staged}))");
        let wrg = if self.unruly && self.chance(30) {
            "mapLcl"
        } else {
            "mapWrg"
        };
        let out = format!("({wrg} (lambda ({c}) {body}) {chunks})");
        if joined && rt.flat() {
            format!("(join {out})")
        } else {
            out
        }
    }

    // ---- inside one work-item ------------------------------------------------------------------
}
