//! A compiled program used from a Rust application: [`Library`] (a program built by `lift build`
//! and loaded into the process), [`Context`] (a device, its queue and the kernels), [`Array`]
//! (a device array that stays on the device between calls) and [`Context::run`].
//!
//! This is the C library of [`crate::library`] seen from Rust, through the untyped entry points
//! every library has (`<prog>_signature`, `<prog>_call`, `<prog>_array_*`): Rust, Python and C
//! run the same generated host code, with its checks, its lock and its messages. Loading needs
//! the system C compiler (`$CC`, else `cc`) and the OpenCL ICD loader, as `lift build` does.
//!
//! A library holds the kernels built for the sizes it was built for (if any) and generic kernels
//! that take every size as an argument; [`Context::used`] says which the last call ran. Calls on
//! one context are serialised by the library's lock, so a [`Context`] is `Send` and `Sync`;
//! separate contexts run independently. Arrays are freed when dropped, and keep their context
//! alive.
//!
//! Arrays of every element type the C library has (`f32`, `f64`, `i32`, `u32`, `i64`, `u64`:
//! [`Element`]) are made, passed and read the same way; arrays of tuples are refused by `lift
//! build` itself. Programs are chained on one device by sharing a context:
//! [`Library::context_with`] opens a program's context on another's device, queue and arrays, so
//! that one program's result is the next program's argument with no copy.
//!
//! ```
//! use lift::app::{BuildOptions, Library};
//! # fn main() -> Result<(), lift::Error> {
//! # // Needs an OpenCL device (PoCL in CI) and a C compiler, as `lift build` does.
//! # if lift::opencl::devices().map_or(true, |d| d.is_empty()) { return Ok(()); }
//! let square = Library::build(
//!     "square",
//!     "(lift (N) ((array-type int N)) (lambda (xs) (map (lambda (x) (* x x)) xs)))",
//!     &BuildOptions::default(),
//! )?;
//! let total = Library::build(
//!     "total",
//!     "(lift (N) ((array-type int N) int) (lambda (xs k) (map (lambda (x) (+ x k)) xs)))",
//!     &BuildOptions::default(),
//! )?;
//! let a = square.context(None)?;
//! let b = total.context_with(&a)?; // the device, queue and arrays of `a`
//! let xs = a.array(&[1i32, -2, 3], &[3])?;
//! let moved = a.bytes_moved();
//! let squares = a.run(&[(&xs).into()])?;
//! let shifted = b.run(&[(&squares).into(), 10i32.into()])?; // no copy between the programs
//! assert_eq!(a.bytes_moved(), moved);
//! assert_eq!(shifted.to_vec::<i32>()?, vec![11, 14, 19]);
//! # Ok(())
//! # }
//! ```

use crate::Error;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Element types of arrays and scalars, as the library's signature names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    F32,
    F64,
    I32,
    U32,
    I64,
    U64,
}

impl Elem {
    fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            "i32" => Elem::I32,
            "u32" => Elem::U32,
            "i64" => Elem::I64,
            "u64" => Elem::U64,
            _ => return None,
        })
    }

    /// The name in the library's signature (`f32`, …), which is also NumPy's kind and width.
    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::I32 => "i32",
            Elem::U32 => "u32",
            Elem::I64 => "i64",
            Elem::U64 => "u64",
        }
    }

    pub fn bytes(self) -> usize {
        match self {
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
            Elem::F64 | Elem::I64 | Elem::U64 => 8,
        }
    }
}

/// A Rust type an array can hold.
pub trait Element: Copy + Default + private::Sealed {
    const ELEM: Elem;
}

mod private {
    pub trait Sealed {}
}

macro_rules! element {
    ($($t:ty => $e:ident),*) => {$(
        impl private::Sealed for $t {}
        impl Element for $t {
            const ELEM: Elem = Elem::$e;
        }
        impl From<$t> for Arg<'_> {
            fn from(v: $t) -> Self {
                Arg::Scalar(Scalar::$e(v))
            }
        }
    )*};
}

/// A scalar argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    F32(f32),
    F64(f64),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
}

