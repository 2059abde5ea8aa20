// A remote source's durable replica: what its file store leaves after a crash at every byte of its last
// write, how a damaged, newer or foreign store is refused, and a restart that resumes instead of resetting.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

/// A folder of its own under the temporary directory, removed when the test ends.
final class ReplicaFolder: Sendable {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("replica-\(UUID().uuidString)")
  deinit { try? FileManager.default.removeItem(at: url) }

  var journal: URL { url.appendingPathComponent("journal") }
  var state: URL { url.appendingPathComponent("state") }

  func store(sync: FileReplicaStore<TestSection>.Sync = .compactions) -> FileReplicaStore<TestSection> {
    FileReplicaStore(directory: url, sync: sync)
  }

  /// A copy of the folder, for a test that damages it.
  func copy() throws -> ReplicaFolder {
    let copy = ReplicaFolder()
    try FileManager.default.copyItem(at: url, to: copy.url)
    return copy
  }
}

/// What `store` loads, replayed: the state a replica starts from.
func replayed(_ store: FileReplicaStore<TestSection>) throws -> ReplicaState<TestSection>? {
  let (base, journal) = try store.load()
  guard var state = base else { return nil }
  for message in journal { try state.replay(message) }
  return state
}

extension ReplicaState where Section == TestSection {
  /// What a test compares: everything kept.
  var kept: String {
    "\(clientID) \(editsMade) \(stream ?? "-")@\(version ?? -1) \(snapshot.sections) \(pendingEdits.map(\.id))"
  }
}

@Suite("Replica store")
struct ReplicaStoreTests {
  /// A replica at version 1 of stream "s", then a batch to 2, an edit, and an answer, journalled.
  func journalled(in folder: ReplicaFolder) throws -> (states: [ReplicaState<TestSection>], lengths: [Int]) {
    let store = folder.store()
    var state = ReplicaState<TestSection>(clientID: "c", query: nil)
    try state.replay(.reset(stream: "s", version: 1, snapshot: snapshot("A: a b c")))
    try store.compact(state)
    var states = [state]
    var lengths = [try Data(contentsOf: folder.journal).count]
    let before = state.snapshot
    let after = snapshot("A: a c b")
    let batch = WireBatch(UpdateBatch(from: 1, to: 2, changeset: Changeset(from: before, to: after)))
    let messages: [WireMessage<TestSection>] = [
      .batch(batch),
      .edit(WireEdit(id: "c-1", operations: [.delete(["a"])])),
      .confirmed(edit: "c-1", version: 3),
    ]
    for message in messages {
      _ = try store.append(message)
      try state.replay(message)
      states.append(state)
      lengths.append(try Data(contentsOf: folder.journal).count)
    }
    return (states, lengths)
  }

  @Test("a journal cut at every byte of each record loads the state before or after that record")
  func journalCutAtEveryByte() throws {
    let folder = ReplicaFolder()
    let (states, lengths) = try journalled(in: folder)
    #expect(try replayed(folder.store())?.kept == states.last?.kept)
    var cuts = 0
    for record in 1..<lengths.count {
      for cut in lengths[record - 1]...lengths[record] {
        let copy = try folder.copy()
        let handle = try FileHandle(forWritingTo: copy.journal)
        try handle.truncate(atOffset: UInt64(cut))
        try handle.close()
        let expected = cut == lengths[record] ? states[record] : states[record - 1]
        let store = copy.store()
        #expect(try replayed(store)?.kept == expected.kept, "journal cut at byte \(cut)")
        // The next append cuts the torn bytes first: the new record follows the last whole one.
        _ = try store.append(.edit(WireEdit(id: "c-9", operations: [.delete(["b"])])))
        var next = expected
        try next.replay(.edit(WireEdit(id: "c-9", operations: [.delete(["b"])])))
        #expect(try replayed(copy.store())?.kept == next.kept, "appended after a cut at byte \(cut)")
        cuts += 1
      }
    }
    print(
      "Replica store: the journal cut at each of \(cuts) bytes loaded the state before or after its record")
  }

