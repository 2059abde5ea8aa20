// Named edits: declared once in Swift, run at once on what a client shows, sent as a name and arguments,
// run again on the server's current state inside the write's transaction; refused, typed, when the name,
// the arguments or the body fail, or when the body reaches outside the client's scope.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

/// The arguments of `advance`: a deal and the stage it moves to.
struct Advance: Codable, Sendable, Equatable {
  var deal: String
  var to: String
}

enum PipelineEdits {
  /// Moves a deal to a stage, unless it is lost.
  static let advance = NamedEdit<Pipeline, Advance>("advance") { arguments, transaction in
    guard var deal = transaction.snapshot.item(withID: arguments.deal) else {
      throw EditRefusal("no deal \(arguments.deal)")
    }
    guard deal.stage != "lost" else { throw EditRefusal("a lost deal stays lost") }
    deal.stage = arguments.to
    try transaction.replaceItem(deal)
  }

  /// Adds to a deal's value: read and written where it runs, so two clients' raises both count.
  static let raise = NamedEdit<Pipeline, Int>("raise") { cents, transaction in
    let ids = transaction.snapshot.sections.first?.items.map(\.id) ?? []
    guard let id = ids.first else { throw EditRefusal("no deal") }
    try transaction.updateItem(id) { $0.valueCents += cents }
  }

  /// Gives every deal of the first section to `owner`: reaches rows a scoped client may not see.
  static let takeAll = NamedEdit<Pipeline, String>("takeAll") { owner, transaction in
    for id in transaction.snapshot.sections.first?.items.map(\.id) ?? [] {
      try transaction.updateItem(id) { $0.owner = owner }
    }
  }

  /// Adds a section: what a scoped client's named edit may not do.
  static let addStage = NamedEdit<Pipeline, String>("addStage") { id, transaction in
    try transaction.appendSections([Pipeline(id: id, items: [])])
  }

  static let all = NamedEdits<Pipeline>([advance, raise, takeAll, addStage])
}

@Suite("Named edits", .timeLimit(.minutes(30)))
struct NamedEditTests {
  static func pipeline(_ deals: [Deal] = [WirePatchTests.deal]) throws -> BasicDataSource<Pipeline> {
    try BasicDataSource(sections: [Pipeline(id: "S", items: deals)])
  }

  @Test("shown at once, sent as a name and arguments, run again on the server: a concurrent change is kept")
  func runsOnBothSides() async throws {
    let recorder = Locked<BatchRecorder<Pipeline>?>(nil)
    let run = try await OfflineEdit.make(
      { _ in PipelineEdits.advance(Advance(deal: "d1", to: "won")) }, named: PipelineEdits.all,
      recording: { rep in
        let made = await BatchRecorder(await rep.subscribe())
        recorder.withLock { $0 = made }
      }
    ) { source in
      try await source.updateItem("d1") { $0.valueCents = 999 }
    }
    let version = try await run.rep.answer(to: run.id)
    await run.connection.settled()
    let kept = try #require(await run.source.snapshot.item(withID: "d1"))
    #expect(kept.stage == "won" && kept.valueCents == 999, "both changes kept")
    #expect(await run.rep.snapshot.item(withID: "d1") == kept)
    #expect(version >= 2)
    let batches = try #require(recorder.withLock { $0 })
    #expect(await batches.showing(await run.rep.snapshot))
    let violations = await batches.violations
    #expect(violations.isEmpty, "\(violations)")
    await run.connection.close()
  }

  @Test("run again on the server's newer state, the body refuses: typed, rolled back on the client")
  func refusedOnTheServersState() async throws {
    let run = try await OfflineEdit.make(
      { _ in PipelineEdits.advance(Advance(deal: "d1", to: "won")) }, named: PipelineEdits.all
    ) { source in
      try await source.updateItem("d1") { $0.stage = "lost" }
    }
    do {
      _ = try await run.rep.answer(to: run.id)
      Issue.record("a lost deal was advanced")
    } catch {
      #expect(error.code == .invalidEdit && error.detail.contains("a lost deal stays lost"), "\(error)")
    }
    await run.connection.settled()
    #expect(await run.rep.snapshot.item(withID: "d1")?.stage == "lost", "rolled back to the server's state")
    #expect(await run.source.snapshot.item(withID: "d1")?.stage == "lost")
    await run.connection.close()
  }

