"""prepare_debug on every ``transformers`` architecture that can be built from a tiny config.

For each architecture in ``transformers``' auto mapping (``MODEL_MAPPING_NAMES``) the config class
is built with its defaults and then shrunk generically (widths, layers, heads, experts, vocabulary,
image/patch sizes, audio lengths, sub-configs of composite models; see :mod:`bench.tiny_configs`),
the base model is built with ``AutoModel.from_config`` (eval mode, seed 0, nothing downloaded) and
fed dummy inputs chosen from its ``forward`` signature.  Architectures that cannot be built or do
not run eagerly offline are counted as *not buildable*, with the reason; they are not failures of
pellucid.  A model for which ``torch.compile`` itself fails without pellucid is counted apart too.

Each buildable model is then, for each backend (``eager``, ``aot_eager``), compiled twice in fresh
Dynamo state (``torch._dynamo.reset()``, same seed and inputs): once plainly (the reference) and
once inside ``pellucid.prepare_debug(tmpdir)``.  Columns per model and backend:

* frames    -- compiled frames captured (``len(capture.frames)``); compilations (transforms) too;
* decomp    -- transforms whose transformed code was decompiled (``transform.source``);
* verified  -- transforms whose recompiled code replaced Dynamo's (``transform.replacement``),
  i.e. pellucid's code ran;
* equal     -- every output tensor equal (``torch.equal``) to the plain torch.compile run;
* files     -- every ``.py`` file of the dump compiles;
* warns     -- PellucidWarnings emitted (0 is the bar);
* debug     -- a second pass inside ``pellucid.debug(pause=False)`` (the compiled model running
  from the dumped files, entries chosen by Dynamo's guard managers) gives outputs bitwise equal
  to a second pass of the plain compiled model, with every full_code file routed, no input
  missing every entry, no rendered guard disagreeing with Dynamo and no warning.

Totals give, per backend, the share of models at 100% in every column, and the distinct reasons
for ``transform.rejected`` (why Dynamo's own code ran), most common first.  Every model runs in its
own subprocess with a timeout, so a hang or crash costs one row.  Usage::

    python bench/models.py --quick                     # ~10 representative models
    python bench/models.py --limit 50 --json out.json  # the first 50 architectures
    python bench/models.py --only gpt2,bert --backends eager
    python bench/models.py --shuffle 1 --limit 80      # a random sample of 80
    python bench/models.py --list                      # the enumerated architectures
    python bench/models.py --build-only                # buildability census, in-process, fast
    python bench/models.py --summarise out.json        # totals of an earlier (even partial) run

Needs torch and transformers (run it with the interpreter that has them).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

QUICK = ["gpt2", "bert", "llama", "mixtral", "t5", "bart", "vit", "resnet", "wav2vec2", "whisper", "clip"]
BACKENDS = ("eager", "aot_eager")


# -- enumeration ------------------------------------------------------------------------------------
def architectures() -> List[str]:
    """Model types of ``MODEL_MAPPING_NAMES``, one per distinct base-model class, sorted."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES
    seen = set()
    out = []
    for model_type in sorted(MODEL_MAPPING_NAMES):
        cls = MODEL_MAPPING_NAMES[model_type]
        cls = cls if isinstance(cls, str) else cls[0]
        if cls in seen:
            continue
        seen.add(cls)
        out.append(model_type)
    return out


