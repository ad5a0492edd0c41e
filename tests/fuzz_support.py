"""Shared machinery for the fuzzed round trips (``tests/test_fuzz.py`` and ``bench/fuzz.py``).

A generated program (from ``hypothesmith``) is compiled by CPython in two forms:

* ``module``   -- the program as module code;
* ``function`` -- the program's statements as the body of ``def __fuzz__():`` (built on the
  AST, so indentation, continuation lines and string contents are untouched).  A form that
  CPython rejects (``return`` at module level, ``nonlocal`` without a binding, ``from
  __future__`` inside a function ...) is skipped;
* ``closure``  -- the same function nested in ``def __fuzz_outer__():`` that first binds every
  name the program reads, so they become free variables (shape checks only).

Every code object of a form is then checked (:func:`check_program`):

* ``raise``        -- ``pellucid.decompile`` (or ``pellucid.recompile``) raised.  The issue's bar
  is "decompiling valid bytecode never raises", so ``DecompileError`` counts too;
* ``noncompiling`` -- the decompiled source does not compile (a closure's source is also tried
  inside a function that binds its free variables, since ``nonlocal`` needs one);
* ``shape``        -- the recompiled code differs in argument layout (counts, positional-only and
  keyword-only counts, argument names), kind flags, free variables, cell variables (as a set)
  or the set of names its instructions use (globals, attributes, imports; pellucid's own
  ``__pellucid*`` names excepted);
* ``behaviour``    -- where the program is safe to run (see :func:`safe_to_run`), the original
  and the recompiled code are run in a forked child with a restricted set of builtins, a time
  limit and a memory limit, and their outcomes (final globals / return value or yielded
  values, exception type and arguments) are compared.

Which code objects count: the module code, and every function code object (``def``,
``lambda``, methods, nested functions, generators, coroutines).  Class bodies and the code
objects of comprehensions and generator expressions are implementation details that are
decompiled as part of their parent's source; they are checked only with ``all_codes=True``
(``bench/fuzz.py --all-codes``) and reported under their own ``kind``.
"""
import ast
import builtins
import dis
import json
import os
import re
import select
import signal
import sys
import types
import warnings

PY = sys.version_info[:2]

CO_OPTIMIZED = 0x01
KIND_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200  # varargs varkw generator coroutine iter-coro async-gen
# __future__ flags that change compilation (annotations, barry_as_FLUFL, generator_stop...)
FUTURE_FLAGS = 0x0FFF0000 if PY < (3, 12) else 0x0FFF0000
COMPREHENSIONS = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")
WRAPPER = "__fuzz__"
OUTER = "__fuzz_outer__"
FAILURE_KINDS = ("raise", "noncompiling", "shape", "behaviour")


# --------------------------------------------------------------------------- generation

def strategies():
    """``{name: strategy}`` of generated programs.  Imports hypothesmith (callers skip when it
    is missing)."""
    import hypothesmith
    import libcst

    return {
        # token-level grammar: odd expressions, literals, comments, whitespace
        "grammar": hypothesmith.from_grammar(),
        # libcst node level: real statements
        "module": hypothesmith.from_node(),
        "functiondef": hypothesmith.from_node(libcst.FunctionDef),
        "statements": _statements(hypothesmith, libcst),
    }


def _statements(hypothesmith, libcst):
    from hypothesis import strategies as st

    nodes = [libcst.If, libcst.While, libcst.For, libcst.Try, libcst.With, libcst.ClassDef]
    return st.one_of([hypothesmith.from_node(n) for n in nodes])


# --------------------------------------------------------------------------- compiling

def _compile(source_or_tree, filename="<fuzz>"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source_or_tree, filename, "exec", dont_inherit=True)