  @Test("every bit flipped in either file is damage, never an older state; a tail of zeros is a torn write")
  func bitFlipsAndUnwrittenTails() throws {
    let folder = ReplicaFolder()
    let (states, lengths) = try journalled(in: folder)
    let whole = try #require(states.last).kept
    var flips = 0
    let files = [try Data(contentsOf: folder.state), try Data(contentsOf: folder.journal)]
    let copy = try folder.copy()
    for (index, file) in [copy.state, copy.journal].enumerated() {
      // The README's run flips one bit of each byte (a different one from byte to byte); CI flips all 8.
      let environment = ProcessInfo.processInfo.environment
      let bitsPerByte = environment["SIMPLESOURCE_REPLICA_BITS"].flatMap(Int.init) ?? 1
      for bit in 0..<files[index].count * 8 where (bit % 8 - bit / 8 % 8 + 8) % 8 < bitsPerByte {
        var flipped = files
        flipped[index][bit / 8] ^= 1 << UInt8(bit % 8)
        try flipped[0].write(to: copy.state)
        try flipped[1].write(to: copy.journal)
        // Damage, or (were a bit not covered) the whole state: never a state with records missing.
        do {
          let loaded = try replayed(copy.store())?.kept
          #expect(loaded == whole, "\(file.lastPathComponent) bit \(bit) loaded another state")
        } catch let error as ReplicaStoreError {
          #expect(error.reason == .damaged || error.reason == .newerFormat, "\(error)")
        }
        flips += 1
      }
    }
    // A power loss may leave the file longer than what was written, the rest zeros: a torn write.
    for record in 1..<lengths.count {
      for cut in [lengths[record] - 1, lengths[record] - ReplicaFrames.headerSize, lengths[record - 1] + 3] {
        let copy = try folder.copy()
        var bytes = try Data(contentsOf: copy.journal).prefix(cut)
        bytes.append(Data(count: 4_096))
        try bytes.write(to: copy.journal)
        #expect(try replayed(copy.store())?.kept == states[record - 1].kept, "cut at \(cut), then zeros")
      }
    }
    print("Replica store: each of \(flips) single-bit flips read as damage, none as an older state")
  }

  @Test("a compaction cut at every byte, or between its renames, loads the old state or the new one")
  func compactionCutAtEveryByte() throws {
    let folder = ReplicaFolder()
    let (states, _) = try journalled(in: folder)
    let old = states.last!
    var new = old
    try new.replay(.reset(stream: "s", version: 9, snapshot: snapshot("A: x y | B: z")))
    // What a finished compaction writes, made in a copy.
    let done = try folder.copy()
    try done.store().compact(new)
    let newState = try Data(contentsOf: done.state)
    let newJournal = try Data(contentsOf: done.journal)
    // Cut while `state.tmp` is written: the old files are untouched.
    for cut in 0...newState.count {
      let copy = try folder.copy()
      try newState.prefix(cut).write(to: copy.url.appendingPathComponent("state.tmp"))
      #expect(try replayed(copy.store())?.kept == old.kept, "state.tmp cut at byte \(cut)")
    }
    // After the state's rename, while `journal.tmp` is written: the old journal heads the old generation.
    for cut in 0...newJournal.count {
      let copy = try folder.copy()
      try newState.write(to: copy.state)
      try newJournal.prefix(cut).write(to: copy.url.appendingPathComponent("journal.tmp"))
      #expect(try replayed(copy.store())?.kept == new.kept, "journal.tmp cut at byte \(cut)")
    }
    #expect(try replayed(done.store())?.kept == new.kept)
  }

  @Test("a damaged, newer or foreign store is a typed error, and the source starts clean")
  func refusedStores() async throws {
    let folder = ReplicaFolder()
    let (states, lengths) = try journalled(in: folder)
    #expect(states.count == 4)

    // A byte flipped inside a record that others follow.
    let damaged = try folder.copy()
    var bytes = try Data(contentsOf: damaged.journal)
    bytes[lengths[1] + 10] ^= 0xFF
    try bytes.write(to: damaged.journal)
    #expect(throws: ReplicaStoreError.self) { try damaged.store().load() }
    let afterDamage = RemoteDataSource<TestSection>(clientID: "fresh", store: damaged.store())
    #expect(await afterDamage.storeError?.reason == .damaged)
    #expect(await afterDamage.snapshot.sections.isEmpty)
    #expect(await afterDamage.stream == nil)
    // The store was cleared for it: it loads the fresh replica, under the id it was offered.
    #expect(try replayed(damaged.store())?.kept == ReplicaState(clientID: "fresh", query: nil).kept)

    // Another query.
    let foreignFolder = try folder.copy()
    let foreign = RemoteDataSource<TestSection>(query: WireQueryRequest("top"), store: foreignFolder.store())
    #expect(await foreign.storeError?.reason == .foreign)
    #expect(await foreign.snapshot.sections.isEmpty)

    // A newer format.
    let newer = ReplicaFolder()
    try FileManager.default.createDirectory(at: newer.url, withIntermediateDirectories: true)
    try ReplicaFrames.frame(Data(#"{"format":3,"generation":1}"#.utf8)).write(to: newer.state)
    #expect {
      try newer.store().load()
    } throws: { ($0 as? ReplicaStoreError)?.reason == .newerFormat }

    // Another section type: its items do not decode.
    struct Other: Identifiable, Equatable, Sendable, Codable { var id: Int }
    let otherFolder = try folder.copy()
    let other = FileReplicaStore<Section<String, Other>>(directory: otherFolder.url)
    #expect {
      try other.load()
    } throws: { ($0 as? ReplicaStoreError)?.reason == .damaged }
  }

