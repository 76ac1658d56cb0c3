"""A small Chrome DevTools Protocol client over `--remote-debugging-pipe` (no WebSocket library needed): headless
Chromium gets the commands on its fd 3 and answers on fd 4, NUL-separated JSON. For page tests that click and read
the DOM like a person would (real mouse events through `Input.dispatchMouseEvent`).
"""
import json
import os
import subprocess
import threading
import time


class Browser:
    def __init__(self, exe, window=(1000, 700)):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire_fds():
            # dup2 onto the same number is a no-op that keeps close-on-exec: clear it explicitly.
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--remote-debugging-pipe", f"--window-size={window[0]},{window[1]}", "about:blank"],
            preexec_fn=wire_fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next_id = 0
        self._answers = {}
        self._events = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = None

    def _read(self):
        buffer = b""
        while True:
            chunk = os.read(self._from_chrome, 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                data = json.loads(message)
                with self._cond:
                    if "id" in data:
                        self._answers[data["id"]] = data
                    else:
                        self._events.append(data)
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def send(self, method, params=None, session=True, timeout=30):
        with self._cond:
            self._next_id += 1
            ident = self._next_id
        message = {"id": ident, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while ident not in self._answers:
                left = deadline - time.monotonic()
                assert left > 0 and self.proc.poll() is None, f"no answer to {method} from Chromium"
                self._cond.wait(left)
            answer = self._answers.pop(ident)
        assert "error" not in answer, f"{method}: {answer['error']}"
        return answer.get("result", {})

    def open(self, url):
        target = self.send("Target.createTarget", {"url": url}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        self.send("Runtime.enable")

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        assert "exceptionDetails" not in result, f"{expression}: {result['exceptionDetails']}"
        return result["result"].get("value")

    def wait_for(self, expression, timeout=15, poll=0.1):
        """Polls `expression` until it is truthy (an exception counts as not yet: the page may still be loading)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                    "awaitPromise": True})
            value = None if "exceptionDetails" in result else result["result"].get("value")
            if value:
                return value
            time.sleep(poll)
        raise AssertionError(f"timed out waiting for {expression}")

    def click(self, x, y):
        """A left click at CSS pixel x, y of the viewport (press and release, as a mouse does)."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "clickCount": 0 if kind == "mouseMoved" else 1})

    def console_errors(self):
        with self._cond:
            return [e for e in self._events if e.get("method") == "Runtime.exceptionThrown"
                    or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")]

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except AssertionError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
