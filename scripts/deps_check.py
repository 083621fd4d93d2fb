#!/usr/bin/python3
"""Proves that oomlab.sh's package lists are complete.

For each mode given, every file that the mode takes from the system must belong to a package
that a fresh Debian machine holds after `apt-get install --no-install-recommends` of the mode's
list in scripts/debian-packages, as oomlab.sh installs it: the packages named, what apt adds
for their Depends and Pre-Depends (never Recommends or Suggests), and Debian's required and
essential set, which every Debian machine has. apt itself works that out (--simulate) against
a status of only that set. The files are:

- what the mode's configured build found: every system path in build.ninja and its rules
  (CMake's input files, the compiler, include folders, the libraries linked) and the project's
  own find_* results in CMakeCache.txt;
- where the build has been built: every system header in ninja's dependency records and every
  shared library that ldd resolves for the programs and libraries built;
- the outside programs and Debian Python modules the list says the mode's tests start.

A file that fails is printed with the package it came from and the list to add it to. A file
that no Debian package holds fails too, except the two things the project installs from the
package index (its pinned Python environments, checked against their pins) and the CUDA
toolkit, which cuda-test needs and Debian 12 does not have.

  scripts/deps_check.py MODE...     exit 0 when every file is accounted for
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST_FILE = os.path.join(SOURCE, "scripts", "debian-packages")
# The build folder of each mode (oomlab.sh's presets).
BUILD_FOLDERS = {"test": "build", "run": "build", "cli": "build", "screenshots": "build",
                 "install-test": "build", "cuda-test": "build-cuda", "asan": "build-asan",
                 "fuzz": "build-fuzz"}
BUILDING_MODES = set(BUILD_FOLDERS)
SYSTEM_PREFIXES = ("/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/etc/", "/opt/")
# The pinned Python environments that scripts/torch_env.sh and tracker_env.sh make, by the
# start of their folder's name: torch-VERSION holds scripts/pins/torch-VERSION.txt.
PYTHON_ENVS = {"torch-": lambda env: os.path.join("scripts", "pins", env + ".txt"),
               "trackers-": lambda env: os.path.join("scripts", "pins", "trackers.txt")}


def read_lists(path=LIST_FILE):
    """{(mode, kind): [word, ...]} from scripts/debian-packages."""
    lists = {}
    with open(path, encoding="utf-8") as listing:
        for number, line in enumerate(listing, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            match = re.fullmatch(r"(\S+) (packages|programs|python3-modules):\s*(.*)", line)
            if not match:
                sys.exit(f"{path}:{number}: expected 'MODE packages|programs|python3-modules: "
                         f"WORD...', got: {line}")
            mode, kind, words = match.groups()
            lists.setdefault((mode, kind), []).extend(words.split())
    return lists


def words_of(lists, mode, kind):
    """The mode's own words of a kind, with those every building mode shares."""
    shared = lists.get(("build", kind), []) if mode in BUILDING_MODES else []
    return shared + lists.get((mode, kind), [])


def run(command):
    return subprocess.run(command, capture_output=True, text=True, check=False)


def stanza_field(stanza, name):
    match = re.search(r"^" + name + r": (.*(?:\n .*)*)", stanza, re.M)
    return match.group(1).replace("\n", " ") if match else ""


def fresh_machine_status(status_file="/var/lib/dpkg/status"):
    """dpkg's status of a fresh Debian machine, as far as this one can tell: its installed
    packages of priority required or marked essential, and what they depend on (the first
    alternative installed). A new machine has at least these."""
    installed, provided_by = {}, {}
    with open(status_file, encoding="utf-8", errors="replace") as status:
        for stanza in status.read().split("\n\n"):
            if "Status: install ok installed" not in stanza:
                continue
            name = stanza_field(stanza, "Package")
            installed[name] = stanza
            for provided in stanza_field(stanza, "Provides").split(","):
                if provided.strip():
                    provided_by.setdefault(provided.split()[0], name)
    wanted = [name for name, stanza in installed.items()
              if stanza_field(stanza, "Priority") == "required"
              or stanza_field(stanza, "Essential") == "yes"]
    kept = set()
    while wanted:
        name = wanted.pop()
        if name in kept:
            continue
        kept.add(name)
        for relation in ("Pre-Depends", "Depends"):
            for group in stanza_field(installed[name], relation).split(","):
                for alternative in group.split("|"):
                    wanted_name = alternative.split()[0].split(":")[0] if alternative.strip() else ""
                    found = installed.get(wanted_name) and wanted_name or \
                        provided_by.get(wanted_name)
                    if found:
                        wanted.append(found)
                        break
    return {name: installed[name] for name in kept}


_simulated = {}


def installed_on_a_fresh_machine(packages, fresh_status):
    """What a fresh machine holds after installing PACKAGES (below); each distinct list is
    simulated once per run (modes that share a list share its answer)."""
    key = (tuple(sorted(set(packages))), tuple(sorted(fresh_status)))
    if key not in _simulated:
        _simulated[key] = _simulate_install(packages, fresh_status)
    return _simulated[key]


