//! The Python module `lift`: load a LIFT program, call it on NumPy arrays and Python scalars,
//! list the OpenCL devices, tune a program for sizes.
//!
//! A call goes through [`lift::run_sources`], which is `lift run` on inputs held in memory: the
//! same compilation (the tuned variant for the inputs' sizes and the device, else the cost
//! model's), the same input checks and the same messages. Inputs cross as the bytes `lift run`
//! reads from files: a NumPy array as `.npy` bytes (so its dtype and shape are checked by the
//! loader that checks `--data x=file.npy`), anything else as one JSON object. Results come back
//! as `.npy` bytes read by NumPy, or as Python scalars and tuples.
//!
//! Every failure is a `lift.Error` whose message is the compiler's rendered one (file, line,
//! column and caret for errors in the program).
//!
//! Device arrays ([`device`]): `prog.to_device(x)` and any call with a `lift.Array` argument
//! go through [`lift::app`] instead, the program's C library loaded into the process (built at
//! the first such use), so results stay on the device and chain without transfers.

// The code PyO3 0.22's `#[pymethods]` and `#[pyfunction]` generate converts `PyErr` into itself.
#![allow(clippy::useless_conversion)]

mod device;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use ir::interp::Value;
use ir::Type;
use lift::data::DataSource;

// PyO3 0.22's macro tests a `gil-refs` feature of the calling crate, which newer compilers
// flag as an unknown cfg.
#[allow(unexpected_cfgs)]
mod exception {
    pyo3::create_exception!(
        lift,
        Error,
        pyo3::exceptions::PyException,
        "A LIFT error: a bad program, inputs that do not fit its parameters, no device, a failed run.\n\n\
         `str(e)` is the message `lift` prints for the same error."
    );
}
use exception::Error;

fn err(message: impl Into<String>) -> PyErr {
    Error::new_err(message.into().trim_end().to_string())
}

/// A loaded program, run by calling it.
#[pyclass(module = "lift", frozen)]
struct Program {
    src: String,
    /// The file name in messages.
    name: String,
    params: Vec<String>,
    sizes: Vec<String>,
    device: Option<String>,
    interp: bool,
    /// The program's library and context on the device, for device arrays; made at first use.
    on_device: device::OnDevice,
}

impl Program {
    fn new(src: String, name: String, device: Option<String>, backend: &str) -> PyResult<Program> {
        let interp = match backend {
            "opencl" => false,
            "interp" => true,
            other => {
                return Err(err(format!(
                    "unknown backend `{other}` (expected `opencl` or `interp`)"
                )))
            }
        };
        let typed = lift::compile(&src, &lift::Options::types_only()).map_err(|e| err(e.render(&name, &src)))?;
        let prog = &typed.given;
        let params = prog.params.iter().map(|p| prog.var(p.var).name.clone()).collect();
        let sizes = prog.sizes.clone();
        // A device that does not exist is an error now rather than at the first call; without
        // a device named, the first call says why none could be used.
        if let (Some(d), false) = (&device, interp) {
            lift::opencl::device_info(Some(d)).map_err(|e| err(lift::report::render_plain(&e.to_string(), &[])))?;
        }
        Ok(Program {
            src,
            name,
            params,
            sizes,
            device,
            interp,
            on_device: device::OnDevice::default(),
        })
    }

    fn run_with(
        &self,
        py: Python<'_>,
        inputs: Vec<(String, Bound<'_, PyAny>)>,
        sizes: Vec<(String, i64)>,
    ) -> PyResult<PyObject> {
        let np = py.import_bound("numpy")?;
        let io = py.import_bound("io")?;
        let json = py.import_bound("json")?;
        let generic = np.getattr("generic")?;
        let ndarray = np.getattr("ndarray")?;
        let mut sources = vec![];
        let plain = PyDict::new_bound(py);
        for (name, v) in inputs {
            if v.is_instance(&ndarray)? {
                // `.npy` keeps dtype and shape, so the loader checks them as for a file.
                let buf = io.call_method0("BytesIO")?;
                np.call_method1("save", (&buf, np.call_method1("ascontiguousarray", (&v,))?))?;
                let bytes: Vec<u8> = buf.call_method0("getvalue")?.extract()?;
                sources.push(DataSource::Npy {
                    file: format!("<argument {name}>"),
                    param: name,
                    bytes,
                });
            } else if v.is_instance(&generic)? {
                plain.set_item(name, v.call_method0("item")?)?;
            } else {
                plain.set_item(name, v)?;
            }
        }
        if !plain.is_empty() {
            let text: String = json
                .call_method1("dumps", (&plain,))
                .map_err(|e| err(format!("error: arguments that are not arrays must be numbers, booleans or (nested) lists and tuples of them: {e}")))?
                .extract()?;
            sources.push(DataSource::Json(text, "<arguments>".to_string()));
        }
        let opts = lift::RunOptions {
            device: self.device.clone(),
            time: false,
            interp: self.interp,
        };
        let result = py
            .allow_threads(|| lift::run_sources(&self.src, &sources, &sizes, &opts))
            .map_err(|e| err(e.render(&self.name, &self.src)))?;
        to_python(py, &result.value, &result.ty)
    }
}

#[pymethods]
impl Program {
    /// Runs the program: arguments by position in parameter order, or by parameter name.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        if args.len() > self.params.len() {
            return Err(err(format!(
                "error: {} takes {} argument{}, {} given",
                self.name,
                self.params.len(),
                if self.params.len() == 1 { "" } else { "s" },
                args.len()
            )));
        }
        let mut inputs: Vec<(String, Bound<'_, PyAny>)> = self.params.iter().cloned().zip(args.iter()).collect();
        for (k, v) in kwargs.into_iter().flatten() {
            let k: String = k.extract()?;
            if inputs.iter().any(|(n, _)| *n == k) {
                return Err(err(format!("error: parameter `{k}` given twice")));
            }
            inputs.push((k, v));
        }
        // A device array among the arguments: the call runs on the device and so does its result.
        if inputs.iter().any(|(_, v)| v.is_instance_of::<device::Array>()) {
            return self.run_on_device(py, inputs).map(|a| a.into_py(py));
        }
        self.run_with(py, inputs, vec![])
    }

