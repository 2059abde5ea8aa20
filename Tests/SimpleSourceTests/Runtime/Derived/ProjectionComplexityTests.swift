// Fences the cost of a parent edit to a projection: hashes, `==`, predicate calls and comparisons must not
// grow with the list (the sorted projection's insert: a binary search, O(log n) comparisons).

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore

// A 30-minute hang guard: CI runs this suite at 1,000,000 items beside the exhaustive suites, which hold
// both threads of a two-core pool for minutes, and its tests wait for a thread on that clock.
@Suite("Projection complexity", .timeLimit(.minutes(30)))
struct ProjectionComplexityTests {
  typealias TestSection = Section<Int, CountingItem>

  /// What one parent edit and its projected batch cost.
  struct Calls: CustomStringConvertible {
    var hashes = 0
    var equalities = 0
    var predicate = 0
    var comparisons = 0
    var description: String {
      "hashes \(hashes), == \(equalities), predicate \(predicate), comparisons \(comparisons)"
    }
  }

  /// The calls each kind of one-item parent edit makes through a projection of the even ids (but version 1),
  /// sorted by the tens of `version` descending or in parent order, over a one-section parent of `count`
  /// items in the persistent form.
  static func calls(count: Int, sorted: Bool) throws -> [String: Calls] {
    let counter = CallCounter()
    let closureCalls = Locked((predicate: 0, comparisons: 0))
    func item(_ value: Int, version: Int = 0) -> CountingItem {
      CountingItem(id: CountingID(value: value, counter: counter), version: version)
    }
    let byVersionDescending: @Sendable (CountingItem, CountingItem) -> Bool = { lhs, rhs in
      closureCalls.withLock { $0.comparisons += 1 }
      return lhs.version / 10 > rhs.version / 10
    }
    let projection = Projection<TestSection>(
      where: { item in
        closureCalls.withLock { $0.predicate += 1 }
        return item.id.value % 2 == 0 && item.version != 1
      },
      sortedBy: sorted ? byVersionDescending : nil)
    var store = SectionStore(trusted: try Snapshot([Section(id: 0, items: (0..<count).map { item($0) })]))
    // The first edit builds the parent's persistent form (O(n), once), as a data source's first edit does.
    _ = try store.replaceItem(item(1, version: 1))
    _ = store.takeLog()
    var state = try ProjectionState(parent: store.snapshot, projection: projection)
    _ = state.shown.tree  // as a projected source builds it when it starts
    let edits: [(String, (inout SectionStore<TestSection>) throws -> Bool)] = [
      ("replace, stays in place", { try $0.replaceItem(item(count / 2, version: 3)) }),
      ("replace, sorts elsewhere", { try $0.replaceItem(item(count / 2 + 2, version: 50)) }),
      ("replace, leaves the projection", { try $0.replaceItem(item(count / 2 + 4, version: 1)) }),
      ("insert at the front", { try $0.insertItems([item(-2)], at: ItemPosition(section: 0, item: 0)) }),
      (
        "insert in the middle",
        { try $0.insertItems([item(-4)], at: ItemPosition(section: 0, item: count / 3)) }
      ),
      (
        "move far",
        { try $0.moveItem(at: ItemPosition(section: 0, item: 3), to: ItemPosition(section: 0, item: count)) }
      ),
      ("delete", { try $0.deleteItems([CountingID(value: count / 4, counter: counter)]) }),
    ]
    var result: [String: Calls] = [:]
    for (name, edit) in edits {
      let old = store.snapshot
      counter.reset()
      closureCalls.withLock { $0 = (0, 0) }
      #expect(try edit(&store), "\(name) changed nothing")
      let log = store.takeLog()
      let parentChange = try #require(
        Changeset(from: old, to: store.snapshot, logged: log.touching ?? [], refreshing: []))
      let (next, change) = try state.applying(parentChange, startsAtParent: true)
      let published = !change.isEmpty
      #expect(published, "\(name): the projection's batch is empty")
      state = next
      let closures = closureCalls.withLock { $0 }
      result[name] = Calls(
        hashes: counter.hashes, equalities: counter.equalities, predicate: closures.predicate,
        comparisons: closures.comparisons)
    }
    if count <= 10_000 {
      let expected = store.snapshot.sections.map { section in
        var shown = section
        shown.items = section.items.filter { $0.id.value % 2 == 0 && $0.version != 1 }
        if sorted {
          // Tens of the version descending, ties in parent order.
          shown.items = shown.items.enumerated()
            .sorted { ($1.element.version / 10, $0.offset) < ($0.element.version / 10, $1.offset) }
            .map(\.element)
        }
        return shown
      }
      #expect(state.shown.sections == expected, "the projection after the edits")
    }
    return result
  }

  /// The large list has `SIMPLESOURCE_COMPLEXITY_LARGE` items: 100,000 in `swift test`, 1,000,000 in CI's
  /// own step, 100,000 under TSan.
  @Test(
    "a parent edit hashes, compares and asks the closures a few times (a sorted search: per step of it), at 10,000 items as at 1,000,000",
    arguments: [false, true])
  func callsDoNotGrowWithTheList(sorted: Bool) throws {
    let largeCount =
      ProcessInfo.processInfo.environment["SIMPLESOURCE_COMPLEXITY_LARGE"].flatMap(Int.init) ?? 100_000
    let small = try Self.calls(count: 10_000, sorted: sorted)
    let large = try Self.calls(count: largeCount, sorted: sorted)
    for (name, calls) in small.sorted(by: { $0.key < $1.key }) {
      let big = try #require(large[name])
      print(
        "Projection calls (\(sorted ? "sorted" : "parent order")), \(name): 10k \(calls); \(largeCount) \(big)"
      )
      #expect(calls.predicate <= 1 && big.predicate <= 1, "\(name): at most one predicate call")
      // Placing an item the sort moves is a binary search: log2(n) + a few comparisons; everything else a
      // few. In the parent's order an insert or a move goes right after its shown parent neighbour: no search.
      let searches =
        sorted && (name.contains("insert") || name.contains("elsewhere") || name.contains("move"))
      func log2(_ count: Int) -> Int { Int.bitWidth - count.leadingZeroBitCount }
      for (calls, count) in [(calls, 10_000), (big, largeCount)] {
        // A few hashes and == either way (the sets that collect touched ids probe by the process's hash
        // seed); a pass over the list would be 5,000 and more. The sorted search breaks ties (every item
        // here ties) by parent position: one id lookup per step.
        let lookups = searches ? 24 + log2(count) : 40
        #expect(calls.hashes <= lookups && calls.equalities <= lookups, "\(name) at \(count): \(calls)")
      }
      func bound(_ count: Int) -> Int {
        // Two calls per step of the search (the order both ways, for ties), plus the checks around it.
        searches ? 2 * log2(count) + 8 : 8
      }
      #expect(calls.comparisons <= bound(10_000), "\(name) at 10k: \(calls)")
      #expect(big.comparisons <= bound(largeCount), "\(name) at \(largeCount): \(big)")
    }
  }
}
