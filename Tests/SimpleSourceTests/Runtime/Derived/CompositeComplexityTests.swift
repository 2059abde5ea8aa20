// Fences the cost of a child's batch to a composite: hashes and `==` for one child edit must not grow
// with the children's size.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore

// A 30-minute hang guard: CI runs this suite at 1,000,000 items beside the exhaustive suites, which hold
// both threads of a two-core pool for minutes, and its tests wait for a thread on that clock.
@Suite("Composite complexity", .timeLimit(.minutes(30)))
struct CompositeComplexityTests {
  typealias TestSection = Section<Int, CountingItem>

  /// Hashes plus `==` of each kind of edit of one child of a composite of ten children, each of ten
  /// sections of `perSection` items, from the edit to the composite's batch (the child's own work
  /// included).
  static func calls(perSection: Int) async throws -> [String: Int] {
    let counter = CallCounter()
    func id(_ value: Int) -> CountingID { CountingID(value: value, counter: counter) }
    func item(_ value: Int, version: Int = 0) -> CountingItem {
      CountingItem(id: id(value), version: version)
    }
    let children = try (0..<10).map { child in
      try BasicDataSource(
        sections: (0..<10).map { section in
          let first = (child * 10 + section) * perSection
          return TestSection(id: child * 10 + section, items: (first..<(first + perSection)).map { item($0) })
        })
    }
    let edited = children[4]
    let base = 40 * perSection
    try await edited.replaceItem(item(base + 1, version: 1))  // builds the child's persistent form, once
    let composite = try await CompositeDataSource(children)
    let subscription = await composite.subscribe()
    var batches = subscription.batches.makeAsyncIterator()
    let steps: [(String, () async throws -> Void)] = [
      ("replace", { try await edited.replaceItem(item(base + perSection / 2, version: 2)) }),
      ("insert", { try await edited.insertItems([item(-1)], before: id(base + perSection / 3)) }),
      ("move far", { try await edited.moveItem(id(base + 3), before: id(base + 9 * perSection + 5)) }),
      ("delete", { try await edited.deleteItems([id(base + perSection / 4)]) }),
    ]
    var result: [String: Int] = [:]
    for (name, step) in steps {
      await composite.settled()
      counter.reset()
      try await step()
      await composite.settled()
      result[name] = counter.hashes + counter.equalities
      #expect(await batches.next() != nil, "\(name): no batch")
    }
    #expect(await composite.snapshot.itemCount == 100 * perSection)
    let shown = await composite.snapshot.sections
    #expect(Array(shown[40..<50]) == (await edited.snapshot).sections, "the child's sections, in place")
    subscription.cancel()
    return result
  }

  @Test("a child's edit hashes and compares as often at 1,000,000 items as at 10,000")
  func flat() async throws {
    let largeCount =
      ProcessInfo.processInfo.environment["SIMPLESOURCE_COMPLEXITY_LARGE"].flatMap(Int.init) ?? 100_000
    let small = try await Self.calls(perSection: 100)
    let large = try await Self.calls(perSection: largeCount / 100)
    for name in small.keys.sorted() {
      print("Composite calls, \(name): 10,000 items \(small[name]!), \(largeCount) items \(large[name]!)")
      #expect(large[name]! <= 2 * small[name]! + 20, "\(name): \(small[name]!) -> \(large[name]!)")
      #expect(large[name]! <= 300, "\(name): \(large[name]!)")
    }
  }
}
