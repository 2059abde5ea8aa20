// A batch read as edits by id: a copy kept by neighbours (KeyedCopy) follows a source's batches, under
// random transactions and whole-array updates, and equals every batch's snapshot.

import SimpleSource
@testable import SimpleSourceCore
import SimpleSourceTesting
import Testing

@Suite("Batch edits")
struct BatchEditsTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 40, casesVariable: "SIMPLESOURCE_DERIVED_RUNS")

  @Test("a copy that applies each batch's edits equals the batch's snapshot, after every batch")
  func randomBatches() async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 65))
    var checked = 0
    for run in 0..<settings.cases {
      let source = try BasicDataSource(sections: [
        TestSection(id: "A", items: (0..<6).map { TestItem("a\($0)") }),
        TestSection(id: "B", items: (0..<4).map { TestItem("b\($0)") }),
      ])
      let subscription = await source.subscribe()
      let consumer = Task {
        var copy = KeyedCopy(subscription.snapshot)
        var problems: [String] = []
        var batches = 0
        for await batch in subscription.batches {
          do {
            try copy.apply(batch.edits)
          } catch {
            problems.append("\(error)")
          }
          if copy.sections != batch.snapshot.sections {
            problems.append("after \(batch.from)→\(batch.to): \(copy.sections) ≠ \(batch.snapshot.sections)")
          }
          batches += 1
        }
        return (problems, batches)
      }
      for step in 0..<30 {
        let picks = (0..<4).map { _ in Int.random(in: 0..<1_000, using: &random) }
        let fresh = "n\(run)-\(step)"
        let kind = Int.random(in: 0..<8, using: &random)
        try await Self.mutate(source, kind: kind, picks: picks, fresh: fresh)
      }
      await source.settled()
      subscription.cancel()
      let (problems, batches) = await consumer.value
      #expect(problems.isEmpty, "run \(run): \(problems.prefix(3)); \(settings.replay)")
      checked += batches
    }
    print(
      "Batch edits: \(settings.cases) runs, \(checked) batches applied to a keyed copy; \(settings.replay)")
  }

  @Test(
    "edits come in the order storage applies them: deletes, sections, contents, places by id, sections gone")
  func order() async throws {
    let source = try BasicDataSource(sections: [
      TestSection(id: "A", items: [TestItem("a0"), TestItem("a1"), TestItem("a2")]),
      TestSection(id: "B", items: [TestItem("b0")]),
    ])
    let subscription = await source.subscribe()
    var batches = subscription.batches.makeAsyncIterator()
    try await source.transaction { transaction in
      _ = try transaction.deleteItems(["a1"])
      _ = try transaction.insertSections([TestSection(id: "C", items: [TestItem("c0")])], after: "A")
      _ = try transaction.moveItem("a0", after: "a2")
      _ = try transaction.insertItems([TestItem("n")], before: "a2")
      _ = try transaction.replaceItem(TestItem("b0", version: 1))
      _ = try transaction.moveItem("b0", toSection: "C")
      _ = try transaction.deleteSections(["B"])
    }
    let batch = try #require(await batches.next())
    #expect(
      batch.edits.map(\.description) == [
        "delete a1", "insert section C after A", "insert n first in A", "move a2 after n",
        "insert c0 first in C", "move b0 after c0", "update b0", "delete section B",
      ])
    var copy = KeyedCopy(batch.changeset.source)
    try copy.apply(batch.edits)
    #expect(copy.sections == batch.snapshot.sections)
    subscription.cancel()
  }

  @Test("an edit that does not fit a copy is a typed error naming it, and changes nothing")
  func mismatch() throws {
    let snapshot = try Snapshot([TestSection(id: "A", items: [TestItem("a0")])])
    var copy = KeyedCopy(snapshot)
    #expect(throws: KeyedCopy<TestSection>.Mismatch.self) {
      try copy.apply(.moveItem("zz", to: .after("a0")))
    }
    do {
      try copy.apply(.insertItem(TestItem("a0"), at: .first(in: "A")))
      Issue.record("a second a0 was inserted")
    } catch {
      #expect(error.description == "KeyedCopy: insert a0 first in A: a0 is held already")
    }
    #expect(throws: KeyedCopy<TestSection>.Mismatch.self) { try copy.apply(.deleteSection("A")) }
    #expect(copy.sections == snapshot.sections)
  }

  /// The cache of *What a data source promises*, as the article shows it: a copy by id through
  /// `batch.edits`, and `reached(_:)` to know it holds an order.
  @Test("the article's copy by id holds every order a mutation returned, as the source does")
  func documentedCache() async throws {
    struct Order: Identifiable, Equatable, Sendable {
      var id: Int
      var total: Int
    }
    let source = try BasicDataSource(sections: [Section(id: "open", items: [Order(id: 1, total: 10)])])
    let order = Order(id: 2, total: 25)
    // The article's code, unchanged from here.
    let subscription = await source.subscribe()
    let cache = Task {
      var orders: [Order.ID: Order] = [:]  // a copy of your own, kept by id
      for section in subscription.snapshot.sections {
        for order in section.items { orders[order.id] = order }
      }
      for await batch in subscription.batches {
        for edit in batch.edits {
          switch edit {
          case .insertItem(let order, _), .updateItem(let order): orders[order.id] = order
          case .deleteItem(let id): orders[id] = nil
          default: break  // places and sections: this copy keeps no order
          }
        }
      }
      return orders
    }
    let version = try await source.appendItems([order], toSection: "open")
    // To here.
    #expect(try await subscription.reached(version))
    try await source.deleteItems([1])
    _ = try await subscription.reached(await source.version)
    subscription.cancel()
    #expect(await cache.value == [2: order])
  }

  /// Every subscriber reads one batch's edits from one array: made by the source for its history (a batch
  /// that names few of the items the list holds), or by the first reader when the source keeps only the
  /// newest version.
  @Test("a batch's edits are made once and shared by every subscriber", arguments: [true, false])
  func editsShared(keepingHistory: Bool) async throws {
    let source = try BasicDataSource(
      sections: [TestSection(id: "A", items: (0..<10).map { TestItem("a\($0)") })],
      history: keepingHistory ? .default : .newest)
    let first = await source.subscribe()
    let second = await source.subscribe()
    try await source.transaction { transaction in
      try transaction.appendItems([TestItem("a10")], toSection: "A")
      try transaction.deleteItems(["a0"])
    }
    var firstBatches = first.batches.makeAsyncIterator()
    var secondBatches = second.batches.makeAsyncIterator()
    let batch = try #require(await firstBatches.next())
    // The history's edits are kept with the batch before any subscriber reads them.
    #expect((batch.storage.shared.withLock { $0.edits } != nil) == keepingHistory)
    let edits = batch.edits
    let other = try #require(await secondBatches.next()).edits
    #expect(edits.map(\.description) == ["delete a0", "insert a10 after a9"])
    let buffers = (
      edits.withUnsafeBufferPointer { $0.baseAddress }, other.withUnsafeBufferPointer { $0.baseAddress }
    )
    #expect(buffers.0 == buffers.1, "each subscriber made the edits again")
    first.cancel()
    second.cancel()
  }

  /// One random change: through a transaction (a batch derived from its log) or a whole-array update
  /// (a full diff), of items, sections or contents.
  static func mutate(_ source: BasicDataSource<TestSection>, kind: Int, picks: [Int], fresh: String)
    async throws
  {
    let sections = await source.snapshot.sections
    let ids = sections.flatMap { $0.items.map(\.id) }
    let sectionIDs = sections.map(\.id)
    func pick(_ index: Int, of values: [String]) -> String? {
      values.isEmpty ? nil : values[picks[index] % values.count]
    }
    switch kind {
    case 0:
      if let anchor = pick(0, of: ids) {
        _ = try await source.insertItems([TestItem(fresh)], after: anchor)
      } else if let section = pick(0, of: sectionIDs) {
        try await source.appendItems([TestItem(fresh)], toSection: section)
      }
    case 1:
      if let id = pick(0, of: ids) { _ = try await source.deleteItems([id]) }
    case 2:
      if let id = pick(0, of: ids), let anchor = pick(1, of: ids), id != anchor {
        try await source.transaction { try $0.moveItem(id, before: anchor) }
      }
    case 3:
      if let id = pick(0, of: ids), var item = sections.lazy.flatMap(\.items).first(where: { $0.id == id }) {
        item.version += 1
        _ = try await source.replaceItem(item)
      }
    case 4:
      let anchor = pick(0, of: sectionIDs) ?? "A"
      try await source.transaction { transaction in
        _ = try transaction.insertSections(
          [TestSection(id: "S" + fresh, items: [TestItem(fresh + "x"), TestItem(fresh + "y")])], after: anchor
        )
      }
    case 5:
      if sectionIDs.count > 1, let id = pick(0, of: sectionIDs) {
        try await source.transaction { _ = try $0.deleteSections([id]) }
      }
    case 6:
      if let id = pick(0, of: sectionIDs), let anchor = pick(1, of: sectionIDs), id != anchor {
        try await source.transaction { _ = try $0.moveSection(id, after: anchor) }
      }
    default:
      // A whole-array update: shuffle items across sections, retitle a header, change a content.
      let seed = UInt64(picks[0])
      _ = try await source.update { sections in
        var random = SeededGenerator(seed: seed)
        var all = sections.flatMap(\.items)
        all.shuffle(using: &random)
        for index in sections.indices { sections[index].items = [] }
        for item in all { sections[Int.random(in: 0..<sections.count, using: &random)].items.append(item) }
        if !sections.isEmpty { sections[0].header = "h\(seed)" }
      }
    }
  }
}
