#!/usr/bin/env python3
"""End-to-end test of ember-server (examples/server) on stories260K, loopback only.

usage: check_server.py EMBER_SERVER MODEL REFERENCE

Starts the server on a free port, waits for /health, and checks: greedy completions equal the
shared reference text (stories260K-greedy.txt), a stream concatenates to the same text and ends
with [DONE], usage counts, 4 concurrent requests equal their lone results, n choices equal lone
runs with seed + i and best_of picks by mean log-probability, 400s for bad bodies,
401 without the API key, 413 for a large body, 503 when the queue is full, /v1/models, /metrics,
a client leaving mid-stream, SIGTERM -> exit 0, and tool calls (a server with the shared Qwen 2.5
template: forced calls valid against their schemas). Python standard library only. Prints
"server checks passed" at the end; any failure raises (non-zero exit)."""
import json
import os
import re
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_harness  # noqa: E402
from server_harness import TIMEOUT, Server, gauge  # noqa: E402

SERVER, MODEL, REFERENCE = sys.argv[1:4]
server_harness.configure(SERVER, MODEL)


def reference_cases():
    """(prompt, n, prompt_and_text, n_ids) of the F32 stories260K cases."""
    raw = open(REFERENCE, encoding="utf-8").read()
    cases = []
    for block in raw.split("### PROMPT: ")[1:]:
        m = re.match(r"([^\n]*)\n### MODEL: (\S+) N=(\d+)\nIDS: ([^\n]*)\nTEXT: (.*)", block, re.S)
        assert m, block[:200]
        if m.group(2) == "stories260K.gguf":
            text = m.group(5)
            cases.append((m.group(1), int(m.group(3)), text[:-1] if text.endswith("\n") else text,
                          len(m.group(4).split())))
    assert cases, "no stories260K.gguf case in " + REFERENCE
    return cases


def check_reference(srv):
    for prompt, n, expected, n_ids in reference_cases():
        body = {"model": "anything", "prompt": prompt, "max_tokens": n, "temperature": 0}
        r = srv.ok("/v1/completions", body)
        assert r["object"] == "text_completion" and r["id"].startswith("cmpl-"), r
        assert r["model"] == "anything" and isinstance(r["created"], int), r
        choice = r["choices"][0]
        assert prompt + choice["text"] == expected, (prompt + choice["text"], expected)
        assert choice["finish_reason"] == "length", choice
        u = r["usage"]
        assert u["completion_tokens"] == n and u["prompt_tokens"] + n == n_ids, u
        assert u["total_tokens"] == u["prompt_tokens"] + n, u

        events, done = srv.stream("/v1/completions", {**body, "stream_options": {"include_usage": True}})
        assert done, "the stream did not end with [DONE]"
        text = "".join(e["choices"][0]["text"] for e in events if e["choices"])
        assert prompt + text == expected, (text, expected)
        assert all(e["id"] == events[0]["id"] and e["object"] == "text_completion" for e in events)
        assert events[-2]["choices"][0]["finish_reason"] == "length", events[-2]
        usage = events[-1]["usage"]
        assert events[-1]["choices"] == [] and usage["completion_tokens"] == n, (events[-1], u)
        assert usage["prompt_tokens"] == u["prompt_tokens"] and usage["total_tokens"] == u["total_tokens"], usage
        # The same prompt again: the prefix cache gives all of it but the last token.
        assert usage["prompt_tokens_details"]["cached_tokens"] > 0, usage
    print("reference text: completions and streams match")