    /// Runs the program on `inputs` (parameter name → value), with size variables that the
    /// inputs do not determine given in `sizes`.
    #[pyo3(signature = (inputs, sizes = None))]
    fn run(&self, py: Python<'_>, inputs: &Bound<'_, PyDict>, sizes: Option<&Bound<'_, PyDict>>) -> PyResult<PyObject> {
        let inputs = inputs
            .iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v)))
            .collect::<PyResult<Vec<_>>>()?;
        let sizes = sizes
            .into_iter()
            .flatten()
            .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<i64>()?)))
            .collect::<PyResult<Vec<_>>>()?;
        self.run_with(py, inputs, sizes)
    }

    /// Copies the NumPy array `x` to the program's device (a `lift.Array`), for calls whose
    /// results stay there.
    fn to_device(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<device::Array> {
        let ctx = self.context(py)?;
        device::upload(py, &ctx, x)
    }

    /// Builds the program's library for device arrays now (else it is built at the first device
    /// use), with kernels for `sizes` (as `lift build --size`; their tuned variant where `tune`
    /// found one) beside the generic ones. Device arrays made before belong to the previous
    /// library and cannot be passed to this one. Returns which variant the built kernels hold.
    #[pyo3(signature = (sizes = None))]
    fn build(&self, py: Python<'_>, sizes: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
        let sizes = sizes
            .into_iter()
            .flatten()
            .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<i64>()?)))
            .collect::<PyResult<std::collections::BTreeMap<_, _>>>()?;
        self.on_device.rebuild(sizes);
        let ctx = self.context(py)?;
        Ok(ctx.library().compiled_as())
    }

    /// Makes this program's device arrays live on the device context of `other` (its device,
    /// queue and arrays; `other`'s library is built now if it was not): the arrays of either
    /// program, results included, are arguments of the other's calls without a copy, and
    /// `bytes_moved` counts the shared context's copies. Arrays this program made before belong
    /// to its previous context and cannot be passed to it any more.
    fn share(&self, py: Python<'_>, other: &Bound<'_, Program>) -> PyResult<()> {
        let theirs = other.get().context(py)?;
        self.on_device.share(theirs);
        Ok(())
    }

    /// Bytes copied between the host and the device by the program's device context so far
    /// (`to_device`, `numpy()`, NumPy arguments of device calls): calls on device arrays alone
    /// move none. 0 before the first device use.
    #[getter]
    fn bytes_moved(&self) -> i64 {
        self.on_device.bytes_moved()
    }

    /// Which kernels the last call on device arrays ran: those built for the sizes `tune` was
    /// given, or the generic ones, and which variant of the program ("" before one).
    #[getter]
    fn used(&self) -> String {
        self.on_device.used()
    }

    /// Tunes the program for `sizes` on the program's device (every device without one), as
    /// `lift tune` does, searching for `budget` seconds (without one: the cost model's leading
    /// variants only). Later calls at these sizes run the best variant found. Returns the
    /// report `lift tune` prints.
    #[pyo3(signature = (sizes, budget = None))]
    fn tune(&self, py: Python<'_>, sizes: &Bound<'_, PyDict>, budget: Option<f64>) -> PyResult<String> {
        let sizes = sizes
            .iter()
            .map(|(k, v)| Ok(format!("{}={}", k.extract::<String>()?, v.extract::<i64>()?)))
            .collect::<PyResult<Vec<_>>>()?;
        let budget = match budget {
            Some(b) if !(b.is_finite() && b > 0.0) => {
                return Err(err(format!(
                    "error: the budget must be a positive number of seconds, not {b}"
                )))
            }
            b => b.map(std::time::Duration::from_secs_f64),
        };
        let devices = vec![self.device.clone().unwrap_or_else(|| "all".to_string())];
        let opts = lift::tune::TuneOptions {
            budget,
            ..lift::tune::TuneOptions::default()
        };
        let report = py
            .allow_threads(|| lift::tune::tune_with(&self.src, &sizes, &devices, &opts))
            .map_err(|e| err(e.render(&self.name, &self.src)))?;
        // Device arrays made from now on run the tuned kernels at these sizes.
        self.on_device.tuned(&sizes);
        Ok(report)
    }

    /// The parameter names, in order.
    #[getter]
    fn params(&self) -> Vec<String> {
        self.params.clone()
    }

    /// The size variables, in declaration order.
    #[getter]
    fn sizes(&self) -> Vec<String> {
        self.sizes.clone()
    }

    /// The device asked for (`None`: the default device).
    #[getter]
    fn device(&self) -> Option<String> {
        self.device.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<lift.Program {} ({}){}>",
            self.name,
            self.params.join(", "),
            if self.interp { " on the interpreter" } else { "" }
        )
    }
}