impl Scalar {
    pub fn elem(&self) -> Elem {
        match self {
            Scalar::F32(_) => Elem::F32,
            Scalar::F64(_) => Elem::F64,
            Scalar::I32(_) => Elem::I32,
            Scalar::U32(_) => Elem::U32,
            Scalar::I64(_) => Elem::I64,
            Scalar::U64(_) => Elem::U64,
        }
    }

    /// The value's bytes as the C parameter takes them.
    fn bytes(&self) -> [u8; 8] {
        let mut b = [0; 8];
        match self {
            Scalar::F32(v) => b[..4].copy_from_slice(&v.to_ne_bytes()),
            Scalar::F64(v) => b.copy_from_slice(&v.to_ne_bytes()),
            Scalar::I32(v) => b[..4].copy_from_slice(&v.to_ne_bytes()),
            Scalar::U32(v) => b[..4].copy_from_slice(&v.to_ne_bytes()),
            Scalar::I64(v) => b.copy_from_slice(&v.to_ne_bytes()),
            Scalar::U64(v) => b.copy_from_slice(&v.to_ne_bytes()),
        }
        b
    }
}

/// An argument of [`Context::run`]: a scalar (`2.0f32.into()`) or a device array (`(&xs).into()`).
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Scalar(Scalar),
    Array(&'a Array),
}

element!(f32 => F32, f64 => F64, i32 => I32, u32 => U32, i64 => I64, u64 => U64);

impl<'a> From<&'a Array> for Arg<'a> {
    fn from(a: &'a Array) -> Self {
        Arg::Array(a)
    }
}

/// A parameter or the result: element type and rank (0: a scalar).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub elem: Elem,
    pub rank: usize,
}

/// How [`Library::build`] compiles.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Sizes to build kernels for (`lift build --size`); other sizes run the generic kernels.
    pub sizes: BTreeMap<String, i64>,
    /// The device to tune for and take limits from (`lift build --device`).
    pub device: Option<String>,
    /// Where to write the header, C source and `.so`; `None`: a temporary folder, removed once
    /// the library is loaded.
    pub out: Option<PathBuf>,
    /// `lift build --precision` (`tf32` is refused where the device has no TF32 tensor cores).
    pub precision: crate::Precision,
}

type Text = unsafe extern "C" fn() -> *const c_char;
type CtxNew = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type CtxShare = unsafe extern "C" fn(*const c_void) -> *mut c_void;
type CtxFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type CtxStr = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type CtxCount = unsafe extern "C" fn(*mut c_void) -> i64;
type Signature = unsafe extern "C" fn() -> *const c_char;
type Call = unsafe extern "C" fn(*mut c_void, *mut *mut c_void, *const *mut c_void) -> c_int;
type ArrayNew = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const i64, *const c_void) -> *mut c_void;
type ArrayValues = unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void) -> c_int;
type ArrayShape = unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_int) -> *const i64;
type ArrayFree = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;

/// A program's library, loaded. It stays loaded for the rest of the process (contexts and
/// arrays may outlive the value).
pub struct Library {
    name: String,
    params: Vec<Param>,
    result: Param,
    compiled_as: Text,
    ctx_new: CtxNew,
    ctx_share: CtxShare,
    ctx_free: CtxFn,
    error: CtxStr,
    used: CtxStr,
    arrays: CtxCount,
    transfers: CtxCount,
    call: Call,
    array_new: ArrayNew,
    array_values: ArrayValues,
    array_shape: ArrayShape,
    array_free: ArrayFree,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Library({})", self.name)
    }
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by the C library.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-NULL, NUL-terminated (above).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

impl Library {
    /// Compiles the program `source` into a library named `name` (a C identifier: the prefix of
    /// its functions) and loads it.
    pub fn build(name: &str, source: &str, opts: &BuildOptions) -> Result<Arc<Library>, Error> {
        let temp;
        let dir = match &opts.out {
            Some(d) => d.clone(),
            None => {
                static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
                let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                temp = std::env::temp_dir().join(format!("lift-library-{}-{n}", std::process::id()));
                temp.clone()
            }
        };
        let built = crate::library::build(
            Path::new(&format!("{name}.lisp")),
            source,
            &opts.sizes,
            opts.device.as_deref(),
            &dir,
            opts.precision,
        );
        let loaded = built.and_then(|b| Library::open(&b.library, name));
        if opts.out.is_none() {
            // Once loaded, the files are no longer needed.
            let _ = std::fs::remove_dir_all(&dir);
        }
        loaded
    }