def check_chat(srv):
    body = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
            "max_tokens": 12, "temperature": 0}
    r = srv.ok("/v1/chat/completions", body)
    assert r["object"] == "chat.completion" and r["id"].startswith("chatcmpl-"), r
    msg = r["choices"][0]["message"]
    assert msg["role"] == "assistant" and isinstance(msg["content"], str), msg
    assert r["choices"][0]["finish_reason"] in ("stop", "length"), r
    events, done = srv.stream("/v1/chat/completions", body)
    assert done
    assert events[0]["object"] == "chat.completion.chunk" and events[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(e["choices"][0]["delta"].get("content", "") for e in events)
    assert text == msg["content"], (text, msg["content"])
    assert events[-1]["choices"][0]["finish_reason"] == r["choices"][0]["finish_reason"]
    # stop strings end the text before them; logprobs come with the chosen token first.
    full = srv.ok("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 20, "temperature": 0})
    cut = full["choices"][0]["text"].find(" girl")
    assert cut > 0, full
    stopped = srv.ok("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 20, "temperature": 0,
                                         "stop": [" girl"]})
    assert stopped["choices"][0]["text"] == full["choices"][0]["text"][:cut], stopped
    assert stopped["choices"][0]["finish_reason"] == "stop", stopped
    lp = srv.ok("/v1/chat/completions", {**body, "logprobs": True, "top_logprobs": 3})
    content = lp["choices"][0]["logprobs"]["content"]
    assert len(content) == lp["usage"]["completion_tokens"], lp
    assert all(len(c["top_logprobs"]) == 3 and c["top_logprobs"][0]["token"] == c["token"] for c in content), content
    # Streamed, the chunks' entries joined are the same; a text completion's too, with offsets.
    events, done = srv.stream("/v1/chat/completions", {**body, "logprobs": True, "top_logprobs": 3})
    streamed = [c for e in events if e["choices"] and e["choices"][0]["logprobs"]
                for c in e["choices"][0]["logprobs"]["content"]]
    assert done and streamed == content, (streamed, content)
    text_body = {"prompt": "Once upon a time", "max_tokens": 12, "temperature": 0, "logprobs": 2}
    whole = srv.ok("/v1/completions", text_body)["choices"][0]["logprobs"]
    events, done = srv.stream("/v1/completions", text_body)
    parts = [e["choices"][0]["logprobs"] for e in events if e["choices"] and e["choices"][0]["logprobs"]]
    joined = {k: [x for p in parts for x in p[k]] for k in ("tokens", "token_logprobs", "top_logprobs", "text_offset")}
    assert done and joined == whole, (joined, whole)
    # Seeded sampling repeats; a JSON object response is valid JSON.
    seeded = {"prompt": "Once upon a time", "max_tokens": 16, "temperature": 0.9, "seed": 7}
    assert srv.ok("/v1/completions", seeded)["choices"][0]["text"] == srv.ok("/v1/completions", seeded)["choices"][0]["text"]
    j = srv.ok("/v1/chat/completions", {**body, "max_tokens": 200, "response_format": {"type": "json_object"}})
    if j["choices"][0]["finish_reason"] == "stop":
        assert isinstance(json.loads(j["choices"][0]["message"]["content"]), dict), j
    print("chat, stop strings, logprobs (whole and streamed), seed, json_object: ok")


def check_concurrent(srv):
    prompts = ["Once upon a time", "The little dog", "Tom and Sue went", "One day a bird"]
    body = lambda p: {"prompt": p, "max_tokens": 64, "temperature": 0}
    t0 = time.monotonic()
    alone = [srv.ok("/v1/completions", body(p)) for p in prompts]
    t_alone = time.monotonic() - t0
    results = [None] * len(prompts)

    def run(i):
        results[i] = srv.ok("/v1/completions", body(prompts[i]))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(prompts))]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    t_together = time.monotonic() - t0
    for a, b in zip(alone, results):
        assert b is not None, "a concurrent request failed"
        assert a["choices"][0]["text"] == b["choices"][0]["text"], (a, b)
    tokens = sum(r["usage"]["completion_tokens"] for r in results)
    print(f"4 concurrent requests equal their lone results; {tokens} tokens in {t_together:.3f} s together, "
          f"{t_alone:.3f} s one after another ({tokens / t_together:.0f} vs {tokens / t_alone:.0f} tokens/s)")


