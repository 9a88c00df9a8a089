#!/usr/bin/env python3
"""Two ember-server replicas behind nginx on loopback, as docs/deploy.md sets them up.

usage: check_nginx.py EMBER_SERVER MODEL NGINX DEPLOY_CONF

DEPLOY_CONF is the nginx configuration of docs/deploy.md (examples/server/deploy/nginx.conf); the
test fills in its ports and folders, starts nginx in the foreground with it, and checks through
nginx: /health, completions spread over both replicas, a stream that arrives piece by piece and
ends with [DONE], 8 concurrent requests equal their lone results, and requests going on after one
replica stops. Python standard library only; every wait is bounded. Prints "nginx checks passed"."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_harness  # noqa: E402
from server_harness import TIMEOUT, Server, gauge  # noqa: E402

SERVER, MODEL, NGINX, DEPLOY_CONF = sys.argv[1:5]
server_harness.configure(SERVER, MODEL)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    """nginx in the foreground with the deploy config, its upstreams set to the given ports."""

    def __init__(self, backend_ports):
        self.dir = tempfile.mkdtemp(prefix="ember-nginx-")
        os.chmod(self.dir, 0o755)  # workers may run as another user when the test runs as root
        self.port = free_port()
        conf = open(DEPLOY_CONF, encoding="utf-8").read()
        # The upstream's server lines (the only "server HOST:PORT ...;" lines) become ours.
        server_line = re.compile(r"^( *)server \d[^\n]*;\n", re.M)
        lines = server_line.findall(conf)
        assert "upstream ember {" in conf and len(lines) >= 1, "no upstream server lines in " + DEPLOY_CONF
        ours = "".join(f"{lines[0]}server 127.0.0.1:{p} max_fails=1 fail_timeout=10s;\n" for p in backend_ports)
        conf = server_line.sub("", conf).replace("upstream ember {\n", "upstream ember {\n" + ours, 1)
        conf, n = re.subn(r"listen [^;]*;", f"listen 127.0.0.1:{self.port};", conf)
        assert n == 1, "no listen line in " + DEPLOY_CONF
        # Everything nginx writes goes to the scratch folder.
        prefix = ("daemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n"
                  .format(d=self.dir))
        if os.geteuid() == 0:
            prefix += "user root;\n"
        conf = prefix + conf.replace("http {", "http {\n    access_log %s/access.log;\n"
                                     "    client_body_temp_path %s/body;\n    proxy_temp_path %s/proxy;\n"
                                     "    fastcgi_temp_path %s/f;\n    uwsgi_temp_path %s/u;\n    scgi_temp_path %s/s;\n"
                                     % ((self.dir,) * 6), 1)
        self.conf = os.path.join(self.dir, "nginx.conf")
        with open(self.conf, "w", encoding="utf-8") as f:
            f.write(conf)
        self.proc = subprocess.Popen([NGINX, "-p", self.dir, "-c", self.conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert self.proc.poll() is None, "nginx exited: " + self.proc.stderr.read().decode() + self.errors()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "nginx did not listen"
                time.sleep(0.05)
        # The harness's HTTP helpers, pointed at nginx.
        self.client = Server.__new__(Server)
        self.client.port, self.client.headers, self.client.auth = self.port, {}, b""

    def errors(self):
        try:
            return open(os.path.join(self.dir, "error.log"), encoding="utf-8").read()
        except OSError:
            return ""

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def served(srv):
    m = srv.metrics()
    return sum(float(x) for x in re.findall(r'^ember_requests_total\{endpoint="/v1/completions",status="200"\} (\S+)$',
                                            m, re.M))


def served_by(replicas, total):
    """Completions each replica has counted, once they add up to total: a replica counts a request
    just after writing its answer, so a count read right after a response may lag by one."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        counts = [served(r) for r in replicas]
        if sum(counts) >= total or time.monotonic() > deadline:
            return counts
        time.sleep(0.02)


def main():
    replicas = [Server("-t", "1", "-c", "256", "--parallel", "4", "--alias", "stories") for _ in range(2)]
    nginx = None
    try:
        nginx = Nginx([r.port for r in replicas])
        lb = nginx.client
        st, _, text = lb.request("GET", "/health")
        assert st == 200 and json.loads(text) == {"status": "ok"}, (st, text)

        body = {"prompt": "Once upon a time", "max_tokens": 24, "temperature": 0}
        expected = replicas[0].ok("/v1/completions", body)["choices"][0]["text"]
        before = served_by(replicas, 1)
        for _ in range(8):
            assert lb.ok("/v1/completions", body)["choices"][0]["text"] == expected
        spread = [a - b for a, b in zip(served_by(replicas, sum(before) + 8), before)]
        assert sum(spread) == 8 and min(spread) >= 2, f"requests per replica: {spread}"
        print(f"8 requests through nginx, answered by the replicas {spread[0]:.0f} and {spread[1]:.0f}")

        # A stream passes through unbuffered: several events, the text equal, [DONE] last.
        events, done = lb.stream("/v1/completions", {**body, "max_tokens": 64})
        assert done and len(events) >= 2, (done, len(events))
        long = replicas[1].ok("/v1/completions", {**body, "max_tokens": 64})["choices"][0]["text"]
        assert "".join(e["choices"][0]["text"] for e in events if e["choices"]) == long
        print(f"a stream through nginx: {len(events)} events, then [DONE]")

        prompts = ["Once upon a time", "The little dog", "Tom and Sue went", "One day a bird"] * 2
        alone = [replicas[0].ok("/v1/completions", {**body, "prompt": p})["choices"][0]["text"] for p in prompts]
        results = [None] * len(prompts)

        def run(i):
            results[i] = lb.ok("/v1/completions", {**body, "prompt": prompts[i]})["choices"][0]["text"]

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(prompts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
        assert results == alone, (results, alone)
        print("8 concurrent requests through nginx equal their lone results")

        # One replica stops: nginx sends everything to the other.
        replicas[0].stop()
        for i in range(6):
            assert lb.ok("/v1/completions", body)["choices"][0]["text"] == expected, i
        st, _, _ = lb.request("GET", "/health")
        assert st == 200, st
        print("with one replica stopped, requests go on through the other")
        assert gauge(replicas[1].metrics(), "ember_model_loaded") == 1
    finally:
        if nginx:
            nginx.stop()
        for r in replicas:
            if r.proc.poll() is None:
                r.proc.kill()
    print("nginx checks passed")


if __name__ == "__main__":
    main()
