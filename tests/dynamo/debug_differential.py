"""The differential check of ``pellucid.debug()``: it runs what the compiled program runs.

A program is a builder returning ``(fn, calls)`` with fresh state on every call (see
``tests/dynamo_programs.py``); a builder taking the backend compiles what it returns itself.  :func:`check` runs it twice, each time in fresh Dynamo state:

* reference: compile it; pass 1 (every call); pass 2 (every call again), plainly;
* pellucid: compile it; pass 1 inside ``prepare_debug``; pass 2 inside ``debug(pause=False)``;

and compares both passes, result by result and printed text: tensors bitwise (``torch.equal``,
same dtype, shape and ``requires_grad``), other values with ``==``, raised exceptions by type and
message.  Pass 2 of the pellucid run is the point: it runs from the dumped files, the dispatchers
of the ``full_code`` files selecting entries with Dynamo's own guard managers.  Besides equal
results, the check asserts that every compiled function a call reached went through its
dispatcher, that no rendered guard disagreed with Dynamo, that no pellucid warning was given,
and that no frame of a dumped file ran at a line that is not code.
"""
import contextlib
import io
import os
import sys
import tokenize
import types
import warnings
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import torch

import pellucid
from pellucid.dynamo import dump_runtime
from pellucid.dynamo.torch_features import PellucidWarning


def calls_of(inputs: List[Any]):
    for item in inputs:
        if isinstance(item, dict):
            yield item.get("args", ()), item.get("kwargs", {})
        else:
            yield item, {}