def choice_texts(events, n, key):
    """The text of each of n streamed choices, and their finish reasons."""
    texts, finish = [""] * n, [None] * n
    for e in events:
        for c in e["choices"]:
            texts[c["index"]] += c[key] if key == "text" else c["delta"].get("content", "")
            finish[c["index"]] = c["finish_reason"] or finish[c["index"]]
    return texts, finish


def check_samples(srv):
    """n choices are the lone runs with seed, seed + 1, ...; streamed, they join to the same;
    best_of returns the candidates with the highest mean log-probability, best first."""
    base = {"prompt": "Once upon a time", "max_tokens": 24, "temperature": 1.0, "seed": 11}
    lone = [srv.ok("/v1/completions", {**base, "seed": 11 + i, "logprobs": 0}) for i in range(4)]
    texts = [r["choices"][0]["text"] for r in lone]
    assert len(set(texts)) > 1, texts  # the seeds give different samples
    r = srv.ok("/v1/completions", {**base, "n": 3})
    assert [c["index"] for c in r["choices"]] == [0, 1, 2], r
    assert [c["text"] for c in r["choices"]] == texts[:3], (r, texts)
    assert r["usage"]["prompt_tokens"] == lone[0]["usage"]["prompt_tokens"], r
    assert r["usage"]["completion_tokens"] == sum(x["usage"]["completion_tokens"] for x in lone[:3]), r

    events, done = srv.stream("/v1/completions", {**base, "n": 3, "stream_options": {"include_usage": True}})
    got, finish = choice_texts(events, 3, "text")
    assert done and got == texts[:3], (got, texts)
    assert finish == [x["choices"][0]["finish_reason"] for x in lone[:3]], finish
    assert events[-1]["usage"] == r["usage"], (events[-1], r["usage"])

    chat = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 16, "temperature": 1.0, "seed": 5}
    alone = [srv.ok("/v1/chat/completions", {**chat, "seed": 5 + i})["choices"][0]["message"]["content"]
             for i in range(2)]
    r = srv.ok("/v1/chat/completions", {**chat, "n": 2})
    assert [c["message"]["content"] for c in r["choices"]] == alone, (r, alone)
    events, done = srv.stream("/v1/chat/completions", {**chat, "n": 2})
    assert done and choice_texts(events, 2, "delta")[0] == alone, events
    assert sorted(e["choices"][0]["index"] for e in events if e["choices"][0]["delta"].get("role")) == [0, 1]

    mean = [sum(x["choices"][0]["logprobs"]["token_logprobs"]) / len(x["choices"][0]["logprobs"]["token_logprobs"])
            for x in lone]
    best = sorted(range(4), key=lambda i: -mean[i])[:2]
    r = srv.ok("/v1/completions", {**base, "n": 2, "best_of": 4})
    assert [c["text"] for c in r["choices"]] == [texts[i] for i in best], (r, texts, mean)
    assert r["usage"]["completion_tokens"] == sum(x["usage"]["completion_tokens"] for x in lone), r
    print(f"n = 3 choices equal seeds 11..13, streamed too; chat n = 2; best_of 4 picks {best} (mean logprobs "
          + ", ".join(f"{m:.3f}" for m in mean) + ")")


