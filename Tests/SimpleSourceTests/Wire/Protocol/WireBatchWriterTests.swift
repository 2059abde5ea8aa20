// The batch writer writes the bytes a sorted-key JSONEncoder writes, for every shape of batch and id, and
// a batch's item is encoded once for every view that sends it.

import Foundation
import SimpleSourceTesting
import Synchronization
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Wire batch writer", .timeLimit(.minutes(30)))
struct WireBatchWriterTests {
  /// An item whose id is neither a string nor a number, so the writer encodes it through `JSONEncoder`.
  struct KeyedItem: Identifiable, Hashable, Sendable, Codable {
    struct Key: Hashable, Sendable, Codable {
      var shard: Int
      var name: String
    }

    var id: Key
    var version: Int
    var note: String
  }

  /// Sections numbered, of items with composite ids.
  typealias KeyedSection = Section<Int, KeyedItem>

  /// Ids as a client may spell them: JSON's escapes, control characters, `/`, non-ASCII text.
  static let oddSpellings = [
    "", "\"", "\\", "/", "\n\t\r", "\u{8}\u{c}", "\u{1}\u{1f}\u{0}", "é", "😀", "\u{7f}",
  ]

  /// The bytes `WireMessage.encode(to:)` gives through a `JSONEncoder` made as ``WireCoder``'s: what the
  /// writer must reproduce.
  static func reference<Section>(_ message: WireMessage<Section>, formatVersion: Int) throws -> Data
  where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.userInfo[WireMessageFormat.userInfoKey] = formatVersion
    return try encoder.encode(message)
  }

  /// The problems of writing `changeset` as a batch in formats 1 and 2 and, under `names`, as the batches
  /// of several views, with and without a cache of items.
  static func problems<Section>(_ changeset: Changeset<Section>, names: [String]) throws -> [String]
  where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
    let batch = WireBatch(from: 40, to: 41, stages: changeset.stages.map(WireStage.init))
    var problems: [String] = []
    func compare(_ written: Data, _ expected: Data, _ what: String) {
      guard written != expected else { return }
      problems.append(
        "\(what): wrote \(String(decoding: written, as: UTF8.self)), "
          + "expected \(String(decoding: expected, as: UTF8.self))")
    }
    for format in [1, 2] {
      let expected = try reference(WireMessage<Section>.batch(batch), formatVersion: format)
      for stages in [WireBatchWriter.Stages.wire(batch.stages), .changeset(changeset)] {
        let form = if case .wire = stages { "wire stages" } else { "changeset" }
        let write = { (items: WireValueCache<Section.Item.ID>?) in
          WireBatchWriter.batch(from: 40, to: 41, stages, formatVersion: format, items: items)
        }
        compare(write(nil), expected, "format \(format), \(form)")
        let items = WireValueCache<Section.Item.ID>()
        compare(write(items), expected, "format \(format), \(form), cached")
        compare(write(items), expected, "format \(format), \(form), from the cache")
      }
      compare(WireCoder(formatVersion: format).encode(WireMessage<Section>.batch(batch)), expected, "coder")
    }
    let views = Dictionary(names.map { ($0, batch) }, uniquingKeysWith: { first, _ in first })
    let message = WireMessage<Section>.viewBatches(from: 40, to: 41, batches: views)
    let expected = try reference(message, formatVersion: 3)
    compare(
      WireBatchWriter.viewBatches(from: 40, to: 41, views.mapValues { .wire($0.stages) }), expected, "views")
    let changesets = views.mapValues { _ in WireBatchWriter.Stages.changeset(changeset) }
    compare(
      WireBatchWriter.viewBatches(from: 40, to: 41, changesets, items: WireValueCache()), expected,
      "views of a changeset")
    compare(WireCoder().encode(message), expected, "views through the coder")
    return problems
  }

  /// Names of views. Foundation on Apple platforms sorts keys numerically and ignoring case, so there
  /// only names that both orders agree on are compared with its bytes.
  #if canImport(Darwin)
    static let viewNames = ["", "a", "b", "c", "views/\"x\""]
  #else
    static let viewNames = ["", "a", "B", "a10", "a9", "é", "views/\"x\"", "Ab"]
  #endif

  /// `sections` with every id respelled by `spell`, one spelling per id, so a pair stays a valid pair.
  static func respelled(_ sections: [TestSection], _ spell: (String) -> String) -> [TestSection] {
    sections.map { section in
      TestSection(
        id: spell(section.id), header: section.header.map(spell), footer: section.footer,
        items: section.items.map { TestItem(spell($0.id), version: $0.version) })
    }
  }

  /// `sections` as numbered sections of composite ids; numbers far from zero, negative and `Int.min`.
  static func keyed(_ sections: [TestSection]) -> [KeyedSection] {
    func number(_ id: String) -> Int {
      let digits = Int(id.filter(\.isNumber)) ?? 0
      return digits == 0 ? .min : digits.isMultiple(of: 2) ? -digits * 1_000_003 : digits
    }
    return sections.map { section in
      KeyedSection(
        id: number(section.id), header: section.header,
        items: section.items.map {
          KeyedItem(
            id: .init(shard: number($0.id), name: $0.id), version: $0.version, note: "a/b \"\($0.id)\"")
        })
    }
  }

  @Test("random batches are written with JSONEncoder's bytes: odd string ids, composite ids, many views")
  func randomBatches() throws {
    let settings = WireBatchTests.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 27))
    let pairs = RandomSnapshotPairs(maxSections: 6, maxItems: 40)
    var (failures, written) = (0, 0)
    for index in 0..<settings.cases where failures < 3 {
      let (old, new) = pairs.next(using: &random)
      let odd = Self.oddSpellings.shuffled(using: &random)
      func spell(_ id: String) -> String { odd[(Int(id.filter(\.isNumber)) ?? 0) % odd.count] + id }
      // View names in several spellings: the writer sorts them as Foundation does on Linux.
      let names = (0..<Int.random(in: 1...5, using: &random)).map { _ in
        Self.viewNames.randomElement(using: &random)!
      }
      var problems = try Self.problems(
        Changeset(
          from: try Snapshot(Self.respelled(old, spell)), to: try Snapshot(Self.respelled(new, spell))),
        names: names)
      problems += try Self.problems(
        Changeset(from: try Snapshot(Self.keyed(old)), to: try Snapshot(Self.keyed(new))), names: names)
      written += 1
      if !problems.isEmpty {
        failures += 1
        Issue.record("case \(index): \(problems.prefix(2)); \(settings.replay)")
      }
    }
    print(
      "Wire batch writer: \(written) random batches written as JSONEncoder writes them; \(settings.replay)")
  }

  /// An item that counts its encodings.
  struct CountedItem: Identifiable, Hashable, Sendable, Codable {
    static let encodings = Atomic<Int>(0)
    var id: Int
    var version: Int

    init(id: Int, version: Int) {
      self.id = id
      self.version = version
    }

    init(from decoder: any Decoder) throws {
      var container = try decoder.unkeyedContainer()
      self.init(id: try container.decode(Int.self), version: try container.decode(Int.self))
    }

    func encode(to encoder: any Encoder) throws {
      Self.encodings.add(1, ordering: .relaxed)
      var container = encoder.unkeyedContainer()
      try container.encode(id)
      try container.encode(version)
    }
  }

  @Test("a batch's changed item is encoded once for every view of the service that shows it")
  func oneEncodingPerItem() async throws {
    typealias Counted = Section<String, CountedItem>
    let source = try BasicDataSource(
      sections: [Counted(id: "all", items: (0..<20).map { CountedItem(id: $0, version: 0) })])
    let atLeast = WireQuery<Counted>("atLeast", parameters: ["k": .integer]) {
      arguments throws(WireQueryRefusal) in
      let k = try arguments.integer("k")
      return Projection(where: { $0.id >= k })
    }
    let service = WireService(source: source, stream: "counted", queries: [atLeast])
    // Eight views, each followed by two sessions; every view shows items 15 and 16.
    let batches = Locked(0)
    var sessions: [WireSession<Counted, NoScope>] = []
    for index in 0..<16 {
      let session = service.session { data in
        if case .batch? = try? WireCoder().decode(data, as: Counted.self) { batches.withLock { $0 += 1 } }
      }
      let query = WireQueryRequest("atLeast", ["k": .integer(index % 8)])
      await session.receive(
        WireCoder().encode(WireMessage<Counted>.subscribe(stream: nil, from: nil, query: query)))
      sessions.append(session)
    }
    for session in sessions { await session.settled() }
    let before = CountedItem.encodings.load(ordering: .relaxed)
    try await source.transaction { transaction in
      _ = try transaction.replaceItem(CountedItem(id: 15, version: 1))
      _ = try transaction.replaceItem(CountedItem(id: 16, version: 1))
    }
    for session in sessions { await session.settled() }
    #expect(batches.withLock { $0 } == 16)
    #expect(CountedItem.encodings.load(ordering: .relaxed) - before == 2)
    for session in sessions { await session.close() }
  }
}
