"""An ACP client built on the official Python SDK (PyPI `agent-client-protocol`) that drives
`cairn acp` through one scenario and prints what it saw as one JSON object on stdout.

Usage: client.py CAIRN_BIN WORKSPACE SCENARIO [ARG]
  turn [allow|reject]   a prompt in a new session (permissions answered as told, else cancelled)
  permission allow|reject  a prompt in agent mode whose write asks for permission
  cancel                a prompt cancelled after its first text
  hold                  a permission never answered: another session is made meanwhile, then a
                        cancel ends the prompt
  load SESSION_ID       a stored session loaded (its history replayed)
  mcp                   a prompt in a session given a real MCP server (mcp-server-time, from
                        PyPI, next to this interpreter); its permission allowed
  files [fail|stale]    a prompt in agent mode from a client that offers fs/read_text_file and
                        fs/write_text_file and holds notes.txt with unsaved text; writes land
                        in its buffers, not on disk (with `fail`, every write fails; with
                        `stale`, the user types in notes.txt each time it is read)
  commands              a session given server-everything (npm, on PATH): its commands awaited,
                        a prompt `/args-prompt city=Paris`, an unknown command and one missing
                        its argument (their errors kept), then the session loaded again
The agent process inherits this process's environment (the test sets it up).
"""

import asyncio
import json
import os
import shutil
import sys

import acp
from acp import RequestError, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    McpServerStdio,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class Client:
    """The client callbacks: permissions answered as told, updates collected."""

    def __init__(self, answer, buffers=None, fail_writes=False, typing=False):
        self.answer = answer
        self.updates = []
        self.permissions = []
        # The editor's buffers by absolute path (unsaved text); other files are read from disk.
        self.buffers = buffers or {}
        self.fail_writes = fail_writes
        self.typing = typing
        self.reads = []
        self.writes = []
        self.first_text = asyncio.Event()
        self.asked = asyncio.Event()
        self.commands = 0
        self.command_names = set()
        self.commands_changed = asyncio.Event()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append(
            {"sessionId": session_id, "toolCall": dump(tool_call), "options": [dump(o) for o in options]}
        )
        self.asked.set()
        if self.answer == "hold":
            await asyncio.Event().wait()
        wanted = {"allow": "allow_once", "reject": "reject_once"}.get(self.answer)
        for option in options:
            if option.kind == wanted:
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
                )
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(dump(update))
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.first_text.set()
        if getattr(update, "session_update", None) == "available_commands_update":
            self.commands += 1
            self.command_names = {c.name for c in update.available_commands}
            self.commands_changed.set()

    async def wait_commands(self, count, name=None):
        """Waits (20 s at most for each) until `count` commands updates have come and, when
        `name` is given, the latest lists it: on a loaded machine the client's MCP server may
        still be starting when the first list is sent, as a user may see it appear late."""
        while self.commands < count or (name and name not in self.command_names):
            self.commands_changed.clear()
            await asyncio.wait_for(self.commands_changed.wait(), 20)

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.reads.append(path)
        if path in self.buffers:
            content = self.buffers[path]
            if self.typing:
                self.buffers[path] = content + "typed\n"
            return ReadTextFileResponse(content=content)
        try:
            with open(path, encoding="utf-8") as f:
                return ReadTextFileResponse(content=f.read())
        except OSError as e:
            raise RequestError.internal_error({"path": path, "reason": str(e)})

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.writes.append({"sessionId": session_id, "path": path, "content": content})
        if self.fail_writes:
            raise RequestError.internal_error({"reason": "the buffer is read-only"})
        self.buffers[path] = content
        return WriteTextFileResponse()

    def on_connect(self, conn):
        pass


async def main():
    cairn, workspace, scenario = sys.argv[1:4]
    arg = sys.argv[4] if len(sys.argv) > 4 else None
    answers = {"hold": "hold", "mcp": "allow", "files": "allow", "turn": arg, "permission": arg}
    capabilities = None
    buffers = {}
    if scenario == "files":
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
        )
        notes = os.path.join(os.path.realpath(workspace), "notes.txt")
        buffers[notes] = "unsaved text in the editor\n"
    client = Client(answers.get(scenario), buffers, fail_writes=arg == "fail", typing=arg == "stale")
    out = {}
    async with spawn_agent_process(client, cairn, "acp", env=dict(os.environ)) as (conn, _proc):
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities
        )
        out["initialize"] = dump(init)
        if scenario == "load":
            loaded = await conn.load_session(cwd=workspace, session_id=arg, mcp_servers=[])
            out["load"] = dump(loaded)
            out["updates"] = client.updates
            print(json.dumps(out))
            return
        servers = []
        if scenario == "mcp":
            time = os.path.join(os.path.dirname(sys.executable), "mcp-server-time")
            servers = [McpServerStdio(name="time", command=time, args=[], env=[])]
        if scenario == "commands":
            everything = shutil.which("mcp-server-everything")
            servers = [McpServerStdio(name="everything", command=everything, args=["stdio"], env=[])]
        session = await conn.new_session(cwd=workspace, mcp_servers=servers)
        out["session"] = dump(session)
        sid = session.session_id
        if scenario == "files":
            await conn.set_session_mode(session_id=sid, mode_id="agent")
            reply = await conn.prompt(session_id=sid, prompt=[text_block("fix notes.txt")])
            out["reads"] = client.reads
            out["writes"] = client.writes
            out["buffers"] = client.buffers
        elif scenario in ("turn", "mcp"):
            reply = await conn.prompt(session_id=sid, prompt=[text_block("what is in notes.txt?")])
        elif scenario == "permission":
            await conn.set_session_mode(session_id=sid, mode_id="agent")
            reply = await conn.prompt(session_id=sid, prompt=[text_block("write out.txt")])
        elif scenario == "cancel":
            running = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("think")]))
            await asyncio.wait_for(client.first_text.wait(), 20)
            await conn.cancel(session_id=sid)
            reply = await asyncio.wait_for(running, 20)
        elif scenario == "hold":
            await conn.set_session_mode(session_id=sid, mode_id="agent")
            running = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("write out.txt")]))
            await asyncio.wait_for(client.asked.wait(), 20)
            other = await asyncio.wait_for(conn.new_session(cwd=workspace, mcp_servers=[]), 20)
            out["other"] = dump(other)
            await conn.cancel(session_id=sid)
            reply = await asyncio.wait_for(running, 20)
        elif scenario == "commands":
            await client.wait_commands(1, "args-prompt")
            seen = client.commands
            reply = await conn.prompt(session_id=sid, prompt=[text_block("/args-prompt city=Paris")])
            out["errors"] = []
            for text in ["/nope x=1", "/args-prompt state=Texas"]:
                try:
                    await conn.prompt(session_id=sid, prompt=[text_block(text)])
                    out["errors"].append(None)
                except RequestError as e:
                    out["errors"].append({"code": e.code, "message": str(e), "data": e.data})
            out["load"] = dump(await conn.load_session(cwd=workspace, session_id=sid, mcp_servers=servers))
            await client.wait_commands(seen + 1, "args-prompt")
        else:
            raise SystemExit(f"unknown scenario {scenario}")
        out["prompt"] = dump(reply)
        out["updates"] = client.updates
        out["permissions"] = client.permissions
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
