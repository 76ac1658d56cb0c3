import ColorcamCore
import Infer

/// Commands that run the inference engine check its instruction-set choice first, so that an unusable
/// `COLORCAM_ISA` (a name that is not a set: exit 64; a set this CPU lacks: exit 69) is one line naming the command,
/// not a failure deep inside model loading. Without the override every x86-64 CPU runs: the engine falls back to
/// its baseline (SSE2) kernels.
enum CPUSupport {
    static func requireInference(_ command: String) throws {
        do {
            _ = try InstructionSetChoice.forProcess()
        } catch {
            throw CommandFailure(kind: error.kind, message: "\(command): \(error.description)")
        }
    }
}

/// A one-line error of a given kind, prefixed with the command.
struct CommandFailure: ColorcamError {
    let kind: FailureKind
    let message: String
    var description: String { message }
}
