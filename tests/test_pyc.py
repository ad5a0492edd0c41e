"""Loading .pyc files: pellucid.bytecode.pyc.load_pyc / read_pyc and its error messages."""
import importlib.util
import marshal
import os
import pathlib
import py_compile
import subprocess
import sys
import types

import pytest

import pellucid
from pellucid.bytecode import pyc as pyc_module
from pellucid.bytecode.pyc import (
    FINAL_MAGIC_NUMBERS,
    HEADER_SIZE,
    SUPPORTED_VERSIONS,
    PycHeader,
    load_pyc,
    loads_pyc,
    magic_number_of,
    read_pyc,
    version_of_magic,
)
from pellucid.errors import DecompileError, PycError

RUNNING = sys.version_info[:2]
RUNNING_STR = "{}.{}".format(*RUNNING)
RUNNING_MAGIC = importlib.util.MAGIC_NUMBER

SOURCE = "def f(x):\n    return x + 1\n\nANSWER = f(41)\n"

PYENV = pathlib.Path("/root/.pyenv/versions")
OTHER_INTERPRETERS = {
    (2, 7): PYENV / "2.7.18/bin/python",
    (3, 6): PYENV / "3.6.15/bin/python",
    (3, 7): PYENV / "3.7.16/bin/python",
    (3, 8): PYENV / "3.8.18/bin/python",
    (3, 9): PYENV / "3.9.18/bin/python",
    (3, 10): PYENV / "3.10.13/bin/python",
    (3, 11): PYENV / "3.11.7/bin/python",
    (3, 12): PYENV / "3.12.1/bin/python",
    (3, 13): PYENV / "3.13.0/bin/python",
}
# (3.14 and 3.15 come from .ci/install-python, whose patch release is Debian's current one)
for _minor in (14, 15):
    _found = sorted(PYENV.glob("3.%d.*/bin/python3.%d" % (_minor, _minor)),
                    key=lambda p: int(p.parts[-3].rsplit(".", 1)[-1]))
    OTHER_INTERPRETERS[(3, _minor)] = _found[-1] if _found else PYENV / ("3.%d/bin/python" % _minor)


def vstr(version):
    return "{}.{}".format(*version)


def magic_bytes(number):
    return number.to_bytes(2, "little") + b"\r\n"


def make_pyc(tmp_path, source=SOURCE, mode=py_compile.PycInvalidationMode.TIMESTAMP, name="mod"):
    src = tmp_path / f"{name}.py"
    src.write_text(source)
    cfile = tmp_path / f"{name}.pyc"
    py_compile.compile(str(src), cfile=str(cfile), doraise=True, invalidation_mode=mode)
    return src, cfile


def assert_one_line(message, *fragments):
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


# ---------------------------------------------------------------------------------------------
# good pycs


def test_load_real_pyc(tmp_path):
    src, cfile = make_pyc(tmp_path)
    code = load_pyc(cfile)
    assert isinstance(code, types.CodeType)
    assert code.co_name == "<module>"
    assert code.co_filename == str(src)
    namespace = {}
    exec(code, namespace)
    assert namespace["ANSWER"] == 42


def test_load_pyc_is_exported_from_package(tmp_path):
    _, cfile = make_pyc(tmp_path)
    assert pellucid.load_pyc is load_pyc
    assert isinstance(pellucid.load_pyc(str(cfile)), types.CodeType)


@pytest.mark.parametrize("as_type", [str, pathlib.Path, os.fsencode], ids=["str", "Path", "bytes"])
def test_load_pyc_path_types(tmp_path, as_type):
    _, cfile = make_pyc(tmp_path)
    assert load_pyc(as_type(str(cfile))).co_name == "<module>"


def test_load_pyc_rejects_non_path():
    with pytest.raises(TypeError, match="expected a path"):
        load_pyc(3)  # type: ignore[arg-type]  # would otherwise open file descriptor 3


