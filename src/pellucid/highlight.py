"""Optional terminal syntax highlighting of Python source, with pygments when it is installed.

>>> text = highlight("x = 1\\n") if available() else "x = 1\\n"
>>> "x" in text
True
"""
import os

__all__ = ["available", "highlight"]


def available() -> bool:
    """True when pygments can be imported (``pip install pellucid[highlight]``)."""
    try:
        import pygments  # noqa: F401
    except ImportError:
        return False
    return True


def highlight(source: str) -> str:
    """Return ``source`` with ANSI colour codes for a terminal; raises ImportError without pygments.

    Uses 256 colours when ``$TERM`` says the terminal supports them.
    """
    import pygments
    from pygments.formatters import Terminal256Formatter, TerminalFormatter
    from pygments.lexers import PythonLexer

    term = os.environ.get("TERM", "")
    formatter = Terminal256Formatter() if "256" in term else TerminalFormatter()
    return pygments.highlight(source, PythonLexer(), formatter)
