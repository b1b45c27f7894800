"""exec_code latency: block start-up and proxied tool round trip.

Goals (issue 6): under 150 ms to start a block (warm workers are fine), under 1 ms per proxied
tool call.
- start-up (warm): a trivial block run when the spare worker is ready, as between two model
  turns; median of N blocks. Back-to-back blocks (no pause) are reported too: they wait for the
  next worker to start (a fresh confined process per block).
- round trip: one block makes many calls to a cheap read tool, each timed inside the block with
  perf_counter; the median is compared with the same call made directly through the registry.
Usage: python benchmarks/exec_code.py [--domain music] [--blocks 20] [--calls 500] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

GOALS_MS = {"block_start_warm": 150.0, "proxied_call": 1.0}


def measure(domain_name: str, blocks: int, calls: int) -> dict:
    from ebench.domains import get_domain
    from ebench.domains.engine.world import ensure_world, scratch_copy
    from ebench.sessions.sandbox import ExecCode

    domain = get_domain(domain_name)
    conn = scratch_copy(ensure_world(domain))
    env = domain.env(conn, _actor(conn, domain_name))
    tool = _cheap_tool(domain)
    with ExecCode(lambda n, a: domain.tools.call(env, n, a), domain.tools) as runner:
        isolation = runner.isolation
        warm = []
        for _ in range(blocks):
            runner.wait_ready()
            started = time.perf_counter()
            result = runner.run("None")
            warm.append((time.perf_counter() - started) * 1000)
            assert result.ok, result.error
        back_to_back = []
        for _ in range(max(3, blocks // 4)):
            started = time.perf_counter()
            runner.run("None")
            back_to_back.append((time.perf_counter() - started) * 1000)
        runner.wait_ready()
        code = (
            "import time\ntimes = []\n"
            f"for _ in range({calls}):\n    t = time.perf_counter()\n    {tool}()\n"
            "    times.append(time.perf_counter() - t)\ntimes.sort()\ntimes[len(times) // 2] * 1000"
        )
        result = runner.run(code)
        assert result.ok, result.error
        proxied = float(result.value)
    direct = []
    for _ in range(calls):
        started = time.perf_counter()
        domain.tools.call(env, tool, {})
        direct.append((time.perf_counter() - started) * 1000)
    direct_ms = statistics.median(direct)
    figures = {
        "domain": domain_name,
        "tool": tool,
        "isolation": isolation,
        "block_start_warm_ms": round(statistics.median(warm), 2),
        "block_start_back_to_back_ms": round(statistics.median(back_to_back), 2),
        "proxied_call_ms": round(proxied, 4),
        "direct_call_ms": round(direct_ms, 4),
        "proxy_overhead_ms": round(proxied - direct_ms, 4),
        "goals_ms": GOALS_MS,
    }
    figures["meets_goals"] = (
        figures["block_start_warm_ms"] < GOALS_MS["block_start_warm"] and figures["proxied_call_ms"] < GOALS_MS["proxied_call"]
    )
    return figures


def _cheap_tool(domain) -> str:
    for tool in domain.tools:
        if tool.kind == "read" and not any(p.required for p in tool.params) and "profile" in tool.name:
            return tool.name
    return next(t.name for t in domain.tools if t.kind == "read" and not any(p.required for p in t.params))


def _actor(conn, domain_name: str) -> int:
    return 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="music")
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.domain, args.blocks, args.calls)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    layers = ", ".join(k for k, v in figures["isolation"].items() if v)
    print(f"exec_code on {figures['domain']} (layers: {layers})")
    print(f"  block start, warm (median):       {figures['block_start_warm_ms']:8.2f} ms   goal < {GOALS_MS['block_start_warm']:.0f} ms")
    print(f"  block start, back to back:        {figures['block_start_back_to_back_ms']:8.2f} ms   (a new worker per block)")
    print(f"  proxied call {figures['tool']}():  {figures['proxied_call_ms']:8.4f} ms   goal < {GOALS_MS['proxied_call']:.0f} ms")
    print(f"  same call direct:                 {figures['direct_call_ms']:8.4f} ms   overhead {figures['proxy_overhead_ms']:.4f} ms")
    print("  goals met" if figures["meets_goals"] else "  GOALS NOT MET")


if __name__ == "__main__":
    main()
