// Every convenience mutation does what it says, and subscriptions are released under churn.

import Foundation
import SimpleSource
import SimpleSourceTesting
import Testing

/// One valid mutation on a source holding `A: a b c | B: d e | C:`, and the layout it must leave.
struct GoodMutation: Sendable, CustomTestStringConvertible {
  let name: String
  let expected: String
  let mutation: @Sendable (TestSource) async throws -> Void
  init(_ name: String, _ expected: String, _ mutation: @escaping @Sendable (TestSource) async throws -> Void)
  {
    self.name = name
    self.expected = expected
    self.mutation = mutation
  }
  var testDescription: String { name }
}

private func at(_ section: Int, _ item: Int) -> ItemPosition { ItemPosition(section: section, item: item) }

// Ten minutes, not two: under ThreadSanitizer, on a two-core machine shared with the rest of the suite, the
// 10,000-cycle churn test alone took over two minutes in CI. The limit is there to turn a hang into a failure.
@Suite("BasicDataSource mutations", .timeLimit(.minutes(30)))
struct DataSourceMutationTests {
  static let cases: [GoodMutation] = [
    .init("replace all sections", "X: x") { try await $0.setSections(layout("X: x")) },
    .init("append sections", "A: a b c | B: d e | C: | X: x") { try await $0.appendSections(layout("X: x")) },
    .init("insert sections before", "A: a b c | X: x | B: d e | C:") {
      try await $0.insertSections(layout("X: x"), before: "B")
    },
    .init("insert sections after", "A: a b c | B: d e | C: | X: x") {
      try await $0.insertSections(layout("X: x"), after: "C")
    },
    .init("delete sections", "B: d e") { try await $0.deleteSections(["A", "C", "A"]) },
    .init("move a section before another", "C: | A: a b c | B: d e") {
      try await $0.moveSection("C", before: "A")
    },
    .init("move a section after another", "B: d e | A: a b c | C:") {
      try await $0.moveSection("A", after: "B")
    },
    .init("move a section to an index", "B: d e | C: | A: a b c") { try await $0.moveSection("A", to: 2) },
    .init("update a section's header", "A': a b c | B: d e | C:") {
      try await $0.updateSection(TestSection(id: "A", header: "A v1"))
    },
    .init("append items", "A: a b c | B: d e | C: x y") {
      try await $0.appendItems([item("x"), item("y")], toSection: "C")
    },
    .init("insert items before", "A: a x b c | B: d e | C:") {
      try await $0.insertItems([item("x")], before: "b")
    },
    .init("insert items after", "A: a b c x | B: d e | C:") {
      try await $0.insertItems([item("x")], after: "c")
    },
    .init("delete items", "A: b | B: e | C:") { try await $0.deleteItems(["a", "c", "d"]) },
    .init("replace an item", "A: a b' c | B: d e | C:") { try await $0.replaceItem(item("b", 1)) },
    .init("move an item before another, later in its section", "A: b a c | B: d e | C:") {
      try await $0.moveItem("a", before: "c")
    },
    .init("move an item before another, earlier in its section", "A: c a b | B: d e | C:") {
      try await $0.moveItem("c", before: "a")
    },
    .init("move an item after another section's item", "A: b c | B: d a e | C:") {
      try await $0.moveItem("a", after: "d")
    },
    .init("move an item to a section", "A: b c | B: d e | C: a") {
      try await $0.moveItem("a", toSection: "C")
    },
    .init("move an item to the end of its own section", "A: b c a | B: d e | C:") {
      try await $0.moveItem("a", toSection: "A")
    },
    .init("move by index path within a section", "A: b c a | B: d e | C:") {
      try await $0.moveItem(at: at(0, 0), to: at(0, 2))
    },
    .init("move by index path across sections", "A: a c | B: d e b | C:") {
      try await $0.moveItem(at: at(0, 1), to: at(1, 2))
    },
    .init("move by index path into an empty section", "A: a b c | B: e | C: d") {
      try await $0.moveItem(at: at(1, 0), to: at(2, 0))
    },
    .init("a transaction", "B: e d | A: a c x") {
      try await $0.update { sections in
        sections.removeLast()
        sections[0].items.remove(at: 1)
        sections[0].items.append(item("x"))
        sections[1].items.reverse()
        sections.swapAt(0, 1)
      }
    },
  ]

