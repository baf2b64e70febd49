import PTKSystem

/// What a HEIF file must be before libheif is asked to open it (the store's check before a HEIF
/// is kept, the thumbnailer's before any decode): every count bounded (`HEIFLimits`), and every
/// size an image declares in agreement, so that what the decoding budget is checked against is
/// the most any decode of it allocates. libheif 1.15 allocates a grid's or an overlay's output
/// from its own description and a coded image from its sequence parameter set (in `hvcC`, or
/// in its data, which overrides it), whatever `ispe` says; of two `ispe` it takes the last
/// (this check would take the first), and its handle's size is what a `clap` crops to, not
/// what is decoded.
///
/// The images libheif decodes for ptk are checked: the primary, its thumbnails and auxiliary
/// images (alpha, depth, gain maps), and the tiles and layers they are made of. Each must be an
/// HEVC image (`hvc1`) or a grid or overlay of HEVC images, with at most one of each property
/// libheif reads for it (`ispe`, `hvcC`, `clap`, `irot`, `imir`, `pixi`, `auxC`: libheif takes
/// some first and some last), and:
/// - a grid's and an overlay's output size is its `ispe`;
/// - a grid has `rows x columns` tiles (at most `HEIFLimits.tiles`), all of one size, that
///   cover its output without a spare row or column; an overlay's images each fit its canvas;
/// - an auxiliary image is no larger than its image;
/// - a coded image's `ispe` is there; its NAL units, those of `hvcC` then those of its data
///   walked as libheif hands them to libde265 (4-byte lengths whatever `hvcC` says), are each
///   at least a header long; every sequence parameter set among them declares at most its
///   `ispe` plus `HEIFLimits.codedMargin` on each side (either way round); and they make one
///   picture (libde265 decodes every picture it is given).
/// The file's `Report` says what a decode may cost.
public enum HEIFCheck {
    /// Reads exactly `count` bytes at `offset`, or throws.
    public typealias Read = (_ offset: Int64, _ count: Int) throws(FormatError) -> [UInt8]

    /// Throws why the HEIF file of `size` bytes that `read` reads must not be opened; else
    /// what decoding it costs.
    @discardableResult
    public static func check(size: Int64, read: @escaping Read) throws(FormatError) -> Report {
        let meta = try metaBox(size: size, read: read)
        let items = try HEIFItems(meta: meta)
        var checker = Checker(items: items, size: size, read: read)
        return try checker.run()
    }

    /// The content of the file's meta box, found among at most `HEIFLimits.topLevelBoxes`.
    private static func metaBox(size: Int64, read: Read) throws(FormatError) -> [UInt8] {
        let meta = try ISOFile.onlyBox("meta", size: size, read: read, limit: HEIFLimits.topLevelBoxes)
        guard let (start, length) = meta else { throw FormatError("no meta box (the images' descriptions)") }
        guard length <= HEIFValidator.metaLimit else {
            throw FormatError("meta box of \(length) bytes is over the 16 MiB limit")
        }
        return try read(start, Int(length))
    }

    /// The checks of one file's items.
    private struct Checker {
        let items: HEIFItems
        let size: Int64
        let read: Read
        /// NAL units read so far in the file.
        var nalUnits = 0
        /// The most pixels each image checked so far declares (its own parts' aside).
        var pixels: [UInt32: UInt64] = [:]
        /// The slice segments of each coded image checked so far.
        var slices: [UInt32: Int] = [:]

        /// The properties libheif 1.15 reads for an image and takes one of: `ispe` (the last),
        /// `hvcC` and `pixi` (the first), `clap`, `irot`, `imir` (each applied, in order),
        /// `auxC` (the last). Two of one would leave this check and libheif reading different ones.
        static let single = ["ispe", "hvcC", "clap", "irot", "imir", "pixi", "auxC"]

        init(items: HEIFItems, size: Int64, read: @escaping Read) {
            self.items = items
            self.size = size
            self.read = read
        }

