"""The Python MCP SDK's client, with an elicitation callback, against `agents mcp serve`
(run by tests/cli_interop.rs).

    mcp_elicitation.py NOTE stdio AGENTS DEFINITION DB   # spawns `AGENTS mcp serve ...`
    mcp_elicitation.py NOTE http URL TOKEN               # a running `agents mcp serve --addr ...`

NOTE is the file the served agent's `write_file` call writes (a call that needs approval;
the test's mock model asks for it on a prompt containing "write", and answers "note
written: RESULT" after the tool's result). For each way of connecting ("legacy": the
`initialize` handshake, where the server sends `elicitation/create` requests; "auto": the
newest protocol the server speaks, where `ask` answers with an InputRequiredResult and the
SDK retries it with the answers), the person behind the callback declines, cancels, then
approves. Prints one line per check; exits non-zero on the first failure.
"""

import os
import sys

import anyio
import httpx2
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client

NOTE = sys.argv[1]


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "text", None))


class Person:
    """Answers each elicitation as told, and remembers what it was shown."""

    def __init__(self):
        self.answer = "cancel"
        self.shown = []

    async def __call__(self, context, params):
        self.shown.append(params)
        if self.answer == "approve":
            return types.ElicitResult(action="accept", content={"approve": True})
        if self.answer == "reject":
            return types.ElicitResult(action="accept", content={"approve": False, "reason": "not today"})
        return types.ElicitResult(action=self.answer)


def connect(mode, person):
    transport = sys.argv[2]
    if transport == "stdio":
        agents, definition, db = sys.argv[3:6]
        server = StdioServerParameters(
            command=agents,
            args=["mcp", "serve", "--definition", definition, "--db", db],
        )
    else:
        url, token = sys.argv[3:5]
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        server = streamable_http_client(url, http_client=http)
    return Client(server, mode=mode, elicitation_callback=person)


async def run(mode):
    person = Person()
    async with connect(mode, person) as client:
        print(f"{mode}: protocol {client.protocol_version}", flush=True)
        progress = []

        async def on_progress(value, total, message):
            progress.append(message)

        # Declined: nothing is written, the model reads the rejection, `ask` answers.
        person.answer = "decline"
        declined = await client.call_tool("ask", {"prompt": "please write the note"}, progress_callback=on_progress)
        check(len(person.shown) == 1, f"{mode}: asked once: {len(person.shown)}")
        params = person.shown[0]
        check("write_file" in params.message and "note.txt" in params.message,
              f"{mode}: the question shows the tool and its arguments: {params.message!r}")
        schema = params.requested_schema
        schema = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
        check(schema["properties"]["approve"]["type"] == "boolean" and schema.get("required") == ["approve"],
              f"{mode}: the form asks for a boolean approve: {schema}")
        check(declined.structured_content["status"] == "answered" and "rejected" in text_of(declined),
              f"{mode}: a declined call is rejected and the turn answers: {text_of(declined)!r}")
        check(not os.path.exists(NOTE), f"{mode}: a declined call writes nothing")
        check(any(m and m.startswith("step") for m in progress), f"{mode}: progress notifications: {progress}")

        # Rejected with a reason, in the form: the model reads the reason.
        person.answer = "reject"
        rejected = await client.call_tool("ask", {"prompt": "please write the note"})
        check("not today" in text_of(rejected) and not os.path.exists(NOTE),
              f"{mode}: approve=false rejects with the reason: {text_of(rejected)!r}")

        # Cancelled: nothing is decided; the result lists the waiting call as before.
        person.answer = "cancel"
        waiting = await client.call_tool("ask", {"prompt": "please write the note"})
        structured = waiting.structured_content
        check(structured["status"] == "waiting", f"{mode}: a cancelled question leaves the call waiting: {text_of(waiting)!r}")
        call = structured["calls"][0]
        fingerprint = call["fingerprint"]
        check(fingerprint in person.shown[-1].message, f"{mode}: the question showed the fingerprint {fingerprint}")
        check(not os.path.exists(NOTE), f"{mode}: a cancelled question writes nothing")
        rejected = await client.call_tool("reject", {
            "session": structured["session"], "call_id": call["call_id"], "fingerprint": fingerprint})
        check(not rejected.is_error, f"{mode}: the waiting call can still be rejected with the tool")

        # Approved: the call runs and the same `ask` returns the final answer.
        person.answer = "approve"
        asked = len(person.shown)
        approved = await client.call_tool("ask", {"prompt": "please write the note"})
        check(len(person.shown) == asked + 1, f"{mode}: asked once more")
        check(not approved.is_error and approved.structured_content["status"] == "answered"
              and "note written" in text_of(approved),
              f"{mode}: an approved call runs and `ask` returns the answer: {text_of(approved)!r}")
        with open(NOTE) as note:
            check(note.read() == "hi", f"{mode}: the approved call wrote the file")
        os.remove(NOTE)


async def main():
    for mode in ["legacy", "auto"]:
        await run(mode)
    print("all checks passed", flush=True)


anyio.run(main)
