"""The `a2a-sdk` Python client (1.3) against `agents a2a serve` (run by tests/cli_interop.rs).

    a2a_client.py URL TOKEN

The served agent's model is the test's mock (see mcp_client.py). Sends, streams, gets and
cancels tasks, and approves a waiting call; prints one line per check, exits non-zero on the
first failure.
"""

import sys
import uuid

import anyio
import httpx
from google.protobuf import struct_pb2
from a2a.client import ClientConfig, create_client
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskState,
)


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def message(text=None, task_id=None, data=None):
    msg = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER)
    if text is not None:
        msg.parts.append(Part(text=text))
    if data is not None:
        value = struct_pb2.Value()
        value.struct_value.update(data)
        msg.parts.append(Part(data=value))
    if task_id:
        msg.task_id = task_id
    return SendMessageRequest(message=msg)


def texts(task):
    out = [p.text for a in task.artifacts for p in a.parts if p.text]
    out += [p.text for p in task.status.message.parts if p.text]
    return "\n".join(out)


async def last_task(client, request):
    task = None
    async for event in client.send_message(request):
        if event.HasField("task"):
            task = event.task
    return task


async def main():
    url, token = sys.argv[1], sys.argv[2]
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    client = await create_client(url, ClientConfig(httpx_client=http, streaming=False))
    streaming = await create_client(url, ClientConfig(httpx_client=http, streaming=True))
    polling = await create_client(url, ClientConfig(httpx_client=http, streaming=False, polling=True))

    task = await last_task(client, message("hello there"))
    check(task.status.state == TaskState.TASK_STATE_COMPLETED, f"send: completed ({texts(task)!r})")
    check("turn 1: hello there" in texts(task), "send: the answer is the model's")
    second = await last_task(client, message("and again", task_id=task.id))
    check("turn 2: and again" in texts(second), f"a task continues its conversation: {texts(second)!r}")

    got = await client.get_task(GetTaskRequest(id=task.id))
    check(got.status.state == TaskState.TASK_STATE_COMPLETED and "turn 2" in texts(got), "get: the task as it stands")

    kinds, pieces, final = [], [], None
    async for event in streaming.send_message(message("stream this please")):
        kind = event.WhichOneof("payload")
        kinds.append(kind)
        if kind == "artifact_update":
            pieces.extend(p.text for p in event.artifact_update.artifact.parts)
        if kind == "status_update":
            final = event.status_update.status.state
    check(kinds[0] == "task" and "artifact_update" in kinds, f"stream: events {kinds}")
    check("turn 1: stream this please" in "".join(pieces), f"stream: the answer arrives in pieces {pieces}")
    check(final == TaskState.TASK_STATE_COMPLETED, "stream: ends completed")

    working = await last_task(polling, message("slow one", task_id=task.id))
    check(working.status.state == TaskState.TASK_STATE_WORKING, "send (return immediately): working")
    got = await client.get_task(GetTaskRequest(id=task.id))
    check(got.status.state == TaskState.TASK_STATE_WORKING, "get: working while it runs")
    cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))
    check(cancelled.status.state == TaskState.TASK_STATE_CANCELED, f"cancel: canceled ({texts(cancelled)!r})")
    after = await last_task(client, message("after cancel", task_id=task.id))
    check("after cancel" in texts(after) and after.status.state == TaskState.TASK_STATE_COMPLETED,
          f"the conversation goes on after the cancel: {texts(after)!r}")

    waiting = await last_task(client, message("please write the note"))
    check(waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, "a call that needs approval: input required")
    calls = None
    for part in waiting.status.message.parts:
        if part.HasField("data"):
            calls = part.data.struct_value["pendingCalls"]
    check(calls is not None and len(calls) == 1, "the waiting call comes as data")
    call = calls[0]
    done = await last_task(client, message(task_id=waiting.id, data={
        "decision": "approve", "call_id": call["call_id"], "fingerprint": call["fingerprint"]}))
    check(done.status.state == TaskState.TASK_STATE_COMPLETED and "note written" in texts(done),
          f"approving it completes the task: {texts(done)!r}")

    try:
        await client.get_task(GetTaskRequest(id="no-such-task"))
        check(False, "get of an unknown task fails")
    except Exception as error:  # the SDK's TaskNotFoundError
        check(type(error).__name__ == "TaskNotFoundError", f"unknown task: {type(error).__name__}")
    print("all checks passed", flush=True)


anyio.run(main)