def same(a: Any, b: Any) -> bool:
    """Bitwise equality of results (tensors: values, dtype, shape, requires_grad)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype or a.requires_grad != b.requires_grad:
            return False
        if a.is_floating_point() and bool(torch.isnan(a).any()):
            return torch.equal(torch.isnan(a), torch.isnan(b)) and \
                torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
        return torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(a) is type(b) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if hasattr(a, "to_tuple") and hasattr(a, "keys"):  # a transformers ModelOutput
        return type(a) is type(b) and list(a.keys()) == list(b.keys()) and \
            all(same(a[k], b[k]) for k in a.keys())
    return type(a) is type(b) and a == b


class Run(object):
    def __init__(self) -> None:
        self.passes: List[List[Tuple[str, Any]]] = []
        self.printed: List[str] = []
        self.capture: Any = None
        self.session: Any = None
        self.warnings: List[str] = []
        self.lines_run: Dict[types.CodeType, Set[int]] = {}


def _one_pass(target: Callable[..., Any], calls: List[Any], grad: bool) -> Tuple[List[Tuple[str, Any]], str]:
    out: List[Tuple[str, Any]] = []
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), (contextlib.nullcontext() if grad else torch.no_grad()):
        for args, kwargs in calls_of(calls):
            try:
                out.append(("ok", target(*args, **kwargs)))
            except Exception as exc:  # compared like a result
                out.append(("raised", "%s: %s" % (type(exc).__name__, exc)))
    return out, buf.getvalue()


class _CodeRecorder(object):
    """Records, per code object of a dumped file, the lines its frames ran (a trace function
    that follows only frames of files in the dump directory)."""

    def __init__(self, dump: str) -> None:
        self.dump = os.path.abspath(dump) + os.sep
        self.lines: Dict[types.CodeType, Set[int]] = {}

    def __call__(self, frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        if not code.co_filename.startswith(self.dump):
            return None
        seen = self.lines.setdefault(code, set())
        seen.add(frame.f_lineno)

        def local(frame: Any, event: str, arg: Any) -> Any:
            seen.add(frame.f_lineno)
            return local
        return local


def _takes_backend(build: Callable[..., Any]) -> bool:
    import inspect

    return len(inspect.signature(build).parameters) == 1


def run(build: Callable[..., Any], backend: str, dump: Optional[str], grad: bool = True,
        record_lines: bool = False, passes: int = 2) -> Run:
    """One run of a program in fresh Dynamo state; with ``dump``, pass 1 inside
    ``prepare_debug(dump)`` and the later passes inside ``debug(pause=False)``."""
    result = Run()
    torch._dynamo.reset()
    torch.manual_seed(0)
    if _takes_backend(build):
        # the builder compiles its functions itself (several compiled functions)
        compiled, calls = build(backend)
    else:
        fn, calls = build()
        compiled = torch.compile(fn, backend=backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(passes):
            if dump is None:
                ctx: Any = contextlib.nullcontext()
            elif k == 0:
                ctx = pellucid.prepare_debug(dump)
            else:
                ctx = pellucid.debug(pause=False)
            recorder = _CodeRecorder(dump) if dump and k and record_lines else None
            with ctx as handle:
                if dump is not None and k == 0:
                    result.capture = handle
                elif dump is not None:
                    result.session = handle
                old = sys.gettrace()
                if recorder is not None:
                    sys.settrace(recorder)
                try:
                    outs, printed = _one_pass(compiled, calls, grad)
                finally:
                    if recorder is not None:
                        sys.settrace(old)
            if recorder is not None:
                for code, lines in recorder.lines.items():
                    result.lines_run.setdefault(code, set()).update(lines)
            result.passes.append(outs)
            result.printed.append(printed)
    result.warnings = [str(w.message) for w in caught if issubclass(w.category, PellucidWarning)]
    torch._dynamo.reset()
    return result


def code_lines(path: str) -> Set[int]:
    """Lines of a file that hold code (a token other than a comment, a newline or indentation)."""
    lines: Set[int] = set()
    with open(path, "rb") as fh:
        for tok in tokenize.tokenize(fh.readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                            tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER):
                continue
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def table_lines(code: types.CodeType) -> Set[int]:
    """Every line the line table of ``code`` (not nested code) names (0, which CPython gives a
    module's first instruction, is no line)."""
    if hasattr(code, "co_lines"):
        return {line for _, _, line in code.co_lines() if line}
    import dis
    return {line for _, line in dis.findlinestarts(code) if line}


def check_line_tables(lines_run: Dict[types.CodeType, Set[int]]) -> None:
    """No frame of a dumped file ran at, and no line table of its code names, a line that is
    not code (a comment, the header, a blank line)."""
    bad = []
    for code, ran in lines_run.items():
        if not os.path.exists(code.co_filename):
            continue
        ok = code_lines(code.co_filename)
        wrong = sorted((ran | table_lines(code)) - ok)
        if wrong:
            bad.append("%s (%s): lines %s" % (code.co_name, os.path.basename(code.co_filename), wrong))
    assert not bad, bad


def _nested(code: types.CodeType):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _nested(c)


def check_dumped_code(capture: Any) -> None:
    """Statically, for the code ``debug()`` runs from a dump: the code pellucid handed Dynamo
    (transformed code and resume functions) and every code object of each ``full_code`` file
    (module code, guards, dispatchers) names only code lines in its line table."""
    codes: Dict[types.CodeType, Set[int]] = {}
    for frame in capture.frames.values():
        for t in frame.transforms:
            if t.replacement is not None:
                for c in _nested(t.replacement):
                    codes[c] = set()
    for root in capture.roots():
        if root.full_code_path:
            with open(root.full_code_path, encoding="utf-8") as fh:
                module = compile(fh.read(), root.full_code_path, "exec", dont_inherit=True)
            for c in _nested(module):
                codes[c] = set()
    assert codes
    check_line_tables(codes)


def dispatcher_calls(capture: Any) -> Dict[str, int]:
    """label -> how many calls the dispatcher of each routed frame (not resume functions) made,
    read from the lookups ``prepare_debug`` registered."""
    out: Dict[str, int] = {}
    for frame in capture.roots():
        if frame.is_resume or not frame.full_code_path or not frame.entries:
            continue
        key = "%s:%s:lookup" % (os.path.basename(frame.full_code_path), frame.ident)
        try:
            data = dump_runtime.lookup_registered(capture.dump_dir, key)
        except dump_runtime.NotInThisProcess:
            continue
        out[frame.label] = data.calls
    return out


def check(build: Callable[[], Any], backend: str, dump: str, grad: bool = True,
          misses: Tuple[str, ...] = (), record_lines: bool = True,
          compiles: bool = True) -> Tuple[Run, Run]:
    """The differential check described in the module docstring; returns both runs.

    ``compiles=False``: torch.compile is expected to compile none of the program's frames
    (there is then nothing for debug() to run, and the check asserts exactly that)."""
    ref = run(build, backend, None, grad)
    got = run(build, backend, dump, grad, record_lines=record_lines)
    expected = ["no compiled entry of %s accepts these inputs" % m for m in misses]
    unexpected = [w for w in got.warnings if not any(e in w for e in expected)]
    assert not unexpected, unexpected
    for k, (a, b) in enumerate(zip(ref.passes, got.passes)):
        assert len(a) == len(b)
        for n, ((kind_a, va), (kind_b, vb)) in enumerate(zip(a, b)):
            assert kind_a == kind_b and same(va, vb), \
                "pass %d, call %d: compiled %r, %s %r" % (k + 1, n, (kind_a, va),
                                                         "prepare_debug" if k == 0 else "debug()", (kind_b, vb))
    assert ref.printed == got.printed
    session = got.session
    assert not session.disagreements, session.disagreements
    assert sorted(set(session.misses)) == sorted(set(misses)), session.misses
    routed = [p for p, s in session.full_code_files.items() if s != "runs"]
    assert not routed, session.full_code_files
    calls = dispatcher_calls(got.capture)
    if not compiles:
        transformed = [f.label for f in got.capture.frames.values() if f.transforms]
        assert not calls and not transformed and not got.capture.graphs, (calls, transformed)
        return ref, got
    assert calls and all(calls.values()), calls
    check_dumped_code(got.capture)
    if record_lines:
        assert got.lines_run, "no code of a dumped file ran under debug()"
        check_line_tables(got.lines_run)
    return ref, got
