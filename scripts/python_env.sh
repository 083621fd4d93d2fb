# Sourced by the scripts that install a Python package set from the package index into a
# virtual environment of OOM Lab's own (torch_env.sh, tracker_env.sh).
#
#   ensure_python_env DIR CHECK WHAT PINS
#
# makes DIR a virtual environment of Debian's own Python holding exactly the packages of the
# file PINS (scripts/pins/*.txt: every package at one version, what they depend on included,
# installed without resolving anything else), unless DIR was made from the same PINS and its
# python runs the Python code CHECK successfully (exit 0). The environment is the cache: one
# already complete is left as it is. WHAT names the set in messages.

ensure_python_env() {
    local env_dir="$1" check="$2" what="$3" pins="$4"
    local python="$env_dir/bin/python"
    if [[ -x "$python" ]] && cmp -s "$pins" "$env_dir/oomlab-pins.txt" &&
        "$python" -c "$check" 2>/dev/null; then
        return 0
    fi
    # Debian's own Python (python3-venv), never a python3 that PATH may put first.
    if ! /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null; then
        echo "$(basename "$0") needs Debian's python3-venv (apt-get install python3-venv)" >&2
        exit 2
    fi
    # Only an environment made here (or nothing) is replaced, never another folder.
    if [[ -e "$env_dir" && ! -f "$env_dir/pyvenv.cfg" && -n "$(ls -A "$env_dir" 2>/dev/null)" ]]; then
        echo "$env_dir exists and is not a Python virtual environment; point the script at a" \
             "new folder" >&2
        exit 2
    fi
    echo "Installing $what into $env_dir" >&2
    rm -rf "$env_dir"
    mkdir -p "$(dirname "$env_dir")"
    /usr/bin/python3 -m venv "$env_dir"
    "$env_dir/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$pins" >&2
    # The pins hold every dependency: pip check says if one is missing or at a wrong version.
    "$env_dir/bin/pip" check --disable-pip-version-check >&2 ||
        { echo "$pins does not hold a consistent set: regenerate it (see its header)" >&2; exit 1; }
    "$python" -c "$check" || { echo "$what did not import from $env_dir" >&2; exit 1; }
    cp "$pins" "$env_dir/oomlab-pins.txt"
}

# The whole command line of an environment script that takes no other option (tracker_env.sh,
# mcp_env.sh): --folder prints the folder and installs nothing; no argument makes the
# environment where it is missing and prints its folder.
#
#   python_env_main DIR CHECK WHAT PINS "$@"
python_env_main() {
    local env_dir="$1" check="$2" what="$3" pins="$4"
    shift 4
    if [[ "${1:-}" == --folder ]]; then
        echo "$env_dir"
        exit 0
    fi
    [[ -z "${1:-}" ]] || { echo "usage: $0 [--folder]" >&2; exit 2; }
    ensure_python_env "$env_dir" "$check" "$what" "$pins"
    # A script may finish its environment (once it is there) with a python_env_made DIR of its own.
    if declare -F python_env_made >/dev/null; then
        python_env_made "$env_dir" >&2
    fi
    echo "$env_dir"
}