# -- worker (one model, in its own process) -----------------------------------------------------------
def _leaves(obj: Any, path: str, out: List) -> None:
    """Flatten an output into (path, value) leaves: tensors, and other values by repr."""
    import torch
    if isinstance(obj, torch.Tensor):
        out.append((path, obj))
    elif hasattr(obj, "to_tuple") and hasattr(obj, "keys"):  # ModelOutput
        for k in obj.keys():
            _leaves(obj[k], path + "." + str(k), out)
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            _leaves(obj[k], path + "[%r]" % (k,), out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _leaves(v, path + "[%d]" % i, out)
    elif obj is None or isinstance(obj, (int, float, bool, str)):
        out.append((path, obj))
    else:  # a cache object or similar: compare the tensors it holds, if any
        held = [(k, v) for k, v in sorted(vars(obj).items()) if not k.startswith("__")] \
            if hasattr(obj, "__dict__") else []
        out.append((path + ":type", type(obj).__name__))
        for k, v in held:
            if isinstance(v, (torch.Tensor, list, tuple, dict)):
                _leaves(v, path + "." + k, out)


def compare_outputs(ref: Any, got: Any) -> Optional[str]:
    """None when every leaf is equal (tensors with torch.equal), else the first difference."""
    import torch
    a: List = []
    b: List = []
    _leaves(ref, "out", a)
    _leaves(got, "out", b)
    if [p for p, _ in a] != [p for p, _ in b]:
        return "output structure differs: %s vs %s" % ([p for p, _ in a][:6], [p for p, _ in b][:6])
    for (path, x), (_, y) in zip(a, b):
        if isinstance(x, torch.Tensor):
            if not isinstance(y, torch.Tensor) or x.shape != y.shape or x.dtype != y.dtype:
                return "%s: shape/dtype differs" % path
            if not torch.equal(x, y):
                nan_same = x.is_floating_point() and torch.equal(torch.nan_to_num(x), torch.nan_to_num(y)) \
                    and torch.equal(torch.isnan(x), torch.isnan(y))
                if not nan_same:
                    diff = (x.double() - y.double()).abs().max().item() if x.is_floating_point() else "?"
                    return "%s: tensors differ (max abs diff %s)" % (path, diff)
        elif x != y and not (isinstance(x, float) and x != x and y != y):
            return "%s: %r != %r" % (path, x, y)
    return None


def _files_valid(dump: str) -> Dict[str, Any]:
    bad = []
    n = 0
    for dirpath, _, names in os.walk(dump):
        for name in names:
            if name.endswith(".py"):
                n += 1
                path = os.path.join(dirpath, name)
                try:
                    with open(path, encoding="utf-8") as fh:
                        compile(fh.read(), path, "exec")
                except Exception as exc:  # SyntaxError, UnicodeDecodeError, ValueError (NUL)
                    bad.append("%s: %s: %s" % (name, type(exc).__name__, exc))
    return {"files": n, "bad_files": bad}


def _call(fn, inputs):
    import torch
    with torch.no_grad():
        return fn(**inputs)


def run_backend(model, inputs, backend: str, keep_dump: Optional[str], calls: int) -> Dict[str, Any]:
    import shutil
    import warnings

    import torch

    import pellucid
    from pellucid.dynamo.torch_features import PellucidWarning

    row: Dict[str, Any] = {"backend": backend}
    start = time.perf_counter()
    # The reference: torch.compile without pellucid.
    torch._dynamo.reset()
    torch.manual_seed(0)
    try:
        compiled = torch.compile(model, backend=backend)
        ref = [_call(compiled, inputs) for _ in range(calls)]
        ref2 = [_call(compiled, inputs) for _ in range(calls)]  # the second pass debug() repeats
    except Exception as exc:
        row["status"] = "compile-error"
        row["error"] = "torch.compile without pellucid: %s: %s" % (type(exc).__name__, str(exc)[:300])
        return row
    row["time_plain"] = round(time.perf_counter() - start, 2)

    dump = keep_dump or tempfile.mkdtemp(prefix="pellucid-models-")
    start = time.perf_counter()
    torch._dynamo.reset()
    torch.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with pellucid.prepare_debug(dump) as capture:
                compiled = torch.compile(model, backend=backend)
                got = [_call(compiled, inputs) for _ in range(calls)]
        except Exception as exc:
            import traceback
            row["status"] = "crash"
            row["error"] = "under prepare_debug: %s: %s" % (type(exc).__name__, str(exc)[:500])
            row["traceback"] = traceback.format_exc()[-3000:]
            return row
    row["time_pellucid"] = round(time.perf_counter() - start, 2)
    ours = [str(w.message) for w in caught if issubclass(w.category, PellucidWarning)]
    row["warnings"] = len(ours)
    row["warning_messages"] = sorted(set(m[:300] for m in ours))[:10]

    transforms = [t for f in capture.frames.values() for t in f.transforms]
    row["frames"] = len(capture.frames)
    row["transforms"] = len(transforms)
    row["decompiled"] = sum(t.source is not None for t in transforms)
    row["verified"] = sum(t.replacement is not None for t in transforms)
    row["rejected"] = [{"frame": t.original.co_name, "reason": t.rejected}
                       for t in transforms if t.replacement is None]
    row["graph_breaks"] = sum(len(f.graph_breaks) for f in capture.frames.values())

    mismatch = None
    for r, g in zip(ref, got):
        mismatch = compare_outputs(r, g)
        if mismatch:
            break
    if mismatch:
        # Is the model itself nondeterministic under torch.compile?  Run the plain one again.
        torch._dynamo.reset()
        torch.manual_seed(0)
        again = _call(torch.compile(model, backend=backend), inputs)
        plain_again = compare_outputs(ref[0], again)
        if plain_again:
            row["nondeterministic"] = plain_again
            mismatch = None
    row["outputs_equal"] = mismatch is None
    row["mismatch"] = mismatch
    row.update(_files_valid(dump))
    row.update(_debug_pass(compiled, inputs, calls, ref2))
    if not keep_dump:
        shutil.rmtree(dump, ignore_errors=True)
    row["status"] = "ok"
    return row


def _debug_pass(compiled, inputs, calls: int, ref2: List[Any]) -> Dict[str, Any]:
    """The second pass inside ``debug(pause=False)``, compared with the plain second pass."""
    import warnings

    import pellucid
    from pellucid.dynamo.torch_features import PellucidWarning

    out: Dict[str, Any] = {}
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with pellucid.debug(pause=False) as session:
                got = [_call(compiled, inputs) for _ in range(calls)]
        except Exception as exc:
            out["debug_ok"] = False
            out["debug_problem"] = "raised under debug(): %s: %s" % (type(exc).__name__, str(exc)[:300])
            return out
    out["time_debug"] = round(time.perf_counter() - start, 2)
    problems = []
    for r, g in zip(ref2, got):
        mismatch = compare_outputs(r, g)
        if mismatch:
            problems.append("outputs: " + mismatch)
            break
    not_routed = {os.path.basename(p): s for p, s in session.full_code_files.items() if s != "runs"}
    if not session.full_code_files:
        problems.append("no full_code file was routed")
    if not_routed:
        problems.append("not routed: %s" % sorted(not_routed.items())[:3])
    if session.misses:
        problems.append("no entry accepted the inputs of %s" % sorted(set(session.misses))[:3])
    if session.disagreements:
        d = session.disagreements[0]
        problems.append("%d rendered guard(s) disagree with Dynamo, e.g. %s entry %d: %s"
                        % (len(session.disagreements), d.frame, d.entry, d.where[:160]))
    ours = sorted(set(str(w.message)[:300] for w in caught if issubclass(w.category, PellucidWarning)))
    if ours:
        problems.append("warnings: %s" % ours[:3])
    out["debug_ok"] = not problems
    out["debug_problem"] = "; ".join(problems)[:1000] or None
    out["debug_routed"] = len(session.full_code_files) - len(not_routed)
    return out


def worker(name: str, backends: List[str], out_path: str, keep_dumps: Optional[str], calls: int) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    sys.path.insert(0, os.path.join(ROOT, "src"))
    import warnings
    warnings.filterwarnings("ignore", module="transformers")
    import torch
    torch.set_num_threads(1)
    import tiny_configs

    result: Dict[str, Any] = {"name": name, "backends": []}

    def save() -> None:
        with open(out_path, "w", encoding="utf-8") as fh:
            json.dump(result, fh, default=str)

    start = time.perf_counter()
    try:
        model, inputs, info = tiny_configs.build(name)
        ref = _call(model, inputs)  # runs eagerly at all?
        del ref
    except Exception as exc:
        result["status"] = "not-buildable"
        result["reason"] = "%s: %s" % (type(exc).__name__, str(exc).split("\n")[0][:300])
        result["time"] = round(time.perf_counter() - start, 2)
        save()
        return
    result.update(info)
    result["status"] = "buildable"
    result["build_time"] = round(time.perf_counter() - start, 2)
    save()
    for backend in backends:
        dump = os.path.join(keep_dumps, name, backend) if keep_dumps else None
        if dump:
            os.makedirs(dump, exist_ok=True)
        t0 = time.perf_counter()
        row = run_backend(model, inputs, backend, dump, calls)
        row["time"] = round(time.perf_counter() - t0, 2)
        result["backends"].append(row)
        save()
    result["time"] = round(time.perf_counter() - start, 2)
    save()


# -- driver --------------------------------------------------------------------------------------------
def run_one(name: str, args: argparse.Namespace) -> Dict[str, Any]:
    fd, out = tempfile.mkstemp(prefix="pellucid-models-", suffix=".json")
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--result-file", out,
           "--backends", ",".join(args.backends), "--calls", str(args.calls)]
    if args.keep_dumps:
        cmd += ["--keep-dumps", args.keep_dumps]
    start = time.perf_counter()
    timed_out = False
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, 9)
        output, _ = proc.communicate()
    elapsed = round(time.perf_counter() - start, 1)
    try:
        with open(out, encoding="utf-8") as fh:
            result = json.load(fh)
    except (OSError, ValueError):
        result = {"name": name, "backends": []}
    finally:
        try:
            os.unlink(out)
        except OSError:
            pass
    result["wall"] = elapsed
    tail = output.decode("utf-8", "replace")[-1500:] if output else ""
    if timed_out:
        if result.get("status") == "buildable":
            result["status"] = "timeout"  # pellucid's part did not finish in time
            result["reason"] = "timeout after %ss during %s" % (
                args.timeout, "/".join(b["backend"] for b in result["backends"]) or "the first backend")
        else:
            result["status"] = "not-buildable"
            result["reason"] = "timeout after %ss while building or running eagerly" % args.timeout
    elif proc.returncode != 0:
        if result.get("status") == "buildable":
            result["status"] = "process-crash"
            result["reason"] = "worker exited with %s: %s" % (proc.returncode, tail[-500:])
        else:
            result["status"] = "not-buildable"
            result["reason"] = "worker exited with %s while building: %s" % (proc.returncode, tail[-300:])
    return result


