import PTKLibrary
import PTKSystem
import PTKVocabulary
import PTKWeb

extension Photo {
    /// What an EXIF orientation does to the stored pixels to show them.
    public static func orientationText(_ o: Int) -> String {
        [
            "", "as stored", "mirrored", "turned 180°", "flipped upside down", "mirrored and turned 90° anticlockwise",
            "turned 90° clockwise", "mirrored and turned 90° clockwise", "turned 90° anticlockwise",
        ][min(max(o, 0), 8)]
    }

    /// A video's facts on one line (issue 58): "MP4, 1080x1920, 12.5 s, HEVC (hvc1), 29.97
    /// frames/s, 8.1 Mbit/s", with what is known of them.
    var videoLine: String {
        var parts = [type.displayName]
        if width != nil { parts.append(dimensions) }
        if let duration { parts.append(DurationText.spoken(duration)) }
        if let codec, let name = codecName { parts.append(name == codec ? name : "\(name) (\(codec))") }
        if let frameRate { parts.append("\(DurationText.decimal(frameRate, places: 2)) frames/s") }
        if let bitRate { parts.append("\(DurationText.decimal(bitRate / 1_000_000, places: 1)) Mbit/s") }
        if parts.count == 1 { parts.append(indexed ? "facts unknown" : "not indexed yet") }
        return parts.joined(separator: ", ")
    }

    /// What `ptk show` prints and the web interface's photo page shows: (label, value) pairs.
    /// Never the location itself, only whether the photo records one. Its thumbnails and
    /// preview are named in `thumbnailFolder` and the `previews` folder beside it. `sources` are
    /// the inbox files its bytes came from (`PhotoLibrary.inboxSources(ofPhoto:)`), each a
    /// "source" line after the sender; `moreSources` adds one that says there are more.
    /// `livePartner` is the Live Photo's other half (issue 58: the still's motion, or the
    /// motion's still), named on a "live photo" line.
    public func details(
        thumbnailFolder: String, sources: [InboxSourceRecord] = [], moreSources: Bool = false,
        livePartner: Photo? = nil
    ) -> [(String, DetailValue)] {
        var lines: [(String, String)] = [
            ("name", name),
            ("size", "\(formatBytes(Double(size))) (\(size) bytes)"),
            ("sha256", sha256 ?? "(not indexed yet)"),
        ]
        if let livePartner {
            lines.append(
                (
                    "live photo",
                    motionID != nil ? "its video is \(livePartner.name)" : "the video of \(livePartner.name)"
                ))
        }
        if type.isVideo {
            lines.append(("video", videoLine))
        } else if width != nil {
            var image = "\(type.displayName), \(dimensions), \(bitDepth ?? 0)-bit \(colorTypeName ?? "")"
            if interlace == 1 { image += type == .png ? ", interlaced (Adam7)" : ", progressive" }
            if let o = orientation, o > 1 {
                image += " (stored \(storedDimensions), EXIF orientation \(o): \(Photo.orientationText(o)))"
            }
            lines.append(("image", image))
        }
        lines.append(
            (
                "taken",
                taken ?? (indexed ? "(the \(type.isVideo ? "video" : "photo") does not say)" : "(not indexed yet)")
            ))
        let camera = [cameraMake, cameraModel].compactMap { $0 }.joined(separator: " ")
        if !camera.isEmpty { lines.append(("camera", camera)) }
        if hasLocation == true {
            lines.append(("location", "recorded in the \(type.isVideo ? "video" : "photo") (not shown)"))
        }
        // Times become .time values below (shown in the reader's zone).
        if let modified = modified { lines.append(("modified", modified.description)) }
        lines.append(("received", received.description))
        if let name = senderName {
            var sender = "\"\(name)\""
            if let a = senderAddress { sender += " from \(a)" }
            sender += senderID.map { ", device \($0)" } ?? " (plaintext, no device ID)"
            lines.append(("sender", sender))
        } else {
            lines.append(("sender", "(none: found in the directory or imported without one)"))
        }
        // A name from the sender's folder, escaped where it is shown (`ptk show`, the page), as every value.
        for source in sources { lines.append(("source", "inbox " + source.location)) }
        if moreSources { lines.append(("source", "(and more inbox files with the same bytes)")) }
        lines.append(("rating", rating.map { "\($0)/5" } ?? "-"))
        lines.append(("note", note ?? "-"))
        let thumbnail: String
        if hasOldThumbnail, let name = thumbnailFileName(side: Thumbnailer.gallerySides.max()!) {
            // Kept from a schema before 5 until the indexer makes the new ones.
            thumbnail =
                "\(thumbnailFolder)/\(name) (the old thumbnail, at most \(Thumbnailer.maxSide) pixels: being made again)"
        } else if !indexed {
            thumbnail = "(not indexed yet)"
        } else if hasThumbnail {
            // With what was set aside in making it (a colour profile, the EXIF), if anything.
            let files = Thumbnailer.gallerySides.compactMap {
                thumbnailFileName(side: $0).map { "\(thumbnailFolder)/\($0)" }
            }
            thumbnail = files.joined(separator: ", ") + (problem.map { " (\($0))" } ?? "")
        } else {
            thumbnail = "none: \(problem ?? "unknown reason")"
        }
        lines.append(("thumbnail", thumbnail))
        let preview: String
        switch self.preview {
        case _ where !indexed: preview = "(not indexed yet)"
        case .pending: preview = "(coming: made after the thumbnails of what is waiting)"
        case .notNeeded: preview = "none needed (the photo is shown as it is)"
        case .made:
            preview = previewFileName.map { parentDirectory(of: thumbnailFolder) + "/previews/" + $0 } ?? "(made)"
        case .failed(let reason): preview = "none: \(reason)"
        }
        lines.append(("preview", preview))
        return lines.map { key, value in
            switch key {
            case "modified": return (key, modified.map(DetailValue.time) ?? .text(value))
            case "received": return (key, .time(received))
            // With its offset, an instant (shown in the reader's zone); without, the camera's
            // clock as it showed it, whatever the zone.
            case "taken": return (key, taken.flatMap { WallTime(iso8601: $0) }.map(DetailValue.time) ?? .text(value))
            default: return (key, .text(value))
            }
        }
    }
}
