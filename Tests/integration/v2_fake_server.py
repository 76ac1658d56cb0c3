#!/usr/bin/env python3
"""A fake Open Inference Protocol v2 (KServe v2 REST) server for colorcam's remote-inference error tests.

    python3 Tests/integration/v2_fake_server.py --port 0 --mode ok [--delay-ms 1000] [--name NAME]

Standard library only. Threaded, HTTP/1.1 with keep-alive, bound to 127.0.0.1. Prints "listening on PORT" (then
flushes) once the socket listens; --port 0 picks a free port. SIGTERM / SIGINT exit with status 0.

It pretends to serve a colorcam model: input "L" FP32 [1,1,256,256] -> output "ab" FP32 [1,2,256,256]. Any model
name is accepted unless --name is given (then other names answer 404). Endpoints, each also under
/v2/models/NAME/versions/V/...:
    GET  /v2/health/live, /v2/health/ready, /v2          liveness, readiness, server metadata
    GET  /v2/models/NAME, /v2/models/NAME/ready          model metadata, model readiness
    POST /v2/models/NAME/infer                           inference (JSON "data" or the binary tensor extension)
    GET  /fake/stats                                     {"connections", "requests", "infer"} counts (test aid)

An infer request is checked like a real server would (input name, datatype, shape, element count, binary sizes,
Inference-Header-Content-Length): a bad one answers 400 {"error": ...}. The answer is all zeros; an output is sent
in binary (Inference-Header-Content-Length + raw little-endian bytes after the JSON) when the request's outputs entry
has "parameters": {"binary_data": true} or the request has parameters.binary_data_output true, else as JSON "data".

--mode (each mode changes only what its name says; metadata and infer agree with each other):
    ok                correct model, as above
    wrong-shape       metadata (and infer) say output "ab" is [1,2,128,128]
    wrong-name        metadata (and infer) say the input is named "x"
    malformed-json    infer answers 200, Content-Type application/json, body "{not json"
    truncated-binary  infer answers 200 whose JSON says binary_data_size 524288 and whose Content-Length covers it,
                      sends only part of the bytes, then closes the connection
    short-binary      infer answers 200 whose JSON says binary_data_size 524288 but whose (honest) Content-Length
                      covers only part of it; the connection stays open
    huge-length       infer answers 200 with Content-Length: 99999999999, sends a few bytes, then closes
    status-500        infer answers 500 {"error": "..."} (the connection stays open)
    slow              infer answers correctly after --delay-ms milliseconds
    not-ready         GET /v2/health/ready (and the model's /ready) answer 503, always; the rest works
    close             infer reads the request, then closes the connection without answering
    chunked           like ok, but infer answers as kserve 0.21 does: Transfer-Encoding: chunked, no Content-Length,
                      and no Content-Type on binary answers
"""
import argparse
import json
import re
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("ok", "wrong-shape", "wrong-name", "malformed-json", "truncated-binary", "short-binary", "huge-length",
         "status-500", "slow", "not-ready", "close", "chunked")
IHCL = "Inference-Header-Content-Length"
ITEMSIZE = {"FP32": 4, "FP64": 8, "FP16": 2, "INT8": 1, "UINT8": 1, "INT16": 2, "UINT16": 2, "INT32": 4,
            "UINT32": 4, "INT64": 8, "UINT64": 8, "BOOL": 1}
MODEL_PATH = re.compile(r"^/v2/models/([^/]+)(?:/versions/([^/]+))?(/ready|/infer)?$")


