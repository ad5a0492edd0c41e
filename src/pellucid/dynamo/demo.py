"""``pellucid demo DIR``: dump a small bundled program, write the index and the report, and say
where to look (see :mod:`pellucid.dynamo.demo_model` for the program).

>>> run("demo-dump", "eager")          # doctest: +SKIP
0
"""
import os
import sys


def run(dump_dir: str, backend: str = "inductor", step: bool = False) -> int:
    """Train the demo model under ``prepare_debug(dump_dir)``, write the report, print pointers;
    with ``step``, run one more step under ``pellucid.debug()``, which pauses in the debugger."""
    import pellucid
    from pellucid.dynamo import demo_model
    from pellucid.dynamo.report import write_report

    with pellucid.prepare_debug(dump_dir) as capture:
        demo_model.train(backend)
    report = write_report(dump_dir)
    d = os.path.abspath(dump_dir)
    out = sys.stdout
    out.write("\npellucid demo: %s compiled with backend %r, dumped to %s\n\n" % (
        os.path.relpath(demo_model.__file__), backend, d))
    out.write("  open %s in a browser (or read %s)\n" % (report, os.path.join(d, "index.md")))
    for gb in capture.graph_breaks()[:1]:
        here = gb.line
        out.write("  why it broke:      %s:%s  %s -- %s\n" % (
            os.path.basename(here.filename) if here else "?", here.lineno if here else "?",
            here.text.strip() if here else "", gb.kind))
    for rc in [rc for f in capture.frames.values() for rc in f.recompilations][:1]:
        out.write("  why it recompiled: %s\n" % rc.explain())
    firsts = sorted({t.path for f in capture.frames.values() for t in f.transforms[:1] if t.path})
    if firsts:
        out.write("  the code Dynamo runs, as Python: %s\n" % ", ".join(os.path.relpath(p) for p in firsts[:3]))
    out.write("\n  step through it in pdb: pellucid demo %s --step --backend %s\n"
              "  (debug() pauses; set breakpoints in the files it lists, e.g. 'b %s:<line>', then 'c')\n"
              "  from Python: dump = pellucid.load_capture(%r); dump.why_recompiled('Block.forward')\n"
              % (dump_dir, backend, os.path.relpath(firsts[0]) if firsts else "<file>", dump_dir))
    out.flush()
    if step:
        with pellucid.debug():
            demo_model.train(backend, batches=(6,))
    return 0
