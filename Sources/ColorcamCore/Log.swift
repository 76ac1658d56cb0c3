import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Levelled logging to stderr, one line per message: `colorcam: LEVEL: message`. For daemons (systemd's journal
/// adds timestamps). Threading: any thread; each line is one `write(2)`, so lines never interleave.
public enum Log {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case error = 0, warning, info, debug

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        public var name: String {
            switch self {
            case .error: return "error"
            case .warning: return "warning"
            case .info: return "info"
            case .debug: return "debug"
            }
        }

        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.name == name }) else { return nil }
            self = level
        }
    }

    private static let threshold = Atomic<Int>(Level.info.rawValue)

    /// Messages above this level are not written (default `.info`).
    public static var level: Level {
        get { Level(rawValue: threshold.load(ordering: .relaxed))! }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    public static func error(_ message: @autoclosure () -> String) { emit(.error, message) }
    public static func warning(_ message: @autoclosure () -> String) { emit(.warning, message) }
    public static func info(_ message: @autoclosure () -> String) { emit(.info, message) }
    public static func debug(_ message: @autoclosure () -> String) { emit(.debug, message) }

    private static func emit(_ level: Level, _ message: () -> String) {
        guard level.rawValue <= threshold.load(ordering: .relaxed) else { return }
        var line = "colorcam: \(level.name): \(message())\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
