import Glibc

/// The effective user id. The corresponding C function is `geteuid`.
public func geteuidValue() -> UInt32 { geteuid() }

/// The whole contents of a small text file.
public func readTextFile(_ path: String) throws(SystemError) -> String {
    let fd = try FileDescriptor.open(path, flags: O_RDONLY)
    defer { fd.close() }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = try buf.withUnsafeMutableBytes { b in Result { () throws(SystemError) in try fd.read(into: b) } }.get()
        if n == 0 { break }
        out.append(contentsOf: buf[..<n])
        if out.count > 1 << 20 { throw SystemError(call: "read", object: path, errno: EFBIG) }
    }
    return String(decoding: out, as: UTF8.self)
}
