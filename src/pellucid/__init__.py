"""pellucid: readable, steppable Python source for bytecode, and for everything torch.compile makes.

>>> import pellucid
>>> print(pellucid.decompile(lambda x: x + 1))
lambda x: x + 1
"""
from pellucid.errors import DecompileError, PycError
from pellucid.decompiler.api import decompile, recompile
from pellucid.bytecode.pyc import load_pyc

__all__ = ["decompile", "recompile", "load_pyc", "DecompileError", "PycError"]
__version__ = "0.1.0.dev0"
