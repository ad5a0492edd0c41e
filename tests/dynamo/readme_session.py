"""The README's pdb sessions under ``pellucid.debug()``, made by running them (so they cannot go stale).

Each session runs the README's program (:data:`PROGRAM`) in a fresh interpreter, with a real pdb
reading its commands from a pipe: the driver waits for each ``(Pdb)`` prompt, sends the next
command and writes it after the prompt, as a terminal would show it.  Which files and lines the
commands name is read from the capture model of that run (written by :func:`child` when
``prepare_debug`` ends; never from file names), so the commands follow the dump as it changes.

``tests/dynamo/test_readme_session.py`` compares the README's blocks with fresh sessions.  After
a change that moves them, refresh the README (with torch 2.13, as the README says)::

    PYTHONPATH=src python tests/dynamo/readme_session.py      # rewrites README.md's blocks
"""
import dis
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import types
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, os.pardir, os.pardir, "README.md")
#: the directory the sessions show (each runs in a temporary directory of its own)
SHOWN_DIR = "/tmp/demo"
#: the torch version the README's sessions are made with
TORCH = "2.13"
BACKENDS = ("eager", "aot_eager", "inductor")

PROGRAM = '''\
import sys

import torch

import pellucid


def f(x, y):
    a = x.sin() + y
    print("graph break")
    return (a.cos() * 2).sum()


compiled = torch.compile(f, backend=sys.argv[1])
x, y = torch.ones(3, requires_grad=True), torch.full((3,), 2.0)

with pellucid.prepare_debug("dump"):   # 1: compile and dump
    compiled(x, y).backward()

with pellucid.debug():                  # 2: run from the dumped files
    compiled(x, y).backward()
'''

_MODEL = "capture.json"


# -- the child: the README's program, with its capture model written for the driver ------------
def child(model_path: str, program: str, argv: List[str]) -> None:
    """Run ``program`` as ``__main__``; when its ``prepare_debug`` block ends, write the capture
    model's files to ``model_path``."""
    import contextlib
    import runpy

    import pellucid

    real = pellucid.prepare_debug

    @contextlib.contextmanager
    def prepare_debug(dump_dir: str) -> Any:
        with real(dump_dir) as capture:
            yield capture
        frames = [{"name": f.name, "is_resume": f.is_resume, "transforms": [
            {"path": t.path, "graphs": t.graphs, "runs": t.replacement is not None}
            for t in f.transforms]} for f in capture.frames.values()]
        graphs = {g.name: {s.stage: s.path for s in g.stages} for g in capture.graphs.values()}
        with open(model_path, "w") as fh:
            json.dump({"frames": frames, "graphs": graphs}, fh)
    pellucid.prepare_debug = prepare_debug
    sys.argv = argv
    runpy.run_path(program, run_name="__main__")


# -- the commands of each session ----------------------------------------------------------------
def _code_named(path: str, name: str) -> types.CodeType:
    with open(path, encoding="utf-8") as fh:
        module = compile(fh.read(), path, "exec")
    todo = [module]
    while todo:
        code = todo.pop(0)
        if code.co_name == name:
            return code
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    raise LookupError("no function %s in %s" % (name, path))


def _first_line(code: types.CodeType) -> int:
    """The first line of a function's body that runs."""
    return min(line for _, line in dis.findlinestarts(code)
               if line is not None and line > code.co_firstlineno)


