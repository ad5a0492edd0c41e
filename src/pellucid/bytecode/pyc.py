"""Read ``.pyc`` files of the running interpreter into code objects.

A ``.pyc`` written by CPython 3.7+ (PEP 552) is a 16-byte header followed by the module's code
object in :mod:`marshal` format::

    bytes 0-3    magic number: 2 bytes little-endian + b"\\r\\n", one per bytecode format
    bytes 4-7    flags (little-endian): bit 0 = hash-based, bit 1 = check the source
    bytes 8-15   flags bit 0 clear: source mtime (4 bytes) + source size (4 bytes)
                 flags bit 0 set:   SipHash of the source (8 bytes)
    bytes 16-    marshal.dumps(module code object)

Marshal data and bytecode only make sense to the CPython version that wrote them, so
:func:`load_pyc` only reads ``.pyc`` files of the running interpreter; for any other it raises a
:class:`~pellucid.errors.PycError` that names the Python version that compiled the file.

>>> import py_compile, tempfile, os
>>> d = tempfile.mkdtemp()
>>> src = os.path.join(d, "m.py")
>>> with open(src, "w") as f:
...     _ = f.write("x = 1\\n")
>>> code = load_pyc(py_compile.compile(src, cfile=os.path.join(d, "m.pyc")))
>>> code.co_name
'<module>'
"""
import importlib.util
import marshal
import os
import stat
import sys
import types
from typing import Dict, List, NamedTuple, Optional, Tuple, Union

from pellucid.errors import PycError

__all__ = [
    "FINAL_MAGIC_NUMBERS",
    "HEADER_SIZE",
    "MAGIC_NUMBER",
    "SUPPORTED_VERSIONS",
    "MagicVersion",
    "PycHeader",
    "load_pyc",
    "loads_pyc",
    "magic_number_of",
    "read_pyc",
    "version_of_magic",
]

PathLike = Union[str, bytes, "os.PathLike[str]"]
Version = Tuple[int, int]

#: Size of the PEP 552 header of the running interpreter's ``.pyc`` files.
HEADER_SIZE = 16

#: The running interpreter's magic number (4 bytes, as at the start of its ``.pyc`` files).
MAGIC_NUMBER: bytes = importlib.util.MAGIC_NUMBER

#: Oldest and newest CPython versions whose bytecode pellucid decompiles.
SUPPORTED_VERSIONS: Tuple[Version, Version] = ((3, 8), (3, 15))

#: The magic number (first two bytes of the ``.pyc``, little-endian) of each released CPython
#: version. 3.5 has two: 3.5.3 and later releases write 3351.
FINAL_MAGIC_NUMBERS: Dict[int, Version] = {
    20121: (1, 5),
    50428: (1, 6),
    50823: (2, 0),
    60202: (2, 1),
    60717: (2, 2),
    62011: (2, 3),
    62061: (2, 4),
    62131: (2, 5),
    62161: (2, 6),
    62211: (2, 7),
    3131: (3, 0),
    3151: (3, 1),
    3180: (3, 2),
    3230: (3, 3),
    3310: (3, 4),
    3350: (3, 5),
    3351: (3, 5),
    3379: (3, 6),
    3394: (3, 7),
    3413: (3, 8),
    3425: (3, 9),
    3439: (3, 10),
    3495: (3, 11),
    3531: (3, 12),
    3571: (3, 13),
    3627: (3, 14),
    3666: (3, 15),
}

# Magic numbers used during each version's development (alphas, betas, release candidates), as
# inclusive ranges. From 3.11 on CPython reserves 50 numbers per minor version (3.n starts at
# 2900 + 50 * n), which :func:`version_of_magic` also applies to versions newer than this table.
_DEVELOPMENT_RANGES: List[Tuple[int, int, Version]] = [
    (62011, 62021, (2, 3)),
    (62041, 62061, (2, 4)),
    (62071, 62131, (2, 5)),
    (62151, 62161, (2, 6)),
    (62171, 62211, (2, 7)),
    (3000, 3131, (3, 0)),
    (3141, 3151, (3, 1)),
    (3160, 3180, (3, 2)),
    (3190, 3230, (3, 3)),
    (3250, 3310, (3, 4)),
    (3320, 3351, (3, 5)),
    (3360, 3379, (3, 6)),
    (3390, 3394, (3, 7)),
    (3400, 3413, (3, 8)),
    (3420, 3425, (3, 9)),
    (3430, 3439, (3, 10)),
]
_LAST_TABLED_MINOR = max(v[1] for v in FINAL_MAGIC_NUMBERS.values() if v[0] == 3)


