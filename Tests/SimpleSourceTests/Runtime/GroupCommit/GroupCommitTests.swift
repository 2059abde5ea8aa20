// Group commit against a real source: groups form under load, each write is answered on its own.

@testable import SimpleSourceCore
import SimpleSourceTesting
import Testing

private struct StorageDown: Error, Equatable {}
private struct Refused: Error, Equatable { let id: String }

/// Holds the storage step of the first group until released, so that the writes after it gather.
private final class Gate: Sendable {
  let entered: AsyncStream<Void>
  let enter: AsyncStream<Void>.Continuation
  let opened: AsyncStream<Void>
  let open: AsyncStream<Void>.Continuation
  let groups = Locked<[GroupCommit<TestSection, String>.Group]>([])

  init() {
    (entered, enter) = AsyncStream.makeStream(of: Void.self)
    (opened, open) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(8))
  }
}

extension GroupCommit where Section == TestSection, Value == String {
  /// Writes `id` at the end of `section` in a task of its own, answering `id`.
  fileprivate func appending(
    _ id: String, to section: String
  ) -> Task<(version: Version, value: String), any Error> {
    Task {
      try await write { transaction in
        try transaction.appendItems([item(id)], toSection: section)
        return id
      }
    }
  }
}

@Suite("Group commit", .timeLimit(.minutes(30)))
struct GroupCommitTests {
  @Test(
    "writes that arrive while a group commits form the next group: one batch, one version, one storage commit, each answered on its own"
  )
  func writesGroup() async throws {
    let source = try TestSource(sections: layout("A: a | B: b"))
    let recorder = await BatchRecorder(await source.subscribe())
    let gate = Gate()
    let commits = GroupCommit<TestSection, String>(source) { group in
      gate.groups.withLock { $0.append(group) }
      gate.enter.yield()
      var opened = gate.opened.makeAsyncIterator()
      if group.base == 0 { await opened.next() }  // the first group waits for the test
    }
    var entered = gate.entered.makeAsyncIterator()
    let (queued, queue) = AsyncStream.makeStream(of: Void.self)
    await source.onWriterQueued { queue.yield() }
    let first = commits.appending("x", to: "A")
    await entered.next()  // the first group is in its storage step
    // Four writes gather meanwhile; the third refuses itself, and the fourth needs the first's item.
    let writes = ["p", "q", "bad", "move"].map { id in
      Task {
        try await commits.write { transaction in
          switch id {
          case "bad":
            try transaction.appendItems([item("z")], toSection: "A")
            throw Refused(id: id)
          case "move": try transaction.moveItem("x", toSection: "B")
          default: try transaction.appendItems([item(id)], toSection: "B")
          }
          return id
        }
      }
    }
    // A direct write made meanwhile takes its turn after the first group (the source is reserved).
    let direct = Task { try await source.appendItems([item("d")], toSection: "A") }
    _ = await queued.first { _ in true }
    gate.open.yield()
    let (firstVersion, firstValue) = try await first.value
    #expect(firstVersion == 1 && firstValue == "x")
    let answers = await writes.asyncMap { await $0.result }
    let later = try await direct.value
    await source.settled()
    let groups = gate.groups.withLock { $0 }
    // The direct write came after the first group; the four writes may gather in one group or two,
    // depending on when each reached the committer, but every write is answered on its own.
    #expect(groups.count >= 2 && groups.count <= 5)
    #expect(groups.first?.results.count == 1)
    for (id, answer) in zip(["p", "q", "bad", "move"], answers) {
      switch answer {
      case .success(let made): #expect(made.value == id && id != "bad")
      case .failure(let error): #expect(id == "bad" && (error as? Refused) == Refused(id: "bad"))
      }
    }
    #expect(later > 1)
    let sections = await source.snapshot.sections
    #expect(sections.flatMap(\.items).map(\.id).sorted() == ["a", "b", "d", "p", "q", "x"])
    #expect(sections[1].items.map(\.id).contains("x"), "the move ran after the write it needed")
    #expect(await recorder.showing(await source.snapshot))
    #expect(await recorder.violations == [])
    // One version per group that changed something, plus the direct write.
    let changing = groups.filter { $0.batch != nil }.count
    #expect(await source.version == changing + 1)
  }

