import PTKSystem

/// What a HEIF file must be before libheif is asked to open it (the store's check before a HEIF
/// is kept, the thumbnailer's before any decode): every count bounded (`HEIFLimits`), and every
/// size an image declares more than once in agreement, so that its `ispe`, on which the
/// decoding budget is checked, is the most any decode of it allocates. libheif 1.15 allocates
/// a grid's or an overlay's output from its own description and a coded image from its
/// sequence parameter set (in `hvcC`, or in its data, which overrides it), whatever `ispe` says.
///
/// The images libheif decodes for ptk are checked: the primary, its thumbnails and auxiliary
/// images (alpha, depth, gain maps), and the tiles and layers they are made of. Each must be an
/// HEVC image (`hvc1`) or a grid or overlay of HEVC images:
/// - a grid's and an overlay's output size is its `ispe`;
/// - a grid has `rows x columns` tiles (at most `HEIFLimits.tiles`), all of one size, that
///   cover its output without a spare row or column; an overlay's images each fit its canvas;
/// - a coded image's `ispe` is there, and every sequence parameter set it carries declares at
///   most its `ispe` plus `HEIFLimits.codedMargin` on each side (either way round).
public enum HEIFCheck {
    /// Reads exactly `count` bytes at `offset`, or throws.
    public typealias Read = (_ offset: Int64, _ count: Int) throws(FormatError) -> [UInt8]

    /// Why libheif must not be given the HEIF file in `fd`, or nil when it may. Reads with
    /// pread: the descriptor's offset is left as it is.
    public static func problem(in fd: FileDescriptor) -> String? {
        let size: Int64
        do { size = try fd.status().size } catch { return "cannot read its status: \(error)" }
        do {
            try check(size: size) { (offset, count) throws(FormatError) -> [UInt8] in
                var out = [UInt8](repeating: 0, count: count)
                var done = 0
                while done < count {
                    let n: Int
                    do {
                        n = try out.withUnsafeMutableBytes { b throws(SystemError) in
                            try fd.read(fromAbsoluteOffset: offset + Int64(done), into: UnsafeMutableRawBufferPointer(rebasing: b[done...]))
                        }
                    } catch { throw FormatError("cannot read it: \(error)") }
                    guard n > 0 else { throw FormatError("the file ends at byte \(offset + Int64(done)), inside what its boxes describe") }
                    done += n
                }
                return out
            }
        } catch {
            return error.message
        }
        return nil
    }

    /// Throws why the HEIF file of `size` bytes that `read` reads must not be opened.
    public static func check(size: Int64, read: @escaping Read) throws(FormatError) {
        let meta = try metaBox(size: size, read: read)
        let items = try HEIFItems(meta: meta)
        var checker = Checker(items: items, size: size, read: read)
        try checker.run()
    }

