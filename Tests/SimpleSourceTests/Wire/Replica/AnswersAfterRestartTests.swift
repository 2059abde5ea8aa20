// A replica answers `answer(to:)` after a restart from its store for every edit it made that the server
// answered, among its newest 256; an older one and an id it never made are errors of their own.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Answers after a restart")
struct AnswersAfterRestartTests {
  @Test("answers given before a restart are read after it: a confirmation and a refusal")
  func readAfterRestart() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("answers-\(UUID())")
    defer { try? FileManager.default.removeItem(at: folder) }
    let source = try BasicDataSource(sections: layout("A: a b"))
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    let (confirmed, refused): (String, String)
    let version: Int
    do {
      let client = RemoteDataSource<TestSection>(store: FileReplicaStore(directory: folder))
      let connection = await service.connect(client)
      await connection.settled()
      confirmed = try await client.submit([.replace(TestItem("a", version: 1))])
      version = try await client.answer(to: confirmed)
      // Offline, the client deletes b, which the server deletes first: its delete is refused.
      await connection.close()
      refused = try await client.submit([.delete(["b"])])
      try await source.deleteItems(["b"])
      let again = await service.connect(client)
      _ = try? await client.answer(to: refused)
      await again.close()
    }
    let restarted = RemoteDataSource<TestSection>(store: FileReplicaStore(directory: folder))
    #expect(try await restarted.answer(to: confirmed) == version, "the confirmation, from the journal")
    await #expect(throws: WireError.self) { try await restarted.answer(to: refused) }
    do {
      _ = try await restarted.answer(to: refused)
    } catch {
      #expect(error.code == .invalidEdit, "the refusal itself, \(error)")
    }
    // Compacted, then restarted again: the answers are in the state file too.
    let store = FileReplicaStore<TestSection>(directory: folder)
    let loaded = try store.load()
    var state = try #require(loaded.state)
    for message in loaded.journal { try state.replay(message) }
    try store.compact(state)
    let again = RemoteDataSource<TestSection>(store: FileReplicaStore(directory: folder))
    #expect(try await again.answer(to: confirmed) == version)

    // An id it never made, and one of its own whose answer is older than the newest kept, differ.
    do {
      _ = try await again.answer(to: "someone-else-1")
      Issue.record("an answer to an edit never made")
    } catch {
      #expect(error.code == .unknownEdit, "\(error)")
    }
  }

  @Test("past the newest 256 answers, an edit's answer is forgotten: a distinct error")
  func forgottenPastTheBound() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    let client = RemoteDataSource<TestSection>(clientID: "c")
    let connection = await service.connect(client)
    await connection.settled()
    var ids: [String] = []
    for index in 0...ReplicaState<TestSection>.keptAnswers {
      let id = try await client.submit([.replace(TestItem("a", version: index + 1))])
      _ = try await client.answer(to: id)
      ids.append(id)
    }
    do {
      _ = try await client.answer(to: ids[0])
      Issue.record("the oldest answer was kept past the bound")
    } catch {
      #expect(error.code == .answerForgotten, "\(error)")
    }
    #expect(try await client.answer(to: ids[ids.count - 1]) > 0)
    await #expect(throws: WireError.self) { try await client.answer(to: "c-99999") }
    await connection.close()
  }

  @Test(
    "an id names an edit of a replica when it is its own and was counted",
    arguments: [
      ("c-1", nil as String?, 3, true), ("c-3", nil, 3, true), ("c-4", nil, 3, false), ("d-1", nil, 3, false),
      ("c.e1-2", "e1", 3, true), ("c.e1-9", "e1", 3, false), ("c.e0-9", "e1", 3, true),
      ("cc-1", nil, 3, false),
      ("c-x", nil, 3, false),
    ])
  func made(id: String, epoch: String?, editsMade: Int, expected: Bool) {
    var state = ReplicaState<TestSection>(clientID: "c", query: nil)
    (state.epoch, state.editsMade) = (epoch, editsMade)
    #expect(state.made(id) == expected, "\(id)")
  }
}
