"""`oomlab-cli mcp` driven by the reference client of the Model Context Protocol (the mcp
package's ClientSession over stdio): the handshake, every tool listed with its schema, each tool
called on real files and answering the figures of its command's --json, and bad calls answered
with MCP errors while the server goes on."""

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

CLI = os.environ["OOMLAB_CLI"]
WILD = os.path.join(os.path.dirname(__file__), "..", "data", "wild", "snapshots",
                    "bcrafton__assignment2-systems__memory_snapshot.pickle")
TOOLS = {"explain_oom", "snapshot_show", "snapshot_diff", "snapshot_sql", "snapshot_whatif",
         "estimate", "runs_list", "runs_show", "runs_diff"}
SQL = "SELECT kind, sum(size) AS bytes, count(*) AS blocks FROM at_peak GROUP BY kind ORDER BY 2 DESC"
MESSAGE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
           "total capacity of 79.15 GiB of which 1.50 GiB is free. Of the allocated memory "
           "70.00 GiB is allocated by PyTorch, and 5.00 GiB is reserved by PyTorch but "
           "unallocated.")


def cli_json(*arguments):
    ran = subprocess.run([CLI, *arguments, "--json"], capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(ran.stdout.splitlines()[-1])


class McpReferenceClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = os.path.realpath(tempfile.mkdtemp(prefix="oomlab-mcp-"))
        cls.addClassCleanup(shutil.rmtree, cls.folder, ignore_errors=True)
        cls.db = os.path.join(cls.folder, "runs.sqlite")
        cls.snapshots = []
        for batch in ("16", "64"):
            cls.snapshots.append(os.path.join(cls.folder, f"b{batch}.pickle"))
            subprocess.run([CLI, "run", "--db", cls.db, "--set", "train.max_steps=2", "--set",
                            f"train.batch_size={batch}", "--set",
                            f"debug.memory_snapshot={cls.snapshots[-1]}"],
                           capture_output=True, timeout=120, check=True)
        cls.wild = os.path.join(cls.folder, "wild.pickle")
        shutil.copy(WILD, cls.wild)

    def session(self, body, allow=True):
        """Runs `body(session, initialized)` against a server the client started."""
        async def run():
            server = StdioServerParameters(
                command=CLI, args=["mcp", *(["--allow", self.folder] if allow else [])])
            with open(os.devnull, "w") as quiet:
                async with stdio_client(server, errlog=quiet) as (read, write):
                    async with ClientSession(read, write) as session:
                        return await body(session, await session.initialize())
        return asyncio.run(asyncio.wait_for(run(), 120))

    def test_the_handshake_and_every_tool_with_its_schema(self):
        async def body(session, initialized):
            self.assertEqual(initialized.server_info.name, "oomlab")
            self.assertIsNotNone(initialized.capabilities.tools)
            self.assertIn("--allow", initialized.instructions)
            listed = await session.list_tools()
            self.assertEqual({tool.name for tool in listed.tools}, TOOLS)
            for tool in listed.tools:
                schema = tool.input_schema
                self.assertEqual(schema["type"], "object", tool.name)
                self.assertFalse(schema["additionalProperties"], tool.name)
                for name in schema["required"]:
                    self.assertIn(name, schema["properties"], tool.name)
                self.assertTrue(tool.description, tool.name)
        self.session(body)

    def test_each_tool_answers_the_figures_of_its_command(self):
        first, second = self.snapshots

        async def call(session, name, **arguments):
            result = await session.call_tool(name, arguments)
            self.assertFalse(result.is_error, f"{name}: {result.content[0].text}")
            # The text the assistant reads is the structured figures themselves.
            self.assertEqual(json.loads(result.content[0].text), result.structured_content)
            return result.structured_content

        async def body(session, _):
            return {
                "explain": await call(session, "explain_oom", message=MESSAGE),
                "show": await call(session, "snapshot_show", path=self.wild,
                                   device_memory="80GiB"),
                "diff": await call(session, "snapshot_diff", before=first, after=second),
                "sql": await call(session, "snapshot_sql", path=self.wild, query=SQL),
                "whatif": await call(session, "snapshot_whatif", path=self.wild,
                                     alloc_conf="expandable_segments:True"),
                "estimate": await call(session, "estimate", settings={
                    "train.batch_size": 64, "memory.precision": "bf16"}),
                "list": await call(session, "runs_list", database=self.db, limit=1),
                "show_run": await call(session, "runs_show", database=self.db, run=1),
                "diff_runs": await call(session, "runs_diff", database=self.db, a=1, b=2),
            }
        got = self.session(body)
        self.assertEqual(got["explain"], cli_json("explain", MESSAGE))
        self.assertEqual(got["explain"]["verdict"], "fragmentation")
        shown = cli_json("snapshot", "show", self.wild, "--device-memory", "80GiB")
        self.assertEqual(got["show"]["devices"], shown["devices"])
        self.assertEqual(got["show"]["headroom"], shown["headroom"])
        self.assertEqual(got["diff"], cli_json("snapshot", "diff", first, second))
        csv = subprocess.run([CLI, "snapshot", "sql", self.wild, SQL, "--csv"], capture_output=True,
                             text=True, timeout=120, check=True).stdout.splitlines()
        self.assertEqual(got["sql"]["columns"], csv[0].split(","))
        self.assertEqual([",".join(row) for row in got["sql"]["rows"]], csv[1:])
        self.assertFalse(got["sql"]["truncated"])
        self.assertEqual(got["whatif"], cli_json("snapshot", "whatif", self.wild, "--alloc-conf",
                                                 "expandable_segments:True"))
        estimated = cli_json("estimate", "--set", "train.batch_size=64", "--set",
                             "memory.precision=bf16")
        self.assertEqual(got["estimate"]["peak_bytes"], estimated["peak_bytes"])
        self.assertEqual(got["estimate"]["breakdown"], estimated["breakdown"])
        self.assertEqual(len(got["list"]["runs"]), 1)
        self.assertEqual(got["show_run"], cli_json("runs", "show", "1", "--db", self.db))
        self.assertEqual(got["diff_runs"], cli_json("runs", "diff", "1", "2", "--db", self.db))

    def test_bad_calls_are_mcp_errors_and_the_server_goes_on(self):
        outside = os.path.join(os.path.dirname(self.folder), "elsewhere.pickle")

        async def refused(session, name, arguments, code):
            with self.assertRaises(MCPError) as raised:
                await session.call_tool(name, arguments)
            self.assertEqual(raised.exception.code, code, raised.exception.message)
            return raised.exception.message

        async def tool_error(session, name, arguments):
            result = await session.call_tool(name, arguments)
            self.assertTrue(result.is_error, result)
            return result.content[0].text

        async def body(session, _):
            said = [
                await refused(session, "no_such_tool", {}, -32602),
                await refused(session, "snapshot_show", {"path": 7}, -32602),
                await refused(session, "runs_show", {"database": self.db}, -32602),
                await refused(session, "explain_oom", {"message": "x", "extra": 1}, -32602),
                await tool_error(session, "snapshot_show", {"path": outside}),
                await tool_error(session, "snapshot_show",
                                 {"path": os.path.join(self.folder, "missing.pickle")}),
                await tool_error(session, "explain_oom", {"message": "all is well"}),
                await tool_error(session, "estimate", {"settings": {"train.batchsize": 8}}),
                await tool_error(session, "runs_show", {"database": self.db, "run": 99}),
            ]
            still = await session.call_tool("explain_oom", {"message": MESSAGE})
            self.assertFalse(still.is_error)
            return said
        said = self.session(body)
        self.assertIn("no tool \"no_such_tool\"", said[0])
        self.assertIn("\"path\" is number, not a string", said[1])
        self.assertIn("\"run\" is required", said[2])
        self.assertIn("no argument \"extra\"", said[3])
        self.assertIn("outside the folders this server may read", said[4])
        self.assertIn("missing.pickle", said[5])
        self.assertIn("train.batch_size", said[7])  # the closest key
        self.assertIn("there is no run 99", said[8])

    def test_without_allow_no_file_is_read(self):
        async def body(session, _):
            return await session.call_tool("snapshot_show", {"path": self.wild})
        result = self.session(body, allow=False)
        self.assertTrue(result.is_error)
        self.assertIn("started without --allow", result.content[0].text)


if __name__ == "__main__":
    unittest.main()
