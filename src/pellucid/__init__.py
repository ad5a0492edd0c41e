"""pellucid: readable, steppable Python source for bytecode, and for everything torch.compile makes.

>>> import pellucid
>>> print(pellucid.decompile(lambda x: x + 1))
lambda x: x + 1
"""
from pellucid.errors import DecompileError, PycError
from pellucid.decompiler.api import decompile, recompile
from pellucid.bytecode.pyc import load_pyc
from pellucid.verify import Verdict, check_equivalent



def prepare_debug(dump_dir: str, quiet: bool = False):  # type: ignore[no-untyped-def]
    """Dump everything ``torch.compile`` compiles inside the ``with`` block to ``dump_dir``.

    See :func:`pellucid.dynamo.prepare_debug.prepare_debug`; torch is imported only here.

    >>> with prepare_debug("dump"):   # doctest: +SKIP
    ...     compiled_model(x)
    """
    from pellucid.dynamo.prepare_debug import prepare_debug as _prepare_debug

    return _prepare_debug(dump_dir, quiet)


def debug(pause: bool = True):  # type: ignore[no-untyped-def]
    """Run code compiled under :func:`prepare_debug` from the dumped files, for a debugger.

    See :mod:`pellucid.dynamo.debug_mode`.

    >>> with debug(pause=False):   # doctest: +SKIP
    ...     compiled_model(x)
    """
    from pellucid.dynamo.debug_mode import debug as _debug

    return _debug(pause)


def load_capture(dump_dir: str):  # type: ignore[no-untyped-def]
    """Read what :func:`prepare_debug` captured into ``dump_dir`` (every process's capture),
    as objects that say why each function broke and recompiled; needs no torch.

    See :mod:`pellucid.dynamo.api`.

    >>> dump = load_capture("dump")                              # doctest: +SKIP
    >>> print(dump.why_recompiled("Net.forward")[0].explain())   # doctest: +SKIP
    compile 0/1: the guard of entry 0/0 failed on L['x']: compiled for Tensor f32[4, 8] ...
    """
    from pellucid.dynamo.api import load_capture as _load_capture

    return _load_capture(dump_dir)


__all__ = ["decompile", "recompile", "load_pyc", "check_equivalent", "Verdict", "prepare_debug", "debug",
           "load_capture", "DecompileError", "PycError"]
__version__ = "0.1.0.dev0"
