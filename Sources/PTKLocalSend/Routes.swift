/// Which LocalSend v2 route a request asks for: the endpoint's routing decision, made without
/// a socket (the endpoint then does what the route says).
public enum LocalSendRoute: Equatable, Sendable {
    /// GET (or POST, as some apps send it) of `/api/localsend/v1/info` or `v2/info`: 200 with this device's info.
    case info
    /// POST `/api/localsend/v2/register`: the caller is discovering us; 200 with our info.
    case register
    /// POST `/api/localsend/v2/prepare-upload`.
    case prepareUpload
    /// POST `/api/localsend/v2/upload?sessionId=&fileId=&token=`.
    case upload
    /// POST `/api/localsend/v2/cancel?sessionId=`.
    case cancel
    /// A known path asked with a method it does not take: 405.
    case methodNotAllowed
    /// Any other path: 404.
    case notFound

    /// The route for a request's method and path (without its query).
    public init(method: String, path: String) {
        let post = method == "POST"
        switch path {
        case "/api/localsend/v1/info", "/api/localsend/v2/info": self = method == "GET" || post ? .info : .methodNotAllowed
        case "/api/localsend/v2/register": self = post ? .register : .methodNotAllowed
        case "/api/localsend/v2/prepare-upload": self = post ? .prepareUpload : .methodNotAllowed
        case "/api/localsend/v2/upload": self = post ? .upload : .methodNotAllowed
        case "/api/localsend/v2/cancel": self = post ? .cancel : .methodNotAllowed
        default: self = .notFound
        }
    }
}
