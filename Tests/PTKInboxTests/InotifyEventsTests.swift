import PTKInbox
import PTKTestTags
import Testing

/// A record as the kernel writes it on a little-endian machine: the name NUL-padded to `padTo`
/// bytes (a multiple of 4 at least one longer than the name, as the kernel pads; 0 for no name).
private func record(watch: Int32, mask: UInt32, cookie: UInt32 = 0, name: String = "", padTo: Int? = nil) -> [UInt8] {
    let nameBytes = Array(name.utf8)
    let length = padTo ?? (nameBytes.isEmpty ? 0 : (nameBytes.count / 16 + 1) * 16)
    var bytes: [UInt8] = []
    for value in [UInt32(bitPattern: watch), mask, cookie, UInt32(length)] {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
    return bytes + nameBytes + Array(repeating: 0, count: length - nameBytes.count)
}

@Suite("inotify's records parsed from any pieces, and what each means", .tags(.unit))
struct InotifyEventsTests {
    /// A buffer of several records of each kind.
    private let buffer: [UInt8] =
        record(watch: 1, mask: InotifyMask.closeWrite, name: "IMG_0001.jpg")
        + record(watch: 1, mask: InotifyMask.movedTo, cookie: 77, name: "photo.heic")
        + record(watch: 2, mask: InotifyMask.create | InotifyMask.isDirectory, name: "DCIM")
        + record(watch: 3, mask: InotifyMask.ignored)
        + record(watch: -1, mask: InotifyMask.queueOverflow)
        + record(watch: 4, mask: InotifyMask.create, name: "not-yet.jpg")
        + record(watch: 4, mask: InotifyMask.closeWrite, name: String(repeating: "n", count: 255))

    /// What `buffer` holds.
    private let expected: [InotifyEvent] = [
        InotifyEvent(watch: 1, mask: 0x8, cookie: 0, nameBytes: Array("IMG_0001.jpg".utf8)),
        InotifyEvent(watch: 1, mask: 0x80, cookie: 77, nameBytes: Array("photo.heic".utf8)),
        InotifyEvent(watch: 2, mask: 0x4000_0100, cookie: 0, nameBytes: Array("DCIM".utf8)),
        InotifyEvent(watch: 3, mask: 0x8000, cookie: 0, nameBytes: []),
        InotifyEvent(watch: -1, mask: 0x4000, cookie: 0, nameBytes: []),
        InotifyEvent(watch: 4, mask: 0x100, cookie: 0, nameBytes: Array("not-yet.jpg".utf8)),
        InotifyEvent(watch: 4, mask: 0x8, cookie: 0, nameBytes: Array(repeating: UInt8(ascii: "n"), count: 255)),
    ]

    @Test("the mask bits are <sys/inotify.h>'s")
    func maskValues() {
        #expect(
            [
                InotifyMask.closeWrite, InotifyMask.movedFrom, InotifyMask.movedTo, InotifyMask.create,
                InotifyMask.delete, InotifyMask.deleteSelf, InotifyMask.moveSelf, InotifyMask.unmount,
                InotifyMask.queueOverflow, InotifyMask.ignored, InotifyMask.isDirectory,
            ] == [0x8, 0x40, 0x80, 0x100, 0x200, 0x400, 0x800, 0x2000, 0x4000, 0x8000, 0x4000_0000])
        #expect(InotifyMask.watched == 0xD88, "close-write, moved-to, create, delete-self, move-self")
    }

    @Test("a whole buffer at once gives every record")
    func wholeBuffer() throws {
        var parser = InotifyEvents()
        #expect(try parser.feed(buffer) == expected)
        #expect(parser.pendingBytes == 0)
    }

    @Test("one byte at a time gives the same events, each when its last byte arrives")
    func byteByByte() throws {
        var parser = InotifyEvents()
        var events: [InotifyEvent] = []
        var completedAt: [Int] = []
        for (i, byte) in buffer.enumerated() {
            let got = try parser.feed([byte])
            if !got.isEmpty { completedAt.append(i + 1) }
            events += got
        }
        #expect(events == expected)
        var ends: [Int] = []
        var end = 0
        for event in expected {
            end += 16 + (event.nameBytes.isEmpty ? 0 : (event.nameBytes.count / 16 + 1) * 16)
            ends.append(end)
        }
        #expect(completedAt == ends)
    }

    @Test("every split into two pieces, and pieces of 3, 7 and 16 bytes, give the same events")
    func pieces() throws {
        for cut in 0...buffer.count {
            var parser = InotifyEvents()
            let events = try parser.feed(buffer[..<cut]) + parser.feed(buffer[cut...])
            #expect(events == expected, "cut at \(cut)")
        }
        for size in [3, 7, 16] {
            var parser = InotifyEvents()
            var events: [InotifyEvent] = []
            for start in stride(from: 0, to: buffer.count, by: size) {
                events += try parser.feed(buffer[start..<min(start + size, buffer.count)])
            }
            #expect(events == expected, "pieces of \(size)")
        }
    }

    @Test("a partial record is held, and nothing comes out until it is complete")
    func partial() throws {
        var parser = InotifyEvents()
        let one = record(watch: 5, mask: InotifyMask.closeWrite, name: "x.jpg")
        #expect(try parser.feed(one.dropLast()) == [])
        #expect(parser.pendingBytes == one.count - 1)
        #expect(try parser.feed([]) == [])
        #expect(try parser.feed(one.suffix(1)).map(\.name) == ["x.jpg"])
        #expect(parser.pendingBytes == 0)
    }

    @Test("the name is its bytes up to the first NUL: padding and what follows a NUL are not the name")
    func nameToNUL() throws {
        var parser = InotifyEvents()
        var bytes = record(watch: 1, mask: InotifyMask.closeWrite, name: "ab", padTo: 8)
        bytes[16 + 3] = UInt8(ascii: "z")  // after the NUL at index 2: not the name
        let noPadding = record(watch: 1, mask: InotifyMask.closeWrite, name: "full", padTo: 4)
        let events = try parser.feed(bytes + noPadding)
        #expect(events.map(\.nameBytes) == [Array("ab".utf8), Array("full".utf8)])
    }

    @Test("a name that is not UTF-8 keeps its bytes; its text replaces them as a folder listing does")
    func nonUTF8Name() throws {
        var parser = InotifyEvents()
        var bytes = record(watch: 1, mask: InotifyMask.closeWrite, name: "a_b.jpg")
        bytes[17] = 0xFF
        let event = try #require(try parser.feed(bytes).first)
        #expect(event.nameBytes == [0x61, 0xFF, 0x62, 0x2E, 0x6A, 0x70, 0x67])
        #expect(event.name == "a\u{FFFD}b.jpg")
    }

    @Test("a name of 4096 bytes is read; 4097 is an error before anything is allocated, and stays one")
    func tooLong() throws {
        var parser = InotifyEvents()
        let longest = record(watch: 1, mask: InotifyMask.closeWrite, name: "x", padTo: 4096)
        #expect(try parser.feed(longest).map(\.name) == ["x"])
        let huge = record(watch: 1, mask: InotifyMask.closeWrite, padTo: 0).dropLast(4) + [0xFF, 0xFF, 0xFF, 0xFF]
        #expect(throws: InotifyParseError(nameLength: 0xFFFF_FFFF)) { try parser.feed(huge) }
        #expect(parser.pendingBytes == 0)
        #expect(throws: InotifyParseError(nameLength: 0xFFFF_FFFF)) { try parser.feed(buffer) }
        let justOver = record(watch: 1, mask: InotifyMask.closeWrite, padTo: 0).dropLast(4) + [0x01, 0x10, 0, 0]
        var fresh = InotifyEvents()
        #expect(throws: InotifyParseError(nameLength: 4097)) { try fresh.feed(justOver) }
        #expect(
            InotifyParseError(nameLength: 4097).description
                == "an inotify record announces a name of 4097 bytes, more than 4096")
    }

    @Test("the error comes with the header's last byte, even when the name never follows")
    func errorAtHeader() throws {
        var parser = InotifyEvents()
        let header = Array(record(watch: 1, mask: InotifyMask.closeWrite, padTo: 0).dropLast(4)) + [0, 0, 0, 0x7F]
        #expect(try parser.feed(header.dropLast()) == [])
        #expect(throws: InotifyParseError(nameLength: 0x7F00_0000)) { try parser.feed(header.suffix(1)) }
    }

    @Test("reset forgets a failure and a partial record: the next byte is a record's first")
    func reset() throws {
        var parser = InotifyEvents()
        let bad = Array(record(watch: 1, mask: 0, padTo: 0).dropLast(4)) + [0xFF, 0xFF, 0, 0]
        #expect(throws: InotifyParseError.self) { try parser.feed(bad) }
        parser.reset()
        #expect(try parser.feed(buffer) == expected)
        _ = try parser.feed(buffer.prefix(20))
        parser.reset()
        #expect(parser.pendingBytes == 0)
        #expect(try parser.feed(buffer) == expected)
    }

    @Test(
        "what each event means to the inbox",
        arguments: [
            (InotifyMask.closeWrite, "x.jpg", InotifyEventKind.fileWritten(watch: 9, name: "x.jpg")),
            (InotifyMask.movedTo, "x.jpg", .fileWritten(watch: 9, name: "x.jpg")),
            (InotifyMask.create | InotifyMask.isDirectory, "DCIM", .folderAppeared(watch: 9, name: "DCIM")),
            (InotifyMask.movedTo | InotifyMask.isDirectory, "DCIM", .folderAppeared(watch: 9, name: "DCIM")),
            (InotifyMask.ignored, "", .folderGone(watch: 9)),
            (InotifyMask.deleteSelf, "", .folderGone(watch: 9)),
            (InotifyMask.moveSelf, "", .other),
            (InotifyMask.unmount, "", .folderGone(watch: 9)),
            (InotifyMask.queueOverflow, "", .overflow),
            (InotifyMask.create, "x.jpg", .other),
            (InotifyMask.delete, "x.jpg", .other),
            (InotifyMask.movedFrom, "x.jpg", .other),
            (InotifyMask.movedFrom | InotifyMask.isDirectory, "DCIM", .other),
            (InotifyMask.delete | InotifyMask.isDirectory, "DCIM", .other),
            (InotifyMask.closeWrite, "", .other),
            (InotifyMask.movedTo | InotifyMask.isDirectory, "", .other),
            (0, "x.jpg", .other),
        ])
    func kinds(_ mask: UInt32, _ name: String, _ kind: InotifyEventKind) {
        #expect(InotifyEvent(watch: 9, mask: mask, cookie: 0, nameBytes: Array(name.utf8)).kind == kind)
    }

    @Test("the parsed buffer's events classified in order")
    func classified() throws {
        var parser = InotifyEvents()
        #expect(
            try parser.feed(buffer).map(\.kind) == [
                .fileWritten(watch: 1, name: "IMG_0001.jpg"), .fileWritten(watch: 1, name: "photo.heic"),
                .folderAppeared(watch: 2, name: "DCIM"), .folderGone(watch: 3), .overflow, .other,
                .fileWritten(watch: 4, name: String(repeating: "n", count: 255)),
            ])
    }
}
