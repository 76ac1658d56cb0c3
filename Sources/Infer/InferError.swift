import ColorcamCore

/// An error from model loading, preparation or running: one line naming the file, byte offset or node.
///
/// Rendered as `FILE: byte N: node 'NAME' (OP, opset V): what was wrong` (unknown parts left out).
public struct InferError: ColorcamError, Sendable {
    public let kind: FailureKind
    /// The model file (or `<memory>`) the error is about.
    public var file: String
    /// Byte offset in the file where decoding failed, when known.
    public var byteOffset: Int?
    /// The node the error is about, as `'name' (OpType, opset N)`, when known.
    public var node: String?
    public let message: String

    public init(
        _ kind: FailureKind = .badData, file: String = "<memory>", byteOffset: Int? = nil,
        node: String? = nil, _ message: String
    ) {
        self.kind = kind
        self.file = file
        self.byteOffset = byteOffset
        self.node = node
        self.message = message
    }

    public var description: String {
        var parts = [file + ":"]
        if let byteOffset { parts.append("byte \(byteOffset):") }
        if let node { parts.append("node \(node):") }
        parts.append(message)
        return parts.joined(separator: " ")
    }
}
