"""The Python side of `cairn bench mcp`: the official MCP Python SDK (PyPI `mcp`) calls the
`echo` tool of @modelcontextprotocol/server-everything N times, after a short warm-up, and
prints one JSON line: {"p50_ms", "p99_ms", "mean_ms", "calls", "sdk_version"}.

    python3 mcp_python_client.py stdio --command /path/to/mcp-server-everything --calls 1000
    python3 mcp_python_client.py http --url http://127.0.0.1:3001/mcp --calls 1000

cairn runs it as a subprocess (`python -c`), so it must stay one self-contained file. It
measures exactly what cairn's side measures: the time from sending `tools/call` to having its
result, one call at a time, on a session that is already initialized.
"""

import argparse
import asyncio
import json
import math
import os
import sys
import time
from importlib import metadata

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

try:  # the SDK renamed the streamable HTTP client in 2.x
    from mcp.client.streamable_http import streamable_http_client as http_client
except ImportError:  # 1.x
    from mcp.client.streamable_http import streamablehttp_client as http_client


def percentile(sorted_ms, p):
    """Nearest-rank percentile, the same definition the Rust side uses."""
    rank = max(1, math.ceil(p * len(sorted_ms)))
    return sorted_ms[rank - 1]


def failed(result):
    # 2.x names the field `is_error`, 1.x `isError`.
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


async def measure(session, calls, warmup):
    await session.initialize()
    for i in range(warmup):
        result = await session.call_tool("echo", {"message": f"warm-up {i}"})
        if failed(result):
            raise RuntimeError(f"echo failed: {result}")
    samples = []
    for i in range(calls):
        start = time.perf_counter()
        result = await session.call_tool("echo", {"message": f"bench {i}"})
        samples.append((time.perf_counter() - start) * 1000.0)
        if failed(result):
            raise RuntimeError(f"echo failed: {result}")
    samples.sort()
    return {
        "p50_ms": percentile(samples, 0.50),
        "p99_ms": percentile(samples, 0.99),
        "mean_ms": sum(samples) / len(samples),
        "calls": len(samples),
        "sdk_version": metadata.version("mcp"),
    }


async def run(args):
    if args.transport == "stdio":
        params = StdioServerParameters(command=args.command, args=["stdio"])
        # The server's own chatter on stderr ("Starting default (STDIO) server...") is noise
        # here; errors reach cairn through this script's exit status and message.
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as streams:
                # 1.x yields (read, write), so does 2.x; index rather than unpack to be safe.
                async with ClientSession(streams[0], streams[1]) as session:
                    return await measure(session, args.calls, args.warmup)
    # 1.x yields (read, write, get_session_id), 2.x (read, write).
    async with http_client(args.url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            return await measure(session, args.calls, args.warmup)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--command", help="the server-everything executable (stdio)")
    parser.add_argument("--url", help="the server's streamable HTTP endpoint (http)")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    if args.transport == "stdio" and not args.command:
        parser.error("stdio needs --command")
    if args.transport == "http" and not args.url:
        parser.error("http needs --url")
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # one line on stderr for cairn to show, not a traceback
        print(f"mcp_python_client: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
