// Fences the cost of one edit and its batch: the hashing and `==` calls must not grow with the list.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSource

@Suite("Logged changeset complexity")
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
        Changeset(from: old, to: store.snapshot, logged: log.touched, refreshing: []))
      #expect(!changeset.isEmpty && changeset.stages.count <= 2, "\(name)")
      result[name] = (counter.hashes, counter.equalities)
    }
    return result
  }

  /// The large list has 1,000,000 items, or `SIMPLESOURCE_COMPLEXITY_LARGE` (CI's TSan run: 100,000).
  @Test("one edit and its batch hash and compare as often at 1,000,000 items as at 10,000")
  func callsDoNotGrowWithTheList() throws {
    let largeCount =
      ProcessInfo.processInfo.environment["SIMPLESOURCE_COMPLEXITY_LARGE"].flatMap(Int.init) ?? 1_000_000
    let small = try Self.calls(count: 10_000)
    let large = try Self.calls(count: largeCount)
    for (name, calls) in small.sorted(by: { $0.key < $1.key }) {
      let big = try #require(large[name])
      print("Logged changeset calls, \(name): 10k \(calls), \(largeCount) \(big)")
      #expect(big.hashes <= calls.hashes + 2, "\(name): hashes \(calls.hashes) at 10k, \(big.hashes) at 1M")
      #expect(
        big.equalities <= calls.equalities + 2,
        "\(name): == \(calls.equalities) at 10k, \(big.equalities) at 1M")
      #expect(calls.hashes + calls.equalities < 40, "\(name): \(calls) calls for one edit")
    }
  }
}
