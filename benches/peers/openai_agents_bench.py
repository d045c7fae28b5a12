"""OpenAI Agents SDK (PyPI `openai-agents`) on the two-step script, see common.py.

The model is a `Model` subclass answering from the script with no network; tracing is disabled
(no export) and the API key is a dummy that is never used.
"""

from __future__ import annotations

import asyncio
import os
from importlib.metadata import version

os.environ.setdefault("OPENAI_API_KEY", "sk-dummy-never-used")
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from common import ANSWER, PROMPT, bench, check_run, history_texts  # noqa: E402

set_tracing_disabled(True)


class ScriptedModel(Model):
    """Zero latency: a `noop` tool call, then ANSWER, in a cycle; each response built afresh."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(self, *args, **kwargs) -> ModelResponse:
        self.calls += 1
        if self.calls % 2 == 1:
            output = [
                ResponseFunctionToolCall(
                    type="function_call", call_id="call_1", name="noop", arguments="{}"
                )
            ]
        else:
            output = [
                ResponseOutputMessage(
                    id="msg_1",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=ANSWER, annotations=[])],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the benchmark model does not stream")


tool_calls = 0


@function_tool
async def noop() -> str:
    """Does nothing and answers ok."""
    global tool_calls
    tool_calls += 1
    return "ok"


async def make_run(length: int):
    model = ScriptedModel()
    agent = Agent(name="bench", model=model, tools=[noop])
    history = [{"role": role, "content": text} for role, text in history_texts(length)]

    async def run():
        # The SDK takes the input list as given; a fresh list per run, as a caller would pass.
        return await Runner.run(agent, [*history, {"role": "user", "content": PROMPT}], max_turns=2)

    before_model, before_tool = model.calls, tool_calls
    result = await run()
    check_run(
        "openai-agents",
        length,
        result.final_output,
        model.calls - before_model,
        tool_calls - before_tool,
    )
    return run


if __name__ == "__main__":
    asyncio.run(bench("openai-agents", version("openai-agents"), make_run))
