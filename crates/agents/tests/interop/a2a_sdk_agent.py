"""A small agent written with `a2a-sdk`'s server (1.3), for our A2A client tool to call.

    a2a_sdk_agent.py PORT

Answers every message with "python agent says: MESSAGE IN CAPITALS". Prints its URL once it
listens; runs until killed (tests/cli_interop.rs stops it by its pid).
"""

import socket
import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from starlette.applications import Starlette


class Shouter(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if not context.current_task:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        text = context.get_user_input()
        await updater.add_artifact([Part(text=f"python agent says: {text.upper()}")], name="answer")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def main():
    port = int(sys.argv[1])
    url = f"http://127.0.0.1:{port}/"
    card = AgentCard(
        name="shouter",
        description="Repeats what it is told, in capitals",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="shout", name="shout", description="Shouts", tags=["test"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Shouter(), task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/"))
    # Listen before printing the URL: the test calls the agent as soon as it reads the line
    # (connections wait in the backlog until uvicorn accepts them).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    print(url, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


main()
