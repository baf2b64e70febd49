import FoundationEssentials
import PTKProtocol
import PTKVocabulary

/// A device as LocalSend describes itself: in announcements, `register` calls and answers,
/// `info` answers and a `prepare-upload`'s `info`. Only `alias` is required; the apps leave
/// out or null any other field.
public struct DeviceInfo: Codable, Sendable, Equatable {
    /// The name the device shows; the only field the apps always send.
    public var alias: String
    /// The protocol version, "major.minor" (2.0, 2.1 and 2.2 are in use).
    public var version: String?
    /// A free-form model name ("iPhone", "ptkd"), shown only.
    public var deviceModel: String?
    /// mobile, desktop, web, headless or server.
    public var deviceType: String?
    /// The SHA-256 of the device's certificate (HTTPS), or a random string (HTTP).
    public var fingerprint: String?
    /// The port its server listens on; nil means LocalSend's default, 53317.
    public var port: Int?
    /// `http` or `https`.
    public var `protocol`: String?
    /// Whether the device serves its files for download (ptkd: false).
    public var download: Bool?
    /// In multicast messages: true for an announcement (which asks for answers), false for an answer.
    public var announce: Bool?
    /// What apps before protocol 2.0 read instead of `announce`.
    public var announcement: Bool?

    /// Every field but `alias` is optional and left out of the JSON when nil.
    public init(
        alias: String, version: String? = nil, deviceModel: String? = nil, deviceType: String? = nil,
        fingerprint: String? = nil, port: Int? = nil, protocol: String? = nil, download: Bool? = nil,
        announce: Bool? = nil, announcement: Bool? = nil
    ) {
        self.alias = alias
        self.version = version
        self.deviceModel = deviceModel
        self.deviceType = deviceType
        self.fingerprint = fingerprint
        self.port = port
        self.protocol = `protocol`
        self.download = download
        self.announce = announce
        self.announcement = announcement
    }

    /// Whether a multicast message asks for answers.
    public var asksForAnswers: Bool { announce ?? announcement ?? false }
}

/// One file of a `prepare-upload`.
public struct FileInfo: Codable, Sendable, Equatable {
    /// The sender's ID for the file, the key of `files` and of the token it gets.
    public var id: String
    /// The name on the sender; the receiver makes its own from it.
    public var fileName: String
    /// The size in bytes; the upload must bring exactly that many.
    public var size: Int64
    /// A MIME type (`image/png`); apps before 2.0 sent `image`, `video`, ...
    public var fileType: String
    /// Hex, either case; nil when the app did not compute it.
    public var sha256: String?
    /// A thumbnail some apps send; ptkd ignores it.
    public var preview: String?

    /// `fileType` without parameters (such as `; charset`), in lower case: "image/jpeg".
    public var mediaType: String {
        fileType.split(separator: ";").first.map { $0.trimmingSpaces.lowercased() } ?? ""
    }

    /// The sender's file times: `modified` and `accessed`, ISO 8601 (LocalSend 2.1; optional).
    public var metadata: FileTimes?

    /// The `metadata` object of LocalSend 2.1: times as the sender's file system has them.
    public struct FileTimes: Codable, Sendable, Equatable {
        /// ISO 8601 text, as the app sent it; not checked here.
        public var modified: String?
        /// ISO 8601 text, as the app sent it; ptkd does not use it.
        public var accessed: String?
        /// Nil fields are left out of the JSON.
        public init(modified: String? = nil, accessed: String? = nil) {
            self.modified = modified
            self.accessed = accessed
        }
    }

    /// Optional fields nil are left out of the JSON.
    public init(
        id: String, fileName: String, size: Int64, fileType: String, sha256: String? = nil, preview: String? = nil,
        metadata: FileTimes? = nil
    ) {
        self.metadata = metadata
        self.id = id
        self.fileName = fileName
        self.size = size
        self.fileType = fileType
        self.sha256 = sha256
        self.preview = preview
    }
}

/// The body of `POST /api/localsend/v2/prepare-upload`.
public struct PrepareUploadRequest: Codable, Sendable, Equatable {
    /// Who sends.
    public var info: DeviceInfo
    /// The files offered, by their ID; `validate()` checks what decoding cannot.
    public var files: [String: FileInfo]
    /// The fields as given; not checked.
    public init(info: DeviceInfo, files: [String: FileInfo]) {
        self.info = info
        self.files = files
    }
}

/// The 200 answer to a `prepare-upload`: a token for each accepted file.
public struct PrepareUploadResponse: Codable, Sendable, Equatable {
    /// The session's ID, which each upload and `cancel` names.
    public var sessionId: String
    /// File ID to upload token, for the accepted files only.
    public var files: [String: String]
    /// The fields as given.
    public init(sessionId: String, files: [String: String]) {
        self.sessionId = sessionId
        self.files = files
    }
}

/// Why a JSON body was refused (400).
public struct BodyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the body, sent in the 400 answer.
    public var description: String
    /// The message should name the field at fault where there is one.
    public init(_ description: String) { self.description = description }
}

/// LocalSend's JSON in and out, with errors a sender can read (`BodyError`).
public enum LocalSendJSON {
    /// `bytes` decoded as `T`; unknown keys are ignored, a missing required key or a wrong type is an error.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(BodyError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, _) {
            throw BodyError("missing \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw BodyError("wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch {
            throw BodyError("not JSON")
        }
    }

    /// `value` as compact JSON with sorted keys.
    public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs cannot fail.
        return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }
}

extension PrepareUploadRequest {
    /// Checks what decoding cannot: names present, sizes not negative, hashes 64 hex digits
    /// (returned in lower case). Files are keyed by their map key, whatever `id` says.
    public func validated() throws(BodyError) -> PrepareUploadRequest {
        guard !files.isEmpty else { throw BodyError("no files") }
        guard files.count <= 10_000 else { throw BodyError("more than 10000 files") }
        var out = self
        for (key, var file) in files {
            guard !key.isEmpty, key.utf8.count <= 256 else { throw BodyError("a file ID is empty or over 256 bytes") }
            file.id = key
            guard !file.fileName.isEmpty else { throw BodyError("file \(key) has no name") }
            guard file.size >= 0 else { throw BodyError("file \(key) has a negative size") }
            if let hash = file.sha256 {
                let lower = hash.lowercased()
                guard lower.utf8.count == 64,
                    lower.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
                else {
                    throw BodyError("file \(key): sha256 is not 64 hex digits")
                }
                file.sha256 = lower
            }
            out.files[key] = file
        }
        return out
    }
}
