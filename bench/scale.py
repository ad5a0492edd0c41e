"""prepare_debug at scale: Llama-shaped models of 8, 32 and 80 decoder layers, with and without it.

    python bench/scale.py --quick                        # development: small sizes, one run each
    nice -n 10 python bench/scale.py --json scale.json   # the full table (long: run it niced)
    python bench/scale.py --sizes 8 --variants breaks --backends eager --runs 3

Models are ``transformers.LlamaModel`` built from a tiny-width ``LlamaConfig`` (nothing is
downloaded) with ``--sizes`` decoder layers, in two variants:

* ``graph``  -- the model as it is: Dynamo compiles it into one big graph;
* ``breaks`` -- a forward pre-hook on every layer's MLP calls ``torch._dynamo.graph_break()``.
  Dynamo then compiles the decoder layer's ``forward`` up to the break and a resume function
  after it, once per layer: at 8 layers (torch 2.13, transformers 5.23) 9 frames with 16 cache
  entries and 12 graphs, of which ``LlamaDecoderLayer.forward`` has 8 entries (one per layer,
  each its own transformed code, guard and graph) and its resume function one.  Dynamo's recompile limit is raised above
  the layer count (on both sides) so that every layer is compiled.

Each measurement is one fresh process (``--child``) that builds the model, warms torch up on a
tiny function with the same backend (so torch's first-compile imports are not counted for either
side; pellucid's imports are, on the dumped side only), and then times ``torch.compile(model)`` and its first
forward pass -- plainly, or inside ``prepare_debug`` including writing the dump when the block
ends.  Plain and dumped runs alternate in pairs (which goes first alternates too), ``--runs``
pairs per size, and the figures are medians: wall time, CPU time (all threads of the process and
its finished children: Inductor's C++ compiler runs in children), their
paired ratios, the dump's size and peak memory (``ru_maxrss``).  Inductor compiles in the
measured process (``TORCHINDUCTOR_COMPILE_THREADS=1``, so its CPU time is counted) with a fresh
cache directory per process (a warm cache would hide the compile).  Both sides' outputs are
compared (a hash of the output tensor): a difference is reported as an error.

pellucid's own CPU time is split by phase: the bench wraps pellucid's entry points (bytecode
hook, decompile, ``compile()``, verify, structured trace, guard rendering, full_code, graph
files, index, file claims and writes) and charges each call's thread CPU time, minus that of the
phases nested in it, to its phase.  "torch, for pellucid" is the rest of the dumped side's extra
CPU time: work torch does only because pellucid listens (the structured-trace events it builds).

pellucid's modules are byte-compiled (``compileall``, into their ``__pycache__``) before anything is
measured: an installed package is, and torch's are.  Without it, a process started with
``PYTHONDONTWRITEBYTECODE`` set compiled pellucid's sources afresh on every dumped run (about 0.17 s at
24 layers, charged to the phases that first import each module).

``--ranks 4`` adds a run of 4 processes started together that all compile the same model into
one shared dump directory (``--rank-size`` layers, the last of ``--variants`` and the first of ``--backends``): each rank's wall
time, its time blocked on the dump directory's lock (the only place ranks can wait on each
other), and whether every rank's files and capture model (``capture_<n>.json``) are in the
shared directory.

Growth: for each metric the exponent ``k`` of ``metric ~ layers**k`` between the smallest and
the largest size (1 is linear).  The targets (issue 20): dumped/plain wall time <= 1.05 at 80
layers on every backend; no serialisation between ranks; every growth linear or better.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SRC = os.path.join(ROOT, "src")

SIZES = (8, 32, 80)
QUICK_SIZES = (2, 4)
VARIANTS = ("graph", "breaks")
BACKENDS = ("eager", "aot_eager", "inductor")

#: (module, attribute path, phase): pellucid's entry points, each charged its own CPU time
PHASES: Sequence[Tuple[str, str, str]] = (
    ("pellucid.dynamo.capture", "Capturer.install", "install hooks"),
    ("pellucid.dynamo.capture", "Capturer.on_bytecode", "bytecode hook (rest)"),
    ("pellucid.decompiler.recompile", "recompile_full", "recompile (rest)"),
    ("pellucid.decompiler.recompile", "code_to_ast", "decompile"),
    ("pellucid.decompiler.recompile", "recompile_source", "recompile by shape"),
    ("pellucid.decompiler.recompile", "unparse", "unparse"),
    ("pellucid.decompiler.recompile", "compile", "compile()"),
    ("pellucid.verify", "check_equivalent", "verify"),
    ("pellucid.dynamo.capture", "_TraceHandler.emit", "structured trace"),
    ("pellucid.dynamo.trace_filter", "_own_listing", "graph listing"),
    ("pellucid.dynamo.capture", "Capturer.finish", "finish capture"),
    ("pellucid.dynamo.prepare_debug", "write_dump", "write dump (rest)"),
    ("pellucid.dynamo.prepare_debug", "_fill_entries", "cache entries"),
    ("pellucid.dynamo.guard_render", "render_guard", "guard render"),
    ("pellucid.dynamo.graph_code", "use_live_listings", "graph files"),
    ("pellucid.dynamo.graph_files", "graph_file_text", "graph files"),
    ("pellucid.dynamo.full_code", "render", "full_code"),
    ("pellucid.dynamo.index", "write_index", "index"),
    ("pellucid.dynamo.dump_files", "DumpFiles.claim", "claim names"),
    ("pellucid.dynamo.dump_files", "DumpFiles.write", "write files"),
    ("pellucid.dynamo.dump_files", "ClaimsLock.__enter__", "dump-dir lock"),
)


# -- the measured process ---------------------------------------------------------------------------
class PhaseClock:
    """Thread CPU and wall time per phase, exclusive of nested phases."""

    def __init__(self) -> None:
        self.cpu: Dict[str, float] = {}
        self.wall: Dict[str, float] = {}
        self.calls: Dict[str, int] = {}
        self._stack: List[List[float]] = []  # [cpu at start, wall at start, nested cpu, nested wall]
        self.missing: List[str] = []

    def wrap(self, fn: Callable[..., Any], phase: str) -> Callable[..., Any]:
        clock = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            frame = [time.thread_time(), time.perf_counter(), 0.0, 0.0]
            clock._stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                cpu = time.thread_time() - frame[0]
                wall = time.perf_counter() - frame[1]
                clock._stack.pop()
                clock.cpu[phase] = clock.cpu.get(phase, 0.0) + cpu - frame[2]
                clock.wall[phase] = clock.wall.get(phase, 0.0) + wall - frame[3]
                clock.calls[phase] = clock.calls.get(phase, 0) + 1
                if clock._stack:
                    clock._stack[-1][2] += cpu
                    clock._stack[-1][3] += wall
        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed

    def install(self) -> None:
        import importlib

        for module_name, attr, phase in PHASES:
            try:
                owner: Any = importlib.import_module(module_name)
            except ImportError:
                self.missing.append("%s.%s" % (module_name, attr))
                continue
            *path, name = attr.split(".")
            for part in path:
                owner = getattr(owner, part, None)
            if owner is None:
                self.missing.append("%s.%s" % (module_name, attr))
                continue
            if name == "compile" and not hasattr(owner, "compile"):
                original: Any = compile  # the builtin, as the module calls it
            else:
                original = getattr(owner, name, None)
            if original is None:
                self.missing.append("%s.%s" % (module_name, attr))
                continue
            setattr(owner, name, self.wrap(original, phase))


def _tensor_hash(out: Any) -> str:
    import torch

    hidden = out.last_hidden_state if hasattr(out, "last_hidden_state") else out
    assert isinstance(hidden, torch.Tensor)
    return hashlib.sha1(hidden.detach().contiguous().numpy().tobytes()).hexdigest()[:16]


def _children_cpu() -> float:
    """CPU time of this process's finished child processes (Inductor runs the C++ compiler
    in children: their time is part of the compile)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _rss_kb() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def _dir_size(path: str) -> Tuple[int, int]:
    total = count = 0
    for dirpath, _, names in os.walk(path):
        for n in names:
            total += os.path.getsize(os.path.join(dirpath, n))
            count += 1
    return total, count


