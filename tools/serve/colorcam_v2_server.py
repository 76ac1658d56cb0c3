#!/usr/bin/env python3
"""Serve one colorcam model bundle over the Open Inference Protocol v2 (KServe v2 REST) with KServe + onnxruntime.

    .build/serve-venv/bin/python tools/serve/colorcam_v2_server.py --bundle Models/colorcam-default [--http-port 8080] [--name NAME]
           [--threads 1] [--latency-ms 0] [--host 0.0.0.0] [--access-log]

A bundle is a directory holding manifest.json and the ONNX file it names (model.onnx by default). The tensor names,
element types and shapes the server reports (GET /v2/models/NAME) are read from the ONNX graph itself, not from the
manifest. Requests may carry their inputs as JSON "data" or in the binary tensor data extension
(parameters.binary_data_size + the Inference-Header-Content-Length header); an output comes back in binary when the
request's "outputs" entry asks {"parameters": {"binary_data": true}} (or the request sets
parameters.binary_data_output), else as JSON "data". /v2/models/NAME/versions/V/... is served when V is the
manifest's "version"; kserve answers 501 to any other version.

stdout carries exactly one line, "ready on http://127.0.0.1:PORT/v2/models/NAME", printed once the model is loaded
and the HTTP socket is listening (PORT is the bound port: --http-port 0 picks a free one). Logs go to stderr.
SIGTERM / SIGINT stop the server gracefully (exit status 0). gRPC is not started.

.build/serve-venv is the venv tools/deps.sh creates from tools/serve/requirements.txt (see tools/serve/README.md).
"""
import argparse
import asyncio
import json
import os
import sys
import time

T_START = time.monotonic()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    p.add_argument("--bundle", required=True, help="colorcam model bundle directory (manifest.json + ONNX file)")
    p.add_argument("--name", help="model name on the endpoint path (default: the manifest's \"name\")")
    p.add_argument("--http-port", type=int, default=8080, help="HTTP port (0: pick a free one; default 8080)")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0, all interfaces)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads (default 1)")
    p.add_argument("--latency-ms", type=float, default=0.0,
                   help="extra latency injected per inference, as an async sleep (default 0)")
    p.add_argument("--access-log", action="store_true", help="log one line per HTTP request (stderr)")
    a = p.parse_args(argv)
    if a.threads < 1:
        p.error("--threads must be >= 1")
    if a.latency_ms < 0:
        p.error("--latency-ms must be >= 0")
    if not (0 <= a.http_port <= 65535):
        p.error("--http-port must be 0..65535")
    return a


# Parse our own flags before importing kserve: kserve.model_server parses sys.argv at import time (its flags are
# spelled --http_port, --grpc_port, ...), so it must see none of ours.
ARGS = parse_args(sys.argv[1:])
sys.argv = sys.argv[:1]

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from kserve import InferRequest, InferResponse, Model, ModelServer  # noqa: E402
from kserve import logging as kserve_logging  # noqa: E402
from kserve.errors import InferenceError, InvalidInput  # noqa: E402
from kserve.protocol.dataplane import DataPlane  # noqa: E402
from kserve.protocol.infer_type import InferInput, InferOutput, RequestedOutput  # noqa: E402
import orjson  # noqa: E402  (a kserve dependency)

# ONNX element type (as onnxruntime spells it) -> v2 datatype.
ONNX_TO_V2 = {
    "tensor(float)": "FP32", "tensor(double)": "FP64", "tensor(float16)": "FP16", "tensor(bfloat16)": "BF16",
    "tensor(int8)": "INT8", "tensor(int16)": "INT16", "tensor(int32)": "INT32", "tensor(int64)": "INT64",
    "tensor(uint8)": "UINT8", "tensor(uint16)": "UINT16", "tensor(uint32)": "UINT32", "tensor(uint64)": "UINT64",
    "tensor(bool)": "BOOL", "tensor(string)": "BYTES",
}
V2_TO_NUMPY = {
    "FP32": np.float32, "FP64": np.float64, "FP16": np.float16, "INT8": np.int8, "INT16": np.int16,
    "INT32": np.int32, "INT64": np.int64, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
    "UINT64": np.uint64, "BOOL": np.bool_,
}


