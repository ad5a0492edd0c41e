"""Wall time of the same torch.compile workload with and without pellucid.prepare_debug.

    python bench/overhead.py [--runs 9] [--steps 20] [--backend eager]

Workload: a tiny GPT-2 (built from a config, nothing downloaded) compiled from scratch
(``torch._dynamo.reset()``), then ``--steps`` forward passes.  Runs alternate plain and
under ``prepare_debug`` (a new dump directory each time); both sides time the same span -- the
reset, the compile and the steps -- and the dumped side also entering and leaving
``prepare_debug`` (writing the files).  The report is the median time of each and their ratio.
Target: ratio under 1.10 with backend eager.

One compile takes ~0.4 s here and single runs differ by tens of milliseconds (on a 2-core machine
the plain runs alone spread by ~8%), so the report also gives the paired per-run ratios' median
and middle half: a ratio whose middle half straddles the target is not met reliably.

Each timed run starts with ``gc.collect()``: with torch loaded a full collection walks a large
heap (~0.3 s here) and the compile allocates enough to need one about every other run, so without
a common starting point the median depends on which side of the comparison the collection
happens to land in.
"""
import argparse
import gc
import statistics
import sys
import tempfile
import time


def build():
    import torch
    import transformers

    cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64,
                                  bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    ids = torch.randint(0, 256, (2, 16))
    return model, ids


def workload(model, ids, backend, steps):
    """Compile from scratch and run ``steps`` forward passes; returns the last logits."""
    import torch

    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend)
    with torch.no_grad():
        for _ in range(steps):
            out = compiled(ids).logits
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--backend", default="eager")
    args = parser.parse_args(argv)
    import torch

    import pellucid

    model, ids = build()
    workload(model, ids, args.backend, 2)  # warm imports and lazy initialisation
    plain, dumped = [], []
    for run in range(args.runs):
        gc.collect()
        start = time.perf_counter()
        out_plain = workload(model, ids, args.backend, args.steps)
        t_plain = time.perf_counter() - start
        with tempfile.TemporaryDirectory() as d:
            gc.collect()
            start = time.perf_counter()
            with pellucid.prepare_debug(d):
                out_dumped = workload(model, ids, args.backend, args.steps)
            t_dumped = time.perf_counter() - start  # includes writing the files at exit
        assert torch.equal(out_plain, out_dumped), "outputs differ under prepare_debug"
        plain.append(t_plain)
        dumped.append(t_dumped)
        print("run %d: plain %.3fs, prepare_debug %.3fs" % (run, t_plain, t_dumped))
    mp, md = statistics.median(plain), statistics.median(dumped)
    paired = sorted(d / p for p, d in zip(plain, dumped))
    quarter = len(paired) // 4
    print("paired ratios: median %.3f, middle half %.3f-%.3f"
          % (statistics.median(paired), paired[quarter], paired[len(paired) - 1 - quarter]))
    print("median: plain %.3fs, prepare_debug %.3fs, ratio %.3f (target < 1.10, backend %s)"
          % (mp, md, md / mp, args.backend))
    return 0


if __name__ == "__main__":
    sys.exit(main())
