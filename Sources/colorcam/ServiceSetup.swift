/// The shell lines that set cameras up as `colorcam@.service` instances (contrib/colorcam@.service): per camera an
/// environment file `/etc/colorcam/NAME.env` holding its own preview port, and `systemctl enable --now colorcam@NAME`.
///
/// Pure: it opens no device and reads no file, so `colorcam devices --units-for` and the tests can use it without a
/// camera. The template maps instance `NAME` to `/dev/NAME`, so a camera is named by a node directly under /dev
/// (`/dev/video0`, or a udev symlink such as `/dev/cam-door`).
enum ServiceSetup {
    /// One camera's service instance.
    struct Instance: Equatable, Sendable {
        /// The instance name, e.g. `video0` (the unit is `colorcam@video0.service`).
        let name: String
        /// The device node the template opens, `/dev/` + name.
        var devicePath: String { "/dev/" + name }
        /// The preview address, `127.0.0.1:PORT`.
        let listen: String
        /// The environment file the template reads.
        var envFile: String { "/etc/colorcam/\(name).env" }
        /// The environment file's content, one line with its newline.
        var envContent: String { "COLORCAM_LISTEN=\(listen)\n" }
    }

    static let defaultBasePort = 8080

    /// The instances for `devices`, in the given order: the first gets `basePort`, the next `basePort + 1`, ...
    ///
    /// - Parameter devices: `/dev/NAME` paths or bare `NAME`s; NAME may hold letters, digits and `:_.-`.
    /// - Throws: `UsageError` (exit 64) for an empty list, a path below a subfolder of /dev, a name a unit name cannot
    ///   hold, a device given twice, or ports past 65535.
    static func instances(for devices: [String], basePort: Int = defaultBasePort) throws -> [Instance] {
        guard !devices.isEmpty else { throw UsageError("devices: no device to set up") }
        guard (1...65535).contains(basePort), basePort + devices.count - 1 <= 65535 else {
            throw UsageError("devices: ports \(basePort)...\(basePort + devices.count - 1) do not fit in 1...65535")
        }
        var seen: Set<String> = []
        return try devices.enumerated().map { index, device in
            let name = device.hasPrefix("/dev/") ? String(device.dropFirst(5)) : device
            guard !name.isEmpty else { throw UsageError("devices: an empty device name in the list") }
            guard !name.contains("/") else {
                throw UsageError(
                    "devices: '\(device)' is not a node directly under /dev (colorcam@NAME opens "
                        + "/dev/NAME; give a udev symlink such as /dev/cam-door for a by-id path)")
            }
            guard name.unicodeScalars.allSatisfy(isUnitNameScalar), name != ".", name != ".." else {
                throw UsageError("devices: '\(device)' cannot be a unit instance name (letters, digits, ':_.-' only)")
            }
            guard seen.insert(name).inserted else { throw UsageError("devices: '\(device)' is given twice") }
            return Instance(name: name, listen: "127.0.0.1:\(basePort + index)")
        }
    }

    /// The setup as a shell script: comment lines and commands, one per line, each ending in a newline.
    static func script(_ instances: [Instance]) -> String {
        var text =
            "# one colorcam@.service per camera "
            + "(contrib/colorcam@.service; contrib/README.md, \"Many cameras\")\n"
        text += "sudo mkdir -p /etc/colorcam\n"
        for instance in instances {
            let env = instance.envContent.dropLast()  // the content is one line; echo adds the newline back
            text += "echo '\(env)' | sudo tee \(instance.envFile)\n"
            text +=
                "sudo systemctl enable --now colorcam@\(instance.name)"
                + "    # \(instance.devicePath), preview http://\(instance.listen)/\n"
        }
        return text
    }

    private static func isUnitNameScalar(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "a"..."z", "A"..."Z", "0"..."9", ":", "_", ".", "-": return true
        default: return false
        }
    }
}