  @Test("two clients' raises both count: each is run on the value the other left")
  func readModifyWrite() async throws {
    let source = try Self.pipeline()
    let service = WireService(
      source: source, stream: "deals", edits: .transactions(on: source, named: PipelineEdits.all))
    let (ada, bob) = (
      RemoteDataSource<Pipeline>(named: PipelineEdits.all),
      RemoteDataSource<Pipeline>(named: PipelineEdits.all)
    )
    let connections = [await service.connect(ada), await service.connect(bob)]
    for connection in connections { await connection.settled() }
    async let first = ada.edit([PipelineEdits.raise(10)])
    async let second = bob.edit([PipelineEdits.raise(5)])
    _ = try await (first, second)
    for connection in connections { await connection.settled() }
    #expect(await source.snapshot.item(withID: "d1")?.valueCents == 115)
    #expect(await ada.snapshot.item(withID: "d1")?.valueCents == 115)
    #expect(await bob.snapshot.item(withID: "d1")?.valueCents == 115)
    for connection in connections { await connection.close() }
  }

  @Test(
    "an unknown name, arguments that do not decode and a throwing body are typed refusals; nothing changes")
  func refusals() async throws {
    let source = try Self.pipeline()
    let writer = WireWriter<Pipeline, NoScope>.transactions(on: source, named: PipelineEdits.all)
    let cases: [(WireOperation<Pipeline>, String)] = [
      (.named(WireCall("nope", arguments: [:])), "unknownEdit"),
      (.named(WireCall("advance", arguments: ["deal": 7])), "invalidArguments"),
      (PipelineEdits.advance(Advance(deal: "gone", to: "won")), "editRefused: no deal gone"),
    ]
    for (index, (operation, expected)) in cases.enumerated() {
      do {
        _ = try await writer.write(
          WireEdit(id: "e\(index)", operations: [operation]), NoScope(), WireVisibility())
        Issue.record("\(operation) was made")
      } catch {
        #expect(error.code == .invalidEdit && error.detail.contains(expected), "\(error)")
      }
    }
    #expect(await source.version.number == 0, "left exactly as it was")
    // A client with no body for a name cannot show the edit: refused before anything is sent.
    let stranger = RemoteDataSource<Pipeline>()
    await #expect(throws: WireError.self) {
      try await stranger.submit([.named(WireCall("advance", arguments: [:]))])
    }
  }

  @Test("for a client with a scope, a body that reaches rows it may not see, or changes sections, is refused")
  func scoped() async throws {
    let theirs = Deal(id: "d2", stage: "lead", valueCents: 5, owner: "bob", note: nil)
    let source = try Self.pipeline([WirePatchTests.deal, theirs])
    let service = WireService(
      source: source, stream: "deals", edits: .transactions(on: source, named: PipelineEdits.all),
      rows: { (user: String) in { deal in deal.owner == user } })
    let ada = RemoteDataSource<Pipeline>(named: PipelineEdits.all)
    let connection = await service.connect(ada, scope: "ada")
    await connection.settled()
    for operation in [PipelineEdits.takeAll("ada"), PipelineEdits.addStage("T")] {
      do {
        _ = try await ada.edit([operation])
        Issue.record("\(operation) was made")
      } catch {
        #expect(error.code == .invalidEdit && error.detail.hasPrefix("editRefused"), "\(error)")
        #expect(!error.detail.contains("d2"), "the refusal names nothing ada may not see")
      }
    }
    _ = try await ada.edit([PipelineEdits.advance(Advance(deal: "d1", to: "won"))])
    await connection.settled()
    let state = await source.snapshot
    #expect(state.item(withID: "d2") == theirs && state.sectionIDs == ["S"], "nothing of the refused edits")
    #expect(state.item(withID: "d1")?.stage == "won")
    await connection.close()
  }

  @Test(
    "on the wire a named edit is its name and arguments; a client that cannot run it shows it when confirmed")
  func wireForm() async throws {
    let operation = PipelineEdits.advance(Advance(deal: "d1", to: "won"))
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let json = String(decoding: try encoder.encode(operation), as: UTF8.self)
    #expect(json == #"{"arguments":{"deal":"d1","to":"won"},"name":"advance","op":"named"}"#)
    let decoded = try JSONDecoder().decode(WireOperation<Pipeline>.self, from: Data(json.utf8))
    #expect(decoded == operation)
    let edit = WireEdit(id: "e", operations: [decoded])
    #expect(edit.fingerprint == WireEdit(id: "e", operations: [operation]).fingerprint)

    // Sent as bytes by a client of another language: the server runs its own body.
    let source = try Self.pipeline()
    let service = WireService(
      source: source, stream: "deals", edits: .transactions(on: source, named: PipelineEdits.all))
    let message =
      #"{"format":"simplesource","formatVersion":2,"type":"edit","id":"js-1","operations":["#
      + json + "]}"
    let sent = Locked<[String]>([])
    let session = service.session { bytes in
      sent.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) }
    }
    await session.receive(Data(message.utf8))
    await session.settled()
    #expect(await source.snapshot.item(withID: "d1")?.stage == "won")
    let answers = sent.withLock { $0 }
    #expect(answers.contains { $0.contains(#""type":"confirmed""#) }, "\(answers)")
    await session.close()
  }
}