    /// Compiles the program in file `path` (the library is named after the file, as by `lift
    /// build`) and loads it.
    pub fn build_file(path: &Path, opts: &BuildOptions) -> Result<Arc<Library>, Error> {
        let source =
            std::fs::read_to_string(path).map_err(|e| Error::plain(format!("cannot read {}: {e}", path.display())))?;
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        Library::build(name, &source, opts)
    }

    /// Loads the library `lib<name>.so` that `lift build` wrote at `path`.
    pub fn open(path: &Path, name: &str) -> Result<Arc<Library>, Error> {
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::plain(format!("{} has a NUL byte", path.display())))?;
        // SAFETY: a NUL-terminated path; the handle is never closed, so the functions taken
        // from it stay valid for the process.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(Error::plain(format!("cannot load {}: {}", path.display(), dl_error())));
        }
        let sym = |f: &str| -> Result<*mut c_void, Error> {
            let n = CString::new(format!("{name}_{f}")).map_err(|_| Error::plain("a NUL byte in the name"))?;
            // SAFETY: `handle` is a live handle and `n` NUL-terminated.
            let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
            if p.is_null() {
                Err(Error::plain(format!(
                    "{} has no function {name}_{f}: not a library of `lift build` named `{name}`, or of an older one",
                    path.display()
                )))
            } else {
                Ok(p)
            }
        };
        // SAFETY (every transmute below): each symbol is the function of that name the
        // generated header declares, with the C signature its type alias spells.
        unsafe {
            let signature: Signature = std::mem::transmute::<*mut c_void, Signature>(sym("signature")?);
            let text = CStr::from_ptr(signature()).to_string_lossy().into_owned();
            let (params, result) = parse_signature(&text)
                .ok_or_else(|| Error::plain(format!("{}: cannot read its signature `{text}`", path.display())))?;
            Ok(Arc::new(Library {
                name: name.to_string(),
                params,
                result,
                compiled_as: std::mem::transmute::<*mut c_void, Text>(sym("compiled_as")?),
                ctx_new: std::mem::transmute::<*mut c_void, CtxNew>(sym("ctx_new")?),
                ctx_share: std::mem::transmute::<*mut c_void, CtxShare>(sym("ctx_share")?),
                ctx_free: std::mem::transmute::<*mut c_void, CtxFn>(sym("ctx_free")?),
                error: std::mem::transmute::<*mut c_void, CtxStr>(sym("error")?),
                used: std::mem::transmute::<*mut c_void, CtxStr>(sym("used")?),
                arrays: std::mem::transmute::<*mut c_void, CtxCount>(sym("ctx_arrays")?),
                transfers: std::mem::transmute::<*mut c_void, CtxCount>(sym("ctx_transfers")?),
                call: std::mem::transmute::<*mut c_void, Call>(sym("call")?),
                array_new: std::mem::transmute::<*mut c_void, ArrayNew>(sym("array_new")?),
                array_values: std::mem::transmute::<*mut c_void, ArrayValues>(sym("array_values")?),
                array_shape: std::mem::transmute::<*mut c_void, ArrayShape>(sym("array_shape")?),
                array_free: std::mem::transmute::<*mut c_void, ArrayFree>(sym("array_free")?),
            }))
        }
    }

    /// The program's name (the prefix of its C functions).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameters, in order.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// What the library's first kernels compute: the variant, and the sizes built in (or that
    /// they are the generic ones).
    pub fn compiled_as(&self) -> String {
        // SAFETY: a NUL-terminated static string of the library.
        unsafe { CStr::from_ptr((self.compiled_as)()) }
            .to_string_lossy()
            .into_owned()
    }

    /// The result (`name` is empty).
    pub fn result(&self) -> &Param {
        &self.result
    }

    /// A context on `device` (an id `P:D` as `lift devices` prints it, or part of a device's
    /// name; `None`: the first GPU, else the first device), with the kernels built.
    pub fn context(self: &Arc<Self>, device: Option<&str>) -> Result<Context, Error> {
        let d = device
            .map(CString::new)
            .transpose()
            .map_err(|_| Error::plain("a NUL byte in the device name"))?;
        // SAFETY: `ctx_new` takes NULL or a NUL-terminated string.
        let ctx = unsafe { (self.ctx_new)(d.as_ref().map_or(std::ptr::null(), |d| d.as_ptr())) };
        if ctx.is_null() {
            return Err(Error::plain("out of host memory creating a context"));
        }
        self.opened(ctx, Arc::new(()))
    }

    /// A context of this program on the device, queue and arrays of `other` (a context of this
    /// library or of another program's): arrays of either are arguments of both, with no copy,
    /// and calls on the two are serialised by one lock. [`Context::live_arrays`] and
    /// [`Context::bytes_moved`] then count the shared arrays.
    pub fn context_with(self: &Arc<Self>, other: &Context) -> Result<Context, Error> {
        // SAFETY: `other.0.ctx` is a live context (held by `other`) of a library of this
        // runtime, whose magic numbers `ctx_share` checks.
        let ctx = unsafe { (self.ctx_share)(other.0.ctx) };
        if ctx.is_null() {
            return Err(Error::plain("out of host memory creating a context"));
        }
        // The device context lives while any context on it does (the C runtime counts them);
        // the group only says which contexts' arrays are each other's.
        self.opened(ctx, other.0.group.clone())
    }

    fn opened(self: &Arc<Self>, ctx: *mut c_void, group: Arc<()>) -> Result<Context, Error> {
        let inner = Arc::new(ContextInner {
            lib: self.clone(),
            ctx,
            group,
        });
        let message = inner.error();
        if message.is_empty() {
            Ok(Context(inner))
        } else {
            Err(Error::plain(message))
        }
    }
}

