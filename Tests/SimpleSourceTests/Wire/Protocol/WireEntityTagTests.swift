// Entity tags: how they are written, which `If-None-Match` headers match one (weakly, in lists, `*`), and
// which headers are not lists of tags and so match nothing.

import Testing

@testable import SimpleSourceWire

@Suite("Entity tags")
struct WireEntityTagTests {
  static let tag = WireEntityTag(opaque: "abc")!

  @Test("a tag writes as a header does; a weak one with W/; characters a tag cannot hold are refused")
  func writes() {
    #expect(Self.tag.description == "\"abc\"")
    #expect(WireEntityTag(opaque: "abc", isWeak: true)?.description == "W/\"abc\"")
    #expect(WireEntityTag(opaque: "")?.description == "\"\"")
    #expect(WireEntityTag(opaque: "a,b/é")?.description == "\"a,b/é\"")
    for bad in ["a\"b", "a b", "a\u{7F}", "a\tb", "a\nb"] {
      #expect(WireEntityTag(opaque: bad) == nil, "\(bad.debugDescription)")
    }
  }

  @Test("a tag of bytes is 16 hexadecimal digits of their FNV-1a hash: known values, the same every time")
  func hashes() {
    // FNV-1a's published test values: the empty input is the offset basis, "a" is af63dc4c8601ec8c.
    #expect(WireEntityTag(hashing: []).opaque == "cbf29ce484222325")
    #expect(WireEntityTag(hashing: "a".utf8).opaque == "af63dc4c8601ec8c")
    #expect(WireEntityTag(hashing: "foobar".utf8).opaque == "85944171f73967e8")
    #expect(WireEntityTag(hashing: "b".utf8) != WireEntityTag(hashing: "a".utf8))
    #expect(!WireEntityTag(hashing: "a".utf8).isWeak)
  }

  @Test(
    "If-None-Match matches by weak comparison, in a list, or as *",
    arguments: [
      ("\"abc\"", true),
      ("W/\"abc\"", true),
      ("\"x\", \"abc\"", true),
      ("\"x\",W/\"abc\"", true),
      (" \t\"abc\" \t", true),
      (", ,\"abc\",,", true),
      ("*", true),
      (" * ", true),
      ("\"a,b\", \"abc\"", true),
      ("\"abcd\"", false),
      ("\"ABC\"", false),
      ("w/\"abc\"", false),
      ("\"x\"", false),
      ("", false),
    ])
  func matches(header: String, expected: Bool) {
    #expect(Self.tag.matches(ifNoneMatch: header) == expected)
    #expect(WireEntityTag(opaque: "abc", isWeak: true)!.matches(ifNoneMatch: header) == expected)
  }

  @Test(
    "a header that is not a list of tags matches nothing, even when it holds the tag",
    arguments: [
      "abc", "\"abc", "\"abc\" \"x\"", "\"abc\"x", "W\"abc\"", "W/abc", "* , \"abc\"x", "**", "\"a\"b\"",
      "\"a\u{1}\"",
    ])
  func malformed(header: String) {
    #expect(WireEntityTag.list(header) == nil, "\(header.debugDescription)")
    #expect(!Self.tag.matches(ifNoneMatch: header))
    #expect(!Self.tag.matches(ifNoneMatch: nil))
  }

  @Test("a list reads every tag with its weakness, a comma inside quotes included")
  func lists() {
    #expect(
      WireEntityTag.list("W/\"a\", \"b,c\" ,\"\"")
        == [
          WireEntityTag(opaque: "a", isWeak: true)!, WireEntityTag(opaque: "b,c")!,
          WireEntityTag(opaque: "")!,
        ])
    #expect(WireEntityTag.list("") == [])
  }
}
