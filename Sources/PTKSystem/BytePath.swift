import Glibc
import PTKVocabulary

/// A path as the kernel has it: bytes, which need not be UTF-8. A Swift String cannot hold
/// bytes that are not UTF-8: the command line's arguments (`CommandLine.arguments`) and a
/// folder's names (`FileDescriptor.entries`) come with such bytes replaced by U+FFFD, and that
/// path names no file. A BytePath keeps the bytes, so the file can still be opened.
public struct BytePath: Sendable, Hashable, CustomStringConvertible {
    /// The path's bytes (no NUL: a NUL ends a C path, and opening a path holding one fails).
    public let bytes: [UInt8]

    /// The path `text`, as its UTF-8.
    public init(_ text: String) { bytes = Array(text.utf8) }

    /// The path of these bytes.
    public init(bytes: some Sequence<UInt8>) { self.bytes = Array(bytes) }

    /// True when the bytes are valid UTF-8: `text` is the path, exactly.
    public var isUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// The path as text, each ill-formed UTF-8 sequence replaced by U+FFFD (as Swift decodes the
    /// command line): the path itself when `isUTF8`.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The path for messages: its UTF-8 as it is, each byte that is not part of valid UTF-8
    /// written as `\xE9` ("caf\xE9.png"). The path itself when `isUTF8`.
    public var description: String {
        if let valid = String(validating: bytes, as: UTF8.self) { return valid }
        var out = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        loop: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                out.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<offset + length] {
                    let digits = String(byte, radix: 16, uppercase: true)
                    out += "\\x" + (digits.count < 2 ? "0" : "") + digits
                }
                offset += length
            case .emptyInput:
                break loop
            }
        }
        return out
    }

    /// The last component: the bytes after the last "/" (all of them when there is none).
    public var lastComponent: BytePath {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return self }
        return BytePath(bytes: bytes[(slash + 1)...])
    }

    /// The path without "/" at its end, but never shorter than one byte ("/" stays "/").
    public var droppingTrailingSlashes: BytePath {
        var b = bytes
        while b.count > 1 && b.last == UInt8(ascii: "/") { b.removeLast() }
        return BytePath(bytes: b)
    }

    /// `name` below this path: this path, "/", `name`.
    public func appending(_ name: BytePath) -> BytePath {
        BytePath(bytes: bytes + [UInt8(ascii: "/")] + name.bytes)
    }

    /// `name` below this path.
    public func appending(_ name: String) -> BytePath { appending(BytePath(name)) }

    /// The path as a C string for `body`; EINVAL for a path holding a NUL (which would name
    /// another file), as the kernel answers for a path it cannot take.
    func withCPath<T>(_ call: String, _ body: (UnsafePointer<CChar>) throws(SystemError) -> T) throws(SystemError) -> T
    {
        if bytes.contains(0) { throw SystemError(call: call, object: description, errno: EINVAL) }
        var terminated = bytes.map { CChar(bitPattern: $0) }
        terminated.append(0)
        return try terminated.withUnsafeBufferPointer { (buffer) throws(SystemError) in try body(buffer.baseAddress!) }
    }

    /// This process's arguments as the kernel passed them (argv without the program's name),
    /// whatever their bytes.
    public static var commandLineArguments: [BytePath] {
        (1..<Int(CommandLine.argc)).compactMap { i in
            CommandLine.unsafeArgv[i].map { p in
                BytePath(bytes: UnsafeBufferPointer(start: p, count: strlen(p)).map { UInt8(bitPattern: $0) })
            }
        }
    }

    /// `arguments` (taken from `CommandLine.arguments`, in their order there: the positional
    /// arguments a parser kept) as the bytes that were passed. An argument whose bytes were not
    /// UTF-8 reads with U+FFFD in `CommandLine.arguments`; it is matched to the first argument
    /// after the one matched before whose bytes decode to it. Every other argument is its UTF-8.
    public static func commandLine(_ arguments: [String], passed: [BytePath] = commandLineArguments) -> [BytePath] {
        let repaired = passed.enumerated().filter { !$0.element.isUTF8 }.map {
            (index: $0.offset, path: $0.element, text: $0.element.text)
        }
        var next = 0
        return arguments.map { argument in
            guard argument.unicodeScalars.contains("\u{FFFD}"),
                let match = repaired.first(where: { $0.index >= next && $0.text == argument })
            else { return BytePath(argument) }
            next = match.index + 1
            return match.path
        }
    }
}

/// What the system calls of a path given as bytes do (the String versions are in
/// FileDescriptor.swift, Directory.swift and Types.swift).
extension FileDescriptor {
    /// Opens `path` (relative to `dir`, else to the working directory), close-on-exec. The
    /// corresponding C function is `openat`.
    public static func open(
        _ path: BytePath, relativeTo dir: FileDescriptor? = nil, flags: OpenFlags,
        mode: FileMode = 0o644
    ) throws(SystemError) -> FileDescriptor {
        let fd = try path.withCPath("open") { (p) throws(SystemError) in
            try syscall("open", path.description) {
                openat(dir?.rawValue ?? AT_FDCWD, p, flags.rawValue | O_CLOEXEC, mode_t(mode))
            }
        }
        return FileDescriptor(rawValue: fd)
    }

    /// The status of `name` in this directory without following a final symlink. The
    /// corresponding C function is `fstatat`.
    public func status(of name: BytePath) throws(SystemError) -> FileStatus {
        var st = stat()
        _ = try name.withCPath("stat") { (p) throws(SystemError) in
            try syscall("stat", name.description) { fstatat(rawValue, p, &st, AT_SYMLINK_NOFOLLOW) }
        }
        return FileStatus(st)
    }

    /// The names in this directory as their bytes, "." and ".." left out. The corresponding C
    /// function is `readdir`.
    public func byteEntries() throws(SystemError) -> [BytePath] {
        // fdopendir takes ownership of its descriptor, so give it a duplicate.
        let copy = try syscall("dup") { fcntl(rawValue, F_DUPFD_CLOEXEC, 0) }
        guard let dir = fdopendir(copy) else {
            let err = errno
            Glibc.close(copy)
            throw SystemError(call: "fdopendir", errno: err)
        }
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [BytePath] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { p in
                    BytePath(bytes: UnsafeBufferPointer(start: p, count: strlen(p)).map { UInt8(bitPattern: $0) })
                }
            }
            if name.bytes != [UInt8(ascii: ".")] && name.bytes != [UInt8(ascii: "."), UInt8(ascii: ".")] {
                names.append(name)
            }
        }
        return names
    }
}

/// The status of `path`, following symlinks. The corresponding C function is `stat`.
public func fileStatus(_ path: BytePath) throws(SystemError) -> FileStatus {
    var st = stat()
    _ = try path.withCPath("stat") { (p) throws(SystemError) in
        try syscall("stat", path.description) { stat(p, &st) }
    }
    return FileStatus(st)
}
