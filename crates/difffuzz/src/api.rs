//! The only module that calls the compiler: run a program on the reference interpreter, compile
//! and run it on OpenCL, and compare the two. Everything else in this crate deals with program
//! text, JSON data and verdicts, so when the driver's entry points change only this file does.

use ir::interp::Value;

/// How far a program got before it was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Reading, elaboration, type checking.
    Front,
    /// The data does not fit the parameter types, or a size check fails.
    Data,
    /// The rewriter or code generation.
    Compile,
    /// Running (the OpenCL driver, or the interpreter).
    Run,
}

#[derive(Clone, Debug)]
pub struct Refusal {
    pub stage: Stage,
    pub message: String,
    /// Only for the interpreter: no result because of its step limit.
    pub step_limit: bool,
}

impl Refusal {
    fn new(stage: Stage, message: impl Into<String>) -> Refusal {
        Refusal {
            stage,
            message: message.into(),
            step_limit: false,
        }
    }
}

/// Interpreter operations allowed per case: the generator's programs need far fewer, so
/// hitting it means the interpreter (or the generator) misbehaves.
const MAX_STEPS: u64 = 20_000_000;

struct Loaded {
    prog: ir::Program,
    inputs: lift::data::Inputs,
}

fn load(src: &str, data: &str) -> Result<Loaded, Refusal> {
    let typed =
        lift::compile(src, &lift::Options::types_only()).map_err(|e| Refusal::new(Stage::Front, full_message(&e)))?;
    let (prog, info) = (typed.given, &typed.given_info);
    let sources = [lift::data::DataSource::Json(data.to_string(), "data.json".into())];
    let inputs = lift::data::load(&prog, &sources, &[]).map_err(|e| Refusal::new(Stage::Data, e.message))?;
    lift::verify_checks(info, &inputs).map_err(|e| Refusal::new(Stage::Data, e.message()))?;
    Ok(Loaded { prog, inputs })
}

/// The reference result, in float32 (`bounded = false`) or with error bounds.
pub fn interpret(src: &str, data: &str, bounded: bool) -> Result<Value, Refusal> {
    let l = load(src, data)?;
    let lookup = |n: &str| l.inputs.sizes.get(n).copied();
    let opts = ir::interp::Options {
        arith: if bounded {
            ir::interp::Arith::Bounded
        } else {
            ir::interp::Arith::Native
        },
        max_steps: Some(MAX_STEPS),
        precision: ir::Precision::F32,
    };
    ir::interp::eval_with(&l.prog, &l.inputs.values, &lookup, &opts).map_err(|e| Refusal {
        stage: Stage::Run,
        step_limit: e.kind == ir::interp::ErrorKind::StepLimit,
        message: if e.kind == ir::interp::ErrorKind::Unbounded {
            format!("unbounded: {}", e.message)
        } else {
            e.message
        },
    })
}

/// Compiles and runs on OpenCL as `lift run` does, except that a high-level program always
/// runs as the cost model's best variant (no tuning cache, so results do not depend on what
/// ran before on this machine).
pub fn opencl(src: &str, data: &str, device: Option<&str>) -> Result<Value, Refusal> {
    let l = load(src, data)?;
    // Sizes built into the kernels, as `lift run` on a device builds them (the generic
    // kernels, which `--devices` and `lift compile` use, were fuzzed before this existed),
    // within the device's limits (a device with less local memory, as Oclgrind's, gets kernels
    // that fit it).
    let limit = host_runner::device_info(device).map_err(|e| Refusal::new(Stage::Run, e.to_string()))?;
    let opts = lift::Options {
        sizes: l.inputs.sizes.clone(),
        specialise: true,
        work_group_limit: Some(lift::work_group_limit(&limit)),
        ..lift::Options::default()
    };
    let c = lift::compile_program(l.prog, &opts).map_err(|e| Refusal::new(Stage::Compile, full_message(&e)))?;
    // A program with host sections runs unit by unit (`lift::host`).
    if let Some(h) = &c.host {
        return lift::backend::run_host(h, &l.inputs, device, false)
            .map(|(v, _)| v)
            .map_err(|e| Refusal::new(Stage::Run, full_message(&e)));
    }
    let plan = c
        .plan
        .as_ref()
        .ok_or_else(|| Refusal::new(Stage::Compile, "internal: no kernels"))?;
    lift::backend::run(plan, &l.inputs, device, false)
        .map(|(v, _)| v)
        .map_err(|e| Refusal::new(Stage::Run, full_message(&e)))
}

/// A program and its inputs, read once for the runs of its rewritten variants.
pub struct Session {
    loaded: Loaded,
}

/// One variant of [`Session::explore`]: its rank in the cost model's order, program and text.
pub struct Variant {
    pub rank: usize,
    pub program: ir::Program,
    pub source: String,
    pub description: String,
}

/// What exploration gave: the variants in the model's order, and the extracted terms whose
/// lowering was refused by type checking or validation (`rewrite::Stats::rejected`).
pub struct Explored {
    pub variants: Vec<Variant>,
    /// Why each rejected term was rejected (`rewrite::Stats::rejections`).
    pub rejections: Vec<String>,
    pub extracted: usize,
}

impl Session {
    /// Reads the program and its data (the refusals of [`interpret`]'s front end and loader).
    pub fn new(src: &str, data: &str) -> Result<Session, Refusal> {
        Ok(Session {
            loaded: load(src, data)?,
        })
    }