def test_timestamp_header(tmp_path):
    src, cfile = make_pyc(tmp_path)
    header, code = read_pyc(cfile)
    assert isinstance(header, PycHeader)
    assert header.magic == RUNNING_MAGIC
    assert header.flags == 0
    assert not header.hash_based and not header.check_source
    assert header.mtime == int(src.stat().st_mtime) & 0xFFFFFFFF
    assert header.source_size == len(SOURCE.encode())
    assert header.source_hash is None
    assert code.co_name == "<module>"


@pytest.mark.parametrize(
    "mode, check_source",
    [
        (py_compile.PycInvalidationMode.CHECKED_HASH, True),
        (py_compile.PycInvalidationMode.UNCHECKED_HASH, False),
    ],
    ids=["checked-hash", "unchecked-hash"],
)
def test_hash_based_headers(tmp_path, mode, check_source):
    _, cfile = make_pyc(tmp_path, mode=mode)
    header, code = read_pyc(cfile)
    assert header.hash_based
    assert header.check_source is check_source
    assert header.flags == (0b11 if check_source else 0b01)
    assert header.source_hash == importlib.util.source_hash(SOURCE.encode())
    assert header.mtime is None and header.source_size is None
    namespace = {}
    exec(code, namespace)
    assert namespace["ANSWER"] == 42


def test_pyc_does_not_check_source(tmp_path):
    # pellucid decompiles what is in the .pyc, even when its source has changed or is gone.
    src, cfile = make_pyc(tmp_path)
    src.unlink()
    assert load_pyc(cfile).co_name == "<module>"


def test_loads_pyc_from_bytes():
    data = RUNNING_MAGIC + bytes(12) + marshal.dumps(compile("y = 2", "m.py", "exec"))
    header, code = loads_pyc(data, "m.pyc")
    assert header.mtime == 0 and header.source_size == 0
    assert code.co_filename == "m.py"


def test_trailing_bytes_after_marshal_data_are_ignored(tmp_path):
    _, cfile = make_pyc(tmp_path)
    cfile.write_bytes(cfile.read_bytes() + b"junk")
    assert load_pyc(cfile).co_name == "<module>"


def test_pycache_pyc_of_a_real_stdlib_module():
    # Compiling a stdlib module the way the import system does round-trips through load_pyc.
    import json.decoder as module

    code = compile(pathlib.Path(module.__file__).read_bytes(), module.__file__, "exec")
    data = RUNNING_MAGIC + bytes(12) + marshal.dumps(code)
    assert loads_pyc(data)[1] == code


# ---------------------------------------------------------------------------------------------
# file system problems


def test_missing_file(tmp_path):
    path = tmp_path / "nope.pyc"
    with pytest.raises(PycError) as info:
        load_pyc(path)
    assert str(info.value) == f"no such file: {path}"


def test_missing_parent(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(PycError, match="no such file"):
        load_pyc(tmp_path / "file" / "x.pyc")


def test_directory(tmp_path):
    with pytest.raises(PycError) as info:
        load_pyc(tmp_path)
    assert str(info.value) == f"{tmp_path} is a directory, not a .pyc file"


def test_not_a_regular_file():
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null on this platform")
    with pytest.raises(PycError, match="not a regular file"):
        load_pyc("/dev/null")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root can read files without read permission",
)
def test_no_read_permission(tmp_path):
    _, cfile = make_pyc(tmp_path)
    cfile.chmod(0)
    try:
        with pytest.raises(PycError) as info:
            load_pyc(cfile)
    finally:
        cfile.chmod(0o644)
    assert str(info.value) == f"permission denied: cannot read {cfile}"


def test_no_read_permission_simulated(tmp_path, monkeypatch):
    # Runs even as root: make open() fail the way it does for an unreadable file.
    _, cfile = make_pyc(tmp_path)

    def deny(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(cfile))

    monkeypatch.setattr(pyc_module, "open", deny, raising=False)
    with pytest.raises(PycError) as info:
        load_pyc(cfile)
    assert str(info.value) == f"permission denied: cannot read {cfile}"


