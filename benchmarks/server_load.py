#!/usr/bin/env python3
"""Load on a running ember-server (or any OpenAI-compatible server): N concurrent clients, each
sending streamed completions one after another for a fixed time; requests/s, generated
tokens/s, time to first token and per-request latency, for each N.

usage: server_load.py --url http://127.0.0.1:8080 [--clients 1,8,32] [--seconds 20]
                      [--max-tokens 64] [--prompt-words 64] [--chat]

Every request has its own prompt (a counter in front of the same words), so the prefix cache
helps little. Greedy (temperature 0): answers end at max_tokens or at the end of text. Python
standard library only."""
import argparse
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse

WORDS = ("Once upon a time there was a little girl named Lily who loved to play in the park with her "
         "dog and her friends every day after school because the sun was warm and the grass was green").split()


def one_request(host, port, path, body):
    """(ttft seconds, total seconds, completion tokens) of one streamed request."""
    conn = http.client.HTTPConnection(host, port, timeout=600)
    t0 = time.perf_counter()
    try:
        conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        if r.status != 200:
            raise RuntimeError(f"HTTP {r.status}: {r.read()[:200]!r}")
        ttft, tokens = None, 0
        while True:
            line = r.readline()
            if not line:
                break
            if not line.startswith(b"data: ") or line.strip() == b"data: [DONE]":
                continue
            event = json.loads(line[6:])
            if event.get("usage"):
                tokens = event["usage"]["completion_tokens"]
            if event.get("choices") and ttft is None:
                c = event["choices"][0]
                if c.get("text") or c.get("delta", {}).get("content"):
                    ttft = time.perf_counter() - t0
        return ttft or 0.0, time.perf_counter() - t0, tokens
    finally:
        conn.close()


def run_level(args, host, port, clients):
    stop_at = time.perf_counter() + args.seconds
    results, errors, lock = [], [], threading.Lock()
    counter = [0]

    def client():
        while time.perf_counter() < stop_at:
            with lock:
                counter[0] += 1
                n = counter[0]
            words = [str(n)] + [WORDS[(n + i) % len(WORDS)] for i in range(args.prompt_words)]
            body = {"max_tokens": args.max_tokens, "temperature": 0, "stream": True,
                    "stream_options": {"include_usage": True}}
            if args.chat:
                body["messages"] = [{"role": "user", "content": " ".join(words)}]
                path = "/v1/chat/completions"
            else:
                body["prompt"] = " ".join(words)
                path = "/v1/completions"
            try:
                r = one_request(host, port, path, body)
                with lock:
                    results.append(r)
            except Exception as e:  # counted, reported below
                with lock:
                    errors.append(repr(e))

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    for e in sorted(set(errors))[:5]:
        print(f"{clients} clients: error: {e}", file=sys.stderr)
    tokens = sum(r[2] for r in results)
    return {
        "clients": clients,
        "requests": len(results),
        "errors": len(errors),
        "requests_per_s": len(results) / wall,
        "tokens_per_s": tokens / wall,
        "ttft_median_ms": 1000 * statistics.median(r[0] for r in results) if results else 0,
        "latency_median_s": statistics.median(r[1] for r in results) if results else 0,
        "tokens_per_request": tokens / len(results) if results else 0,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", default="http://127.0.0.1:8080")
    p.add_argument("--clients", default="1,8,32")
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--prompt-words", type=int, default=64)
    p.add_argument("--chat", action="store_true", help="use /v1/chat/completions")
    p.add_argument("--json", action="store_true", help="one JSON object per level")
    args = p.parse_args()
    u = urllib.parse.urlparse(args.url)
    if not args.json:
        print("| clients | requests | errors | requests/s | tokens/s | TTFT median ms | latency median s | tokens/request |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for clients in [int(c) for c in args.clients.split(",")]:
        r = run_level(args, u.hostname, u.port or 80, clients)
        if args.json:
            print(json.dumps(r))
        else:
            print(f"| {r['clients']} | {r['requests']} | {r['errors']} | {r['requests_per_s']:.2f} | "
                  f"{r['tokens_per_s']:.1f} | {r['ttft_median_ms']:.0f} | {r['latency_median_s']:.2f} | "
                  f"{r['tokens_per_request']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
