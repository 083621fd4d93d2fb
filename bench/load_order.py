#!/usr/bin/env python3
"""What loading the training engine costs, and what loading some of LibTorch's libraries before
it would save and change. Each way of loading runs in a process of its own: it loads the
libraries named (each with RTLD_LAZY | RTLD_LOCAL, in order), then the engine as the CLI does
(RTLD_NOW | RTLD_LOCAL). The CPU time, the libraries loaded first included, is the median of
--times processes. The bindings are the dynamic loader's own record (LD_DEBUG=bindings, every
symbol bound at load with LD_BIND_NOW=1): the library each library's reference to each symbol
was bound to, compared with the engine loaded alone. A binding that differs is a symbol that
two libraries define, now taken from the other one.

    bench/load_order.py [--engine build/lib/liboomlab_train.so] [--times 5]
"""

import argparse
import collections
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile

LOADER = """
import ctypes, os, resource, sys
before = resource.getrusage(resource.RUSAGE_SELF)
for library in sys.argv[2:]:
    try:
        ctypes.CDLL(library, mode=os.RTLD_LAZY | os.RTLD_LOCAL)
    except OSError as error:
        print("not loaded first:", error, file=sys.stderr)
ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW | os.RTLD_LOCAL)
after = resource.getrusage(resource.RUSAGE_SELF)
print(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
"""

BINDING = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: normal symbol `([^']+)'")


def needed(library):
    dynamic = subprocess.run(["readelf", "-d", library], capture_output=True, text=True,
                             check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)


def loaded_with(engine):
    """Every library the engine's load brings in, by its name, at the path ldd finds it."""
    listed = subprocess.run(["ldd", engine], capture_output=True, text=True, check=True).stdout
    return {parts[0]: parts[2] for parts in map(str.split, listed.splitlines())
            if len(parts) >= 3 and parts[1] == "=>"}


def load_cpu(engine, first, times):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    seconds = []
    for _ in range(times):
        out = subprocess.run([sys.executable, "-c", LOADER, engine, *first], env=env,
                             capture_output=True, text=True, check=True).stdout
        seconds.append(float(out.split()[-1]))
    return statistics.median(seconds)


def bindings(engine, first):
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, OMP_NUM_THREADS="1", LD_BIND_NOW="1", LD_DEBUG="bindings",
                   LD_DEBUG_OUTPUT=os.path.join(folder, "bindings"))
        subprocess.run([sys.executable, "-c", LOADER, engine, *first], env=env,
                       capture_output=True, check=True)
        bound = {}
        for path in glob.glob(os.path.join(folder, "bindings.*")):
            with open(path, errors="replace") as log:
                for line in log:
                    match = BINDING.search(line)
                    if match:
                        bound[(match.group(1), match.group(3))] = match.group(2)
        return bound


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default="build/lib/liboomlab_train.so")
    parser.add_argument("--times", type=int, default=5)
    args = parser.parse_args()
    engine = os.path.abspath(args.engine)
    if not os.path.isfile(engine):
        sys.exit(f"{engine}: no such library; build first, or give --engine")
    if args.times < 1:
        sys.exit(f"--times {args.times}: give 1 or more")
    torch_cpu = next((path for name, path in loaded_with(engine).items()
                      if name.startswith("libtorch_cpu.so")), None)
    if torch_cpu is None:
        sys.exit(f"{engine} does not load libtorch_cpu")
    ways = {
        "the engine alone (as oomlab-cli loads it)": [],
        "libtorch_cpu's own libraries first, last named first":
            list(reversed(needed(torch_cpu))),
    }
    alone = bindings(engine, [])
    print(f"{engine}: {len(alone)} bindings at load\n")
    for way, first in ways.items():
        cpu = load_cpu(engine, first, args.times)
        bound = alone if not first else bindings(engine, first)
        changed = [(who, symbol, alone.get((who, symbol)), bound.get((who, symbol)))
                   for (who, symbol) in set(alone) | set(bound)
                   if alone.get((who, symbol)) != bound.get((who, symbol))]
        print(f"{way}: {cpu:.3f} s of CPU to load (median of {args.times}), "
              f"{len(changed)} bindings differ from the engine's own load")
        kinds = collections.Counter("C" if not s.startswith("_Z") else s[:4] for _, s, _, _ in changed)
        if changed:
            print("  by kind of symbol:", ", ".join(f"{k} {n}" for k, n in kinds.most_common(8)))
        # C symbols, and C++ guard variables (an inline function's static, initialised twice
        # where two copies are bound): the rest are inline functions' copies, equal by the ODR.
        for who, symbol, was, now in sorted(changed, key=lambda c: (c[0], c[1])):
            if not symbol.startswith("_Z") or symbol.startswith("_ZGV"):
                print(f"  {os.path.basename(who)}: {symbol}: "
                      f"{os.path.basename(was or '-')} -> {os.path.basename(now or '-')}")
        print()


if __name__ == "__main__":
    main()
