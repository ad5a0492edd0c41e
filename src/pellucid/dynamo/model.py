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
class SourceLine:
    """One line of the user's program: where it is and what it says."""

    filename: str
    lineno: int
    function: str = ""
    text: str = ""

    def __str__(self) -> str:
        return "%s:%d" % (self.filename, self.lineno)


@dataclass
class GraphBreak:
    """Where Dynamo split a frame and why (the text ``TORCH_LOGS=graph_breaks`` prints).

    ``reason`` is torch's whole message; the other fields are its parts: ``kind`` (torch's
    graph-break type, e.g. ``Failed to trace builtin operator``), ``explanation``, ``hints``,
    ``context`` (torch's developer context) and ``url`` (torch's page on this kind of break).
    ``user_stack`` is the user's code that led to the break, outermost first; its last line is
    ``location``; ``snippet`` holds the lines around it as the file read when it was captured.
    """

    compile_id: str
    reason: str
    location: str  # ``file:line`` of the user's source
    kind: str = ""
    explanation: str = ""
    hints: List[str] = field(default_factory=list)
    context: str = ""
    url: str = ""
    user_stack: List[SourceLine] = field(default_factory=list)
    snippet: List[SourceLine] = field(default_factory=list)

    @property
    def line(self) -> Optional[SourceLine]:
        """The user's line where the frame broke (the innermost line of ``user_stack``)."""
        return self.user_stack[-1] if self.user_stack else None


@dataclass
class Recompilation:
    """A new compilation of a frame because a guard of an earlier entry failed.

    ``reason`` is torch's text.  The other fields are pellucid's diagnosis, made when Dynamo
    recompiled, by running the missed entry's rendered guard on the call's frame locals:
    ``failed_entry`` (the compile id of the entry whose guard failed first), ``check`` (the
    rendered guard line that failed), ``subject`` (the value it checks, as an expression of
    ``L``/``G``), ``expected`` (that value as compiled for) and ``actual`` (at the call that
    missed), and ``guard_line`` (the user's line whose tracing installed the guard).
    """

    compile_id: str
    reason: str
    failed_entry: str = ""
    check: str = ""
    guard_kind: str = ""
    subject: str = ""
    expected: str = ""
    actual: str = ""
    guard_line: Optional[SourceLine] = None
    #: the user's stack when Dynamo made the guard, outermost first (torch's frames left out):
    #: ``guard_line`` is its line in the compiled function
    guard_stack: List[SourceLine] = field(default_factory=list)
    #: why pellucid could not diagnose it (the guard could not be rendered, ...)
    note: str = ""

    def explain(self) -> str:
        """One paragraph: which guard failed, its value then and now, and the line behind it.

        >>> print(Recompilation("0/1", "0/0: L['n'] == 2", "0/0", subject="L['n']",
        ...       expected="2", actual="3").explain())
        compile 0/1: the guard of entry 0/0 failed on L['n']: compiled for 2, called with 3
        """
        if not self.subject and not self.check:
            return "compile %s: %s" % (self.compile_id, self.reason.strip())
        text = "compile %s: the guard of entry %s failed on %s: compiled for %s, called with %s" % (
            self.compile_id, self.failed_entry or "?", self.subject or self.check,
            self.expected or "?", self.actual or "?")
        if self.guard_line is not None:
            text += "; guard installed by %s" % self.guard_line
            if self.guard_line.text:
                text += " (%s)" % self.guard_line.text.strip()
            inner = self.guard_stack[-1] if self.guard_stack else None
            if inner is not None and (inner.filename, inner.lineno) != (self.guard_line.filename, self.guard_line.lineno):
                text += ", inside %s" % inner
        return text


@dataclass
class CompileMetrics:
    """Where one compilation's time went, from torch's compilation metrics (seconds)."""

    compile_id: str
    name: str = ""
    #: the whole frame compile, Dynamo's tracing included
    total_s: Optional[float] = None
    #: the backend (AOT Autograd, Inductor...) inside it
    backend_s: Optional[float] = None
    inductor_s: Optional[float] = None
    codegen_s: Optional[float] = None
    guard_count: Optional[int] = None
    graph_op_count: Optional[int] = None
    #: why Dynamo restarted the analysis (graph breaks found on the way)
    restart_reasons: List[str] = field(default_factory=list)
    fail_type: Optional[str] = None
    fail_reason: Optional[str] = None


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
    #: for a decorator's wrapper named as the function it wraps: the wrapper's own qualified
    #: name (``merge_with_config_defaults.<locals>.wrapper``), else empty
    wrapper: str = ""
    entries: List[CacheEntry] = field(default_factory=list)
    transforms: List[Transform] = field(default_factory=list)
    graph_breaks: List[GraphBreak] = field(default_factory=list)
    recompilations: List[Recompilation] = field(default_factory=list)
    full_code_path: Optional[str] = None
    #: the function's source as the file read when it was captured (``source_start`` is the
    #: line number of its first line); for a resume function, its user function's
    source: Optional[str] = None
    source_start: int = 0
    #: the file ``source`` comes from when it is not ``filename``: a decorated function's,
    #: whose wrapper is the code Dynamo compiled
    source_filename: str = ""


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
    #: torch's compilation metrics, one per compile id, in compile order
    metrics: List[CompileMetrics] = field(default_factory=list)
    #: the process that captured: pid, host, rank, argv, python, torch, start/end times
    process: Dict[str, Any] = field(default_factory=dict)
    #: this capture's ``capture_<n>.json`` in the dump directory (None until written)
    capture_file: Optional[str] = None
    #: rendered guards that disagreed with Dynamo's under ``debug()`` (Dynamo's answer ran)
    disagreements: List[GuardDisagreement] = field(default_factory=list)

    # -- questions (see :mod:`pellucid.dynamo.api`; a loaded dump answers the same ones) ------
    def functions(self) -> List[Any]:
        """The compiled user functions (:class:`pellucid.dynamo.api.Function`)."""
        from pellucid.dynamo.api import functions

        return functions([self])

    def why_recompiled(self, fn: Any) -> List[Recompilation]:
        """Why ``fn`` (a function, module, code object or name) was compiled again, one
        :class:`Recompilation` per recompile; ``.explain()`` says it in a paragraph."""
        from pellucid.dynamo.api import Dump

        return Dump(self.dump_dir, [self]).why_recompiled(fn)

    def graph_breaks(self, fn: Any = None) -> List[GraphBreak]:
        """Every graph break, or those of ``fn``'s frames."""
        from pellucid.dynamo.api import Dump

        return Dump(self.dump_dir, [self]).graph_breaks(fn)

    def roots(self) -> List[CompiledFrame]:
        """The frames that have a ``full_code`` file of their own, in a stable order."""
        out = [f for f in self.frames.values() if f.root is None or f.root is f]
        return sorted(out, key=lambda f: (f.ident or f.name, f.filename, f.firstlineno))

    def family(self, root: CompiledFrame) -> List[CompiledFrame]:
        """``root`` and the resume functions whose root it is: root first, then by line."""
        members = [f for f in self.frames.values() if f is root or f.root is root]
        return sorted(members, key=lambda f: (f is not root, f.firstlineno, f.ident or f.name))
