import Foundation
import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam devices`: lists V4L2 capture devices with their formats, sizes and frame rates, then the lines that set
/// each up as a `colorcam@.service` instance (`ServiceSetup`).
enum DevicesCommand {
    static let command = Command(
        name: "devices", summary: "list V4L2 cameras (formats, sizes, rates) and their service setup", help: help,
        run: { try run($0) })

    static let help = """
        usage: colorcam devices [--device D] [--base-port N]
               colorcam devices --units-for D[,D...] [--base-port N]

        Lists every video capture device (/dev/video*, or just D): driver, card, and for each pixel format the sizes
        and frame rates offered. Formats with identical size/rate tables are grouped. Formats colorcam converts are
        marked with the planar layout they become (e.g. 'YUYV→422'); '(no)' marks formats colorcam cannot use.
        Nodes that are not capture devices are named on one line after them.

        Then, for the capture devices listed, the shell lines that run each as its own 'colorcam live' service
        (contrib/colorcam@.service, instance NAME = /dev/NAME): an env file /etc/colorcam/NAME.env with a preview port
        of its own, and 'sudo systemctl enable --now colorcam@NAME'. Only nodes directly under /dev get lines; for a
        stable name give a camera a udev symlink (/dev/cam-door) and use --units-for.

          --device D                list only D
          --units-for D[,D...]      print only the service lines for these devices (/dev/NAME or NAME), in this order,
                                    without opening them (cameras not plugged in yet, another machine)
          --base-port N             the first camera's preview port (default 8080; the next get N+1, N+2, ...)

        exit codes: 0 at least one capture device listed (or the --units-for lines printed), 64 usage,
                    69 no capture device found
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, command: "devices", valued: ["device", "units-for", "base-port"])
        _ = try a.positionals(exactly: 0, usage: "devices [--device D | --units-for D[,D...]] [--base-port N]")
        let basePort = try a.int("base-port", default: ServiceSetup.defaultBasePort, range: 1...65535)!
        if let list = a.string("units-for") {
            if a.string("device") != nil { throw UsageError("devices: give either --device or --units-for, not both") }
            let devices = list.split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            print(ServiceSetup.script(try ServiceSetup.instances(for: devices, basePort: basePort)), terminator: "")
            return 0
        }
        let paths = a.string("device").map { [$0] } ?? videoNodes()
        var listed: [String] = []
        var others: [String] = []
        var text = ""
        for path in paths {
            let device: V4L2Device
            do {
                device = try V4L2Device(path: path)
            } catch let error as StreamError {
                if a.string("device") != nil { throw error }
                others.append("\(path) (\(error.message))")
                continue
            }
            defer { device.close() }
            text += try describe(device)
            listed.append(path)
        }
        print(text, terminator: "")
        if !others.isEmpty { print("not capture devices: " + others.joined(separator: ", ")) }
        if listed.isEmpty {
            throw StreamError(
                .unavailable, file: "/dev",
                "no V4L2 capture device found"
                    + (paths.isEmpty ? " (no /dev/video* nodes)" : ""))
        }
        // A node the template cannot name (below a subfolder of /dev) gets no lines; the listing above stands.
        let nameable = listed.filter { (try? ServiceSetup.instances(for: [$0])) != nil }
        if !nameable.isEmpty {
            print(
                "\n" + ServiceSetup.script(try ServiceSetup.instances(for: nameable, basePort: basePort)),
                terminator: "")
        }
        return 0
    }

    /// `/dev/videoN` nodes in numeric order.
    static func videoNodes() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return names.filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
            .map { "/dev/" + $0 }
    }

    static func describe(_ device: V4L2Device) throws -> String {
        let caps = device.capabilities
        var text = "\(device.path): \(caps.card) (driver \(caps.driver), \(caps.busInfo))\n"
        var groups: [(formats: [String], table: String)] = []
        for format in try device.formats() {
            let f = format.pixelFormat
            var label = f.fourCC.trimmingCharacters(in: .whitespaces)
            label += f.planarChroma.map { "→\($0)" } ?? "(no)"
            if format.isEmulated { label += "(emulated)" }
            let table = try sizeTable(device, f)
            if let last = groups.last, last.table == table {
                groups[groups.count - 1].formats.append(label)
            } else {
                groups.append(([label], table))
            }
        }
        for group in groups {
            text += "  " + group.formats.joined(separator: " ") + "\n" + group.table
        }
        return text
    }

    static func sizeTable(_ device: V4L2Device, _ format: V4L2PixelFormat) throws -> String {
        switch try device.frameSizes(for: format) {
        case nil:
            return "    (sizes not enumerated)\n"
        case .stepwise(let minW, let maxW, let stepW, let minH, let maxH, let stepH)?:
            let rates = try device.frameIntervals(for: format, widthPx: maxW, heightPx: maxH)
            return
                "    \(minW)x\(minH) to \(maxW)x\(maxH) step \(stepW)x\(stepH); at \(maxW)x\(maxH): \(rates.description)\n"
        case .discrete(let sizes)?:
            var text = ""
            for size in sizes {
                let rates = try device.frameIntervals(for: format, widthPx: size.widthPx, heightPx: size.heightPx)
                text += "    \(size.widthPx)x\(size.heightPx): \(rates.description)\n"
            }
            return text
        }
    }
}
