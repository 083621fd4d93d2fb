"""`mlflow server ARGUMENTS...` in one process, for the tests' MLflow servers.

MLflow's own command line reads the arguments, prepares the store and sets the server's
environment, as `mlflow server` does; the uvicorn command it would then start as a second Python
process (which imports MLflow again: half the 5 s of CPU a server took to answer) runs here
instead, with the same arguments and environment. Stopped by SIGTERM, as uvicorn is.

It replaces `mlflow.server._exec_cmd`, which is MLflow's own and private: a version other than
the one scripts/pins/trackers.txt pins may start its server otherwise, and this script then
stops with what MLflow asked for, or fails to import it.

    python mlflow_server.py --host 127.0.0.1 --port PORT --backend-store-uri URI ...
"""

import os
import runpy
import sys

import mlflow.server
from mlflow.cli import cli


def serve_here(command, *, extra_env=None, **_):
    """What MLflow would start (`python -m uvicorn OPTIONS APP`), run in this process."""
    if command[1:3] != ["-m", "uvicorn"]:
        sys.exit(f"mlflow_server.py serves with uvicorn only; MLflow asked for {command}")
    os.environ.update(extra_env or {})
    sys.argv = ["uvicorn", *command[3:]]
    runpy.run_module("uvicorn", run_name="__main__", alter_sys=True)
    sys.exit(0)


if __name__ == "__main__":
    mlflow.server._exec_cmd = serve_here  # pylint: disable=protected-access
    cli(["server", *sys.argv[1:]])
