// Batches through the wire: encoded, decoded and applied stage by stage, they give every stage's state.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("Wire batches", .timeLimit(.minutes(30)))
struct WireBatchTests {
  /// `SIMPLESOURCE_WIRE_CASES`: 300 pairs here, 3,000 in CI.
  static let settings = RandomTestSettings.current(
    defaultCases: 300, casesVariable: "SIMPLESOURCE_WIRE_CASES")

  /// Encodes and decodes `batch`, applies it stage by stage to `old`, and returns the problems.
  static func roundTrip(_ changeset: Changeset<TestSection>) -> [String] {
    let coder = WireCoder()
    let batch = UpdateBatch(from: 4, to: 5, changeset: changeset)
    let bytes = coder.encode(WireMessage<TestSection>.batch(WireBatch(batch)))
    guard case .batch(let decoded)? = try? coder.decode(bytes, as: TestSection.self) else {
      return ["does not decode: \(String(decoding: bytes, as: UTF8.self))"]
    }
    if coder.encode(WireMessage<TestSection>.batch(decoded)) != bytes { return ["re-encodes differently"] }
    var problems: [String] = []
    var state = changeset.source
    for (index, (stage, original)) in zip(decoded.stages, changeset.stages).enumerated() {
      do {
        state = try state.applyingChecked([stage.patch]).snapshot
      } catch {
        return ["stage \(index) refused: \(error)"]
      }
      if state.sections != original.state.sections { problems.append("stage \(index) state differs") }
    }
    do {
      let update = try decoded.update(from: changeset.source, at: 4)
      if update.snapshot != changeset.target { problems.append("update's snapshot differs") }
      if let failure = check(changeset.source, changeset.target, changeset: update.changeset) {
        problems.append("re-served changeset: \(failure)")
      }
    } catch {
      problems.append("update refused: \(error)")
    }
    return problems
  }

