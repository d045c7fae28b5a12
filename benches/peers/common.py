"""Shared pieces of the Python peers' benchmarks (`cargo xtask bench-peers`).

The script is the one the Rust sides run (benches/rig-compare, benches/agents-bench): a history
of N messages, then a question; the scripted model asks for the `noop` tool once, then answers
ANSWER. The model has zero latency and answers from a two-response script in a cycle, building
each response afresh (the Rust models clone pre-built responses).

Timing, as on the Rust side (benches/rig-compare/src/peers.rs): per history length a warm-up
(which also sizes the batches), then several batches of runs; a batch's time over its runs is
microseconds per run, in process CPU time ("us", the headline figure: it does not count time
spent waiting for a core on a busy machine) and in wall-clock time ("wall_us"); each figure is
the median of the batches. Each script prints one JSON object on stdout (and writes it to
--out when given).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Awaitable, Callable

ANSWER = "The tool said ok."
PROMPT = "Run the tool, please."
SIZES = (10, 1_000, 10_000)


def history_texts(length: int) -> list[tuple[str, str]]:
    """(role, text) pairs with the texts of agents_bench::history: user, assistant, user, ..."""
    out = []
    for i in range(length):
        if i % 2 == 0:
            out.append(("user", f"Question {i}: what is the status of ticket #{i} and who owns it?"))
        else:
            out.append(
                (
                    "assistant",
                    f"Ticket #{i - 1} is in review; it is owned by the platform team and due on Friday.",
                )
            )
    return out


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--warm-up", type=float, default=0.3, help="seconds of warm-up per length")
    parser.add_argument("--batches", type=int, default=9, help="timed batches per length")
    parser.add_argument("--batch-cpu", type=float, default=0.1, help="CPU seconds per batch (about)")
    parser.add_argument(
        "--sizes", default=",".join(str(s) for s in SIZES), help="history lengths, comma separated"
    )
    parser.add_argument("--out", help="also write the JSON result to this file")
    return parser.parse_args()


async def measure(
    run: Callable[[], Awaitable[object]], warm_up: float, batches: int, batch_cpu: float
) -> tuple[list[float], list[float]]:
    """(CPU, wall) microseconds per run of each batch, after a warm-up of `warm_up` seconds."""
    start, cpu_start = time.perf_counter(), time.process_time()
    runs = 0
    while runs == 0 or time.perf_counter() - start < warm_up:
        await run()
        runs += 1
    per_run = max((time.process_time() - cpu_start) / runs, 1e-9)
    batch_runs = max(1, round(batch_cpu / per_run))
    cpu, wall = [], []
    for _ in range(batches):
        start, cpu_start = time.perf_counter_ns(), time.process_time_ns()
        for _ in range(batch_runs):
            await run()
        cpu.append((time.process_time_ns() - cpu_start) / 1_000 / batch_runs)
        wall.append((time.perf_counter_ns() - start) / 1_000 / batch_runs)
    return cpu, wall


async def bench(
    framework: str,
    version: str,
    make_run: Callable[[int], Awaitable[Callable[[], Awaitable[object]]]],
) -> dict:
    """Measures `framework` at every length; `make_run(length)` checks one run and returns it."""
    args = parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    us: dict[str, float] = {}
    wall_us: dict[str, float] = {}
    batches: dict[str, list[float]] = {}
    for size in sizes:
        run = await make_run(size)
        cpu, wall = await measure(run, args.warm_up, args.batches, args.batch_cpu)
        us[str(size)] = round(statistics.median(cpu), 2)
        wall_us[str(size)] = round(statistics.median(wall), 2)
        batches[str(size)] = [round(s, 2) for s in cpu]
        print(
            f"{framework}: {size} messages: CPU {us[str(size)]} us/run, wall {wall_us[str(size)]} us/run",
            file=sys.stderr,
        )
    result = {
        "framework": framework,
        "version": version,
        "python": sys.version.split()[0],
        "unit": "us_per_run",
        "method": (
            f"per history length: {args.warm_up} s warm-up, then {args.batches} batches of about "
            f"{args.batch_cpu} s of CPU; median of the batches' microseconds per run"
        ),
        "us": us,
        "wall_us": wall_us,
        "cpu_batches": batches,
    }
    text = json.dumps(result)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    print(text)
    return result


class ScriptError(Exception):
    """The framework did not run the two-step script as intended."""


def check_run(framework: str, length: int, output: object, model_calls: int, tool_calls: int) -> None:
    """Raises ScriptError unless one run answered ANSWER after two model calls and one tool call."""
    if output != ANSWER or model_calls != 2 or tool_calls != 1:
        raise ScriptError(
            f"{framework} did not run the script at {length} messages: output {output!r}, "
            f"{model_calls} model calls, {tool_calls} tool calls"
        )
