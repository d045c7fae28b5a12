"""The Python MCP SDK's client against `agents mcp serve` (run by tests/cli_interop.rs).

    mcp_client.py stdio AGENTS DEFINITION DB   # spawns `AGENTS mcp serve --definition ... --db ...`
    mcp_client.py http URL TOKEN               # a running `agents mcp serve --addr ...`

The served agent's model is the test's mock: it answers "turn N: PROMPT" (N counts the user
messages it was sent), waits 30 s before answering a prompt containing "slow", and asks to
write a file (a call that needs approval) for a prompt containing "write". Prints one line
per check; exits non-zero on the first failure.
"""

import sys

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "text", None))


def connect():
    mode = sys.argv[1]
    if mode == "stdio":
        agents, definition, db = sys.argv[2:5]
        return Client(StdioServerParameters(
            command=agents,
            args=["mcp", "serve", "--definition", definition, "--db", db],
        ))
    url, token = sys.argv[2:4]
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http))


async def main():
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        check({"ask", "approve", "reject"} <= set(tools), f"tools listed: {sorted(tools)}")
        check(tools["ask"].input_schema.get("required") == ["prompt"], "ask requires prompt")

        progress = []

        async def on_progress(value, total, message):
            progress.append(message)

        first = await client.call_tool("ask", {"prompt": "hello there"}, progress_callback=on_progress)
        check(not first.is_error, f"ask answered: {text_of(first)!r}")
        check("turn 1: hello there" in text_of(first), "the answer is the model's")
        session = first.structured_content["session"]
        check(first.structured_content["status"] == "answered", "structured status answered")
        check(any(m and m.startswith("step") for m in progress), f"progress notifications: {progress}")

        second = await client.call_tool("ask", {"prompt": "and again", "session": session})
        check("turn 2: and again" in text_of(second), f"a two-turn session: {text_of(second)!r}")

        # Cancel a slow turn from the client; the conversation stays usable.
        with anyio.move_on_after(2):
            await client.call_tool("ask", {"prompt": "slow one", "session": session})
            check(False, "the slow call should have been cancelled")
        print("ok: cancelled the slow call", flush=True)
        third = None
        for _ in range(100):
            third = await client.call_tool("ask", {"prompt": "after cancel", "session": session})
            if "running a turn already" not in text_of(third):
                break
            await anyio.sleep(0.2)
        check("after cancel" in text_of(third) and not third.is_error,
              f"the session goes on after the cancel: {text_of(third)!r}")

        # A call that needs approval: the result lists it with its fingerprint.
        waiting = await client.call_tool("ask", {"prompt": "please write the note"})
        structured = waiting.structured_content
        check(structured["status"] == "waiting", f"ask reports the waiting call: {text_of(waiting)!r}")
        call = structured["calls"][0]
        check(len(call["fingerprint"]) == 12 and call["fingerprint"] in text_of(waiting),
              "the fingerprint is shown")
        stale = await client.call_tool("approve", {
            "session": structured["session"], "call_id": call["call_id"], "fingerprint": "000000000000"})
        check(stale.is_error and "changed" in text_of(stale), f"a wrong fingerprint is refused: {text_of(stale)!r}")
        approved = await client.call_tool("approve", {
            "session": structured["session"], "call_id": call["call_id"], "fingerprint": call["fingerprint"]})
        check(not approved.is_error and "note written" in text_of(approved),
              f"approve runs the call and the turn goes on: {text_of(approved)!r}")
    print("all checks passed", flush=True)


anyio.run(main)
