/// A request's bytes as a door's tests send them: the request line, `headers`, and `body` with
/// its Content-Length (or chunked in `chunked` pieces of the given sizes, each with a chunk
/// extension, and X-Expected-Entity-Length when `expectedLength`).
public func request(
    _ method: String, _ target: String, _ headers: [(String, String)] = [], body: [UInt8] = [], chunked: [Int]? = nil,
    expectedLength: Bool = false
) -> [UInt8] {
    var head = "\(method) \(target) HTTP/1.1\r\nHost: ptk.test\r\n"
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    guard let chunked else {
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }
    head += "Transfer-Encoding: chunked\r\n"
    if expectedLength { head += "X-Expected-Entity-Length: \(body.count)\r\n" }
    var out = Array((head + "\r\n").utf8)
    var rest = body[...]
    var sizes = chunked[...]
    while !rest.isEmpty {
        let n = min(sizes.popFirst() ?? rest.count, rest.count)
        out += Array((String(n, radix: 16) + ";ext=1\r\n").utf8) + rest.prefix(n) + Array("\r\n".utf8)
        rest = rest.dropFirst(n)
    }
    return out + Array("0\r\n\r\n".utf8)
}
