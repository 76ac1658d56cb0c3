import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// Every subcommand, in the order `--help` lists them.
let commands: [Command] = [
    ReplayCommand.command,
    TraceReportCommand.command,
    LiveCommand.command,
    DevicesCommand.command,
    RecordCommand.command,
    DoctorCommand.command,
    DetectCommand.command,
    BenchCommand.command,
    TestClipCommand.command,
    ColorizeCommand.command,
    PersonalizeCommand.command
]

func topLevelHelp() -> String {
    var text = """
        colorcam — finds photos in a video stream and colorizes them in real time, tracing every frame's fate.

        usage: colorcam <command> [options]    (colorcam <command> --help for details)

        commands:

        """
    for command in commands {
        text +=
            "  " + command.name + String(repeating: " ", count: max(1, 14 - command.name.count)) + command.summary
            + "\n"
    }
    text += "\nexit codes: 0 ok, 1 a trace-report threshold failed, 64 usage, 65 bad data, 66 missing input,\n"
    text += "            69 device unavailable, 70 internal error, 74 output could not be written\n"
    return text
}

func printError(_ message: String) {
    var line = "colorcam: " + message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

signal(SIGPIPE, SIG_IGN)
let argv = CommandLine.arguments
if argv.count < 2 || argv[1] == "--help" || argv[1] == "-h" || argv[1] == "help" {
    print(topLevelHelp(), terminator: "")
    exit(argv.count < 2 ? 64 : 0)
}
guard let command = commands.first(where: { $0.name == argv[1] }) else {
    printError("unknown command '\(argv[1])' (see 'colorcam --help')")
    exit(64)
}
let rest = argv[2...]
if rest.contains("--help") || rest.contains("-h") {
    print(command.help, terminator: command.help.hasSuffix("\n") ? "" : "\n")
    exit(0)
}
do {
    exit(try command.run(rest))
} catch let error as ColorcamError {
    printError(error.description)
    exit(error.kind.exitCode)
} catch {
    printError("internal error: \(error)")
    exit(70)
}
