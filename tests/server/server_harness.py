"""What the ember-server end-to-end scripts share: a server process on a free loopback port and
an HTTP client for it (Python standard library only). Call configure(SERVER, MODEL) first."""
import http.client
import json
import re
import signal
import subprocess
import tempfile
import time

SERVER = MODEL = None
TIMEOUT = 30


def configure(server, model):
    global SERVER, MODEL
    SERVER, MODEL = server, model


class Server:
    """An ember-server process on a free loopback port."""

    def __init__(self, *flags, key=None):
        self.headers = {"Authorization": "Bearer " + key} if key else {}
        self.auth = ("Authorization: Bearer " + key + "\r\n").encode() if key else b""
        # The server writes its stderr through a descriptor of its own, appending: one shared with
        # self.log would share its offset, and a write landing between stderr()'s seek(0) and
        # read() would overwrite the start of the log (the "listening on" line, once).
        self.log = tempfile.NamedTemporaryFile(mode="w+")
        with open(self.log.name, "a") as server_stderr:
            self.proc = subprocess.Popen([SERVER, "-m", MODEL, "--host", "127.0.0.1", "--port", "0", *flags],
                                         stdout=subprocess.DEVNULL, stderr=server_stderr)
        try:
            self._wait_ready()
        except BaseException:
            self.__exit__()  # a server that never became ready must not outlive the test
            raise

    def _wait_ready(self):
        self.port = None
        deadline = time.monotonic() + TIMEOUT
        while self.port is None:
            assert time.monotonic() < deadline, "the server printed no port in %d s (%s): %s" % (
                TIMEOUT, self.proc_state(), self.stderr())
            assert self.proc.poll() is None, "the server exited: " + self.stderr()
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.stderr())
            if m:
                self.port = int(m.group(1))
            else:
                time.sleep(0.02)
        while True:  # 503 while the model loads, then 200
            status, _, body = self.request("GET", "/health")
            if status == 200:
                assert json.loads(body) == {"status": "ok"}, body
                break
            assert status == 503 and json.loads(body)["status"] == "loading", (status, body)
            assert time.monotonic() < deadline, "the model did not load"
            time.sleep(0.05)

    def proc_state(self):
        """The process's state and where the kernel has it waiting, for a failure message."""
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                state = next((line.strip() for line in f if line.startswith("State:")), "State: ?")
            with open("/proc/%d/wchan" % self.proc.pid) as f:
                return state + ", wchan " + f.read().strip()
        except OSError as e:
            return "no /proc entry: " + str(e)

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def connect(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)

    def request(self, method, path, body=None, headers=None):
        conn = self.connect()
        try:
            data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
            conn.request(method, path, body=data, headers=headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read().decode()
        finally:
            conn.close()

    def post(self, path, body, headers=None):
        status, _, text = self.request("POST", path, body, {"Content-Type": "application/json", **(headers or {})})
        return status, text

    def ok(self, path, body):
        status, text = self.post(path, body)
        assert status == 200, (status, text)
        return json.loads(text)

    def stream(self, path, body):
        """The JSON events of a stream and whether it ended with [DONE]."""
        conn = self.connect()
        try:
            conn.request("POST", path, body=json.dumps({**body, "stream": True}),
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            assert r.status == 200, (r.status, r.read())
            assert r.getheader("Content-Type").startswith("text/event-stream"), r.getheader("Content-Type")
            events, done = [], False
            for event in r.read().decode().split("\n\n"):
                if not event or event.startswith(":"):
                    continue
                assert event.startswith("data: "), event
                assert not done, "data after [DONE]"
                if event == "data: [DONE]":
                    done = True
                else:
                    events.append(json.loads(event[6:]))
            return events, done
        finally:
            conn.close()

    def metrics(self):
        status, _, text = self.request("GET", "/metrics")
        assert status == 200, status
        return text

    # `with Server(...) as srv:` kills a server still running when the block ends (a failure).
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        return False

    def stop(self, expect_rc=0):
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=10)
        assert rc == expect_rc, f"exit code {rc}: {self.stderr()}"
        return time.monotonic() - start


def gauge(metrics, name):
    m = re.search(r"^" + re.escape(name) + r" (\S+)$", metrics, re.M)
    assert m, name + " missing from /metrics"
    return float(m.group(1))
