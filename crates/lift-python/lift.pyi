"""Run LIFT programs on NumPy arrays through OpenCL.

``lift.load(path)`` reads and type-checks a program; calling the returned :class:`Program`
runs it as ``lift run`` does: compiled for the device and the sizes of the inputs (the tuned
variant when ``lift tune`` or :meth:`Program.tune` found one, else the cost model's), with the
same checks on the inputs and the same messages. Every failure raises :class:`Error`.
"""

from os import PathLike
from typing import Any, List, Mapping, Optional, Tuple, TypedDict, Union

import numpy as np
import numpy.typing as npt

#: What a parameter takes: a NumPy array of the declared element type and rank, a Python or
#: NumPy scalar, or (nested) lists and tuples of them (a tuple parameter as a tuple or list).
Input = Union[npt.NDArray[Any], float, int, bool, np.generic, List[Any], Tuple[Any, ...]]

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
    def __call__(self, *args: Input, **kwargs: Input) -> Result:
        """Runs the program on arguments given by position (in parameter order) or by name.

        Sizes come from the arguments' shapes. Raises :class:`Error` on inputs of the wrong
        dtype or shape, a missing or unknown parameter, or when no device can run it."""
    def run(self, inputs: Mapping[str, Input], sizes: Optional[Mapping[str, int]] = None) -> Result:
        """Runs the program on ``inputs`` (parameter name to value), with the size variables
        that the inputs do not determine given in ``sizes`` (as ``lift run --size``)."""
    def tune(self, sizes: Mapping[str, int], budget: Optional[float] = None) -> str:
        """Tunes the program for ``sizes`` (every size variable) on its device, or on every
        device when none was named, as ``lift tune`` does: searching variants and work-group
        sizes for ``budget`` seconds, or without one timing the cost model's leading variants.
        Later runs at these sizes, from Python or ``lift run``, use the best one found.
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