fn parse_signature(text: &str) -> Option<(Vec<Param>, Param)> {
    let (params, result) = text.split_once(" -> ")?;
    let param = |p: &str, named: bool| -> Option<Param> {
        let mut parts = p.rsplitn(3, ':');
        let rank = parts.next()?.parse().ok()?;
        let elem = Elem::parse(parts.next()?)?;
        let name = if named {
            parts.next()?.to_string()
        } else {
            String::new()
        };
        Some(Param { name, elem, rank })
    };
    let params = params
        .split_whitespace()
        .map(|p| param(p, true))
        .collect::<Option<Vec<_>>>()?;
    Some((params, param(result.trim(), false)?))
}

struct ContextInner {
    lib: Arc<Library>,
    ctx: *mut c_void,
    /// Shared by the contexts on one device context ([`Library::context_with`]): their arrays
    /// are arguments of each other's runs.
    group: Arc<()>,
}

// SAFETY: every function of the library takes the context's lock (or the library's list lock)
// before touching it, so the pointer may be used from any thread.
unsafe impl Send for ContextInner {}
unsafe impl Sync for ContextInner {}

impl ContextInner {
    fn error(&self) -> String {
        // SAFETY: `error` returns a NUL-terminated string that lives as long as the context.
        unsafe { CStr::from_ptr((self.lib.error)(self.ctx)) }
            .to_string_lossy()
            .into_owned()
    }

    fn fail(&self) -> Error {
        Error::plain(self.error())
    }
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // Every array holds the context, so none is left; a failure cannot be reported here.
        // SAFETY: the context is live and freed once.
        unsafe { (self.lib.ctx_free)(self.ctx) };
    }
}

/// A device with its queue and the program's kernels. Cheap to clone (shared); `Send + Sync`.
#[derive(Clone)]
pub struct Context(Arc<ContextInner>);

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Context({})", self.0.lib.name)
    }
}

