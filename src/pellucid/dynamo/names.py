"""How names of compiled code become names in the dump: file names and Python identifiers.

Dynamo's code names include ``<lambda>``, ``<genexpr>`` and resume names built from them, which are
neither good file names nor valid identifiers; the two forms differ on purpose (a file name drops
the brackets entirely, an identifier keeps one ``_`` per character so distinct names stay distinct).
"""
import re

_NOT_FILE_SAFE = re.compile(r"[^0-9A-Za-z_]+")


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
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)
