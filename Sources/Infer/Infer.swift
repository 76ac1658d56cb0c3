/// Infer: colorcam's tensor engine, ONNX import, Lab colour and the colorizer (see README.md).
public enum Infer {}