def compile_forms(src):
    """``[(form, code)]`` for the forms of ``src`` that CPython compiles."""
    forms = []
    rejected = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError, TypeError)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(src)
    except rejected:
        return forms
    try:
        forms.append(("module", _compile(src)))
    except rejected:
        pass
    body = [stmt for stmt in tree.body] or [ast.Pass()]
    fn = ast.FunctionDef(name=WRAPPER, args=_no_args(), body=body, decorator_list=[],
                         returns=None, type_comment=None)
    if PY >= (3, 12):
        fn.type_params = []
    wrapped = ast.Module(body=[fn], type_ignores=[])
    ast.fix_missing_locations(wrapped)
    try:
        forms.append(("function", _compile(wrapped)))
    except rejected:
        return forms
    # closure: the same function nested in one that binds every name the program reads, so
    # those become free variables (and cells of the outer function)
    loaded = sorted(set(node.id for node in ast.walk(tree)
                        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)))[:50]
    if loaded:
        binds = [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store()) for n in loaded],
                            value=ast.Constant(value=None))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inner = ast.parse(src).body or [ast.Pass()]
        fn = ast.FunctionDef(name=WRAPPER, args=_no_args(), body=inner, decorator_list=[],
                             returns=None, type_comment=None)
        outer = ast.FunctionDef(name=OUTER, args=_no_args(),
                                body=binds + [fn, ast.Return(ast.Name(id=WRAPPER, ctx=ast.Load()))],
                                decorator_list=[], returns=None, type_comment=None)
        if PY >= (3, 12):
            fn.type_params = []
            outer.type_params = []
        module = ast.Module(body=[outer], type_ignores=[])
        ast.fix_missing_locations(module)
        try:
            forms.append(("closure", _compile(module)))
        except rejected:
            pass
    return forms


def _no_args():
    kwargs = dict(args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    if PY >= (3, 8):
        kwargs["posonlyargs"] = []
    return ast.arguments(**kwargs)


def iter_codes(code, path=None):
    """Yield ``(path, code)`` for ``code`` and every code object nested in it."""
    path = path or code.co_name
    yield path, code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            for item in iter_codes(const, path + "/" + const.co_name):
                yield item


def code_kind(code, is_top):
    if is_top:
        return "module"
    if code.co_name in COMPREHENSIONS:
        return "comprehension"
    if not code.co_flags & CO_OPTIMIZED:
        return "class"
    return "function"


def names_used(code):
    """Names that the reachable instructions of ``code`` and of the code objects they load use,
    minus pellucid's own.  (Unreachable code -- 3.13 keeps a handler of a ``try`` whose body
    cannot raise -- may legitimately vanish from the decompiled source.)"""
    names = set()
    fallback = False
    todo = [code]
    while todo:
        c = todo.pop()
        fallback = fallback or any(_own(n) and n.endswith("__pellucid_builtins")
                                   for n in c.co_names + c.co_varnames + c.co_cellvars)
        previous = None
        for ins in reachable_instructions(c):
            if ins.opcode in dis.hasname and isinstance(ins.argval, str):
                # the fallback's `__pellucid_builtins.next` etc. and its `''.join(...)` for
                # BUILD_STRING are pellucid's own names
                # (3.13's LOAD_FAST_LOAD_FAST / STORE_FAST_LOAD_FAST name two locals: the
                # second is loaded last)
                loaded = previous.argval[-1] if previous is not None and isinstance(
                    previous.argval, tuple) and previous.argval else getattr(previous, "argval", None)
                own = previous is not None and ("ATTR" in ins.opname or "METHOD" in ins.opname) \
                    and (_own(loaded) and str(loaded).endswith("__pellucid_builtins")
                         or (loaded == "" and ins.argval == "join"))
                if not own:
                    names.add(ins.argval)
            elif ins.opcode in dis.hasconst and isinstance(ins.argval, types.CodeType):
                todo.append(ins.argval)
            previous = ins
    if fallback:
        names.discard("builtins")  # the fallback's `import builtins as __pellucid_builtins`
    return {n for n in names if not _own(n)}


# Attributes the fallback's own code reads or sets (the saved exception's __context__/
# __traceback__, the `with` protocol, a type's tp_name for its error message and its flags for
# `match`, the names it gives the functions and classes it defines): not names of the program.
FALLBACK_ATTRIBUTES = frozenset({"__context__", "__traceback__", "__enter__", "__exit__",
                                 "__aenter__", "__aexit__", "__get__", "__flags__", "__module__",
                                 "__name__", "__qualname__"})


def uses_fallback(code):
    """Whether ``code`` or a code object nested in it was decompiled by the fallback."""
    return any(any(_own(n) and n.endswith("__pellucid_builtins")
                   for n in c.co_names + c.co_varnames + c.co_cellvars)
               for _, c in iter_codes(code))


def _own(name):
    """Whether ``name`` is one of pellucid's ``__pellucid*`` names, also as mangled in a class
    body (``_C__pellucid_state``)."""
    return isinstance(name, str) and re.match(r"^(_\w*?)?__pellucid", name) is not None


_STOPS = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD",
          "JUMP_ABSOLUTE", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
          "JUMP_NO_INTERRUPT"}
_JUMPS = set(dis.hasjrel) | set(dis.hasjabs)


