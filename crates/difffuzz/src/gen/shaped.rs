//! Programs of the shapes the rewrite rules fire on (gemv, matrix products, transposes, slides,
//! sums, dot products, filters followed by maps), with sizes the tiles divide or do not.

use super::*;

impl Gen {
    /// A high-level program for the variants mode (`crate::variants`): mostly a shape the
    /// rewrite rules fire on — maps of reductions (gemv), matrix products as map/map/reduce over
    /// the zip of a row and a column (plain, transposed operands, over a batch), transposes,
    /// slides and 2-D slides in maps, sums and dot products, filters followed by maps, sums over
    /// zips of three — with random element functions, and sizes that the tiles divide (mostly)
    /// or do not; else a random high-level program of [`Gen::case`]'s generator.
    pub fn variants_case(seed: u64, index: u64) -> Case {
        let mut g = Gen {
            rng: XorShift::new(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ index ^ 0x5641_5249),
            fresh: 0,
            defs: vec![],
            unruly: false,
            run_time_steps: None,
            high_level_only: true,
        };
        let (id, data_seed) = (format!("{seed}:{index}"), seed ^ index.rotate_left(17));
        if g.chance(12) {
            return g.program(id, data_seed);
        }
        g.shaped(id, data_seed)
    }

    /// A size variable `name`: a value from `divisible` (three times in four), else from `other`.
    pub(super) fn dim(&mut self, name: &str, divisible: &[usize], other: &[usize]) -> Len {
        let val = if self.chance(25) {
            self.pick(other)
        } else {
            self.pick(divisible)
        };
        Len { text: name.into(), val }
    }

    /// The body of a function of a pair of floats `p` (the elements of a zip): mostly their
    /// product, the dot product's.
    pub(super) fn pair_fn(&mut self, p: &str) -> String {
        if self.chance(70) {
            return format!("(* (get #0 {p}) (get #1 {p}))");
        }
        let env = [Var {
            name: p.into(),
            ty: Ty::Tuple(vec![Ty::Float, Ty::Float]),
        }];
        self.value(&Ty::Float, &env, 2)
    }

    /// The body of a function of a float `x`.
    pub(super) fn float_fn(&mut self, x: &str, identity: usize) -> String {
        if self.chance(identity) {
            return x.to_string();
        }
        let env = [Var {
            name: x.into(),
            ty: Ty::Float,
        }];
        self.value(&Ty::Float, &env, 2)
    }

    /// A reduction's operator and its neutral element: mostly `+` (the rules recognise `+`,
    /// `max`, `min` as associative), sometimes a lambda they see as opaque.
    pub(super) fn reduce_op(&mut self) -> (String, &'static str) {
        let (a, b) = (self.name("acc"), self.name("y"));
        // sometimes a start that is not the operator's neutral element: a rule that splits the
        // reduction must then not fire (its side condition), or the start counts many times
        let odd = self.chance(15);
        match self.rng.below(10) {
            0..=5 if odd => ("+".into(), "1.5f"),
            0..=5 => ("+".into(), "0.0f"),
            6 if odd => ("max".into(), "0.5f"),
            6 => ("max".into(), "-1.0e30f"),
            7 if odd => ("min".into(), "-0.5f"),
            7 => ("min".into(), "1.0e30f"),
            8 => (
                format!("(lambda ({a} {b}) (+ {a} {b}))"),
                if odd { "-2.0f" } else { "0.0f" },
            ),
            _ => (format!("(lambda ({a} {b}) (max {a} {b}))"), "-1.0e30f"),
        }
    }

    /// `(reduce op z (map (λp. f p) (zip xs ys)))`: a dot product, or like one.
    pub(super) fn dot(&mut self, xs: &str, ys: &str) -> String {
        let (op, z) = self.reduce_op();
        let p = self.name("p");
        let f = self.pair_fn(&p);
        format!("(reduce {op} {z} (map (lambda ({p}) {f}) (zip {xs} {ys})))")
    }

