// A window over a huge section: it always equals the same slice of its source, holds only the window and
// its margin, moving it is one update, and a batch elsewhere invalidates nothing but the count.

import Observation
import SimpleSource
import SimpleSourceTesting
import Testing

@MainActor
@Suite("ObservedWindow", .timeLimit(.minutes(30)))
struct ObservedWindowTests {
  /// The items of rows `range` of section `id` of `snapshot`, clamped to those that exist.
  static func slice(_ snapshot: Snapshot<TestSection>, _ id: String, _ range: Range<Int>) -> [TestItem] {
    guard let section = snapshot.section(withID: id) else { return [] }
    let items = section.items
    let lower = min(max(range.lowerBound, 0), items.count)
    return Array(items[lower..<min(max(range.upperBound, lower), items.count)])
  }

  /// Observes the window's rows, count and range, and each row's item.
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  static func observe(_ window: ObservedWindow<TestSection>, in invalidations: Invalidations) {
    invalidations.reset()
    invalidations.track("rows") { _ = window.rows }
    invalidations.track("count") { _ = window.count }
    invalidations.track("range") { _ = window.range }
    for row in window.rows { invalidations.track("row \(row.id)") { _ = row.item } }
  }

  @Test(
    "on 100,000 rows: an edit outside invalidates nothing, inside one row; an insert after only the count")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func invalidatesWhatChanged() async throws {
    let items = (0..<100_000).map { TestItem("i\($0)") }
    let source = try BasicDataSource(sections: layout("H: h") + [TestSection(id: "A", items: items)])
    let window = await ObservedWindow(
      following: source, section: "A", range: 50_000..<50_050, margin: 10, pacing: .immediate)
    #expect(window.rows.map(\.item) == Array(items[50_000..<50_050]))
    #expect(window.count == 100_000 && window.heldRowCount == 70, "the window and its margin only")
    let invalidations = Invalidations()

    Self.observe(window, in: invalidations)
    var version = try await source.replaceItem(TestItem("i7", version: 1))
    #expect(try await window.reached(version))
    #expect(invalidations.counts == [:], "an edit outside the window: nothing")

    version = try await source.replaceItem(TestItem("i50010", version: 1))
    #expect(try await window.reached(version))
    #expect(invalidations.counts == ["row i50010": 1], "an edit inside: that row only")

    Self.observe(window, in: invalidations)
    version = try await source.appendItems([TestItem("last")], toSection: "A")
    #expect(try await window.reached(version))
    #expect(invalidations.counts == ["count": 1], "an insert after the window: the count only")

    Self.observe(window, in: invalidations)
    version = try await source.insertItems([TestItem("first")], before: "i0")
    #expect(try await window.reached(version))
    #expect(invalidations.counts == ["rows": 1, "count": 1], "an insert before it shifts what it shows")

    Self.observe(window, in: invalidations)
    version = try await source.moveItem("i50020", before: "i50001")
    #expect(try await window.reached(version))
    #expect(invalidations.counts == ["rows": 1], "a move within the window: its rows only")

    Self.observe(window, in: invalidations)
    version = try await source.refreshItems(["i50030"])
    #expect(try await window.reached(version))
    #expect(invalidations.counts == ["row i50030": 1], "a forced refresh: that row")

    #expect(window.rows.map(\.item) == Self.slice(await source.snapshot, "A", 50_000..<50_050))
    window.stop()
  }

  @Test("moving the window is one update; rows within the margin keep their objects")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func moves() async throws {
    let items = (0..<10_000).map { TestItem("i\($0)") }
    let source = try BasicDataSource(sections: [TestSection(id: "A", items: items)])
    let window = await ObservedWindow(
      following: source, section: "A", range: 100..<150, margin: 20, pacing: .immediate)
    let kept = try #require(window.rows.last)  // i149
    let invalidations = Invalidations()
    Self.observe(window, in: invalidations)
    window.move(to: 140..<190)
    #expect(invalidations.counts == ["rows": 1, "range": 1], "one update")
    #expect(window.rows.map(\.item) == Array(items[140..<190]))
    #expect(window.rows[9] === kept, "a row that stays keeps its object")
    let ahead = window.rows.last  // i189; i190..<210 are held in the margin
    window.move(to: 150..<200)
    #expect(window.rows[39] === ahead && window.heldRowCount == 90)
    Self.observe(window, in: invalidations)
    window.move(to: 150..<200)
    #expect(invalidations.counts == [:], "the same range: nothing")
    window.stop()
  }