def log_config(access_log):
    """kserve's logging setup with every handler on stderr (stdout is kept for the one ready line)."""
    cfg = json.loads(json.dumps(kserve_logging.KSERVE_LOG_CONFIG))
    for h in cfg["handlers"].values():
        h["stream"] = "ext://sys.stderr"
    cfg["loggers"]["uvicorn.access"]["level"] = "INFO" if access_log else "WARNING"
    # kserve.trace logs per-request latency lines at INFO: keep them with --access-log only.
    cfg["loggers"]["kserve.trace"]["level"] = "INFO" if access_log else "WARNING"
    return cfg


def tensor_spec(node):
    """{"name", "datatype", "shape"} of an onnxruntime NodeArg; symbolic / unknown dims are reported as -1."""
    datatype = ONNX_TO_V2.get(node.type)
    if datatype is None:
        raise SystemExit(f"colorcam_v2_server: tensor {node.name!r} has unsupported type {node.type}")
    shape = [d if isinstance(d, int) and d >= 0 else -1 for d in (node.shape or [])]
    return {"name": node.name, "datatype": datatype, "shape": shape}


class ColorcamModel(Model):
    def __init__(self, name, onnx_path, threads, latency_ms):
        super().__init__(name)
        self.onnx_path = onnx_path
        self.threads = threads
        self.latency_s = latency_ms / 1000.0
        self.session = None
        self.inputs = []
        self.outputs = []

    def load(self):
        so = ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(self.onnx_path, sess_options=so, providers=["CPUExecutionProvider"])
        self.inputs = [tensor_spec(n) for n in self.session.get_inputs()]
        self.outputs = [tensor_spec(n) for n in self.session.get_outputs()]
        self.ready = True
        return self.ready

    def get_input_types(self):
        return self.inputs

    def get_output_types(self):
        return self.outputs

    def _feeds(self, request):
        if not isinstance(request, InferRequest):
            raise InvalidInput("expected a v2 inference request")
        by_name = {i.name: i for i in request.inputs}
        unknown = sorted(set(by_name) - {s["name"] for s in self.inputs})
        if unknown:
            raise InvalidInput(f"unexpected input(s) {unknown}; model {self.name!r} takes "
                               f"{[s['name'] for s in self.inputs]}")
        feeds = {}
        for spec in self.inputs:
            inp = by_name.get(spec["name"])
            if inp is None:
                raise InvalidInput(f"missing input {spec['name']!r}")
            if inp.datatype != spec["datatype"]:
                raise InvalidInput(f"input {spec['name']!r}: datatype {inp.datatype}, expected {spec['datatype']}")
            shape = [int(d) for d in inp.shape]
            if len(shape) != len(spec["shape"]) or any(e not in (-1, d) for d, e in zip(shape, spec["shape"])):
                raise InvalidInput(f"input {spec['name']!r}: shape {shape}, expected {spec['shape']}")
            dtype = V2_TO_NUMPY.get(spec["datatype"])
            if dtype is None:
                raise InvalidInput(f"input {spec['name']!r}: datatype {spec['datatype']} not supported here")
            try:
                arr = inp.as_numpy()
            except Exception as e:  # kserve raises assorted errors for a short buffer / ragged JSON
                raise InvalidInput(f"input {spec['name']!r}: {e}")
            if arr.size != int(np.prod(shape)):
                raise InvalidInput(f"input {spec['name']!r}: {arr.size} elements, shape {shape} needs "
                                   f"{int(np.prod(shape))}")
            feeds[spec["name"]] = np.ascontiguousarray(arr, dtype=dtype).reshape(shape)
        return feeds

    async def predict(self, payload, headers=None, response_headers=None):
        feeds = self._feeds(payload)
        loop = asyncio.get_running_loop()
        # onnxruntime releases the GIL: run it on the executor so the event loop keeps answering health checks.
        try:
            results = await loop.run_in_executor(None, self.session.run, None, feeds)
        except Exception as e:  # an InferenceError answers 500 without dropping the connection
            raise InferenceError(f"onnxruntime: {e}")
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        outputs = []
        for spec, arr in zip(self.outputs, results):
            # An ndarray as data: to_rest() encodes it once, as raw bytes or as a JSON list, per the request.
            outputs.append(InferOutput(name=spec["name"], shape=list(arr.shape), datatype=spec["datatype"],
                                       data=np.ascontiguousarray(arr)))
        return InferResponse(
            response_id=payload.id or "",
            model_name=self.name,
            infer_outputs=outputs,
            use_binary_outputs=payload.use_binary_outputs,
            requested_outputs=payload.request_outputs,
        )


