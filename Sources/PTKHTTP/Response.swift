import PTKSystem

/// What a handler answers: a status, header fields and a body. The connection writes it
/// (`HTTPConnection.send`): the length or chunking, the door's fixed headers, `Connection`, a
/// HEAD request's head alone, each write's deadline. Whether the connection carries another
/// request after it is the connection's decision, not the handler's (see `closesConnection`).
public struct Response {
    /// The status line's code.
    public var status: HTTPStatus
    /// The handler's own fields; the connection adds the length or chunking, `Connection` and the door's fixed ones.
    public var headers: HTTPFields
    /// What follows the head (left out for a HEAD request, its length still sent).
    public var body: ResponseBody
    /// The handler asks the connection to close after this response (a client locked out
    /// for its wrong passwords must come back through a new handshake). The connection also
    /// closes on its own when the request's body was not read to its end, and when the
    /// client asked to.
    public var closesConnection = false
    /// Run once the connection is done with the response, whether its body went out whole or
    /// not (`HTTPConnection.send`): closes the file a `.file` body reads, which the handler
    /// cannot close before the body is sent.
    public var whenDone: (() -> Void)?

    /// A response of `status`; with no body, an empty one (`Content-Length: 0`).
    public init(_ status: HTTPStatus, headers: HTTPFields = [], body: ResponseBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `bytes` of `type` (an empty body is sent without a Content-Type).
    public static func bytes(_ status: HTTPStatus, _ bytes: [UInt8], type: String, headers: HTTPFields = []) -> Response
    {
        Response(status, headers: headers, body: .bytes(bytes, contentType: type))
    }

    /// The response, asking the connection to close after it.
    public func closing() -> Response {
        var copy = self
        copy.closesConnection = true
        return copy
    }

    /// The open regular file `fd` of `size` bytes, or the one part a `Range` header (`range`)
    /// asks for (206 with Content-Range; 416 for a range past the end; several or a malformed
    /// one get the whole file). A file that cannot be read, or ends early, after the head
    /// promised its bytes closes the connection: `failed` is told where, and the read's error
    /// (nil: the file ended there), for the log.
    public static func file(
        _ fd: FileDescriptor, size: Int64, type: String, headers: HTTPFields = [], range: String?,
        failed: @escaping (_ offset: Int64, _ error: SystemError?) -> Void
    ) -> Response {
        var fields: HTTPFields = ["Accept-Ranges": "bytes"]
        for field in headers { fields.append(field.name, field.value) }
        switch ByteRange(header: range, size: size) {
        case .whole:
            return Response(
                .ok, headers: fields, body: .file(fd, first: 0, last: size - 1, contentType: type, failed: failed))
        case .part(let s, let e):
            fields.append("Content-Range", "bytes \(s)-\(e)/\(size)")
            return Response(
                .partialContent, headers: fields, body: .file(fd, first: s, last: e, contentType: type, failed: failed))
        case .unsatisfiable:
            fields.append("Content-Range", "bytes */\(size)")
            return Response(.rangeNotSatisfiable, headers: fields)
        }
    }
}

/// A response's body.
public enum ResponseBody {
    case empty
    /// Bytes of `contentType` (empty bytes: no Content-Type is sent).
    case bytes([UInt8], contentType: String)
    /// Bytes `first` through `last` (both included) of an open regular file, read in 256 KiB
    /// pieces from their offsets; `failed` as in `Response.file`.
    case file(FileDescriptor, first: Int64, last: Int64, contentType: String, failed: (Int64, SystemError?) -> Void)
    /// A body whose length is not known before its end, sent chunked: the producer writes its
    /// pieces to the writer it is given (nothing is sent of them for a HEAD request).
    case stream(contentType: String, (ChunkedBody) throws(HTTPError) -> Void)
}