class MagicVersion(NamedTuple):
    """The CPython version a magic number belongs to.

    ``released`` is False for magic numbers only used by pre-releases (alphas, betas, release
    candidates) and for versions newer than pellucid's table, whose final number is not known.
    """

    version: Version
    released: bool

    def describe(self) -> str:
        """``'Python 3.12'`` or ``'a pre-release of Python 3.14'``."""
        name = "Python {}.{}".format(*self.version)
        if self.released:
            return name
        if self.version[0] == 3 and self.version[1] > _LAST_TABLED_MINOR:
            return name + " (newer than this version of pellucid knows)"
        return "a pre-release of " + name


class PycHeader(NamedTuple):
    """The 16-byte header of a ``.pyc`` (PEP 552)."""

    magic: bytes
    flags: int
    mtime: Optional[int]
    """Source modification time, for timestamp-based pycs (``None`` for hash-based ones)."""
    source_size: Optional[int]
    """Source size in bytes modulo 2**32, for timestamp-based pycs."""
    source_hash: Optional[bytes]
    """SipHash of the source, for hash-based pycs (``None`` for timestamp-based ones)."""

    @property
    def hash_based(self) -> bool:
        """True for ``--invalidation-mode checked-hash`` / ``unchecked-hash`` pycs."""
        return bool(self.flags & 0b01)

    @property
    def check_source(self) -> bool:
        """True when the import system re-checks the source hash (``checked-hash``)."""
        return bool(self.flags & 0b10)


def magic_number_of(magic: bytes) -> Optional[int]:
    """The magic number in the first 4 bytes of a ``.pyc``, or None if they are not one.

    >>> magic_number_of(b"\\xa7\\r\\r\\n")
    3495
    >>> magic_number_of(b"impo") is None
    True
    """
    if len(magic) < 4 or magic[2:4] != b"\r\n":
        return None
    return int.from_bytes(magic[:2], "little")


