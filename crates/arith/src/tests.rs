use super::*;

fn c(v: i64) -> ArithExpr {
    ArithExpr::cst(v)
}
fn n() -> ArithExpr {
    ArithExpr::size_var("N")
}
fn m() -> ArithExpr {
    ArithExpr::size_var("M")
}
fn k() -> ArithExpr {
    ArithExpr::size_var("K")
}
/// Loop index in `[0, hi)`.
fn idx(name: &str, hi: &ArithExpr) -> ArithExpr {
    ArithExpr::var(name, Range::upto(hi.clone()))
}
fn env<'a>(bind: &'a [(&'a str, i64)]) -> impl Fn(&str) -> Option<i64> + 'a {
    move |name| bind.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

// ---------------------------------------------------------------- sums, products

#[test]
fn constant_folding() {
    assert_eq!(c(2) + c(3), c(5));
    assert_eq!(c(2) * c(3) - c(1), c(5));
    assert_eq!((c(2) + c(3)).as_cst(), Some(5));
    assert_eq!(n().as_cst(), None);
}

#[test]
fn identities_of_add_and_mul() {
    assert_eq!(&n() * 1, n());
    assert_eq!(&n() + 0, n());
    assert_eq!(n().mul(&c(0)), c(0));
    assert_eq!(&n() - &n(), c(0));
    assert_eq!(-(-n()), n());
}

#[test]
fn like_terms_are_collected() {
    assert_eq!(&n() + &n(), &n() * 2);
    assert_eq!(&n() * 3 - &n(), c(2) * n());
    assert_eq!((&n() + &m()) + (&m() + &n()), (&n() + &m()) * 2);
}

#[test]
fn commutativity_is_structural() {
    assert_eq!(&n() * &m(), &m() * &n());
    assert_eq!(&n() + &m(), &m() + &n());
    assert_eq!((&n() * &m()) * &k(), &n() * (&k() * &m()));
    assert_eq!((&n() + 1) + &m(), (&m() + 1) + &n());
}

#[test]
fn distribution_normalises() {
    assert_eq!((&n() + 1) * 2 - 2, &n() * 2);
    assert_eq!((&n() + &m()) * &k(), &n() * &k() + &m() * &k());
    assert_eq!((&n() + 1) * (&n() - 1), &n() * &n() - 1);
}

#[test]
fn multiply_then_divide() {
    assert_eq!((&n() * 2) / 2, n());
    assert_eq!((&n() * 2).div(&c(2)), n());
    assert_eq!((&n() * &m()) / &m(), n());
    assert_eq!((&n() * 4) / 2, &n() * 2);
    assert_eq!((&n() * 4 + 2) / 2, &n() * 2 + 1);
    // Not exact: floor with a non-negative remainder.
    assert_eq!((&n() * 4 + 3) / 2, &n() * 2 + 1);
    assert_eq!((&n() * &m() * 6 + &m() * 3) / (&m() * 3), &n() * 2 + 1);
}

#[test]
fn exact_division() {
    assert_eq!((&n() * 4).exact_div(&c(2)), Some(&n() * 2));
    assert_eq!((&n() * 2).exact_div(&n()), Some(c(2)));
    assert_eq!(n().exact_div(&c(2)), None);
    assert_eq!(n().exact_div(&c(0)), None);
    assert_eq!(c(0).exact_div(&n()), Some(c(0)));
    assert_eq!((&n() * 4 + 2).exact_div(&c(2)), Some(&n() * 2 + 1));
    // Polynomial divisor: (N+1)*(M+2) / (N+1).
    let p = (&n() + 1) * (&m() + 2);
    assert_eq!(p.exact_div(&(&n() + 1)), Some(&m() + 2));
    assert_eq!((&n() * &m() + 1).exact_div(&(&n() + 1)), None);
    assert!((&n() * 6).is_multiple_of(&c(3)));
    assert!(!(&n() * 6 + 1).is_multiple_of(&c(3)));
    assert!((&n() * &m()).is_multiple_of(&m()));
}

// ---------------------------------------------------------------- C semantics

#[test]
fn c_division_on_constants() {
    assert_eq!(c(-7) / 2, c(-3));
    assert_eq!(c(-7) % 2, c(-1));
    assert_eq!(c(7) / -2, c(-3));
    assert_eq!(c(7) % -2, c(1));
    assert_eq!(c(-7) % -2, c(-1));
    assert_eq!(c(i64::MIN) / -1, ArithExpr::mk(ExprKind::Div(c(i64::MIN), c(-1))));
}

#[test]
fn eval_uses_c_semantics() {
    let x = ArithExpr::var("x", Range::at_least(c(-100)));
    let e = env(&[("x", -7)]);
    assert_eq!((&x / 2).eval(&e), Ok(-3));
    assert_eq!((&x % 2).eval(&e), Ok(-1));
    assert_eq!((&x * 3 + 1).eval(&e), Ok(-20));
    assert_eq!(n().eval(&env(&[])), Err(EvalError::Unbound("N".into())));
    let y = ArithExpr::pos_var("y");
    assert_eq!((&n() / &y).eval(&env(&[("N", 3), ("y", 0)])), Err(EvalError::DivByZero));
    assert_eq!((&n() % &y).eval(&env(&[("N", 3), ("y", 0)])), Err(EvalError::DivByZero));
    assert_eq!((&n() * &n()).eval(&env(&[("N", i64::MAX)])), Err(EvalError::Overflow));
    let p = c(2).pow(&y);
    assert_eq!(p.eval(&env(&[("y", 10)])), Ok(1024));
    let z = ArithExpr::var("z", Range::at_least(c(-5)));
    assert_eq!(c(2).pow(&z).eval(&env(&[("z", -1)])), Err(EvalError::NegativeExponent));
    assert_eq!(EvalError::DivByZero.to_string(), "division or modulo by zero");
}

#[test]
fn symbolic_zero_divisor_is_kept() {
    let y = ArithExpr::pos_var("y");
    let d = &n() / &y;
    assert!(matches!(d.kind(), ExprKind::Div(..)));
    assert!(matches!((&y / &y).kind(), ExprKind::Div(..)));
    assert!(matches!((&y % &y).kind(), ExprKind::Mod(..)));
    assert!(matches!((c(0) / &y).kind(), ExprKind::Div(..)));
    assert!(matches!((&n() / 0).kind(), ExprKind::Div(..)));
    assert!(matches!((&n() % 0).kind(), ExprKind::Mod(..)));
    assert_eq!((&n() / 0).eval(&env(&[("N", 1)])), Err(EvalError::DivByZero));
}

#[test]
fn overflow_does_not_panic() {
    let big = c(i64::MAX);
    let s = &big + 1;
    assert!(matches!(s.kind(), ExprKind::RawAdd(..)));
    assert_eq!(s.eval(&env(&[])), Err(EvalError::Overflow));
    let p = &big * 2;
    assert_eq!(p.eval(&env(&[])), Err(EvalError::Overflow));
    let q = c(i64::MIN) - 1;
    assert_eq!(q.eval(&env(&[])), Err(EvalError::Overflow));
    let r = &n() * i64::MAX + &n() * i64::MAX;
    assert_eq!(r.eval(&env(&[("N", 1)])), Err(EvalError::Overflow));
    assert_eq!(c(3).pow(&c(100)).eval(&env(&[])), Err(EvalError::Overflow));
    assert_eq!((-c(i64::MIN)).eval(&env(&[])), Err(EvalError::Overflow));
    let _ = (&big * &n()).lower_bound();
    let _ = (&big * &n() * &n()).prove_nonneg();
    let _ = format!("{}", c(i64::MIN) * &n());
}

// ---------------------------------------------------------------- range-based

#[test]
fn range_based_div_mod() {
    let i = idx("i", &c(4));
    assert_eq!(&i / 4, c(0));
    assert_eq!(&i % 4, i);
    assert_eq!(&i % 5, i);
    assert!(matches!((&i % 3).kind(), ExprKind::Mod(..)));
    let j = idx("j", &n());
    assert_eq!(&j % &n(), j);
    assert_eq!(&j / &n(), c(0));
    assert_eq!((&j + 1) / (&n() + 1), c(0));
    // Not provable: j+1 can equal N.
    assert!(matches!(((&j + 1) % &n()).kind(), ExprKind::Mod(..)));
}

#[test]
fn join_split_index_is_identity() {
    let i = idx("i", &(&n() * 4));
    assert_eq!((&i / 4) * 4 + &i % 4, i);
    assert_eq!(&i % 4 + (&i / 4) * 4, i);
    let i = idx("i", &(&n() * &k()));
    assert_eq!((&i / &k()) * &k() + &i % &k(), i);
    // Scaled by a stride and with extra terms around it.
    let s = ((&i / &k()) * &k() + &i % &k()) * &m() + 3;
    assert_eq!(s, &i * &m() + 3);
    let t = (&i / 4) * 8 + (&i % 4) * 2 + &n();
    assert_eq!(t, &i * 2 + &n());
    // Nested split/split/join/join.
    let x = (&i / 4) * 4 + &i % 4;
    let y = (&x / 2) * 2 + &x % 2;
    assert_eq!(y, i);
}

#[test]
fn split_view_index() {
    let kk = k();
    let cc = idx("c", &n());
    let e = idx("e", &kk);
    let flat = &cc * &kk + &e;
    assert_eq!(&flat / &kk, cc);
    assert_eq!(&flat % &kk, e);
    let e4 = idx("e", &c(4));
    let flat4 = &cc * 4 + &e4;
    assert_eq!(&flat4 / 4, cc);
    assert_eq!(&flat4 % 4, e4);
    // (a*k + b)/k == a + b/k when the terms are non-negative.
    let b = ArithExpr::pos_var("b");
    assert_eq!((&n() * 4 + &b) / 4, &n() + &b / 4);
    assert_eq!((&n() * 4 + &b) % 4, &b % 4);
    assert_eq!((&b + 5) / 4, (&b + 1) / 4 + 1);
}

#[test]
fn division_rules() {
    let x = ArithExpr::pos_var("x");
    let d = n();
    assert_eq!(x.rem(&c(1)), c(0));
    assert_eq!(&x / 1, x);
    assert_eq!(&n() % &n(), c(0));
    assert_eq!(&n() / &n(), c(1));
    assert_eq!((&x % &d) % &d, &x % &d);
    assert_eq!((&x % &d) / &d, c(0));
    assert_eq!((&x % 8) % 4, &x % 4);
    assert_eq!((&x / &n()) / &m(), &x / (&n() * &m()));
    assert_eq!((&x / 2) / 3, &x / 6);
    assert_eq!((&n() * 4) % 2, c(0));
    assert_eq!((&n() * 2) % &n(), c(0));
    assert_eq!((&n() * 4 + 2) % 2, c(0));
    assert_eq!((&n() * 4 + 3) % 2, c(1));
    assert_eq!(c(0) / &n(), c(0));
    // Divisor normalisation: C truncation is odd.
    assert_eq!(&x / -2, -(&x / 2));
    assert_eq!(&x % -2, &x % 2);
}

#[test]
fn gcd_cancellation() {
    let x = ArithExpr::pos_var("x");
    assert_eq!((&x * 4) / (&n() * 2), (&x * 2) / &n());
    assert_eq!((&x * &n()) / (&n() * &m()), &x / &m());
    // Factoring out a gcd in `%` happens when the remainder then folds, or when the dividend
    // is a non-negative multiple (`(a·l + q) % (a·c) == a·(l % c) + q`, q = 0 here); for a
    // dividend of either sign it does not.
    assert_eq!((&x * 6) % 4, ((&x * 3) % 2) * 2);
    let y = ArithExpr::var("y", Range::between(c(-5), c(5)));
    assert!(matches!(((&y * 6) % 4).kind(), ExprKind::Mod(..)));
    let j = idx("j", &n());
    assert_eq!((&j * 2 + 1) % (&n() * 2), &j * 2 + 1);
}

#[test]
fn min_max() {
    assert_eq!(ArithExpr::min(&c(3), &c(5)), c(3));
    assert_eq!(ArithExpr::max(&c(3), &c(5)), c(5));
    assert_eq!(ArithExpr::min(&n(), &c(0)), c(0));
    assert_eq!(ArithExpr::max(&n(), &c(1)), n());
    let i = idx("i", &n());
    assert_eq!(ArithExpr::min(&i, &n()), i);
    assert_eq!(ArithExpr::max(&i, &n()), n());
    assert_eq!(ArithExpr::min(&n(), &m()), ArithExpr::min(&m(), &n()));
    assert!(matches!(ArithExpr::min(&n(), &m()).kind(), ExprKind::Min(..)));
    assert_eq!(ArithExpr::max(&n(), &n()), n());
}

#[test]
fn pow_expands() {
    assert_eq!(n().pow(&c(2)), &n() * &n());
    assert_eq!(n().pow(&c(0)), c(1));
    assert_eq!(c(2).pow(&c(10)), c(1024));
    assert_eq!((&n() + 1).pow(&c(2)), &n() * &n() + &n() * 2 + 1);
    assert!(matches!(c(2).pow(&n()).kind(), ExprKind::Pow(..)));
    assert!(matches!(n().pow(&c(-1)).kind(), ExprKind::Pow(..)));
    assert_eq!(c(2).pow(&n()).to_string(), "pow(2, N)");
    assert_eq!(c(1).pow(&n()), c(1));
}

#[test]
fn assumed_exact_division() {
    let half = n().div_assume_exact(&c(2));
    assert!(matches!(half.kind(), ExprKind::ExactDiv(..)));
    assert_eq!(half.to_string(), "(N/2)");
    assert_eq!(&half * 2, n());
    assert_eq!(&half * 4 + 1, &n() * 2 + 1);
    assert_eq!(&half + &half, n());
    assert_eq!(half.div_assume_exact(&c(3)) * 6, n());
    assert_eq!((&n() * &m()).div_assume_exact(&m()), n());
    assert_eq!((&n() * 4).div_assume_exact(&c(2)), &n() * 2);
    let byk = n().div_assume_exact(&k());
    assert_eq!(&byk * &k() * &m(), &n() * &m());
    assert_eq!(byk.eval(&env(&[("N", 12), ("K", 4)])), Ok(3));
    // Truncating division of an exact quotient composes.
    assert_eq!(&half / 3, &n() / 6);
    assert!(half.prove_nonneg());
    assert!(!(&half * 3).prove_lt(&n()));
    // Split then join of a symbolic length.
    let rows = n().div_assume_exact(&c(4));
    assert_eq!(&rows * 4, n());
    let y = ArithExpr::pos_var("y");
    assert!(matches!(n().div_assume_exact(&y).kind(), ExprKind::ExactDiv(..)));
    assert_eq!(
        (&n() * &y).div_assume_exact(&y).mul(&c(1)),
        (&n() * &y).div_assume_exact(&y)
    );
}

// ---------------------------------------------------------------- bounds, proofs

#[test]
fn bounds() {
    assert_eq!(n().lower_bound(), Some(1));
    assert_eq!(n().upper_bound(), None);
    let i = idx("i", &c(4));
    assert_eq!(i.lower_bound(), Some(0));
    assert_eq!(i.upper_bound(), Some(3));
    assert_eq!((&i * 2 + 1).upper_bound(), Some(7));
    assert_eq!((-&i).lower_bound(), Some(-3));
    assert_eq!((&n() % 4).upper_bound(), Some(3));
    assert_eq!((&i / 2).upper_bound(), Some(1));
    assert_eq!(c(-5).upper_bound(), Some(-5));
}

#[test]
fn proofs() {
    let i = idx("i", &n());
    assert!(i.prove_lt(&n()));
    assert!(!n().prove_lt(&i));
    assert!(i.prove_nonneg());
    assert!(!i.prove_positive());
    assert!(n().prove_positive());
    assert!((&i + 1).prove_le(&n()));
    assert!(!(&i + 2).prove_le(&n()));
    // 2-D index: j*N + i < M*N.
    let j = idx("j", &m());
    assert!((&j * &n() + &i).prove_lt(&(&m() * &n())));
    assert!(!(&j * &n() + &i + 1).prove_lt(&(&m() * &n())));
    // Index through a split: i/4 < N when i < 4*N.
    let t = idx("t", &(&n() * 4));
    assert!((&t / 4).prove_lt(&n()));
    assert!((&t % 4).prove_lt(&c(4)));
    let x = ArithExpr::var("x", Range::at_least(c(-3)));
    assert!(!x.prove_nonneg());
    assert!((&x + 3).prove_nonneg());
}

// ---------------------------------------------------------------- variables

#[test]
fn subst_and_free_vars() {
    let i = idx("i", &n());
    let e = &i % &n() + &m() * 2;
    assert_eq!(e, &i + &m() * 2);
    let fv: Vec<String> = e.free_vars().into_iter().collect();
    assert_eq!(fv, vec!["M".to_string(), "i".to_string()]);
    assert!(e.mentions("i"));
    assert!(!e.mentions("N"));
    assert_eq!(e.subst("M", &c(3)), &i + 6);
    assert_eq!(e.subst("i", &n()), &n() + &m() * 2);
    // Substitution reaches into ranges: `(i+1)/8` with i in [0, N), N := 8.
    let q = (&i + 1) / 8;
    assert!(matches!(q.kind(), ExprKind::Div(..)));
    let q8 = q.subst("N", &c(8));
    assert!(matches!(q8.kind(), ExprKind::Div(..)));
    let q7 = ((&i) / 8).subst("N", &c(8));
    assert_eq!(q7, c(0));
    // Re-simplification after substitution.
    let z = (&n() * &m()) / &k();
    assert_eq!(z.subst("K", &m()), n());
}

// ---------------------------------------------------------------- display

#[test]
fn display() {
    let i = idx("i", &n());
    assert_eq!(n().to_string(), "N");
    assert_eq!((&n() / 2).to_string(), "(N/2)");
    assert_eq!((&n() * 2 + 1).to_string(), "((2*N)+1)");
    assert_eq!((&n() - 1).to_string(), "(N-1)");
    assert_eq!((&n() * &m()).to_string(), "(M*N)");
    assert_eq!((&n() * -2).to_string(), "(-2*N)");
    assert_eq!((-n()).to_string(), "(-N)");
    assert_eq!(c(-3).to_string(), "(-3)");
    assert_eq!((&m() - &n() * 3).to_string(), "(M-(3*N))");
    assert_eq!((&i % 3).to_string(), "(i%3)");
    assert_eq!(ArithExpr::max(&n(), &m()).to_string(), "max(M, N)");
    assert_eq!(c(i64::MIN).to_string(), "(-9223372036854775807-1)");
    assert_eq!((c(1) - &n()).to_string(), "((-N)+1)");
}

#[test]
fn min_through_a_reference_is_symbolic() {
    // With a reference receiver, method syntax reaches the symbolic min (a
    // by-value receiver would pick `Ord::min`; see the crate docs).
    let (a, b) = (n(), m());
    let ra = &a;
    assert!(matches!(ra.min(&b).kind(), ExprKind::Min(..)));
    assert!(matches!(ra.max(&b).kind(), ExprKind::Max(..)));
}

// ---------------------------------------------------------------- property test

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&mut self, lo: i64, hi_incl: i64) -> i64 {
        lo + self.below((hi_incl - lo + 1) as u64) as i64
    }
}

#[derive(Debug, Clone)]
enum Tree {
    Cst(i64),
    Var(usize),
    Add(Box<Tree>, Box<Tree>),
    Sub(Box<Tree>, Box<Tree>),
    Mul(Box<Tree>, Box<Tree>),
    Div(Box<Tree>, Box<Tree>),
    Rem(Box<Tree>, Box<Tree>),
    Min(Box<Tree>, Box<Tree>),
    Max(Box<Tree>, Box<Tree>),
    Pow(Box<Tree>, u32),
    /// `(a*k) /^ k`, divisible by construction.
    ExactQuot(Box<Tree>, Box<Tree>),
}

/// Variables: N, M sizes; i in [0, N); j in [0, 4); x in [-3, 3).
const NVARS: usize = 5;
fn vars() -> Vec<ArithExpr> {
    vec![
        n(),
        m(),
        idx("i", &n()),
        idx("j", &c(4)),
        ArithExpr::var("x", Range::between(c(-3), c(3))),
    ]
}

fn gen(r: &mut Rng, depth: u32) -> Tree {
    let b = |r: &mut Rng| Box::new(gen(r, depth - 1));
    if depth == 0 || r.below(4) == 0 {
        return if r.below(2) == 0 {
            Tree::Cst(r.range(-3, 8))
        } else {
            Tree::Var(r.below(NVARS as u64) as usize)
        };
    }
    match r.below(12) {
        0 | 1 => Tree::Add(b(r), b(r)),
        2 => Tree::Sub(b(r), b(r)),
        3 | 4 => Tree::Mul(b(r), b(r)),
        5 | 6 => Tree::Div(b(r), b(r)),
        7 | 8 => Tree::Rem(b(r), b(r)),
        9 => Tree::Min(b(r), b(r)),
        10 => Tree::Max(b(r), b(r)),
        _ => {
            // The join∘split and split-view shapes, which the sum rules target.
            let a = b(r);
            let k = b(r);
            if r.below(2) == 0 {
                let q = Tree::Mul(Box::new(Tree::Div(a.clone(), k.clone())), k.clone());
                Tree::Add(Box::new(q), Box::new(Tree::Rem(a, k)))
            } else if r.below(2) == 0 {
                let s = Tree::Add(Box::new(Tree::Mul(a, k.clone())), b(r));
                Tree::Div(Box::new(s), k)
            } else if r.below(2) == 0 {
                let q = Tree::ExactQuot(a, k.clone());
                Tree::Mul(Box::new(q), k)
            } else {
                Tree::Pow(a, r.below(3) as u32)
            }
        }
    }
}

fn naive(t: &Tree, vals: &[i64]) -> Option<i64> {
    use Tree::*;
    let two = |a: &Tree, b: &Tree| Some((naive(a, vals)?, naive(b, vals)?));
    match t {
        Cst(v) => Some(*v),
        Var(i) => Some(vals[*i]),
        Add(a, b) => two(a, b).and_then(|(x, y)| x.checked_add(y)),
        Sub(a, b) => two(a, b).and_then(|(x, y)| x.checked_sub(y)),
        Mul(a, b) => two(a, b).and_then(|(x, y)| x.checked_mul(y)),
        Div(a, b) => two(a, b).and_then(|(x, y)| x.checked_div(y)),
        Rem(a, b) => two(a, b).and_then(|(x, y)| x.checked_rem(y)),
        Min(a, b) => two(a, b).map(|(x, y)| x.min(y)),
        Max(a, b) => two(a, b).map(|(x, y)| x.max(y)),
        Pow(a, e) => naive(a, vals)?.checked_pow(*e),
        ExactQuot(a, k) => two(a, k).and_then(|(x, y)| x.checked_mul(y)?.checked_div(y)),
    }
}

fn build(t: &Tree, vs: &[ArithExpr]) -> ArithExpr {
    use Tree::*;
    match t {
        Cst(v) => c(*v),
        Var(i) => vs[*i].clone(),
        Add(a, b) => build(a, vs) + build(b, vs),
        Sub(a, b) => build(a, vs) - build(b, vs),
        Mul(a, b) => build(a, vs) * build(b, vs),
        Div(a, b) => build(a, vs) / build(b, vs),
        Rem(a, b) => build(a, vs) % build(b, vs),
        Min(a, b) => ArithExpr::min(&build(a, vs), &build(b, vs)),
        Max(a, b) => ArithExpr::max(&build(a, vs), &build(b, vs)),
        Pow(a, e) => build(a, vs).pow(&c(*e as i64)),
        ExactQuot(a, k) => {
            let kk = build(k, vs);
            (build(a, vs) * &kk).div_assume_exact(&kk)
        }
    }
}

fn random_valuation(r: &mut Rng) -> [i64; NVARS] {
    let nv = r.range(1, 7);
    [nv, r.range(1, 7), r.range(0, nv - 1), r.range(0, 3), r.range(-3, 2)]
}

const NAMES: [&str; NVARS] = ["N", "M", "i", "j", "x"];

/// `ARITH_PROP_CASES` / `ARITH_PROP_SEED` / `ARITH_PROP_DEPTH` scale the
/// property tests up for a longer soak run.
fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

#[test]
fn property_simplification_preserves_value() {
    let mut r = Rng(knob("ARITH_PROP_SEED", 0x9E37_79B9_7F4A_7C15) | 1);
    let depth = knob("ARITH_PROP_DEPTH", 4) as u32;
    let vs = vars();
    let mut checked = 0;
    for case in 0..knob("ARITH_PROP_CASES", 4000) {
        let t = gen(&mut r, depth);
        let e = build(&t, &vs);
        for _ in 0..6 {
            let val = random_valuation(&mut r);
            let Some(want) = naive(&t, &val) else {
                continue;
            };
            let lookup = |name: &str| NAMES.iter().position(|n| *n == name).map(|p| val[p]);
            let got = e.eval(&lookup);
            assert_eq!(
                got,
                Ok(want),
                "case {case}: tree {t:?}\nsimplified {e}\nvaluation {val:?}"
            );
            // Bounds must contain the value.
            if let Some(lo) = e.lower_bound() {
                assert!(lo <= want, "case {case}: lower bound {lo} > {want} for {e}");
            }
            if let Some(hi) = e.upper_bound() {
                assert!(hi >= want, "case {case}: upper bound {hi} < {want} for {e}");
            }
            checked += 1;
        }
    }
    assert!(checked > 10_000, "only {checked} evaluations were checked");
}

#[test]
fn property_proofs_are_sound() {
    let mut r = Rng(knob("ARITH_PROP_SEED", 0x1234_5678_9ABC_DEF1) | 1);
    let vs = vars();
    for case in 0..knob("ARITH_PROP_CASES", 4000) / 3 {
        let a = build(&gen(&mut r, 3), &vs);
        let b = build(&gen(&mut r, 3), &vs);
        let lt = a.prove_lt(&b);
        let le = a.prove_le(&b);
        let nn = a.prove_nonneg();
        for _ in 0..8 {
            let val = random_valuation(&mut r);
            let lookup = |name: &str| NAMES.iter().position(|n| *n == name).map(|p| val[p]);
            let (Ok(x), Ok(y)) = (a.eval(&lookup), b.eval(&lookup)) else {
                continue;
            };
            assert!(!lt || x < y, "case {case}: proved {a} < {b} but {x} >= {y} at {val:?}");
            assert!(!le || x <= y, "case {case}: proved {a} <= {b} but {x} > {y} at {val:?}");
            assert!(!nn || x >= 0, "case {case}: proved {a} >= 0 but {x} at {val:?}");
        }
    }
}

#[test]
fn property_subst_matches_binding() {
    let mut r = Rng(knob("ARITH_PROP_SEED", 0xDEAD_BEEF_0BAD_F00D) | 1);
    let vs = vars();
    for case in 0..knob("ARITH_PROP_CASES", 4000) / 4 {
        let t = gen(&mut r, 3);
        let e = build(&t, &vs);
        let val = random_valuation(&mut r);
        let Some(want) = naive(&t, &val) else {
            continue;
        };
        // Substitute the loop index and M by constants; the rest from env.
        let e2 = e.subst("i", &c(val[2])).subst("M", &c(val[1]));
        let lookup = |name: &str| NAMES.iter().position(|n| *n == name).map(|p| val[p]);
        assert_eq!(e2.eval(&lookup), Ok(want), "case {case}: {t:?} -> {e} -> {e2}");
    }
}

#[test]
fn lift_index_patterns() {
    // split k over N: row i in [0, N/^k), column j in [0, k).
    let kk = k();
    let rows = n().div_assume_exact(&kk);
    let i = idx("i", &rows);
    let j = idx("j", &kk);
    let flat = &i * &kk + &j;
    assert!(flat.prove_lt(&n()));
    assert_eq!(&flat / &kk, i);
    assert_eq!(&flat % &kk, j);
    // Work-group / local id decomposition.
    let l = idx("l", &c(64));
    let wg = idx("wg", &n());
    let gid = &wg * 64 + &l;
    assert_eq!(&gid / 64, wg);
    assert_eq!(&gid % 64, l);
    assert_eq!((&gid / 32) * 32 + &gid % 32, gid);
    assert_eq!((&gid / 16) / 4, wg);
    assert_eq!((&gid % 128) % 64, l);
    assert!(gid.prove_lt(&(&n() * 64)));
    // Transpose: the gathered index stays in bounds.
    let t = idx("t", &(&n() * &m()));
    let tr = (&t % &n()) * &m() + &t / &n();
    assert_eq!(tr.to_string(), "((M*(t%N))+(t/N))");
    assert!(tr.prove_lt(&(&n() * &m())));
    assert!(!tr.prove_lt(&(&n() * &m() - 1)));
}

#[test]
fn the_kind_of_a_variable_is_part_of_its_identity() {
    let user = ArithExpr::size_var("X1");
    let exist = ArithExpr::size_var_of_kind(VarKind::Existential, "X1");
    assert_ne!(user, exist);
    assert!(!user.sub(&exist).is_cst(0), "X1 - X1' does not cancel");
    assert!(user.sub(&user).is_cst(0));
    assert_eq!(exist.to_string(), "X1", "a generated length prints as its name");
    assert_eq!(exist.var_kind(), Some(VarKind::Existential));
    assert_eq!(user.var_kind(), Some(VarKind::User));
    let both = user.add(&exist);
    assert_eq!(both.free_vars_of_kind(VarKind::Existential).len(), 1);
    assert_eq!(both.free_vars_of_kind(VarKind::User).len(), 1);
    // Substitution keeps the kinds of the other variables.
    let i = ArithExpr::var_of_kind(VarKind::Generated, "i", Range::upto(ArithExpr::size_var("N")));
    let j = i.subst("N", &ArithExpr::cst(8));
    assert_eq!(j.var_kind(), Some(VarKind::Generated));
    assert_eq!(j.upper_bound(), Some(7));
}

#[test]
fn divisibility_facts_make_floor_division_exact() {
    let n = ArithExpr::size_var("N");
    let two = ArithExpr::cst(2);
    let floor = n.div(&two);
    let exact = n.div_assume_exact(&two);
    assert_ne!(floor, exact, "without the fact, N/2 rounds down");
    assert_ne!(floor.mul(&two), n);
    let facts = [(n.clone(), two.clone())];
    assert_eq!(floor.assume_divisible(&facts), exact);
    assert_eq!(floor.mul(&two).assume_divisible(&facts), n, "(N/2)*2 == N under 2 | N");
    assert!(n.rem(&two).assume_divisible(&facts).is_cst(0));
    // Nested in a larger expression, and only for the stated divisor.
    let m = ArithExpr::size_var("M");
    let e = m.add(&floor.mul(&two));
    assert_eq!(e.assume_divisible(&facts), m.add(&n));
    let three = ArithExpr::cst(3);
    assert_eq!(n.div(&three).assume_divisible(&facts), n.div(&three));
}

/// Nested remainders used to cost time exponential in their nesting (each addition tried the
/// `(a/b)*b + a%b` identity by building every quotient): 12 levels took minutes.
#[test]
fn nested_remainders_simplify_in_linear_time() {
    let n = ArithExpr::size_var("N");
    let m = ArithExpr::size_var("M");
    let start = std::time::Instant::now();
    let mut e = n.clone();
    for i in 1..=12 {
        e = e.add(&m).rem(&n.add(&ArithExpr::cst(i)));
    }
    assert!(e.to_string().contains('%'));
    assert!(start.elapsed().as_secs() < 10, "took {:?}", start.elapsed());
    // The identity itself still applies where a quotient is present.
    let (a, b) = (n.add(&m), m.add(&ArithExpr::cst(1)));
    assert_eq!(a.div(&b).mul(&b).add(&a.rem(&b)), a);
}

/// `(a·l + q) / (a·c) == l / c` and `(a·l + q) % (a·c) == a·(l % c) + q` for `l ≥ 0`,
/// `0 ≤ q < a`: the lanes of a vector read as rows of a multiple of its width.
#[test]
fn a_multiple_plus_a_small_remainder_over_a_multiple_of_the_factor() {
    let l = idx("l", &c(1000));
    let q = idx("q", &c(4));
    for k in 0..4 {
        let x = &l * 4 + k;
        assert_eq!(&x / 8, &l / 2, "(4l + {k}) / 8");
        assert_eq!(&x % 8, (&l % 2) * 4 + k, "(4l + {k}) % 8");
    }
    // a lane index as `q`, several terms in `l`, a symbolic divisor
    let x = &l * 4 + &q;
    assert_eq!(&x / 8, &l / 2);
    assert_eq!(&x % 8, (&l % 2) * 4 + &q);
    assert_eq!(&x / (&n() * 8), &l / (&n() * 2));
    let (a, b) = (idx("a", &c(8)), idx("b", &c(16)));
    let f = &a * 64 + &b * 4 + 3;
    assert_eq!(&f / 128, &a / 2);
    assert_eq!(&f % 128, (&a % 2) * 64 + &b * 4 + 3);
    // a constant beyond the factor: 4l + 5 == 4(l + 1) + 1
    assert_eq!((&l * 4 + 5) / 8, (&l + 1) / 2);
    // side conditions that fail: the rule must not fire
    let q5 = idx("q5", &c(5));
    assert!(
        matches!(((&l * 4 + &q5) / 8).kind(), ExprKind::Div(..)),
        "q may reach 4"
    );
    assert!(matches!(((&l * 4 + &q5) % 8).kind(), ExprKind::Mod(..)));
    let s = ArithExpr::var("s", Range::between(c(-3), c(3)));
    assert!(
        matches!(((&s * 4 + 1) / 8).kind(), ExprKind::Div(..)),
        "l may be negative"
    );
    assert!(matches!(((&s * 4 + 1) % 8).kind(), ExprKind::Mod(..)));
    let d = ArithExpr::var("d", Range::between(c(-1), c(3)));
    assert!(
        matches!(((&l * 4 + &d) / 8).kind(), ExprKind::Div(..)),
        "q may be negative"
    );
    // a factor that does not divide the divisor: 3 ∤ 8
    assert!(matches!(((&l * 3 + 1) / 8).kind(), ExprKind::Div(..)));
    // every rewrite is the value itself
    for lv in 0..40 {
        for qv in 0..4 {
            let bind = [("l", lv), ("q", qv), ("N", 5)];
            let e = env(&bind);
            let want = lv * 4 + qv;
            assert_eq!((&x / 8).eval(&e), Ok(want / 8));
            assert_eq!((&x % 8).eval(&e), Ok(want % 8));
            assert_eq!((&x / (&n() * 8)).eval(&e), Ok(want / 40));
        }
    }
}

#[test]
fn divisibility_facts_compose_and_divide() {
    let m = ArithExpr::size_var("M");
    let (ten, three, fifteen, thirty) = (
        ArithExpr::cst(10),
        ArithExpr::cst(3),
        ArithExpr::cst(15),
        ArithExpr::cst(30),
    );
    // `split #3 (split #10 xs)`: the checks are 10 | M and 3 | M/10
    let facts = vec![(m.clone(), ten.clone()), (m.div(&ten), three.clone())];
    let nested = m.div_assume_exact(&ten).div_assume_exact(&three);
    assert_eq!(
        m.div(&thirty).assume_divisible(&facts),
        nested,
        "the user's M/30 is the split's length"
    );
    assert_eq!(m.div(&fifteen).assume_divisible(&facts), m.div_assume_exact(&fifteen));
    assert!(m.rem(&thirty).assume_divisible(&facts).is_cst(0));
    // nothing shows 4 | M
    let four = ArithExpr::cst(4);
    assert_eq!(m.div(&four).assume_divisible(&facts), m.div(&four));
}

#[test]
fn floor_division_of_a_floor_division_is_one_division() {
    let n = ArithExpr::size_var("N");
    let two = ArithExpr::cst(2);
    assert_eq!(n.div(&two).div(&two), n.div(&ArithExpr::cst(4)));
    let facts = vec![(n.clone(), ArithExpr::cst(4))];
    assert_eq!(
        n.div(&two).assume_divisible(&facts).div_assume_exact(&two),
        n.div(&ArithExpr::cst(4)).assume_divisible(&facts),
        "under 4 | N, (N/2)/^2 is N/^4"
    );
}