def _constant_condition(instructions, i):
    """For a conditional jump on a constant (``assert 1``, ``while 1``): True if it is always
    taken, False if never; None otherwise."""
    ins = instructions[i]
    name = ins.opname
    if not name.startswith("POP_JUMP") or "NONE" in name:
        return None
    j = i - 1
    if j >= 0 and instructions[j].opname == "TO_BOOL":
        j -= 1
    if j < 0 or instructions[j].opname != "LOAD_CONST":
        return None
    try:
        value = bool(instructions[j].argval)
    except Exception:
        return None
    return value if "IF_TRUE" in name else not value


def reachable_instructions(code):
    """The instructions of ``code`` reachable from its start (jumps, fall-through and exception
    handlers of reachable instructions).

    3.8-3.10 (``SETUP_FINALLY``): a handler counts only once a reachable instruction between the
    setup and the handler may raise.  ``try: pass`` -- also nested, ``try: (try: pass finally:
    pass) except: ...`` -- keeps a handler nothing can reach; the decompiled ``pass`` lets
    CPython drop it (and the names and code objects it uses).  3.11+: exception-table handlers
    of reachable instructions (the compiler already drops dead ones)."""
    instructions = list(dis.get_instructions(code))
    at = {ins.offset: i for i, ins in enumerate(instructions)}
    entries = list(getattr(dis.Bytecode(code), "exception_entries", ()))
    seen = set()
    setups = {}  # index of a reachable SETUP_FINALLY -> index of its handler, not yet reached

    def walk(todo):
        while todo:
            i = todo.pop()
            if i in seen or i >= len(instructions):
                continue
            seen.add(i)
            ins = instructions[i]
            constant = _constant_condition(instructions, i)
            if ins.opcode in _JUMPS and constant is not False:
                target = getattr(ins, "jump_target", None)
                if target is None:
                    target = ins.argval
                if isinstance(target, int) and target in at:
                    if ins.opname == "SETUP_FINALLY":
                        setups[i] = at[target]
                    else:
                        todo.append(at[target])
            if constant is True:
                continue  # a jump on a constant that is always taken: no fall-through
            for entry in entries:
                if entry.start <= ins.offset < entry.end and entry.target in at:
                    todo.append(at[entry.target])
            if ins.opname not in _STOPS:
                todo.append(i + 1)

    walk([0] if instructions else [])
    while True:
        # the protected code lies between the setup and its handler (3.8-3.10 layout); what it
        # reaches outside that span (a return, a jump out) has left the block
        live = [h for s, h in setups.items() if h not in seen and any(
            k in seen and _may_raise(instructions, k) for k in range(s + 1, h))]
        if not live:
            break
        walk(live)
    return [instructions[i] for i in sorted(seen)]


# Instructions that raise nothing of their own: the skeleton of `try: pass` blocks.  END_FINALLY
# and RERAISE re-raise only what an instruction of the same protected span raised first.
_CANNOT_RAISE = {"NOP", "SETUP_FINALLY", "POP_BLOCK", "BEGIN_FINALLY", "END_FINALLY", "RERAISE",
                 "JUMP_FORWARD", "JUMP_ABSOLUTE", "LOAD_CONST", "RETURN_VALUE"}


def _may_raise(instructions, k):
    """Whether instruction ``k`` may raise (a conditional jump on a constant cannot: `assert 1`)."""
    return instructions[k].opname not in _CANNOT_RAISE \
        and _constant_condition(instructions, k) is None


def _tree_layout(code):
    """Per-function layout of the tree of ``code`` (by name path)."""
    return [(p, layout(c)) for p, c in iter_codes(code)]


def layout(code):
    flags = code.co_flags
    nargs = code.co_argcount + code.co_kwonlyargcount + bool(flags & 0x04) + bool(flags & 0x08)
    return {
        "co_argcount": code.co_argcount,
        "co_posonlyargcount": getattr(code, "co_posonlyargcount", 0),
        "co_kwonlyargcount": code.co_kwonlyargcount,
        "argument names": code.co_varnames[:nargs],
        "kind flags": hex(flags & KIND_FLAGS),
        "co_freevars": code.co_freevars,
        "co_cellvars (as a set)": sorted(code.co_cellvars),
    }


