// The browser client's module, served: its text, its type, and a revalidation that costs no body.

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SimpleSource
import SimpleSourceHummingbird
import SimpleSourceTesting
import Testing

@Suite("The browser client's module", .timeLimit(.minutes(2)))
struct BrowserClientTests {
  @Test(
    "served as JavaScript with a tag of its bytes; the same tag, weak or listed, answers 304 without a body, another 200"
  )
  func servesTheModule() async throws {
    let router = Router()
    WireBrowserClient.route("/wire-client.js", on: router)
    #expect(WireBrowserClient.script.contains("export class WireClient"))
    try await Application(router: router).test(.router) { client in
      let first = try await client.execute(uri: "/wire-client.js", method: .get)
      #expect(first.status == .ok)
      #expect(first.headers[.contentType] == "text/javascript; charset=utf-8")
      #expect(String(buffer: first.body) == WireBrowserClient.script)
      let tag = try #require(first.headers[.eTag])

      let again = try await client.execute(uri: "/wire-client.js", method: .get, headers: [.ifNoneMatch: tag])
      #expect(again.status == .notModified)
      #expect(again.body.readableBytes == 0)
      #expect(again.headers[.eTag] == tag)

      // Revalidated through a cache that compressed it (a weak tag), in a list, or as `*`.
      for header in ["W/\(tag)", "\"another\", \(tag)", "*"] {
        let listed = try await client.execute(
          uri: "/wire-client.js", method: .get, headers: [.ifNoneMatch: header])
        #expect(listed.status == .notModified, "\(header)")
      }
      let stale = try await client.execute(
        uri: "/wire-client.js", method: .get, headers: [.ifNoneMatch: "\"another\""])
      #expect(stale.status == .ok)
    }
  }
}

