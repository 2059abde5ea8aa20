// Field patches (JSON Merge Patch, RFC 7396): the merge rules, a patch made from two values, refusals
// that name what was wrong and leave the source as it was, the wire form, and the reason they exist: a
// client's patch of one field keeps another writer's concurrent change to another field of the same item.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

/// A deal of a sales pipeline: a rep moves its stage, a server job scores its value.
struct Deal: Identifiable, Equatable, Sendable, Codable {
  var id: String
  var stage: String
  var valueCents: Int
  var owner: String
  var note: String?
}

typealias Pipeline = Section<String, Deal>

/// A client of a pipeline with an edit made offline while the server changed the pipeline meanwhile.
struct OfflineEdit {
  let source: BasicDataSource<Pipeline>
  let rep: RemoteDataSource<Pipeline>
  /// The edit's id.
  let id: String
  /// The connection made after the server's change: the edit is on its way.
  let connection: WireConnection<Pipeline>

  /// Serves `deals` (with `named` edits), connects a client and takes it offline; it makes `operation`,
  /// the server makes `meanwhile`, and the client connects again.
  static func make(
    _ operation: (Deal) -> WireOperation<Pipeline>, deals: [Deal] = [WirePatchTests.deal],
    named: NamedEdits<Pipeline> = NamedEdits(),
    recording: ((RemoteDataSource<Pipeline>) async -> Void)? = nil,
    meanwhile: @Sendable (BasicDataSource<Pipeline>) async throws -> Void
  ) async throws -> OfflineEdit {
    let source = try BasicDataSource(sections: [Pipeline(id: "S", items: deals)])
    let service = WireService(source: source, stream: "deals", edits: .transactions(on: source, named: named))
    let rep = RemoteDataSource<Pipeline>(named: named)
    let first = await service.connect(rep)
    await first.settled()
    await recording?(rep)
    await first.close()
    let shown = try #require(await rep.snapshot.sections.first?.items.first)
    let id = try await rep.submit([operation(shown)])
    try await meanwhile(source)
    return OfflineEdit(source: source, rep: rep, id: id, connection: await service.connect(rep))
  }
}

@Suite("Field patches")
struct WirePatchTests {
  static let deal = Deal(id: "d1", stage: "lead", valueCents: 100, owner: "ada", note: "call")

