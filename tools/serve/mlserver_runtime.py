"""A Seldon MLServer runtime that serves one colorcam ONNX model through onnxruntime.

model-settings.json (next to the model, or anywhere with "uri" pointing at the ONNX file):

    {"name": "colorcam-default",
     "implementation": "mlserver_runtime.ColorcamOnnxRuntime",
     "parameters": {"uri": "./model.onnx", "version": "1.0.0", "extra": {"threads": 1}}}

and start MLServer with this folder importable, e.g.
    PYTHONPATH=tools/serve mlserver start path/to/model-repository

Inputs/outputs in the model metadata (GET /v2/models/NAME) come from the ONNX graph unless model-settings.json
declares them. MLServer's REST API takes JSON "data" only (no binary tensor extension), so clients must send JSON.
Checked with mlserver 1.7.1 + onnxruntime 1.32.0 (see tools/serve/README.md).
"""
import asyncio

import numpy as np
import onnxruntime as ort
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.errors import MLServerError
from mlserver.types import InferenceRequest, InferenceResponse, MetadataTensor
from mlserver.utils import get_model_uri

ONNX_TO_V2 = {
    "tensor(float)": "FP32", "tensor(double)": "FP64", "tensor(float16)": "FP16", "tensor(int8)": "INT8",
    "tensor(int16)": "INT16", "tensor(int32)": "INT32", "tensor(int64)": "INT64", "tensor(uint8)": "UINT8",
    "tensor(uint16)": "UINT16", "tensor(uint32)": "UINT32", "tensor(uint64)": "UINT64", "tensor(bool)": "BOOL",
}
V2_TO_NUMPY = {
    "FP32": np.float32, "FP64": np.float64, "FP16": np.float16, "INT8": np.int8, "INT16": np.int16,
    "INT32": np.int32, "INT64": np.int64, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
    "UINT64": np.uint64, "BOOL": np.bool_,
}


class BadInput(MLServerError):
    def __init__(self, msg):
        super().__init__(msg, status_code=400)


def _dt(datatype):
    """A v2 datatype as a string (mlserver hands out either its Datatype enum or a plain string)."""
    return getattr(datatype, "value", datatype)


def _spec(node):
    datatype = ONNX_TO_V2.get(node.type)
    if datatype is None:
        raise MLServerError(f"tensor {node.name!r} has unsupported type {node.type}")
    shape = [d if isinstance(d, int) and d >= 0 else -1 for d in (node.shape or [])]
    return MetadataTensor(name=node.name, datatype=datatype, shape=shape)


class ColorcamOnnxRuntime(MLModel):
    async def load(self) -> bool:
        path = await get_model_uri(self._settings)
        extra = (self._settings.parameters.extra or {}) if self._settings.parameters else {}
        so = ort.SessionOptions()
        so.intra_op_num_threads = int(extra.get("threads", 1))
        so.inter_op_num_threads = 1
        self._session = ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])
        self._in = [_spec(n) for n in self._session.get_inputs()]
        self._out = [_spec(n) for n in self._session.get_outputs()]
        if not self.inputs:
            self.inputs = self._in
        if not self.outputs:
            self.outputs = self._out
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        given = {i.name: i for i in payload.inputs}
        unknown = sorted(set(given) - {s.name for s in self._in})
        if unknown:
            raise BadInput(f"unexpected input(s) {unknown}; the model takes {[s.name for s in self._in]}")
        feeds = {}
        for spec in self._in:
            inp = given.get(spec.name)
            if inp is None:
                raise BadInput(f"missing input {spec.name!r}")
            datatype, expected = _dt(inp.datatype), _dt(spec.datatype)
            if datatype != expected:
                raise BadInput(f"input {spec.name!r}: datatype {datatype}, expected {expected}")
            shape = list(inp.shape)
            if len(shape) != len(spec.shape) or any(e not in (-1, d) for d, e in zip(shape, spec.shape)):
                raise BadInput(f"input {spec.name!r}: shape {shape}, expected {spec.shape}")
            try:
                arr = NumpyCodec.decode_input(inp)
            except (ValueError, TypeError) as e:
                raise BadInput(f"input {spec.name!r}: {e}")
            feeds[spec.name] = np.ascontiguousarray(arr, dtype=V2_TO_NUMPY[expected])
        loop = asyncio.get_running_loop()
        try:
            results = await loop.run_in_executor(None, self._session.run, None, feeds)
        except Exception as e:
            raise MLServerError(f"onnxruntime: {e}", status_code=500)
        outputs = [NumpyCodec.encode_output(spec.name, arr) for spec, arr in zip(self._out, results)]
        return InferenceResponse(id=payload.id, model_name=self.name, model_version=self.version, outputs=outputs)
