//! The register-blocked matrix product (`bench/mm_regblock.lisp`, and the variant the
//! `reg-block-*` rule derives from `bench/cgo17/mm.lisp`) on an OpenCL device equals the
//! interpreter, and its kernel keeps each work-item's block in registers.

use crate::{json_close, parse_json};
use std::path::Path;

fn repo(p: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// Matrices of multiples of 1/4 in [-1, 1]: every partial sum of their products is exact in
/// float32, so any order of summation gives the interpreter's result.
fn matrices(tag: &str, m: usize, k: usize, n: usize) -> (tempfile_free::Scratch, String) {
    let mut s: u64 = 7;
    let mut next = move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((s >> 33) % 9) as f64 / 4.0 - 1.0
    };
    let mut mat = |r: usize, c: usize| -> serde_json::Value {
        (0..r)
            .map(|_| (0..c).map(|_| serde_json::json!(next())).collect::<serde_json::Value>())
            .collect()
    };
    let data = serde_json::json!({ "a": mat(m, k), "b": mat(k, n) });
    let dir = tempfile_free::Scratch::new(tag);
    let path = dir.path.join("data.json");
    std::fs::write(&path, data.to_string()).expect("writes data");
    let p = path.to_string_lossy().to_string();
    (dir, p)
}

/// A scratch folder removed when dropped (the test binary has no temp-file crate).
mod tempfile_free {
    pub struct Scratch {
        pub path: std::path::PathBuf,
    }
    impl Scratch {
        pub fn new(tag: &str) -> Scratch {
            let path = std::env::temp_dir().join(format!("lift-{tag}-{}", std::process::id()));
            std::fs::create_dir_all(&path).expect("scratch folder");
            Scratch { path }
        }
    }
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn equals_interpreter(src: &str, data: &str) {
    let Some(device) = crate::opencl::device() else { return };
    let data = vec![data.to_string()];
    let want = lift::run_files(src, &data, &[], &crate::interp_options())
        .unwrap_or_else(|e| panic!("{}", e.render("mm", src)));
    let cl = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let got = lift::run_files(src, &data, &[], &cl).unwrap_or_else(|e| panic!("{}", e.render("mm", src)));
    let (want, got) = (parse_json(&want.json, "interpreter"), parse_json(&got.json, "OpenCL"));
    assert!(json_close(&want, &got), "interpreter {want}\n     OpenCL {got}");
}

#[test]
fn low_level_register_blocked_mm_equals_the_interpreter() {
    // two work-groups down, three across, two steps of K
    let (_dir, data) = matrices("regblock-low", 128, 32, 192);
    equals_interpreter(&repo("bench/mm_regblock.lisp"), &data);
}

#[test]
fn low_level_register_blocked_mm_keeps_blocks_in_registers() {
    let src = repo("bench/mm_regblock.lisp");
    let c = lift::compile(&src, &lift::Options::default()).expect("compiles");
    let cl = c.text(lift::Emit::Cl).expect("emits");
    // no local accumulator nor a second buffer of one: the blocks are private scalars
    assert!(!cl.contains("lacc") && !cl.contains("nxt"), "{cl}");
    assert!(cl.contains("float v_pacc_1_16;"), "{cl}");
    insta::assert_snapshot!("cl@mm_regblock.lisp", cl);
}

#[test]
fn derived_register_blocked_mm_equals_the_interpreter() {
    // the cost model's first choice for mm at the benchmark's size is a register-blocked
    // variant; run it at a size that its tiles divide
    let src = repo("bench/cgo17/mm.lisp");
    let prog = ir::parse(&src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        sizes: [("M", 4096), ("K", 4096), ("N", 4096)]
            .map(|(k, v)| (k.to_string(), v))
            .into_iter()
            .collect(),
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
    let best = &ex.variants[0];
    assert!(best.description.contains("block in registers"), "{ex}");
    let (_dir, data) = matrices("regblock-derived", 256, 16, 128);
    equals_interpreter(&best.source, &data);
}

/// A step that reads its accumulator in another order than it writes it (`reverse acc`) must
/// keep the second buffer: updated in place, element 3 would read the new element 0.
#[test]
fn accumulators_read_out_of_place_are_not_updated_in_place() {
    let src = "(lift (N) ((array-type (array-type float 4) N))
      (lambda (xs) (join (mapGlb (lambda (chunk)
        (reduceSeq (lambda (acc row) (mapSeq (lambda (p) (+ (get #0 p) (get #1 p))) (zip (reverse acc) row)))
                   (generate #4 (lambda (i) 0.0f)) chunk))
        (split #3 xs)))))";
    let c = lift::compile(src, &lift::Options::default()).expect("compiles");
    let cl = c.text(lift::Emit::Cl).expect("emits");
    assert!(cl.contains("nxt"), "{cl}");
    let dir = tempfile_free::Scratch::new("regblock-reverse");
    let path = dir.path.join("data.json");
    let xs: Vec<Vec<f64>> = (0..6)
        .map(|r| (0..4).map(|c| (r * 4 + c) as f64 * 0.25).collect())
        .collect();
    std::fs::write(&path, serde_json::json!({ "xs": xs }).to_string()).expect("writes data");
    equals_interpreter(src, &path.to_string_lossy());
}

/// The derived variant of one tile setting at the benchmark's size, its kernel, and whether
/// it equals the interpreter at a size its tiles divide.
fn derived_with(src: &str, blocks: (i64, i64, i64, i64, i64), small: (usize, usize, usize)) -> String {
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let (tm, tn, rm, rn, tk) = blocks;
    let opts = rewrite::Options {
        sizes: [("M", 4096), ("K", 4096), ("N", 4096)]
            .map(|(k, v)| (k.to_string(), v))
            .into_iter()
            .collect(),
        reg_blocks: vec![rewrite::egraph::RegBlockSizes { tm, tn, rm, rn, tk }],
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
    let v = ex
        .variants
        .iter()
        .find(|v| v.description.contains("block in registers"))
        .unwrap_or_else(|| panic!("no register-blocked variant:\n{ex}"));
    let (m, k, n) = small;
    let (_dir, data) = matrices(&format!("regblock-vec-{tm}x{tn}-{rm}x{rn}-{tk}-{m}x{k}x{n}"), m, k, n);
    equals_interpreter(&v.source, &data);
    let c = lift::compile(&v.source, &lift::Options::default()).expect("compiles");
    c.text(lift::Emit::Cl).expect("emits")
}

/// Each work-item reads the local tiles as `float4`s (a row of A's tile along four steps of
/// K, a run of four columns of B's): the loads from local memory are `vload4`s, and the
/// result equals the interpreter, for either order of the dot product's operands (`zip col
/// row` swaps the product's factors) and for tiles that are not square.
#[test]
fn derived_register_blocked_mm_reads_local_tiles_as_vectors() {
    let mm = repo("bench/cgo17/mm.lisp");
    let swapped = mm.replace("(dot-product row col)", "(dot-product col row)");
    assert_ne!(mm, swapped, "the benchmark's dot product changed");
    for (src, blocks, small) in [
        (&mm, (128, 64, 8, 4, 16), (256, 32, 128)),
        (&swapped, (128, 128, 8, 8, 8), (128, 16, 256)),
    ] {
        let cl = derived_with(src, blocks, small);
        // the tiles are arrays of `float4` (a `vload4` at an offset the compiler cannot prove
        // aligned became four scalar loads on the H200), each vector read whole into registers
        assert!(
            cl.contains("local float4 v_lt_1[") && cl.contains("local float4 v_lt_2["),
            "{cl}"
        );
        let local_vector_loads = cl.matches("vstore4(v_lt_").count();
        // per four steps of K: rm vectors of A and rn / 4 per step of B
        let (rm, rn, tk) = (blocks.2, blocks.3, blocks.4);
        let want = (tk / 4) * rm + tk * (rn / 4);
        assert_eq!(local_vector_loads as i64, want, "{cl}");
        // the copies from global memory move `float4`s too (the variant is derived for
        // sizes whose rows are a multiple of 4 long): in this kernel for any size, `vload4`s
        // of A and of B (aligned `float4` loads where the sizes are built in:
        // `derived_register_blocked_mm_copies_tiles_as_aligned_vectors`)
        let sources: Vec<&str> = vload_sources(&cl).collect();
        assert!(
            sources.iter().any(|s| s.starts_with("v_a +")) && sources.iter().any(|s| s.starts_with("v_b +")),
            "{sources:?}\n{cl}"
        );
    }
}

/// The buffer argument of each `vloadW(offset, buffer)` in `cl`.
fn vload_sources(cl: &str) -> impl Iterator<Item = &str> {
    cl.match_indices("vload").filter_map(|(at, _)| {
        let open = at + cl[at..].find('(')?;
        let mut depth = 0;
        for (i, ch) in cl[open..].char_indices() {
            match ch {
                '(' => depth += 1,
                ')' if depth == 1 => {
                    let args = &cl[open + 1..open + i];
                    return args.rsplit(',').next().map(str::trim);
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        None
    })
}

/// The body of the first `for` loop over `var` in `cl`, by matching braces.
fn loop_body<'c>(cl: &'c str, var: &str) -> &'c str {
    let head = format!("for (int {var} = 0;");
    let at = cl.find(&head).unwrap_or_else(|| panic!("no loop over {var}:\n{cl}"));
    let open = at + cl[at..].find('{').expect("a loop body");
    let mut depth = 0;
    for (i, ch) in cl[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' if depth == 1 => return &cl[open..open + i + 1],
            '}' => depth -= 1,
            _ => {}
        }
    }
    panic!("unbalanced braces:\n{cl}")
}

/// The derived product walks K software-pipelined: each work-item loads its share of the
/// next step's tiles into registers before it computes the current step from the other half of
/// two local tiles, and stores them after, so one barrier per step of K (three when the tiles
/// were copied as the step is written), and the result equals the interpreter with one step
/// of K (nothing to load ahead) and with three.
#[test]
fn derived_register_blocked_mm_loads_the_next_tiles_while_computing() {
    let mm = repo("bench/cgo17/mm.lisp");
    let cl = derived_with(&mm, (128, 128, 8, 8, 16), (128, 16, 128));
    let _ = derived_with(&mm, (128, 128, 8, 8, 16), (256, 48, 128));
    let body = loop_body(&cl, "v_i_1");
    assert_eq!(body.matches("barrier(").count(), 1, "{body}");
    // 16 steps of 64 multiply-adds: a `#pragma unroll` loop rather than 1,024 written out
    assert_eq!(body.matches("#pragma unroll").count(), 1, "{body}");
    assert_eq!(body.matches(" * v_pt_").count(), 64, "{body}");
    // step i + 1's elements go to registers (8 of A's tile and 8 of B's per work-item, two
    // `float4`s each) ...
    let ahead = body
        .find("if (v_i_1 + 1 < v_K / 16)")
        .expect("a guarded load of the next step");
    let uses = body.matches("v_ppf_").count();
    assert!(body[ahead..].contains("v_ppf_1_2 = vload4("), "{body}");
    assert!(body[ahead..].contains("v_ppf_2_2 = vload4("), "{body}");
    // ... and from there into the tile that the next step reads: B's a vector at a time, A's
    // (transposed into its K-major tile) lane by lane
    assert!(
        body.contains("= v_ppf_2_2;") && body.contains("= v_ppf_1_2.s3;"),
        "{body}"
    );
    assert_eq!(uses, 4 + 2 + 8, "{body}");
    // the two halves of each local tile, 16 rows of 128 floats padded to 132: 4224 floats
    assert!(
        cl.contains("local float4 v_lt_1[1056];") && cl.contains("local float4 v_lt_2[1056];"),
        "{cl}"
    );
}

/// The kernel of the cost model's best variant of `src` at 4096³.
fn best_kernel_at_large(src: &str) -> String {
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        sizes: ["M", "K", "N"].iter().map(|n| (n.to_string(), 4096)).collect(),
        top_k: 1,
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
    let v = &ex.variants[0];
    assert!(v.description.contains("block in registers"), "{ex}");
    let c = lift::compile(&v.source, &lift::Options::default()).expect("compiles");
    c.text(lift::Emit::Cl).expect("emits")
}

/// A tile whose columns lie contiguous in global memory (`Bᵀ`'s rows in `mm_nt`, `Aᵀ`'s in
/// `mm_tn`) is copied along them and transposed on the way into local memory: consecutive
/// work-items read consecutive addresses, not addresses a row of the matrix (K or M floats)
/// apart. (That the products equal the interpreter: `indep_mm`.)
#[test]
fn transposed_tiles_are_copied_along_global_memory() {
    // the statements assigning `reg`, whitespace folded
    let loads = |cl: &str, reg: &str| -> Vec<String> {
        let head = format!("{reg} = ");
        cl.match_indices(&head)
            .map(|(at, _)| {
                let end = at + cl[at..].find(';').expect("a statement");
                cl[at..end].split_whitespace().collect::<Vec<_>>().join(" ")
            })
            .collect()
    };
    // each work-item's share is read as `float4`s of four adjacent elements of a row of the
    // matrix: along Bᵀ's rows (K long), not down its columns, a row apart
    let nt = best_kernel_at_large(include_str!("../../../../bench/indep/mm_nt.lisp"));
    let b = loads(&nt, "v_ppf_2_1");
    assert!(!b.is_empty(), "{nt}");
    assert!(
        b.iter().all(|l| l.starts_with("v_ppf_2_1 = vload4(0, v_bt + ")),
        "{b:?}"
    );
    // and along Aᵀ's rows (M long)
    let tn = best_kernel_at_large(include_str!("../../../../bench/indep/mm_tn.lisp"));
    let a = loads(&tn, "v_ppf_1_1");
    assert!(!a.is_empty(), "{tn}");
    assert!(
        a.iter().all(|l| l.starts_with("v_ppf_1_1 = vload4(0, v_at + ")),
        "{a:?}"
    );
}

/// A's tile is stored K-major (a column of the tile per row of local memory): each step of K a
/// work-item reads its 8 values of A as two `float4`s down a column, where a row-major tile made
/// it hold 8 `float4`s along four steps (32 values, with the 64 accumulators more than the
/// registers two groups of 256 per SM leave). The copy transposes A's tile on its way into
/// local memory; its rows, 128 floats, are padded by 4 (132 a row), so that work-items storing
/// down a column hit distinct banks while `float4` reads stay aligned. Equal to the interpreter
/// for both orders of the dot product's operands and at a 128×64/8×8 tile of 128 work-items.
#[test]
fn derived_register_blocked_mm_keeps_a_k_major_padded_tile() {
    let mm = repo("bench/cgo17/mm.lisp");
    let swapped = mm.replace("(dot-product row col)", "(dot-product col row)");
    for (src, blocks, small) in [
        (&mm, (128, 128, 8, 8, 8), (256, 16, 128)),
        (&swapped, (128, 64, 8, 8, 16), (128, 32, 128)),
    ] {
        let cl = derived_with(src, blocks, small);
        let (tm, tn, rm, tk) = (blocks.0, blocks.1, blocks.2, blocks.4);
        // one step's values of A in a work-item: rm floats
        assert!(cl.contains(&format!("float v_pt_1[{rm}];")), "{cl}");
        // two halves of tk rows of tm + 4 floats, as float4s; B's the same with tn
        let a_tile = format!("local float4 v_lt_1[{}];", 2 * tk * (tm + 4) / 4);
        let b_tile = format!("local float4 v_lt_2[{}];", 2 * tk * (tn + 4) / 4);
        assert!(cl.contains(&a_tile) && cl.contains(&b_tile), "{cl}");
        // A's elements go down the columns of its tile, lane by lane of the `float4`s read
        // along A's rows: consecutive lanes a padded row of local memory apart
        let stores: Vec<&str> = cl.lines().filter(|l| l.contains("((local float*)v_lt_1)[")).collect();
        assert!(!stores.is_empty(), "{cl}");
        assert!(stores.iter().all(|l| l.contains("= v_ppf_1_")), "{stores:#?}");
        let lane1 = format!(" + {}] = v_ppf_1_1.s1;", tm + 4);
        assert!(stores.iter().any(|l| l.ends_with(&lane1)), "{stores:#?}");
    }
}

/// At 4096³ the cost model ranks first the setting measured fastest on the H200 with the tiles
/// copied as `float4`s: 128×128 tiles of 8×8 blocks by steps of 16 (2.905 ms in the suite run of
/// 2026-11-24, 2.911 against 2.971 for 64×128 by 8 and 3.004 for 128×128 by 8,
/// `bench/results/runs/nvidia-h200-2026-11-24-mm-speed4-0809ecf.md`). With scalar copies steps of
/// 16 had lost and groups of 128 won (3.04 ms for 64×128 against 3.10 for 128×128).
#[test]
fn the_cost_model_ranks_the_measured_fastest_blocks_first_at_4096() {
    let src = repo("bench/cgo17/mm.lisp");
    let prog = ir::parse(&src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        sizes: ["M", "K", "N"].iter().map(|n| (n.to_string(), 4096)).collect(),
        top_k: 1,
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
    let d = &ex.variants[0].description;
    assert!(
        d.contains("128×128, 16×16 work-items each computing a 8×8 block")
            && d.contains("K in steps of 16 ")
            && d.contains("both tiles copied as float4"),
        "{ex}"
    );
}

/// In a kernel built for its sizes (as `lift run`, `bench` and `tune` build them) the derived
/// product copies its tiles as aligned `float4`s: one `((const global float4*)…)[i]` load
/// for four scalar ones (`ld.global.v4` on NVIDIA), B's tile stored a `float4` at a time into
/// its padded rows and A's lane by lane down the columns of its K-major tile; the lanes'
/// indices are `(4·l + q) / 8 = l / 2` and `(4·l + q) % 8 = 4·(l % 2) + q` (`arith`), which
/// shows them adjacent. Equal to the interpreter at those sizes, with one step of K and with
/// three, and for both orders of the dot product's operands.
#[test]
fn derived_register_blocked_mm_copies_tiles_as_aligned_vectors() {
    let mm = repo("bench/cgo17/mm.lisp");
    let swapped = mm.replace("(dot-product row col)", "(dot-product col row)");
    for (src, (m, k, n)) in [(&mm, (128, 8, 256)), (&swapped, (64, 24, 128))] {
        let prog = ir::parse(src).expect("parses");
        let info = typeck::infer(&prog).expect("types");
        let opts = rewrite::Options {
            sizes: [("M", 4096), ("K", 4096), ("N", 4096)]
                .map(|(k, v)| (k.to_string(), v))
                .into_iter()
                .collect(),
            reg_blocks: vec![rewrite::egraph::RegBlockSizes {
                tm: 64,
                tn: 128,
                rm: 8,
                rn: 8,
                tk: 8,
            }],
            ..rewrite::Options::default()
        };
        let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
        let v = ex
            .variants
            .iter()
            .find(|v| v.description.contains("block in registers"))
            .unwrap_or_else(|| panic!("no register-blocked variant:\n{ex}"));
        let built = lift::Options {
            sizes: [("M", m), ("K", k), ("N", n)]
                .map(|(k, v)| (k.to_string(), v as i64))
                .into_iter()
                .collect(),
            specialise: true,
            ..lift::Options::default()
        };
        let c = lift::compile(&v.source, &built).unwrap_or_else(|e| panic!("{}", e.message()));
        let cl = c.plan.expect("kernels").source;
        for buf in ["v_a", "v_b"] {
            assert!(cl.contains(&format!("((const global float4*){buf})[")), "{cl}");
            assert!(!cl.contains(&format!("{buf}[")) && !cl.contains("vload4(0, v_"), "{cl}");
        }
        // a work-item's 8 floats of B's tile: two `float4` stores; its 4 of A's: 4 lanes
        let prologue = &cl[..cl.find("for (int v_i_1").expect("the K loop")];
        assert_eq!(prologue.matches("] = v_ppf_2_").count(), 2, "{prologue}");
        assert!(prologue.contains("] = v_ppf_2_2;"), "{prologue}");
        assert_eq!(prologue.matches("] = v_ppf_1_1.s").count(), 4, "{prologue}");
        let (_dir, data) = matrices(&format!("regblock-aligned-{m}x{k}x{n}"), m, k, n);
        equals_interpreter(&v.source, &data);
    }
}

/// Where the sizes are not known (a kernel for any size), the tiles are copied element by
/// element: a `vload4` at an offset not known to be aligned is four loads on NVIDIA's compiler.
/// Known sizes whose rows are a multiple of 4 make both copies vectors.
#[test]
fn tiles_are_copied_as_vectors_only_for_known_rows_of_a_multiple_of_4() {
    let src = repo("bench/cgo17/mm.lisp");
    let prog = ir::parse(&src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let derive = |sizes: &[(&str, i64)]| {
        let opts = rewrite::Options {
            sizes: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            reg_blocks: vec![rewrite::egraph::RegBlockSizes {
                tm: 64,
                tn: 128,
                rm: 8,
                rn: 8,
                tk: 8,
            }],
            ..rewrite::Options::default()
        };
        let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
        let v = ex
            .variants
            .iter()
            .find(|v| v.description.contains("block in registers"))
            .unwrap_or_else(|| panic!("no register-blocked variant:\n{ex}"));
        let c = lift::compile(&v.source, &lift::Options::default()).expect("compiles");
        (v.description.clone(), c.text(lift::Emit::Cl).expect("emits"))
    };
    let (any, cl) = derive(&[]);
    assert!(!any.contains("copied as float4"), "{any}");
    assert_eq!(vload_sources(&cl).count(), 0, "{cl}");
    let (known, cl) = derive(&[("M", 4096), ("K", 4096), ("N", 4096)]);
    assert!(known.contains("both tiles copied as float4"), "{known}");
    assert!(vload_sources(&cl).any(|s| s.starts_with("v_a +")), "{cl}");
}