def _line_starting(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as fh:
        for k, line in enumerate(fh, 1):
            if line.strip().startswith(text):
                return k
    raise LookupError("no line starting with %r in %s" % (text, path))


_NODE = re.compile(r'^\s+(\w+): "[^"]*" = (.*)$')


def _first_node(path: str, forward: types.CodeType) -> Tuple[int, str, str]:
    """A graph file's first computation in ``forward``: its line, the local it reads first and
    the name it assigns."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    for k in range(forward.co_firstlineno, len(lines)):
        m = _NODE.match(lines[k])
        if m:
            read = [w for w in re.findall(r"(?<![.\w])\w+", m.group(2))
                    if w in forward.co_varnames and w != m.group(1)]
            return k + 1, read[0], m.group(1)
    raise LookupError("no computation in %s" % path)


def _return_of(path: str, call: types.CodeType) -> Tuple[int, str]:
    """The line of ``call``'s return and the first name it returns."""
    line = max(line for _, line in dis.findlinestarts(call) if line is not None)
    with open(path, encoding="utf-8") as fh:
        text = fh.read().split("\n")[line - 1]
    m = re.match(r"\s*return \(?(\w+)", text)
    if not m:
        raise LookupError("line %d of %s is not a return: %r" % (line, path, text))
    return line, m.group(1)


#: clear the breakpoints, then continue to the end (with breakpoints left, pdb would still trace
#: the interpreter's shutdown, where torch's weakref callbacks trip over bdb)
_END = ["cl 1 2", "c"]


def commands(backend: str, model: Dict[str, Any], dump: str) -> List[str]:
    """The session's pdb commands, for the dump the run wrote."""
    frames = model["frames"]
    (user,) = [f for f in frames if not f["is_resume"]]
    (resume,) = [f for f in frames if f["is_resume"]]
    after_break = model["graphs"][resume["transforms"][0]["graphs"][0]]

    def rel(path: str) -> str:
        return os.path.relpath(path, os.path.dirname(dump))
    if backend == "eager":
        transformed = user["transforms"][0]["path"]
        graph = after_break["dynamo"]
        line, read, assigned = _first_node(graph, _code_named(graph, "forward"))
        return ["b %s:%d" % (rel(transformed), _line_starting(transformed, "graph_out_0 =")),
                "b %s:%d" % (rel(graph), line),
                "c", "p x", "n", "c", "p " + read, "n", "p " + assigned] + _END
    if backend == "aot_eager":
        fw, bw = after_break["aot_forward"], after_break["aot_backward"]
        fw_line, fw_read, fw_assigned = _first_node(fw, _code_named(fw, "forward"))
        bw_line, bw_read, _ = _first_node(bw, _code_named(bw, "forward"))
        return ["b %s:%d" % (rel(fw), fw_line), "b %s:%d" % (rel(bw), bw_line),
                "c", "p " + fw_read, "n", "p " + fw_assigned, "c", "p " + bw_read] + _END
    fw, bw = after_break["inductor"], after_break["inductor_backward"]
    fw_call, bw_call = _code_named(fw, "call"), _code_named(bw, "call")
    ret_line, returned = _return_of(fw, fw_call)
    return ["b %s:%d" % (rel(fw), _first_line(fw_call)), "b %s:%d" % (rel(bw), _first_line(bw_call)),
            "c", "p args", "n", "n", "until %d" % ret_line, "p " + returned, "c", "p args"] + _END


# -- driving pdb ---------------------------------------------------------------------------------
PROMPT = b"(Pdb) "


def _read_until_prompt(proc: "subprocess.Popen[bytes]", timeout: float) -> Tuple[bytes, bool]:
    """Output up to the next prompt (True) or to the end of the program (False)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    data = b""
    while not data.endswith(PROMPT):
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            proc.kill()
            raise TimeoutError("no prompt after %.0f s; output so far:\n%s" % (timeout, data.decode()))
        chunk = os.read(fd, 65536)
        if not chunk:
            return data, False
        data += chunk
    return data, True


def session(backend: str, python: str = sys.executable, timeout: float = 600.0) -> str:
    """The transcript of the README's session for ``backend``, as a terminal shows it."""
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "demo")
        os.mkdir(work)
        program = os.path.join(work, "demo.py")
        with open(program, "w") as fh:
            fh.write(PROGRAM)
        model_path = os.path.join(tmp, _MODEL)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        for name in ("PYTHONBREAKPOINT", "PYTHONWARNINGS"):
            env.pop(name, None)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.join(HERE, os.pardir, os.pardir, "src"),
                                                         env.get("PYTHONPATH", "")] if p)
        launcher = "import sys; sys.path.insert(0, %r); import readme_session as r; " \
                   "r.child(%r, %r, ['demo.py', %r])" % (HERE, model_path, program, backend)
        proc = subprocess.Popen([python, "-c", launcher], cwd=work, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdin is not None
        out = ["$ python demo.py %s\n" % backend]
        todo: Optional[List[str]] = None
        try:
            while True:
                data, prompt = _read_until_prompt(proc, timeout)
                out.append(data.decode())
                if not prompt:
                    break
                if todo is None:
                    with open(model_path) as fh:
                        todo = commands(backend, json.load(fh), os.path.join(work, "dump"))
                cmd = todo.pop(0) if todo else "c"  # (an extra stop shows in the transcript)
                out.append(cmd + "\n")
                proc.stdin.write(cmd.encode() + b"\n")
                proc.stdin.flush()
        finally:
            proc.stdin.close()
            code = proc.wait(timeout)
        text = "".join(out)
        if code != 0:
            raise RuntimeError("the session for %s exited with %d:\n%s" % (backend, code, text))
        for path in {os.path.realpath(work), work}:
            text = text.replace(path, SHOWN_DIR)
        return text


def sessions(backends: Tuple[str, ...] = BACKENDS, python: str = sys.executable) -> Dict[str, str]:
    """:func:`session` for each backend, run side by side (each is mostly waiting for its own
    interpreter: importing torch, compiling)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(backends)) as pool:
        futures = {b: pool.submit(session, b, python) for b in backends}
        return {b: f.result() for b, f in futures.items()}


# -- the README's blocks -------------------------------------------------------------------------
def _block(name: str, body: str, lang: str = "") -> str:
    return "<!-- generated: %s (tests/dynamo/readme_session.py) -->\n```%s\n%s```\n<!-- end: %s -->" % (
        name, lang, body, name)


_BLOCK = re.compile(r"<!-- generated: (\S+) \(tests/dynamo/readme_session.py\) -->\n.*?<!-- end: \1 -->",
                    re.S)


def readme_blocks(readme: str) -> Dict[str, str]:
    """The generated blocks of the README, by name."""
    return {m.group(1): m.group(0) for m in _BLOCK.finditer(readme)}


def expected_blocks(python: str = sys.executable) -> Dict[str, str]:
    """What the README's generated blocks should be, by name (``program``, ``session-<backend>``)."""
    blocks = {"program": _block("program", PROGRAM, "python")}
    for backend, text in sessions(BACKENDS, python).items():
        blocks["session-" + backend] = _block("session-" + backend, text)
    return blocks


def main() -> None:
    with open(README, encoding="utf-8") as fh:
        readme = fh.read()
    fresh = expected_blocks()
    for name, old in readme_blocks(readme).items():
        readme = readme.replace(old, fresh[name])
        print("refreshed", name)
    with open(README, "w", encoding="utf-8") as fh:
        fh.write(readme)


if __name__ == "__main__":
    main()
