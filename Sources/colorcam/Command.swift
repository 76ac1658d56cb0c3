/// One `colorcam` subcommand: its help text and its entry point.
///
/// `run` parses its own arguments (see `Arguments`), wires modules together and returns the exit code;
/// it throws `ColorcamError`s, which `main` prints as one line and maps to an exit code.
struct Command: Sendable {
    let name: String
    /// One line for `colorcam --help`.
    let summary: String
    /// The whole `colorcam NAME --help` text.
    let help: String
    let run: @Sendable (ArraySlice<String>) throws -> Int32
}
