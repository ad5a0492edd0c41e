"""Dynamo's transformed bytecode as a source file, and the recompiled code Dynamo may run.

For each code object Dynamo produces, pellucid writes the decompiled source to the dump
directory and compiles *that file* (so tracebacks and debuggers show it).  The compiled code
is handed back to Dynamo only when it lays out its frame exactly like Dynamo's code and
:func:`pellucid.verify.check_equivalent` finds it equivalent; otherwise Dynamo's own code
runs and the file says why, with the disassembly.

>>> describe_names(("__compiled_fn_1_abc", "__resume_at_30_2", "print"))
(['__compiled_fn_1'], ['__resume_at_30_2'])
"""
import dis
import io
import itertools
import re
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

from pellucid.dynamo.code_shapes import ShapeCache
from pellucid.dynamo.model import Transform

_GRAPH = re.compile(r"^(__compiled_fn_\d+)")
# Every transformed code object of a module puts its constants in the module's globals: each
# gets its own names (``__pellucid_const_t<N>_...``), unique in this process.
_CONST_TAGS = itertools.count(1)


def describe_names(names: Tuple[str, ...]) -> Tuple[List[str], List[str]]:
    """The compiled graphs (``__compiled_fn_N``, without Dynamo's UUID) and resume functions a
    transformed code object refers to."""
    graphs: List[str] = []
    resumes: List[str] = []
    for n in names:
        m = _GRAPH.match(n)
        if m and m.group(1) not in graphs:
            graphs.append(m.group(1))
        elif n.startswith("__resume_at_") and n not in resumes:
            resumes.append(n)
    return graphs, resumes


def _layout_problem(original: types.CodeType, new: types.CodeType) -> Optional[str]:
    """Why ``new`` cannot run in a frame laid out for ``original`` (None when it can).

    Dynamo runs a cache entry's code in a frame of its own, copying into it by position the
    arguments, the cell and the free variables of the frame it was called with (torch's
    ``eval_frame``; ``convert_frame`` checks the same three): only those must match, the other
    local slots are the code's own business."""
    nargs = _nargs(original)
    if new.co_varnames[:nargs] != original.co_varnames[:nargs] or _nargs(new) != nargs:
        return "arguments differ: %r vs %r" % (new.co_varnames[:_nargs(new)],
                                               original.co_varnames[:nargs])
    if new.co_cellvars != original.co_cellvars:
        return "cell variables differ: %r vs %r" % (new.co_cellvars, original.co_cellvars)
    if new.co_freevars != original.co_freevars:
        return "free variables differ: %r vs %r" % (new.co_freevars, original.co_freevars)
    return None


def _nargs(code: types.CodeType) -> int:
    return (code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04)
            + bool(code.co_flags & 0x08))


def disassembly(code: types.CodeType) -> str:
    """``dis`` listing of ``code`` and its nested code objects."""
    out = io.StringIO()
    dis.dis(code, file=out)
    return out.getvalue()


def _commented(text: str) -> str:
    return "".join("# " + line + "\n" if line else "#\n" for line in text.rstrip("\n").split("\n"))


def build(compile_id: str, original: types.CodeType, transformed: types.CodeType, path: str,
          write: Callable[[str, str], None], fn_globals: Optional[Dict[str, Any]],
          verify: Callable[[types.CodeType, types.CodeType, Dict[str, Any]], Tuple[bool, str]],
          shapes: Optional[ShapeCache] = None) -> Transform:
    """Decompile ``transformed`` into the file ``path`` and decide whether its recompiled code
    may replace Dynamo's.  Never raises for a decompiler problem: the reason is recorded.
    ``shapes``: the capture's sources by shape (:mod:`pellucid.dynamo.code_shapes`)."""
    from pellucid.bytecode.normalize import shared_results

    # the decompiler and the verifier both read ``transformed``'s instructions: once is enough
    with shared_results():
        return _build(compile_id, original, transformed, path, write, fn_globals, verify, shapes)


