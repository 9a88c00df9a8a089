#!/usr/bin/env python3
"""Real clients against ember-server on stories260K: the official `openai` npm package and curl.

usage: check_openai_client.py EMBER_SERVER MODEL CHAT_TEMPLATE NODE NPM PACKAGE_DIR

Installs `openai` with npm into PACKAGE_DIR (a scratch folder in the build tree; once), starts
the server with an API key and CHAT_TEMPLATE (Qwen 2.5's, for tool calls) on a free loopback port, runs tests/server/openai_client.mjs with node
against it, then the same kinds of calls with curl. When npm cannot install the package (no
registry), prints "SKIPPED: ..." and exits 0; a failing client call fails the test. Prints
"openai client checks passed" at the end."""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import server_harness  # noqa: E402
from server_harness import Server  # noqa: E402

SERVER, MODEL, CHAT_TEMPLATE, NODE, NPM, PACKAGE_DIR = sys.argv[1:7]
server_harness.configure(SERVER, MODEL)
OPENAI_VERSION = "6"  # the major version the test was written against


def install_openai():
    if os.path.exists(os.path.join(PACKAGE_DIR, "node_modules", "openai", "package.json")):
        return True
    os.makedirs(PACKAGE_DIR, exist_ok=True)
    with open(os.path.join(PACKAGE_DIR, "package.json"), "w") as f:
        f.write('{"name": "ember-openai-client-test", "private": true}\n')
    for _ in range(2):
        r = subprocess.run([NPM, "install", "--no-audit", "--no-fund", "--silent", "openai@" + OPENAI_VERSION],
                           cwd=PACKAGE_DIR, capture_output=True, text=True, timeout=300)
        if r.returncode == 0:
            return True
    print("npm install failed:", r.stderr[-2000:])
    return False


def curl(*args):
    r = subprocess.run(["curl", "-sS", "--max-time", "60", *args], capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, (args, r.returncode, r.stderr)
    return r.stdout


def check_curl(srv):
    base = f"http://127.0.0.1:{srv.port}"
    auth = ["-H", "Authorization: Bearer sekrit", "-H", "Content-Type: application/json"]
    body = json.dumps({"model": "stories", "prompt": "Once upon a time", "max_tokens": 12, "temperature": 0})
    whole = json.loads(curl(*auth, "-d", body, base + "/v1/completions"))
    assert whole["object"] == "text_completion" and whole["usage"]["completion_tokens"] == 12, whole
    streamed = curl("-N", *auth, "-d", json.dumps({**json.loads(body), "stream": True}), base + "/v1/completions")
    events = [e[6:] for e in streamed.split("\n\n") if e.startswith("data: ")]
    assert events[-1] == "[DONE]", events[-3:]
    text = "".join(json.loads(e)["choices"][0]["text"] for e in events[:-1] if json.loads(e)["choices"])
    assert text == whole["choices"][0]["text"], (text, whole)
    unauthorized = curl("-o", "/dev/null", "-w", "%{http_code}", base + "/v1/models")
    assert unauthorized == "401", unauthorized
    assert json.loads(curl(base + "/health")) == {"status": "ok"}
    print("curl: completion, stream, 401 without the key, /health")


def main():
    if not install_openai():
        print("SKIPPED: the openai npm package could not be installed (no npm registry?)")
        return
    with Server("-t", "2", "-c", "2048", "--parallel", "4", "--alias", "stories", "--api-key", "sekrit",
                "--chat-template", CHAT_TEMPLATE, key="sekrit") as srv:
        r = subprocess.run([NODE, os.path.join(HERE, "openai_client.mjs"), f"http://127.0.0.1:{srv.port}/v1",
                            PACKAGE_DIR], capture_output=True, text=True, timeout=240)
        print(r.stdout, end="")
        assert r.returncode == 0 and "openai client checks passed" in r.stdout, r.stderr[-4000:]
        check_curl(srv)
        srv.stop()
    print("openai client checks passed (node and curl)")


if __name__ == "__main__":
    main()
