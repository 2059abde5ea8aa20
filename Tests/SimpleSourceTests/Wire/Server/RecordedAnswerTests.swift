// Answers kept in the writer's storage: an edit sent to two instances of a service, or again after one
// restarted, is made once and gets its first answer; one older than what the storage keeps is refused as
// expired, never made twice; and the edit's base, which makes that possible, travels on the wire.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Answers recorded with the write", .timeLimit(.minutes(30)))
struct RecordedAnswerTests {
  /// Storage shared by every instance of a service: the source's writes and each edit's answer under
  /// (scope, id), recorded in one step; the answers of the newest `retention` versions are kept.
  actor Storage {
    let source: BasicDataSource<TestSection>
    let retention: Int
    var answers: [String: (version: Int, fingerprint: String)] = [:]
    /// How often each edit id was made: never more than once.
    var made: [String: Int] = [:]
    var busy = false
    var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ source: BasicDataSource<TestSection>, retention: Int) {
      self.source = source
      self.retention = retention
    }

    /// The oldest version whose answers are kept.
    func horizon() async -> Int { max(0, await source.version - retention + 1) }

    /// One transaction: look the edit up, make it and record its answer, or answer from the record.
    func write(_ edit: WireEdit<TestSection>, scope: String) async throws(WireError) -> Int {
      while busy { await withCheckedContinuation { waiting.append($0) } }
      busy = true
      defer {
        busy = false
        if !waiting.isEmpty { waiting.removeFirst().resume() }
      }
      let key = "\(scope)|\(edit.id)"
      let recorded = answers[key]
      if let answer = try edit.recall(
        recorded: recorded?.version, fingerprint: recorded?.fingerprint, answersKeptFrom: await horizon())
      {
        return answer
      }
      let write: PreparedWrite<TestSection, Void>
      do {
        write = try await source.prepare { (transaction: inout Transaction<TestSection>) throws in
          try edit.apply(to: &transaction)
        }
      } catch {
        throw WireError(.invalidEdit, "\(error)")
      }
      let version = write.version.number
      await write.apply()
      made[edit.id, default: 0] += 1
      answers[key] = (version, edit.fingerprint)
      let kept = await horizon()
      answers = answers.filter { $0.value.version >= kept }
      return version
    }