  @Test("a mutation leaves the expected layout, one version and one valid batch", arguments: cases)
  func mutation(_ example: GoodMutation) async throws {
    let source = try TestSource(sections: layout("A: a b c | B: d e | C:"))
    let recorder = await BatchRecorder(await source.subscribe())
    try await example.mutation(source)
    #expect(await source.snapshot.sections == layout(example.expected))
    #expect(await source.version == 1)
    await source.settled()
    await recorder.showing(await source.snapshot)
    #expect(await recorder.batches.count == 1)
    #expect(await recorder.violations == [])
  }

  @Test("the transaction returns its body's result")
  func transactionResult() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let removed = try await source.update { sections in sections[0].items.removeFirst().id }
    #expect(removed == "a")
  }

  /// The cycles of the churn test: `SIMPLESOURCE_CHURN_CYCLES`, 2,000 by default (10,000 in CI).
  static let churnCycles =
    ProcessInfo.processInfo.environment["SIMPLESOURCE_CHURN_CYCLES"].flatMap(Int.init) ?? 2_000

  @Test("thousands of subscribe and cancel cycles while writers run leave no subscriber behind")
  func subscribeCancelChurn() async throws {
    let source = try TestSource(sections: layout("A: | B:"))
    // A writer that races the cycles with a write per cycle, and the cycles' own write, which gives the
    // consumers that wait for a batch one to get. Not writers spinning until the cycles end: on a busy
    // machine those would burn a core for as long as the cycles take.
    let writer = Task {
      for index in 0..<Self.churnCycles {
        // The list stays small: each item lives until the next one arrives.
        _ = try? await source.appendItems([item("w\(index)")], toSection: "B")
        if index > 0 { _ = try? await source.deleteItems(["w\(index - 1)"]) }
      }
    }
    for cycle in 0..<Self.churnCycles {
      let subscription = await source.subscribe()
      try await source.appendItems([item("n\(cycle)")], toSection: "A")
      if cycle > 0 { try await source.deleteItems(["n\(cycle - 1)"]) }
      switch cycle % 4 {
      case 0:
        continue  // dropped at the end of the iteration
      case 3:
        // Held while its consumer breaks out of the loop: only cancel() ends it.
        let consumer = Task {
          for await _ in subscription.batches { break }
        }
        await consumer.value
        subscription.cancel()
      case 1:
        let consumer = Task {
          for await _ in subscription.batches {}
        }
        consumer.cancel()
        await consumer.value
      default:
        let consumer = Task {
          for await _ in subscription.batches { break }
        }
        await consumer.value
      }
    }
    await writer.value
    await source.settled()
    #expect(source.subscriberCount == 0)
  }
}

@Suite("Recorded transactions", .timeLimit(.minutes(30)))
struct TransactionTests {
  @Test("a transaction's edits make one version and one batch, equal to the full diff")
  func oneVersionOneBatch() async throws {
    let source = try TestSource(sections: layout("A: a b c d | B: e f"))
    let recorder = await BatchRecorder(await source.subscribe())
    let (version, seen) = try await source.transaction { transaction throws(TestSource.Error) in
      try transaction.replaceItem(item("b", 1))
      try transaction.moveItem("a", after: "d")
      try transaction.deleteItems(["e"])
      try transaction.appendItems([item("g")], toSection: "B")
      try transaction.insertItems([item("h")], before: "c")
      try transaction.refreshItems(["f"])
      return transaction.snapshot.description
    }
    #expect(seen == "[A: b h c d a | B: f g]", "the body reads its own edits")
    #expect(version == 1, "the caller gets the transaction's version")
    #expect(await source.version == 1)
    await source.settled()
    await recorder.showing(await source.snapshot)
    let batches = await recorder.batches
    try #require(batches.count == 1)
    let changeset = batches[0].changeset
    let full = Changeset(
      from: try Snapshot(layout("A: a b c d | B: e f")), to: changeset.target, refreshing: ["f"])
    #expect(changeset.itemChanges.deletes == full.itemChanges.deletes)
    #expect(changeset.itemChanges.inserts == full.itemChanges.inserts)
    #expect(changeset.itemChanges.updates == full.itemChanges.updates)
    #expect(changeset.itemChanges.moves.count == 1 && full.itemChanges.moves.count == 1)
    #expect(changeset.target.description == "[A: b h c d a | B: f g]")
  }