  @Test(
    "a group of writes is diffed once, from its base to its version, and the batch it prepared is the one published",
    arguments: [HistoryLimit.default, .newest])
  func oneDiffPerGroup(history: HistoryLimit) async throws {
    let source = try TestSource(sections: layout("A: a | B: b"), history: history)
    let recorder = await BatchRecorder(await source.subscribe())
    let gate = Gate()
    let commits = GroupCommit<TestSection, String>(source) { group in
      gate.groups.withLock { $0.append(group) }
      gate.enter.yield()
      var opened = gate.opened.makeAsyncIterator()
      await opened.next()  // every group waits for the test
    }
    var entered = gate.entered.makeAsyncIterator()
    let first = commits.appending("x", to: "A")
    await entered.next()
    let (queued, queue) = AsyncStream.makeStream(of: Void.self)
    await source.onWriterQueued { queue.yield() }
    let writes = ["p", "q", "r"].map { commits.appending($0, to: "B") }
    _ = await queued.first { _ in true }  // the next group waits for the source
    // Each group's storage step is let go once the subscriber shows the groups before it, so that every
    // published batch reaches it alone (batches a subscriber has not taken compose, G6).
    gate.open.yield()
    while gate.groups.withLock({ $0.reduce(0) { $0 + $1.results.count } }) < 4 {
      await entered.next()
      #expect(await recorder.showing(await source.snapshot))
      gate.open.yield()
    }
    _ = try await first.value
    for write in writes { _ = try await write.value }
    await source.settled()
    let groups = gate.groups.withLock { $0 }.filter { $0.batch != nil }
    #expect(groups.count >= 2, "the three writes gathered behind the first group")
    #expect(await source.diffsMade == groups.count, "one diff per group, none by the publish loop")
    // `settled()` returns once the last batch is offered; the recorder may take it later.
    #expect(await recorder.showing(await source.snapshot))
    let published = await recorder.batches
    #expect(published.count == groups.count)
    for (group, batch) in zip(groups, published) {
      #expect(group.batch?.storage === batch.storage, "the prepared batch is the published one")
    }
    #expect(await recorder.showing(await source.snapshot))
    #expect(await recorder.violations == [])
    // A direct write afterwards is diffed by the publish loop, once.
    try await source.appendItems([item("d")], toSection: "A")
    await source.settled()
    #expect(await source.diffsMade == groups.count + 1)
    #expect(await recorder.showing(await source.snapshot))
  }