    pub(super) fn shaped(&mut self, id: String, data_seed: u64) -> Case {
        let mut params: Vec<(String, Ty)> = vec![];
        let mut sizes: Vec<Len> = vec![];
        let f = Ty::Float;
        let body = match self.rng.below(20) {
            // gemv: rows of a matrix against a vector, with a bias, or the columns (gemv T)
            0..=2 => {
                let m = self.dim("M", &[16, 32, 64, 128, 256], &[20, 36, 48, 100]);
                let n = self.dim("N", &[16, 32, 64, 128, 256], &[12, 24, 40, 100]);
                let row = self.name("row");
                sizes.extend([m.clone(), n.clone()]);
                match self.rng.below(3) {
                    0 => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), m.clone())));
                        params.push(("x".into(), Ty::arr(f.clone(), n.clone())));
                        let d = self.dot(&row, "x");
                        format!("(map (lambda ({row}) {d}) a)")
                    }
                    1 => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), m.clone())));
                        params.push(("x".into(), Ty::arr(f.clone(), n.clone())));
                        params.push(("b".into(), Ty::arr(f.clone(), m.clone())));
                        let (rb, s) = (self.name("rb"), self.name("s"));
                        let d = self.dot(&format!("(get #0 {rb})"), "x");
                        let post = if self.chance(60) {
                            format!("(+ {s} (get #1 {rb}))")
                        } else {
                            format!("(+ (* 2.0f {s}) (* 0.5f (get #1 {rb})))")
                        };
                        format!("(join (map (lambda ({rb}) (map (lambda ({s}) {post}) {d})) (zip a b)))")
                    }
                    _ => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), m.clone())));
                        params.push(("x".into(), Ty::arr(f.clone(), m.clone())));
                        let d = self.dot(&row, "x");
                        format!("(map (lambda ({row}) {d}) (transpose a))")
                    }
                }
            }
            // matrix products: a row against a column of b (transposed, or given as rows)
            3..=6 => {
                // big enough for the register-blocked tiles (64 and 128 rows and columns) with
                // known sizes, a short K keeping the interpreter's work near 2^20
                let big = self.chance(25);
                let m = if big {
                    Len::var("M", self.pick(&[128, 128, 256]))
                } else {
                    self.dim("M", &[16, 32, 64], &[12, 20, 24, 48])
                };
                let n = if big {
                    Len::var("N", self.pick(&[64, 128, 128]))
                } else {
                    self.dim("N", &[16, 32, 64], &[12, 20, 40, 48])
                };
                let k = if big {
                    self.dim("K", &[8, 16, 32], &[12])
                } else {
                    self.dim("K", &[4, 8, 16, 32, 64], &[12, 20, 24])
                };
                let (row, col) = (self.name("row"), self.name("col"));
                let (rows, cols) = match self.rng.below(4) {
                    0 | 1 => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), k.clone()), m.clone())));
                        params.push(("b".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), k.clone())));
                        ("a", "(transpose b)")
                    }
                    2 => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), k.clone()), m.clone())));
                        params.push(("b".into(), Ty::arr(Ty::arr(f.clone(), k.clone()), n.clone())));
                        ("a", "b")
                    }
                    _ => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), m.clone()), k.clone())));
                        params.push(("b".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), k.clone())));
                        ("(transpose a)", "(transpose b)")
                    }
                };
                sizes.extend([m, k, n]);
                let d = self.dot(&row, &col);
                if self.chance(50) {
                    format!("(map (lambda ({row}) (join (map (lambda ({col}) {d}) {cols}))) {rows})")
                } else {
                    format!("(map (lambda ({row}) (map (lambda ({col}) {d}) {cols})) {rows})")
                }
            }
            // a batch of small products
            7 => {
                let b = self.dim("B", &[1, 2, 3, 4], &[2]);
                let m = self.dim("M", &[16, 32], &[12, 20]);
                let n = self.dim("N", &[16, 32], &[24]);
                let k = self.dim("K", &[8, 16, 32], &[12]);
                let [m, n, k] = if self.chance(20) {
                    [Len::var("M", 64), Len::var("N", 64), Len::var("K", 16)]
                } else {
                    [m, n, k]
                };
                params.push((
                    "as".into(),
                    Ty::arr(Ty::arr(Ty::arr(f.clone(), k.clone()), m.clone()), b.clone()),
                ));
                params.push((
                    "bs".into(),
                    Ty::arr(Ty::arr(Ty::arr(f.clone(), n.clone()), k.clone()), b.clone()),
                ));
                sizes.extend([b, m, k, n]);
                let (ab, row, col) = (self.name("ab"), self.name("row"), self.name("col"));
                let d = self.dot(&row, &col);
                format!(
                    "(map (lambda ({ab}) (map (lambda ({row}) (map (lambda ({col}) {d}) (transpose (get #1 {ab})))) (get #0 {ab}))) (zip as bs))"
                )
            }
            // a transpose, with a function of the elements
            8 => {
                let m = self.dim("M", &[16, 32, 64, 128], &[12, 20, 36]);
                let n = self.dim("N", &[16, 32, 64, 128], &[24, 40]);
                params.push(("m".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), m.clone())));
                sizes.extend([m, n]);
                let (row, x) = (self.name("row"), self.name("x"));
                let g = self.float_fn(&x, 50);
                format!("(map (lambda ({row}) (map (lambda ({x}) {g}) {row})) (transpose m))")
            }
            // slides: a 1-D stencil, alone or in the rows of a matrix
            9 | 10 => {
                let s = self.pick(&[3, 3, 5, 17]);
                let step = if self.chance(20) { 2 } else { 1 };
                let pad = self.rng.below(3);
                let win = |xs: &str| {
                    let slid = match pad {
                        0 => xs.to_string(),
                        1 => format!("(pad-clamp #{} #{} {xs})", s / 2, s / 2),
                        _ => format!("(pad #{} #{} 0.0f {xs})", s / 2, s / 2),
                    };
                    format!("(slide #{s} #{step} {slid})")
                };
                let nbh = self.name("nbh");
                let weighted = self.chance(50);
                let stencil = if weighted {
                    params.push(("w".into(), Ty::arr(f.clone(), Len::lit(s))));
                    self.dot(&nbh, "w")
                } else {
                    let (op, z) = self.reduce_op();
                    let x = self.name("x");
                    let g = self.float_fn(&x, 60);
                    format!("(reduce {op} {z} (map (lambda ({x}) {g}) {nbh}))")
                };
                // lengths that the windows' step divides after the padding
                let fits = |n: usize| {
                    let padded = if pad == 0 { n } else { n + 2 * (s / 2) };
                    padded >= s && (padded - s).is_multiple_of(step)
                };
                if self.chance(50) {
                    let choices: Vec<usize> = [17, 32, 33, 64, 65, 100, 128, 129, 1024, 1025]
                        .into_iter()
                        .filter(|n| fits(*n))
                        .collect();
                    let n = Len {
                        text: "N".into(),
                        val: self.pick(&choices),
                    };
                    params.insert(0, ("xs".into(), Ty::arr(f.clone(), n.clone())));
                    sizes.push(n);
                    format!("(map (lambda ({nbh}) {stencil}) {})", win("xs"))
                } else {
                    let choices: Vec<usize> = [17, 19, 32, 33, 64, 65].into_iter().filter(|n| fits(*n)).collect();
                    let h = self.dim("H", &[4, 16, 32], &[5, 7]);
                    let w = Len {
                        text: "W".into(),
                        val: self.pick(&choices),
                    };
                    params.insert(0, ("img".into(), Ty::arr(Ty::arr(f.clone(), w.clone()), h.clone())));
                    sizes.extend([h, w]);
                    let row = self.name("row");
                    let inner = format!("(map (lambda ({nbh}) {stencil}) {})", win(&row));
                    if self.chance(50) {
                        format!("(map (lambda ({row}) {inner}) img)")
                    } else {
                        format!("(join (map (lambda ({row}) {inner}) img))")
                    }
                }
            }
            // a 2-D stencil over 2-D windows (jacobi2d)
            11 | 12 => {
                let h = self.dim("H", &[8, 16, 32, 64], &[5, 10, 30]);
                let w = self.dim("W", &[8, 16, 32, 64], &[6, 20, 33]);
                let s = self.pick(&[3, 3, 5]);
                let (hp, wp) = (
                    Len {
                        text: format!("(+ H {})", s - 1),
                        val: h.val + s - 1,
                    },
                    Len {
                        text: format!("(+ W {})", s - 1),
                        val: w.val + s - 1,
                    },
                );
                params.push(("g".into(), Ty::arr(Ty::arr(f.clone(), wp), hp)));
                sizes.extend([h, w]);
                let sl = self.name("slide2d");
                self.defs.push(format!(
                    "(define ({sl} s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))"
                ));
                let (nbhs, nbh) = (self.name("nbhs"), self.name("nbh"));
                let stencil = if self.chance(30) {
                    let (op, z) = self.reduce_op();
                    format!("(reduce {op} {z} (join {nbh}))")
                } else {
                    let cells: Vec<String> = (0..self.rng.below(4) + 2)
                        .map(|_| {
                            let (r, c) = (self.rng.below(s), self.rng.below(s));
                            format!("(at {c} (at {r} {nbh}))")
                        })
                        .collect();
                    let sum = cells
                        .iter()
                        .skip(1)
                        .fold(cells[0].clone(), |acc, c| format!("(+ {acc} {c})"));
                    format!("(* 0.25f {sum})")
                };
                format!("(map (lambda ({nbhs}) (map (lambda ({nbh}) {stencil}) {nbhs})) ({sl} #{s} #1 g))")
            }
            // sums, of a function of the elements, dot products
            13..=15 => {
                let n = self.dim("N", &[1024, 4096, 16384, 65536, 256], &[1000, 5000, 70000, 33, 300]);
                params.push(("xs".into(), Ty::arr(f.clone(), n.clone())));
                sizes.push(n.clone());
                match self.rng.below(3) {
                    0 => {
                        let (op, z) = self.reduce_op();
                        format!("(reduce {op} {z} xs)")
                    }
                    1 => {
                        let (op, z) = self.reduce_op();
                        let x = self.name("x");
                        let g = self.float_fn(&x, 0);
                        format!("(reduce {op} {z} (map (lambda ({x}) {g}) xs))")
                    }
                    _ => {
                        params.push(("ys".into(), Ty::arr(f.clone(), n)));
                        self.dot("xs", "ys")
                    }
                }
            }
            // filters followed by maps
            16 => {
                let n = self.dim("N", &[64, 256, 1024, 4096], &[33, 100, 1000]);
                params.push(("xs".into(), Ty::arr(f.clone(), n.clone())));
                sizes.push(n);
                let p = self.pred_fn(&f, &[]);
                let x = self.name("x");
                let g = self.float_fn(&x, 10);
                format!("(map (lambda ({x}) {g}) (filter {p} xs))")
            }
            // sums over zips of three
            17 => {
                let n = self.dim("N", &[256, 1024, 4096, 65536], &[100, 1000, 5000]);
                for v in ["a", "b", "c"] {
                    params.push((v.into(), Ty::arr(f.clone(), n.clone())));
                }
                sizes.push(n);
                let t = self.name("t");
                let env = [Var {
                    name: t.clone(),
                    ty: Ty::Tuple(vec![f.clone(), f.clone(), f.clone()]),
                }];
                let g = if self.chance(60) {
                    format!("(+ (* (get #0 {t}) (get #1 {t})) (get #2 {t}))")
                } else {
                    self.value(&f, &env, 2)
                };
                let (op, z) = self.reduce_op();
                format!("(reduce {op} {z} (map (lambda ({t}) {g}) (zip a b c)))")
            }
            // rows or columns of a matrix reduced
            _ => {
                let r = self.dim("R", &[16, 64, 256, 1024], &[20, 100]);
                let c = self.dim("C", &[16, 64, 256, 1024], &[24, 100]);
                let [r, c] = if r.val * c.val > 65536 {
                    [Len::var("R", 64), c]
                } else {
                    [r, c]
                };
                params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), c.clone()), r.clone())));
                sizes.extend([r, c]);
                let (op, z) = self.reduce_op();
                let (row, x) = (self.name("row"), self.name("x"));
                let g = self.float_fn(&x, 50);
                let rows = if self.chance(40) { "(transpose a)" } else { "a" };
                format!("(map (lambda ({row}) (reduce {op} {z} (map (lambda ({x}) {g}) {row}))) {rows})")
            }
        };
        let mut src = String::new();
        for d in &self.defs {
            src.push_str(d);
            src.push('\n');
        }
        let _ = write!(
            src,
            "(lift\n  ({})\n  ({})\n  (lambda ({})\n    {body}))\n",
            sizes.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" "),
            params.iter().map(|(_, t)| t.lift()).collect::<Vec<_>>().join(" "),
            params.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(" "),
        );
        Case {
            id,
            src,
            params,
            sizes: sizes.into_iter().map(|l| (l.text, l.val)).collect(),
            data_seed,
            plain_data: false,
        }
    }

    // ---- values, backwards ---------------------------------------------------------------------
}
