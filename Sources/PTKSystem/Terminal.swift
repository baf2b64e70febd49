import Glibc

/// Asks for a secret on the terminal: writes `prompt` to standard error, reads a line from
/// standard input with echo off (when it is a terminal), and ends the prompt's line. Nil at the
/// end of input. The corresponding C functions are `tcgetattr` and `tcsetattr`.
public func readSecretLine(prompt: String) -> String? {
    var saved = termios()
    let fd = FileDescriptor.standardInput.rawValue
    let canHide = tcgetattr(fd, &saved) == 0
    if canHide {
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        _ = tcsetattr(fd, TCSAFLUSH, &quiet)
    }
    // The prompt is a courtesy: without a standard error, the line is read all the same.
    try? FileDescriptor.standardError.writeAll(Array(prompt.utf8))
    let line = readLine(strippingNewline: true)
    if canHide { _ = tcsetattr(fd, TCSAFLUSH, &saved) }
    try? FileDescriptor.standardError.writeAll([0x0A])  // as the prompt: a courtesy
    return line
}