  @Test("past the end, an absent section, a section that comes and goes, a stopped window")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func edges() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let past = await ObservedWindow(following: source, section: "A", range: 2..<10, pacing: .immediate)
    #expect(past.rows.map(\.id) == ["c"] && past.count == 3)
    let negative = await ObservedWindow(following: source, section: "A", range: -5..<1, pacing: .immediate)
    #expect(negative.range == 0..<1 && negative.rows.map(\.id) == ["a"])
    let absent = await ObservedWindow(following: source, section: "Z", range: 0..<2, pacing: .immediate)
    #expect(absent.rows.isEmpty && absent.count == 0)

    var version = try await source.appendItems([TestItem("d")], toSection: "A")
    #expect(try await past.reached(version))
    #expect(past.rows.map(\.id) == ["c", "d"] && past.count == 4, "rows appear within a range past the end")
    try await source.update { $0.append(TestSection(id: "Z", items: [TestItem("z")])) }
    version = await source.version
    #expect(try await absent.reached(version))
    #expect(absent.rows.map(\.id) == ["z"] && absent.count == 1, "the section came")
    try await source.update { sections in sections.removeAll { $0.id == "Z" } }
    version = await source.version
    #expect(try await absent.reached(version))
    #expect(absent.rows.isEmpty && absent.count == 0 && absent.heldRowCount == 0, "and went")

    past.stop()
    version = try await source.deleteItems(["c"])
    #expect(try await past.reached(version) == false, "stopped: a later version is never reached")
    #expect(past.rows.map(\.id) == ["c", "d"], "it keeps what it shows")
    past.move(to: 0..<2)
    #expect(past.rows.map(\.id) == ["a", "b"], "and moves over the last state it had")
    negative.stop()
    absent.stop()
  }

  @Test("a source that goes away ends the list and the window: they keep what they show, and never trap")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func sourceGoesAway() async throws {
    var source: BasicDataSource<TestSection>? = try BasicDataSource(sections: layout("A: a b c"))
    let window = await ObservedWindow(following: source!, section: "A", range: 1..<3, pacing: .immediate)
    let list = await ObservedList(following: source!, pacing: .immediate)
    let version = try await source!.deleteItems(["b"])
    #expect(try await window.reached(version))
    #expect(try await list.reached(version))
    source = nil
    #expect(await window.reached(version + 1) == false, "the stream ended: a later version is never reached")
    #expect(await list.reached(version + 1) == false)
    #expect(window.rows.map(\.id) == ["c"] && window.count == 2)
    window.move(to: 0..<5)
    #expect(window.rows.map(\.id) == ["a", "c"], "it still moves over the last state it had")
  }

  @Test("the window equals the same slice of its source after every batch of random edits and moves (seeded)")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func equalsItsSlice() async throws {
    let settings = RandomTestSettings.current(defaultCases: 20, casesVariable: "SIMPLESOURCE_VIEW_CASES")
    var random = SeededGenerator(seed: settings.seed(forShard: 81))
    for run in 0..<settings.cases {
      let items = (0..<300).map { TestItem("i\($0)") }
      let source = try BasicDataSource(sections: layout("H: h") + [TestSection(id: "A", items: items)])
      var range = 100..<130
      let window = await ObservedWindow(
        following: source, section: "A", range: range, margin: Int.random(in: 0..<20, using: &random),
        pacing: .immediate)
      for step in 0..<30 {
        let ids = (await source.snapshot).section(withID: "A")?.items.map(\.id) ?? []
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
          let anchor = ids.randomElement(using: &random) ?? "h"
          try await source.insertItems([TestItem("n\(run)-\(step)")], before: anchor)
        case 1 where !ids.isEmpty: try await source.deleteItems([ids.randomElement(using: &random)!])
        case 2 where ids.count > 1:
          let pair = ids.shuffled(using: &random).prefix(2)
          try await source.moveItem(pair.first!, before: pair.last!)
        case 3 where !ids.isEmpty:
          try await source.replaceItem(TestItem(ids.randomElement(using: &random)!, version: step + 1))
        case 4:
          let lower = Int.random(in: 0..<320, using: &random)
          range = lower..<(lower + Int.random(in: 0..<40, using: &random))
          window.move(to: range)
        case 5 where !ids.isEmpty:
          try await source.moveItem(ids.randomElement(using: &random)!, toSection: "H")
        case 6: try await source.update { $0.reverse() }
        default: try await source.refreshItems(ids.prefix(1))
        }
        let version = await source.version
        #expect(try await window.reached(version))
        #expect(
          window.rows.map(\.item) == Self.slice(await source.snapshot, "A", range),
          "run \(run) step \(step); \(settings.replay)")
        let total = (await source.snapshot).section(withID: "A")?.items.count ?? 0
        #expect(window.count == total && window.heldRowCount <= range.count + 2 * window.margin)
      }
      window.stop()
    }
    print("ObservedWindow model: \(settings.cases) runs; \(settings.replay)")
  }
}
