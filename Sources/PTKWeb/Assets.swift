/// A change to a photo from its page (POST /photo/ID/CHANGE, a form with the CSRF token).
public enum PhotoChange: String, Sendable, CaseIterable {
    case rename, note, rate, delete
}

/// The static files the pages load (CSS and JavaScript: the Content-Security-Policy allows no
/// inline ones).
public enum WebAsset: String, Sendable, CaseIterable {
    case css = "app.css"
    case js = "app.js"

    /// The Content-Type the file is served with.
    public var contentType: String {
        switch self {
        case .css: return "text/css; charset=utf-8"
        case .js: return "text/javascript; charset=utf-8"
        }
    }

    /// The file's bytes, compiled into the binary (nothing is read from disk).
    public var bytes: [UInt8] {
        switch self {
        case .css: return Array(WebStatic.css.utf8)
        case .js: return Array(WebStatic.js.utf8)
        }
    }
}