    pub fn sizes(&self) -> &std::collections::BTreeMap<String, i64> {
        &self.loaded.inputs.sizes
    }

    /// `rewrite::explore` as `lift tune` calls it, keeping up to `pool` variants: with this
    /// case's sizes known (decided and built in), or (`symbolic`) with none, as `lift explore`
    /// without `--size` and `lift compile` see the program.
    pub fn explore(&self, symbolic: bool, pool: usize) -> Result<Explored, Refusal> {
        let prog = &self.loaded.prog;
        let info = typeck::infer(prog).map_err(|d| Refusal::new(Stage::Front, d.message))?;
        let sizes = if symbolic {
            Default::default()
        } else {
            self.loaded.inputs.sizes.clone()
        };
        let ropts = rewrite::Options {
            sizes: sizes.clone(),
            top_k: pool.max(1),
            built_in: sizes,
            ..rewrite::Options::default()
        };
        let ex = rewrite::explore(prog, &info, &ropts).map_err(|d| Refusal::new(Stage::Compile, d.message))?;
        Ok(Explored {
            rejections: ex.stats.rejections,
            extracted: ex.stats.extracted,
            variants: ex
                .variants
                .into_iter()
                .enumerate()
                .map(|(rank, v)| Variant {
                    rank,
                    program: v.program,
                    source: v.source,
                    description: v.description,
                })
                .collect(),
        })
    }

    /// Compiles and runs one variant as `lift tune` measures it (`tune::measure`): as written,
    /// within the device's work-group limits, with the `mapGlb` work-group size `work_group`,
    /// the sizes built in unless `symbolic` (then generic kernels, as `lift compile` makes),
    /// and the variant's own size checks verified first.
    pub fn run(
        &self,
        prog: &ir::Program,
        symbolic: bool,
        work_group: &[usize],
        device: Option<&str>,
    ) -> Result<Value, Refusal> {
        let limit = host_runner::device_info(device).map_err(|e| Refusal::new(Stage::Run, e.to_string()))?;
        let opts = lift::Options {
            as_written: true,
            work_group: work_group.to_vec(),
            work_group_limit: Some(lift::work_group_limit(&limit)),
            sizes: self.loaded.inputs.sizes.clone(),
            specialise: !symbolic,
            ..lift::Options::default()
        };
        let c =
            lift::compile_program(prog.clone(), &opts).map_err(|e| Refusal::new(Stage::Compile, full_message(&e)))?;
        lift::verify_checks(&c.info, &self.loaded.inputs).map_err(|e| Refusal::new(Stage::Data, e.message()))?;
        let plan = c
            .plan
            .as_ref()
            .ok_or_else(|| Refusal::new(Stage::Compile, "internal: a variant without kernels"))?;
        lift::backend::run(plan, &self.loaded.inputs, device, false)
            .map(|(v, _)| v)
            .map_err(|e| Refusal::new(Stage::Run, full_message(&e)))
    }

    /// A variant's own value on the interpreter (to tell a wrong rewrite from wrong kernels).
    pub fn interpret(&self, prog: &ir::Program) -> Result<Value, Refusal> {
        let lookup = |n: &str| self.loaded.inputs.sizes.get(n).copied();
        let opts = ir::interp::Options {
            arith: ir::interp::Arith::Native,
            max_steps: Some(MAX_STEPS),
            precision: ir::Precision::F32,
        };
        ir::interp::eval_with(prog, &self.loaded.inputs.values, &lookup, &opts).map_err(|e| Refusal {
            stage: Stage::Run,
            step_limit: e.kind == ir::interp::ErrorKind::StepLimit,
            message: e.message,
        })
    }
}

/// The message and its notes (a build log is a note).
fn full_message(e: &lift::Error) -> String {
    match e {
        lift::Error::Source(d) => d.message.clone(),
        lift::Error::Invalid(ds) => ds.iter().map(|d| d.message.as_str()).collect::<Vec<_>>().join("\n"),
        lift::Error::Plain { message, notes } => {
            let mut s = message.clone();
            for n in notes {
                s.push('\n');
                s.push_str(n);
            }
            s
        }
    }
}

/// Equal within the tolerance the integration tests use.
pub fn close(expected: &Value, got: &Value) -> bool {
    lift::values_close(expected, got, 1e-4)
}

/// Whether `got` is within the interpreter's float32 error bounds (`bounded` from
/// [`interpret`] with `bounded = true`): `Ok(true)` within, `Ok(false)` wrong, `Err(why)` when no
/// bound says anything.
pub fn within_bounds(bounded: &Value, got: &Value) -> Result<bool, String> {
    match lift::tune::check_result(bounded, bounded, got) {
        lift::tune::Check::Ok { .. } => Ok(true),
        lift::tune::Check::Wrong(_) => Ok(false),
        lift::tune::Check::Unchecked(why) => Err(why),
        lift::tune::Check::NotRun => Err("not run".into()),
    }
}

/// The result as JSON text, as `lift run` prints it.
pub fn json(v: &Value) -> String {
    v.to_json()
}

/// For a test that needs an OpenCL device: whether there is one; without one it says that the
/// test is skipped, or fails the test where `LIFT_REQUIRE_OPENCL` demands the device (CI).
pub fn device_or_skip() -> bool {
    match host_runner::devices() {
        Ok(d) if !d.is_empty() => true,
        Ok(_) => {
            host_runner::skip_without_device("no OpenCL device");
            false
        }
        Err(e) => {
            host_runner::skip_without_device(&e.to_string());
            false
        }
    }
}