class RawInputDataPlane(DataPlane):
    """kserve's DataPlane, but binary inputs stay bytes (np.frombuffer later) instead of becoming a Python list.

    kserve 0.21's InferRequest.from_bytes turns every binary input into a list of Python floats (about 30 ms for one
    1x1x256x256 FP32 tensor here) that the model then turns back into an array; this decoder keeps the raw bytes and
    checks that the body really holds binary_data_size bytes for each input."""

    def decode_inference_request(self, body, headers, model_name):
        if not isinstance(body, bytes):
            return super().decode_inference_request(body, headers, model_name)
        json_length = headers.get("inference-header-content-length")
        if json_length is None:
            # A JSON body that reached the bytes branch (e.g. sent as application/octet-stream).
            try:
                return InferRequest.from_inference_request(self._json_request(body), model_name)
            except InvalidInput:
                raise
            except Exception as e:
                raise InvalidInput(f"unrecognised request: {e}")
        try:
            json_length = int(json_length)
        except ValueError:
            raise InvalidInput(f"bad Inference-Header-Content-Length {json_length!r}")
        if not 0 < json_length <= len(body):
            raise InvalidInput(f"Inference-Header-Content-Length {json_length} but the body has {len(body)} bytes")
        try:
            req = orjson.loads(body[:json_length])
        except orjson.JSONDecodeError as e:
            raise InvalidInput(f"request header is not JSON: {e}")
        if not isinstance(req, dict) or not isinstance(req.get("inputs"), list):
            raise InvalidInput("request header has no \"inputs\" list")
        inputs, offset = [], json_length
        for entry in req["inputs"]:
            try:
                name, shape, datatype = entry["name"], list(entry["shape"]), str(entry["datatype"])
            except (KeyError, TypeError) as e:
                raise InvalidInput(f"input without name/shape/datatype: {e}")
            params = entry.get("parameters") or {}
            inp = InferInput(name=name, shape=shape, datatype=datatype, parameters=params)
            if entry.get("data") is not None:
                inp.data = entry["data"]
            elif "binary_data_size" in params:
                size = params["binary_data_size"]
                if not isinstance(size, int) or size < 0 or offset + size > len(body):
                    raise InvalidInput(f"input {name!r}: binary_data_size {size!r} but only "
                                       f"{len(body) - offset} bytes follow")
                inp._raw_data = body[offset:offset + size]
                offset += size
            else:
                raise InvalidInput(f"input {name!r} has neither \"data\" nor parameters.binary_data_size")
            inputs.append(inp)
        if offset != len(body):
            raise InvalidInput(f"{len(body) - offset} bytes after the last input's binary data")
        outputs = None
        if req.get("outputs") is not None:
            outputs = [RequestedOutput(name=o["name"], parameters=o.get("parameters")) for o in req["outputs"]]
        return InferRequest(model_name=model_name, infer_inputs=inputs, request_id=req.get("id"),
                            parameters=req.get("parameters"), request_outputs=outputs)

    @staticmethod
    def _json_request(body):
        from kserve.protocol.rest.v2_datamodels import InferenceRequest

        return InferenceRequest.model_validate_json(body)


class StripVersion:
    """ASGI wrapper: /v2/models/NAME/versions/VERSION/... is served as /v2/models/NAME/... when VERSION is the
    bundle's manifest version (kserve itself answers 501 to every versioned path)."""

    def __init__(self, app, name, version):
        self.app = app
        self.prefix = f"/v2/models/{name}"
        self.versioned = f"/v2/models/{name}/versions/{version}"

    async def __call__(self, scope, receive, send):
        if scope.get("type") == "http" and version_matches(scope.get("path", ""), self.versioned):
            scope = dict(scope)
            scope["path"] = self.prefix + scope["path"][len(self.versioned):]
            scope["raw_path"] = scope["path"].encode()
        await self.app(scope, receive, send)


