//! Device arrays from Python: `lift.Array`, `Program.to_device`, calls on device arrays.
//!
//! A program's device calls run its C library (`lift build`'s, loaded by [`lift::app`]), built
//! at the first device use for the sizes `Program.tune` was last given (whose tuned kernels it
//! then holds) and generic kernels for every other size. Its context lives as long as the
//! program or any of its arrays; `Program.share` makes it on another program's device context, so
//! that the arrays of each are arguments of the other. NumPy memory is copied to and from the device directly (the
//! array's own buffer, no intermediate copy); a call whose arguments are all device arrays
//! moves no data.

use crate::{err, Program};
use lift::app::{Arg, Context, Elem, Scalar};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// A program's library and context, made at first use.
#[derive(Default)]
pub(crate) struct OnDevice {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The sizes of the last `tune`: the library is built for them.
    tuned: BTreeMap<String, i64>,
    /// Another program's context whose device context this one's is made on (`Program.share`).
    share: Option<Context>,
    ctx: Option<Context>,
}

impl OnDevice {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn bytes_moved(&self) -> i64 {
        self.lock().ctx.as_ref().map_or(0, Context::bytes_moved)
    }

    pub(crate) fn used(&self) -> String {
        self.lock().ctx.as_ref().map(Context::used).unwrap_or_default()
    }

    /// Makes the library anew at the next device use, with kernels built for `sizes`.
    pub(crate) fn rebuild(&self, sizes: BTreeMap<String, i64>) {
        let mut st = self.lock();
        st.tuned = sizes;
        st.ctx = None;
    }

    /// Makes the context anew at the next device use, on the device context of `other`.
    pub(crate) fn share(&self, other: Context) {
        let mut st = self.lock();
        st.share = Some(other);
        st.ctx = None;
    }

    /// Records `tune`'s sizes (`N=1024` …) for the library, when it is not made yet.
    pub(crate) fn tuned(&self, sizes: &[String]) {
        let mut st = self.lock();
        if st.ctx.is_none() {
            st.tuned = sizes
                .iter()
                .filter_map(|s| s.split_once('='))
                .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                .collect();
        }
    }
}

/// The C prefix of the library: the file's stem made a C identifier.
fn library_name(name: &str) -> String {
    let stem = std::path::Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("program");
    let mut n: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !n.starts_with(|c: char| c.is_ascii_alphabetic()) {
        n.insert_str(0, "p_");
    }
    n
}

fn dtype_elem(dtype: &str) -> Option<Elem> {
    Some(match dtype {
        "float32" => Elem::F32,
        "float64" => Elem::F64,
        "int32" => Elem::I32,
        "uint32" => Elem::U32,
        "int64" => Elem::I64,
        "uint64" => Elem::U64,
        _ => return None,
    })
}

fn elem_dtype(e: Elem) -> &'static str {
    match e {
        Elem::F32 => "float32",
        Elem::F64 => "float64",
        Elem::I32 => "int32",
        Elem::U32 => "uint32",
        Elem::I64 => "int64",
        Elem::U64 => "uint64",
    }
}

/// The address and byte length of a C-contiguous NumPy array's data.
fn data_of(a: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    let interface = a.getattr("__array_interface__")?;
    let data: (usize, bool) = interface.get_item("data")?.extract()?;
    let nbytes: usize = a.getattr("nbytes")?.extract()?;
    Ok((data.0, nbytes))
}

/// `x` (a NumPy array, or anything `numpy.asarray` takes) on the device of `ctx`.
pub(crate) fn upload(py: Python<'_>, ctx: &Context, x: &Bound<'_, PyAny>) -> PyResult<Array> {
    let np = py.import_bound("numpy")?;
    let a = np.call_method1("ascontiguousarray", (x,))?;
    let dtype: String = a.getattr("dtype")?.getattr("name")?.extract()?;
    let elem = dtype_elem(&dtype).ok_or_else(|| {
        err(format!(
            "error: a device array of dtype {dtype}: the element types are float32, float64, int32, uint32, int64 and uint64"
        ))
    })?;
    let shape: Vec<usize> = a.getattr("shape")?.extract()?;
    let (ptr, nbytes) = data_of(&a)?;
    // SAFETY: `a` is C-contiguous and alive for this call; `nbytes` is its data's length.
    let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, nbytes) };
    let array = py
        .allow_threads(|| ctx.array_from_bytes(elem, bytes, &shape))
        .map_err(|e| err(e.message()))?;
    Ok(Array { inner: array })
}

/// An array on a program's device: the result of a call on device arrays, or of
/// `Program.to_device`. `numpy()` copies it back.
#[pyclass(module = "lift", frozen)]
pub(crate) struct Array {
    inner: lift::app::Array,
}

