"""How compiled code gets its names in a dump: readable, unique per code object, stable across runs.

Every compiled frame (a code object Dynamo compiled) has a *label* for people (``A.forward``, a
resume function ``A.forward.resume_at_7``) and an *ident*, the label as a Python identifier
(``A_forward``), which names its files (``full_code_for_A_forward.py``,
``__transformed_code_0_for_A_forward.py``) and its dispatcher, guards and globals in them.

Names are derived only from what a code object is -- its qualified name, module, first line,
the line and offset a resume function resumes at, its bytecode -- never from compile order or
``id()``, so a rerun of the same program writes the same names and breakpoints set in the files
still apply.  The shortest form that no other code object of the dump directory holds is used:

1. the qualified name without ``<locals>`` (``A.forward``; a closure ``make.f``);
2. module-qualified (``models.A.forward``) when another module has a code object of that name:
   by the module's own name first (``modeling_gpt2.GPT2Attention.forward``), then its full
   dotted name;
3. with the first line (``models.f@12``) for two definitions of one name in one module (for a
   resume function, the bytecode offset it resumes at: two breaks on one line);
4. with a digest of the bytecode (two lambdas on one line);
5. with an ordinal, only for code objects that are identical in every respect above.

:class:`Namer` holds the names given in one dump directory by this process, so two code objects
can never share one.

>>> label_of("torch_dynamo_resume_in_forward_at_7", "A.torch_dynamo_resume_in_forward_at_7")
'A.forward.resume_at_7'
"""
import hashlib
import re
import threading
import types
from typing import Any, Dict, List, Optional, Tuple

_NOT_FILE_SAFE = re.compile(r"[^0-9A-Za-z_]+")
_RESUME_PREFIX = "torch_dynamo_resume_in_"
_RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$")


def file_stem(name: str) -> str:
    """A file-name-safe form of a code object's name.

    >>> file_stem("<lambda>")
    'lambda'
    """
    return _NOT_FILE_SAFE.sub("_", name).strip("_") or "code"


def python_identifier(name: str) -> str:
    """``name`` with every character that cannot be in an identifier replaced by ``_``.

    >>> python_identifier("<lambda>")
    '_lambda_'
    """
    ident = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return "_" + ident if not ident or ident[0].isdigit() else ident


def is_resume_name(name: str) -> bool:
    """Whether ``name`` is the name Dynamo gives the resume functions it makes at graph breaks."""
    return name.startswith(_RESUME_PREFIX)


def _resume_path(name: str) -> str:
    """``torch_dynamo_resume_in_f_at_7`` -> ``f.resume_at_7`` (nested resume names recursively)."""
    m = _RESUME.match(name)
    if m is None:
        return name
    return "%s.resume_at_%s" % (_resume_path(m.group(1)), m.group(2))


def label_of(name: str, qualname: Optional[str] = None) -> str:
    """The readable label of a code object from its names: the qualified name without
    ``<locals>`` parts; a resume function as the function it resumes plus ``.resume_at_<line>``.

    >>> label_of("f", "make.<locals>.f")
    'make.f'
    """
    qualname = qualname or name
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    if parts and parts[-1] != name:
        parts[-1] = name  # a code object renamed without its qualified name (code.replace)
    if parts and is_resume_name(parts[-1]):
        parts[-1] = _resume_path(parts[-1])
    return ".".join(parts) or name


def code_digest(code: types.CodeType) -> str:
    """A short digest of what ``code`` does (bytecode, names, constants; nested code included),
    the same in every run of the same program (no ``id()``, no hash-randomised order)."""
    h = hashlib.sha1()

    def feed(c: types.CodeType) -> None:
        h.update(c.co_name.encode("utf-8", "replace"))
        h.update(c.co_code)
        h.update(repr((c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars)).encode("utf-8", "replace"))
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                feed(k)
            elif isinstance(k, frozenset):
                h.update(repr(sorted(repr(v) for v in k)).encode("utf-8", "replace"))
            else:
                h.update(_stable_repr(k).encode("utf-8", "replace"))
    feed(code)
    return h.hexdigest()[:8]


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _stable_repr(obj: Any) -> str:
    try:
        text = repr(obj)
    except Exception:  # noqa: BLE001 - only a digest input
        text = type(obj).__name__
    return _ADDRESS.sub("", text)


class Identity(object):
    """What a code object is, in terms that do not change from run to run."""

    def __init__(self, label: str, module: Optional[str], firstlineno: int, code: types.CodeType,
                 resume_offset: Optional[int] = None) -> None:
        self.label = label
        self.module = module
        self.firstlineno = firstlineno
        self.resume_offset = resume_offset
        self._code = code
        self._digest: Optional[str] = None

    @property
    def digest(self) -> str:
        if self._digest is None:
            self._digest = code_digest(self._code)
        return self._digest

    def candidates(self) -> List[str]:
        """Labels from the shortest to the most specific (the ordinal is the Namer's)."""
        module = (self.module + ".") if self.module else ""
        out = [self.label]
        if self.module and "." in self.module:
            out.append("%s.%s" % (self.module.rsplit(".", 1)[1], self.label))  # the module's own name
        out.append(module + self.label)
        if self.resume_offset is not None:
            out.append("%s%s_%d" % (module, self.label, self.resume_offset))
        else:
            out.append("%s%s@%d" % (module, self.label, self.firstlineno))
        out.append("%s~%s" % (out[-1], self.digest))
        return out

    def key(self) -> Tuple[Any, ...]:
        """Equal for code objects that no stable property tells apart."""
        return (self.label, self.module, self.firstlineno, self.resume_offset, self.digest)


class Namer(object):
    """The names given in one dump directory by this process: label -> the key of the code
    object that holds it.  A name is never given to two code objects that can be told apart;
    a later run (or a later ``prepare_debug`` block) naming the same code gets the same name."""

    def __init__(self) -> None:
        self._owner: Dict[str, Tuple[Any, ...]] = {}  # ident -> Identity.key()
        self._lock = threading.Lock()

    def name(self, identity: Identity, taken: Dict[str, Any], owner: Any) -> Tuple[str, str]:
        """(label, ident) for a code object.  ``taken`` maps the idents already given in the
        current capture to their owners (``owner`` is this code object's); it is updated."""
        with self._lock:
            labels = identity.candidates()
            for label in labels:
                ident = python_identifier(label)
                holder = taken.get(ident)
                if holder is not None and holder is not owner:
                    continue
                prior = self._owner.get(ident)
                if prior is not None and prior != identity.key():
                    continue
                self._owner[ident] = identity.key()
                taken[ident] = owner
                return label, ident
            # identical in every stable respect to a code object already named: an ordinal
            base = labels[-1]
            n = 2
            while True:
                label = "%s#%d" % (base, n)
                ident = python_identifier(label)
                if ident not in taken:
                    self._owner.setdefault(ident, identity.key())
                    taken[ident] = owner
                    return label, ident
                n += 1


_NAMERS: Dict[str, Namer] = {}
_NAMERS_LOCK = threading.Lock()


def namer_for(dump_dir: str) -> Namer:
    """The process's :class:`Namer` for a dump directory."""
    with _NAMERS_LOCK:
        namer = _NAMERS.get(dump_dir)
        if namer is None:
            namer = _NAMERS[dump_dir] = Namer()
        return namer
