// The log's doorbell: what a writer sends with its commit, and what a follower does on it.

import Foundation
import LiveBoard
import SimpleSource
import Testing

@testable import BoardCluster

@Suite("The log's doorbell")
struct DoorbellTests {
  /// The log entry of adding one card to a board at `version`, as `board_log` keeps it.
  func entry(at version: Int) async throws -> String {
    let source = try BasicDataSource(
      sections: [Column(id: "todo", header: "To do", items: [])], version: version)
    let prepared = try await source.prepare(from: version) {
      (transaction: inout Transaction<Column>) throws in
      _ = try transaction.appendItems([Card(id: "a", title: "A")], toSection: "todo")
    }
    let made = prepared.batch
    await prepared.abandon()
    return String(decoding: WireCoder().encode(try #require(made)), as: UTF8.self)
  }

  @Test("a doorbell of the instance's stream names its version and carries its entry; nothing else is one")
  func reading() {
    #expect(Doorbell("a1b2:42", stream: "a1b2") == Doorbell(version: 42, entry: nil))
    #expect(Doorbell("a1b2:42:{\"x\":1}", stream: "a1b2") == Doorbell(version: 42, entry: "{\"x\":1}"))
    // A stream name may hold a colon: the version is what follows the name.
    #expect(Doorbell("board:2026:7", stream: "board:2026") == Doorbell(version: 7, entry: nil))
    #expect(Doorbell("board:2026:7:{}", stream: "board:2026") == Doorbell(version: 7, entry: "{}"))
    #expect(Doorbell("other:42", stream: "a1b2") == nil)
    #expect(Doorbell("a1b2:", stream: "a1b2") == nil)
    #expect(Doorbell("a1b2:4x", stream: "a1b2") == nil)
    #expect(Doorbell("a1b2:+4", stream: "a1b2") == nil)
    #expect(Doorbell("a1b2", stream: "a1b2") == nil)
    #expect(Doorbell("", stream: "") == nil)
  }

  @Test(
    "the doorbell carries the entry when the payload stays under PostgreSQL's 8,000 bytes, else the version")
  func payload() {
    #expect(Doorbell.payload(stream: "s", version: 7, entry: "{}") == "s:7:{}")
    // "s:7:" is 4 bytes: an entry of 7,995 makes 7,999, the most a payload may have.
    let fits = String(repeating: "x", count: 7_995)
    #expect(Doorbell.payload(stream: "s", version: 7, entry: fits) == "s:7:" + fits)
    #expect(Doorbell.payload(stream: "s", version: 7, entry: fits + "x") == "s:7")
    let read = Doorbell(Doorbell.payload(stream: "s", version: 7, entry: fits), stream: "s")
    #expect(read?.entry.map(String.init) == fits)
  }

  @Test("a follower makes the next version from the doorbell; a gap, no entry or a bad one reads the log")
  func following() async throws {
    let next = try await entry(at: 41)
    guard case .make(let batch) = Doorbell.step(on: Doorbell(version: 42, entry: next[...]), held: 41) else {
      Issue.record("the version after the one held, with its entry, is made from the doorbell")
      return
    }
    #expect((batch.from, batch.to) == (41, 42))
    #expect(Doorbell.step(on: Doorbell(version: 42, entry: next[...]), held: 42).isSkip)
    #expect(Doorbell.step(on: Doorbell(version: 42, entry: nil), held: 43).isSkip)
    // Two versions behind: the one between is in the log only.
    #expect(Doorbell.step(on: Doorbell(version: 42, entry: next[...]), held: 40).isReadLog)
    #expect(Doorbell.step(on: Doorbell(version: 42, entry: nil), held: 41).isReadLog)
    #expect(Doorbell.step(on: Doorbell(version: 42, entry: "{not json"), held: 41).isReadLog)
    // An entry that is not the doorbell's version's.
    let earlier = try await entry(at: 40)
    #expect(Doorbell.step(on: Doorbell(version: 42, entry: earlier[...]), held: 41).isReadLog)
    #expect(Doorbell.step(on: nil, held: 41).isReadLog)
  }
}

extension Doorbell.Step {
  var isSkip: Bool { if case .skip = self { true } else { false } }
  var isReadLog: Bool { if case .readLog = self { true } else { false } }
}
