/// What a real HTML parser finds in each of `pages`: Python's html.parser run by
/// Tests/Fixtures/html/structure.py, one line per start tag (with its attributes' names), end
/// tag, comment or declaration, text left out. Compare a page rendered with hostile texts with
/// the same page rendered with harmless ones of the same shape: an element or attribute that a
/// text made is a difference. Fails (with the reason) when python3 cannot run it.
public func htmlStructure(_ pages: [String]) -> Result<[[String]], HTMLStructureError> {
    let dir = makeTemporaryDirectory("ptk-html")
    defer { removeTree(dir) }
    let files = pages.indices.map { "\(dir)/\($0).html" }
    for (file, page) in zip(files, pages) { writeFile(file, Array(page.utf8)) }
    let run = runTool(["python3", fixturePath("html/structure.py")] + files, timeout: 60)
    guard run.status == 0 else { return .failure(HTMLStructureError(message: "structure.py: \(run.output)")) }
    var out: [[String]] = []
    for line in run.output.split(separator: "\n", omittingEmptySubsequences: true) {
        if line.hasPrefix("=== ") { out.append([]) } else if !out.isEmpty { out[out.count - 1].append(String(line)) }
    }
    guard out.count == pages.count else {
        return .failure(
            HTMLStructureError(message: "structure.py printed \(out.count) of \(pages.count) pages: \(run.output)"))
    }
    return .success(out)
}

/// Why `htmlStructure` could not parse the pages.
public struct HTMLStructureError: Error, CustomStringConvertible {
    /// What failed, with structure.py's output when it ran.
    public var message: String
    /// The message alone, for the test's failure.
    public var description: String { message }
}
