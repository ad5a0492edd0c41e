"""``full_code_for_<fn>.py``: Dynamo's cache lookup for one user function, written as Python.

For the function and each of its resume functions the file holds the guard of every cache
entry and a dispatcher that tries the entries newest first, like Dynamo does::

    def f(x, y):
        L = {'x': x, 'y': y}  # the frame's locals, as the guards read them
        if guard_f_1(L, G_f):
            return __transformed_code_1_for_f(x, y)
        ...
        return __original_f(x, y)  # no entry matches: Dynamo would compile again

Imported in the process that ran the compiled program (it reaches live objects through the
dump's ``_pellucid_runtime`` helper module), calling ``f`` gives what the compiled ``f`` gives.
"""
import os
import types
from typing import Any, Dict, List, Optional, Tuple

from pellucid.dynamo.dump_runtime import RUNTIME_MODULE, closure_of
from pellucid.dynamo.model import CompiledFrame

GUARD_CALL = "{name}(L, G_{frame})"


def _signature(code: types.CodeType) -> Tuple[str, str, List[str]]:
    """(parameter list, call arguments, argument names) reproducing ``code``'s parameters."""
    names = code.co_varnames
    npos = code.co_argcount
    nposonly = getattr(code, "co_posonlyargcount", 0)
    nkw = code.co_kwonlyargcount
    params: List[str] = []
    call: List[str] = []
    arg_names: List[str] = []
    for i in range(npos):
        params.append(names[i])
        call.append(names[i])
        arg_names.append(names[i])
        if nposonly and i == nposonly - 1:
            params.append("/")
    at = npos + nkw
    if code.co_flags & 0x04:
        params.append("*" + names[at])
        call.append("*" + names[at])
        arg_names.append(names[at])
        at += 1
    elif nkw:
        params.append("*")
    for i in range(npos, npos + nkw):
        params.append(names[i])
        call.append("%s=%s" % (names[i], names[i]))
        arg_names.append(names[i])
    if code.co_flags & 0x08:
        params.append("**" + names[at])
        call.append("**" + names[at])
        arg_names.append(names[at])
    return ", ".join(params), ", ".join(call), arg_names


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def render(path: str, root: str, frames: List[CompiledFrame],
           globals_of: Dict[int, Dict[str, Any]],
           closures_of: Optional[Dict[int, Optional[Tuple[Any, ...]]]] = None) -> Tuple[str, Dict[str, Any]]:
    """Source of ``full_code_for_<root>.py`` and the live objects to register for it.

    ``frames``: the user function first, then its resume functions.  ``closures_of`` (by
    ``id`` of a frame's code) holds closures already known; the others are looked up live.
    """
    base = os.path.basename(path)
    registry: Dict[str, Any] = {}
    top = frames[0]
    out: List[str] = [
        "# Dynamo's cache lookup for %s (%s:%d), written as Python by pellucid."
        % (top.qualname, top.filename, top.firstlineno),
        "# For each compiled frame, cache entries are tried newest first: the first entry whose",
        "# guard passes runs its transformed code; when none passes, Dynamo would compile the frame",
        "# again (here the original code runs).  Import this file in the process that ran the",
        "# compiled program: %s.py, next to it, reaches that process's live objects." % RUNTIME_MODULE,
        "import %s as _rt" % RUNTIME_MODULE,
        "",
    ]
    for frame in frames:
        fid = _ident(frame.name)
        fn_globals = globals_of.get(id(frame.code), {})
        if closures_of is not None and id(frame.code) in closures_of:
            closure = closures_of[id(frame.code)]
        else:
            closure = closure_of(frame.code)  # a scan of the garbage collector's objects
        registry["%s:%s:globals" % (base, fid)] = fn_globals
        registry["%s:%s:original" % (base, fid)] = (frame.code, fn_globals, closure)
        params, call, arg_names = _signature(frame.code)
        kind = "resume function" if frame.name != frame.root else "function"
        out += ["", "# " + "=" * 94,
                "# %s %s (%s:%d): %d cache entr%s" % (kind, frame.qualname, frame.filename,
                                                      frame.firstlineno, len(frame.entries),
                                                      "y" if len(frame.entries) == 1 else "ies"),
                "# " + "=" * 94,
                "G_%s = _rt.frame_globals(__file__, %r)  # the globals this frame runs with" % (fid, fid),
                ""]
        dispatch: List[str] = []
        for entry in frame.entries:  # newest first, as Dynamo keeps them
            t = entry.transform
            gname = "guard_%s_%d" % (fid, entry.index)
            tname = "__transformed_code_%d_for_%s" % (entry.index, fid)
            code_file = os.path.basename(t.path) if t is not None and t.path else None
            out.append("# cache entry %d, compile %s%s" % (
                entry.index, entry.compile_id,
                (": code in %s" % code_file) if code_file else ""))
            if entry.guard_source is not None:
                out.append(entry.guard_source.rstrip("\n").replace(
                    "def %s(" % entry.guard_name, "def %s(" % gname, 1))
                out.append("%s = _rt.bind_guard(__file__, %s, %r)" % (gname, gname, "guard:%s:%d" % (fid, entry.index)))
                registry["%s:guard:%s:%d" % (base, fid, entry.index)] = entry.guard_namespace
                test = GUARD_CALL.format(name=gname, frame=fid)
            else:
                out.append("# guard not rendered: %s" % (entry.guard_error or "unknown reason"))
                test = None
            if code_file is not None:
                runs = t.replacement if t.replacement is not None else t.transformed
                registry[code_file] = (runs, fn_globals, closure)
                out.append("%s = _rt.function(__file__, %r)" % (tname, code_file))
            else:
                out.append("%s = None  # no transformed code was captured for this entry" % tname)
            out.append("")
            if test is not None and code_file is not None:
                dispatch += ["    if %s:" % test, "        return %s(%s)" % (tname, call)]
            else:
                dispatch.append("    # cache entry %d is left out: its guard or code is missing" % entry.index)
        out.append("__original_%s = _rt.original(__file__, %r)" % (fid, fid))
        out.append("")
        out.append("")
        out.append("def %s(%s):" % (fid, params))
        out.append('    """Dynamo\'s cache lookup for %s."""' % frame.qualname)
        out.append("    L = {%s}  # the frame's locals, as the guards read them" %
                   ", ".join("%r: %s" % (n, n) for n in arg_names))
        out += dispatch
        out.append("    return __original_%s(%s)" % (fid, call))
        out.append("")
    return "\n".join(out) + "\n", registry