def source_compiles(source, code):
    """None if the decompiled ``source`` compiles, else the error text."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        return "%s: %s" % (type(exc).__name__, exc)
    try:
        _compile(tree, "<decompiled>")
        return None
    except (SyntaxError, ValueError) as exc:
        first = "%s: %s" % (type(exc).__name__, exc)
    if not code.co_freevars:
        return first
    # A closure's source may say `nonlocal x`: give it an enclosing function that binds x.
    binds = [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store()) for n in code.co_freevars],
                        value=ast.Constant(value=None))]
    outer = ast.FunctionDef(name="__fuzz_outer__", args=_no_args(), body=binds + tree.body,
                            decorator_list=[], returns=None, type_comment=None)
    if PY >= (3, 12):
        outer.type_params = []
    module = ast.Module(body=[outer], type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        _compile(module, "<decompiled>")
        return None
    except (SyntaxError, ValueError):
        return first


# --------------------------------------------------------------------------- results

class Failure(object):
    def __init__(self, kind, form, path, code_kind, message, detail=""):
        self.kind = kind            # one of FAILURE_KINDS
        self.form = form            # "module" / "function"
        self.path = path            # code object path, e.g. "<module>/f/<lambda>"
        self.code_kind = code_kind  # "module" / "function" / "class" / "comprehension"
        self.message = message      # one line
        self.detail = detail        # decompiled source, outcomes ...

    def signature(self):
        """A short key grouping failures of the same cause: kind plus the message with names,
        numbers and quoted text blanked out."""
        msg = re.sub(r"'[^']{21,}'|\"[^\"]{21,}\"", "'…'", self.message)
        msg = re.sub(r"\b\d+\b", "N", msg)
        msg = re.sub(r"0x[0-9a-f]+", "0x…", msg)
        return "%s[%s]: %s" % (self.kind, self.code_kind, msg[:160])

    def __str__(self):
        text = "%s in %s form, %s %s: %s" % (self.kind, self.form, self.code_kind, self.path,
                                             self.message)
        if self.detail:
            text += "\n" + self.detail
        return text


class Report(object):
    def __init__(self, src):
        self.src = src
        self.forms = []          # forms CPython compiled
        self.codes_checked = 0
        self.behaviour_runs = 0  # forms whose behaviour was compared
        self.failures = []
        self.fallbacks = []      # reasons of decompiled sources that use the fallback
        self.bindings = {}       # names recompile() bound for constants without a literal

    def fail(self, *args, **kwargs):
        self.failures.append(Failure(*args, **kwargs))


# --------------------------------------------------------------------------- the check

def check_program(src, behaviour=True, all_codes=False, timeout=1.0):
    """Compile ``src`` in both forms and check every code object; return a :class:`Report`."""
    import pellucid

    report = Report(src)
    for form, top in compile_forms(src):
        report.forms.append(form)
        recompiled = {}
        for path, code in iter_codes(top):
            kind = code_kind(code, code is top)
            if kind in ("class", "comprehension") and not all_codes:
                continue
            if form != "module" and (code is top or code.co_name == OUTER):
                continue  # the wrapper module is just `def __fuzz__(): ...`
            report.codes_checked += 1
            new = _check_code(pellucid, report, form, path, kind, code)
            if new is not None:
                recompiled[path] = new
        if behaviour:
            _check_behaviour(report, form, top, recompiled, timeout)
    return report


def _check_code(pellucid, report, form, path, kind, code):
    """Decompile and recompile one code object; return the recompiled code or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            source = pellucid.decompile(code)
    except RecursionError as exc:
        report.fail("raise", form, path, kind, "RecursionError: %s" % exc)
        return None
    except Exception as exc:
        report.fail("raise", form, path, kind, "%s: %s" % (type(exc).__name__, _first_line(exc)))
        return None
    if not isinstance(source, str):
        report.fail("raise", form, path, kind, "decompile returned %s, not str" % type(source).__name__)
        return None
    problem = source_compiles(source, code)
    if problem is not None:
        report.fail("noncompiling", form, path, kind, problem, source)
        return None
    if kind in ("class", "comprehension"):
        return None  # recompile() is for functions and modules
    if FALLBACK_MARKER in source:
        match = re.search(FALLBACK_MARKER + r" = (['\"])(.*?)\1", source)
        report.fallbacks.append(match.group(2) if match else "?")
    # A function's constants without a literal form are bound in its globals: recompile a
    # function object (with cells for its free variables), not the bare code.
    target = code if kind == "module" else types.FunctionType(
        code, report.bindings, None, None, tuple(_cell() for _ in code.co_freevars))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            new = pellucid.recompile(target)
    except Exception as exc:
        text = "%s: %s" % (type(exc).__name__, _first_line(exc))
        if "does not compile" in text:
            report.fail("noncompiling", form, path, kind, "recompile: " + text, source)
        elif "differs in layout" in text or "lost the function" in text:
            report.fail("shape", form, path, kind, "recompile: " + text, source)
        else:
            report.fail("raise", form, path, kind, "recompile: " + text, source)
        return None
    problems = []
    if kind == "module":
        if (new.co_flags & FUTURE_FLAGS) != (code.co_flags & FUTURE_FLAGS):
            problems.append("future flags %#x != %#x" % (new.co_flags & FUTURE_FLAGS,
                                                          code.co_flags & FUTURE_FLAGS))
    else:
        old_layout, new_layout = layout(code), layout(new)
        for key in old_layout:
            if old_layout[key] != new_layout[key]:
                problems.append("%s %r != %r" % (key, new_layout[key], old_layout[key]))
    old_names, new_names = names_used(code), names_used(new)
    if uses_fallback(new):
        # compared without the fallback's own attributes on both sides, so an original that
        # uses one of them is not reported as missing it either
        old_names, new_names = old_names - FALLBACK_ATTRIBUTES, new_names - FALLBACK_ATTRIBUTES
    if old_names != new_names:
        problems.append("names used: missing %s, extra %s" % (
            sorted(old_names - new_names), sorted(new_names - old_names)))
    if problems:
        report.fail("shape", form, path, kind, "; ".join(problems), source)
    return new