impl Context {
    /// A device array holding `data`, row-major, of `shape` (its lengths' product is
    /// `data.len()`).
    pub fn array<T: Element>(&self, data: &[T], shape: &[usize]) -> Result<Array, Error> {
        let n: usize = shape.iter().product();
        if n != data.len() {
            return Err(Error::plain(format!(
                "shape {shape:?} has {n} elements, but the data has {}",
                data.len()
            )));
        }
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let elem = CString::new(T::ELEM.name()).map_err(|_| Error::plain("internal: element name"))?;
        // SAFETY: `dims` has `shape.len()` entries and `data` the product of them.
        let h = unsafe {
            (self.0.lib.array_new)(
                self.0.ctx,
                elem.as_ptr(),
                shape.len() as c_int,
                dims.as_ptr(),
                data.as_ptr().cast(),
            )
        };
        if h.is_null() {
            return Err(self.0.fail());
        }
        Ok(Array {
            ctx: self.0.clone(),
            handle: h,
            elem: T::ELEM,
            shape: shape.to_vec(),
        })
    }

    /// Runs the program on `args` (in parameter order). The result stays on the device: pass it
    /// to the next call, or read it with [`Array::to_vec`].
    pub fn run(&self, args: &[Arg]) -> Result<Array, Error> {
        let lib = &self.0.lib;
        if args.len() != lib.params.len() {
            return Err(Error::plain(format!(
                "{} takes {} arguments, {} given",
                lib.name,
                lib.params.len(),
                args.len()
            )));
        }
        let mut scalars: Vec<[u8; 8]> = Vec::with_capacity(args.len());
        for (a, p) in args.iter().zip(&lib.params) {
            match (a, p.rank) {
                (Arg::Scalar(s), 0) if s.elem() == p.elem => scalars.push(s.bytes()),
                (Arg::Array(arr), r) if r > 0 && arr.elem == p.elem && arr.shape.len() == r => {
                    scalars.push([0; 8]);
                    if !Arc::ptr_eq(&arr.ctx.group, &self.0.group) {
                        return Err(Error::plain(format!(
                            "argument `{}` is an array of another context",
                            p.name
                        )));
                    }
                }
                _ => {
                    let want = if p.rank == 0 {
                        format!("a {} scalar", p.elem.name())
                    } else {
                        format!("an array of {} of rank {}", p.elem.name(), p.rank)
                    };
                    let got = match a {
                        Arg::Scalar(s) => format!("a {} scalar", s.elem().name()),
                        Arg::Array(arr) => format!("an array of {} of rank {}", arr.elem.name(), arr.shape.len()),
                    };
                    return Err(Error::plain(format!("argument `{}` must be {want}, not {got}", p.name)));
                }
            }
        }
        let ptrs: Vec<*mut c_void> = args
            .iter()
            .zip(scalars.iter_mut())
            .map(|(a, s)| match a {
                Arg::Scalar(_) => s.as_mut_ptr().cast(),
                Arg::Array(arr) => arr.handle,
            })
            .collect();
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: one pointer per parameter: to the scalar's bytes or the array's handle.
        let rc = unsafe { (lib.call)(self.0.ctx, &mut out, ptrs.as_ptr()) };
        if rc != 0 || out.is_null() {
            return Err(self.0.fail());
        }
        let mut rank: c_int = 0;
        // SAFETY: `out` is a live array of this context; its shape has `rank` entries.
        let shape = unsafe {
            let s = (lib.array_shape)(self.0.ctx, out, &mut rank);
            if s.is_null() {
                return Err(self.0.fail());
            }
            std::slice::from_raw_parts(s, rank as usize)
                .iter()
                .map(|&d| d as usize)
                .collect()
        };
        Ok(Array {
            ctx: self.0.clone(),
            handle: out,
            elem: lib.result.elem,
            shape,
        })
    }

    /// Which kernels the last successful run used (built for the library's sizes, or the
    /// generic ones) and which variant of the program they compute.
    pub fn used(&self) -> String {
        // SAFETY: `used` returns a NUL-terminated string of the library.
        unsafe { CStr::from_ptr((self.0.lib.used)(self.0.ctx)) }
            .to_string_lossy()
            .into_owned()
    }

    /// How many arrays of this context are alive.
    pub fn live_arrays(&self) -> i64 {
        // SAFETY: the context is live while `self` is.
        unsafe { (self.0.lib.arrays)(self.0.ctx) }
    }

    /// Bytes copied between host and device by this context so far (arrays made and read, the
    /// 4-byte error flags of runs whose kernels have checks): runs on device arrays move none
    /// of their data.
    pub fn bytes_moved(&self) -> i64 {
        // SAFETY: the context is live while `self` is.
        unsafe { (self.0.lib.transfers)(self.0.ctx) }
    }

