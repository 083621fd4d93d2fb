#!/usr/bin/env python3
"""Each engine component calls the functions it defines itself, bound when it was linked
(-Bsymbolic-functions in oomlab_component), not through its procedure linkage table, where the
dynamic loader would bind them to the first copy a process holds: a program's, unoptimised in a
test program. Fails naming each library and a few of the functions it would take from elsewhere.

    own_functions_test.py LIBRARY...
"""

import re
import subprocess
import sys


def readelf(*arguments):
    return subprocess.run(["readelf", "-W", *arguments], capture_output=True, text=True,
                          check=True).stdout


def defined_functions(library):
    """The functions the library exports: FUNC symbols with a section, global or weak."""
    names = set()
    for line in readelf("--dyn-syms", library).splitlines():
        fields = line.split()
        if (len(fields) >= 8 and fields[3] == "FUNC" and fields[4] in ("GLOBAL", "WEAK")
                and fields[6] != "UND"):
            names.add(fields[7].split("@")[0])
    return names


def called_through_the_table(library):
    """The symbols of the library's procedure linkage table: bound at run time."""
    return {match.group(1) for match in
            re.finditer(r"R_\w+_JUMP_SLOT\s+\S+\s+([^\s@]+)", readelf("-r", library))}


def main(libraries):
    if not libraries:
        sys.exit("usage: own_functions_test.py LIBRARY...")
    failed = False
    for library in libraries:
        own = defined_functions(library) & called_through_the_table(library)
        if own:
            failed = True
            print(f"{library}: calls {len(own)} of its own functions through its linkage table,"
                  f" e.g. {', '.join(sorted(own)[:3])}: link it with -Bsymbolic-functions")
    print(f"{len(libraries)} libraries read")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
