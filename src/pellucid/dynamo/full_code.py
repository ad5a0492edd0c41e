"""``full_code_for_<fn>.py``: Dynamo's cache lookup for one user function, written as Python.

For the function and each of its resume functions the file holds the guard of every cache
entry and a dispatcher that runs the entry Dynamo's own guards select::

    def f(x, y):
        L = {'x': x, 'y': y}  # the frame's locals, as the guards read them
        dynamo = __lookup_f.select(L)  # the entry Dynamo's guard managers pick
        if dynamo.picks(1, guard_f_1(L, G_f)):
            return __transformed_code_1_for_f(x, y)
        ...
        return dynamo.otherwise(__original_f)(x, y)  # no entry: Dynamo would compile again

Every name is the frame's ident (:mod:`pellucid.dynamo.names`), unique in the dump directory.
The rendered guards run (so a debugger steps through them), but Dynamo's guard managers decide:
when a rendered guard answers otherwise, Dynamo's answer wins and pellucid says so once
(:mod:`pellucid.dynamo.dump_runtime`).  Imported in the process that ran the compiled program
(it reaches live objects through the dump's ``_pellucid_runtime`` helper module), calling ``f``
gives what the compiled ``f`` gives.
"""
import os
import types
from typing import Any, Dict, List, Optional, Tuple

from pellucid.dynamo.guard_fold import fold
from pellucid.dynamo.dump_runtime import RUNTIME_MODULE, LookupData, closure_of
from pellucid.dynamo.model import Capture, CompiledFrame


#: the keyword-only parameter through which debug()'s trampoline hands a dispatcher the
#: closure of the function called (frames with free variables only)
CLOSURE_PARAM = "__pellucid_closure__"


def signature_parts(code: types.CodeType, extra_kwonly: Optional[str] = None) -> Tuple[str, str, List[str]]:
    """(parameter list, call arguments, argument names) reproducing ``code``'s parameters;
    ``extra_kwonly`` adds a keyword-only parameter (default None) to the parameter list."""
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
    elif nkw or extra_kwonly:
        params.append("*")
    for i in range(npos, npos + nkw):
        params.append(names[i])
        call.append("%s=%s" % (names[i], names[i]))
        arg_names.append(names[i])
    if extra_kwonly:
        params.append("%s=None" % extra_kwonly)
    if code.co_flags & 0x08:
        params.append("**" + names[at])
        call.append("**" + names[at])
        arg_names.append(names[at])
    return ", ".join(params), ", ".join(call), arg_names


def _free_local(name: str, taken: Any) -> str:
    """``name``, with ``_`` appended until no parameter has it."""
    while name in taken:
        name += "_"
    return name


