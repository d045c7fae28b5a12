"""Pydantic AI (PyPI `pydantic-ai-slim`) on the two-step script, see common.py.

The model is Pydantic AI's own `FunctionModel` answering from the script, no network.
"""

from __future__ import annotations

import asyncio
from importlib.metadata import version

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from common import ANSWER, PROMPT, ScriptError, bench, check_run, history_texts


class Script:
    """Zero latency: a `noop` tool call, then ANSWER, in a cycle; each response built afresh.

    Async, as the tool is: a sync function would run in a worker thread on every call.
    """

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        if self.calls % 2 == 1:
            return ModelResponse(
                parts=[ToolCallPart(tool_name="noop", args={}, tool_call_id="call_1")]
            )
        return ModelResponse(parts=[TextPart(ANSWER)])


tool_calls = 0


async def noop() -> str:
    """Does nothing and answers ok."""
    global tool_calls
    tool_calls += 1
    return "ok"


def history(length: int) -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart(text)])
        if role == "user"
        else ModelResponse(parts=[TextPart(text)])
        for role, text in history_texts(length)
    ]


async def make_run(length: int):
    script = Script()
    agent = Agent(FunctionModel(script), tools=[noop])
    messages = history(length)

    async def run():
        return await agent.run(PROMPT, message_history=messages)

    before_model, before_tool = script.calls, tool_calls
    result = await run()
    check_run(
        "pydantic-ai", length, result.output, script.calls - before_model, tool_calls - before_tool
    )
    if len(messages) != length:
        raise ScriptError(f"pydantic-ai changed the caller's history to {len(messages)} messages")
    return run


if __name__ == "__main__":
    asyncio.run(bench("pydantic-ai", version("pydantic-ai-slim"), make_run))