def model_io(mode):
    """(inputs, outputs) metadata for a mode."""
    inputs = [{"name": "x" if mode == "wrong-name" else "L", "datatype": "FP32", "shape": [1, 1, 256, 256]}]
    outputs = [{"name": "ab", "datatype": "FP32",
                "shape": [1, 2, 128, 128] if mode == "wrong-shape" else [1, 2, 256, 256]}]
    return inputs, outputs


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class BadRequest(Exception):
    pass


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = 0
        self.infer = 0

    def add(self, **kw):
        with self.lock:
            for k, v in kw.items():
                setattr(self, k, getattr(self, k) + v)

    def snapshot(self):
        with self.lock:
            return {"connections": self.connections, "requests": self.requests, "infer": self.infer}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, mode, delay_s, name):
        super().__init__(addr, Handler)
        self.mode = mode
        self.delay_s = delay_s
        self.name = name
        self.stats = Stats()
        self.inputs, self.outputs = model_io(mode)

    def handle_error(self, request, client_address):
        # A client that gives up (timeout tests) leaves a broken pipe behind: not worth a traceback.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive unless the client says Connection: close
    server_version = "colorcam-v2-fake/1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.stats.add(connections=1)

    def log_message(self, fmt, *args):  # quiet: the tests read stdout for the port line only
        pass

    # ---- plumbing
    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        n = int(length)
        body = self.rfile.read(n)
        if len(body) != n:
            raise ConnectionError("client closed mid-body")
        return body

    def send(self, status, body, content_type="application/json", headers=()):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status, obj):
        self.send(status, json.dumps(obj).encode())

    def send_chunked(self, status, body, content_type, headers=()):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        step = 65536
        for i in range(0, len(body), step):
            piece = body[i:i + step]
            self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    def hang_up(self):
        """Close the connection now, without a proper end of response."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # ---- routes
    def do_GET(self):
        self.server.stats.add(requests=1)
        srv = self.server
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        if path == "/fake/stats":
            return self.send_json(200, srv.stats.snapshot())
        if path == "/v2/health/live":
            return self.send_json(200, {"live": True})
        if path == "/v2/health/ready":
            if srv.mode == "not-ready":
                return self.send_json(503, {"ready": False})
            return self.send_json(200, {"ready": True})
        if path == "/v2":
            return self.send_json(200, {"name": "colorcam-v2-fake", "version": "1", "extensions": ["binary_tensor_data"]})
        m = MODEL_PATH.match(path)
        if m and m.group(3) != "/infer":
            name, version, tail = m.groups()
            if srv.name and name != srv.name:
                return self.send_json(404, {"error": f"model {name!r} not found"})
            if tail == "/ready":
                ok = srv.mode != "not-ready"
                return self.send_json(200 if ok else 503, {"name": name, "ready": ok})
            return self.send_json(200, {"name": name, "versions": ["1"], "platform": "colorcam-v2-fake",
                                        "inputs": srv.inputs, "outputs": srv.outputs})
        self.send_json(404, {"error": f"no route for GET {path}"})

    def do_POST(self):
        self.server.stats.add(requests=1)
        srv = self.server
        path = self.path.split("?", 1)[0].rstrip("/")
        m = MODEL_PATH.match(path)
        try:
            body = self.read_body()
        except (ConnectionError, ValueError):
            self.close_connection = True
            return
        if not m or m.group(3) != "/infer":
            return self.send_json(404, {"error": f"no route for POST {path}"})
        name = m.group(1)
        if srv.name and name != srv.name:
            return self.send_json(404, {"error": f"model {name!r} not found"})
        srv.stats.add(infer=1)
        mode = srv.mode

        if mode == "close":
            return self.hang_up()
        if mode == "status-500":
            return self.send_json(500, {"error": "fake failure: the model crashed (status-500 mode)"})
        if mode == "malformed-json":
            return self.send(200, b"{not json")
        if mode == "huge-length":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "99999999999")
            self.end_headers()
            self.wfile.write(b'{"outputs":[')
            return self.hang_up()

        try:
            request, binary_out = self.parse_infer(body)
        except BadRequest as e:
            return self.send_json(400, {"error": str(e)})
        if mode == "slow":
            time.sleep(srv.delay_s)
        self.answer(name, request, binary_out)

    def parse_infer(self, body):
        """Validates an infer request against the metadata; returns (request JSON, {output name: binary?})."""
        srv = self.server
        hl = self.headers.get(IHCL)
        if hl is not None:
            try:
                json_len = int(hl)
            except ValueError:
                raise BadRequest(f"bad {IHCL}: {hl!r}")
            if not 0 < json_len <= len(body):
                raise BadRequest(f"{IHCL} {json_len} but the body has {len(body)} bytes")
        else:
            json_len = len(body)
        try:
            request = json.loads(body[:json_len])
        except (ValueError, UnicodeDecodeError) as e:
            raise BadRequest(f"request JSON does not parse: {e}")
        if not isinstance(request, dict) or not isinstance(request.get("inputs"), list):
            raise BadRequest('request has no "inputs" list')
        offset = json_len
        want = {i["name"]: i for i in srv.inputs}
        seen = set()
        for inp in request["inputs"]:
            if not isinstance(inp, dict):
                raise BadRequest("an input is not an object")
            name = inp.get("name")
            spec = want.get(name)
            if spec is None:
                raise BadRequest(f"unexpected input {name!r}; the model takes {sorted(want)}")
            seen.add(name)
            if inp.get("datatype") != spec["datatype"]:
                raise BadRequest(f"input {name!r}: datatype {inp.get('datatype')!r}, expected {spec['datatype']}")
            if inp.get("shape") != spec["shape"]:
                raise BadRequest(f"input {name!r}: shape {inp.get('shape')!r}, expected {spec['shape']}")
            params = inp.get("parameters") or {}
            if "data" in inp:
                data = inp["data"]
                flat = list(flatten(data)) if isinstance(data, list) else None
                if flat is None or len(flat) != count(spec["shape"]):
                    raise BadRequest(f"input {name!r}: data must hold {count(spec['shape'])} numbers")
            elif "binary_data_size" in params:
                size = params["binary_data_size"]
                expect = count(spec["shape"]) * ITEMSIZE[spec["datatype"]]
                if size != expect:
                    raise BadRequest(f"input {name!r}: binary_data_size {size!r}, expected {expect}")
                if hl is None:
                    raise BadRequest(f"binary input {name!r} without the {IHCL} header")
                if offset + size > len(body):
                    raise BadRequest(f"input {name!r}: binary_data_size {size} but {len(body) - offset} bytes follow")
                offset += size
            else:
                raise BadRequest(f'input {name!r} has neither "data" nor parameters.binary_data_size')
        if seen != set(want):
            raise BadRequest(f"missing input(s) {sorted(set(want) - seen)}")
        if offset != len(body):
            raise BadRequest(f"{len(body) - offset} unclaimed bytes after the inputs")
        default_binary = bool((request.get("parameters") or {}).get("binary_data_output", False))
        out_names = {o["name"] for o in srv.outputs}
        binary_out = {}
        if request.get("outputs") is not None:
            for o in request["outputs"]:
                if not isinstance(o, dict) or o.get("name") not in out_names:
                    raise BadRequest(f"unknown output requested: {o!r}")
                binary_out[o["name"]] = bool((o.get("parameters") or {}).get("binary_data", default_binary))
        else:
            binary_out = {n: default_binary for n in out_names}
        return request, binary_out

    def answer(self, name, request, binary_out):
        srv = self.server
        outputs, raw = [], []
        for spec in srv.outputs:
            if spec["name"] not in binary_out:
                continue
            n = count(spec["shape"])
            entry = {"name": spec["name"], "datatype": spec["datatype"], "shape": spec["shape"]}
            if binary_out[spec["name"]]:
                size = n * ITEMSIZE[spec["datatype"]]
                entry["parameters"] = {"binary_data_size": size}
                raw.append(bytes(size))
            else:
                entry["data"] = zeros_json(n)
            outputs.append(entry)
        response = {"model_name": name, "model_version": "1", "outputs": outputs}
        if request.get("id") is not None:
            response["id"] = request["id"]
        head = expand_zeros(json.dumps(response).encode())
        mode = srv.mode
        if not raw:
            if mode == "chunked":
                return self.send_chunked(200, head, "application/json")
            return self.send(200, head)
        payload = b"".join(raw)
        hdrs = [(IHCL, str(len(head)))]
        if mode == "truncated-binary":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header(IHCL, str(len(head)))
            self.send_header("Content-Length", str(len(head) + len(payload)))
            self.end_headers()
            self.wfile.write(head + payload[:len(payload) // 3])
            return self.hang_up()
        if mode == "short-binary":
            return self.send(200, head + payload[:len(payload) // 3], "application/octet-stream", hdrs)
        if mode == "chunked":
            return self.send_chunked(200, head + payload, None, hdrs)
        self.send(200, head + payload, "application/octet-stream", hdrs)


_ZEROS = {}


def zeros_json(n):
    """A placeholder for a list of n zeros, expanded after json.dumps (a 131072-element list is slow to dump)."""
    return f"@ZEROS@{n}@ZEROS@"


def expand_zeros(head):
    def sub(m):
        n = int(m.group(1))
        if n not in _ZEROS:
            _ZEROS[n] = ("[" + ",".join(["0.0"] * n) + "]").encode()
        return _ZEROS[n]
    return re.sub(rb'"@ZEROS@(\d+)@ZEROS@"', sub, head)


def flatten(x):
    for v in x:
        if isinstance(v, list):
            yield from flatten(v)
        else:
            yield v


def main():
    p = argparse.ArgumentParser(description="Fake KServe v2 server for colorcam's remote-inference tests.")
    p.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: pick a free one)")
    p.add_argument("--mode", choices=MODES, default="ok")
    p.add_argument("--delay-ms", type=float, default=1000.0, help="answer delay in slow mode (default 1000)")
    p.add_argument("--name", help="the only model name served (default: any name)")
    a = p.parse_args()
    srv = Server(("127.0.0.1", a.port), a.mode, a.delay_ms / 1000.0, a.name)

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening on {srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    finally:
        srv.server_close()


if __name__ == "__main__":
    main()