def build_model(layers: int, variant: str) -> Tuple[Any, Any]:
    """The tiny-width Llama of ``layers`` layers (``breaks``: a graph break in every layer) and
    its input."""
    import torch
    import transformers

    cfg = transformers.LlamaConfig(hidden_size=32, intermediate_size=64, num_attention_heads=4,
                                   num_key_value_heads=2, vocab_size=128, max_position_embeddings=64,
                                   num_hidden_layers=layers)
    torch.manual_seed(0)
    model = transformers.LlamaModel(cfg).eval()
    if variant == "breaks":
        for layer in model.layers:
            layer.mlp.register_forward_pre_hook(_break)
        # every layer's forward is a recompile (see the module docstring): allow them all
        torch._dynamo.config.recompile_limit = layers + 8
        torch._dynamo.config.accumulated_recompile_limit = max(256, 4 * layers + 64)
    ids = torch.randint(0, 128, (1, 16))
    return model, ids


def _break(module: Any, args: Any) -> None:
    import torch

    torch._dynamo.graph_break()


def _warm_up(backend: str) -> None:
    import torch

    def tiny(x: Any) -> Any:
        return (x.sin() + 1).relu()

    torch.compile(tiny, backend=backend)(torch.ones(4))
    torch._dynamo.reset()


def child(args: argparse.Namespace) -> Dict[str, Any]:
    """One measurement in this (fresh) process."""
    import gc

    import torch

    model, ids = build_model(args.layers, args.variant)
    _warm_up(args.backend)
    late = 0.0
    if args.start_at:
        late = time.time() - args.start_at
        time.sleep(max(0.0, -late))
    gc.collect()  # both sides start the timed span from the same heap state
    rss_before = _rss_kb()
    profiler = None
    if args.cprofile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    capture = None
    clock = None
    wall0, cpu0, children0 = time.perf_counter(), time.process_time(), _children_cpu()
    if args.mode == "dump":
        # pellucid's imports are part of its cost (a plain run never imports it); the clock's
        # wrappers import the modules whose functions they time
        import0 = time.thread_time()
        import pellucid

        clock = PhaseClock()
        clock.install()
        clock.cpu["import pellucid"] = time.thread_time() - import0
        before = sum(clock.cpu.values())
        enter0 = time.thread_time()
        manager = pellucid.prepare_debug(args.dump_dir)
        capture = manager.__enter__()
        # (phases inside entering are charged to themselves; the rest to "install hooks")
        rest = time.thread_time() - enter0 - (sum(clock.cpu.values()) - before)
        clock.cpu["install hooks"] = clock.cpu.get("install hooks", 0.0) + rest
        try:
            with torch.no_grad():
                out = torch.compile(model, backend=args.backend)(ids)
        finally:
            exit0 = time.thread_time()
            before = sum(clock.cpu.values())
            manager.__exit__(None, None, None)
            rest = time.thread_time() - exit0 - (sum(clock.cpu.values()) - before)
            clock.cpu["leave block (rest)"] = clock.cpu.get("leave block (rest)", 0.0) + rest
    else:
        with torch.no_grad():
            out = torch.compile(model, backend=args.backend)(ids)
    wall = time.perf_counter() - wall0
    cpu_self = time.process_time() - cpu0
    cpu_children = _children_cpu() - children0
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.cprofile)
    result: Dict[str, Any] = {
        "wall": wall, "cpu": cpu_self + cpu_children, "cpu_self": cpu_self, "cpu_children": cpu_children,
        "hash": _tensor_hash(out),
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_before_mb": rss_before / 1024, "pid": os.getpid(), "late": max(0.0, late),
    }
    if capture is not None and clock is not None:
        size, count = _dir_size(args.dump_dir)
        frames = list(capture.frames.values())
        result.update({
            "phases": clock.cpu, "phase_wall": clock.wall, "calls": clock.calls,
            "missing_phases": clock.missing,
            "dump_bytes": size, "dump_files": count,
            "frames": len(frames),
            "transforms": sum(len(f.transforms) for f in frames),
            "replaced": sum(1 for f in frames for t in f.transforms if t.replacement is not None),
            "entries": sum(len(f.entries) for f in frames),
            "graphs": len(capture.graphs),
            "warnings": list(capture.warnings),
            "full_code_bytes": sum(os.path.getsize(p) for p in set(capture.files)
                                   if os.path.basename(p).startswith("full_code_for_") and os.path.exists(p)),
            "files_present": all(os.path.exists(p) for p in capture.files),
        })
    return result


