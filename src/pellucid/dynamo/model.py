"""What torch.compile produced, as plain objects: the capture model every rendering reads.

Capture (``capture.py``) fills these from Dynamo's hooks and structured trace; the dump files,
the index and any future report are renderings of them, so none re-reads torch internals.

>>> frame = CompiledFrame(name="f", qualname="f", filename="train.py", firstlineno=3)
>>> frame.entries
[]
"""
import types
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class GraphStage:
    """One rendering of a compiled graph: ``stage`` is dynamo, aot_joint, aot_forward,
    aot_backward, aot_inference, inductor or inductor_backward; ``source`` is Python text with
    shape/dtype comments."""

    stage: str
    source: str
    path: Optional[str] = None
    #: Inductor's output code only: the module file Inductor wrote this text to and imported
    #: (in its cache directory); ``debug()`` checks the dumped file against it
    origin: Optional[str] = None


@dataclass
class Transform:
    """One compilation of one code object: Dynamo's bytecode and what pellucid made of it."""

    compile_id: str
    original: types.CodeType
    transformed: types.CodeType
    #: the code handed back to Dynamo (pellucid's recompiled code), None when Dynamo's ran
    replacement: Optional[types.CodeType] = None
    #: why Dynamo's own code ran instead (decompile failure, verification difference)
    rejected: Optional[str] = None
    source: Optional[str] = None
    path: Optional[str] = None
    #: names of the compiled graphs (``__compiled_fn_N``) the transformed code calls
    graphs: List[str] = field(default_factory=list)
    #: resume functions (``__resume_at_...`` globals) the transformed code calls
    resumes: List[str] = field(default_factory=list)


@dataclass
class CacheEntry:
    """A guarded cache entry of a code object: its guard as Python and the code it runs."""

    index: int
    compile_id: str
    transform: Optional[Transform]
    guard_source: Optional[str] = None
    guard_name: Optional[str] = None
    guard_error: Optional[str] = None
    #: objects the rendered guard needs bound, live in this process only
    guard_namespace: Dict[str, Any] = field(default_factory=dict)


@dataclass
class GraphBreak:
    """Where Dynamo split a frame and why."""

    compile_id: str
    reason: str
    location: str  # ``file:line`` of the user's source


@dataclass
class Recompilation:
    """A new compilation of a frame because a guard of an earlier entry failed."""

    compile_id: str
    reason: str


@dataclass
class CompiledFrame:
    """A code object Dynamo compiled (a user function or a resume function)."""

    name: str
    qualname: str
    filename: str
    firstlineno: int
    code: Optional[types.CodeType] = None
    #: the user function this frame belongs to (itself, or the function a resume function resumes)
    root: Optional[str] = None
    entries: List[CacheEntry] = field(default_factory=list)
    transforms: List[Transform] = field(default_factory=list)
    graph_breaks: List[GraphBreak] = field(default_factory=list)
    recompilations: List[Recompilation] = field(default_factory=list)
    full_code_path: Optional[str] = None


@dataclass
class CompiledGraph:
    """A graph Dynamo extracted, with its stages."""

    name: str  # ``__compiled_fn_N``
    compile_id: str
    stages: List[GraphStage] = field(default_factory=list)
    #: the callable Dynamo's code calls (the global ``__compiled_fn_N_<uuid>``), live in this
    #: process; ``debug()`` finds the graph modules it runs through it
    compiled_fn: Any = None


@dataclass
class Capture:
    """Everything captured inside one ``prepare_debug`` block."""

    dump_dir: str
    frames: Dict[int, CompiledFrame] = field(default_factory=dict)  # by id(original code)
    graphs: Dict[str, CompiledGraph] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)
    files: List[str] = field(default_factory=list)