/// Named edits of a random run: raise a deal's value, move a deal to the end of a stage, add a deal.
enum RandomRunEdits {
  struct Move: Codable, Sendable {
    var deal: String
    var stage: String
  }

  static let bump = NamedEdit<Pipeline, String>("bump") { id, transaction in
    guard transaction.snapshot.item(withID: id) != nil else { throw EditRefusal("no deal \(id)") }
    try transaction.updateItem(id) { $0.valueCents += 1 }
  }
  static let moveTo = NamedEdit<Pipeline, Move>("moveTo") { move, transaction in
    try transaction.moveItem(move.deal, toSection: move.stage)
  }
  static let add = NamedEdit<Pipeline, Deal>("add") { deal, transaction in
    guard let stage = transaction.snapshot.sections.first?.id else { throw EditRefusal("no stage") }
    try transaction.appendItems([deal], toSection: stage)
  }
  static let all = NamedEdits<Pipeline>([bump, moveTo, add])
}

extension NamedEditTests {
  static let settings = RandomTestSettings.current(defaultCases: 12, casesVariable: "SIMPLESOURCE_EDIT_RUNS")

  @Test(
    "clients' named edits and patches beside server writers, with disconnects: every client ends on the source, every confirmed raise counted (seeded)"
  )
  func randomRuns() async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 64))
    var (confirmed, refused, batches) = (0, 0, 0)
    for run in 0..<settings.cases {
      let place = "run \(run); \(settings.replay)"
      let deals = (0..<9).map { Deal(id: "d\($0)", stage: "lead", valueCents: 0, owner: "", note: nil) }
      let source = try BasicDataSource(sections: [
        Pipeline(id: "S0", items: Array(deals[0..<3])), Pipeline(id: "S1", items: Array(deals[3..<6])),
        Pipeline(id: "S2", items: Array(deals[6..<9])),
      ])
      let service = WireService(
        source: source, stream: "deals-\(run)", edits: .transactions(on: source, named: RandomRunEdits.all))
      let clients = (0..<3).map { _ in RemoteDataSource<Pipeline>(named: RandomRunEdits.all) }
      var recorders: [BatchRecorder<Pipeline>] = []
      for client in clients { recorders.append(await BatchRecorder(await client.subscribe())) }
      let seeds = (0..<4).map { _ in random.next() }
      let results = await withTaskGroup(of: [(String, Result<Int, WireError>)].self) { group in
        for (index, client) in clients.enumerated() {
          let seed = seeds[index]
          group.addTask {
            var random = SeededGenerator(seed: seed)
            var connection: WireConnection<Pipeline>? = await service.connect(client)
            await connection?.settled()  // the client holds the source's state before it edits
            var bumps: [String: String] = [:]  // edit id → deal
            for step in 0..<12 {
              let deal = "d\(Int.random(in: 0..<10, using: &random))"  // d9 is never there: refused
              let operation: WireOperation<Pipeline> =
                switch Int.random(in: 0..<5, using: &random) {
                case 0, 1: RandomRunEdits.bump(deal)
                case 2:
                  RandomRunEdits.moveTo(.init(deal: deal, stage: "S\(Int.random(in: 0..<3, using: &random))"))
                case 3:
                  RandomRunEdits.add(
                    Deal(id: "c\(index)-\(step)", stage: "new", valueCents: 0, owner: "", note: nil))
                default: .patch(deal, ["owner": .string("c\(index)")])
                }
              if let id = try? await client.submit([operation]), case .named(let call) = operation,
                call.name == "bump"
              {
                bumps[id] = deal
              }
              if Int.random(in: 0..<4, using: &random) == 0 {
                if let open = connection {
                  await open.close()
                  connection = nil
                } else {
                  connection = await service.connect(client)
                }
              }
            }
            if connection == nil { connection = await service.connect(client) }
            var answers: [(String, Result<Int, WireError>)] = []
            for (id, deal) in bumps.sorted(by: { $0.key < $1.key }) {
              do throws(WireError) {
                answers.append((deal, .success(try await client.answer(to: id))))
              } catch {
                answers.append((deal, .failure(error)))
              }
            }
            await connection?.settled()
            await connection?.close()
            return answers
          }
        }
        group.addTask {
          var random = SeededGenerator(seed: seeds[3])
          for _ in 0..<10 {
            let deal = "d\(Int.random(in: 0..<9, using: &random))"
            if Int.random(in: 0..<3, using: &random) == 0 {
              _ = try? await source.deleteItems([deal])
            } else {
              _ = try? await source.updateItem(deal) { $0.note = "server" }
            }
          }
          return []
        }
        var all: [(String, Result<Int, WireError>)] = []
        for await answers in group { all += answers }
        return all
      }
      await source.settled()
      let final = await source.snapshot
      for (index, client) in clients.enumerated() {
        let connection = await service.connect(client)
        await connection.settled()
        #expect(await client.snapshot == final, "client \(index) ends on the source, \(place)")
        #expect(await client.pendingEditCount == 0, "\(place)")
        await connection.close()
        #expect(await recorders[index].showing(final), "\(place)")
        let violations = await recorders[index].violations
        #expect(violations.isEmpty, "client \(index): \(violations), \(place)")
        batches += await recorders[index].batches.count
        await recorders[index].cancel()
      }
      // Every confirmed raise is in the value of its deal, where the deal is still there.
      var raised: [String: Int] = [:]
      for (deal, result) in results {
        if case .success = result {
          raised[deal, default: 0] += 1
          confirmed += 1
        } else {
          refused += 1
        }
      }
      for section in final.sections {
        for deal in section.items where deal.id.hasPrefix("d") {
          #expect(deal.valueCents == raised[deal.id, default: 0], "deal \(deal.id), \(place)")
        }
      }
    }
    print(
      "Named edits, random runs: \(confirmed) raises confirmed, \(refused) refused, \(batches) client batches checked; \(settings.replay)"
    )
    #expect(confirmed > 0)
  }
}