def check_errors(srv):
    def error(path, body, status=400, contains=""):
        got, text = srv.post(path, body)
        assert got == status, (got, text)
        e = json.loads(text)["error"]
        assert e["type"] in ("invalid_request_error", "server_error") and contains in e["message"], (e, contains)
        return e

    error("/v1/chat/completions", b"{not json", contains="not valid JSON")
    error("/v1/chat/completions", b"[]", contains="must be a JSON object")
    error("/v1/chat/completions", {"messages": "hi"}, contains="'messages': must be an array")
    error("/v1/completions", {"prompt": "x", "max_tokens": "10"}, contains="'max_tokens': must be an integer")
    error("/v1/completions", {"prompt": "x", "temperature": 5}, contains="'temperature'")
    error("/v1/completions", {"prompt": "x", "logit_bias": {"999999": 1}}, contains="not a token id")
    error("/v1/completions", {"prompt": [1, 999999]}, contains="outside the vocabulary")
    error("/v1/completions", {"prompt": "x", "n": 2, "best_of": 1}, contains="must be at least n")
    error("/v1/completions", {"prompt": "x", "best_of": 2, "stream": True}, contains="cannot be streamed")
    error("/v1/completions", {"prompt": "x", "n": 100}, contains="more generations than the server runs")
    e = error("/v1/completions", {"prompt": "Once upon a time " * 200}, contains="tokens, but the context holds 512")
    assert e["param"] == "prompt", e
    st, _, text = srv.request("GET", "/nope")
    assert st == 404 and "error" in json.loads(text), (st, text)
    print("400s: malformed JSON, wrong types, out of range, too-long prompt; 404")


def check_models_and_metrics(srv):
    st, _, text = srv.request("GET", "/v1/models")
    models = json.loads(text)
    assert st == 200 and models["object"] == "list", models
    assert models["data"][0]["id"] == os.path.basename(MODEL) and models["data"][0]["object"] == "model", models
    m = srv.metrics()
    for needle in ['ember_requests_total{endpoint="/v1/completions",status="200"}',
                   'ember_requests_total{endpoint="/v1/completions",status="400"}',
                   "# TYPE ember_time_to_first_token_seconds histogram",
                   'ember_time_per_output_token_seconds_bucket{le="+Inf"}',
                   "ember_kv_pages_free", "ember_requests_queued", "ember_prefix_cache_hits_total"]:
        assert needle in m, needle + " missing from /metrics"
    assert gauge(m, "ember_generated_tokens_total") > 0 and gauge(m, "ember_model_loaded") == 1
    assert gauge(m, "ember_prefix_cache_hits_total") > 0  # the same prompts ran many times
    print("/v1/models and /metrics: ok")


def check_disconnect(srv, max_tokens=400, expect_cancelled=False):
    before = gauge(srv.metrics(), "ember_generations_cancelled_total")
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=TIMEOUT)
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": max_tokens, "stream": True}).encode()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: " + str(len(body)).encode() + b"\r\n" + srv.auth + b"\r\n" + body)
    got = b""
    while got.count(b"data: ") < 3:
        chunk = s.recv(4096)
        assert chunk, "the stream ended early"
        got += chunk
    s.close()
    deadline = time.monotonic() + 10
    while gauge(srv.metrics(), "ember_requests_in_flight") != 0:
        assert time.monotonic() < deadline, "the request of a client that left is still running"
        time.sleep(0.05)
    # The stream's slot is freed when the write fails; the engine ends the generation at its next
    # step (cancelled), a moment later.
    while expect_cancelled and gauge(srv.metrics(), "ember_generations_cancelled_total") != before + 1:
        assert time.monotonic() < deadline, "the generation of a client that left was not cancelled"
        time.sleep(0.05)
    st, text = srv.post("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 8, "temperature": 0},
                        srv.headers)
    assert st == 200 and json.loads(text)["usage"]["completion_tokens"] == 8, (st, text)
    print("a client leaving mid-stream cancels its request; the next one works")