# -- the driver -------------------------------------------------------------------------------------
def _env(cache_dir: str) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _child_cmd(layers: int, variant: str, backend: str, mode: str, dump_dir: str, result: str,
               start_at: float = 0.0, cprofile: str = "") -> List[str]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--layers", str(layers),
           "--variant", variant, "--backend", backend, "--mode", mode, "--dump-dir", dump_dir,
           "--result", result]
    if start_at:
        cmd += ["--start-at", repr(start_at)]
    if cprofile:
        cmd += ["--cprofile", cprofile]
    return cmd


def run_one(layers: int, variant: str, backend: str, mode: str, timeout: float,
            cprofile: str = "") -> Dict[str, Any]:
    """Run one measuring process; its result (or ``{"error": ...}``)."""
    work = tempfile.mkdtemp(prefix="pellucid-scale-")
    try:
        dump_dir, result = os.path.join(work, "dump"), os.path.join(work, "result.json")
        cmd = _child_cmd(layers, variant, backend, mode, dump_dir, result, cprofile=cprofile)
        try:
            proc = subprocess.run(cmd, env=_env(os.path.join(work, "inductor")), capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": "timed out after %.0f s" % timeout}
        if proc.returncode != 0 or not os.path.exists(result):
            return {"error": "exit %d: %s" % (proc.returncode, proc.stderr.strip()[-2000:])}
        with open(result) as fh:
            return json.load(fh)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_ranks(layers: int, variant: str, backend: str, mode: str, ranks: int,
              timeout: float) -> Dict[str, Any]:
    """``ranks`` processes started together; dumped ones share one dump directory."""
    work = tempfile.mkdtemp(prefix="pellucid-scale-ranks-")
    try:
        dump_dir = os.path.join(work, "dump")
        procs = []
        # each process builds its model and warms up first; they start timing together
        start_at = time.time() + 30.0 + 15.0 * ranks
        for r in range(ranks):
            result = os.path.join(work, "result-%d.json" % r)
            cmd = _child_cmd(layers, variant, backend, mode, dump_dir, result, start_at=start_at)
            procs.append((subprocess.Popen(cmd, env=_env(os.path.join(work, "inductor-%d" % r)),
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True),
                          result))
        results = []
        for proc, result in procs:
            try:
                _, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                return {"error": "a rank timed out"}
            if proc.returncode != 0 or not os.path.exists(result):
                return {"error": "rank exit %d: %s" % (proc.returncode, err.strip()[-2000:])}
            with open(result) as fh:
                results.append(json.load(fh))
        # a rank that was still warming up at the start time did not overlap the others fully
        out: Dict[str, Any] = {"ranks": results, "late": max(r.get("late", 0.0) for r in results)}
        if mode == "dump":
            # each rank's capture model in the shared directory (what index.md and the report
            # are rendered from)
            if SRC not in sys.path:
                sys.path.insert(0, SRC)
            import pellucid

            pids = {c.process.get("pid") for c in pellucid.load_capture(dump_dir)}
            out["index_parts"] = sum(1 for r in results if r["pid"] in pids)
            out["dump_bytes"], out["dump_files"] = _dir_size(dump_dir)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def summarise(pairs: List[Tuple[Dict[str, Any], Dict[str, Any]]]) -> Dict[str, Any]:
    """Medians over the (plain, dumped) pairs of one configuration."""
    ok = [(p, d) for p, d in pairs if "error" not in p and "error" not in d]
    if not ok:
        errors = [x["error"] for pair in pairs for x in pair if "error" in x]
        return {"error": errors[0] if errors else "no runs"}
    plains, dumps = [p for p, _ in ok], [d for _, d in ok]
    phases: Dict[str, float] = {}
    for name in sorted({k for d in dumps for k in d["phases"]}):
        phases[name] = median([d["phases"].get(name, 0.0) for d in dumps])
    pellucid_cpu = [sum(d["phases"].values()) for d in dumps]
    lock_wait = [max(0.0, d["phase_wall"].get("dump-dir lock", 0.0) - d["phases"].get("dump-dir lock", 0.0))
                 for d in dumps]
    last = dumps[-1]
    return {
        "runs": len(ok),
        "load": median([x.get("load", float("nan")) for pair in ok for x in pair]),
        "plain_wall": median([p["wall"] for p in plains]), "dump_wall": median([d["wall"] for d in dumps]),
        "wall_ratio": median([d["wall"] / p["wall"] for p, d in ok]),
        "plain_cpu": median([p["cpu"] for p in plains]), "dump_cpu": median([d["cpu"] for d in dumps]),
        "cpu_ratio": median([d["cpu"] / p["cpu"] for p, d in ok]),
        "pellucid_cpu": median(pellucid_cpu),
        "torch_for_pellucid": median([(d["cpu"] - p["cpu"]) - sum(d["phases"].values()) for p, d in ok]),
        "lock_wait": median(lock_wait),
        "phases": phases,
        "dump_bytes": median([d["dump_bytes"] for d in dumps]),
        "full_code_bytes": median([d["full_code_bytes"] for d in dumps]),
        "dump_files": last["dump_files"],
        "plain_rss_mb": median([p["maxrss_mb"] for p in plains]),
        "dump_rss_mb": median([d["maxrss_mb"] for d in dumps]),
        "frames": last["frames"], "transforms": last["transforms"], "replaced": last["replaced"],
        "entries": last["entries"], "graphs": last["graphs"],
        "warnings": sorted({w for d in dumps for w in d["warnings"]}),
        "hash_mismatch": sum(1 for p, d in ok if p["hash"] != d["hash"]),
        "files_missing": sum(1 for d in dumps if not d["files_present"]),
        "missing_phases": last["missing_phases"],
        "errors": [x["error"] for pair in pairs for x in pair if "error" in x],
    }


def growth(xs: Sequence[int], ys: Sequence[float]) -> Optional[float]:
    """Exponent k of y ~ x**k between the first and last point (None without two points)."""
    if len(xs) < 2 or ys[0] <= 0 or ys[-1] <= 0:
        return None
    return math.log(ys[-1] / ys[0]) / math.log(xs[-1] / xs[0])


def _fmt_phases(phases: Dict[str, float]) -> str:
    top = sorted(phases.items(), key=lambda kv: -kv[1])
    return ", ".join("%s %.2f" % (k, v) for k, v in top if v >= 0.005)


def report(table: Dict[str, Dict[str, Any]], sizes: Sequence[int]) -> List[str]:
    """Print the table, the phases and the growth; returns the targets missed."""
    print()
    print("| variant | backend | layers | frames/entries/graphs | plain wall s | dumped wall s | wall ratio "
          "| plain CPU s | dumped CPU s | CPU ratio | pellucid CPU s | torch for pellucid s | dump KB "
          "| full_code KB | peak RSS MB plain/dumped | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    missed: List[str] = []
    for key, s in table.items():
        variant, backend, layers = key.split("/")
        if "error" in s:
            print("| %s | %s | %s | error: %s |" % (variant, backend, layers, s["error"][:200].replace("\n", " ")))
            missed.append("%s: %s" % (key, s["error"][:200]))
            continue
        print("| %s | %s | %s | %d/%d/%d | %.2f | %.2f | %.3f | %.2f | %.2f | %.3f | %.2f | %.2f | %.0f | %.0f | %.0f/%.0f | %.1f |" % (
            variant, backend, layers, s["frames"], s["entries"], s["graphs"], s["plain_wall"], s["dump_wall"],
            s["wall_ratio"], s["plain_cpu"], s["dump_cpu"], s["cpu_ratio"], s["pellucid_cpu"],
            s["torch_for_pellucid"], s["dump_bytes"] / 1024, s["full_code_bytes"] / 1024,
            s["plain_rss_mb"], s["dump_rss_mb"], s["load"]))
        if s["hash_mismatch"]:
            missed.append("%s: outputs differ under prepare_debug in %d runs" % (key, s["hash_mismatch"]))
        if s["files_missing"]:
            missed.append("%s: files of the capture missing from the dump" % key)
        if s["warnings"]:
            missed.append("%s: warnings: %s" % (key, "; ".join(s["warnings"])[:300]))
        if int(layers) >= 80 and s["wall_ratio"] > 1.05:
            missed.append("%s: wall ratio %.3f > 1.05" % (key, s["wall_ratio"]))
    print()
    print("pellucid CPU seconds by phase (medians):")
    for key, s in table.items():
        if "error" not in s:
            print("  %-28s %s" % (key, _fmt_phases(s["phases"])))
            if s["missing_phases"]:
                print("  %-28s (not found, not timed: %s)" % ("", ", ".join(s["missing_phases"])))
    print()
    print("growth with the layer count (exponent k of metric ~ layers**k, %s to %s layers; 1 = linear):"
          % (sizes[0], sizes[-1]))
    groups: Dict[str, List[Tuple[int, Dict[str, Any]]]] = {}
    for key, s in table.items():
        if "error" not in s:
            variant, backend, layers = key.split("/")
            groups.setdefault("%s/%s" % (variant, backend), []).append((int(layers), s))
    for group, points in groups.items():
        points.sort(key=lambda p: p[0])
        if len(points) < 2:
            continue
        xs = [p[0] for p in points]
        parts = []
        for metric, label in (("pellucid_cpu", "pellucid CPU"), ("dump_bytes", "dump size"),
                              ("full_code_bytes", "full_code"), ("plain_cpu", "plain CPU")):
            k = growth(xs, [p[1][metric] for p in points])
            if k is not None:
                parts.append("%s k=%.2f" % (label, k))
                if metric != "plain_cpu" and k > 1.15:
                    missed.append("%s: %s grows super-linearly (k=%.2f)" % (group, label, k))
        rss = growth(xs, [max(1e-3, p[1]["dump_rss_mb"] - p[1]["plain_rss_mb"]) for p in points])
        if rss is not None:
            parts.append("extra peak RSS k=%.2f" % rss)
        print("  %-20s %s" % (group, ", ".join(parts)))
    return missed


def report_ranks(summary: Dict[str, Any], ranks: int) -> List[str]:
    """Print the multi-rank run; returns the targets missed."""
    if "error" in summary:
        print("ranks: error: %s" % summary["error"])
        return ["ranks: %s" % summary["error"]]
    print()
    print("%d ranks sharing one dump directory (%s), %d runs:" % (ranks, summary["config"], summary["runs"]))
    print("  wall per rank, median: plain %.2f s, dumped %.2f s (ratio %.3f); slowest rank: plain %.2f s, "
          "dumped %.2f s" % (summary["plain_wall"], summary["dump_wall"], summary["wall_ratio"],
                             summary["plain_slowest"], summary["dump_slowest"]))
    print("  blocked on the dump directory's lock, per rank: median %.4f s, most %.4f s "
          "(pellucid CPU per rank %.2f s)" % (summary["lock_wait"], summary["lock_wait_max"],
                                                summary["pellucid_cpu"]))
    print("  every rank's files present: %s; ranks with a capture in the directory: %s of %d"
          % (summary["complete"], summary["index_parts"], ranks))
    if summary["late"] > 1.0:
        print("  (a rank reached the common start %.1f s late: the ranks overlapped less than fully)"
              % summary["late"])
    missed = []
    if not summary["complete"] or summary["index_parts"] != ranks:
        missed.append("ranks: a rank's files or index part are missing")
    if summary["lock_wait_max"] > 0.05 * summary["pellucid_cpu"] + 0.05:
        missed.append("ranks: a rank waited %.3f s on the dump directory's lock" % summary["lock_wait_max"])
    return missed


def summarise_ranks(runs: List[Tuple[Dict[str, Any], Dict[str, Any]]], config: str) -> Dict[str, Any]:
    ok = [(p, d) for p, d in runs if "error" not in p and "error" not in d]
    if not ok:
        errors = [x["error"] for pair in runs for x in pair if "error" in x]
        return {"error": errors[0] if errors else "no runs"}
    plain_walls = [r["wall"] for p, _ in ok for r in p["ranks"]]
    dump_walls = [r["wall"] for _, d in ok for r in d["ranks"]]
    waits = [max(0.0, r["phase_wall"].get("dump-dir lock", 0.0) - r["phases"].get("dump-dir lock", 0.0))
             for _, d in ok for r in d["ranks"]]
    return {
        "config": config, "runs": len(ok),
        "plain_wall": median(plain_walls), "dump_wall": median(dump_walls),
        "wall_ratio": median(dump_walls) / median(plain_walls),
        "plain_slowest": median([max(r["wall"] for r in p["ranks"]) for p, _ in ok]),
        "dump_slowest": median([max(r["wall"] for r in d["ranks"]) for _, d in ok]),
        "lock_wait": median(waits), "lock_wait_max": max(waits),
        "pellucid_cpu": median([sum(r["phases"].values()) for _, d in ok for r in d["ranks"]]),
        "complete": all(r["files_present"] for _, d in ok for r in d["ranks"]),
        "index_parts": min(d["index_parts"] for _, d in ok),
        "late": max(x["late"] for pair in ok for x in pair),
        "hash_mismatch": sum(1 for p, d in ok for a, b in zip(p["ranks"], d["ranks"]) if a["hash"] != b["hash"]),
    }


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="development: sizes 2 and 4, eager, one pair, 2 ranks")
    parser.add_argument("--sizes", default=None, help="layer counts (default 8,32,80)")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--backends", default=None, help="default eager,aot_eager,inductor")
    parser.add_argument("--runs", type=int, default=None, help="pairs per configuration (default 5)")
    parser.add_argument("--ranks", type=int, default=None, help="processes sharing a dump dir (default 4; 0: skip)")
    parser.add_argument("--rank-size", type=int, default=None, help="layers of the ranks' model (default 32)")
    parser.add_argument("--rank-runs", type=int, default=None, help="pairs of rank runs (default 3)")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--cprofile", help="directory: a cProfile of one dumped run per configuration")
    # the measured process
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--layers", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--dump-dir", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    quick = args.quick
    args.sizes = [int(s) for s in (args.sizes or ",".join(map(str, QUICK_SIZES if quick else SIZES))).split(",")]
    args.variants = args.variants.split(",")
    args.backends = (args.backends or ("eager" if quick else ",".join(BACKENDS))).split(",")
    args.runs = args.runs if args.runs is not None else (1 if quick else 5)
    args.ranks = args.ranks if args.ranks is not None else (2 if quick else 4)
    args.rank_size = args.rank_size if args.rank_size is not None else (4 if quick else 32)
    args.rank_runs = args.rank_runs if args.rank_runs is not None else (1 if quick else 3)
    return args


def _byte_compile() -> None:
    """Write the bytecode caches of pellucid's modules, as installing the package does (the
    measured processes then read them, whatever ``PYTHONDONTWRITEBYTECODE`` says)."""
    import compileall

    if not compileall.compile_dir(os.path.join(SRC, "pellucid"), quiet=1):
        print("NOTE: pellucid's modules could not all be byte-compiled: the dumped runs compile them")


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if args.child:
        if args.cprofile is None:
            args.cprofile = ""
        result = child(args)
        with open(args.result, "w") as fh:
            json.dump(result, fh)
        return 0
    _byte_compile()
    print("bench/scale.py: Python %s, load average %s, sizes %s, backends %s, %d pairs each"
          % (sys.version.split()[0], " ".join("%.1f" % x for x in os.getloadavg()), args.sizes,
             args.backends, args.runs))
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        print("NOTE: the load average exceeds the %d cores: wall times (and ratios) wait on other "
              "processes; compare the CPU figures, and take the targets' figures on a quiet machine"
              % (os.cpu_count() or 1))
    table: Dict[str, Dict[str, Any]] = {}
    for variant in args.variants:
        for backend in args.backends:
            for layers in args.sizes:
                key = "%s/%s/%d" % (variant, backend, layers)
                pairs = []
                for run in range(args.runs):
                    order = ("plain", "dump") if run % 2 == 0 else ("dump", "plain")
                    got = {}
                    for mode in order:
                        got[mode] = run_one(layers, variant, backend, mode, args.timeout)
                        got[mode]["load"] = os.getloadavg()[0]  # (noise: say how busy the machine was)
                    pairs.append((got["plain"], got["dump"]))
                    p, d = got["plain"], got["dump"]
                    if "error" in p or "error" in d:
                        print("  %s run %d: error: %s" % (key, run, (p.get("error") or d.get("error"))[:300]),
                              flush=True)
                    else:
                        print("  %s run %d: wall %.2f / %.2f s, CPU %.2f / %.2f s, pellucid CPU %.2f s (load %.1f)"
                              % (key, run, p["wall"], d["wall"], p["cpu"], d["cpu"], sum(d["phases"].values()),
                                 os.getloadavg()[0]), flush=True)
                if args.cprofile:
                    os.makedirs(args.cprofile, exist_ok=True)
                    run_one(layers, variant, backend, "dump", args.timeout,
                            cprofile=os.path.join(os.path.abspath(args.cprofile), key.replace("/", "-") + ".prof"))
                table[key] = summarise(pairs)
    missed = report(table, args.sizes)
    ranks_summary = None
    if args.ranks:
        variant, backend = args.variants[-1], args.backends[0]
        config = "%s/%s/%d" % (variant, backend, args.rank_size)
        runs = []
        for run in range(args.rank_runs):
            order = ("plain", "dump") if run % 2 == 0 else ("dump", "plain")
            got = {}
            for mode in order:
                got[mode] = run_ranks(args.rank_size, variant, backend, mode, args.ranks, args.timeout)
            runs.append((got["plain"], got["dump"]))
            print("  ranks %s run %d done (load %.1f)" % (config, run, os.getloadavg()[0]), flush=True)
        ranks_summary = summarise_ranks(runs, config)
        missed += report_ranks(ranks_summary, args.ranks)
    print()
    print("load average at the end: %s" % " ".join("%.1f" % x for x in os.getloadavg()))
    for m in missed:
        print("MISSED: %s" % m)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"table": table, "ranks": ranks_summary, "missed": missed,
                       "python": sys.version, "loadavg": os.getloadavg()}, fh, indent=1)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
