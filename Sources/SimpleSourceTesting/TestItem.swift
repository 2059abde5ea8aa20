// Small fixtures for diff tests: an item with a content version, and a compact text notation for layouts.

public import SimpleSource

/// An item for tests: identity is ``id``, content is ``version``.
public struct TestItem: Identifiable, Hashable, Sendable, Codable, CustomStringConvertible {
  /// The item's identity.
  public var id: String
  /// The item's content: bump it to make a content change.
  public var version: Int

  /// Creates an item.
  public init(_ id: String, version: Int = 0) {
    self.id = id
    self.version = version
  }

  /// The id, followed by one `'` per version: `a''`.
  public var description: String { id + String(repeating: "'", count: version) }
}

/// A section of ``TestItem``s with `String` ids.
public typealias TestSection = Section<String, TestItem>

/// Builds sections from a compact notation: `"A: a b c | B': d e'"`.
///
/// Sections are separated by `|`; each is `id: items`, items separated by spaces. A trailing `'` on a
/// section id or item id bumps its content once per `'` (the section's header becomes `"B v1"`; the
/// item's ``TestItem/version`` becomes 1). `""` is no sections; `"A:"` is one empty section.
public func layout(_ text: String) -> [TestSection] {
  func split(_ token: Substring) -> (String, Int) {
    let trimmed = token.trimmingCharacters(in: " ")
    let id = String(trimmed.prefix { $0 != "'" })
    return (id, trimmed.count - id.count)
  }
  return text.split(separator: "|").map { part in
    let halves = part.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    precondition(halves.count == 2, "layout: a section needs 'id: items', got '\(part)'")
    let (id, version) = split(halves[0])
    let items = halves[1].split(separator: " ").map { token in
      let (itemID, itemVersion) = split(token)
      return TestItem(itemID, version: itemVersion)
    }
    return TestSection(id: id, header: "\(id) v\(version)", items: items)
  }
}

extension Substring {
  fileprivate func trimmingCharacters(in set: Character) -> Substring {
    var result = self
    while result.first == set { result.removeFirst() }
    while result.last == set { result.removeLast() }
    return result
  }
}

/// A snapshot from the compact notation of ``layout(_:)``.
/// - Precondition: the layout has no duplicate ids.
public func snapshot(_ text: String) -> Snapshot<TestSection> {
  do {
    return try Snapshot(layout(text))
  } catch {
    preconditionFailure("snapshot(\"\(text)\"): \(error)")
  }
}
