"""pellucid: readable, steppable Python source for bytecode, and for everything torch.compile makes.

>>> import pellucid
>>> print(pellucid.decompile(lambda x: x + 1))
lambda x: x + 1
"""
from pellucid.errors import DecompileError, PycError
from pellucid.decompiler.api import decompile, recompile
from pellucid.bytecode.pyc import load_pyc
from pellucid.verify import Verdict, check_equivalent



def prepare_debug(dump_dir: str):  # type: ignore[no-untyped-def]
    """Dump everything ``torch.compile`` compiles inside the ``with`` block to ``dump_dir``.

    See :func:`pellucid.dynamo.prepare_debug.prepare_debug`; torch is imported only here.

    >>> with prepare_debug("dump"):   # doctest: +SKIP
    ...     compiled_model(x)
    """
    from pellucid.dynamo.prepare_debug import prepare_debug as _prepare_debug

    return _prepare_debug(dump_dir)


def debug(pause: bool = True):  # type: ignore[no-untyped-def]
    """Run code compiled under :func:`prepare_debug` from the dumped files, for a debugger.

    See :mod:`pellucid.dynamo.debug_mode`.

    >>> with debug(pause=False):   # doctest: +SKIP
    ...     compiled_model(x)
    """
    from pellucid.dynamo.debug_mode import debug as _debug

    return _debug(pause)


__all__ = ["decompile", "recompile", "load_pyc", "check_equivalent", "Verdict", "prepare_debug", "debug", "DecompileError", "PycError"]
__version__ = "0.1.0.dev0"