def _simulate_install(packages, fresh_status):
    """What a fresh machine holds after `apt-get install --no-install-recommends PACKAGES`:
    apt itself resolves it (alternatives, virtual packages) against the fresh machine's
    status, so a package only another mode installs, or only a recommendation brings, is not
    among them."""
    with tempfile.NamedTemporaryFile("w", suffix=".status") as status:
        status.write("\n\n".join(fresh_status.values()) + "\n")
        status.flush()
        simulated = run(["apt-get", "install", "--simulate", "--no-install-recommends",
                         "-o", f"Dir::State::status={status.name}",
                         "-o", "Dir::State::extended_states=/dev/null",
                         "-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache="]
                        + sorted(packages))
    if simulated.returncode != 0:
        sys.exit("apt-get could not install this list on a fresh machine (run apt-get update "
                 "first?):\n" + simulated.stdout[-2000:] + simulated.stderr)
    added = {line.split()[1] for line in simulated.stdout.splitlines()
             if line.startswith("Inst ")}
    return set(fresh_status) | added | set(packages)


def file_owners():
    """{path: {package, ...}} of every installed package's files, from dpkg's own records."""
    owners = {}
    for record in glob.glob("/var/lib/dpkg/info/*.list"):
        package = os.path.basename(record)[:-len(".list")].split(":")[0]
        with open(record, encoding="utf-8", errors="replace") as paths:
            for path in paths:
                owners.setdefault(path.rstrip("\n"), set()).add(package)
    return owners


def owners_of(path, owners):
    """The packages holding `path` itself (not what it links to), seen through Debian's merged
    /usr: /lib is /usr/lib, and a folder on the way may be a link."""
    folder, name = os.path.split(os.path.normpath(path))
    found = set()
    for candidate in {os.path.join(folder, name), os.path.join(os.path.realpath(folder), name)}:
        for spelling in (candidate, "/usr" + candidate, candidate.removeprefix("/usr")):
            found |= owners.get(spelling, set())
    return found


def unaccounted(path, owners, closure):
    """(path, its packages) of the first file on the way from `path` through its symbolic
    links that no package of `closure` holds, or None. A link only managed by
    update-alternatives (/etc/alternatives) is held by no package and passes to its target;
    a link a package holds (libOpenCL.so of a -dev package) must be held by the closure too,
    even where what it points to is."""
    seen = set()
    while path not in seen:
        seen.add(path)
        held_by = owners_of(path, owners)
        if held_by and not held_by & closure:
            return path, held_by
        if not os.path.islink(path):
            return None if held_by or os.path.isdir(path) else (path, set())
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return None


def system_paths_in(text):
    for match in re.finditer(r"(?<![\w./-])(/(?:usr|lib|lib64|bin|sbin|etc|opt)/[^\s:;'\"$]+)",
                             text):
        path = match.group(1).rstrip(",)")
        if os.path.exists(path):
            yield path


def configured_files(build):
    """System paths the configured build uses: what build.ninja and its rules name (CMake's
    input files, the compiler, include folders, the libraries linked), and what the project's
    own find_program and find_path calls found (CMakeCache.txt's OOMLAB_ entries). A library a
    third-party CMake module found and nothing uses (FindCUDAToolkit's OpenCL) is not taken."""
    files = {}
    for name in ("build.ninja", os.path.join("CMakeFiles", "rules.ninja")):
        record = os.path.join(build, name)
        if os.path.exists(record):
            with open(record, encoding="utf-8", errors="replace") as text:
                for path in system_paths_in(text.read()):
                    files.setdefault(path, name)
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache):
        with open(cache, encoding="utf-8", errors="replace") as text:
            own = "\n".join(line for line in text if line.startswith("OOMLAB_"))
        for path in system_paths_in(own):
            files.setdefault(path, "CMakeCache.txt")
    return files


def header_files(build):
    """System headers in ninja's dependency records of every compilation."""
    deps = run(["ninja", "-C", build, "-t", "deps"])
    return {line.strip(): "ninja's dependency records" for line in deps.stdout.splitlines()
            if line.startswith("    ") and line.strip().startswith(SYSTEM_PREFIXES)}


def built_elf_files(build):
    for folder, _, names in os.walk(build):
        if "CMakeFiles" in folder.split(os.sep):
            continue
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            if not (os.access(path, os.X_OK) or ".so" in name):
                continue
            with open(path, "rb") as head:
                if head.read(4) == b"\x7fELF":
                    yield path


def linked_libraries(build):
    """Every shared library ldd resolves for the programs and libraries built."""
    files = {}
    for binary in built_elf_files(build):
        for line in run(["ldd", binary]).stdout.splitlines():
            match = re.search(r"=> (/\S+)", line) or re.match(r"\s*(/\S+)", line)
            if match and match.group(1).startswith(SYSTEM_PREFIXES):
                files.setdefault(match.group(1), f"ldd {os.path.relpath(binary, build)}")
    return files


def program_files(programs):
    files, missing = {}, []
    for program in programs:
        path = program if os.path.isabs(program) else shutil.which(
            program, path=os.environ.get("PATH", os.defpath))
        if path and os.path.exists(path):
            files[path] = f"the program {program}"
        else:
            missing.append(program)
    return files, missing