def version_of_magic(magic: Union[bytes, int]) -> Optional[MagicVersion]:
    """The CPython version that writes ``magic`` (4 header bytes or the number), if known.

    >>> version_of_magic(3531)
    MagicVersion(version=(3, 12), released=True)
    >>> version_of_magic(b"\\xc6\\r\\r\\n")   # 3526, used by 3.12 betas
    MagicVersion(version=(3, 12), released=False)
    >>> version_of_magic(1234) is None
    True
    """
    if isinstance(magic, bytes):
        number = magic_number_of(magic)
        if number is None:
            return None
    else:
        number = magic
    if number in FINAL_MAGIC_NUMBERS:
        return MagicVersion(FINAL_MAGIC_NUMBERS[number], True)
    for first, last, version in _DEVELOPMENT_RANGES:
        if first <= number <= last:
            return MagicVersion(version, False)
    # 3.11 and later: 3.n uses 2900 + 50 * n ... 2900 + 50 * n + 49.
    if 3450 <= number < 4000:
        return MagicVersion((3, (number - 2900) // 50), False)
    return None


def _version_str(version: Version) -> str:
    return "{}.{}".format(*version)


def _running() -> Version:
    return (sys.version_info[0], sys.version_info[1])


def _is_supported(version: Version) -> bool:
    return SUPPORTED_VERSIONS[0] <= version <= SUPPORTED_VERSIONS[1]


def _wrong_magic_message(name: str, magic: bytes) -> str:
    here = _version_str(_running())
    number = magic_number_of(magic)
    if number is None:
        return (
            f"{name} is not a .pyc file: it does not start with a .pyc magic number "
            f"(first bytes: {magic!r})"
        )
    known = version_of_magic(number)
    if known is None:
        return (
            f"{name} is not a .pyc file of any known Python version "
            f"(magic number {number}; this is Python {here}, magic number "
            f"{magic_number_of(MAGIC_NUMBER)})"
        )
    if known.released and known.version != _running():
        message = f"{name} was compiled by {known.describe()} but this is Python {here}"
    else:
        message = (
            f"{name} was compiled by {known.describe()} (magic number {number}) but this is "
            f"Python {here} (magic number {magic_number_of(MAGIC_NUMBER)})"
        )
    if known.version == _running():
        advice = "recompile the source with this Python"
    elif not _is_supported(known.version):
        advice = "pellucid reads bytecode of Python {} to {} only".format(
            _version_str(SUPPORTED_VERSIONS[0]), _version_str(SUPPORTED_VERSIONS[1])
        )
    elif known.released:
        advice = f"run pellucid with Python {_version_str(known.version)}"
    else:
        advice = f"run pellucid with the same pre-release of Python {_version_str(known.version)}"
    return f"{message}: {advice}"


def _parse_header(data: bytes, name: str) -> PycHeader:
    if not data:
        raise PycError(f"{name} is empty (0 bytes), not a .pyc file")
    magic = data[:4]
    if len(magic) == 4 and magic != MAGIC_NUMBER:
        raise PycError(_wrong_magic_message(name, magic))
    if len(data) < HEADER_SIZE:
        raise PycError(
            f"{name} is truncated: {len(data)} bytes, shorter than the {HEADER_SIZE}-byte "
            f".pyc header"
        )
    flags = int.from_bytes(data[4:8], "little")
    if flags & ~0b11:
        raise PycError(f"{name} has an invalid .pyc header: unknown flags {flags:#x}")
    if flags & 0b01:
        return PycHeader(magic, flags, None, None, data[8:16])
    mtime = int.from_bytes(data[8:12], "little")
    size = int.from_bytes(data[12:16], "little")
    return PycHeader(magic, flags, mtime, size, None)


def loads_pyc(data: bytes, name: str = "<pyc data>") -> Tuple[PycHeader, types.CodeType]:
    """Parse the bytes of a ``.pyc``; ``name`` is used in error messages.

    >>> import importlib.util, marshal
    >>> data = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(compile("1", "m", "exec"))
    >>> header, code = loads_pyc(data)
    >>> header.hash_based, code.co_filename
    (False, 'm')
    """
    header = _parse_header(data, name)
    payload = data[HEADER_SIZE:]
    if not payload:
        raise PycError(f"{name} is truncated: it has a .pyc header but no code after it")
    try:
        obj = marshal.loads(payload)
    except Exception as exc:  # EOFError, ValueError, TypeError, MemoryError, RecursionError...
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise PycError(
            f"{name} has corrupt or truncated marshal data "
            f"({type(exc).__name__}{': ' + detail if detail else ''})"
        ) from None
    if not isinstance(obj, types.CodeType):
        raise PycError(
            f"{name} does not contain a code object: its marshal data is a "
            f"{type(obj).__name__}"
        )
    return header, obj


def read_pyc(path: PathLike) -> Tuple[PycHeader, types.CodeType]:
    """Read a ``.pyc`` of the running interpreter; return its header and module code object.

    Raises :class:`~pellucid.errors.PycError` (one line, naming the file) if the file is
    missing, unreadable, not a ``.pyc``, from another Python version, or corrupt.

    >>> import py_compile, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> src = os.path.join(d, "m.py")
    >>> with open(src, "w") as f:
    ...     _ = f.write("x = 1\\n")
    >>> pyc = py_compile.compile(src, cfile=os.path.join(d, "m.pyc"),
    ...                          invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    >>> header, code = read_pyc(pyc)
    >>> header.hash_based, header.check_source
    (True, True)
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"expected a path (str or os.PathLike), not {type(path).__name__}")
    name = os.fspath(path)
    if not isinstance(name, str):  # a bytes path
        name = os.fsdecode(name)
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise PycError(f"no such file: {name}") from None
    except NotADirectoryError:
        raise PycError(f"no such file: {name} (a parent of it is not a directory)") from None
    except PermissionError:
        raise PycError(f"permission denied: cannot read {name}") from None
    except (OSError, ValueError) as exc:
        raise PycError(f"cannot read {name}: {_os_reason(exc)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise PycError(f"{name} is a directory, not a .pyc file")
    if not stat.S_ISREG(st.st_mode):
        raise PycError(f"{name} is not a regular file, so not a .pyc file")
    try:
        with open(name, "rb") as f:
            data = f.read()
    except PermissionError:
        raise PycError(f"permission denied: cannot read {name}") from None
    except OSError as exc:
        raise PycError(f"cannot read {name}: {_os_reason(exc)}") from None
    return loads_pyc(data, name)


def load_pyc(path: PathLike) -> types.CodeType:
    """Return the module code object stored in the ``.pyc`` at ``path``.

    The file must have been written by the running interpreter's version; otherwise the
    :class:`~pellucid.errors.PycError` says which Python wrote it.

    >>> import py_compile, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> src = os.path.join(d, "m.py")
    >>> with open(src, "w") as f:
    ...     _ = f.write("def f(x):\\n    return x + 1\\n")
    >>> code = load_pyc(py_compile.compile(src, cfile=os.path.join(d, "m.pyc")))
    >>> ns = {}
    >>> exec(code, ns)
    >>> ns["f"](41)
    42
    """
    return read_pyc(path)[1]


def _os_reason(exc: BaseException) -> str:
    reason = getattr(exc, "strerror", None) or str(exc)
    return reason.splitlines()[0] if reason else type(exc).__name__
