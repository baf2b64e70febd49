import PTKSystem
import PTKTime

extension HTTPConnection {
    /// Sends the open regular file `fd` of `size` bytes, or the one part a `Range` header
    /// (`range`) asks for (206 with Content-Range; 416 for a range past the end; several or a
    /// malformed one get the whole file), read in 256 KiB pieces from its offsets. `headOnly`
    /// (HEAD) sends the head alone. A file that cannot be read, or ends early, after the head
    /// promised its bytes closes the connection (`.gone`): `failed` is told where, and the read's
    /// error (nil: the file ended there), for the log.
    public func sendFile(_ fd: FileDescriptor, size: Int64, type: String, headers: [(String, String)] = [], range: String?,
                         headOnly: Bool, idle: Duration, failed: (_ offset: Int64, _ error: SystemError?) -> Void) throws(HTTPError) {
        var headers = [("Accept-Ranges", "bytes")] + headers
        var start: Int64 = 0, end = size - 1, status = 200
        switch ByteRange(header: range, size: size) {
        case .whole: break
        case .part(let s, let e):
            (start, end, status) = (s, e, 206)
            headers.append(("Content-Range", "bytes \(s)-\(e)/\(size)"))
        case .unsatisfiable:
            headers.append(("Content-Range", "bytes */\(size)"))
            try respond(416, [], contentType: type, headers: headers, headOnly: headOnly, deadline: .now + idle)
            return
        }
        try write(responseHead(status, contentLength: end - start + 1, contentType: type, headers: headers, close: false), deadline: .now + idle)
        if headOnly { return }
        try sendFileBytes(fd, first: start, last: end, idle: idle, failed: failed)
    }
}
