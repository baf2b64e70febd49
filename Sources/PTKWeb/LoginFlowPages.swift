import PTKVocabulary

/// The pages of a device's login flow (an app asking for a password of its own): the request
/// to approve or deny, and what came of it. The password itself is never on a page: the
/// device collects it by polling.
extension WebPages {
    /// What the approval page shows of the request.
    public struct LoginFlowView: Sendable {
        /// The device as its User-Agent names it.
        public var device: String
        /// The address the request came from.
        public var address: String
        /// The address of the browser looking at the page.
        public var browserAddress: String
        /// The receiver's address as the device named it ("https://HOST:PORT").
        public var server: String
        /// The form's action: the flow's own path.
        public var action: String
        /// The app password's name the form suggests.
        public var suggestedName: String

        /// The fields the page shows; `action` is the flow's path, where the form posts.
        public init(
            device: String, address: String, browserAddress: String, server: String, action: String,
            suggestedName: String
        ) {
            self.device = device
            self.address = address
            self.browserAddress = browserAddress
            self.server = server
            self.action = action
            self.suggestedName = suggestedName
        }
    }

    /// "A device asks to send photos": who asks, from where, and the forms that approve it
    /// (with the password's name, editable) or deny it. `message` says why the last try failed.
    public func loginFlow(_ flow: LoginFlowView, viewer: Viewer, message: String? = nil) -> String {
        let h = escapeHTML
        let csrf = "<input type=\"hidden\" name=\"csrf\" value=\"\(h(viewer.csrf))\">"
        var body = "<h1>A device asks to send photos</h1>\n"
        if let message { body += "<p class=\"error\" role=\"alert\">\(h(message))</p>\n" }
        let same = flow.address == flow.browserAddress
        body += """
            <table class="details">
            <tr><th>Device</th><td id="device">\(h(flow.device))</td></tr>
            <tr><th>Asked from</th><td id="address">\(h(flow.address))\(same ? " (this browser's address too)" : "")</td></tr>
            <tr><th>Receiver address it used</th><td>\(h(flow.server))</td></tr>
            </table>

            """
        if !same {
            body += """
                <p class="error" id="elsewhere">This request did not come from this browser's address \
                (\(h(flow.browserAddress))). Approve it only if you started it yourself, on your own device, just now.</p>

                """
        }
        body += """
            <p>Approving gives the device an app password of its own with upload access: it can add photos and see \
            only those it sent. <code>ptk app-password list</code> lists it; <code>ptk app-password remove NAME</code> \
            ends it.</p>
            <form class="change" method="post" action="\(h(flow.action))">\(csrf)<input type="hidden" name="decision" value="approve">
            <label>Password name <input name="name" value="\(h(flow.suggestedName))" required maxlength="64"></label><button type="submit" id="approve">Approve</button></form>
            <form class="change" method="post" action="\(h(flow.action))">\(csrf)<input type="hidden" name="decision" value="deny">
            <button type="submit" class="danger" id="deny">Deny</button></form>

            """
        return page("A device asks to send photos", viewer, body)
    }

    /// What came of a login flow: `title` and one paragraph `text`, with the way back to the photos.
    public func loginFlowEnded(title: String, text: String, viewer: Viewer?) -> String {
        page(
            title, viewer,
            "<h1>\(escapeHTML(title))</h1>\n<p id=\"outcome\">\(escapeHTML(text))</p>\n<p><a href=\"/\">Back to the photos</a></p>\n"
        )
    }
}