def render(path: str, frames: List[CompiledFrame],
           globals_of: Dict[int, Dict[str, Any]],
           closures_of: Optional[Dict[int, Optional[Tuple[Any, ...]]]] = None,
           capture: Optional[Capture] = None) -> Tuple[str, Dict[str, Any]]:
    """Source of ``full_code_for_<ident>.py`` and the live objects to register for it.

    ``frames``: the user function first, then its resume functions.  ``closures_of`` (by
    ``id`` of a frame's code) holds closures already known; the others are looked up live.
    ``capture`` receives what ``debug()`` later finds (rendered guards that disagree).
    """
    base = os.path.basename(path)
    registry: Dict[str, Any] = {}
    top = frames[0]
    defined: List[str] = []
    out: List[str] = [
        "# Dynamo's cache lookup for %s (%s:%d), written as Python by pellucid."
        % (top.label, top.filename, top.firstlineno),
        "# For each compiled frame, the entry that runs is the one Dynamo's own guard managers select;",
        "# each entry's guard, rendered below, runs too (step through it), and should it answer",
        "# otherwise, Dynamo's answer wins and pellucid says so.  When no entry passes, Dynamo would",
        "# compile the frame again (here the original code runs).  Import this file in the process",
        "# that ran the compiled program: %s.py, next to it, reaches that process's live objects."
        % RUNTIME_MODULE,
        "import %s as _rt" % RUNTIME_MODULE,
        "",
    ]
    for frame in frames:
        fid = frame.ident
        fn_globals = globals_of.get(id(frame.code), {})
        if closures_of is not None and id(frame.code) in closures_of:
            closure = closures_of[id(frame.code)]
        else:
            closure = closure_of(frame.code)  # a scan of the garbage collector's objects
        registry["%s:%s:globals" % (base, fid)] = fn_globals
        registry["%s:%s:original" % (base, fid)] = (frame.code, fn_globals, closure)
        freevars = tuple(frame.code.co_freevars)
        params, call, arg_names = signature_parts(frame.code, CLOSURE_PARAM if freevars else None)
        # the dispatcher's own locals must not be one of the function's parameters
        taken = set(arg_names) | {CLOSURE_PARAM}
        lname, dname, cname = (_free_local(n, taken) for n in ("L", "dynamo", "cells"))
        kind = "resume function" if frame.is_resume else "function"
        out += ["", "# " + "=" * 94,
                "# %s %s (%s:%d): %d cache entr%s" % (kind, frame.label, frame.filename,
                                                      frame.firstlineno, len(frame.entries),
                                                      "y" if len(frame.entries) == 1 else "ies"),
                "# " + "=" * 94,
                "G_%s = _rt.frame_globals(__file__, %r)  # the globals this frame runs with" % (fid, fid),
                ""]
        defined.append("G_" + fid)
        dispatch: List[str] = []
        guards: List[str] = []
        codes: List[Tuple[types.CodeType, int]] = []
        for entry in frame.entries:  # newest first
            t = entry.transform
            gname = "guard_%s_%d" % (fid, entry.index)
            tname = "__transformed_code_%d_for_%s" % (entry.index, fid)
            code_file = os.path.basename(t.path) if t is not None and t.path else None
            out.append("# cache entry %d, compile %s%s" % (
                entry.index, entry.compile_id,
                (": code in %s" % code_file) if code_file else ": compiled outside prepare_debug, no file"))
            if entry.guard_source is not None:
                # (each value read once under a name, repeated siblings as loops: the same
                # answers, see guard_fold)
                out.append(fold(entry.guard_source)[0].rstrip("\n").replace(
                    "def %s(" % entry.guard_name, "def %s(" % gname, 1))
                out.append("%s = _rt.bind_guard(__file__, %s, %r)" % (gname, gname, "guard:%s:%d" % (fid, entry.index)))
                registry["%s:guard:%s:%d" % (base, fid, entry.index)] = entry.guard_namespace
                test = "%s(%s, G_%s)" % (gname, lname, fid)
                guards.append("%d: %s" % (entry.index, gname))
                defined.append(gname)
            else:
                out.append("# guard not rendered (Dynamo's guard manager alone decides): %s"
                           % (entry.guard_error or "unknown reason").replace("\n", " "))
                test = "None"
            runs = None
            if code_file is not None:
                runs = t.replacement if t.replacement is not None else t.transformed
                registry[code_file] = (runs, fn_globals, closure)
                out.append("%s = _rt.function(__file__, %r)" % (tname, code_file))
            elif entry.code is not None:
                runs = entry.code
                key = "%s:%s:entry:%d" % (base, fid, entry.index)
                registry[key] = (runs, fn_globals, closure)
                out.append("%s = _rt.function(__file__, %r)  # Dynamo's own code" % (tname, key))
            else:
                out.append("%s = None  # no code was captured for this entry" % tname)
            defined.append(tname)
            for c in (entry.code, t.transformed if t is not None else None,
                      t.replacement if t is not None else None):
                if c is not None:
                    codes.append((c, entry.index))
            out.append("")
            if runs is not None:
                target = "%s.bind(%s)" % (cname, tname) if freevars else tname
                dispatch += ["    if %s.picks(%d, %s):" % (dname, entry.index, test),
                             "        return %s(%s)" % (target, call)]
            else:
                dispatch.append("    # cache entry %d is left out: its code is missing" % entry.index)
        registry["%s:%s:lookup" % (base, fid)] = LookupData(frame.code, frame.label, codes, capture)
        out.append("__original_%s = _rt.original(__file__, %r)" % (fid, fid))
        out.append("__lookup_%s = _rt.lookup(__file__, %r, {%s})  # Dynamo's cache of this frame"
                   % (fid, fid, ", ".join(guards)))
        defined += ["__original_" + fid, "__lookup_" + fid, fid]
        shadowed = sorted(set(arg_names) & (set(defined) | {"_rt", "__file__"}))
        if shadowed:
            raise ValueError("a parameter of %s has the name of a global of its full_code file: %s"
                             % (frame.label, ", ".join(shadowed)))
        out.append("")
        out.append("")
        out.append("def %s(%s):" % (fid, params))
        out.append('    """Dynamo\'s cache lookup for %s: runs the entry Dynamo\'s guards select."""' % frame.label)
        if freevars:
            out.append("    %s = _rt.cells(__file__, %r, %s)  # the closure of the function called: %s"
                       % (cname, fid, CLOSURE_PARAM, ", ".join(freevars)))
            out.append("    %s = {%s}  # the frame's locals, as the guards read them" % (
                lname, ", ".join(["%r: %s" % (n, n) for n in arg_names] + ["**%s.values()" % cname])))
        else:
            out.append("    %s = {%s}  # the frame's locals, as the guards read them" %
                       (lname, ", ".join("%r: %s" % (n, n) for n in arg_names)))
        out.append("    %s = __lookup_%s.select(%s)  # the entry Dynamo's own guard managers pick"
                   % (dname, fid, lname))
        out += dispatch
        out.append("    # no entry above: the entry Dynamo picked has no code here, or none passes (Dynamo")
        out.append("    # would compile the frame again; inside debug() the original code runs)")
        fallback = "%s.otherwise(__original_%s)" % (dname, fid)
        out.append("    return %s(%s)" % ("%s.bind(%s)" % (cname, fallback) if freevars else fallback, call))
        out.append("")
    clash = sorted(n for n in set(defined) if defined.count(n) > 1)
    if clash:
        raise ValueError("names defined twice in %s: %s" % (base, ", ".join(clash)))
    return "\n".join(out) + "\n", registry