  @Test("a transaction that changes nothing makes no version; an edit that throws inside can be caught")
  func nothingChanged() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let (version, changed) = try await source.transaction { transaction throws(TestSource.Error) in
      let replaced = try transaction.replaceItem(item("a"))
      let moved = try transaction.moveItem("b", after: "a")
      // A bad edit caught inside the body changes nothing, and the transaction goes on.
      let refused = (try? transaction.deleteItems(["zz"])) == nil
      return !replaced && !moved && refused
    }
    #expect(changed)
    #expect(version == 0)
    #expect(await source.version == 0)
  }

  @Test(
    "a transaction whose body returns nothing returns its version; edits that undo each other still make one")
  func versionOfAVoidBody() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let version = try await source.transaction { transaction in
      try transaction.replaceItem(item("a", 1))
    }
    #expect(version == 1)
    let undone = try await source.transaction { transaction throws(TestSource.Error) in
      try transaction.replaceItem(item("a", 2))
      try transaction.replaceItem(item("a", 1))
    }
    #expect(undone == 2, "the body changed the source, then back: a version, no batch")
    #expect(await source.version == 2)
  }
}

@Suite("updateItem", .timeLimit(.minutes(30)))
struct UpdateItemTests {
  @Test("updateItem reads, changes and stores one item in one step; equal results make no version")
  func readModifyWrite() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let recorder = await BatchRecorder(await source.subscribe())
    let version = try await source.updateItem("b") { $0.version += 1 }
    #expect(version == 1)
    #expect(await source.snapshot.item(withID: "b")?.version == 1)
    #expect(try await source.updateItem("b") { _ in } == 1, "nothing changed: the current version")
    await source.settled()
    await recorder.showing(await source.snapshot)
    #expect(await recorder.batches.count == 1)
  }

  @Test("racing read-modify-writes lose no update")
  func racingUpdates() async throws {
    let source = try TestSource(sections: layout("A: a"))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<50 {
        group.addTask { try await source.updateItem("a") { $0.version += 1 } }
      }
      try await group.waitForAll()
    }
    #expect(await source.snapshot.item(withID: "a")?.version == 50)
  }

  @Test("an unknown id or a changed id is a typed error that leaves the source as it was")
  func typedErrors() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    await #expect(throws: TestSource.Error(code: .unknownItemID, itemID: "zz")) {
      try await source.updateItem("zz") { $0.version += 1 }
    }
    do {
      try await source.updateItem("a") { $0 = item("c") }
      Issue.record("a changed id was stored")
    } catch {
      #expect(error.code == .changedItemID && error.itemID == "a")
      #expect(error.positions == [ItemPosition(section: 0, item: 0)])
    }
    #expect(await source.version == 0)
    #expect(await source.snapshot.description == "[A: a b]")
  }
}

@Suite("update { } errors", .timeLimit(.minutes(30)))
struct UpdateErrorTests {
  @Test("a body that does not throw makes update's error a typed DataSourceError")
  func typedError() async throws {
    let source = try TestSource(sections: layout("A: a b | B: c"))
    do {
      try await source.update { sections in sections[1].items.append(item("a")) }
      Issue.record("a duplicate id was accepted")
    } catch {
      // `error` is a `DataSourceError` here: this line would not compile if it were `any Error`.
      let typed: TestSource.Error = error
      #expect(typed.code == .duplicateItemID && typed.itemID == "a")
    }
    #expect(await source.version == 0)
    #expect(await source.snapshot.description == "[A: a b | B: c]")
  }
}

@Suite("Catching typed errors", .timeLimit(.minutes(30)))
struct CatchingErrorsTests {
  @Test(
    "a data source's error is caught by its code where it arrives as any Error: task groups, untyped closures"
  )
  func catchByCode() async throws {
    let source = try TestSource(sections: layout("A: a"))
    var caught = false
    do {
      try await withThrowingTaskGroup(of: Version.self) { group in
        group.addTask { try await source.deleteItems(["zz"]) }
        try await group.waitForAll()
      }
    } catch DataSourceErrorCode.duplicateItemID {
      Issue.record("matched the wrong code")
    } catch DataSourceErrorCode.unknownItemID {
      caught = true
    }
    #expect(caught)
    caught = false
    do {
      try await source.transaction { transaction in try transaction.deleteItems(["zz"]) }
    } catch DataSourceErrorCode.unknownItemID {
      caught = true
    }
    #expect(caught, "an untyped transaction body")
    struct Other: Error {}
    #expect(!(DataSourceErrorCode.unknownItemID ~= Other()))
  }
}