        mutating func run() throws(FormatError) -> Report {
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
                guard let item = items.items[id] else {
                    throw FormatError("item \(id) (\(roles[id]!)) is not described in iinf")
                }
                for type in Self.single where items.count(type, of: id) > 1 {
                    throw FormatError(
                        "item \(id) (\(roles[id]!)) has \(items.count(type, of: id)) \(type) properties (one is allowed)"
                    )
                }
                switch item.type {
                case "hvc1": try checkCoded(item)
                case "grid": try checkGrid(item)
                case "iovl": try checkOverlay(item)
                default:
                    throw FormatError(
                        "item \(id) (\(roles[id]!)) is of type '\(item.type)': only HEVC images, grids and overlays are read"
                    )
                }
            }
            // An auxiliary image is decoded with its image (libheif 1.15 takes one as alpha when
            // its shown size is the image's, which a clap can make of any size).
            for id in ordered {
                for auxiliary in items.referring(to: id, by: "auxl") {
                    let (a, i) = (try ispe(auxiliary), try ispe(id))
                    guard min(a.width, a.height) <= min(i.width, i.height),
                        max(a.width, a.height) <= max(i.width, i.height)
                    else {
                        throw FormatError(
                            "auxiliary image \(auxiliary) of \(a.width)x\(a.height) is larger than its image \(id) of \(i.width)x\(i.height)"
                        )
                    }
                }
            }
            var report = Report()
            // The primary image's decode: it, its parts, its auxiliary images and theirs.
            var decoded: Set<UInt32> = [primary]
            var next = [primary]
            while let id = next.popLast() {
                report.pixels = max(report.pixels, pixels[id] ?? 0)
                if items.items[id]?.type == "iovl" {
                    // Layers of the largest ispe add up past UInt64: more than any budget, not a trap.
                    report.pixels = max(
                        report.pixels,
                        items.referred(from: id, by: "dimg").reduce(0) { sum, layer in
                            let (total, overflow) = sum.addingReportingOverflow(pixels[layer] ?? 0)
                            return overflow ? .max : total
                        })
                }
                for other in items.referred(from: id, by: "dimg") + items.referring(to: id, by: "auxl")
                where decoded.insert(other).inserted {
                    next.append(other)
                }
            }
            if let (id, count) = slices.filter({ $0.value > HEIFLimits.slicesPerImage }).min(by: { $0.key < $1.key }) {
                report.decodeProblem =
                    "HEVC item \(id) is coded in \(count) slice segments, over the \(HEIFLimits.slicesPerImage) a thumbnail is decoded from (each may cost a decode of the whole picture)"
            }
            return report
        }

        private func isDerived(_ id: UInt32) -> Bool { ["grid", "iovl"].contains(items.items[id]?.type ?? "") }

        private func ispe(_ id: UInt32) throws(FormatError) -> (width: UInt64, height: UInt64) {
            guard let body = items.property("ispe", of: id) else {
                throw FormatError("image item \(id) has no ispe (its size)")
            }
            var r = ByteReader(Array(body), 0..<body.count, box: "ispe")
            _ = try r.u32()
            return (UInt64(try r.u32()), UInt64(try r.u32()))
        }

        /// A grid (ISO/IEC 23008-12 section 6.6.2.3): version, flags, rows - 1, columns - 1,
        /// output width and height (32 bits with flag 1, else 16).
        private mutating func checkGrid(_ item: HEIFItems.Item) throws(FormatError) {
            let data = try itemData(item, upTo: 64)
            var r = ByteReader(data, 0..<data.count, box: "grid description of item \(item.id)")
            guard try r.u8() == 0 else { throw FormatError("grid item \(item.id) of an unknown version") }
            let wide = try r.u8() & 1 != 0
            let rows = UInt64(try r.u8()) + 1
            let columns = UInt64(try r.u8()) + 1
            let width = try r.uint(wide ? 4 : 2)
            let height = try r.uint(wide ? 4 : 2)
            let declared = try ispe(item.id)
            guard (width, height) == declared else {
                throw FormatError(
                    "grid item \(item.id) makes a \(width)x\(height) image, its ispe says \(declared.width)x\(declared.height)"
                )
            }
            pixels[item.id] = width * height
            guard rows * columns <= UInt64(HEIFLimits.tiles) else {
                throw FormatError(
                    "grid item \(item.id) of \(rows) x \(columns) tiles is over the \(HEIFLimits.tiles)-tile limit")
            }
            let tiles = items.referred(from: item.id, by: "dimg")
            guard tiles.count == Int(rows * columns) else {
                throw FormatError("grid item \(item.id) of \(rows) x \(columns) names \(tiles.count) tiles")
            }
            var tileSize: (width: UInt64, height: UInt64)?
            for tile in tiles {
                guard items.items[tile]?.type == "hvc1" else {
                    throw FormatError("a tile of grid item \(item.id) is not an HEVC image")
                }
                let size = try ispe(tile)
                if let tileSize, tileSize != size {
                    throw FormatError(
                        "the tiles of grid item \(item.id) are of different sizes (\(tileSize.width)x\(tileSize.height), \(size.width)x\(size.height))"
                    )
                }
                tileSize = size
            }
            // The tiles cover the output, with no row or column wholly outside it.
            guard let t = tileSize, t.width > 0, t.height > 0, columns * t.width >= width,
                (columns - 1) * t.width < width,
                rows * t.height >= height, (rows - 1) * t.height < height
            else {
                throw FormatError(
                    "grid item \(item.id): \(rows) x \(columns) tiles of \(tileSize.map { "\($0.width)x\($0.height)" } ?? "no size") do not make \(width)x\(height)"
                )
            }
        }