/// A result value as Python: arrays as NumPy arrays (lists where they hold tuples), tuples as
/// tuples, scalars as `float`, `int` or `bool`.
fn to_python(py: Python<'_>, v: &Value, ty: &Type) -> PyResult<PyObject> {
    Ok(match (v, ty) {
        (Value::Tuple(vs), Type::Tuple(ts)) => {
            let items = vs
                .iter()
                .zip(ts)
                .map(|(v, t)| to_python(py, v, t))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new_bound(py, items).into_py(py)
        }
        (Value::Array(vs), Type::Array(e, _) | Type::Exists(e)) if has_tuple(e) => {
            let items = vs.iter().map(|v| to_python(py, v, e)).collect::<PyResult<Vec<_>>>()?;
            PyList::new_bound(py, items).into_py(py)
        }
        (Value::Array(_) | Value::Vector(_), _) => {
            let bytes =
                lift::data::value_to_npy(v, ty).map_err(|e| err(lift::report::render_plain(&e.message, &e.notes)))?;
            let buf = py
                .import_bound("io")?
                .call_method1("BytesIO", (PyBytes::new_bound(py, &bytes),))?;
            py.import_bound("numpy")?.call_method1("load", (buf,))?.into_py(py)
        }
        (Value::Float(x), _) => f64::from(*x).into_py(py),
        (Value::Double(x), _) => x.into_py(py),
        (Value::Int(x), _) => x.into_py(py),
        (Value::Uint(x), _) => x.into_py(py),
        (Value::Long(x), _) => x.into_py(py),
        (Value::Ulong(x), _) => x.into_py(py),
        (Value::Bool(x), _) => x.into_py(py),
        (v, t) => return Err(err(format!("internal: a result {v:?} of type {t} has no Python form"))),
    })
}

fn has_tuple(t: &Type) -> bool {
    match t {
        Type::Tuple(_) => true,
        Type::Array(e, _) | Type::Exists(e) => has_tuple(e),
        _ => false,
    }
}

/// Loads the program in file `path`. `device`: an OpenCL device as `lift run --device` takes it
/// (an id `P:D` or part of its name; `None`: the default device); `backend`: `"opencl"`, or
/// `"interp"` for the reference interpreter.
#[pyfunction]
#[pyo3(signature = (path, device = None, backend = "opencl"))]
fn load(path: std::path::PathBuf, device: Option<String>, backend: &str) -> PyResult<Program> {
    let name = path.display().to_string();
    let src = std::fs::read_to_string(&path).map_err(|e| err(format!("error: cannot read {name}: {e}")))?;
    Program::new(src, name, device, backend)
}

/// Loads a program from its text; `name` stands for the file in messages.
#[pyfunction]
#[pyo3(signature = (source, name = "<string>", device = None, backend = "opencl"))]
fn loads(source: String, name: &str, device: Option<String>, backend: &str) -> PyResult<Program> {
    Program::new(source, name.to_string(), device, backend)
}

/// The OpenCL devices, as `lift devices` lists them: dicts with `id` (`P:D`), `name`, `type`
/// (`GPU`, `CPU`, …) and `platform`.
#[pyfunction]
fn devices(py: Python<'_>) -> PyResult<Vec<PyObject>> {
    let devs = lift::opencl::devices().map_err(|e| err(lift::report::render_plain(&e.to_string(), &[])))?;
    devs.iter()
        .map(|d| {
            let o = PyDict::new_bound(py);
            o.set_item("id", &d.id)?;
            o.set_item("name", &d.name)?;
            o.set_item("type", d.kind.to_string())?;
            o.set_item("platform", &d.platform)?;
            Ok(o.into_py(py))
        })
        .collect()
}

/// Run LIFT programs on NumPy arrays through OpenCL.
#[pymodule]
#[pyo3(name = "lift")]
fn lift_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type_bound::<Error>())?;
    m.add_class::<Program>()?;
    m.add_class::<device::Array>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    Ok(())
}