    nonisolated var writer: WireWriter<TestSection, String> {
      WireWriter { (edit, scope, _) throws(WireError) in try await self.write(edit, scope: scope) }
    }
  }

  /// An instance of the service: its own memory of answers, the shared storage's writer.
  static func instance(_ storage: Storage) -> WireService<TestSection, String> {
    WireService(source: storage.source, stream: "s", edits: storage.writer) { _ in { _ in true } }
  }

  /// Sends `edit` on a new session of `service` for `scope`, and returns the answer.
  static func send(
    _ edit: WireEdit<TestSection>, to service: WireService<TestSection, String>, as scope: String
  )
    async -> WireMessage<TestSection>?
  {
    let answers = Locked<[WireMessage<TestSection>]>([])
    let session = service.session(scope: scope) { data in
      if let message = try? WireCoder().read(data, as: TestSection.self).0 {
        answers.withLock { $0.append(message) }
      }
    }
    await session.receive(bytes(.edit(edit)))
    await session.close()
    return answers.withLock { $0.last }
  }

  @Test("an edit's base is written and read back; an edit without one reads as nil")
  func baseOnTheWire() throws {
    let edit = WireEdit<TestSection>(id: "c-1", operations: [.delete(["a"])], base: 14)
    let text = String(decoding: WireCoder().encode(.edit(edit)), as: UTF8.self)
    #expect(text.contains(#""base":14"#), "\(text)")
    guard case .edit(let read) = try WireCoder().read(Data(text.utf8), as: TestSection.self).0 else {
      Issue.record("not an edit: \(text)")
      return
    }
    #expect(read.base == 14 && read.id == "c-1")
    let older = text.replacingOccurrences(of: #""base":14,"#, with: "")
    guard case .edit(let withoutBase) = try WireCoder().read(Data(older.utf8), as: TestSection.self).0 else {
      Issue.record("not an edit: \(older)")
      return
    }
    #expect(withoutBase.base == nil)
  }

  @Test("a remote source's edit carries the version it held when it was made, also when sent again")
  func remoteSendsBase() async throws {
    let remote = RemoteDataSource<TestSection>(clientID: "c")
    try await remote.receive(.reset(stream: "s", version: 3, snapshot: snapshot("A: a b")))
    let sent = Locked<[WireEdit<TestSection>]>([])
    let sink: @Sendable (WireMessage<TestSection>) -> Void = { message in
      if case .edit(let edit) = message { sent.withLock { $0.append(edit) } }
    }
    await remote.connect(sink)
    let first = try await remote.submit([.delete(["a"])])
    let grown = Changeset(from: snapshot("A: a b"), to: snapshot("A: a b c"))
    try await remote.receive(.batch(WireBatch(UpdateBatch(from: 3, to: 5, changeset: grown))))
    let second = try await remote.submit([.delete(["b"])])
    await remote.disconnect()
    await remote.connect(sink)  // both pending edits are sent again, with their first base
    let bases = sent.withLock { $0.map { "\($0.id)@\($0.base ?? -1)" } }
    #expect(bases == ["\(first)@3", "\(second)@5", "\(first)@3", "\(second)@5"], "\(bases)")
  }

  @Test(
    "recall: a recorded answer wins; nothing recorded makes an edit at or after the horizon, or without a base"
  )
  func recallRule() throws {
    for horizon in 0..<4 {
      for base in [nil] + (0..<5).map(Optional.some) {
        let edit = WireEdit<TestSection>(id: "e", operations: [], base: base)
        let other = WireEdit<TestSection>(id: "e", operations: [.delete(["a"])], base: base)
        #expect(try edit.recall(recorded: 9, fingerprint: nil, answersKeptFrom: horizon) == 9)
        #expect(try edit.recall(recorded: 9, fingerprint: edit.fingerprint, answersKeptFrom: horizon) == 9)
        #expect(throws: WireError.self) {
          try edit.recall(recorded: 9, fingerprint: other.fingerprint, answersKeptFrom: horizon)
        }
        if let base, base < horizon {
          #expect(throws: WireError.self) {
            try edit.recall(recorded: nil, fingerprint: nil, answersKeptFrom: horizon)
          }
          do {
            _ = try edit.recall(recorded: nil, fingerprint: nil, answersKeptFrom: horizon)
          } catch {
            #expect(error.code == .editExpired && error.detail.contains("version \(base)"), "\(error)")
          }
        } else {
          #expect(try edit.recall(recorded: nil, fingerprint: nil, answersKeptFrom: horizon) == nil)
        }
      }
    }
  }

  @Test("an edit resent to another instance is made once and gets its first answer, a delete too")
  func anotherInstance() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let storage = Storage(source, retention: 100)
    let (first, second) = (Self.instance(storage), Self.instance(storage))
    let insert = WireEdit<TestSection>(
      id: "c-1", operations: [.insert([TestItem("n")], .end(of: "A"))], base: 0)
    let delete = WireEdit<TestSection>(id: "c-2", operations: [.delete(["a"])], base: 1)
    for edit in [insert, delete] {
      let answer = await Self.send(edit, to: first, as: "ann")
      // The first instance's memory is not the second's: only the storage knows the id.
      let again = await Self.send(edit, to: second, as: "ann")
      let (first, then) = (answer.map { WireCoder().encode($0) }, again.map { WireCoder().encode($0) })
      #expect(first == then, "\(String(describing: answer)) then \(String(describing: again))")
      guard case .confirmed(edit.id, _) = again else {
        Issue.record("\(edit.id) not confirmed: \(String(describing: again))")
        continue
      }
    }
    let (made, version) = (await source.snapshot, await source.version)
    #expect(made.sections == layout("A: b n") && version == 2)
    #expect(await storage.made == ["c-1": 1, "c-2": 1])
    // Another scope's id is its own edit: made, not answered from ann's record.
    let bobs = await Self.send(
      WireEdit(id: "c-1", operations: [.insert([TestItem("m")], .end(of: "A"))], base: 2), to: second,
      as: "bob")
    guard case .confirmed("c-1", 3) = bobs else {
      Issue.record("bob's c-1 was answered as ann's: \(String(describing: bobs))")
      return
    }
  }

  @Test(
    "another edit under an answered id is refused as reused on every instance and not made; the first edit's resend still gets its answer"
  )
  func reusedID() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let storage = Storage(source, retention: 100)
    let (first, second) = (Self.instance(storage), Self.instance(storage))
    let made = WireEdit<TestSection>(
      id: "c-1", operations: [.insert([TestItem("n")], .end(of: "A"))], base: 0)
    guard case .confirmed("c-1", 1) = await Self.send(made, to: first, as: "ann") else {
      Issue.record("c-1 was not made")
      return
    }
    // A client that forgot c-1 (a power loss, a store cleared) counts its ids again: a new edit, same id.
    let reused = WireEdit<TestSection>(id: "c-1", operations: [.delete(["b"])], base: 1)
    for instance in [first, second] {
      let answer = await Self.send(reused, to: instance, as: "ann")
      guard case .refused("c-1", let error) = answer else {
        Issue.record("a reused id was answered with another edit's answer: \(String(describing: answer))")
        continue
      }
      #expect(error.code == .editIDReused && error.detail.contains("c-1"), "\(error)")
    }
    let (after, afterVersion) = (await source.snapshot, await source.version)
    #expect(after.sections == layout("A: a b n") && afterVersion == 1)
    // The edit the id names is still answered with its version, on either instance.
    for instance in [first, second] {
      guard case .confirmed("c-1", 1) = await Self.send(made, to: instance, as: "ann") else {
        Issue.record("c-1's resend lost its answer")
        continue
      }
    }
    #expect(await storage.made == ["c-1": 1])
  }

  @Test("a fingerprint covers an edit's operations, not its id or base, and is the same in every process")
  func fingerprints() {
    let edit = WireEdit<TestSection>(
      id: "c-1", operations: [.insert([TestItem("n")], .end(of: "A"))], base: 3)
    // A fixed value: storage written by one process is read by another, and by the next release.
    #expect(edit.fingerprint == "a6db878240e59366", "\(edit.fingerprint)")
    // A resend may carry another id's prefix or a base sent anew: the same operations, the same print.
    for same in [
      WireEdit(id: "other", operations: edit.operations, base: 3),
      WireEdit(id: "c-1", operations: edit.operations, base: 4),
      WireEdit(id: "c-1", operations: edit.operations),
    ] {
      #expect(same.fingerprint == edit.fingerprint)
    }
    let others: [WireEdit<TestSection>] = [
      WireEdit(id: "c-1", operations: [.insert([TestItem("n", version: 1)], .end(of: "A"))], base: 3),
      WireEdit(id: "c-1", operations: [.insert([TestItem("n")], .end(of: "B"))], base: 3),
      WireEdit(id: "c-1", operations: [.insert([TestItem("n")], .before("a"))], base: 3),
      WireEdit(id: "c-1", operations: edit.operations + [.delete(["n"])], base: 3),
    ]
    let prints = Set(others.map(\.fingerprint) + [edit.fingerprint])
    #expect(prints.count == others.count + 1 && prints.allSatisfy { $0.count == 16 }, "\(prints)")
  }

  @Test("an edit older than the answers kept is refused as expired and not made; a newer unknown one is made")
  func expired() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let storage = Storage(source, retention: 2)
    let (first, second) = (Self.instance(storage), Self.instance(storage))
    let old = WireEdit<TestSection>(id: "c-1", operations: [.insert([TestItem("n")], .end(of: "A"))], base: 0)
    guard case .confirmed("c-1", 1) = await Self.send(old, to: first, as: "ann") else {
      Issue.record("c-1 was not made")
      return
    }
    for index in 2...4 {
      let edit = WireEdit<TestSection>(
        id: "c-\(index)", operations: [.insert([TestItem("x\(index)")], .end(of: "A"))], base: index - 1)
      _ = await Self.send(edit, to: first, as: "ann")
    }
    let (horizon, kept) = (await storage.horizon(), await storage.answers)
    #expect(horizon == 3 && kept.count == 2)
    let before = await source.snapshot
    // Its answer is forgotten and it was made before the horizon: refused, not inserted again (here the
    // duplicate id would refuse it anyway; a replace would not be).
    let replace = WireEdit<TestSection>(id: "c-9", operations: [.replace(TestItem("a", version: 1))], base: 1)
    for edit in [old, replace] {
      guard case .refused(edit.id, let error) = await Self.send(edit, to: second, as: "ann") else {
        Issue.record("\(edit.id) was not refused")
        continue
      }
      #expect(error.code == .editExpired, "\(error)")
    }
    #expect(await source.snapshot == before)
    let fresh = WireEdit<TestSection>(id: "c-10", operations: [.replace(TestItem("a", version: 1))], base: 4)
    guard case .confirmed("c-10", 5) = await Self.send(fresh, to: second, as: "ann") else {
      Issue.record("an edit made after the horizon was not made")
      return
    }
    #expect(await storage.made.values.allSatisfy { $0 == 1 })
  }

  @Test("random resends to two instances with a short retention: every id made at most once, answers agree")
  func randomResends() async throws {
    let settings = RandomTestSettings.current(defaultCases: 20, casesVariable: "SIMPLESOURCE_WIRE_CASES")
    for run in 0..<settings.cases {
      var random = SeededGenerator(seed: settings.seed &+ UInt64(run))
      let source = try BasicDataSource(sections: layout("A: a"))
      let storage = Storage(source, retention: Int.random(in: 1...6, using: &random))
      let instances = [Self.instance(storage), Self.instance(storage)]
      var sent: [WireEdit<TestSection>] = []
      var confirmed: [String: Int] = [:]
      for step in 0..<24 {
        let edit: WireEdit<TestSection>
        if !sent.isEmpty, Bool.random(using: &random) {
          edit = sent.randomElement(using: &random)!
        } else {
          // A title change (made again, it would change the source again) from the version held now.
          edit = WireEdit(
            id: "e\(step)", operations: [.replace(TestItem("a", version: step))],
            base: await source.version.number)
          sent.append(edit)
        }
        let answer = await Self.send(edit, to: instances.randomElement(using: &random)!, as: "ann")
        switch answer {
        case .confirmed(let id, let version):
          if let earlier = confirmed[id] {
            #expect(
              earlier == version, "run \(run): \(id) answered \(earlier) then \(version); \(settings.replay)")
          }
          confirmed[id] = version
        case .refused(let id, let error):
          // Only a resend is refused, and only as expired: a new edit is made from the version held.
          #expect(
            error.code == .editExpired && confirmed[id] != nil,
            "run \(run): \(id) refused: \(error); \(settings.replay)")
        default:
          Issue.record("run \(run): no answer to \(edit.id); \(settings.replay)")
        }
      }
      let made = await storage.made
      #expect(made.values.allSatisfy { $0 == 1 }, "run \(run): \(made); \(settings.replay)")
      #expect(Set(made.keys) == Set(confirmed.keys), "run \(run): \(settings.replay)")
    }
  }
}
