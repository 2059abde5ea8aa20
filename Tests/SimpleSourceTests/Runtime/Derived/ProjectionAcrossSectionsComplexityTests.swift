// Fences the cost of a parent change to a sorted window over the whole list: a change whose items all sort
// after the window's last row costs a look at the sections' last rows and at the changed items, not a
// merge of the sections up to the window's end.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore

// A 30-minute hang guard: CI runs this suite at 1,000,000 items beside the exhaustive suites, which hold
// both threads of a two-core pool for minutes, and its tests wait for a thread on that clock.
@Suite("Projection windows across sections, complexity", .timeLimit(.minutes(30)))
struct ProjectionAcrossSectionsComplexityTests {
  /// Comparisons made by one parent change through a window of rows 5,000..<5,020 by price over
  /// `count` items dealt round four sections (item *i*, priced *i*, in section *i* mod 4), and whether
  /// the window changed, for each kind of change.
  static func comparisons(count: Int) throws -> [(name: String, comparisons: Int, published: Bool)] {
    let comparisons = Locked(0)
    let byPrice: @Sendable (TestItem, TestItem) -> Bool = { lhs, rhs in
      comparisons.withLock { $0 += 1 }
      return lhs.version < rhs.version
    }
    let sections = (0..<4).map { section in
      TestSection(
        id: "S\(section)",
        items: stride(from: section, to: count, by: 4).map { TestItem("i\($0)", version: $0) })
    }
    var store = SectionStore(trusted: try Snapshot(sections))
    // The first edit builds the parent's persistent form (O(n), once), as a data source's first edit does.
    _ = try store.replaceItem(TestItem("i0", version: 0))
    _ = store.takeLog()
    var state = try ProjectionState(
      parent: store.snapshot,
      projection: Projection(sortedBy: byPrice, rows: 5_000..<5_020, rowsAcrossSections: true))
    _ = state.shown.tree
    let edits: [(String, (inout SectionStore<TestSection>) throws -> Bool)] = [
      (
        "an item after the window dearer",
        { try $0.replaceItem(TestItem("i\(count - 1)", version: count + 5)) }
      ),
      (
        "an item after the window inserted",
        { try $0.insertItems([TestItem("new", version: count + 9)], at: ItemPosition(section: 2, item: 0)) }
      ),
      ("an item after the window deleted", { try $0.deleteItems(["i\(count - 2)"]) }),
      ("an item in the window dearer", { try $0.replaceItem(TestItem("i5010", version: count + 20)) }),
    ]
    var result: [(String, Int, Bool)] = []
    for (name, edit) in edits {
      let old = store.snapshot
      #expect(try edit(&store), "\(name) changed nothing")
      let log = store.takeLog()
      let parentChange = try #require(
        Changeset(from: old, to: store.snapshot, logged: log.touching ?? [], refreshing: []))
      comparisons.withLock { $0 = 0 }
      let (next, change) = try state.applying(parentChange, startsAtParent: true)
      let (windowed, published) = next.windowing(change, after: state)
      state = windowed
      result.append((name, comparisons.withLock { $0 }, published != nil))
    }
    let expected = windowAcrossSections(store.snapshot.sections, 5_000..<5_020, where: { _ in true })
    #expect(state.published.sections == expected, "the window after the changes")
    return result
  }

  @Test(
    "a change after the window compares a few items, at 10,000 items as at 1,000,000; one inside it reads the window again"
  )
  func changesAfterTheWindowCostLittle() throws {
    let largeCount =
      ProcessInfo.processInfo.environment["SIMPLESOURCE_COMPLEXITY_LARGE"].flatMap(Int.init) ?? 100_000
    func log2(_ count: Int) -> Int { Int.bitWidth - count.leadingZeroBitCount }
    for count in [10_000, largeCount] {
      for (name, comparisons, published) in try Self.comparisons(count: count) {
        print("Window across sections, \(name), \(count) items: \(comparisons) comparisons")
        if name.contains("in the window") {
          #expect(published, "\(name): the window changed")
          // Reading the window again merges the four sections up to row 5,020.
          #expect(comparisons >= 5_000, "\(name) at \(count): \(comparisons)")
        } else {
          #expect(!published, "\(name): the window did not change")
          // The sorted search that places the item in its section (two per step), the sections' last
          // rows, and two per changed item; a merge up to the window's end would be over 15,000.
          #expect(comparisons <= 2 * log2(count) + 16, "\(name) at \(count): \(comparisons)")
        }
      }
    }
  }
}