    /// The content of the file's meta box, found among at most `HEIFLimits.topLevelBoxes`.
    private static func metaBox(size: Int64, read: Read) throws(FormatError) -> [UInt8] {
        var at: Int64 = 0
        var boxes = 0
        var meta: (Int64, Int64)?
        while at < size {
            boxes += 1
            guard boxes <= HEIFLimits.topLevelBoxes else { throw FormatError("over \(HEIFLimits.topLevelBoxes) boxes at the top level") }
            let head = try read(at, Int(min(16, size - at)))
            guard head.count >= 8 else { throw FormatError("\(head.count) stray bytes at the end") }
            let size32 = head[0..<4].reduce(0) { $0 << 8 | UInt64($1) }
            var length = Int64(size32)
            var header: Int64 = 8
            if size32 == 1 {
                guard head.count == 16 else { throw FormatError("a box's 64-bit size is cut off") }
                let large = head[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
                guard large <= UInt64(Int64.max) else { throw FormatError("a box of \(large) bytes") }
                length = Int64(large)
                header = 16
            } else if size32 == 0 {
                length = size - at
            }
            guard length >= header, length <= size - at else { throw FormatError("a box of \(length) bytes at byte \(at) does not fit in the file") }
            if head[4..<8].elementsEqual("meta".utf8) {
                guard meta == nil else { throw FormatError("a second meta box") }
                meta = (at + header, length - header)
            }
            at += length
        }
        guard let (start, length) = meta else { throw FormatError("no meta box (the images' descriptions)") }
        guard length <= HEIFValidator.metaLimit else { throw FormatError("meta box of \(length) bytes is over the 16 MiB limit") }
        return try read(start, Int(length))
    }

    /// The checks of one file's items.
    private struct Checker {
        let items: HEIFItems
        let size: Int64
        let read: Read
        /// NAL units read so far in the file.
        var nalUnits = 0

        init(items: HEIFItems, size: Int64, read: @escaping Read) {
            self.items = items
            self.size = size
            self.read = read
        }

        mutating func run() throws(FormatError) {
            guard let primary = items.primary, items.items[primary] != nil else { throw FormatError("no primary item") }
            // The images libheif decodes for ptk, and what each is, for the messages.
            var roles: [UInt32: String] = [primary: "the primary image"]
            var queue = [primary]
            for thumbnail in items.referring(to: primary, by: "thmb") where roles[thumbnail] == nil {
                roles[thumbnail] = "a thumbnail"
                queue.append(thumbnail)
            }
            while let id = queue.popLast() {
                let parts = items.referred(from: id, by: "dimg").map { ($0, "a part of item \(id)") }
                let auxiliaries = items.referring(to: id, by: "auxl").map { ($0, "an auxiliary image of item \(id)") }
                for (other, role) in parts + auxiliaries where roles[other] == nil {
                    roles[other] = role
                    queue.append(other)
                }
            }
            // Derived images first: a grid's size is judged before its tiles are read.
            let ordered = roles.keys.sorted { (isDerived($0) ? 0 : 1, $0) < (isDerived($1) ? 0 : 1, $1) }
            for id in ordered {
                guard let item = items.items[id] else { throw FormatError("item \(id) (\(roles[id]!)) is not described in iinf") }
                switch item.type {
                case "hvc1": try checkCoded(item)
                case "grid": try checkGrid(item)
                case "iovl": try checkOverlay(item)
                default:
                    throw FormatError("item \(id) (\(roles[id]!)) is of type '\(item.type)': only HEVC images, grids and overlays are read")
                }
            }
        }

        private func isDerived(_ id: UInt32) -> Bool { ["grid", "iovl"].contains(items.items[id]?.type ?? "") }

        private func ispe(_ id: UInt32) throws(FormatError) -> (width: UInt64, height: UInt64) {
            guard let body = items.property("ispe", of: id) else { throw FormatError("image item \(id) has no ispe (its size)") }
            var r = ByteReader(Array(body), 0..<body.count, box: "ispe")
            _ = try r.u32()
            return (UInt64(try r.u32()), UInt64(try r.u32()))
        }

        /// A grid (ISO/IEC 23008-12 section 6.6.2.3): version, flags, rows - 1, columns - 1,
        /// output width and height (32 bits with flag 1, else 16).
        private func checkGrid(_ item: HEIFItems.Item) throws(FormatError) {
            let data = try itemData(item, upTo: 64)
            var r = ByteReader(data, 0..<data.count, box: "grid description of item \(item.id)")
            guard try r.u8() == 0 else { throw FormatError("grid item \(item.id) of an unknown version") }
            let wide = try r.u8() & 1 != 0
            let rows = UInt64(try r.u8()) + 1, columns = UInt64(try r.u8()) + 1
            let width = try r.uint(wide ? 4 : 2), height = try r.uint(wide ? 4 : 2)
            let declared = try ispe(item.id)
            guard (width, height) == declared else {
                throw FormatError("grid item \(item.id) makes a \(width)x\(height) image, its ispe says \(declared.width)x\(declared.height)")
            }
            guard rows * columns <= UInt64(HEIFLimits.tiles) else {
                throw FormatError("grid item \(item.id) of \(rows) x \(columns) tiles is over the \(HEIFLimits.tiles)-tile limit")
            }
            let tiles = items.referred(from: item.id, by: "dimg")
            guard tiles.count == Int(rows * columns) else {
                throw FormatError("grid item \(item.id) of \(rows) x \(columns) names \(tiles.count) tiles")
            }
            var tileSize: (width: UInt64, height: UInt64)?
            for tile in tiles {
                guard items.items[tile]?.type == "hvc1" else { throw FormatError("a tile of grid item \(item.id) is not an HEVC image") }
                let size = try ispe(tile)
                if let tileSize, tileSize != size {
                    throw FormatError("the tiles of grid item \(item.id) are of different sizes (\(tileSize.width)x\(tileSize.height), \(size.width)x\(size.height))")
                }
                tileSize = size
            }
            // The tiles cover the output, with no row or column wholly outside it.
            guard let t = tileSize, t.width > 0, t.height > 0, columns * t.width >= width, (columns - 1) * t.width < width,
                  rows * t.height >= height, (rows - 1) * t.height < height else {
                throw FormatError("grid item \(item.id): \(rows) x \(columns) tiles of \(tileSize.map { "\($0.width)x\($0.height)" } ?? "no size") do not make \(width)x\(height)")
            }
        }

        /// An overlay (ISO/IEC 23008-12 section 6.6.2.4): version, flags, four fill values,
        /// output width and height, then each image's offset (32 bits with flag 1, else 16).
        private func checkOverlay(_ item: HEIFItems.Item) throws(FormatError) {
            let layers = items.referred(from: item.id, by: "dimg")
            guard !layers.isEmpty, layers.count <= HEIFLimits.tiles else {
                throw FormatError("overlay item \(item.id) of \(layers.count) images (1 to \(HEIFLimits.tiles) allowed)")
            }
            let data = try itemData(item, upTo: 18 + 8 * layers.count)
            var r = ByteReader(data, 0..<data.count, box: "overlay description of item \(item.id)")
            guard try r.u8() == 0 else { throw FormatError("overlay item \(item.id) of an unknown version") }
            let wide = try r.u8() & 1 != 0
            _ = try r.take(8)
            let width = try r.uint(wide ? 4 : 2), height = try r.uint(wide ? 4 : 2)
            _ = try r.take(layers.count * (wide ? 8 : 4))
            let declared = try ispe(item.id)
            guard (width, height) == declared else {
                throw FormatError("overlay item \(item.id) makes a \(width)x\(height) image, its ispe says \(declared.width)x\(declared.height)")
            }
            for layer in layers {
                guard items.items[layer]?.type == "hvc1" else { throw FormatError("an image of overlay item \(item.id) is not an HEVC image") }
                let size = try ispe(layer)
                guard size.width <= width, size.height <= height else {
                    throw FormatError("overlay item \(item.id) of \(width)x\(height) holds a \(size.width)x\(size.height) image")
                }
            }
        }

        /// An HEVC image: every sequence parameter set it carries, in `hvcC` and in its data,
        /// declares at most its `ispe` (plus the coding margin).
        private mutating func checkCoded(_ item: HEIFItems.Item) throws(FormatError) {
            let declared = try ispe(item.id)
            guard let hvcC = items.property("hvcC", of: item.id) else { throw FormatError("HEVC item \(item.id) has no hvcC (its decoder configuration)") }
            let configuration = try HEVCPictureSize.configuration(hvcC)
            for sps in configuration.sps { try checkSize(sps, of: item.id, declared) }
            // Its data: NAL units, each after its length. A length that runs past the data ends
            // the walk (libheif stops there too, with an error).
            let data = try segments(item)
            let total = data.reduce(0) { $0 + $1.length }
            var at: Int64 = 0
            var count = 0
            let lengthSize = Int64(configuration.lengthSize)
            while total - at >= lengthSize + 2 {
                count += 1
                nalUnits += 1
                guard count <= HEIFLimits.nalUnitsPerImage else { throw FormatError("HEVC item \(item.id) holds over \(HEIFLimits.nalUnitsPerImage) NAL units") }
                guard nalUnits <= HEIFLimits.nalUnits else { throw FormatError("over \(HEIFLimits.nalUnits) NAL units in the file") }
                let length = Int64(try readData(data, at, Int(lengthSize)).reduce(0) { $0 << 8 | UInt64($1) })
                at += lengthSize
                guard length >= 2, length <= total - at else { break }
                let header = try readData(data, at, 1)[0]
                if HEVCPictureSize.type(ofHeader: header) == HEVCPictureSize.spsType {
                    try checkSize(ArraySlice(try readData(data, at, Int(min(length, 1024)))), of: item.id, declared)
                }
                at += length
            }
        }

        private func checkSize(_ sps: ArraySlice<UInt8>, of id: UInt32, _ declared: (width: UInt64, height: UInt64)) throws(FormatError) {
            let coded = try HEVCPictureSize.of(sps: sps)
            // Compared side for side, the shorter with the shorter: libheif 1.15 writes the ispe
            // of an image it turns (irot) turned, which the standard says it is not.
            let (codedShort, codedLong) = (min(coded.width, coded.height), max(coded.width, coded.height))
            let (short, long) = (min(declared.width, declared.height), max(declared.width, declared.height))
            guard codedShort <= short + HEIFLimits.codedMargin, codedLong <= long + HEIFLimits.codedMargin else {
                throw FormatError("HEVC item \(id) is coded \(coded.width)x\(coded.height), its ispe says \(declared.width)x\(declared.height)")
            }
        }

        /// Where an item's data is: pieces of the file (`idat` false) or of idat.
        private struct Segment {
            var inIdat: Bool
            var start: Int64
            var length: Int64
        }

        private func segments(_ item: HEIFItems.Item) throws(FormatError) -> [Segment] {
            guard let location = item.location else { throw FormatError("item \(item.id) has no data (iloc does not place it)") }
            let inIdat: Bool
            let limit: Int64
            switch location.method {
            case 0:
                inIdat = false
                limit = size
            case 1:
                guard let idat = items.idat else { throw FormatError("item \(item.id) is in idat, and there is none") }
                inIdat = true
                limit = Int64(idat.count)
            default:
                throw FormatError("item \(item.id) is made from other items' data (construction method \(location.method))")
            }
            var out: [Segment] = []
            for extent in location.extents {
                let (start, overflow) = location.baseOffset.addingReportingOverflow(extent.offset)
                guard !overflow, start <= UInt64(limit) else { throw FormatError("item \(item.id)'s data starts past the end of \(inIdat ? "idat" : "the file")") }
                let length = extent.length == 0 ? UInt64(limit) - start : extent.length
                guard length <= UInt64(limit) - start else { throw FormatError("item \(item.id)'s data runs past the end of \(inIdat ? "idat" : "the file")") }
                out.append(Segment(inIdat: inIdat, start: Int64(start), length: Int64(length)))
            }
            return out
        }

        /// The first `limit` bytes of an item's data (all of it when shorter).
        private func itemData(_ item: HEIFItems.Item, upTo limit: Int) throws(FormatError) -> [UInt8] {
            let data = try segments(item)
            let total = data.reduce(0) { $0 + $1.length }
            return try readData(data, 0, Int(min(total, Int64(limit))))
        }

        /// `count` bytes at `offset` in the data made of `segments`.
        private func readData(_ segments: [Segment], _ offset: Int64, _ count: Int) throws(FormatError) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(count)
            var skip = offset
            for s in segments where out.count < count {
                if skip >= s.length {
                    skip -= s.length
                    continue
                }
                let n = Int(min(s.length - skip, Int64(count - out.count)))
                if s.inIdat, let idat = items.idat {
                    let from = idat.lowerBound + Int(s.start + skip)
                    out += items.bytes[from..<from + n]
                } else {
                    out += try read(s.start + skip, n)
                }
                skip = 0
            }
            guard out.count == count else { throw FormatError("an item's data ends inside a field") }
            return out
        }
    }
}
