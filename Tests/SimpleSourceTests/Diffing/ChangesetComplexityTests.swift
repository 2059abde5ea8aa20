// Fences Changeset's linear time: it counts the `==` and `hash(into:)` calls made on ids and items.

import Foundation
import SimpleSource
import SimpleSourceTesting
import Testing

/// Counts calls made from one test; each test owns its counter, so parallel tests do not interfere.
final class CallCounter: Sendable {
  private let state = NSLock()
  // Safe: `counts` is only read and written while `state` is locked.
  private nonisolated(unsafe) var counts = (hashes: 0, equalities: 0)

  func countHash() { state.withLock { counts.hashes += 1 } }
  func countEquality() { state.withLock { counts.equalities += 1 } }
  var hashes: Int { state.withLock { counts.hashes } }
  var equalities: Int { state.withLock { counts.equalities } }
  func reset() { state.withLock { counts = (0, 0) } }
}

struct CountingID: Hashable, Sendable {
  let value: Int
  let counter: CallCounter
  static func == (lhs: CountingID, rhs: CountingID) -> Bool {
    lhs.counter.countEquality()
    return lhs.value == rhs.value
  }
  func hash(into hasher: inout Hasher) {
    counter.countHash()
    hasher.combine(value)
  }
}

struct CountingItem: Identifiable, Equatable, Sendable {
  let id: CountingID
  let version: Int
  static func == (lhs: CountingItem, rhs: CountingItem) -> Bool {
    lhs.id.counter.countEquality()
    return lhs.id.value == rhs.id.value && lhs.version == rhs.version
  }
}

@Suite("Changeset complexity")
struct ChangesetComplexityTests {
  @Test("hashes each old id once and compares each surviving item once", arguments: [1_000, 20_000])
  func linearCalls(count: Int) throws {
    let counter = CallCounter()
    // Seeded, so that a failure replays; the seed is in every expectation's message below.
    let settings = RandomTestSettings.current(defaultCases: 1)
    var random = SeededGenerator(seed: settings.seed(forShard: count))
    let ids = (0..<count).map { CountingID(value: $0, counter: counter) }
    var newIDs =
      ids.filter { $0.value % 10 != 0 }
      + (count..<(count + count / 10)).map { CountingID(value: $0, counter: counter) }
    newIDs.shuffle(using: &random)
    let sectionSize = 100
    func sections(_ ids: [CountingID], version: Int) -> [Section<Int, CountingItem>] {
      stride(from: 0, to: ids.count, by: sectionSize).map { start in
        Section(
          id: start / sectionSize,
          items: ids[start..<min(start + sectionSize, ids.count)].map {
            CountingItem(id: $0, version: $0.value % 7 == 0 ? version : 0)
          })
      }
    }
    let old = try Snapshot(sections(ids, version: 0))
    let new = try Snapshot(sections(newIDs, version: 1))
    counter.reset()
    let changeset = Changeset(from: old, to: new)
    let n = count
    let bound = Int(Double(n) * log2(Double(n)))
    #expect(counter.hashes <= n, "hashes: \(counter.hashes) for \(n) items; \(settings.replay)")
    #expect(
      counter.equalities <= 3 * n, "equalities: \(counter.equalities) for \(n) items; \(settings.replay)")
    #expect(counter.hashes + counter.equalities < bound, "\(settings.replay)")
    #expect(!changeset.isEmpty)
  }
}

extension ChangesetComplexityTests {
  /// Items of version 0 with these ids, whose `==` and hashes `counter` counts.
  static func items(_ values: some Sequence<Int>, counting counter: CallCounter) -> [CountingItem] {
    values.map { CountingItem(id: CountingID(value: $0, counter: counter), version: 0) }
  }

  @Test("a change inside a long list hashes only the ids between the common start and end")
  func commonEndsAreNotHashed() throws {
    let counter = CallCounter()
    let count = 20_000
    func items(_ values: some Sequence<Int>) -> [CountingItem] { Self.items(values, counting: counter) }
    // In the middle, 100 items are deleted, 50 inserted and two runs of 50 swap places; the lists start
    // and end alike.
    let old = try Snapshot([Section(id: 0, items: items(0..<count))])
    let m = count / 2
    let newValues =
      Array(0..<m) + Array(count..<(count + 50)) + Array((m + 150)..<(m + 200)) + Array((m + 100)..<(m + 150))
      + Array((m + 200)..<count)
    let new = try Snapshot([Section(id: 0, items: items(newValues))])
    counter.reset()
    let changeset = Changeset(from: old, to: new)
    // Only the old ids where the lists differ are looked up, not one per item.
    #expect(counter.hashes <= 200, "hashes: \(counter.hashes)")
    #expect(changeset.itemChanges.deletes.map(\.id.value) == Array(m..<(m + 100)))
    #expect(changeset.itemChanges.inserts.map(\.id.value) == Array(count..<(count + 50)))
    #expect(changeset.itemChanges.moves.count == 50)
  }

  @Test("reading a change's edits looks up no id when no section is inserted or deleted")
  func editsLookUpNoIDWithinSections() throws {
    let counter = CallCounter()
    func items(_ values: some Sequence<Int>) -> [CountingItem] { Self.items(values, counting: counter) }
    // 100 items deleted from the first section, 50 inserted into the second, and one moved across.
    let old = try Snapshot([
      Section(id: 0, items: items(0..<1_000)), Section(id: 1, items: items(1_000..<2_000)),
    ])
    let new = try Snapshot([
      Section(id: 0, items: items(100..<999)), Section(id: 1, items: items([999] + Array(1_000..<2_050))),
    ])
    let changeset = Changeset(from: old, to: new)
    counter.reset()
    let edits = changeset.edits
    #expect(counter.hashes == 0, "hashes: \(counter.hashes)")
    #expect(counter.equalities == 0, "equalities: \(counter.equalities)")
    #expect(edits.count == 151)
    var copy = KeyedCopy(old)
    try copy.apply(edits)
    #expect(copy.sections == new.sections)
  }

  @Test("a run of items that shifted together costs two lookups, not one per item")
  func shiftedRunsAreNotHashed() throws {
    let counter = CallCounter()
    let count = 20_000
    func items(_ values: some Sequence<Int>) -> [CountingItem] { Self.items(values, counting: counter) }
    // 100 items deleted at the middle and the last one replaced by a new id: no common end covers the
    // 9,899 items between, which all moved up by 100.
    let m = count / 2
    let old = try Snapshot([Section(id: 0, items: items(0..<count))])
    let new = try Snapshot([
      Section(id: 0, items: items(Array(0..<m) + Array((m + 100)..<(count - 1)) + [count]))
    ])
    counter.reset()
    let changeset = Changeset(from: old, to: new)
    #expect(counter.hashes <= 110, "hashes: \(counter.hashes)")
    #expect(changeset.itemChanges.deletes.count == 101)
    #expect(changeset.itemChanges.inserts.map(\.id.value) == [count])
    #expect(changeset.itemChanges.moves.isEmpty)
  }
}
