// Fences the cost of one edit and its batch: the hashing and `==` calls must not grow with the list.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

// A 30-minute hang guard: CI runs this suite at 1,000,000 items beside the exhaustive suites, which hold
// both threads of a two-core pool for minutes, and its tests wait for a thread on that clock.
@Suite("Logged changeset complexity", .timeLimit(.minutes(30)))
struct LoggedChangesetComplexityTests {
  /// The calls to `hash(into:)` and `==` that each kind of one-item edit and its log-derived batch make,
  /// in a one-section list of `count` items already in the persistent form.
  static func calls(count: Int) throws -> [String: (hashes: Int, equalities: Int)] {
    let counter = CallCounter()
    let items = (0..<count).map { CountingItem(id: CountingID(value: $0, counter: counter), version: 0) }
    var store = SectionStore(trusted: try Snapshot([Section(id: 0, items: items)]))
    func item(_ value: Int, version: Int = 0) -> CountingItem {
      CountingItem(id: CountingID(value: value, counter: counter), version: version)
    }
    // The first edit builds the persistent form (O(n), once); the rest are what is measured.
    _ = try store.replaceItem(item(1, version: 1))
    _ = store.takeLog()
    let edits: [(String, (inout SectionStore<Section<Int, CountingItem>>) throws -> Bool)] = [
      ("replace", { try $0.replaceItem(item(count / 2, version: 2)) }),
      ("insert at the front", { try $0.insertItems([item(-1)], at: ItemPosition(section: 0, item: 0)) }),
      (
        "move far",
        { try $0.moveItem(at: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: count)) }
      ),
      ("delete", { try $0.deleteItems([CountingID(value: count / 3, counter: counter)]) }),
    ]
    var result: [String: (Int, Int)] = [:]
    for (name, edit) in edits {
      let old = store.snapshot
      counter.reset()
      #expect(try edit(&store), "\(name) changed nothing")
      let log = store.takeLog()
      let changeset = try #require(
        Changeset(from: old, to: store.snapshot, logged: log.touching ?? [], refreshing: []))
      #expect(!changeset.isEmpty && changeset.stages.count <= 2, "\(name)")
      result[name] = (counter.hashes, counter.equalities)
    }
    return result
  }

  /// The large list has `SIMPLESOURCE_COMPLEXITY_LARGE` items: 100,000 in `swift test`, 1,000,000 in CI's
  /// own step, 100,000 under TSan.
  @Test("one edit and its batch hash and compare a few times, as many at 10,000 items as at 1,000,000")
  func callsDoNotGrowWithTheList() throws {
    let largeCount =
      ProcessInfo.processInfo.environment["SIMPLESOURCE_COMPLEXITY_LARGE"].flatMap(Int.init) ?? 100_000
    let small = try Self.calls(count: 10_000)
    let large = try Self.calls(count: largeCount)
    for (name, calls) in small.sorted(by: { $0.key < $1.key }) {
      let big = try #require(large[name])
      print("Logged changeset calls, \(name): 10k \(calls), \(largeCount) \(big)")
      // A few calls either way: the small sets that collect the touched ids hash and compare them, and
      // how often they probe depends on the process's random hash seed. A pass over the list would be
      // 10,000 and \(largeCount).
      for (count, label) in [(calls, "10k"), (big, "\(largeCount)")] {
        #expect(count.hashes <= 16 && count.equalities <= 16, "\(name) at \(label): \(count)")
      }
    }
  }

  @Test("a subscriber that fell behind catches up from the missed batches' ids, hashing no untouched item")
  func catchUpFromIDs() async throws {
    let counter = CallCounter()
    func item(_ value: Int, version: Int = 0) -> CountingItem {
      CountingItem(id: CountingID(value: value, counter: counter), version: version)
    }
    let initial = [Section(id: 0, items: (0..<100_000).map { item($0) })]
    let source = try BasicDataSource(sections: initial)
    let lagging = await source.subscribe()
    for round in 0..<3 {
      try await source.replaceItem(item(round * 1_000, version: 1))
      try await source.moveItem(CountingID(value: 50_000 + round, counter: counter), toSection: 0)
      await source.settled()
    }
    counter.reset()
    var batches = lagging.batches.makeAsyncIterator()
    let batch = try #require(await batches.next())
    let calls = (counter.hashes, counter.equalities)
    #expect(batch.from == 0 && batch.to == 6, "one composed batch from its own version")
    #expect(calls.0 < 100 && calls.1 < 100, "hashes and == of the catch-up: \(calls)")
    let full = Changeset(from: try Snapshot(initial), to: batch.changeset.target)
    #expect(batch.changeset.itemChanges.updates == full.itemChanges.updates)
    #expect(batch.changeset.itemChanges.moves.count == full.itemChanges.moves.count)
    #expect(batch.changeset.itemChanges.moves.count == 3)
    lagging.cancel()
  }
}
