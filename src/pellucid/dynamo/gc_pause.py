"""Pellucid's own work runs with the cyclic garbage collector paused.

Decompiling, verifying and rendering allocate many short-lived objects (AST nodes, symbolic
terms, strings) that die by reference counting.  With the collector running, a collection that
happens while they are alive promotes them to older generations, and that pending pile soon
triggers a full collection — which, with torch loaded, walks a very large heap (about 0.3 s per
GPT-2 compile, the largest single cost ``prepare_debug`` added to a user's program).  Pausing the
collector only for the duration of pellucid's callbacks leaves nothing to promote; any cyclic
garbage they leave is collected by the next collection after they return.
"""
import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with ``gc`` disabled, restoring it afterwards if it was enabled.

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    """
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        # Another thread may be inside a paused block too; whoever found gc enabled restores
        # it, so the collector is never left off for good.
        if enabled:
            gc.enable()