FALLBACK_MARKER = "__pellucid_fallback__"


def _cell():
    """An empty closure cell (``types.CellType`` is 3.8+)."""
    return types.CellType()


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0] if text else ""


# --------------------------------------------------------------------------- behaviour

SAFE_BUILTINS = [
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",
    "classmethod", "complex", "dict", "divmod", "enumerate", "filter", "float", "frozenset",
    "hex", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next",
    "object", "oct", "ord", "pow", "property", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "zip",
    "__build_class__", "__name__", "NotImplemented", "Ellipsis",
]
# attribute names that reach frames, globals or code (generators, tracebacks, functions)
_UNSAFE_ATTR = re.compile(r"^(_|(f|gi|cr|ag|tb|co|func)_)|^(format|format_map|mro)$")


def _import_builtins_only(name, globals=None, locals=None, fromlist=(), level=0):
    # pellucid's fallback says `import builtins as __pellucid_builtins`; nothing else imports
    # (safe_to_run turns away programs with imports of their own).
    if name == "builtins" and not level:
        return builtins
    raise ImportError("the fuzz sandbox imports nothing but builtins")


def safe_builtins():
    safe = {name: getattr(builtins, name) for name in SAFE_BUILTINS if hasattr(builtins, name)}
    safe["__import__"] = _import_builtins_only
    for name, value in vars(builtins).items():
        if isinstance(value, type) and issubclass(value, BaseException):
            safe[name] = value
    return safe


def safe_to_run(code):
    """Whether running ``code`` (with :func:`safe_builtins`) can touch nothing outside it: no
    imports, no attribute that leads to frames, globals, code objects or format-string
    attribute lookups.  Unknown globals just raise NameError."""
    for _, c in iter_codes(code):
        for ins in dis.get_instructions(c):
            if ins.opname.startswith("IMPORT"):
                return False
            if "ATTR" in ins.opname or "METHOD" in ins.opname:
                if isinstance(ins.argval, str) and _UNSAFE_ATTR.search(ins.argval):
                    return False
    return True


def canon(value, depth=0):
    """A JSON-able, exactly comparable image of a plain value."""
    if depth > 20:
        return ["deep"]
    tp = type(value)
    if value is None or value is Ellipsis or value is NotImplemented or tp is bool:
        return [repr(value)]
    if tp in (int, str):
        return [tp.__name__, value if tp is str or abs(value) < 2 ** 53 else repr(value)]
    if tp in (float, complex, bytes, bytearray, range, slice):
        return [tp.__name__, repr(value)]
    if tp in (list, tuple):
        return [tp.__name__] + [canon(item, depth + 1) for item in value]
    if tp is dict:
        return ["dict"] + [[canon(k, depth + 1), canon(v, depth + 1)] for k, v in value.items()]
    if tp in (set, frozenset):
        return [tp.__name__] + sorted(json.dumps(canon(item, depth + 1)) for item in value)
    if isinstance(value, BaseException):
        return ["exception", type(value).__name__, canon(value.args, depth + 1)]
    if isinstance(value, types.FunctionType):
        return ["function", value.__qualname__]
    if isinstance(value, type):
        return ["type", value.__qualname__]
    return ["object", tp.__qualname__]


