# Sourced by the scripts that install a Python package set from the package index into a
# virtual environment of OOM Lab's own (torch_env.sh, tracker_env.sh).
#
#   ensure_python_env DIR CHECK WHAT PACKAGE...
#
# makes DIR a virtual environment of Debian's own Python with PACKAGE... unless its python
# already runs the Python code CHECK successfully (exit 0). The environment is the cache: one
# already complete is left as it is. WHAT names the set in messages.

ensure_python_env() {
    local env_dir="$1" check="$2" what="$3"
    shift 3
    local python="$env_dir/bin/python"
    if [[ -x "$python" ]] && "$python" -c "$check" 2>/dev/null; then
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
    "$env_dir/bin/pip" install --quiet --disable-pip-version-check "$@" >&2
    "$python" -c "$check" || { echo "$what did not import from $env_dir" >&2; exit 1; }
}
