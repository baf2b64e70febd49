import PTKSystem

/// What a request to the web interface asks for, from its method and target alone.
///
/// Photos are named by their library id (`/photo/42`), never by a path: no request can name
/// a file, so `..`, encoded slashes and the like reach nothing (they are 404). The target is
/// split into segments before anything is decoded, and segments are matched as they were sent.
public enum WebRoute: Equatable, Sendable {
    case gallery
    case loginPage
    /// POST /login: the password form.
    case login
    /// GET /login/SECRET: a one-time link (HEAD of it is `loginPage`: it spends nothing).
    case loginLink(String)
    case logout
    case asset(WebAsset)
    case uploadPage
    case upload
    case photo(Int64)
    case original(Int64)
    case thumbnail(Int64)
    /// The photo's `.ptk` package.
    case package(Int64)
    case confirmDelete(Int64)
    case change(Int64, PhotoChange)
    case notFound
    /// The path exists but not for this method; `allowed` is the Allow header.
    case methodNotAllowed(allowed: String)

    public enum PhotoChange: String, Sendable, CaseIterable {
        case rename, note, rate, delete
    }

    /// Served without a session: the login page, logging in, and the files it needs. Anything
    /// else, even a path that does not exist, gets the login page (which tells nothing).
    public var isPublic: Bool {
        switch self {
        case .loginPage, .login, .loginLink, .asset: return true
        default: return false
        }
    }

    /// Changes something: must carry the session's CSRF token.
    public var isChange: Bool {
        switch self {
        case .logout, .upload, .change: return true
        default: return false
        }
    }

    public init(method: String, target: String) {
        // Split by scalars, as the browser sent them: "/" or "?" with a combining mark after it is
        // one Character, which a Character split would not cut at.
        let path = target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
        guard path.startsWithScalar("/") else { self = .notFound; return }
        let segments = Array(pathComponents(path).dropFirst())
        let get = method == "GET" || method == "HEAD"
        let post = method == "POST"
        func only(_ isAllowed: Bool, _ route: WebRoute, allow: String) -> WebRoute {
            isAllowed ? route : .methodNotAllowed(allowed: allow)
        }
        switch segments.count {
        case 1:
            switch segments[0] {
            case "": self = only(get, .gallery, allow: "GET, HEAD")
            case "login": self = get ? .loginPage : post ? .login : .methodNotAllowed(allowed: "GET, HEAD, POST")
            case "logout": self = only(post, .logout, allow: "POST")
            case "upload": self = get ? .uploadPage : post ? .upload : .methodNotAllowed(allowed: "GET, HEAD, POST")
            default: self = .notFound
            }
        case 2:
            switch segments[0] {
            // Only GET spends a one-time link: a HEAD (a chat app's link preview, a checker) gets
            // what the login page would answer, and the link stays good for the person it was for.
            case "login" where Self.isSecret(segments[1]):
                self = method == "GET" ? .loginLink(segments[1]) : method == "HEAD" ? .loginPage : .methodNotAllowed(allowed: "GET, HEAD")
            case "static":
                if let asset = WebAsset(rawValue: segments[1]) { self = only(get, .asset(asset), allow: "GET, HEAD") } else { self = .notFound }
            case "photo":
                if let id = Self.id(segments[1]) { self = only(get, .photo(id), allow: "GET, HEAD") } else { self = .notFound }
            default: self = .notFound
            }
        case 3 where segments[0] == "photo":
            guard let id = Self.id(segments[1]) else { self = .notFound; return }
            switch segments[2] {
            case "original": self = only(get, .original(id), allow: "GET, HEAD")
            case "thumbnail": self = only(get, .thumbnail(id), allow: "GET, HEAD")
            case "package": self = only(get, .package(id), allow: "GET, HEAD")
            case "delete": self = get ? .confirmDelete(id) : post ? .change(id, .delete) : .methodNotAllowed(allowed: "GET, HEAD, POST")
            default:
                if let change = PhotoChange(rawValue: segments[2]), change != .delete {
                    self = only(post, .change(id, change), allow: "POST")
                } else {
                    self = .notFound
                }
            }
        default:
            self = .notFound
        }
    }

    /// A photo id: 1 to 18 decimal digits, no sign, no leading zero.
    static func id(_ s: String) -> Int64? {
        guard (1...18).contains(s.utf8.count), s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), s.first != "0" else { return nil }
        return Int64(s)
    }

    /// A link's secret: 32 lowercase hex digits.
    static func isSecret(_ s: String) -> Bool {
        s.utf8.count == 32 && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}

/// The static files the pages load (CSS and JavaScript: the Content-Security-Policy allows no
/// inline ones).
public enum WebAsset: String, Sendable, CaseIterable {
    case css = "app.css"
    case js = "app.js"

    public var contentType: String {
        switch self {
        case .css: return "text/css; charset=utf-8"
        case .js: return "text/javascript; charset=utf-8"
        }
    }

    public var bytes: [UInt8] {
        switch self {
        case .css: return Array(WebStatic.css.utf8)
        case .js: return Array(WebStatic.js.utf8)
        }
    }
}
