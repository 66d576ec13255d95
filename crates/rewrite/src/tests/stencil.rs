//! The stencil rules (`rules::stencil`): tiles are derived for 1-, 2- and 3-D windows of two
//! formulations each, every variant computes the original's result in the interpreter, and
//! the cost model ranks a column of outputs in registers first, as measured.

use super::*;

const JACOBI_1D: &str = "(lift (N) ((array-type float N))
  (lambda (xs) (map (lambda (w) (+ (+ (* 0.25f (at 0 w)) (* 0.5f (at 1 w))) (* 0.25f (at 2 w))))
                    (slide #3 #1 (pad-clamp #1 #1 xs)))))";

const SUM_1D_ZERO: &str = "(lift (N) ((array-type float N))
  (lambda (xs) (map (lambda (w) (reduce + 0.0f w)) (slide #5 #1 (pad #2 #2 0.0f xs)))))";

const SLIDE2D: &str = "(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))";

/// 5 points, clamped borders.
fn jacobi_5pt() -> String {
    format!(
        "{SLIDE2D}
(lift (H W) ((array-type (array-type float W) H))
  (lambda (g) (map (lambda (row) (map (lambda (n)
      (+ (+ (+ (+ (at2 0 1 n) (at2 1 0 n)) (* 4.0f (at2 1 1 n))) (at2 1 2 n)) (at2 2 1 n))) row))
    (slide2d #3 #1 (map (lambda (r) (pad-clamp #1 #1 r)) (pad-clamp #1 #1 g))))))"
    )
}

/// 9 points as a reduction over the window, zero columns and clamped rows.
fn box_9pt() -> String {
    format!(
        "{SLIDE2D}
(lift (H W) ((array-type (array-type float W) H))
  (lambda (g) (map (lambda (row) (join (map (lambda (n) (reduce + 0.0f (join n))) row)))
    (slide2d #3 #1 (pad-clamp #1 #1 (map (lambda (r) (pad #1 #1 0.0f r)) g))))))"
    )
}

const JACOBI_3D: &str = "(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (slide3d s t x) (map (lambda (w) (map transpose (transpose w))) (slide s t (map (lambda (p) (slide2d s t p)) x))))
(define (at3 i j k n) (at k (at j (at i n))))
(lift (X Y Z) ((array-type (array-type (array-type float X) Y) Z))
  (lambda (g) (map (lambda (p) (map (lambda (r) (map (lambda (n)
      (+ (+ (+ (at3 0 1 1 n) (at3 2 1 1 n)) (+ (at3 1 0 1 n) (at3 1 2 1 n))) (+ (at3 1 1 0 n) (at3 1 1 2 n)))) r)) p))
    (slide3d #3 #1 (map (lambda (p) (map (lambda (r) (pad-clamp #1 #1 r)) (pad-clamp #1 #1 p))) (pad-clamp #1 #1 g))))))";

fn tiles(ex: &crate::Exploration) -> Vec<String> {
    ex.variants
        .iter()
        .filter_map(|v| {
            let d = &v.description;
            let at = d.find("stencil tiles of ")?;
            Some(d[at..].split(" | ").next().unwrap_or("").to_string())
        })
        .collect()
}

fn has_both(ex: &crate::Exploration, tile: &str) {
    let t = tiles(ex);
    for how in ["input tile and halo in local memory", "read from global memory"] {
        let want = format!("stencil tiles of {tile} outputs, {how}");
        assert!(t.iter().any(|s| s == &want), "no `{want}` among {t:#?}\n{ex}");
    }
}

/// `columns` names each work-item's outputs: `4` a column of 4, `4x2` a 3-D block.
fn has_columns(ex: &crate::Exploration, columns: &[&str]) {
    for v in columns {
        let want = format!("stencil columns of {v} outputs a work-item");
        assert!(
            ex.variants.iter().any(|x| x.description.contains(&want)),
            "no `{want}`\n{ex}"
        );
    }
}

#[test]
fn stencil_tiles_of_1d_windows_are_sound_for_clamped_and_zero_borders() {
    for src in [JACOBI_1D, SUM_1D_ZERO] {
        let ex = check(src, &[("N", 512)], 4);
        for t in ["64", "128", "256"] {
            has_both(&ex, t);
        }
    }
}

#[test]
fn stencil_tiles_and_columns_of_2d_windows_are_sound_for_5_and_9_points() {
    for src in [jacobi_5pt(), box_9pt()] {
        let ex = check_with(&src, &[("H", 16), ("W", 256)], 4, |o| o.top_k = 64);
        for t in ["4x32", "8x32", "2x128", "4x64"] {
            has_both(&ex, t);
        }
        has_columns(&ex, &["4", "8"]);
    }
}

#[test]
fn stencil_tiles_and_columns_of_3d_windows_are_sound() {
    let ex = check_with(JACOBI_3D, &[("X", 64), ("Y", 16), ("Z", 8)], 4, |o| o.top_k = 64);
    for t in ["1x8x32", "2x4x32"] {
        has_both(&ex, t);
    }
    has_columns(&ex, &["2", "4x2", "4x4"]);
}

#[test]
fn stencil_tiles_need_tiles_that_divide_the_windows() {
    // 60 columns of windows: no tile of 32, 64 or 128 columns divides them
    let prog = ir::parse(&jacobi_5pt()).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = Options {
        sizes: [("H", 8), ("W", 60)].map(|(k, v)| (k.to_string(), v)).into(),
        top_k: 64,
        ..Options::default()
    };
    let ex = explore(&prog, &info, &opts).expect("explores");
    assert!(tiles(&ex).is_empty(), "{ex}");
}

/// The measured order on the H200 (`cost::stencil`): a column in registers first.
#[test]
fn cost_model_ranks_a_stencil_column_first_for_2d_windows_at_8192() {
    for src in [jacobi_5pt(), box_9pt()] {
        let prog = ir::parse(&src).expect("parses");
        let info = typeck::infer(&prog).expect("types");
        let opts = Options {
            sizes: [("H", 8192), ("W", 8192)].map(|(k, v)| (k.to_string(), v)).into(),
            ..Options::default()
        };
        let ex = explore(&prog, &info, &opts).expect("explores");
        let first = &ex.variants[0].description;
        assert!(first.contains("stencil columns of 8 outputs a work-item"), "{ex}");
    }
}

/// A 3-D window's block of 4 planes × 4 rows first at 512³: heat3d's took 0.306 ms on the H200
/// against 0.347 for its column of 4, a copy 0.282 (`bench/results/stencil-fast-nvidia-h200-2026-12-02.md`).
#[test]
fn cost_model_ranks_a_block_of_4x4_first_for_3d_windows_at_512() {
    let prog = ir::parse(JACOBI_3D).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = Options {
        sizes: [("X", 512), ("Y", 512), ("Z", 512)]
            .map(|(k, v)| (k.to_string(), v))
            .into(),
        ..Options::default()
    };
    let ex = explore(&prog, &info, &opts).expect("explores");
    let first = &ex.variants[0].description;
    assert!(first.contains("stencil columns of 4x4 outputs a work-item"), "{ex}");
}
