"""Whether Inductor can build its code with this interpreter.

Inductor's CPU code is C++ compiled against the running interpreter's headers (``Python.h``
in ``sysconfig``'s include directory, where Inductor looks).  An interpreter installed without
its development files (the 3.14/3.15 ones ``.ci/install-python`` unpacked from Debian's
packages before it added ``libpython3.X-dev``'s headers) makes every Inductor compile fail
with a C++ error: tests that compile with Inductor are skipped there, saying why.
"""
import os
import sysconfig

import pytest


def missing_headers() -> str:
    """Why Inductor cannot compile here, or '' when the headers are there."""
    include = sysconfig.get_path("include") or ""
    if os.path.exists(os.path.join(include, "Python.h")):
        return ""
    return "Inductor compiles C++ against Python.h, which this interpreter lacks (%s)" % (
        os.path.join(include, "Python.h"))


#: mark for tests that compile with Inductor
needs_headers = pytest.mark.skipif(bool(missing_headers()), reason=missing_headers() or "-")