def row_ok(b: Dict[str, Any]) -> Dict[str, bool]:
    ok = b.get("status") == "ok"
    n = b.get("transforms", 0)
    return {
        "frames": ok and b.get("frames", 0) > 0,
        "decompiled": ok and n > 0 and b.get("decompiled") == n,
        "verified": ok and n > 0 and b.get("verified") == n,
        "equal": ok and bool(b.get("outputs_equal")),
        "files": ok and not b.get("bad_files"),
        "no_warnings": ok and b.get("warnings", 1) == 0,
        "debug": ok and bool(b.get("debug_ok")),
    }


def normalise_reason(reason: str) -> str:
    r = reason.split("\n")[0]
    r = re.sub(r"(__compiled_fn|__resume_at|torch_dynamo_resume_in)_\w+", r"\1_*", r)
    r = re.sub(r"0x[0-9a-fA-F]+", "0x_", r)
    r = re.sub(r"'[^']*'", "'_'", r)
    r = re.sub(r"\d+", "N", r)
    return r[:160]


def print_row(r: Dict[str, Any], file=sys.stdout) -> None:
    if r.get("status") in ("not-buildable",):
        print("%-28s %-9s %s" % (r["name"][:28], "-", "not buildable: " + r.get("reason", "?")[:110]), file=file)
        return
    if not r.get("backends"):
        print("%-28s %-9s %s: %s" % (r["name"][:28], "-", r.get("status"), r.get("reason", "")[:110]), file=file)
    for b in r.get("backends", []):
        if b.get("status") != "ok":
            print("%-28s %-9s %s: %s" % (r["name"][:28], b["backend"], b.get("status"), b.get("error", "")[:110]),
                  file=file)
            continue
        n = b["transforms"]
        print("%-28s %-9s %6d %6d %6s %6s %6s %6s %5d %6s %7.1f%s%s" % (
            r["name"][:28], b["backend"], b["frames"], n, "%d" % b["decompiled"], "%d" % b["verified"],
            "yes" if b["outputs_equal"] else "NO", "yes" if not b["bad_files"] else "NO(%d)" % len(b["bad_files"]),
            b["warnings"], "yes" if b.get("debug_ok") else "NO", b.get("time", 0),
            "  nondeterministic" if b.get("nondeterministic") else "",
            "  debug: %s" % b["debug_problem"][:150] if b.get("debug_problem") else ""), file=file)
    if r.get("status") in ("timeout", "process-crash"):
        print("%-28s %-9s %s: %s" % (r["name"][:28], "-", r["status"], r.get("reason", "")[:110]), file=file)


