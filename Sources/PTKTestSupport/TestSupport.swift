import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem

/// Builds a well-formed PNG of exactly `size` bytes (at least 57): a 1x1 greyscale image whose
/// IDAT is followed by a private ancillary chunk of pseudo-random, incompressible bytes.
public func makePNG(size: Int, seed: UInt64 = 1) -> [UInt8] {
    precondition(size >= 57, "a PNG with the filler chunk needs at least 57 bytes")
    var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    appendChunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0], to: &out)
    // zlib stream of one scanline: filter byte 0, one grey pixel 0.
    appendChunk("IDAT", [0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01], to: &out)
    let fillerLength = size - out.count - 12 - 12
    // Every seed its own sequence (xorshift needs a state that is not 0: `seed | 1` made seeds
    // 2 and 3 give the same photo, which duplicates = skip then stores once).
    var rng = seed &* 2 &+ 1
    var filler = [UInt8](repeating: 0, count: max(0, fillerLength))
    for i in filler.indices {
        rng ^= rng << 13
        rng ^= rng >> 7
        rng ^= rng << 17
        filler[i] = UInt8(truncatingIfNeeded: rng)
    }
    appendChunk("ptKf", filler, to: &out)
    appendChunk("IEND", [], to: &out)
    precondition(out.count == size)
    return out
}

/// Appends one PNG chunk with a correct CRC.
public func appendChunk(_ type: String, _ data: [UInt8], to out: inout [UInt8]) {
    let n = UInt32(data.count)
    out += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
    var crc = CRC32()
    let typeBytes = Array(type.utf8)
    crc.update(typeBytes)
    crc.update(data)
    out += typeBytes + data
    let c = crc.value
    out += [UInt8(c >> 24), UInt8((c >> 16) & 0xFF), UInt8((c >> 8) & 0xFF), UInt8(c & 0xFF)]
}

/// A fresh empty directory under /tmp, removed by `removeTree`.
public func makeTemporaryDirectory(_ prefix: String = "ptk-test") -> String {
    var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
    guard let p = mkdtemp(&template) else { fatalError("mkdtemp failed") }
    return String(cString: p)
}

/// Removes a directory tree under /tmp (used on test directories only).
public func removeTree(_ path: String) {
    guard path.hasPrefix("/tmp/") else { return }
    var st = stat()
    guard lstat(path, &st) == 0 else { return }
    if (st.st_mode & S_IFMT) == S_IFDIR {
        for name in listDirectory(path) { removeTree(path + "/" + name) }
        rmdir(path)
    } else {
        unlink(path)
    }
}

/// Writes `bytes` to `path`, replacing it.
public func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = try! FileDescriptor.open(path, flags: [.writeOnly, .create, .truncate], mode: 0o644)
    try! fd.writeAll(bytes)
    fd.close()
}

/// The bytes of `path`, or nil when it cannot be read.
public func readFile(_ path: String) -> [UInt8]? {
    // Test helper: nil tells the test the file is not there.
    guard let fd = try? FileDescriptor.open(path, flags: .readOnly) else { return nil }
    defer { fd.close() }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        // Test helper: a read error ends the bytes, which the test then compares.
        let n = buf.withUnsafeMutableBytes { (try? fd.read(into: $0)) ?? 0 }
        if n == 0 { return out }
        out += buf[..<n]
    }
}

/// Whether `path` is a directory (a path that is gone is none).
public func isDirectory(_ path: String) -> Bool {
    (try? fileStatus(path))?.isDirectory ?? false  // a path that is gone is no folder
}

/// The SHA-256 of `bytes`, in lowercase hex.
public func sha256Hex(_ bytes: [UInt8]) -> String { SHA256.hex(of: bytes) }

/// The names in a directory, sorted, "." and ".." left out.
public func listDirectory(_ path: String) -> [String] {
    // Test helper: a missing directory lists as empty.
    guard let fd = try? FileDescriptor.open(path, flags: [.readOnly, .directory]) else { return [] }
    defer { fd.close() }
    // Test helper: an unreadable directory lists as empty.
    return ((try? fd.entries()) ?? []).sorted()
}