def _attempt(transformed: types.CodeType, original: types.CodeType, path: str, head: str,
             fn_globals: Optional[Dict[str, Any]],
             verify: Callable[[types.CodeType, types.CodeType, Dict[str, Any]], Tuple[bool, str]],
             recompile_full: Callable[..., Any], shapes: Optional[ShapeCache] = None,
             tag: Optional[str] = None) -> Tuple[Optional[str], Optional[str], Optional[types.CodeType]]:
    """Decompile and recompile ``transformed`` once: (why it cannot replace Dynamo's code or
    None, its source or None, the code that may replace Dynamo's or None).  With ``shapes``,
    from the source of an earlier code object of its shape where one was decompiled."""
    from pellucid.decompiler.recompile import CELLS
    from pellucid.errors import DecompileError

    tag = tag or "t%d_" % next(_CONST_TAGS)
    from_shape = False
    try:
        if shapes is not None:
            result, from_shape = shapes.recompile(transformed, path, head + "# STATUS\n#\n", tag,
                                                  recompile_full, keep_locals=CELLS, write=False,
                                                  imports=False)
        else:
            result = recompile_full(transformed, path, keep_locals=CELLS,
                                    header=head + "# STATUS\n#\n", write=False, const_tag=tag,
                                    imports=False)
    except DecompileError as exc:
        return "could not decompile: %s" % exc, None, None
    except Exception as exc:  # a pellucid bug must not reach the user's program
        return "internal error while decompiling: %s: %s" % (type(exc).__name__, exc), None, None
    new = result.code
    problem = _layout_problem(original, new)
    if problem is None and result.bindings:
        clash = sorted(k for k, v in result.bindings.items()
                       if fn_globals is not None and k in fn_globals and fn_globals[k] is not v)
        if fn_globals is None:
            problem = "constants without a literal form, and the frame's globals are unknown"
        elif clash:
            # Rebinding would change what code already installed reads.
            problem = "constant names already bound to other values: %s" % ", ".join(clash)
    if problem is None:
        try:
            ok, reason = verify(transformed, new, result.bindings)
        except Exception as exc:
            ok, reason = False, "verifier failed: %s: %s" % (type(exc).__name__, exc)
        if not ok:
            problem = "not verified equivalent: %s" % reason
    if problem is not None:
        if from_shape:
            # (made from another code object's source: what is refused is decompiled afresh,
            # so that the verdict and the file are what they would be without the template)
            return _attempt(transformed, original, path, head, fn_globals, verify, recompile_full,
                            tag=tag)
        return problem, result.source, None
    if result.bindings and fn_globals is not None:
        fn_globals.update(result.bindings)
    return None, result.source, new


def _build(compile_id: str, original: types.CodeType, transformed: types.CodeType, path: str,
           write: Callable[[str, str], None], fn_globals: Optional[Dict[str, Any]],
           verify: Callable[[types.CodeType, types.CodeType, Dict[str, Any]], Tuple[bool, str]],
           shapes: Optional[ShapeCache] = None) -> Transform:
    from pellucid.decompiler.copy_propagation import plain_temporaries
    from pellucid.decompiler.recompile import recompile_full

    graphs, resumes = describe_names(transformed.co_names)
    t = Transform(compile_id, original, transformed, graphs=graphs, resumes=resumes, path=path)
    where = "%s:%d" % (original.co_filename, original.co_firstlineno)
    # Exactly three header lines, whatever the verdict: the status line is filled in after
    # compiling, and the line numbers of the code below must not move.
    head = ("# Dynamo's transformed code for %s (%s), compile %s; decompiled by pellucid.\n"
            % (original.co_name, where, compile_id))
    t.rejected, source, new = _attempt(transformed, original, path, head, fn_globals, verify,
                                       recompile_full, shapes)
    if new is None:
        # Readability rewrites are judged like everything else: when the rewritten form is not
        # verified, the form without them is tried before Dynamo's own code is used (and shown,
        # with its own verdict, if neither is verified).
        with plain_temporaries():
            plain = _attempt(transformed, original, path, head, fn_globals, verify, recompile_full)
        if plain[1] is not None:
            t.rejected, source, new = plain
    t.source = source
    t.replacement = new
    if t.source is not None:
        status = ("# This file is the code that runs (checked equivalent to Dynamo's bytecode)."
                  if t.replacement is not None else
                  "# Dynamo's own bytecode runs, not this file: see the end of the file.")
        text = t.source.replace("# STATUS\n", status + "\n", 1) + "\n"
    else:
        text = head + "# Dynamo's own bytecode runs: pellucid could not decompile it.\n#\n"
    if t.replacement is None:
        text += "\n\n# Why Dynamo's own code runs: %s\n#\n# Dynamo's bytecode:\n%s" % (
            (t.rejected or "").replace("\n", " "), _commented(disassembly(transformed)))
    write(path, text)
    return t
