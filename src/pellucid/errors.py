"""Exceptions pellucid raises for inputs it cannot work on."""


class DecompileError(Exception):
    """The input cannot be decompiled: not code, no bytecode, or an unreadable file.

    The message names the problem and, where possible, what to do about it::

        >>> import pellucid
        >>> pellucid.decompile(42)
        Traceback (most recent call last):
        ...
        pellucid.errors.DecompileError: int object has no bytecode to decompile
    """


class PycError(DecompileError):
    """A ``.pyc`` file that cannot be loaded: truncated, corrupt, or from another Python version."""