def check_limits():
    """--api-key, --max-body, --queue 0 on a second server."""
    # A context and token cap far beyond what the test lets run: the long requests below cannot
    # end by themselves before the test stops them, however slow the machine.
    srv = Server("-t", "1", "--parallel", "1", "--queue", "0", "--api-key", "sekrit", "--max-body", "4096",
                 "-c", "32768", "--max-tokens", "32000", key="sekrit")
    try:
        key = {"Authorization": "Bearer sekrit"}
        st, _, text = srv.request("GET", "/v1/models")
        assert st == 401 and json.loads(text)["error"]["code"] == "invalid_api_key", (st, text)
        st, text = srv.post("/v1/completions", {"prompt": "x"}, {"Authorization": "Bearer wrong"})
        assert st == 401, (st, text)
        st, _, _ = srv.request("GET", "/v1/models", headers=key)
        assert st == 200
        assert srv.request("GET", "/health")[0] == 200  # no key needed
        st, text = srv.post("/v1/completions", {"prompt": "x" * 8000}, key)
        assert st == 413 and "error" in json.loads(text), (st, text)
        # A long answer (30000 tokens): the client leaves after 3 chunks, long before its end.
        check_disconnect(srv, 30000, expect_cancelled=True)
        # One request runs, none may wait: a second gets 503 with Retry-After.
        conn = srv.connect()
        conn.request("POST", "/v1/completions", body=json.dumps({"prompt": "Once", "max_tokens": 30000, "stream": True}),
                     headers={"Content-Type": "application/json", **key})
        r = conn.getresponse()
        assert r.status == 200
        assert r.readline().startswith(b"data: ")  # it runs
        st, headers, text = srv.request("POST", "/v1/completions", json.dumps({"prompt": "Once"}).encode(),
                                        {"Content-Type": "application/json", **key})
        assert st == 503 and headers.get("Retry-After") == "1" and "busy" in text, (st, headers, text)
        # SIGTERM with a stream in flight (read as a client does): the stream ends with an error
        # event and [DONE], the server exits 0.
        received = []
        def read_all():
            received.append(r.read().decode())
            conn.close()

        reader = threading.Thread(target=read_all)
        reader.start()
        took = srv.stop()
        assert took < 5, took
        reader.join(TIMEOUT)
        assert received, "the stream did not end"
        rest = received[0]
        assert "data: [DONE]" in rest and "shutting down" in rest, rest[-300:]
        conn.close()
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
    print("401 without the key, 413 for a large body, 503 when full; SIGTERM mid-stream -> exit 0")


WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
                                          "days": {"type": "integer", "minimum": 1, "maximum": 7},
                                          "unit": {"type": "string", "enum": ["C", "F"]}},
           "required": ["city", "days"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The forecast", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "now", "description": "The time"}}]


def check_instance(value, schema):
    """The JSON Schema subset of WEATHER: types, required, maxLength, integer bounds, enum."""
    kind = schema.get("type")
    if kind == "object":
        assert isinstance(value, dict), value
        props = schema.get("properties", {})
        assert set(schema.get("required", [])) <= set(value) and set(value) <= set(props), (value, schema)
        for key, v in value.items():
            check_instance(v, props[key])
    elif kind == "string":
        assert isinstance(value, str) and len(value) <= schema.get("maxLength", len(value)), value
    elif kind == "integer":
        assert isinstance(value, int) and schema.get("minimum", value) <= value <= schema.get("maximum", value), value
    if "enum" in schema:
        assert value in schema["enum"], value


def check_call(call, name=None):
    assert call["type"] == "function" and re.fullmatch(r"call_[A-Za-z0-9]{24}", call["id"]), call
    fn = call["function"]
    assert name is None or fn["name"] == name, (fn, name)
    args = json.loads(fn["arguments"])  # a JSON string, as OpenAI sends it
    check_instance(args, WEATHER if fn["name"] == "get_weather" else {"type": "object", "properties": {}})
    return args


def check_tools():
    """tools on a server with the Qwen 2.5 template (Hermes <tool_call> format): required and named
    choices make even stories260K produce schema-valid calls; auto and none give content."""
    template = os.path.join(os.path.dirname(os.path.dirname(MODEL)), "chat-templates", "Qwen-Qwen2.5-7B-Instruct.jinja")
    if not os.path.exists(template):
        print("tools: SKIPPED (no " + template + ")")
        return
    srv = Server("-t", "1", "-c", "2048", "--parallel", "2", "--chat-template", template)
    try:
        base = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}], "max_tokens": 200,
                "temperature": 0, "tools": TOOLS}
        r = srv.ok("/v1/chat/completions", {**base, "tool_choice": "required", "parallel_tool_calls": False})
        choice = r["choices"][0]
        assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None, r
        assert len(choice["message"]["tool_calls"]) == 1, choice
        check_call(choice["message"]["tool_calls"][0])
        named = {**base, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
        r = srv.ok("/v1/chat/completions", {**named, "temperature": 0.8, "seed": 3})
        calls = r["choices"][0]["message"]["tool_calls"]  # parallel calls allowed: one or more
        assert calls and r["choices"][0]["finish_reason"] in ("tool_calls", "length"), r
        for call in calls:
            check_call(call, "get_weather")
        r = srv.ok("/v1/chat/completions", {**base, "tool_choice": {"type": "function", "function": {"name": "now"}},
                                            "parallel_tool_calls": False})
        assert check_call(r["choices"][0]["message"]["tool_calls"][0], "now") == {}, r

        events, done = srv.stream("/v1/chat/completions", {**named, "parallel_tool_calls": False})
        assert done and events[0]["choices"][0]["delta"]["role"] == "assistant", events
        deltas = [d for e in events for d in e["choices"][0]["delta"].get("tool_calls", [])]
        assert len(deltas) == 1 and deltas[0]["index"] == 0, events
        check_call(deltas[0], "get_weather")
        assert events[-1]["choices"][0]["finish_reason"] == "tool_calls", events[-1]
        assert "".join(e["choices"][0]["delta"].get("content", "") for e in events) == "", events

        for choice in ("auto", "none"):  # stories260K writes a story, never a call
            r = srv.ok("/v1/chat/completions", {**base, "tool_choice": choice, "max_tokens": 24})
            msg = r["choices"][0]["message"]
            assert isinstance(msg["content"], str) and msg["content"] and "tool_calls" not in msg, r
        events, done = srv.stream("/v1/chat/completions", {**base, "max_tokens": 24})
        assert done and "".join(e["choices"][0]["delta"].get("content", "") for e in events), events

        # A tool's result goes back to the model: the template renders the whole exchange.
        history = [base["messages"][0],
                   {"role": "assistant", "content": None, "tool_calls": [
                       {"id": "call_1", "type": "function",
                        "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris", "days": 1})}}]},
                   {"role": "tool", "tool_call_id": "call_1", "content": json.dumps({"forecast": "sunny"})}]
        r = srv.ok("/v1/chat/completions", {**base, "messages": history, "max_tokens": 8})
        assert r["usage"]["prompt_tokens"] > 0 and r["choices"][0]["message"]["role"] == "assistant", r
        st, text = srv.post("/v1/chat/completions", {**base, "tool_choice": {"type": "function", "function": {"name": "x"}}})
        assert st == 400 and "'tool_choice.function.name'" in json.loads(text)["error"]["message"], (st, text)
    finally:
        srv.stop()
    print("tools: required and named calls valid against their schemas, streamed calls, auto/none content, "
          "a tool result rendered")


def main():
    srv = Server("-t", "1", "-c", "512", "--parallel", "4")
    try:
        check_reference(srv)
        check_chat(srv)
        check_concurrent(srv)
        check_samples(srv)
        check_errors(srv)
        check_models_and_metrics(srv)
        check_disconnect(srv)
        took = srv.stop()
        assert took < 5, f"SIGTERM took {took:.1f} s"
        print(f"SIGTERM: exit code 0 in {took:.2f} s")
    finally:
        if srv.proc.poll() is None:
            srv.proc.kill()
    check_limits()
    check_tools()
    print("server checks passed")


if __name__ == "__main__":
    main()