#[pymethods]
impl Array {
    /// A NumPy array of the values (a copy from the device).
    fn numpy(&self, py: Python<'_>) -> PyResult<PyObject> {
        let np = py.import_bound("numpy")?;
        let out = np.call_method1("empty", (self.shape(py), elem_dtype(self.inner.elem())))?;
        let (ptr, nbytes) = data_of(&out)?;
        // SAFETY: `out` is a new C-contiguous array of exactly `nbytes` bytes, owned here.
        let bytes = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, nbytes) };
        py.allow_threads(|| self.inner.read_into(bytes))
            .map_err(|e| err(e.message()))?;
        Ok(out.into_py(py))
    }

    /// NumPy's conversion (`numpy.asarray(a)`): the values, as `numpy()`.
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__(&self, py: Python<'_>, dtype: Option<PyObject>, copy: Option<bool>) -> PyResult<PyObject> {
        let _ = copy;
        let a = self.numpy(py)?;
        match dtype {
            Some(d) => Ok(a.call_method1(py, "astype", (d,))?),
            None => Ok(a),
        }
    }

    /// The lengths, as a tuple.
    #[getter]
    fn shape(&self, py: Python<'_>) -> PyObject {
        PyTuple::new_bound(py, self.inner.shape()).into_py(py)
    }

    /// The NumPy dtype of the elements.
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(py
            .import_bound("numpy")?
            .call_method1("dtype", (elem_dtype(self.inner.elem()),))?
            .into_py(py))
    }

    fn __len__(&self) -> usize {
        self.inner.shape().first().copied().unwrap_or(0)
    }

    fn __repr__(&self) -> String {
        format!(
            "<lift.Array {} {:?} on the device>",
            elem_dtype(self.inner.elem()),
            self.inner.shape()
        )
    }
}

/// A Python scalar as parameter type `elem`, exactly (an int out of range is an error).
fn scalar(name: &str, v: &Bound<'_, PyAny>, elem: Elem) -> PyResult<Scalar> {
    let bad = |e: PyErr| {
        err(format!(
            "error: argument `{name}` must be a {} scalar: {e}",
            elem.name()
        ))
    };
    let v = if v.hasattr("item")? {
        v.call_method0("item")?
    } else {
        v.clone()
    };
    Ok(match elem {
        Elem::F32 => Scalar::F32(v.extract::<f64>().map_err(bad)? as f32),
        Elem::F64 => Scalar::F64(v.extract::<f64>().map_err(bad)?),
        Elem::I32 => Scalar::I32(v.extract().map_err(bad)?),
        Elem::U32 => Scalar::U32(v.extract().map_err(bad)?),
        Elem::I64 => Scalar::I64(v.extract().map_err(bad)?),
        Elem::U64 => Scalar::U64(v.extract().map_err(bad)?),
    })
}

impl Program {
    /// The program's context on its device, made (library built and loaded) at first use.
    pub(crate) fn context(&self, py: Python<'_>) -> PyResult<Context> {
        if self.interp {
            return Err(err("error: device arrays need the `opencl` backend"));
        }
        // Once made, the context is taken with the GIL held: whoever holds the lock never waits
        // for the GIL while holding it (the building below runs without the GIL).
        if let Some(c) = &self.on_device.lock().ctx {
            return Ok(c.clone());
        }
        // Building takes the lock without the GIL, so a thread waiting for it never holds the
        // GIL that the one building needs to return.
        py.allow_threads(|| {
            let mut st = self.on_device.lock();
            if let Some(c) = &st.ctx {
                return Ok(c.clone());
            }
            let opts = lift::app::BuildOptions {
                sizes: st.tuned.clone(),
                device: self.device.clone(),
                out: None,
                precision: lift::Precision::F32,
            };
            let lib = lift::app::Library::build(&library_name(&self.name), &self.src, &opts)?;
            let ctx = match &st.share {
                Some(other) => lib.context_with(other)?,
                None => lib.context(self.device.as_deref())?,
            };
            st.ctx = Some(ctx.clone());
            Ok(ctx)
        })
        .map_err(|e: lift::Error| err(e.render(&self.name, &self.src)))
    }

    /// A call with device arrays among `inputs`: NumPy arrays are copied to the device, scalars
    /// take the parameter's type, and the result stays on the device.
    pub(crate) fn run_on_device(&self, py: Python<'_>, inputs: Vec<(String, Bound<'_, PyAny>)>) -> PyResult<Array> {
        let ctx = self.context(py)?;
        let lib = ctx.library().clone();
        // Per parameter what it was given: a scalar, a NumPy array now copied to the device,
        // or a device array.
        enum Given {
            Scalar(Scalar),
            Uploaded(Array),
            Device(Py<Array>),
        }
        let mut given = vec![];
        for p in lib.params() {
            let Some((_, v)) = inputs.iter().find(|(n, _)| *n == p.name) else {
                return Err(err(format!("error: no data for parameter `{}`", p.name)));
            };
            given.push(if let Ok(a) = v.downcast::<Array>() {
                Given::Device(a.clone().unbind())
            } else if p.rank == 0 {
                Given::Scalar(scalar(&p.name, v, p.elem)?)
            } else {
                Given::Uploaded(upload(py, &ctx, v)?)
            });
        }
        if let Some((n, _)) = inputs.iter().find(|(n, _)| !lib.params().iter().any(|p| p.name == *n)) {
            return Err(err(format!("error: {} has no parameter `{n}`", self.name)));
        }
        let args: Vec<Arg> = given
            .iter()
            .map(|g| match g {
                Given::Scalar(s) => Arg::Scalar(*s),
                Given::Uploaded(u) => Arg::Array(&u.inner),
                Given::Device(d) => Arg::Array(&d.get().inner),
            })
            .collect();
        let result = py.allow_threads(|| ctx.run(&args)).map_err(|e| err(e.message()))?;
        Ok(Array { inner: result })
    }
}