/// The browser client in Node against the Swift side: a seeded run of random transactions and edits, whose
/// wire messages and expected states `BrowserClient/replay.mjs` replays against `WireClient`.
@Suite("The browser client's model", .timeLimit(.minutes(5)))
struct BrowserClientModelTests {
  /// Node, when this machine has it (CI installs it).
  static let node: String? = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":")
    .map { "\($0)/node" }.first { FileManager.default.isExecutableFile(atPath: $0) }

  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  static let module = folder.appendingPathComponent(
    "../../Sources/SimpleSourceHummingbird/Browser/wire-client.js"
  ).standardized.path

  @Test(
    "random batches and edits: the client holds the Swift side's state after every batch, and shows its edits as the source makes them",
    .enabled(if: node != nil, "needs node on PATH")
  )
  func replaysRandomRuns() async throws {
    let environment = ProcessInfo.processInfo.environment
    let seed = environment["WIRE_CLIENT_SEED"].flatMap(UInt64.init) ?? .random(in: 0 ... .max)
    let rounds = environment["WIRE_CLIENT_ROUNDS"].flatMap(Int.init) ?? 150
    print("browser client model: seed \(seed), \(rounds) rounds (WIRE_CLIENT_SEED=\(seed) replays)")
    var random = SeededGenerator(seed: seed)
    let script = try await Self.script(rounds: rounds, using: &random)
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("wire-client-\(seed).jsonl")
    try script.write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }

    let process = Process()
    process.executableURL = URL(fileURLWithPath: try #require(Self.node))
    process.arguments = [
      Self.folder.appendingPathComponent("BrowserClient/replay.mjs").path, Self.module, file.path,
    ]
    // Node's errors (a stack, a syntax error in the module) go to the same pipe, into the failure's message.
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0 && text.hasPrefix("ok "), "seed \(seed): \(text)")
  }

  /// The sections of `snapshot`, as the wire format encodes them.
  static func sections(_ snapshot: Snapshot<Notes>) -> String {
    let reset = String(
      decoding: WireCoder().encode(WireMessage.reset(stream: "s", version: 0, snapshot: snapshot)),
      as: UTF8.self)
    let object = try! JSONSerialization.jsonObject(with: Data(reset.utf8)) as! [String: Any]
    return String(decoding: try! JSONSerialization.data(withJSONObject: object["sections"]!), as: UTF8.self)
  }

  /// The replay script of `rounds` random rounds: each a transaction of the source (its batch received,
  /// then the state held checked) or an edit of the client (made by the source when it applies: shown at
  /// once, then its batch and its confirmation; refused by both when it does not).
  static func script(rounds: Int, using random: inout SeededGenerator) async throws -> String {
    let source = try BasicDataSource(
      sections: (0..<3).map { section in
        Notes(
          id: "s\(section)", header: "Section \(section)",
          items: (0..<4).map { item in
            Note(id: "n\(section)-\(item)", text: "Note \(section)-\(item)", owner: nil)
          })
      })
    let subscription = await source.subscribe()
    var batches = subscription.batches.makeAsyncIterator()
    var lines: [String] = []
    func line(_ key: String, _ json: String) { lines.append("{\"\(key)\":\(json)}") }
    func message(_ message: WireMessage<Notes>) -> String {
      String(decoding: WireCoder().encode(message), as: UTF8.self)
    }
    line(
      "receive",
      message(.reset(stream: "s", version: subscription.version.number, snapshot: subscription.snapshot)))
    var snapshot = subscription.snapshot
    var fresh = 0
    for _ in 0..<rounds {
      let ids = snapshot.sections.flatMap { $0.items.map(\.id) }
      let sectionIDs = snapshot.sections.map(\.id)
      // Mostly ids that exist; now and then one that does not, which both sides must refuse.
      func anyItem() -> String {
        ids.isEmpty || Int.random(in: 0..<10, using: &random) == 0
          ? "gone" : ids.randomElement(using: &random)!
      }
      func anySection() -> String {
        Int.random(in: 0..<12, using: &random) == 0
          ? "nowhere" : sectionIDs.randomElement(using: &random) ?? "nowhere"
      }
      func place() -> WireOperation<Notes>.Place {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: .before(anyItem())
        case 1: .after(anyItem())
        default: .end(of: anySection())
        }
      }
      func newNote() -> Note {
        fresh += 1
        return Note(id: "new\(fresh)", text: "New \(fresh)", owner: Bool.random(using: &random) ? "ann" : nil)
      }
      if Int.random(in: 0..<3, using: &random) == 0 {
        // An edit of the client's.
        let operations: [WireOperation<Notes>] = (0..<Int.random(in: 1...3, using: &random)).map { _ in
          switch Int.random(in: 0..<6, using: &random) {
          case 0: .insert((0..<Int.random(in: 1...2, using: &random)).map { _ in newNote() }, place())
          case 1: .insert([Note(id: anyItem(), text: "Again", owner: nil)], place())
          case 2: .replace(Note(id: anyItem(), text: "Replaced \(fresh)", owner: nil))
          case 3: .delete([anyItem()])
          case 4: .move(anyItem(), place())
          default:
            .patch(
              anyItem(),
              WirePatch(
                Bool.random(using: &random)
                  ? ["text": .string("Patched \(Int.random(in: 0..<100, using: &random))")]
                  : ["owner": Bool.random(using: &random) ? .string("bob") : .null]))
          }
        }
        let edit = message(.edit(WireEdit(id: "e", operations: operations)))
        let object = try JSONSerialization.jsonObject(with: Data(edit.utf8)) as! [String: Any]
        let wire = String(
          decoding: try JSONSerialization.data(withJSONObject: object["operations"]!), as: UTF8.self)
        // The source's refusal, when it refuses, is in the script for whoever reads a failure.
        var refusal: String?
        do {
          try await source.transaction { transaction throws(DataSourceError<String, String>) in
            for operation in operations { try operation.apply(to: &transaction) }
          }
        } catch {
          refusal = "\(error)"
        }
        let made = refusal == nil
        let why = refusal.map { String(decoding: try! JSONEncoder().encode($0), as: UTF8.self) } ?? "null"
        lines.append("{\"edit\":\(wire),\"made\":\(made),\"refusal\":\(why)}")
        guard made else { continue }
        // A server answers every edit it made, with or without a change (a batch).
        // A change that cancelled out (an insert and a delete of one id) makes a version and no batch.
        if await source.snapshot.sections != snapshot.sections {
          let batch = try #require(await batches.next(), "the subscription ended")
          line("shown", sections(batch.snapshot))
          line("receive", message(.batch(WireBatch(batch))))
          snapshot = batch.snapshot
        }
        line("confirm", "\(await source.version.number)")
        line("held", sections(snapshot))
        line("shown", sections(snapshot))
      } else {
        // A transaction of the source's, which the client receives.
        // Drawn first, made in the transaction: each step a change that may be refused on its own.
        var steps: [@Sendable (inout Transaction<Notes>) -> Void] = []
        for _ in 0..<Int.random(in: 1...6, using: &random) {
          let (item, other, section) = (anyItem(), anyItem(), anySection())
          let kind = Int.random(in: 0..<9, using: &random)
          switch kind {
          case 0:
            let note = newNote()
            steps.append { _ = try? $0.insertItems([note], after: item) }
          case 1:
            let note = newNote()
            steps.append { _ = try? $0.appendItems([note], toSection: section) }
          case 2: steps.append { _ = try? $0.deleteItems([item]) }
          case 3: steps.append { _ = try? $0.moveItem(item, before: other) }
          case 4: steps.append { _ = try? $0.moveItem(item, toSection: section) }
          case 5:
            let note = Note(id: item, text: "Changed \(fresh)", owner: "ann")
            steps.append { _ = try? $0.replaceItem(note) }
          case 6:
            fresh += 1
            let inserted = Notes(id: "t\(fresh)", header: "New", items: [newNote()])
            steps.append { _ = try? $0.insertSections([inserted], after: section) }
          case 7:
            let index = Int.random(in: 0..<max(1, sectionIDs.count), using: &random)
            steps.append { _ = try? $0.moveSection(section, to: index) }
          default:
            if Bool.random(using: &random) {
              let updated = Notes(
                id: section, header: "Header \(fresh)", footer: Bool.random(using: &random) ? "Footer" : nil)
              steps.append { _ = try? $0.updateSection(updated) }
            } else if sectionIDs.count > 2 {
              steps.append { _ = try? $0.deleteSections([section]) }
            }
          }
        }
        let planned = steps
        _ = try? await source.transaction { transaction throws(DataSourceError<String, String>) in
          for step in planned { step(&transaction) }
        }
        guard await source.snapshot.sections != snapshot.sections else { continue }
        let batch = try #require(await batches.next(), "the subscription ended")
        line("receive", message(.batch(WireBatch(batch))))
        line("held", sections(batch.snapshot))
        snapshot = batch.snapshot
      }
    }
    subscription.cancel()
    return lines.joined(separator: "\n") + "\n"
  }
}
