"""What one model request costs ebench's process in CPU: the model client as the model solver uses
it, the lean client (openai/ models' default) and litellm, in the same run.

A model batch on a few cores is bound by this figure (batch_throughput.py's CPU bound): it is
measured alone here. The request is a task's first turn (the domain's system prompt, the task's
request, the domain's tool schemas) sent through `model_client.acompletion` with the solver's
settings to the fake OpenAI-compatible server in its own process, answering at once (its CPU is not
counted), `--concurrency` requests at a time, after a warm-up. Only this process's CPU time is
counted. Goal (issue 34 §1): <= 2 ms per request with 33 tools.
Usage: python benchmarks/model_client.py [--requests 400] [--concurrency 8] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-fake-benchmark")
MODEL = "openai/gpt-4o-mini"  # a priced model, as real runs use
TASKS = ("music-0001", "meeting-0001", "moba-0001")
CLIENTS = ("lean", "litellm")
GOAL_MS = 2.0


def start_server() -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, "-m", "ebench.testing.fake_openai", "--delay", "0"], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


async def cpu_per_request(base: str, task_id: str, client: str, requests: int, concurrency: int) -> dict:
    from ebench.engine.domain_registry import get_domain
    from ebench.engine.world import open_world_readonly
    from ebench.sessions.model_client import acompletion
    from ebench.sessions.prompts import system_prompt
    from ebench.tasks.suite import load_suite
    from ebench.tasks.worlds import task_world

    [task] = load_suite(ids=[task_id]).tasks
    domain = get_domain(task.domain)
    conn = open_world_readonly(task_world(task))
    label = domain.actor_label(conn, task.actor)
    conn.close()
    messages = [{"role": "system", "content": system_prompt(domain, label, False)}, {"role": "user", "content": task.query}]
    schemas = domain.tools.openai_schemas()  # shared by every trial, as trial.tool_schemas() gives them

    async def one() -> None:
        # as LLMSolver._complete: the lean client is given the shared schemas, litellm a new list
        tools = schemas if client == "lean" else list(schemas)
        response = await acompletion(MODEL, messages, tools, api_base=base, timeout=60, client=client)
        assert response.choices[0].message.tool_calls, "the fake server did not play the task"

    for _ in range(20):
        await one()
    rounds = max(1, requests // concurrency)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        await asyncio.gather(*(one() for _ in range(concurrency)))
    done = rounds * concurrency
    return {
        "task": task_id,
        "domain": task.domain,
        "client": client,
        "tools": len(schemas),
        "requests": done,
        "cpu_ms_per_request": round(1000 * (time.process_time() - cpu) / done, 2),
        "wall_ms_per_request": round(1000 * (time.perf_counter() - wall) / done, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    server, base = start_server()
    try:
        rows = [asyncio.run(cpu_per_request(base, task, client, args.requests, args.concurrency)) for client in CLIENTS for task in TASKS]
    finally:
        server.kill()
    from importlib.metadata import version

    lean = [r for r in rows if r["client"] == "lean"]
    through = [r for r in rows if r["client"] == "litellm"]
    # per_domain: the default client of openai/ models (the lean one); litellm's beside it
    result: dict = {
        "litellm": version("litellm"),
        "aiohttp": version("aiohttp"),
        "goal_ms": GOAL_MS,
        "per_domain": lean,
        "litellm_per_domain": through,
    }
    worst = max(r["cpu_ms_per_request"] for r in lean)
    result["readme"] = [
        {
            "figure": "CPU of one model request in ebench's process (lean client for openai/ models; the domain's tools, a server answering at once)",
            "value": ", ".join(f"{r['domain']} {r['cpu_ms_per_request']:.2f} ms ({r['tools']} tools)" for r in lean),
            "goal": f"<= {GOAL_MS} ms with 33 tools",
            "met": worst <= GOAL_MS,
        },
        {
            "figure": f"The same request through litellm {result['litellm']} (EBENCH_LITELLM=1; other providers), same run",
            "value": ", ".join(f"{r['domain']} {r['cpu_ms_per_request']:.1f} ms" for r in through),
            "goal": "a figure to watch (the model batch's CPU bound through litellm)",
            "met": None,
        },
    ]
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for r in rows:
        print(
            f"{r['client']:>7} {r['domain']}: {r['cpu_ms_per_request']} ms CPU, {r['wall_ms_per_request']} ms wall per request ({r['tools']} tools)"
        )
    print(f"goal: <= {GOAL_MS} ms CPU per request (lean client)")


if __name__ == "__main__":
    main()
