"""What torch.compile produced, as plain objects: the capture model every rendering reads.

Capture (``capture.py``) fills these from Dynamo's hooks and structured trace; the dump files,
the index and any future report are renderings of them, so none re-reads torch internals.

>>> frame = CompiledFrame(name="f", qualname="f", filename="train.py", firstlineno=3, label="f", ident="f")
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
    #: the code object Dynamo's entry runs: what identifies the entry in Dynamo's cache
    code: Optional[types.CodeType] = field(default=None, repr=False, compare=False)
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


@dataclass(eq=False)  # frames are equal only to themselves: identity, not names
class CompiledFrame:
    """A code object Dynamo compiled (a user function or a resume function).

    Frames are told apart by their code object, never by name: ``label`` and ``ident`` are
    unique in the dump directory (see :mod:`pellucid.dynamo.names`), ``root`` and ``parent``
    are the frames themselves.
    """

    name: str
    qualname: str
    filename: str
    firstlineno: int
    code: Optional[types.CodeType] = None
    #: the frame whose ``full_code`` file holds this one: itself for a function the program
    #: calls; for a resume function, the function it resumes (through nested resumes)
    root: Optional["CompiledFrame"] = field(default=None, repr=False, compare=False)
    #: for a resume function: the frame whose transformed code calls it (None when unknown)
    parent: Optional["CompiledFrame"] = field(default=None, repr=False, compare=False)
    #: readable name, unique in the dump directory: ``A.forward``, ``A.forward.resume_at_7``
    label: str = ""
    #: ``label`` as a Python identifier; names the frame's files, dispatcher, guards and globals
    ident: str = ""
    #: the module the code runs in (its globals' ``__name__``)
    module: Optional[str] = None
    #: whether Dynamo made this code (a resume function after a graph break)
    is_resume: bool = False
    entries: List[CacheEntry] = field(default_factory=list)
    transforms: List[Transform] = field(default_factory=list)
    graph_breaks: List[GraphBreak] = field(default_factory=list)
    recompilations: List[Recompilation] = field(default_factory=list)
    full_code_path: Optional[str] = None


@dataclass
class GuardDisagreement:
    """Under ``debug()``: a rendered guard answered otherwise than Dynamo's guard manager (whose
    answer decided which entry ran)."""

    frame: str  # the frame's label
    entry: int
    #: what Dynamo's guard manager answered (the rendered guard answered the opposite)
    dynamo: bool
    #: the guard line that disagrees (``file:line: text``), or Dynamo's failing guard
    where: str


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
    #: rendered guards that disagreed with Dynamo's under ``debug()`` (Dynamo's answer ran)
    disagreements: List[GuardDisagreement] = field(default_factory=list)
    #: this process's part of ``index.md`` (rewritten when ``debug()`` finds a disagreement)
    index_part: Optional[str] = None

    def roots(self) -> List[CompiledFrame]:
        """The frames that have a ``full_code`` file of their own, in a stable order."""
        out = [f for f in self.frames.values() if f.root is None or f.root is f]
        return sorted(out, key=lambda f: (f.ident or f.name, f.filename, f.firstlineno))

    def family(self, root: CompiledFrame) -> List[CompiledFrame]:
        """``root`` and the resume functions whose root it is: root first, then by line."""
        members = [f for f in self.frames.values() if f is root or f.root is root]
        return sorted(members, key=lambda f: (f is not root, f.firstlineno, f.ident or f.name))