class _Timeout(BaseException):
    pass


def _outcome_module(code, seconds, bindings=None):
    ns = {"__name__": "__fuzz_module__", "__builtins__": safe_builtins()}
    ns.update(bindings or {})
    exc = _run(lambda: exec(code, ns), seconds)
    if exc == "timeout":
        return "timeout"
    state = sorted((k, canon(v)) for k, v in ns.items()
                   if k != "__builtins__" and not k.startswith("__pellucid"))
    return {"exception": exc, "globals": state}


def _outcome_function(wrapper_module, fn_code, seconds, bindings=None):
    ns = {"__name__": "__fuzz_module__", "__builtins__": safe_builtins()}
    ns.update(bindings or {})
    exec(wrapper_module, ns)
    fn = ns[WRAPPER]
    if fn_code is not None:
        fn.__code__ = fn_code
    box = {}

    def call():
        result = fn()
        if isinstance(result, types.GeneratorType):
            items = []
            box["yielded"] = items
            for item in result:
                items.append(canon(item))
                if len(items) >= 100:
                    break
        elif isinstance(result, types.CoroutineType):
            result.close()
            box["result"] = ["coroutine"]
        else:
            box["result"] = canon(result)

    exc = _run(call, seconds)
    if exc == "timeout":
        return "timeout"
    return {"exception": exc, "result": box.get("result"), "yielded": box.get("yielded")}


def _run(thunk, seconds):
    def on_alarm(signum, frame):
        raise _Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        thunk()
        return None
    except _Timeout:
        return "timeout"
    except BaseException as exc:  # noqa: B902 -- every exception is an outcome
        return canon(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _check_behaviour(report, form, top, recompiled, timeout):
    if not hasattr(os, "fork") or form not in ("module", "function"):
        return
    if form == "module":
        if "<module>" not in recompiled or not safe_to_run(top):
            return
        new_top = recompiled["<module>"]
    else:
        path = "<module>/" + WRAPPER
        fn_code = [c for c in top.co_consts if isinstance(c, types.CodeType)][0]
        if path not in recompiled or not safe_to_run(fn_code):
            return
        new_fn = recompiled[path]
    result = _in_child(lambda: _compare(form, top, new_top if form == "module" else new_fn,
                                        timeout, report.bindings), 4 * timeout + 5)
    if result is None or result.get("status") == "skipped":
        return
    report.behaviour_runs += 1
    if result.get("status") != "same":
        path = "<module>" if form == "module" else "<module>/" + WRAPPER
        report.fail("behaviour", form, path, "module" if form == "module" else "function",
                    "original and recompiled code behave differently",
                    "original:   %s\nrecompiled: %s" % (json.dumps(result.get("original")),
                                                       json.dumps(result.get("recompiled"))))


def _compare(form, top, new, timeout, bindings):
    if form == "module":
        original = _outcome_module(top, timeout)
        if original == "timeout":
            return {"status": "skipped"}
        recompiled = _outcome_module(new, 3 * timeout, bindings)
    else:
        original = _outcome_function(top, None, timeout)
        if original == "timeout":
            return {"status": "skipped"}
        recompiled = _outcome_function(top, new, 3 * timeout, bindings)
    status = "same" if json.dumps(original) == json.dumps(recompiled) else "differs"
    return {"status": status, "original": original, "recompiled": recompiled}


def _in_child(thunk, wall_seconds):
    """Run ``thunk`` in a forked child (memory-limited, stdout/stderr discarded) and return its
    JSON result; None if the child died (memory, a C-level hang past ``wall_seconds``...)."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_fd)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            _limit_memory()
            sys.setrecursionlimit(min(sys.getrecursionlimit(), 1000))
            try:
                payload = json.dumps(thunk())
            except BaseException as exc:  # noqa: B902
                payload = json.dumps({"status": "error", "original": repr(exc)})
            data = payload.encode("utf-8", "replace")
            while data:
                data = data[os.write(write_fd, data):]
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    try:
        import time

        deadline = time.monotonic() + wall_seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                break
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
    try:
        return json.loads(b"".join(chunks).decode("utf-8"))
    except ValueError:
        return None


def _limit_memory():
    try:
        import resource

        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[0])
        current = pages * os.sysconf("SC_PAGE_SIZE")
        limit = current + 512 * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except Exception:
        pass
