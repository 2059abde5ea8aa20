// An HTTP entity tag: what a read's or a served file's `ETag` names, and how `If-None-Match` is matched
// against it.

/// An HTTP entity tag (RFC 9110, section 8.8.3): the value of an `ETag` header, and what an
/// `If-None-Match` header lists.
///
/// A tag is strong (`"…"`) or weak (`W/"…"`). Caches may weaken a tag they pass on (nginx does when it
/// compresses a response), so a revalidation compares weakly: ``matches(ifNoneMatch:)``.
public struct WireEntityTag: Hashable, Sendable, CustomStringConvertible {
  /// The tag's characters between its quotes.
  public let opaque: String
  /// Whether the tag is weak (`W/"…"`): its representations are equivalent, not byte for byte the same.
  public let isWeak: Bool

  /// A tag of `opaque`, or `nil` when `opaque` holds a character a tag cannot (a double quote, a space, a
  /// control character or DEL).
  /// - Complexity: O(*n*) in the length of `opaque`.
  public init?(opaque: String, isWeak: Bool = false) {
    guard opaque.utf8.allSatisfy(Self.isTagByte) else { return nil }
    self.opaque = opaque
    self.isWeak = isWeak
  }

  /// The strong tag of `bytes`: 16 hexadecimal digits of their 64-bit FNV-1a hash, the same in every
  /// process. Not a cryptographic hash: a tag of content the server chose, never of a client's input.
  /// - Complexity: O(*n*) in the number of bytes.
  public init(hashing bytes: some Sequence<UInt8>) {
    self.opaque = FNV1a64.hexadecimal(FNV1a64.hash(bytes))
    self.isWeak = false
  }

  /// The tag as a header writes it: `"opaque"`, or `W/"opaque"` when weak.
  public var description: String { (isWeak ? "W/\"" : "\"") + opaque + "\"" }

  /// Whether a request with `header` as its `If-None-Match` already holds what this tag names, so that a
  /// `GET` is answered `304 Not Modified`: `header` is `*`, or lists a tag with the same opaque characters,
  /// weak or strong (the weak comparison RFC 9110 prescribes for `If-None-Match`). A header that does not
  /// parse as a list of tags matches nothing: the request gets the whole answer.
  /// - Complexity: O(*n*) in the length of `header`.
  public func matches(ifNoneMatch header: String?) -> Bool {
    guard let header else { return false }
    if header.utf8.filter({ $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }).elementsEqual("*".utf8) {
      return true
    }
    guard let tags = Self.list(header) else { return false }
    return tags.contains { $0.opaque == opaque }
  }

  /// The tags `header` lists (`#entity-tag`: tags separated by commas, with optional spaces and tabs, and
  /// empty elements allowed), or `nil` when it is not such a list. A comma inside a tag's quotes is part of
  /// the tag.
  /// - Complexity: O(*n*) in the length of `header`.
  public static func list(_ header: String) -> [WireEntityTag]? {
    let bytes = Array(header.utf8)
    var tags: [WireEntityTag] = []
    var index = 0
    func skipSpaces() {
      while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
        index += 1
      }
    }
    while true {
      skipSpaces()
      if index == bytes.count { return tags }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      var isWeak = false
      if bytes[index] == UInt8(ascii: "W"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
        isWeak = true
        index += 2
      }
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
      let start = index + 1
      guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
      guard bytes[start..<end].allSatisfy(isTagByte) else { return nil }
      tags.append(WireEntityTag(checked: String(decoding: bytes[start..<end], as: UTF8.self), isWeak: isWeak))
      index = end + 1
      skipSpaces()
      guard index == bytes.count || bytes[index] == UInt8(ascii: ",") else { return nil }
    }
  }

  /// A strong or weak tag of `opaque`, whose characters the caller made or checked.
  init(checked opaque: String, isWeak: Bool = false) {
    self.opaque = opaque
    self.isWeak = isWeak
  }

  /// `etagc`: `!`, `#` to `~`, and any byte above DEL (`obs-text`, and so UTF-8's bytes).
  private static func isTagByte(_ byte: UInt8) -> Bool {
    byte == 0x21 || (0x23...0x7E).contains(byte) || byte >= 0x80
  }
}

/// The 64-bit FNV-1a hash: short, fast, and the same in every process (unlike `hashValue`). For names and
/// tags of content the server chose; never where a client could choose colliding input to its benefit.
enum FNV1a64 {
  /// - Complexity: O(*n*) in the number of bytes.
  static func hash(_ bytes: some Sequence<UInt8>, continuing start: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64
  {
    var hash = start
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
    return hash
  }

  /// `hash` as 16 hexadecimal digits.
  static func hexadecimal(_ hash: UInt64) -> String {
    let digits = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }
}