HEADER = "%-28s %-9s %6s %6s %6s %6s %6s %6s %5s %6s %7s" % (
    "model", "backend", "frames", "comps", "decomp", "verif", "equal", "files", "warns", "debug", "time")


def summarise(results: List[Dict[str, Any]], backends: List[str], file=sys.stdout) -> Dict[str, Any]:
    summary: Dict[str, Any] = {"attempted": len(results)}
    buildable = [r for r in results if r.get("status") != "not-buildable"]
    summary["buildable"] = len(buildable)
    not_buildable = collections.Counter(normalise_reason(r.get("reason", "?")) for r in results
                                        if r.get("status") == "not-buildable")
    p = lambda *a: print(*a, file=file)  # noqa: E731
    p("")
    p("architectures attempted: %d   buildable (built and ran eagerly): %d   not buildable: %d"
      % (len(results), len(buildable), len(results) - len(buildable)))
    for status in ("timeout", "process-crash"):
        names = [r["name"] for r in results if r.get("status") == status]
        if names:
            p("%s (after building): %d  %s" % (status, len(names), ", ".join(names)))
    summary["per_backend"] = {}
    for backend in backends:
        rows = [(r["name"], b) for r in buildable for b in r.get("backends", []) if b["backend"] == backend]
        compile_err = [n for n, b in rows if b.get("status") == "compile-error"]
        crashes = [n for n, b in rows if b.get("status") == "crash"]
        ok = [(n, b) for n, b in rows if b.get("status") == "ok"]
        cols = collections.Counter()
        for _, b in ok:
            for k, v in row_ok(b).items():
                cols[k] += v
        allcols = sum(all(row_ok(b).values()) for _, b in ok)
        comps = sum(b["transforms"] for _, b in ok)
        dec = sum(b["decompiled"] for _, b in ok)
        ver = sum(b["verified"] for _, b in ok)
        pct = lambda k: "%d/%d (%.0f%%)" % (k, len(ok), 100.0 * k / len(ok)) if ok else "0/0"  # noqa: E731
        p("")
        p("backend %s: %d models run (%d torch.compile errors without pellucid%s, %d crashes under prepare_debug%s)"
          % (backend, len(ok), len(compile_err), (": " + ", ".join(compile_err)) if compile_err else "",
             len(crashes), (": " + ", ".join(crashes)) if crashes else ""))
        p("  frames compiled > 0   %s" % pct(cols["frames"]))
        p("  all decompiled        %s    compilations decompiled %d/%d (%.1f%%)"
          % (pct(cols["decompiled"]), dec, comps, 100.0 * dec / comps if comps else 0))
        p("  all verified (ran)    %s    compilations verified   %d/%d (%.1f%%)"
          % (pct(cols["verified"]), ver, comps, 100.0 * ver / comps if comps else 0))
        p("  outputs equal         %s" % pct(cols["equal"]))
        p("  files valid           %s" % pct(cols["files"]))
        p("  no pellucid warnings  %s" % pct(cols["no_warnings"]))
        p("  debug() reproduces    %s" % pct(cols["debug"]))
        p("  100%% on every column  %s" % pct(allcols))
        summary["per_backend"][backend] = {
            "models": len(ok), "compile_errors": compile_err, "crashes": crashes,
            "columns": dict(cols), "all_columns": allcols, "compilations": comps,
            "decompiled": dec, "verified": ver,
            "mismatches": [n for n, b in ok if not b["outputs_equal"]],
            "debug_failures": {n: b.get("debug_problem") for n, b in ok if not b.get("debug_ok")},
            "bad_files": {n: b["bad_files"] for n, b in ok if b["bad_files"]},
        }
    mism = [(r["name"], b["backend"], b["mismatch"]) for r in buildable for b in r.get("backends", [])
            if b.get("status") == "ok" and not b.get("outputs_equal")]
    if mism:
        p("")
        p("OUTPUT MISMATCHES under prepare_debug (serious):")
        for n, be, m in mism:
            p("  %s [%s]: %s" % (n, be, m))
    dbg = [(r["name"], b["backend"], b.get("debug_problem")) for r in buildable for b in r.get("backends", [])
           if b.get("status") == "ok" and not b.get("debug_ok")]
    if dbg:
        p("")
        p("debug() does not reproduce the compiled model:")
        for n, be, m in dbg:
            p("  %s [%s]: %s" % (n, be, m))
    crashes = [(r["name"], b["backend"], b.get("error")) for r in buildable for b in r.get("backends", [])
               if b.get("status") == "crash"]
    if crashes:
        p("")
        p("CRASHES under prepare_debug:")
        for n, be, e in crashes:
            p("  %s [%s]: %s" % (n, be, e))
    reasons: Dict[str, List] = {}
    for r in buildable:
        for b in r.get("backends", []):
            for rej in b.get("rejected", []) or []:
                key = normalise_reason(rej["reason"] or "(no reason)")
                entry = reasons.setdefault(key, [0, set(), "%s [%s] %s: %s" % (
                    r["name"], b["backend"], rej["frame"], (rej["reason"] or "")[:300])])
                entry[0] += 1
                entry[1].add(r["name"])
    if reasons:
        p("")
        p("why Dynamo's code ran instead of pellucid's (transform.rejected), most common first:")
        for key, (count, models, example) in sorted(reasons.items(), key=lambda kv: (-kv[1][0], kv[0])):
            p("  %4d compilations in %3d models  %s" % (count, len(models), key))
            p("        e.g. %s" % example)
    warn = collections.Counter()
    for r in buildable:
        for b in r.get("backends", []):
            for m in b.get("warning_messages", []) or []:
                warn[normalise_reason(m)] += 1
    if warn:
        p("")
        p("pellucid warnings (distinct messages, by models x backends):")
        for m, c in warn.most_common(15):
            p("  %4d  %s" % (c, m))
    if not_buildable:
        p("")
        p("not buildable, by reason:")
        for m, c in not_buildable.most_common(25):
            p("  %4d  %s" % (c, m))
    summary["rejections"] = {k: {"count": v[0], "models": sorted(v[1]), "example": v[2]} for k, v in reasons.items()}
    summary["not_buildable"] = dict(not_buildable)
    return summary