/// The PngSuite folder inside the repository (Tests/Fixtures/pngsuite, with its README).
public func pngSuiteDirectory() -> String {
    repositoryRoot() + "/Tests/Fixtures/pngsuite"
}

/// How many images Tests/Fixtures/pngsuite holds; tests that walk it check the count, so a
/// missing or emptied folder fails them instead of letting them pass over nothing.
public let pngSuiteImageCount = 51

/// The PngSuite's image names, sorted.
public func pngSuiteImages() -> [String] {
    listDirectory(pngSuiteDirectory()).filter { $0.hasSuffix(".png") }
}

/// The repository's root folder.
public func repositoryRoot() -> String {
    // This file is <repository>/Sources/PTKTestSupport/TestSupport.swift.
    "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
}

/// Counts calls from any thread (a test's fake that fails the first few calls, say).
public final class CallCounter: @unchecked Sendable {
    private let lock = Lock()
    private var n = 0
    /// Starts at 0.
    public init() {}
    /// The number of this call, from 0.
    public func next() -> Int {
        lock.withLock {
            defer { n += 1 }
            return n
        }
    }
    /// How many calls so far.
    public var count: Int { lock.withLock { n } }
}

/// Polls `condition` every 20 ms for up to `timeout` seconds; true as soon as it holds.
public func eventually(_ timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Instant.now + .milliseconds(Int64(timeout * 1000))
    while Instant.now < deadline {
        if condition() { return true }
        sleep(for: .milliseconds(20))
    }
    return condition()
}

/// A file in Tests/Fixtures (`relative` below it).
public func fixturePath(_ relative: String) -> String {
    repositoryRoot() + "/Tests/Fixtures/" + relative
}

/// The program `name` as found on PATH, or nil.
public func findProgram(_ name: String) -> String? {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
}

/// Runs a tool found on PATH (ImageMagick's `convert`, libheif's `heif-enc`), or given by its
/// absolute path (`/usr/sbin/sshd`), to completion, killing it after `timeout` seconds: its exit
/// status (nil when it could not start or was killed) and what it wrote to standard output and
/// error.
public func runTool(_ arguments: [String], timeout: Double = 120) -> (status: Int32?, output: String) {
    let absolute = arguments[0].hasPrefix("/") && access(arguments[0], X_OK) == 0
    guard let program = absolute ? arguments[0] : findProgram(arguments[0]) else {
        return (nil, "\(arguments[0]) not found on PATH")
    }
    let child: Child
    do { child = try Child.spawn([program] + arguments.dropFirst(), environment: processEnvironment()) } catch {
        return (nil, "\(error)")
    }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    let deadline = Instant.now + .milliseconds(Int64(timeout * 1000))
    while true {
        // Test helper: the pipe is non-blocking; nothing to read yet is not an error.
        let n = (try? buffer.withUnsafeMutableBytes { b in try child.output.read(into: b) }) ?? 0
        if n > 0 {
            output += buffer[0..<n]
            continue
        }
        if let ending = child.ended() {
            // Test helper: whatever is left in the pipe after the exit.
            while let m = try? buffer.withUnsafeMutableBytes({ b in try child.output.read(into: b) }), m > 0 {
                output += buffer[0..<m]
            }
            if case .exited(let code) = ending { return (code, String(decoding: output, as: UTF8.self)) }
            return (nil, String(decoding: output, as: UTF8.self) + "\n\(ending)")
        }
        if Instant.now > deadline {
            child.signalGroup(Child.killSignal)
            return (nil, String(decoding: output, as: UTF8.self) + "\nkilled after \(timeout) s")
        }
        usleep(5_000)
    }
}

/// `bytes` written at `relativePath` below `dir`, the folders on the way made.
public func writeFile(in dir: String, _ relativePath: String, _ bytes: [UInt8]) {
    let full = dir + "/" + relativePath
    if let slash = full.lastIndex(of: "/") {
        // Test helper: a folder that cannot be made shows as the write's failure below.
        try? makeDirectories(String(full[..<slash]))
    }
    writeFile(full, bytes)
}

/// `bytes` cut into protocol v1 CHUNK payloads (`ProtocolLimits.chunkSize` each, the last the rest).
public func chunks(of bytes: [UInt8], size: Int = ProtocolLimits.chunkSize) -> [[UInt8]] {
    stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
}
