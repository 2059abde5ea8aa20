// The wire format pinned by fixture files: each decodes and re-encodes byte for byte, and each is what the
// encoder makes of a known batch, so the format cannot drift unnoticed.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("Wire format fixtures")
struct WireFixtureTests {
  static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

  /// Each fixture's file name and the message it holds, built from known snapshots: format 2's in
  /// `Fixtures`, format 1's (every message but a query) in `Fixtures/format1`.
  static func messages(format: Int) -> [(name: String, message: WireMessage<TestSection>)] {
    func batch(_ old: String, _ new: String, from: Int, to: Int) -> WireMessage<TestSection> {
      .batch(
        WireBatch(
          UpdateBatch(from: from, to: to, changeset: Changeset(from: snapshot(old), to: snapshot(new)))))
    }
    let queries: [(name: String, message: WireMessage<TestSection>)] = [
      (
        "subscribe-query",
        .subscribe(
          stream: "tasks-7f3a.v3", from: 8,
          query: WireQueryRequest(
            "search",
            ["text": .string("milk"), "limit": .integer(20), "done": .bool(false), "weight": .number(0.5)]))
      ),
      ("error-query", .error(WireError(.unknownQuery, "no query is named serch"))),
    ]
    return (format >= 2 ? queries : []) + [
      ("subscribe-fresh", .subscribe(stream: nil, from: nil)),
      ("subscribe-resume", .subscribe(stream: "tasks-7f3a", from: 12)),
      ("reset", .reset(stream: "tasks-7f3a", version: 12, snapshot: snapshot("todo: a b | done: c"))),
      ("resumed", .resumed(stream: "tasks-7f3a", version: 12)),
      // One refresh stage and one structure stage: a delete, an insert, a move within and across sections.
      ("batch-items", batch("todo: a b c d | done: e", "todo: d a' x c | done: e b", from: 12, to: 14)),
      // A moved section that also has item changes: the section changes in one structure stage, the item
      // inserts and moves in a stage of their own (UIKit's rule R28).
      ("batch-sections", batch("A: a b | B: c d | C: e", "C: h e | B: d c f | D: g", from: 14, to: 15)),
      ("error", .error(WireError(.versionMismatch, "batch from 9, receiver holds 12"))),
    ]
  }

  @Test("every fixture is what the encoder makes of its message, and decodes and re-encodes byte for byte")
  func fixtures() throws {
    let write = ProcessInfo.processInfo.environment["SIMPLESOURCE_WRITE_FIXTURES"] == "1"
    for (format, directory) in [(2, Self.directory), (1, Self.directory.appendingPathComponent("format1"))] {
      try Self.check(format: format, in: directory, write: write)
    }
  }

  static func check(format: Int, in directory: URL, write: Bool) throws {
    let coder = WireCoder(formatVersion: format)
    for (name, message) in Self.messages(format: format) {
      let url = directory.appendingPathComponent("\(name).json")
      let encoded = coder.encode(message)
      if write { try encoded.write(to: url) }
      let stored = try Data(contentsOf: url)
      #expect(
        stored == encoded,
        "\(name).json differs from the encoder's output:\n\(String(decoding: encoded, as: UTF8.self))")
      let (decoded, number) = try coder.read(stored, as: TestSection.self)
      #expect(number == format, "\(name).json is read as format \(number)")
      #expect(coder.encode(decoded) == stored, "\(name).json does not re-encode byte for byte")
    }
  }

  @Test("the batch fixtures apply to their old snapshot and give the new one")
  func fixturesApply() throws {
    let coder = WireCoder()
    for (name, old, new, from) in [
      ("batch-items", "todo: a b c d | done: e", "todo: d a' x c | done: e b", 12),
      ("batch-sections", "A: a b | B: c d | C: e", "C: h e | B: d c f | D: g", 14),
    ] {
      let stored = try Data(contentsOf: Self.directory.appendingPathComponent("\(name).json"))
      guard case .batch(let batch) = try coder.decode(stored, as: TestSection.self) else {
        Issue.record("\(name) is not a batch")
        continue
      }
      #expect(try batch.update(from: snapshot(old), at: from).snapshot == snapshot(new), "\(name)")
    }
  }

  @Test(
    "a query parameter's kind follows its value: a whole number that fits in Int is an integer however it is written, and re-encodes byte for byte",
    arguments: [
      ("1.0000000000000000000000001e18", WireValue.integer(1_000_000_000_000_000_000)),
      ("9.999999999999999999999e17", .integer(1_000_000_000_000_000_000)),
      ("4611686018427387904.5", .integer(4_611_686_018_427_387_904)),
      ("-9223372036854775808.5", .integer(.min)),
      ("2e1", .integer(20)), ("20.0", .integer(20)), ("0.5", .number(0.5)), ("1e19", .number(1e19)),
    ])
  func parameterKinds(literal: String, value: WireValue) throws {
    let coder = WireCoder()
    let text =
      #"{"format":"simplesource","formatVersion":2,"from":0,"query":{"name":"q","parameters":{"x":"#
      + literal + #"}},"stream":"s","type":"subscribe"}"#
    let decoded = try coder.decode(Data(text.utf8), as: TestSection.self)
    guard case .subscribe(_, _, let query?) = decoded else {
      Issue.record("expected a subscribe with a query, got \(decoded)")
      return
    }
    #expect(query.parameters["x"] == value)
    let encoded = coder.encode(decoded)
    #expect(coder.encode(try coder.decode(encoded, as: TestSection.self)) == encoded)
  }
}