        /// An overlay (ISO/IEC 23008-12 section 6.6.2.4): version, flags, four fill values,
        /// output width and height, then each image's offset (32 bits with flag 1, else 16).
        private mutating func checkOverlay(_ item: HEIFItems.Item) throws(FormatError) {
            let layers = items.referred(from: item.id, by: "dimg")
            guard !layers.isEmpty, layers.count <= HEIFLimits.tiles else {
                throw FormatError(
                    "overlay item \(item.id) of \(layers.count) images (1 to \(HEIFLimits.tiles) allowed)")
            }
            // libheif decodes each reference: one layer named 1,024 times costs 1,024 decodes
            // from a file the size of one image, and drawing it again in the same place adds nothing.
            guard Set(layers).count == layers.count else {
                throw FormatError("overlay item \(item.id) names the same image more than once")
            }
            let data = try itemData(item, upTo: 18 + 8 * layers.count)
            var r = ByteReader(data, 0..<data.count, box: "overlay description of item \(item.id)")
            guard try r.u8() == 0 else { throw FormatError("overlay item \(item.id) of an unknown version") }
            let wide = try r.u8() & 1 != 0
            _ = try r.take(8)
            let width = try r.uint(wide ? 4 : 2)
            let height = try r.uint(wide ? 4 : 2)
            _ = try r.take(layers.count * (wide ? 8 : 4))
            let declared = try ispe(item.id)
            guard (width, height) == declared else {
                throw FormatError(
                    "overlay item \(item.id) makes a \(width)x\(height) image, its ispe says \(declared.width)x\(declared.height)"
                )
            }
            pixels[item.id] = width * height
            for layer in layers {
                guard items.items[layer]?.type == "hvc1" else {
                    throw FormatError("an image of overlay item \(item.id) is not an HEVC image")
                }
                let size = try ispe(layer)
                guard size.width <= width, size.height <= height else {
                    throw FormatError(
                        "overlay item \(item.id) of \(width)x\(height) holds a \(size.width)x\(size.height) image")
                }
            }
        }

        /// An HEVC image: its NAL units as libde265 gets them, those of `hvcC` first, then its
        /// data's, which libheif 1.15 walks with 4-byte lengths whatever `hvcC` says. Each is at
        /// least its 2-byte header (libde265 would read a shorter one as some unit); every
        /// sequence parameter set declares at most its `ispe` (plus the coding margin); at most
        /// one slice segment starts a picture. Where a length runs past the data, or bytes too
        /// few for a length are left at its end, libheif gives up on the image before the
        /// decoder sees any of it (`push_data` fails, `decode_image` is not called): the walk
        /// stops there too, and the file is left to libheif (a damaged thumbnail item does not
        /// cost the photo).
        private mutating func checkCoded(_ item: HEIFItems.Item) throws(FormatError) {
            let declared = try ispe(item.id)
            guard let hvcC = items.property("hvcC", of: item.id) else {
                throw FormatError("HEVC item \(item.id) has no hvcC (its decoder configuration)")
            }
            let configuration = try HEVCPictureSize.configuration(hvcC)
            var picture = Picture(item: item.id, declared: declared)
            for unit in configuration.units {
                try count(item.id, &picture)
                guard unit.count >= 2 else {
                    throw FormatError(
                        "the hvcC of HEVC item \(item.id) holds a NAL unit of 1 byte, too short for its header")
                }
                try picture.add(HEVCUnit(unit))
            }
            let data = try segments(item)
            let total = data.reduce(0) { $0 + $1.length }
            var at: Int64 = 0
            while total - at >= 4 {
                try count(item.id, &picture)
                let length = Int64(try readData(data, at, 4).reduce(0) { $0 << 8 | UInt64($1) })
                at += 4
                guard length <= total - at else { break }
                guard length >= 2 else {
                    let note =
                        configuration.lengthSize == 4
                        ? ""
                        : " (hvcC says \(configuration.lengthSize)-byte NAL unit lengths; libheif 1.15 reads 4-byte ones)"
                    throw FormatError(
                        "HEVC item \(item.id) holds a NAL unit of \(length) bytes, too short for its header\(note)")
                }
                // The header and the slice flag, or a parameter set's first fields.
                var unit = HEVCUnit(try readData(data, at, Int(min(length, 8)))[...])
                if unit.type == HEVCUnit.spsType, length > 8 {
                    unit = HEVCUnit(try readData(data, at, Int(min(length, 1024)))[...])
                }
                try picture.add(unit)
                at += length
            }
            guard picture.pictures <= 1 else {
                throw FormatError("HEVC item \(item.id) holds \(picture.pictures) pictures (an image is one)")
            }
            pixels[item.id] = picture.largest
            slices[item.id] = picture.slices
        }

