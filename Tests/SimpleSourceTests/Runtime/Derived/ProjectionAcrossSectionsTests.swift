// A window over the list as a whole (`Projection.rowsAcrossSections`): "the first 20 by price" across
// every section, live, equal after every parent change to filtering, sorting, merging and slicing the
// parent by plain code.

import SimpleSource
import SimpleSourceTesting
import Testing

/// Rows `rows` of the whole list: each section filtered and sorted by `version` (stable), the sections'
/// items merged by `version` (equal versions in section order), sliced, and put back in their sections.
func windowAcrossSections(_ sections: [TestSection], _ rows: Range<Int>, where isIncluded: (TestItem) -> Bool)
  -> [TestSection]
{
  let sorted = sections.map { section in
    section.items.filter(isIncluded).enumerated().sorted {
      ($0.element.version, $0.offset) < ($1.element.version, $1.offset)
    }
    .map(\.element)
  }
  let merged = sorted.enumerated().flatMap { index, items in
    items.enumerated().map {
      (version: $0.element.version, section: index, offset: $0.offset, item: $0.element)
    }
  }
  .sorted { ($0.version, $0.section, $0.offset) < ($1.version, $1.section, $1.offset) }
  let window = merged.enumerated().filter { rows.contains($0.offset) }.map(\.element)
  return sections.enumerated().map { index, section in
    var section = section
    section.items = window.filter { $0.section == index }.map(\.item)
    return section
  }
}

@Suite("Projection windows across sections", .timeLimit(.minutes(30)))
struct ProjectionAcrossSectionsTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 20, casesVariable: "SIMPLESOURCE_ACROSS_CASES")

  @Test("the first rows by price across every section, as the parent changes (seeded)")
  func followsTheModel() async throws {
    var random = SeededGenerator(seed: Self.settings.seed(forShard: 141))
    print("windows across sections: \(Self.settings.replay)")
    for run in 0..<Self.settings.cases {
      var next = 0
      func makeItem(_ random: inout SeededGenerator) -> TestItem {
        next += 1
        return TestItem("i\(next)", version: Int.random(in: 0..<12, using: &random))
      }
      let sections = ["A", "B", "C"].map { id in
        TestSection(id: id, items: (0..<Int.random(in: 0..<8, using: &random)).map { _ in makeItem(&random) })
      }
      let lower = Int.random(in: 0..<4, using: &random)
      let rows = lower..<(lower + Int.random(in: 0..<6, using: &random))
      let isIncluded: @Sendable (TestItem) -> Bool = { $0.version % 5 != 0 }
      let parent = try BasicDataSource(sections: sections)
      let projected = try await parent.projected(
        Projection(
          where: isIncluded, sortedBy: { $0.version < $1.version }, rows: rows, rowsAcrossSections: true))
      let recorder = await BatchRecorder(await projected.subscribe())
      let context = "run \(run), rows \(rows), \(Self.settings.replay)"
      for _ in 0..<12 {
        let current = await parent.snapshot
        let ids = current.sections.flatMap { $0.items.map(\.id) }
        switch Int.random(in: 0..<4, using: &random) {
        case 0 where !ids.isEmpty:
          let id = ids.randomElement(using: &random)!
          let price = Int.random(in: 0..<12, using: &random)
          try await parent.updateItem(id) { $0.version = price }
        case 1 where !ids.isEmpty:
          try await parent.deleteItems([ids.randomElement(using: &random)!])
        case 2 where ids.count > 1:
          let id = ids.randomElement(using: &random)!
          let anchor = ids.filter { $0 != id }.randomElement(using: &random)!
          try await parent.moveItem(id, after: anchor)
        default:
          let section = ["A", "B", "C"].randomElement(using: &random)!
          try await parent.appendItems([makeItem(&random)], toSection: section)
        }
        await parent.settled()
        await projected.settled()
        let expected = windowAcrossSections((await parent.snapshot).sections, rows, where: isIncluded)
        #expect((await projected.snapshot).sections == expected, "\(context)")
      }
      await recorder.showing(await projected.snapshot)
      #expect(await recorder.violations.isEmpty, "\(context)")
      await recorder.cancel()
    }
  }

  @Test("without an order, the window runs over the sections one after the other")
  func parentOrder() async throws {
    let parent = try BasicDataSource(sections: layout("A: a b | B: c d e | C: f"))
    let projected = try await parent.projected(Projection(rows: 1..<4, rowsAcrossSections: true))
    let first = await projected.snapshot
    #expect(first.description == "[A: b | B: c d | C: ]")
    try await parent.deleteItems(["a"])
    await parent.settled()
    await projected.settled()
    let second = await projected.snapshot
    #expect(second.description == "[A:  | B: c d e | C: ]")
  }
}
