extension StringProtocol {
    /// The text without the spaces, tabs and carriage returns around it: what a configuration
    /// line, a trust-list line or an HTTP header value may carry around its value.
    public var trimmingSpaces: String {
        let scalars = unicodeScalars
        let blank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = scalars.firstIndex(where: { !blank($0) }), let end = scalars.lastIndex(where: { !blank($0) })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[start...end]))
    }
}