        /// Counts one more NAL unit of an image, within the image's and the file's limits.
        private mutating func count(_ id: UInt32, _ picture: inout Picture) throws(FormatError) {
            picture.units += 1
            nalUnits += 1
            guard picture.units <= HEIFLimits.nalUnitsPerImage else {
                throw FormatError("HEVC item \(id) holds over \(HEIFLimits.nalUnitsPerImage) NAL units")
            }
            guard nalUnits <= HEIFLimits.nalUnits else {
                throw FormatError("over \(HEIFLimits.nalUnits) NAL units in the file")
            }
        }

        /// What one coded image's NAL units declare.
        private struct Picture {
            let item: UInt32
            let declared: (width: UInt64, height: UInt64)
            var units = 0
            var slices = 0
            var pictures = 0
            /// The most pixels its ispe or a sequence parameter set declares.
            var largest: UInt64

            init(item: UInt32, declared: (width: UInt64, height: UInt64)) {
                self.item = item
                self.declared = declared
                largest = declared.width * declared.height
            }

            mutating func add(_ unit: HEVCUnit) throws(FormatError) {
                if unit.type == HEVCUnit.spsType {
                    let coded = try HEVCPictureSize.of(sps: unit)
                    // Compared side for side, the shorter with the shorter: libheif 1.15 writes the ispe
                    // of an image it turns (irot) turned, which the standard says it is not.
                    let (codedShort, codedLong) = (min(coded.width, coded.height), max(coded.width, coded.height))
                    let (short, long) = (min(declared.width, declared.height), max(declared.width, declared.height))
                    guard codedShort <= short + HEIFLimits.codedMargin, codedLong <= long + HEIFLimits.codedMargin
                    else {
                        throw FormatError(
                            "HEVC item \(item) is coded \(coded.width)x\(coded.height), its ispe says \(declared.width)x\(declared.height)"
                        )
                    }
                    // Sides of 33 bits (an ispe of 0xFFFFFFFF plus the margin) multiply past
                    // UInt64: more than any budget, not a trap.
                    let (codedPixels, overflow) = coded.width.multipliedReportingOverflow(by: coded.height)
                    largest = max(largest, overflow ? .max : codedPixels)
                } else if unit.isSlice {
                    slices += 1
                    if unit.startsPicture == true { pictures += 1 }
                }
            }
        }

        /// Where an item's data is: pieces of the file (`idat` false) or of idat.
        private struct Segment {
            var inIdat: Bool
            var start: Int64
            var length: Int64
        }

        private func segments(_ item: HEIFItems.Item) throws(FormatError) -> [Segment] {
            guard let location = item.location else {
                throw FormatError("item \(item.id) has no data (iloc does not place it)")
            }
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
                throw FormatError(
                    "item \(item.id) is made from other items' data (construction method \(location.method))")
            }
            var out: [Segment] = []
            for extent in location.extents {
                let (start, overflow) = location.baseOffset.addingReportingOverflow(extent.offset)
                guard !overflow, start <= UInt64(limit) else {
                    throw FormatError("item \(item.id)'s data starts past the end of \(inIdat ? "idat" : "the file")")
                }
                let length = extent.length == 0 ? UInt64(limit) - start : extent.length
                guard length <= UInt64(limit) - start else {
                    throw FormatError("item \(item.id)'s data runs past the end of \(inIdat ? "idat" : "the file")")
                }
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