    pub fn library(&self) -> &Arc<Library> {
        &self.0.lib
    }
}

/// A device array of one context, freed when dropped.
pub struct Array {
    ctx: Arc<ContextInner>,
    handle: *mut c_void,
    elem: Elem,
    shape: Vec<usize>,
}

// SAFETY: the handle is only passed to the library's functions, which take the context's lock.
unsafe impl Send for Array {}
unsafe impl Sync for Array {}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Array({} {:?})", self.elem.name(), self.shape)
    }
}

impl Array {
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn elem(&self) -> Elem {
        self.elem
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the array to the host, row-major.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, Error> {
        if T::ELEM != self.elem {
            return Err(Error::plain(format!(
                "the array holds {}, not {}",
                self.elem.name(),
                T::ELEM.name()
            )));
        }
        let mut out = vec![T::default(); self.len()];
        // SAFETY: `out` has room for every element of the array.
        let rc = unsafe { (self.ctx.lib.array_values)(self.ctx.ctx, self.handle, out.as_mut_ptr().cast()) };
        if rc != 0 {
            return Err(self.ctx.fail());
        }
        Ok(out)
    }

    /// Copies the array's bytes (native endianness) into `out`, which must hold exactly
    /// `len() * elem().bytes()` bytes: for bindings that own their buffers (NumPy).
    pub fn read_into(&self, out: &mut [u8]) -> Result<(), Error> {
        if out.len() != self.len() * self.elem.bytes() {
            return Err(Error::plain(format!(
                "a destination of {} bytes for an array of {}",
                out.len(),
                self.len() * self.elem.bytes()
            )));
        }
        // SAFETY: `out` has room for every element (checked above).
        let rc = unsafe { (self.ctx.lib.array_values)(self.ctx.ctx, self.handle, out.as_mut_ptr().cast()) };
        if rc != 0 {
            return Err(self.ctx.fail());
        }
        Ok(())
    }

    /// The array's context.
    pub fn context(&self) -> Context {
        Context(self.ctx.clone())
    }
}

impl Context {
    /// A device array of `elem` from raw bytes (native endianness, row-major): for bindings.
    pub fn array_from_bytes(&self, elem: Elem, data: &[u8], shape: &[usize]) -> Result<Array, Error> {
        let n: usize = shape.iter().product();
        if n * elem.bytes() != data.len() {
            return Err(Error::plain(format!(
                "shape {shape:?} of {} needs {} bytes, but the data has {}",
                elem.name(),
                n * elem.bytes(),
                data.len()
            )));
        }
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let name = CString::new(elem.name()).map_err(|_| Error::plain("internal: element name"))?;
        // SAFETY: `dims` has `shape.len()` entries and `data` their product of elements.
        let h = unsafe {
            (self.0.lib.array_new)(
                self.0.ctx,
                name.as_ptr(),
                shape.len() as c_int,
                dims.as_ptr(),
                data.as_ptr().cast(),
            )
        };
        if h.is_null() {
            return Err(self.0.fail());
        }
        Ok(Array {
            ctx: self.0.clone(),
            handle: h,
            elem,
            shape: shape.to_vec(),
        })
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        // SAFETY: the handle is live and freed once; the context outlives it (held by `ctx`).
        unsafe { (self.ctx.lib.array_free)(self.ctx.ctx, self.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_signature, Elem};

    #[test]
    fn a_signature_names_parameters_and_result() {
        let (params, result) = parse_signature("alpha:f32:0 xs:f32:1 m:i64:2 -> u32:1").expect("parses");
        assert_eq!(params.len(), 3);
        assert_eq!(
            (params[0].name.as_str(), params[0].elem, params[0].rank),
            ("alpha", Elem::F32, 0)
        );
        assert_eq!(
            (params[2].name.as_str(), params[2].elem, params[2].rank),
            ("m", Elem::I64, 2)
        );
        assert_eq!((result.elem, result.rank), (Elem::U32, 1));
        assert!(parse_signature(" -> f32:1").is_some_and(|(p, _)| p.is_empty()));
        assert!(parse_signature("x:f16:1 -> f32:1").is_none());
    }
}
