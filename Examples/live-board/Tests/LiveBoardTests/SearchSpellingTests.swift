// The board's search: spellings it reads alike are one view, so a client cannot make the server step a
// view per spelling. (The connections' guards are the integration package's, tested there.)

import SimpleSource
import Testing

@testable import LiveBoard

@Suite("The board's search")
struct SearchSpellingTests {
  @Test("a search spelled with other case, diacritics or spaces has one canonical form: one view")
  func searchSpellingsAreOneView() async throws {
    let folded = foldedSearch(["text": .string("  Café ")])
    #expect(folded == ["text": .string("cafe")])
    #expect(foldedSearch(["text": .string("CAFE")]) == folded)
    let query = try #require(boardQueries.first { $0.name == "search" })
    #expect(
      try query.canonicalRequest(for: WireQueryRequest("search", ["text": .string("CAFÉ")]))
        == WireQueryRequest("search", folded))
  }
}
