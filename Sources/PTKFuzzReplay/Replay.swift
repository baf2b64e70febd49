import PTKSystem

/// Runs `target` on every file named in `paths` (folders are read one level deep); returns
/// how many inputs ran.
@discardableResult
public func replay(_ paths: [String], _ target: (UnsafeRawBufferPointer) -> Void) -> Int {
    var count = 0
    for path in paths {
        // Corpus paths that cannot be read are skipped: the replay runs what there is.
        guard let st = try? fileStatus(path) else { continue }
        let files: [String]
        if st.isDirectory {
            // An unreadable corpus directory is skipped like a missing one.
            guard let dir = try? FileDescriptor.open(path, flags: [.readOnly, .directory]) else { continue }
            // An unreadable corpus directory is skipped like a missing one.
            files = ((try? dir.entries()) ?? []).sorted().map { path + "/" + $0 }
            dir.close()
        } else {
            files = [path]
        }
        for file in files {
            // An unreadable corpus file is skipped.
            guard let fd = try? FileDescriptor.open(file, flags: .readOnly) else { continue }
            var bytes: [UInt8] = []
            var buf = [UInt8](repeating: 0, count: 65536)
            // A read error ends the input where it stopped: the fuzz target gets those bytes.
            while let n = try? buf.withUnsafeMutableBytes({ try fd.read(into: $0) }), n > 0 { bytes += buf[..<n] }
            fd.close()
            bytes.withUnsafeBytes { target($0) }
            count += 1
        }
    }
    return count
}

/// The replay executables' main: replays the command line's files and folders.
public func replayCommandLine(_ target: (UnsafeRawBufferPointer) -> Void) {
    let n = replay(Array(CommandLine.arguments.dropFirst()), target)
    print("replayed \(n) input(s)")
}
