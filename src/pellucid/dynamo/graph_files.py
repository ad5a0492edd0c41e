"""``__compiled_fn_<n>.<stage>.py``: the graphs of one compiled frame, as Python files.

The text comes from torch's structured trace (``print_readable`` output with shape, dtype and
stride comments for FX graphs -- for the Dynamo graph, pellucid's own listing with the same
comments while pellucid alone listens, see :mod:`pellucid.dynamo.trace_filter`; the module
Inductor generated).  A graph listing is a class
body that refers to ``torch``; the file imports what such listings use, so it compiles and
imports.  If a listing ever does not compile, the file keeps it as comments and says so.

>>> text = graph_file_text("__compiled_fn_1", "dynamo", "0/0", "class GraphModule:\\n    pass\\n")
>>> compile(text, "g.py", "exec") is not None
True
"""
import re
from typing import List, Optional

_CLASS_LINE = re.compile(r"^(\s*)class ([^\s(:]+)(.*)$")


def _valid_class_names(listing: str) -> str:
    """FX names some graph classes ``<lambda>``: give them a name Python accepts."""
    lines = listing.split("\n")
    for k, line in enumerate(lines):
        m = _CLASS_LINE.match(line)
        if m and not m.group(2).isidentifier():
            lines[k] = "%sclass GraphModule%s  # FX calls this class %s" % (m.group(1), m.group(3), m.group(2))
    return "\n".join(lines)

STAGE_TITLES = {
    "dynamo": "Dynamo FX graph",
    "aot_joint": "AOT Autograd joint graph",
    "aot_forward": "AOT Autograd forward graph",
    "aot_backward": "AOT Autograd backward graph",
    "aot_inference": "AOT Autograd inference graph",
    "inductor": "Inductor output code",
    "inductor_backward": "Inductor output code of the backward graph",
}

#: The last line of pellucid's header above Inductor's output code: everything after it is the
#: module Inductor wrote, unchanged (``debug()`` checks it against the module Inductor loaded)
INDUCTOR_MARK = "# ---- the rest of this file is Inductor's module, unchanged ----"


def inductor_module_text(text: str) -> Optional[str]:
    """The text of Inductor's module in a dumped Inductor file (after pellucid's header), or
    None when the file has no such header.

    >>> inductor_module_text("# header\n" + INDUCTOR_MARK + "\ncall = 1\n")
    'call = 1\n'
    """
    head, mark, body = text.partition("\n" + INDUCTOR_MARK + "\n")
    return body if mark and all(line.startswith("#") for line in head.split("\n")) else None


_PRELUDE = [
    "import torch",
    "from torch import device, inf, nan  # names print_readable's listings may use",
    "",
]


def graph_file_text(graph: str, stage: str, compile_id: str, listing: str,
                    origin: Optional[str] = None) -> str:
    """Contents of the file for one stage of one graph (``origin``: for Inductor's output code,
    the module file Inductor wrote it to)."""
    title = "# %s of %s (compile %s)" % (STAGE_TITLES.get(stage, stage), graph, compile_id)
    if stage.startswith("inductor"):
        # (Inductor's text is kept byte for byte, so it can be checked against the module that runs)
        lines = [title + ", written by pellucid from torch's structured trace.",
                 "# Inductor imported this text from %s;" % (origin or "its cache directory"),
                 "# under pellucid.debug() the functions of that module (call() ...) run from this file.",
                 INDUCTOR_MARK]
        return "\n".join(lines) + "\n" + listing
    head: List[str] = [title + ", written by pellucid (from torch's structured trace, "
                       "or from the graph module that runs it)."]
    body = _valid_class_names(listing if listing.endswith("\n") else listing + "\n")
    head += _PRELUDE
    text = "\n".join(head) + "\n" + body
    try:
        compile(text, "<graph>", "exec")
    except SyntaxError as exc:
        commented = "".join("# " + line + "\n" for line in body.splitlines())
        text = "\n".join(head[:1]) + "\n# (kept as comments: the listing does not compile: %s)\n" % exc \
            + commented
    return text
