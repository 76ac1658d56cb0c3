import ColorcamCore
import Preview

#if canImport(Glibc)
    import Glibc
#endif

/// `--token-file FILE` for `live`: whether the preview asks for an access token, and which one.
///
/// The rule: a `--listen` address that is not loopback always has a token (from `--token-file`, else generated
/// at start and printed once as a login URL); a loopback address has one only when `--token-file` is given.
enum PreviewAccessOption {
    /// The option's name, for the command's `Arguments`.
    static let valued: Set<String> = ["token-file"]

    static let help = """
          --listen ADDR:PORT        preview address (default 127.0.0.1:8080). An address that is not loopback
                                    (e.g. 0.0.0.0:8080) needs an access token: from --token-file, else a new one
                                    (256 bits from the kernel's RNG) whose login URL http://HOST:PORT/?token=... is
                                    printed once at start
          --token-file FILE         the access token: FILE's first line, trimmed (16-256 characters from
                                    A-Z a-z 0-9 - . _ ~; keep the file chmod 600). On loopback the preview is open
                                    unless this is given. With a token every path but /healthz answers 401 without
                                    it: open /?token=TOKEN once (sets an HttpOnly cookie and redirects) or send
                                    'Authorization: Bearer TOKEN'. Exit 66 when FILE is missing or unreadable,
                                    65 when its first line is not a usable token
        """

    /// How the preview is protected.
    enum Access: Equatable {
        /// No token (loopback without `--token-file`).
        case open
        /// The token read from `path`.
        case fromFile(path: String, token: String)
        /// A token made at start; its login URL is printed once.
        case generated(token: String)

        /// The token the server checks, nil when open.
        var token: String? {
            switch self {
            case .open: return nil
            case .fromFile(_, let token), .generated(let token): return token
            }
        }
    }

    /// Decides the access for `listen` from `--token-file` (read now, so a bad file fails before anything starts).
    /// - Throws: `TokenFileError` (exit 66 missing or unreadable, 65 not a usable token).
    static func resolve(_ a: Arguments, command: String, listen: SocketAddress) throws -> Access {
        if let path = a.string("token-file") {
            return .fromFile(path: path, token: try readToken(path: path, command: command))
        }
        return listen.isLoopback ? .open : .generated(token: PreviewAccess.generateToken())
    }

    /// The token in `path`: its first line with surrounding spaces, tabs and CR removed.
    /// - Throws: `TokenFileError(.missingInput)` when the file cannot be opened or read, `.badData` when the first
    ///   line is empty or not a usable token (`PreviewAccess.problem(with:)`).
    static func readToken(path: String, command: String) throws -> String {
        let file: FileDescriptor
        do { file = try FileDescriptor.open(path, O_RDONLY) } catch {
            throw TokenFileError.system(command: command, path: path, operation: "cannot open", errno: error.code)
        }
        defer { try? file.close() }
        var bytes: [UInt8] = []
        do {
            // The first line is all that counts; stop reading after it (or after 64 KiB without one).
            try file.readAll(into: &bytes, limitBytes: 64 * 1024, stopAfter: UInt8(ascii: "\n"))
        } catch {
            throw TokenFileError.system(command: command, path: path, operation: "cannot read", errno: error.code)
        }
        var trimmed = bytes.prefix(while: { $0 != UInt8(ascii: "\n") })
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        while let first = trimmed.first, isBlank(first) { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, isBlank(last) { trimmed = trimmed.dropLast() }
        guard !trimmed.isEmpty else {
            throw TokenFileError(
                kind: .badData,
                message: "\(command): --token-file \(path): the first line is empty "
                    + "(it should hold the access token)")
        }
        let token = String(decoding: trimmed, as: UTF8.self)
        if let problem = PreviewAccess.problem(with: token) {
            throw TokenFileError(kind: .badData, message: "\(command): --token-file \(path): the token \(problem)")
        }
        return token
    }

    /// Logs how to reach the preview once it serves on `bound`. A generated token's login URL is written whatever
    /// `--log-level` says (without it nobody can open the preview); a token from a file is never printed.
    static func announce(_ access: Access, bound: SocketAddress) {
        switch access {
        case .open:
            break
        case .fromFile(let path, _):
            Log.info(
                "preview needs the access token from \(path): log in at "
                    + "http://\(hostAndPort(bound))/?token=TOKEN or send 'Authorization: Bearer TOKEN'")
        case .generated(let token):
            PreviewServer.writeToStderr(
                "info: preview login URL (printed once; anyone who has it can watch): "
                    + loginURL(bound: bound, token: token))
        }
    }

    /// `http://HOST:PORT/?token=TOKEN`; HOST is this machine's name when `bound` is a wildcard address.
    static func loginURL(bound: SocketAddress, token: String) -> String {
        "http://\(hostAndPort(bound))/?\(PreviewAccess.queryName)=\(token)"
    }

    /// `bound` as a URL authority: the address itself, or for 0.0.0.0 / [::] the host name (other machines cannot
    /// connect to a wildcard address).
    static func hostAndPort(_ bound: SocketAddress) -> String {
        guard bound.addressBytes.allSatisfy({ $0 == 0 }) else { return bound.description }
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0, name[0] != 0 else { return bound.description }
        let host = String(decoding: name.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "\(host):\(bound.port)"
    }
}

/// A `--token-file` that cannot be used: one line naming the file; exit 66 (missing, unreadable) or 65 (bad token).
struct TokenFileError: ColorcamError {
    let kind: FailureKind
    let message: String
    var description: String { message }

    /// A failed system call on the file, with the text of `code` (an `errno` value).
    static func system(command: String, path: String, operation: String, errno code: Int32) -> TokenFileError {
        let reason = String(cString: strerror(code))
        return TokenFileError(
            kind: .missingInput,
            message: "\(command): --token-file \(path): \(operation): "
                + "\(reason) (errno \(code))")
    }
}
