// Concurrency bugs as users write them, each beside its correct version: what seeded schedules must find.

import SimpleSource
import SimpleSourceTesting

/// A failure a planted bug's test throws.
struct PlantedBugFound: Error, CustomStringConvertible {
  let description: String
}

/// The planted bugs of the schedules' catalogue. Each `run` is a test body: the buggy version fails under
/// some interleavings, the correct one under none.
enum PlantedBug: String, CaseIterable, Sendable, CustomStringConvertible {
  /// Reads an actor's state, awaits, then writes what it read plus one: the other task's update is lost.
  case lostUpdateAcrossAwait
  /// Two tasks check a source's snapshot for an id, then append it: the second append is a duplicate.
  case checkThenActOnSnapshot
  /// A subscriber counts one batch per mutation; coalescing may deliver two mutations as one batch.
  case oneBatchPerMutation
  /// Waits for the version of the writer it started first, then expects both writers' items.
  case waitForTheFirstWriter

  var description: String { rawValue }

  /// Runs the bug's test body; `correct` runs the fixed version.
  func run(correct: Bool) async throws {
    switch self {
    case .lostUpdateAcrossAwait: try await Self.lostUpdate(correct: correct)
    case .checkThenActOnSnapshot: try await Self.checkThenAct(correct: correct)
    case .oneBatchPerMutation: try await Self.batchPerMutation(correct: correct)
    case .waitForTheFirstWriter: try await Self.firstWriter(correct: correct)
    }
  }

  // MARK: - The bodies

  /// A counter whose increment awaits a remote check between its read and its write.
  actor Tally {
    private(set) var count = 0
    private let remote = Remote()

    func increment(correct: Bool) async {
      if correct {
        _ = await remote.allow()
        count += 1
      } else {
        let read = count
        _ = await remote.allow()  // another increment may run here
        count = read + 1
      }
    }
  }

  /// A stand-in for a service the counter asks. It counts what it was asked: a body that touches the
  /// actor's state keeps its hop in a release build, where the optimizer removes the hop to a body that
  /// touches nothing, and with it the suspension the bug needs.
  actor Remote {
    private var asked = 0

    func allow() -> Bool {
      asked += 1
      return true
    }
  }

  static func lostUpdate(correct: Bool) async throws {
    let tally = Tally()
    async let first: Void = tally.increment(correct: correct)
    async let second: Void = tally.increment(correct: correct)
    _ = await (first, second)
    let count = await tally.count
    guard count == 2 else {
      throw PlantedBugFound(description: "lost an update: the count is \(count), not 2")
    }
  }

  static func checkThenAct(correct: Bool) async throws {
    let source = try BasicDataSource(sections: [TestSection(id: "inbox", items: [])])
    @Sendable func addIfMissing(_ id: String) async throws {
      if correct {
        try await source.transaction { transaction in
          if !transaction.snapshot.contains(item: id) {
            _ = try transaction.appendItems([TestItem(id)], toSection: "inbox")
          }
        }
      } else if await !source.snapshot.contains(item: id) {
        _ = try await source.appendItems([TestItem(id)], toSection: "inbox")
      }
    }
    async let first: Void = addIfMissing("welcome")
    async let second: Void = addIfMissing("welcome")
    do {
      _ = try await (first, second)
    } catch {
      throw PlantedBugFound(description: "check-then-act: \(error)")
    }
  }

  static func batchPerMutation(correct: Bool) async throws {
    let source = try BasicDataSource(sections: [TestSection(id: "inbox", items: [])])
    let subscription = await source.subscribe()
    async let batchesSeen: Int = {
      var batches = 0
      for await batch in subscription.batches {
        batches += 1
        // The bug waits for a second batch; two mutations may arrive as one.
        if correct ? batch.to.number >= 2 : batches == 2 { break }
      }
      return batches
    }()
    _ = try await source.appendItems([TestItem("a")], toSection: "inbox")
    await source.settled()  // offered, not yet taken: the reader may still be behind
    _ = try await source.appendItems([TestItem("b")], toSection: "inbox")
    guard await batchesSeen >= 1 else { throw PlantedBugFound(description: "no batch arrived") }
  }

  static func firstWriter(correct: Bool) async throws {
    let source = try BasicDataSource(sections: [TestSection(id: "inbox", items: [])])
    let recorder = await BatchRecorder(source.subscribe())
    let first = Task.schedulable("first writer") {
      try await source.appendItems([TestItem("a")], toSection: "inbox")
    }
    let second = Task.schedulable("second writer") {
      try await source.appendItems([TestItem("b")], toSection: "inbox")
    }
    _ = try await (first.value, second.value)
    // The bug expects the first writer's item first; the second writer may have gone first.
    let expected =
      correct
      ? await source.snapshot
      : try Snapshot([TestSection(id: "inbox", items: [TestItem("a"), TestItem("b")])])
    guard await recorder.showing(expected) else {
      throw PlantedBugFound(description: "the subscriber never showed \(expected)")
    }
  }
}
