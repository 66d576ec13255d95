"""Run LIFT programs on NumPy arrays through OpenCL.

``lift.load(path)`` reads and type-checks a program; calling the returned :class:`Program`
runs it as ``lift run`` does: compiled for the device and the sizes of the inputs (the tuned
variant when ``lift tune`` or :meth:`Program.tune` found one, else the cost model's), with the
same checks on the inputs and the same messages. Every failure raises :class:`Error`.

Device arrays: ``prog.to_device(x)`` copies a NumPy array to the program's device and returns
an :class:`Array`; a call with an :class:`Array` among its arguments runs on the device and
returns an :class:`Array` too, so ``y = prog(a, prog(a, xs, ys), ys)`` moves no data between
the calls, and ``y.numpy()`` copies the values back. These calls run the program's C library
(``lift build``'s, built and loaded at the first device use): kernels built for the sizes of the
last :meth:`Program.tune`, and generic kernels (sizes as arguments) for every other size.
"""

from os import PathLike
from typing import Any, List, Mapping, Optional, Tuple, TypedDict, Union

import numpy as np
import numpy.typing as npt

#: What a parameter takes: a NumPy array of the declared element type and rank, a device
#: :class:`Array`, a Python or NumPy scalar, or (nested) lists and tuples of them (a tuple
#: parameter as a tuple or list).
Input = Union[npt.NDArray[Any], "Array", float, int, bool, np.generic, List[Any], Tuple[Any, ...]]

#: What a program returns: a NumPy array for an array of scalars or vectors (a vector is the
#: last dimension), a list for an array of tuples, a tuple for a tuple, else a Python scalar.
Result = Union[npt.NDArray[Any], float, int, bool, List[Any], Tuple[Any, ...]]

class Error(Exception):
    """A LIFT error: a bad program, inputs that do not fit its parameters, no device, a
    failed run. ``str(e)`` is the message ``lift`` prints for the same error."""

class DeviceInfo(TypedDict):
    """A device as :func:`devices` lists it, a plain ``dict`` (this name, like ``Input`` and
    ``Result``, exists for type checkers only)."""

    id: str
    """``"P:D"``: platform and device index, as ``device=`` takes it."""
    name: str
    type: str
    """``"GPU"``, ``"CPU"``, ``"Accelerator"`` or ``"Other"``."""
    platform: str

class Array:
    """An array on a program's device: what :meth:`Program.to_device` returns, and the result of
    a call with device arrays among its arguments. It belongs to the program (the context) that
    made it, and is freed when no longer referenced. Element types: float32, float64, int32,
    uint32, int64, uint64."""

    @property
    def shape(self) -> Tuple[int, ...]:
        """The lengths."""
    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of the elements."""
    def numpy(self) -> npt.NDArray[Any]:
        """A NumPy array of the values, copied from the device."""
    def __array__(self, dtype: Optional[Any] = None, copy: Optional[bool] = None) -> npt.NDArray[Any]:
        """``numpy.asarray(a)``: as :meth:`numpy`."""
    def __len__(self) -> int:
        """The outer length."""

class Program:
    """A loaded, type-checked program. Call it to run it."""

    @property
    def params(self) -> List[str]:
        """The parameter names, in order."""
    @property
    def sizes(self) -> List[str]:
        """The size variables, in declaration order."""
    @property
    def device(self) -> Optional[str]:
        """The device asked for at load (``None``: the default device)."""
    @property
    def bytes_moved(self) -> int:
        """Bytes copied between the host and the device by the program's device context so far
        (:meth:`to_device`, :meth:`Array.numpy`, NumPy arguments of device calls): calls on device
        arrays alone move none. ``0`` before the first device use."""
    @property
    def used(self) -> str:
        """Which kernels the last call on device arrays ran: those built for the sizes of the last
        :meth:`tune`, or the generic ones, and which variant of the program (``""`` before one)."""
    def __call__(self, *args: Input, **kwargs: Input) -> Union[Result, Array]:
        """Runs the program on arguments given by position (in parameter order) or by name.

        Sizes come from the arguments' shapes. With an :class:`Array` among the arguments the
        call runs on the device: NumPy arguments are copied there, scalars take the parameter's
        type, and the result is an :class:`Array` (the result must be an array of numbers).
        Raises :class:`Error` on inputs of the wrong dtype or shape, a missing or unknown
        parameter, a device array of another program, or when no device can run it."""
    def build(self, sizes: Optional[Mapping[str, int]] = None) -> str:
        """Builds the program's library for device arrays now (else the first device use does),
        with kernels built for ``sizes`` (as ``lift build --size``; the tuned variant where
        :meth:`tune` found one) beside the generic ones. Arrays made before belong to the previous
        library and cannot be passed to this one. Returns which variant the built kernels hold."""
    def share(self, other: "Program") -> None:
        """Puts this program's device arrays on the device context of ``other`` (its device,
        queue and arrays; ``other``'s library is built now if it was not): arrays of either
        program, results included, are then arguments of the other's calls with no copy, and
        :attr:`bytes_moved` counts the shared context's copies. Arrays this program made before
        belong to its previous context and are refused by its calls."""
    def to_device(self, x: npt.ArrayLike) -> Array:
        """Copies ``x`` (C-contiguous, or made so) to the program's device. The first call builds
        the program's library (a C compiler is needed, as for ``lift build``)."""
    def run(self, inputs: Mapping[str, Input], sizes: Optional[Mapping[str, int]] = None) -> Result:
        """Runs the program on ``inputs`` (parameter name to value), with the size variables
        that the inputs do not determine given in ``sizes`` (as ``lift run --size``)."""
    def tune(self, sizes: Mapping[str, int], budget: Optional[float] = None) -> str:
        """Tunes the program for ``sizes`` (every size variable) on its device, or on every
        device when none was named, as ``lift tune`` does: searching variants and work-group
        sizes for ``budget`` seconds, or without one timing the cost model's leading variants.
        Later runs at these sizes, from Python or ``lift run``, use the best one found, and so do
        device arrays of these sizes when this comes before the program's first device use.
        Returns the report ``lift tune`` prints."""

def load(path: Union[str, "PathLike[str]"], device: Optional[str] = None, backend: str = "opencl") -> Program:
    """Loads and type-checks the program in file ``path``.

    ``device``: an OpenCL device as ``lift run --device`` takes it, an id ``"P:D"`` or part of
    its name (``None``: the default device). ``backend``: ``"opencl"``, or ``"interp"`` for
    the reference interpreter. Raises :class:`Error` for a bad program or an unknown device."""

def loads(source: str, name: str = "<string>", device: Optional[str] = None, backend: str = "opencl") -> Program:
    """As :func:`load`, for a program's text; ``name`` stands for the file in messages."""

def devices() -> List[DeviceInfo]:
    """The OpenCL devices, as ``lift devices`` lists them, in platform then device order."""