  @Test(
    "merges as RFC 7396 says",
    arguments: [
      (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
      (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
      (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
      (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
      (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
      (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
      (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
      (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
      (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
      (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
      (#"{"a":"foo"}"#, #"null"#, #"null"#),
      (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
      (#"{"e":null}"#, #"{"a":1}"#, #"{"a":1,"e":null}"#),
      (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
      (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
    ])
  func rfcCases(target: String, patch: String, expected: String) throws {
    let decoder = JSONDecoder()
    let value = { (json: String) in try decoder.decode(WireJSON.self, from: Data(json.utf8)) }
    #expect(WirePatch.merge(try value(patch), into: try value(target)) == (try value(expected)))
  }

  @Test("a patch of one field keeps the others, and a patch made from two values turns one into the other")
  func appliedToAnItem() throws {
    let moved = try WirePatch(["stage": "won"]).applied(to: Self.deal, in: String.self)
    #expect(moved == Deal(id: "d1", stage: "won", valueCents: 100, owner: "ada", note: "call"))
    let cleared = try WirePatch(["note": nil, "valueCents": 250]).applied(to: Self.deal, in: String.self)
    #expect(cleared.note == nil && cleared.valueCents == 250 && cleared.stage == "lead")

    var edited = Self.deal
    edited.stage = "won"
    edited.note = nil
    let patch = try WirePatch(from: Self.deal, to: edited)
    #expect(patch.description == #"{"note":null,"stage":"won"}"#)
    #expect(try patch.applied(to: Self.deal, in: String.self) == edited)
    #expect(try WirePatch(from: Self.deal, to: Self.deal).isEmpty)
  }

  @Test("a patch that does not give a valid item, changes the id or names a missing item is refused, typed")
  func refusals() async throws {
    func code(_ patch: WirePatch) -> DataSourceErrorCode? {
      do {
        _ = try patch.applied(to: Self.deal, in: String.self)
        return nil
      } catch {
        return error.code
      }
    }
    #expect(code(["valueCents": "many"]) == .invalidPatch)
    #expect(code(["stage": nil]) == .invalidPatch, "a required field removed")
    #expect(code(["id": "d2"]) == .changedItemID)
    #expect(code(WirePatch(.string("a deal"))) == .invalidPatch, "not an object")
    do {
      _ = try WirePatch(["stage": "won"]).applied(to: TestItemWithoutCoding(id: "x"), in: String.self)
      Issue.record("an item that is not Codable was patched")
    } catch {
      #expect(
        error.code == .invalidPatch && error.itemID == "x" && error.detail == "the item type is not Codable")
    }

    let source = try BasicDataSource(sections: [Pipeline(id: "S", items: [Self.deal])])
    for (operation, expected) in [
      (WireOperation<Pipeline>.patch("d1", ["valueCents": "many"]), DataSourceErrorCode.invalidPatch),
      (.patch("gone", ["stage": "won"]), .unknownItemID),
      (.patch("d1", ["id": "d2"]), .changedItemID),
    ] {
      do {
        try await source.transaction { (transaction) throws(DataSourceError<String, String>) in
          try operation.apply(to: &transaction)
        }
        Issue.record("\(operation) was made")
      } catch {
        #expect(error.code == expected, "\(operation)")
      }
    }
    #expect(await source.snapshot.sections[0].items == [Self.deal], "left exactly as it was")
    #expect(await source.version.number == 0)
  }

  @Test("two patches of one item in one edit apply in order, each to the item as the one before left it")
  func severalInOneEdit() async throws {
    let source = try BasicDataSource(sections: [Pipeline(id: "S", items: [Self.deal])])
    let edit = WireEdit<Pipeline>(
      id: "e", operations: [.patch("d1", ["stage": "won"]), .patch("d1", ["valueCents": 7])])
    try await source.transaction { (transaction) throws(DataSourceError<String, String>) in
      try edit.apply(to: &transaction)
    }
    let deal = await source.snapshot.sections[0].items[0]
    #expect(deal.stage == "won" && deal.valueCents == 7 && deal.note == "call")
  }

  @Test("a patch crosses the wire as {op: patch, id, patch} and back")
  func wireForm() throws {
    let operation = WireOperation<Pipeline>.patch("d1", ["stage": "won", "note": nil])
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let json = String(decoding: try encoder.encode(operation), as: UTF8.self)
    #expect(json == #"{"id":"d1","op":"patch","patch":{"note":null,"stage":"won"}}"#)
    #expect(try JSONDecoder().decode(WireOperation<Pipeline>.self, from: Data(json.utf8)) == operation)
  }

  @Test("a client's patch of the stage and a server's change of the value of the same deal are both kept")
  func concurrentFieldsBothKept() async throws {
    for useReplace in [false, true] {
      // The rep drags the deal while offline; the server's scorer changes its value meanwhile.
      let run = try await OfflineEdit.make({ shown in
        var dragged = shown
        dragged.stage = "won"
        return useReplace ? .replace(dragged) : .patch("d1", ["stage": "won"])
      }) { source in try await source.updateItem("d1") { $0.valueCents = 999 } }
      _ = try await run.rep.answer(to: run.id)
      await run.connection.settled()
      let kept = try #require(await run.source.snapshot.item(withID: "d1"))
      #expect(kept.stage == "won")
      if useReplace {
        #expect(kept.valueCents == 100, "a replace with the client's copy reverts the server's change")
      } else {
        #expect(kept.valueCents == 999, "the patch keeps the server's change")
        #expect(await run.rep.snapshot.item(withID: "d1") == kept, "and the client shows both")
      }
      await run.connection.close()
    }
  }

  @Test("while pending, a patch is applied again on top of each newer server state the client receives")
  func rebasedOnTheServersState() async throws {
    let run = try await OfflineEdit.make({ _ in .patch("d1", ["stage": "won"]) }) { source in
      try await source.updateItem("d1") { $0.valueCents = 999 }
    }
    await run.connection.settled()
    let shown = await run.rep.snapshot.item(withID: "d1")
    #expect(shown?.valueCents == 999 && shown?.stage == "won")
    await run.connection.close()
  }

  @Test("a patch that would take an item out of what its client may write is refused; nothing changes")
  func patchedOutOfScope() async throws {
    let source = try BasicDataSource(sections: [Pipeline(id: "S", items: [Self.deal])])
    let service = WireService(
      source: source, stream: "deals", edits: .transactions(on: source),
      rows: { (user: String) in { deal in deal.owner == user } })
    let ada = RemoteDataSource<Pipeline>()
    let connection = await service.connect(ada, scope: "ada")
    await connection.settled()
    do {
      _ = try await ada.edit([.patch("d1", ["owner": "bob"])])
      Issue.record("a patch giving the deal away was made")
    } catch {
      #expect(error.code == .invalidEdit)
    }
    _ = try await ada.edit([.patch("d1", ["stage": "won"])])
    await connection.settled()
    #expect(await source.snapshot.item(withID: "d1")?.owner == "ada")
    #expect(await source.snapshot.item(withID: "d1")?.stage == "won")
    await connection.close()
  }
}

/// An item that cannot be encoded: a patch of it is refused.
struct TestItemWithoutCoding: Identifiable, Equatable, Sendable {
  var id: String
}