extension NamedEditTests {
  @Test("a pending named edit kept in a store is shown again after a restart, by name, and made once")
  func restoredFromAStore() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("named-\(UUID())")
    defer { try? FileManager.default.removeItem(at: folder) }
    let source = try Self.pipeline()
    let service = WireService(
      source: source, stream: "deals", edits: .transactions(on: source, named: PipelineEdits.all))
    do {
      let rep = RemoteDataSource<Pipeline>(
        store: FileReplicaStore(directory: folder), named: PipelineEdits.all)
      let connection = await service.connect(rep)
      await connection.settled()
      await connection.close()
      _ = try await rep.submit([PipelineEdits.raise(40)])
      #expect(await rep.snapshot.item(withID: "d1")?.valueCents == 140)
    }
    // Restarted: the edit comes back from the journal by name, and is shown with this build's body.
    let restarted = RemoteDataSource<Pipeline>(
      store: FileReplicaStore(directory: folder), named: PipelineEdits.all)
    #expect(await restarted.pendingEditCount == 1)
    #expect(await restarted.snapshot.item(withID: "d1")?.valueCents == 140, "shown again after the restart")
    try await source.updateItem("d1") { $0.valueCents = 200 }
    let connection = await service.connect(restarted)
    await connection.settled()
    #expect(await source.snapshot.item(withID: "d1")?.valueCents == 240, "run once, on the server's value")
    #expect(await restarted.snapshot.item(withID: "d1")?.valueCents == 240)
    #expect(await restarted.pendingEditCount == 0)
    await connection.close()

    // Without the bodies, a restored named edit stays pending, unshown, until the server answers it.
    let blind = RemoteDataSource<Pipeline>(store: FileReplicaStore(directory: folder))
    #expect(await blind.snapshot.item(withID: "d1")?.valueCents == 240)
  }
}
