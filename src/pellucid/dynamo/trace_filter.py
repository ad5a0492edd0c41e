"""Skip torch's structured-trace events pellucid does not read, while nobody else listens.

pellucid reads graphs, graph-break reasons and compilation metrics from torch's structured
trace, so it adds a handler to ``trace_log``.  torch decides whether to build an event by
whether that logger has *any* handler: with pellucid's alone, every event's payload is built
too -- the text of the whole guard tree (``dynamo_cpp_guards_str``), a description of every
fake tensor, storage and source (``describe_*``), the compile-time profile (``chromium_event``)
-- about 15 ms per GPT-2 compile that nothing reads -- and of every ``artifact`` (a resume
function's bytecode listings, Dynamo's side-effect report), of which pellucid reads only the
graph-break and recompilation reasons (and Inductor's provenance, when the user turned it on).
:func:`install` wraps the ``trace_structured`` function those calls go through so that these events return at once when pellucid's handler is the logger's only one.

The Dynamo graph's event (``dynamo_output_graph``) is read, but its payload is
``gm.print_readable(...)``, which has FX generate the whole module's source in its verbose form
(~3.5 ms per GPT-2 compile), and its metadata lists every tensor's size (which pellucid does
not read).  While pellucid alone listens, the wrapper finds the graph module that payload would
print and sends pellucid's own listing of it instead (:func:`pellucid.dynamo.graph_listing.listing`:
the source the module runs, with the same shape and source-line comments), made right
away since backends change the module afterwards; where the module is not found or not listed,
torch's payload is built as before.

With any other handler (``TORCH_TRACE``, a user's own) every event is built and sent exactly as
before.

The wrapper is an optimisation only: where this torch has no such function nothing is wrapped
and nothing is lost, so no warning is given.
"""
import logging
import sys
from typing import Any, Callable, List, Optional

#: events pellucid never reads (see :data:`pellucid.dynamo.capture.GRAPH_EVENTS` for those it does)
UNREAD_EVENTS = frozenset({
    "dynamo_start",  # (its metadata is the stack of the frame being compiled)
    "dynamo_guards",
    "dynamo_cpp_guards_str",
    "chromium_event",
    "describe_tensor",
    "describe_storage",
    "describe_source",
})

#: the ``artifact`` events pellucid reads, by the name in their metadata (the others are skipped
#: like :data:`UNREAD_EVENTS`)
READ_ARTIFACTS = frozenset({"dynamo_graph_break_reason", "recompile_reasons",
                            # (only sent when the user turned Inductor's provenance tracking on)
                            "inductor_provenance_tracking_node_mappings",
                            "inductor_provenance_tracking_kernel_stack_traces"})

#: (module, attribute) spellings through which torch calls ``trace_structured`` for those
#: events: ``torch._logging.trace_structured(...)`` (guards, chromium events) and the name
#: ``meta_utils`` imported (tensor descriptions)
_CALL_SITES = (
    ("torch._logging", "trace_structured"),
    ("torch._subclasses.meta_utils", "trace_structured"),
)


def install(trace_log: logging.Logger, handler: logging.Handler) -> List[Callable[[], None]]:
    """Wrap the call sites; returns the undo actions (restore the functions found)."""
    undo: List[Callable[[], None]] = []
    for module_name, attr in _CALL_SITES:
        module = sys.modules.get(module_name)
        original = getattr(module, attr, None) if module is not None else None
        if not callable(original):
            continue
        wrapper = _wrap(original, trace_log, handler)
        setattr(module, attr, wrapper)

        def restore(module: Any = module, attr: str = attr, original: Any = original,
                    wrapper: Any = wrapper) -> None:
            # Only if still ours: something wrapped after us keeps its own wrapper (and ours,
            # inside it, passes everything on once the handler is gone).
            if getattr(module, attr, None) is wrapper:
                setattr(module, attr, original)
        undo.append(restore)
    return undo


def _wrap(original: Callable[..., Any], trace_log: logging.Logger,
          handler: logging.Handler) -> Callable[..., Any]:
    def trace_structured(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in UNREAD_EVENTS or (name == "artifact" and not _read_artifact(args, kwargs)):
            handlers = trace_log.handlers
            if len(handlers) == 1 and handlers[0] is handler:
                return None
        elif name == GRAPH_EVENT and len(args) <= 1:
            handlers = trace_log.handlers
            if len(handlers) == 1 and handlers[0] is handler:
                text = _own_listing(kwargs.get("payload_fn"))
                if text is not None:
                    # (metadata_fn: the sizes nobody reads; the event's name is what is read)
                    kwargs = dict(kwargs, metadata_fn=dict, payload_fn=lambda: text)
                    return original(name, **kwargs)
        return original(name, *args, **kwargs)
    trace_structured.__wrapped__ = original  # type: ignore[attr-defined]
    trace_structured.__doc__ = original.__doc__
    return trace_structured


#: the event whose payload is ``print_readable`` of Dynamo's graph module
GRAPH_EVENT = "dynamo_output_graph"


def graph_module_printed(payload_fn: Any) -> Any:
    """The graph module ``payload_fn`` would print: torch's payload is
    ``lambda: gm.print_readable(...)``, a closure over ``gm`` alone; None for anything else."""
    code = getattr(payload_fn, "__code__", None)
    closure = getattr(payload_fn, "__closure__", None)
    if code is None or not closure or code.co_freevars != ("gm",) or "print_readable" not in code.co_names:
        return None
    try:
        gm = closure[0].cell_contents
    except ValueError:  # (an empty cell)
        return None
    from torch.fx import GraphModule
    return gm if isinstance(gm, GraphModule) else None


def _own_listing(payload_fn: Any) -> Optional[str]:
    """pellucid's listing of the graph module torch's payload prints, or None (then torch's
    payload is built, as without pellucid)."""
    try:
        gm = graph_module_printed(payload_fn)
        if gm is None:
            return None
        from pellucid.dynamo.graph_listing import listing
        return listing(gm)
    except Exception:
        return None


def _read_artifact(args: Any, kwargs: Any) -> bool:
    """Whether an ``artifact`` event is one pellucid reads (when in doubt: yes, build it)."""
    metadata_fn = args[0] if args else kwargs.get("metadata_fn")
    try:
        # (torch's artifact metadata is a small dict literal: the payload is the costly part)
        name = metadata_fn().get("name")  # type: ignore[misc]
    except Exception:
        return True
    return name in READ_ARTIFACTS