def install_error_handlers():
    """Answer malformed requests with 400 {"error": ...} and keep the connection open.

    kserve maps only its own exception types; anything else (e.g. the ValueError its binary decoder raises when a
    request carries fewer bytes than binary_data_size says, or the KeyError of a JSON header without "inputs") reaches
    Starlette's catch-all, which answers 500 and then re-raises, and uvicorn then drops the keep-alive connection."""
    from fastapi.responses import JSONResponse
    from kserve.model_server import app

    async def bad_request(_, exc):
        return JSONResponse(status_code=400, content={"error": f"{type(exc).__name__}: {exc}"})

    for exc_type in (ValueError, KeyError, TypeError):
        app.add_exception_handler(exc_type, bad_request)


def version_matches(path, versioned):
    return path == versioned or path.startswith(versioned + "/")


class ColorcamModelServer(ModelServer):
    """ModelServer that listens on --host, reports the bound port once listening, and exits 0 on SIGTERM."""

    def __init__(self, model_name, host, **kw):
        super().__init__(**kw)
        self.dataplane = RawInputDataPlane(model_registry=self.registered_models)
        self._model_name = model_name
        self._host = host

    async def _announce(self):
        rest = self._rest_server
        server = rest._server if rest is not None else None
        while server is not None and not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.01)
        port = self.http_port
        try:
            port = server.servers[0].sockets[0].getsockname()[1]
        except (AttributeError, IndexError):
            pass
        print(f"ready on http://127.0.0.1:{port}/v2/models/{self._model_name}", flush=True)
        print(f"colorcam_v2_server: started in {time.monotonic() - T_START:.2f} s", file=sys.stderr, flush=True)

    async def _serve(self):
        if self._rest_server is not None:
            self._rest_server.config.host = self._host  # RESTServer hard-codes 0.0.0.0; config loads on serve()
        await asyncio.gather(*self.servers, self._announce())

    def register_signal_handler(self):
        # uvicorn installs its own SIGINT/SIGTERM handlers while serving (graceful shutdown) and re-raises the signal
        # once done; what runs then is this one, which just unloads the model so the process exits with status 0.
        import signal

        def on_signal(sig, frame):
            for name in list(self.registered_models.get_models().keys()):
                self.registered_models.unload(name)

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, on_signal)


def main():
    bundle = os.path.abspath(ARGS.bundle)
    manifest_path = os.path.join(bundle, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"colorcam_v2_server: cannot read {manifest_path}: {e}")
    name = ARGS.name or manifest.get("name")
    if not name:
        raise SystemExit("colorcam_v2_server: the manifest has no \"name\"; pass --name")
    onnx_path = os.path.join(bundle, manifest.get("file", "model.onnx"))
    if not os.path.isfile(onnx_path):
        raise SystemExit(f"colorcam_v2_server: no ONNX file at {onnx_path}")

    version = str(manifest.get("version", "")).strip()
    if version and "/" not in version:
        from kserve.model_server import app  # the FastAPI app kserve's REST server serves

        app.add_middleware(StripVersion, name=name, version=version)
    install_error_handlers()

    kserve_logging.configure_logging(log_config(ARGS.access_log))
    model = ColorcamModel(name, onnx_path, ARGS.threads, ARGS.latency_ms)
    model.load()
    print(f"colorcam_v2_server: loaded {onnx_path} as {name!r} in {time.monotonic() - T_START:.2f} s "
          f"(inputs {model.inputs}, outputs {model.outputs})", file=sys.stderr, flush=True)
    server = ColorcamModelServer(
        name, ARGS.host,
        http_port=ARGS.http_port, enable_grpc=False, workers=1,
        enable_latency_logging=ARGS.access_log, grace_period=5,
    )
    server.start([model])
    return 0


if __name__ == "__main__":
    sys.exit(main())