  @Test("a client restarted from its store shows its edits at once, resumes, and each edit is made once")
  func restartResumes() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c | B: d"))
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    let folder = ReplicaFolder()
    let down = Locked<[Data]>([])

    /// Connects `remote` to a new session and delivers everything both ways until nothing moves.
    func exchange(_ remote: RemoteDataSource<TestSection>) async throws -> [WireMessage<TestSection>] {
      let session = service.session { data in down.withLock { $0.append(data) } }
      let up = Locked<[WireMessage<TestSection>]>([])
      await remote.connect { message in up.withLock { $0.append(message) } }
      var received: [WireMessage<TestSection>] = []
      while true {
        let sent = up.withLock { messages in
          defer { messages = [] }
          return messages
        }
        for message in sent { await session.receive(WireCoder().encode(message)) }
        await session.settled()
        let arrived = down.withLock { messages in
          defer { messages = [] }
          return messages
        }
        if sent.isEmpty && arrived.isEmpty { break }
        for data in arrived {
          received.append(try WireCoder().decode(data))
          try await remote.receive(data)
        }
      }
      await remote.disconnect()
      await session.close()
      return received
    }

    var remote = RemoteDataSource<TestSection>(clientID: "c", store: folder.store(sync: .everyRecord))
    _ = try await exchange(remote)
    _ = try await source.appendItems([TestItem("e")], toSection: "B")
    await source.settled()
    _ = try await exchange(remote)
    let version = try #require(await remote.remoteVersion)
    // Offline: two edits, shown at once and kept.
    let first = try await remote.submit([.delete(["a"])])
    let second = try await remote.submit([.insert([TestItem("n")], .end(of: "A"))])
    let shown = await remote.snapshot.sections
    // The first reaches the server, which makes it; the process ends before the answer arrives.
    let session = service.session { _ in }
    await session.receive(
      WireCoder().encode(WireMessage<TestSection>.edit(WireEdit(id: first, operations: [.delete(["a"])]))))
    await session.settled()
    await session.close()
    remote = RemoteDataSource(clientID: "other", store: folder.store(sync: .everyRecord))

    #expect(remote.clientID == "c")
    #expect(await remote.snapshot.sections == shown)
    #expect(await remote.pendingEditCount == 2)
    guard case .subscribe(let stream, let from, _) = await remote.subscribeRequest else {
      Issue.record("not a subscribe request")
      return
    }
    #expect(stream == "s" && from == version)
    let received = try await exchange(remote)
    guard case .resumed = received.first else {
      Issue.record(
        "restarted from version \(version), the client got \(received.first.map { "\($0)" } ?? "nothing") first"
      )
      return
    }
    #expect(try await remote.answer(to: first) > version)
    #expect(try await remote.answer(to: second) > version)
    let truth = await source.snapshot
    #expect(truth.sections.flatMap(\.items).map(\.id) == ["b", "c", "n", "d", "e"])
    #expect(await remote.snapshot.sections == truth.sections)
    #expect(await remote.pendingEditCount == 0)
  }
}

/// A store that keeps nothing and asks `probe`, at each write, what the source's subscribers hold.
final class ProbingStore: ReplicaStore, Sendable {
  typealias Section = TestSection
  let probe = Locked<(@Sendable () -> Int)?>(nil)
  /// The subscribers' version at each write, in order.
  let seen = Locked<[Int]>([])

  func load() -> (state: ReplicaState<TestSection>?, journal: [WireMessage<TestSection>]) { (nil, []) }
  func append(_ message: WireMessage<TestSection>) -> Bool {
    record()
    return false
  }
  func compact(_ state: ReplicaState<TestSection>) { record() }
  private func record() {
    guard let probe = probe.withLock({ $0 }) else { return }
    let version = probe()
    seen.withLock { $0.append(version) }
  }
}

extension ReplicaStoreTests {
  @Test("a reset and a batch reach the source's subscribers before they are written to the store")
  func subscribersFirst() async throws {
    let store = ProbingStore()
    let remote = RemoteDataSource<TestSection>(store: store)
    // Runs inside the store's calls, which the source makes on its own actor.
    store.probe.withLock { $0 = { remote.assumeIsolated { $0.version.number } } }
    try await remote.receive(.reset(stream: "s", version: 4, snapshot: snapshot("A: a b")))
    let grown = Changeset(from: snapshot("A: a b"), to: snapshot("A: b a c"))
    try await remote.receive(.batch(WireBatch(UpdateBatch(from: 4, to: 6, changeset: grown))))
    #expect(store.seen.withLock { $0 } == [4, 6], "the store wrote each after the subscribers held it")
  }
}