def test_os_error_while_reading(tmp_path, monkeypatch):
    _, cfile = make_pyc(tmp_path)

    def fail(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(pyc_module, "open", fail, raising=False)
    with pytest.raises(PycError) as info:
        load_pyc(cfile)
    assert str(info.value) == f"cannot read {cfile}: Input/output error"


# ---------------------------------------------------------------------------------------------
# broken headers


def test_empty_file(tmp_path):
    path = tmp_path / "empty.pyc"
    path.write_bytes(b"")
    with pytest.raises(PycError) as info:
        load_pyc(path)
    assert str(info.value) == f"{path} is empty (0 bytes), not a .pyc file"


@pytest.mark.parametrize("size", [1, 3, 4, 8, 15])
def test_truncated_header(tmp_path, size):
    _, cfile = make_pyc(tmp_path)
    cfile.write_bytes(cfile.read_bytes()[:size])
    with pytest.raises(PycError) as info:
        load_pyc(cfile)
    assert str(info.value) == (
        f"{cfile} is truncated: {size} bytes, shorter than the 16-byte .pyc header"
    )


def test_header_without_code(tmp_path):
    _, cfile = make_pyc(tmp_path)
    cfile.write_bytes(cfile.read_bytes()[:HEADER_SIZE])
    with pytest.raises(PycError) as info:
        load_pyc(cfile)
    assert str(info.value) == f"{cfile} is truncated: it has a .pyc header but no code after it"


def test_invalid_flags(tmp_path):
    _, cfile = make_pyc(tmp_path)
    data = bytearray(cfile.read_bytes())
    data[4] = 0b100
    cfile.write_bytes(bytes(data))
    with pytest.raises(PycError) as info:
        load_pyc(cfile)
    assert str(info.value) == f"{cfile} has an invalid .pyc header: unknown flags 0x4"


def test_source_file_is_not_a_pyc(tmp_path):
    path = tmp_path / "mod.pyc"
    path.write_text(SOURCE)
    with pytest.raises(PycError) as info:
        load_pyc(path)
    assert_one_line(
        str(info.value),
        f"{path} is not a .pyc file",
        "does not start with a .pyc magic number",
        "b'def '",
    )


def test_unknown_magic(tmp_path):
    path = tmp_path / "odd.pyc"
    path.write_bytes(magic_bytes(1234) + bytes(12) + marshal.dumps(None))
    with pytest.raises(PycError) as info:
        load_pyc(path)
    assert_one_line(
        str(info.value),
        f"{path} is not a .pyc file of any known Python version",
        "magic number 1234",
        f"this is Python {RUNNING_STR}",
    )


# ---------------------------------------------------------------------------------------------
# pycs of other Python versions


def other_release(preferred=(3, 12)):
    """A released version other than the running one, preferring ``preferred``."""
    if preferred != RUNNING:
        return preferred
    return (3, 11)


def test_wrong_version_message_exact(tmp_path):
    version = other_release()
    number = next(n for n, v in FINAL_MAGIC_NUMBERS.items() if v == version)
    path = tmp_path / "file.pyc"
    path.write_bytes(magic_bytes(number) + bytes(12) + b"payload of another version")
    with pytest.raises(PycError) as info:
        load_pyc(path)
    v = vstr(version)
    assert str(info.value) == (
        f"{path} was compiled by Python {v} but this is Python {RUNNING_STR}: "
        f"run pellucid with Python {v}"
    )


@pytest.mark.parametrize(
    "number, version",
    sorted(FINAL_MAGIC_NUMBERS.items()),
    ids=[f"{n}-py{vstr(v)}" for n, v in sorted(FINAL_MAGIC_NUMBERS.items())],
)
def test_forged_header_of_every_known_version(tmp_path, number, version):
    if magic_bytes(number) == RUNNING_MAGIC:
        pytest.skip("this is the running interpreter's magic number")
    path = tmp_path / "forged.pyc"
    # Only the magic number matters: the rest is never looked at.
    path.write_bytes(magic_bytes(number) + b"\xff" * 40)
    with pytest.raises(PycError) as info:
        load_pyc(path)
    message = str(info.value)
    assert_one_line(message, str(path), f"Python {RUNNING_STR}")
    assert f"was compiled by Python {vstr(version)} but this is Python {RUNNING_STR}" in message
    if SUPPORTED_VERSIONS[0] <= version <= SUPPORTED_VERSIONS[1]:
        assert message.endswith(f": run pellucid with Python {vstr(version)}")
    else:
        assert message.endswith(": pellucid reads bytecode of Python 3.8 to 3.15 only")


def test_wrong_magic_even_when_truncated(tmp_path):
    # A 6-byte file that starts with Python 2.7's magic number: the version is the real problem.
    path = tmp_path / "old.pyc"
    path.write_bytes(magic_bytes(62211) + b"\0\0")
    with pytest.raises(PycError, match="was compiled by Python 2.7 but this is Python"):
        load_pyc(path)


def test_pre_release_magic(tmp_path):
    number = 3526  # used by the 3.12 betas
    path = tmp_path / "beta.pyc"
    path.write_bytes(magic_bytes(number) + bytes(40))
    with pytest.raises(PycError) as info:
        load_pyc(path)
    message = str(info.value)
    assert_one_line(
        message,
        f"{path} was compiled by a pre-release of Python 3.12 (magic number 3526)",
        f"but this is Python {RUNNING_STR} (magic number {magic_number_of(RUNNING_MAGIC)})",
    )
    if RUNNING == (3, 12):
        assert message.endswith(": recompile the source with this Python")
    else:
        assert message.endswith(": run pellucid with the same pre-release of Python 3.12")


def test_magic_of_a_future_version(tmp_path):
    path = tmp_path / "future.pyc"
    path.write_bytes(magic_bytes(3710) + bytes(40))  # 3.16 development: 3700..3749
    with pytest.raises(PycError) as info:
        load_pyc(path)
    assert_one_line(
        str(info.value),
        "compiled by Python 3.16 (newer than this version of pellucid knows)",
        "pellucid reads bytecode of Python 3.8 to 3.15 only",
    )


@pytest.mark.parametrize(
    "version", sorted(OTHER_INTERPRETERS), ids=[vstr(v) for v in sorted(OTHER_INTERPRETERS)]
)
def test_real_pyc_from_other_interpreter(tmp_path, version):
    python = OTHER_INTERPRETERS[version]
    if version == RUNNING:
        pytest.skip("same version as the running interpreter")
    if not python.exists():
        pytest.skip(f"Python {vstr(version)} is not installed at {python}")
    src = tmp_path / "mod.py"
    src.write_text(SOURCE)
    cfile = tmp_path / "mod.pyc"
    subprocess.run(
        [
            str(python),
            "-c",
            "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], "
            "doraise=True)",
            str(src),
            str(cfile),
        ],
        check=True,
    )
    with pytest.raises(PycError) as info:
        load_pyc(cfile)
    message = str(info.value)
    v = vstr(version)
    assert_one_line(message, f"{cfile} was compiled by Python {v} but this is Python {RUNNING_STR}")
    if SUPPORTED_VERSIONS[0] <= version <= SUPPORTED_VERSIONS[1]:
        assert message.endswith(f": run pellucid with Python {v}")


@pytest.mark.parametrize(
    "version", sorted(OTHER_INTERPRETERS), ids=[vstr(v) for v in sorted(OTHER_INTERPRETERS)]
)
def test_magic_table_matches_installed_interpreters(version):
    python = OTHER_INTERPRETERS[version]
    if not python.exists():
        pytest.skip(f"Python {vstr(version)} is not installed at {python}")
    script = (
        "import sys\n"
        "try:\n"
        "    import importlib.util as u; m = u.MAGIC_NUMBER\n"
        "except (ImportError, AttributeError):\n"
        "    import imp; m = imp.get_magic()\n"
        "sys.stdout.write(repr(bytearray(m)))\n"
    )
    out = subprocess.run(
        [str(python), "-c", script],
        check=True,
        stdout=subprocess.PIPE,
        universal_newlines=True,
    ).stdout
    magic = bytes(eval(out))  # bytearray(b'...') -- the same repr on Python 2 and 3
    assert version_of_magic(magic) == (version, True)


def test_running_interpreter_magic_is_known():
    found = version_of_magic(RUNNING_MAGIC)
    assert found is not None and found.version == RUNNING
    if sys.version_info.releaselevel == "final":
        assert found.released


# ---------------------------------------------------------------------------------------------
# corrupt payloads


@pytest.mark.parametrize("keep", [HEADER_SIZE + 1, HEADER_SIZE + 10, "half", "all-but-one"])
def test_truncated_marshal_data(tmp_path, keep):
    _, cfile = make_pyc(tmp_path)
    data = cfile.read_bytes()
    size = {"half": len(data) // 2, "all-but-one": len(data) - 1}.get(keep, keep)
    cfile.write_bytes(data[:size])
    with pytest.raises(PycError) as info:
        load_pyc(cfile)
    assert_one_line(str(info.value), f"{cfile} has corrupt or truncated marshal data (")


def test_every_truncation_is_a_pyc_error(tmp_path):
    _, cfile = make_pyc(tmp_path)
    data = cfile.read_bytes()
    for size in range(len(data)):
        with pytest.raises(PycError):
            loads_pyc(data[:size], "cut.pyc")


def test_unknown_marshal_type_code(tmp_path):
    path = tmp_path / "bad.pyc"
    path.write_bytes(RUNNING_MAGIC + bytes(12) + b"\x01\x02\x03")
    with pytest.raises(PycError) as info:
        load_pyc(path)
    assert_one_line(
        str(info.value), f"{path} has corrupt or truncated marshal data", "ValueError"
    )


@pytest.mark.parametrize(
    "payload, kind",
    [({"a": 1}, "dict"), (None, "NoneType"), (b"raw", "bytes"), ((1, 2), "tuple")],
)
def test_payload_is_not_a_code_object(tmp_path, payload, kind):
    path = tmp_path / "data.pyc"
    path.write_bytes(RUNNING_MAGIC + bytes(12) + marshal.dumps(payload))
    with pytest.raises(PycError) as info:
        load_pyc(path)
    assert str(info.value) == (
        f"{path} does not contain a code object: its marshal data is a {kind}"
    )


def test_pyc_error_is_a_decompile_error():
    assert issubclass(PycError, DecompileError)


# ---------------------------------------------------------------------------------------------
# the magic number table


@pytest.mark.parametrize(
    "number, expected",
    [
        (62211, ((2, 7), True)),
        (3131, ((3, 0), True)),
        (3151, ((3, 1), True)),
        (3180, ((3, 2), True)),
        (3230, ((3, 3), True)),
        (3310, ((3, 4), True)),
        (3350, ((3, 5), True)),
        (3351, ((3, 5), True)),
        (3379, ((3, 6), True)),
        (3394, ((3, 7), True)),
        (3413, ((3, 8), True)),
        (3425, ((3, 9), True)),
        (3439, ((3, 10), True)),
        (3495, ((3, 11), True)),
        (3531, ((3, 12), True)),
        (3571, ((3, 13), True)),
        (3627, ((3, 14), True)),
        (3666, ((3, 15), True)),
        (62191, ((2, 7), False)),
        (3400, ((3, 8), False)),
        (3450, ((3, 11), False)),
        (3550, ((3, 13), False)),
        (3600, ((3, 14), False)),
        (3650, ((3, 15), False)),
        (1234, None),
        (3440, None),  # between the 3.10 and 3.11 ranges
        (0, None),
    ],
)
def test_version_of_magic(number, expected):
    assert version_of_magic(number) == expected
    assert version_of_magic(magic_bytes(number)) == expected


def test_magic_number_of():
    assert magic_number_of(RUNNING_MAGIC) == int.from_bytes(RUNNING_MAGIC[:2], "little")
    assert magic_number_of(b"\x03\xf3\r\n") == 62211
    assert magic_number_of(b"\x03\xf3\n\r") is None
    assert magic_number_of(b"\r\n") is None


def test_every_release_from_2_7_to_3_15_is_in_the_table():
    versions = set(FINAL_MAGIC_NUMBERS.values())
    assert (2, 7) in versions
    for minor in range(0, 16):
        assert (3, minor) in versions