  @Test(
    "without a storage step, concurrent writes are answered each on its own and a refused one refuses nothing else"
  )
  func withoutStorage() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let commits = GroupCommit<TestSection, String>(source)
    let answers = await withTaskGroup(of: (String, Bool).self) { group in
      for id in ["p", "q", "bad", "r"] {
        group.addTask {
          do {
            _ = try await commits.write { transaction in
              try transaction.appendItems([item(id)], toSection: "A")
              if id == "bad" { throw Refused(id: id) }
              return id
            }
            return (id, true)
          } catch {
            return (id, (error as? Refused) == nil)
          }
        }
      }
      return await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
    }
    #expect(answers == ["p": true, "q": true, "bad": false, "r": true])
    #expect(await source.snapshot.sections.flatMap(\.items).map(\.id).sorted() == ["a", "p", "q", "r"])
  }

  @Test("a group whose storage commit fails makes nothing; each write gets that error, or its own")
  func storageFailureAbandons() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let commits = GroupCommit<TestSection, String>(source) { _ in throw StorageDown() }
    await #expect(throws: StorageDown.self) {
      try await commits.write { transaction in
        try transaction.appendItems([item("x")], toSection: "A")
        return "x"
      }
    }
    await #expect(throws: TestSource.Error(code: .unknownItemID, itemID: "nope")) {
      try await commits.write { transaction in
        try transaction.deleteItems(["nope"])
        return "nope"
      }
    }
    #expect(await source.version == 0)
    #expect(await source.snapshot.sections == layout("A: a"))
    // The source is free again.
    #expect(try await source.deleteItems(["a"]) == 1)
  }

  @Test(
    "a leader cancelled while it waits behind a prepared write makes nothing and hands the lead on; a cancelled follower makes nothing; the rest are one group"
  )
  func leaderLeaves() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let commits = GroupCommit<TestSection, String>(source)
    let (queued, queue) = AsyncStream.makeStream(of: Void.self)
    await source.onWriterQueued { queue.yield() }
    let (submitted, submit) = AsyncStream.makeStream(of: Void.self)
    commits.onSubmitted { submit.yield() }
    var queuedWriters = queued.makeAsyncIterator()
    var submittedWrites = submitted.makeAsyncIterator()
    // A prepared write holds the source: the group's leader waits for its turn behind it.
    let held = try await source.prepare { transaction in
      try transaction.appendItems([item("h")], toSection: "A")
    }
    func write(_ id: String) -> Task<(version: Version, value: String), any Error> {
      Task {
        try await commits.write { transaction in
          try transaction.appendItems([item(id)], toSection: "A")
          return id
        }
      }
    }
    let leader = write("l")
    await submittedWrites.next()
    await queuedWriters.next()
    let followers = [write("f1"), write("f2"), write("f3")]
    for _ in followers { await submittedWrites.next() }
    // A follower cancelled while it waits makes nothing.
    followers[2].cancel()
    await #expect(throws: TestSource.Error(code: .cancelled)) { try await followers[2].value }
    // The leader cancelled behind the prepared write makes nothing; the next write waiting leads and
    // queues behind the prepared write in its turn.
    leader.cancel()
    await #expect(throws: TestSource.Error(code: .cancelled)) { try await leader.value }
    await queuedWriters.next()
    _ = await held.apply()
    let made = try await [followers[0].value, followers[1].value]
    #expect(made.map(\.value) == ["f1", "f2"])
    #expect(made[0].version == made[1].version, "the two writes left are one group")
    #expect(made[0].version.number == 2)
    #expect(await source.snapshot.sections == layout("A: a h f1 f2"))
  }

  @Test("the storage step runs apart from the leader's task: cancelling the leader does not reach it")
  func storageApartFromLeader() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let gate = Gate()
    let sawCancellation = Locked<Bool?>(nil)
    let commits = GroupCommit<TestSection, String>(source) { _ in
      gate.enter.yield()
      var opened = gate.opened.makeAsyncIterator()
      await opened.next()
      sawCancellation.withLock { $0 = Task.isCancelled }
    }
    var entered = gate.entered.makeAsyncIterator()
    let leader = commits.appending("x", to: "A")
    await entered.next()
    leader.cancel()
    gate.open.yield()
    // Taken before its task was cancelled, the write is answered with its group's outcome.
    let (version, value) = try await leader.value
    #expect(value == "x" && version.number == 1)
    #expect(sawCancellation.withLock { $0 } == false)
    #expect(await source.snapshot.sections == layout("A: a x"))
  }

  @Test("many tasks writing at once are answered each once, in fewer groups than writes, every version exact")
  func underLoad() async throws {
    let source = try TestSource(sections: layout("A:"))
    let recorder = await BatchRecorder(await source.subscribe())
    let groups = Locked(0)
    let commits = GroupCommit<TestSection, String>(source) { _ in groups.withLock { $0 += 1 } }
    let writers = 8
    let each = 50
    try await withThrowingTaskGroup(of: Void.self) { group in
      for writer in 0..<writers {
        group.addTask {
          for index in 0..<each {
            let id = "w\(writer)-\(index)"
            let (version, value) = try await commits.write { transaction in
              try transaction.appendItems([item(id)], toSection: "A")
              return id
            }
            #expect(value == id && version >= 1)
          }
        }
      }
      try await group.waitForAll()
    }
    await source.settled()
    #expect(await source.snapshot.itemCount == writers * each)
    let count = groups.withLock { $0 }
    #expect(count < writers * each, "writes gathered into groups")
    #expect(await source.version == count)
    #expect(await recorder.showing(await source.snapshot))
    #expect(await recorder.violations == [])
  }
}

extension Array {
  fileprivate func asyncMap<T>(_ transform: (Element) async -> T) async -> [T] {
    var results: [T] = []
    for element in self { results.append(await transform(element)) }
    return results
  }
}