def build_census(names: List[str], args: argparse.Namespace) -> int:
    """Build every architecture and run it eagerly once, in this process (SIGALRM per model)."""
    import signal
    import warnings
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    warnings.filterwarnings("ignore")
    import logging
    logging.disable(logging.WARNING)
    import torch
    torch.set_num_threads(1)
    import tiny_configs

    def alarm(signum, frame):
        raise TimeoutError("took over %ss" % args.timeout)
    signal.signal(signal.SIGALRM, alarm)
    results = []
    for name in names:
        start = time.perf_counter()
        signal.alarm(int(args.timeout))
        try:
            model, inputs, info = tiny_configs.build(name)
            r = {"name": name, "status": "buildable", "class": info["class"], "params": info["params"]}
            del model, inputs
        except BaseException as exc:  # noqa: B902 - includes the alarm
            if isinstance(exc, KeyboardInterrupt):
                raise
            r = {"name": name, "status": "not-buildable",
                 "reason": "%s: %s" % (type(exc).__name__, str(exc).split("\n")[0][:300])}
        finally:
            signal.alarm(0)
        r["time"] = round(time.perf_counter() - start, 2)
        results.append(r)
        print("%-32s %-13s %6.1fs %s" % (name[:32], r["status"], r["time"], r.get("reason", r.get("class", ""))[:120]))
        sys.stdout.flush()
    ok = [r for r in results if r["status"] == "buildable"]
    print("\n%d architectures, %d buildable (%.0f%%)" % (len(results), len(ok), 100.0 * len(ok) / max(1, len(results))))
    reasons = collections.Counter(normalise_reason(r["reason"]) for r in results if r["status"] != "buildable")
    for m, c in reasons.most_common(30):
        print("  %4d  %s" % (c, m))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"results": results}, fh, indent=1)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="~10 representative models")
    parser.add_argument("--only", help="comma-separated model types")
    parser.add_argument("--limit", type=int, help="at most N architectures")
    parser.add_argument("--offset", type=int, default=0, help="skip the first K architectures")
    parser.add_argument("--shuffle", type=int, metavar="SEED", help="random order with this seed")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--json", help="write all results and the summary here (rewritten after each model)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per model (all backends)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--calls", type=int, default=2, help="calls of the compiled model per run")
    parser.add_argument("--keep-dumps", metavar="DIR", help="keep the dumps under DIR/<model>/<backend>")
    parser.add_argument("--list", action="store_true", help="list the enumerated architectures and stop")
    parser.add_argument("--build-only", action="store_true",
                        help="only build and run eagerly, all in this process (fast buildability census)")
    parser.add_argument("--summarise", metavar="JSON", help="print the table and totals of an earlier --json file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--result-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.backends = [b for b in args.backends.split(",") if b]

    if args.worker:
        worker(args.worker, args.backends, args.result_file, args.keep_dumps, args.calls)
        return 0

    if args.summarise:
        with open(args.summarise, encoding="utf-8") as fh:
            results = json.load(fh)["results"]
        print(HEADER)
        for r in results:
            print_row(r)
        summarise(results, args.backends)
        return 0
    names = architectures()
    if args.list:
        print("\n".join(names))
        print("%d architectures" % len(names), file=sys.stderr)
        return 0
    if args.quick:
        names = list(QUICK)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
    if args.shuffle is not None:
        import random
        random.Random(args.shuffle).shuffle(names)
    names = names[args.offset:]
    if args.limit is not None:
        names = names[:args.limit]

    if args.build_only:
        return build_census(names, args)
    print("%d architectures, backends %s, timeout %ss, jobs %d, load average %s"
          % (len(names), ",".join(args.backends), args.timeout, args.jobs,
             " ".join("%.2f" % x for x in os.getloadavg())))
    print(HEADER)
    results: List[Dict[str, Any]] = []
    started = time.time()

    def dump_json() -> None:
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump({"results": results, "args": vars(args)}, fh, indent=1, default=str)
            os.replace(tmp, args.json)

    def done(result: Dict[str, Any]) -> None:
        results.append(result)
        print_row(result)
        sys.stdout.flush()
        dump_json()

    if args.jobs <= 1:
        for name in names:
            done(run_one(name, args))
    else:
        with ThreadPoolExecutor(args.jobs) as pool:
            for fut in [pool.submit(run_one, n, args) for n in names]:
                done(fut.result())
    summary = summarise(results, args.backends)
    print("\nwall time %.0fs, load average now %s" % (time.time() - started,
                                                      " ".join("%.2f" % x for x in os.getloadavg())))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"results": results, "summary": summary, "args": vars(args)}, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