  @Test("random full diffs cross the wire: every stage's state is reproduced, re-encoding is byte-exact")
  func randomFullDiffs() throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 21))
    let pairs = RandomSnapshotPairs(maxSections: 8, maxItems: 60)
    var failures = 0
    for index in 0..<settings.cases where failures < 3 {
      let (old, new) = pairs.next(using: &random)
      let changeset = Changeset(from: try Snapshot(old), to: try Snapshot(new))
      if changeset.isEmpty { continue }
      let problems = Self.roundTrip(changeset)
      if !problems.isEmpty {
        failures += 1
        Issue.record("case \(index): \(problems); \(settings.replay)")
      }
    }
    print("Wire batches: \(settings.cases) random full diffs round-tripped; \(settings.replay)")
  }

  @Test("random logged batches (edits of a persistent snapshot) cross the wire")
  func randomLoggedBatches() throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 22))
    var failures = 0
    for index in 0..<settings.cases where failures < 3 {
      var store = SectionStore(trusted: try Snapshot(LoggedChangesetTests.randomSections(using: &random)))
      let old = store.snapshot
      for serial in 0..<Int.random(in: 1...8, using: &random) {
        LoggedChangesetTests.randomEdit(&store, serial: serial, using: &random)
      }
      let log = store.takeLog()
      guard
        let changeset = Changeset(from: old, to: store.snapshot, logged: log.touching ?? [], refreshing: []),
        !changeset.isEmpty
      else { continue }
      let problems = Self.roundTrip(changeset)
      if !problems.isEmpty {
        failures += 1
        Issue.record("case \(index): \(problems); \(settings.replay)")
      }
    }
    print("Wire batches: \(settings.cases) random logged batches round-tripped; \(settings.replay)")
  }

  /// A batch message from `text` JSON, to apply to `layout`.
  static func refusal(_ text: String, on start: String = "A: a b c | B: d") -> WireError? {
    let coder = WireCoder()
    let held = snapshot(start)
    do {
      guard case .batch(let batch) = try coder.decode(Data(text.utf8), as: TestSection.self) else {
        Issue.record("not a batch: \(text)")
        return nil
      }
      _ = try batch.update(from: held, at: 1)
      Issue.record("accepted: \(text)")
      return nil
    } catch {
      return error
    }
  }

  static func batch(_ stages: String, from: Int = 1, to: Int = 2) -> String {
    #"{"format":"simplesource","formatVersion":1,"type":"batch","from":\#(from),"to":\#(to),"stages":[\#(stages)]}"#
  }

  @Test(
    "a batch that does not apply is refused with a typed error naming the stage and position",
    arguments: [
      (
        #"{"kind":"structure","items":{"deletes":[{"at":[0,7],"id":"a"}]}}"#,
        WireError.Code.positionOutOfRange
      ),
      (#"{"kind":"structure","items":{"deletes":[{"at":[5,0],"id":"a"}]}}"#, .positionOutOfRange),
      (#"{"kind":"structure","items":{"deletes":[{"at":[0,1],"id":"a"}]}}"#, .idMismatch),
      (#"{"kind":"structure","items":{"deletes":[{"at":[0,0],"id":"zz"}]}}"#, .idMismatch),
      (
        #"{"kind":"structure","items":{"inserts":[{"at":[0,0],"value":{"id":"d","version":0}}]}}"#,
        .duplicateID
      ),
      (
        #"{"kind":"structure","items":{"inserts":[{"at":[0,9],"value":{"id":"n","version":0}}]}}"#,
        .positionOutOfRange
      ),
      (
        #"{"kind":"structure","items":{"inserts":[{"at":[0,0],"value":{"id":"n","version":0}},{"at":[0,0],"value":{"id":"m","version":0}}]}}"#,
        .positionOutOfRange
      ),
      (#"{"kind":"structure","items":{"moves":[{"from":[0,0],"id":"a","to":[1,5]}]}}"#, .positionOutOfRange),
      (#"{"kind":"refresh","items":{"updates":[{"at":[0,0],"value":{"id":"b","version":1}}]}}"#, .idMismatch),
      (#"{"kind":"structure","sections":{"deletes":[{"at":1,"id":"A"}]}}"#, .idMismatch),
      (#"{"kind":"structure","sections":{"deletes":[{"at":0,"id":"A"},{"at":0,"id":"A"}]}}"#, .duplicateID),
      (
        #"{"kind":"structure","sections":{"inserts":[{"at":0,"value":{"id":"N","items":[{"id":"a","version":0}]}}]}}"#,
        .duplicateID
      ),
      (#"{"kind":"structure","sections":{"moves":[{"from":0,"id":"A","to":4}]}}"#, .positionOutOfRange),
      (#"{"kind":"structure"}"#, .emptyBatch),
    ])
  func refusedStages(stage: String, code: WireError.Code) {
    let error = Self.refusal(Self.batch(stage))
    #expect(error?.code == code, "\(stage): \(error.map(String.init(describing:)) ?? "none")")
    #expect(error?.detail.hasPrefix("stage 0") == true)
  }

  @Test("a batch from another version, or going back, is refused")
  func versionMismatch() {
    #expect(Self.refusal(Self.batch(#"{"kind":"structure"}"#, from: 3, to: 4))?.code == .versionMismatch)
    #expect(Self.refusal(Self.batch(#"{"kind":"structure"}"#, from: 1, to: 1))?.code == .versionMismatch)
    #expect(Self.refusal(Self.batch("", from: 1, to: 2))?.code == .emptyBatch)
  }

  @Test("a refused stage leaves nothing half applied: later stages' problems undo earlier stages")
  func atomic() throws {
    let held = snapshot("A: a b c | B: d")
    let text = Self.batch(
      #"{"kind":"structure","items":{"deletes":[{"at":[0,0],"id":"a"}]}},{"kind":"structure","items":{"deletes":[{"at":[0,0],"id":"a"}]}}"#
    )
    guard case .batch(let batch) = try WireCoder().decode(Data(text.utf8), as: TestSection.self) else {
      Issue.record("not a batch")
      return
    }
    #expect(throws: WireError.self) { try batch.applied(to: held) }
    #expect(held == snapshot("A: a b c | B: d"))
  }

  @Test(
    "bytes that are not a message of this format get typed errors",
    arguments: [
      (#"{"format":"simplesource","formatVersion":1,"type":"batch","from":1,"#, WireError.Code.malformed),
      ("not json", .malformed),
      (
        #"{"format":"simplesource","formatVersion":4,"type":"resumed","stream":"s","version":1}"#,
        .unsupportedFormat
      ),
      (#"{"format":"simplesource","formatVersion":0,"type":"subscribe"}"#, .unsupportedFormat),
      // A query is format 2's: a format 1 subscribe that names one is refused, not served the whole stream.
      (#"{"format":"simplesource","formatVersion":1,"type":"subscribe","query":{"name":"q"}}"#, .malformed),
      (
        #"{"format":"simplesource","formatVersion":2,"type":"subscribe","query":{"parameters":{}}}"#,
        .malformed
      ),
      (
        #"{"format":"simplesource","formatVersion":2,"type":"subscribe","query":{"name":"q","parameters":{"a":[1]}}}"#,
        .malformed
      ),
      (
        #"{"format":"other","formatVersion":1,"type":"resumed","stream":"s","version":1}"#, .unsupportedFormat
      ),
      (#"{"formatVersion":1,"type":"resumed"}"#, .malformed),
      (#"{"format":"simplesource","formatVersion":1,"type":"gossip"}"#, .malformed),
      (
        #"{"format":"simplesource","formatVersion":1,"type":"resumed","stream":"s","version":"one"}"#,
        .malformed
      ),
      (
        #"{"format":"simplesource","formatVersion":1,"type":"batch","from":1,"to":2,"stages":[{"kind":"sideways"}]}"#,
        .malformed
      ),
      (
        #"{"format":"simplesource","formatVersion":1,"type":"batch","from":1,"to":2,"stages":[{"kind":"structure","items":{"deletes":[{"at":[0,1,2],"id":"a"}]}}]}"#,
        .malformed
      ),
      (
        #"{"format":"simplesource","formatVersion":1,"type":"reset","stream":"s","version":1,"sections":[{"id":"A","items":[{"id":"a","version":0},{"id":"a","version":0}]}]}"#,
        .duplicateID
      ),
    ])
  func refusedBytes(text: String, code: WireError.Code) {
    #expect(throws: WireError.self) { try WireCoder().decode(Data(text.utf8), as: TestSection.self) }
    do {
      _ = try WireCoder().decode(Data(text.utf8), as: TestSection.self)
    } catch {
      #expect(error.code == code, "\(text): \(error)")
    }
  }

  @Test(
    "a refusal's detail names the field and the JSON it wanted, never a Swift type",
    arguments: [
      (
        #"{"format":"simplesource","formatVersion":2,"type":"subscribe","stream":"s","from":1.5}"#, "from",
        "an integer"
      ),
      (
        #"{"format":"simplesource","formatVersion":2,"type":"resumed","stream":"s","version":"one"}"#,
        "version", "an integer"
      ),
      (
        #"{"format":"simplesource","formatVersion":2,"type":"resumed","stream":7,"version":1}"#, "stream",
        "a string"
      ),
      (
        #"{"format":"simplesource","formatVersion":2,"type":"resumed","stream":null,"version":1}"#, "stream",
        "a string"
      ),
      (
        #"{"format":"simplesource","formatVersion":2,"type":"reset","stream":"s","version":1,"sections":{}}"#,
        "sections", "an array"
      ),
      ("not json", "JSON", "not JSON"),
    ])
  func refusalDetails(text: String, field: String, wanted: String) {
    do {
      _ = try WireCoder().decode(Data(text.utf8), as: TestSection.self)
      Issue.record("\(text) was accepted")
    } catch {
      #expect(error.code == .malformed)
      #expect(error.detail.contains(field) && error.detail.contains(wanted), "\(text): \(error.detail)")
      for name in ["Int", "String", "Double", "Array", "Dictionary", "Optional", "Swift."] {
        #expect(!error.detail.contains(name), "\(text): \(error.detail) names \(name)")
      }
    }
  }

  @Test("a batch is encoded once however many feeds send it, and the bytes are its message's")
  func encodedOnce() async throws {
    let batch = UpdateBatch(
      from: 1, to: 2, changeset: Changeset(from: snapshot("A: a b c"), to: snapshot("A: c a b' d")))
    let coder = WireCoder()
    let key = ObjectIdentifier(WireCoder.self)
    #expect(batch.storage.shared.withLock { $0.forms[key] } == nil)
    let first = coder.encode(batch)
    #expect(first == coder.encode(WireMessage<TestSection>.batch(WireBatch(batch))))
    #expect(batch.storage.shared.withLock { $0.forms[key] } as? Data == first)
    #expect(coder.encode(batch) == first)

    let source = try BasicDataSource(sections: layout("A: a b"))
    let feeds = await [
      source.wireFeed(stream: "s", request: (nil, nil)), source.wireFeed(stream: "s", request: (nil, nil)),
    ]
    try await source.appendItems([TestItem("c")], toSection: "A")
    var sent: [[Data]] = []
    for feed in feeds {
      var iterator = feed.encoded(with: coder).makeAsyncIterator()
      sent.append([await iterator.next()!, await iterator.next()!])
      feed.cancel()
    }
    #expect(sent[0] == sent[1])
    guard case .batch(let decoded) = try coder.decode(sent[0][1], as: TestSection.self) else {
      Issue.record("the second message is not a batch")
      return
    }
    #expect(try decoded.update(from: snapshot("A: a b"), at: 0).snapshot == (await source.snapshot))
  }

  @Test("a message over the size limit is refused before it is parsed")
  func tooLarge() {
    let text = #"{"format":"simplesource","formatVersion":1,"type":"resumed","stream":"s","version":1}"#
    do {
      _ = try WireCoder(maxMessageBytes: 40).decode(Data(text.utf8), as: TestSection.self)
      Issue.record("accepted")
    } catch {
      #expect(error.code == .tooLarge)
    }
    #expect((try? WireCoder(maxMessageBytes: 200).decode(Data(text.utf8), as: TestSection.self)) != nil)
  }
}