def python_module_files(modules):
    files, missing = {}, []
    if not modules:
        return files, missing
    python = "/usr/bin/python3"
    script = ("import importlib, sys\nfor name in sys.argv[1:]:\n"
              "    try: print(name, getattr(importlib.import_module(name), '__file__', None)"
              " or sys.executable)\n"
              "    except ImportError: print(name, None)\n")
    # A module built into the interpreter has no file of its own: the interpreter is its file.
    found = run([python, "-c", script] + modules) if os.path.exists(python) else None
    lines = found.stdout.splitlines() if found else []
    located = dict(line.split(" ", 1) for line in lines)
    for module in modules:
        path = located.get(module, "None")
        if path == "None":
            missing.append(module)
        else:
            files[path] = f"the Python module {module}"
    return files, missing


def cuda_toolkit_roots():
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        return []
    return [os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) + "/", "/usr/local/cuda/"]


def python_env_roots():
    cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
    return [os.path.join(cache, "oomlab") + "/"]


def check_pins(problems):
    """Each installed project environment holds exactly its pins (pip and setuptools, which
    Debian's venv brings, are in neither, unless the pins name a version of their own: torch
    2.15 needs a newer setuptools)."""
    debians_own = ("pip==", "setuptools==")
    for start, pins_of in PYTHON_ENVS.items():
        for env in glob.glob(os.path.join(python_env_roots()[0], start + "*")):
            python = os.path.join(env, "bin", "python")
            pins_file = pins_of(os.path.basename(env))
            # A version no longer pinned is an older checkout's: nothing here installs it.
            if not os.path.exists(python) or not os.path.exists(os.path.join(SOURCE, pins_file)):
                continue
            with open(os.path.join(SOURCE, pins_file), encoding="utf-8") as pins:
                wanted = {line.strip().lower() for line in pins
                          if line.strip() and not line.startswith("#")}
            frozen = run([python, "-m", "pip", "freeze", "--all", "--disable-pip-version-check"])
            have = {line.strip().lower() for line in frozen.stdout.splitlines()
                    if line.strip() and (not line.startswith(debians_own)
                                         or line.strip().lower() in wanted)}
            if have != wanted:
                problems.append(f"{env}: not exactly {pins_file} (not pinned: "
                                f"{', '.join(sorted(have - wanted)) or 'none'}; pinned, not "
                                f"installed: {', '.join(sorted(wanted - have)) or 'none'})")


def check_mode(mode, lists, owners, base):
    closure = installed_on_a_fresh_machine(words_of(lists, mode, "packages"), base)
    outside_roots = python_env_roots() + (cuda_toolkit_roots() if mode == "cuda-test" else [])
    files = {}
    build = os.path.join(SOURCE, BUILD_FOLDERS[mode]) if mode in BUILD_FOLDERS else None
    built = build is not None and os.path.exists(os.path.join(build, "build.ninja"))
    if built:
        files.update(configured_files(build))
        files.update(header_files(build))
        files.update(linked_libraries(build))
    programs, missing = program_files(words_of(lists, mode, "programs"))
    modules, missing_modules = python_module_files(words_of(lists, mode, "python3-modules"))
    files.update(programs)
    files.update(modules)

    failures = [f"  {name}: not found, although {mode}'s tests start it" for name in missing]
    failures += [f"  Python module {name}: /usr/bin/python3 cannot import it, although "
                 f"{mode}'s tests do" for name in missing_modules]
    for path, where in sorted(files.items()):
        if any(os.path.realpath(path).startswith(root) or path.startswith(root)
               for root in outside_roots):
            continue
        problem = unaccounted(path, owners, closure)
        if problem is None:
            continue
        file, held_by = problem
        via = "" if file == path else f" (through {file})"
        if held_by:
            shared = " (or to 'build packages:', if every mode that builds needs it)" \
                if mode in BUILDING_MODES else ""
            failures.append(f"  {path}{via} ({where}) is from {', '.join(sorted(held_by))}: add "
                            f"it to '{mode} packages:' in scripts/debian-packages{shared}")
        else:
            failures.append(f"  {path}{via} ({where}) belongs to no Debian package")
    what = f"{len(files)} files"
    if build is not None and not built:
        what += f" (no {BUILD_FOLDERS[mode]}/ configured yet: programs and modules only)"
    return failures, what


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modes", nargs="+", metavar="MODE")
    arguments = parser.parse_args()
    lists = read_lists()
    owners = file_owners()
    base = fresh_machine_status()
    failed = False
    for mode in arguments.modes:
        failures, what = check_mode(mode, lists, owners, base)
        if failures:
            failed = True
            print(f"deps-check {mode}: {len(failures)} of {what} not accounted for by its "
                  f"package list:")
            print("\n".join(failures))
        else:
            print(f"deps-check {mode}: {what}, each from a package of its list, what they "
                  f"depend on, or Debian's required set")
    problems = []
    check_pins(problems)
    for problem in problems:
        failed = True
        print(f"deps-check: {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
