// A replica's store in two files of a folder: the base state, and a journal of what came after it.

public import Foundation
public import SimpleSourceCore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A ``ReplicaStore`` in a folder: `state` holds the base state, `journal` the messages since.
///
/// Both files are sequences of checksummed records (a length, a CRC-32 of the bytes, a CRC-32 of those two,
/// then the bytes). What a crash leaves:
/// - **During an append** (a batch, an edit, an answer): the journal ends with a torn record, which
///   ``load()`` drops: the replica starts from the state before that message. The next append cuts the
///   torn bytes first.
/// - **During a compaction**: the new state is written to `state.tmp`, flushed to the disk and renamed
///   over `state`; then a new, empty journal (headed by the new state's generation) replaces the old one
///   the same way. Before the first rename, the old state and journal are read; after it, the journal
///   still heads the old generation and is ignored, so the new state is read alone.
///
/// When writes reach the disk (``Sync``): a compaction is always flushed (`fsync` of the file, then of
/// the folder after each rename). An append is flushed too with ``Sync/everyRecord`` (the default): a
/// message appended survives a power loss. With ``Sync/compactions`` it survives the process crashing,
/// not always the machine: a power loss may lose the newest appends, never the order or the checks, and
/// the store says so (``forgetsAppends``), so that a replica starts a new epoch of edit ids.
///
/// A store belongs to one replica at a time: give each ``RemoteDataSource`` a folder of its own (the source
/// calls the store from its actor, one call at a time).
///
/// A damaged file (a header that fails its check, a whole record that fails its checksum), a newer format,
/// or a file of another section type is a ``ReplicaStoreError``; ``RemoteDataSource`` then starts from
/// nothing and compacts an empty state over it.
public final class FileReplicaStore<Section: SectionType>: ReplicaStore, Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// When appends are flushed to the disk.
  public enum Sync: Hashable, Sendable {
    /// Every append is flushed before it returns (`fsync`): it survives a power loss.
    case everyRecord
    /// Only compactions are flushed: an append survives the process crashing, and a power loss may lose
    /// the newest appends.
    case compactions
  }

  /// The folder of the two files.
  public let directory: URL
  /// When appends are flushed.
  public let sync: Sync
  /// The journal's size below which an append never asks for a compaction.
  public let compactingAfter: Int

  /// Whether a power loss may take appends: with ``Sync/compactions``.
  public var forgetsAppends: Bool { sync == .compactions }

  /// The format number this build writes and the newest it reads.
  package static var format: Int { 2 }

  /// What the store knows of its files once read: the generation of the state, and where the journal's
  /// next record goes.
  struct Files: Sendable {
    var generation = 0
    var stateBytes = 0
    /// The journal's length in whole records; `nil` when there is no journal of this generation.
    var journalLength: Int?
    /// Whether the journal ends with torn bytes past ``journalLength``.
    var tornTail = false
  }

  let files = Locked<Files?>(nil)
  let coder = WireCoder(maxMessageBytes: Int.max)

  /// A store in `directory`, created when missing.
  /// - Parameters:
  ///   - sync: When appends are flushed to the disk.
  ///   - compactingAfter: The journal's size in bytes below which an append never asks for a compaction;
  ///     above it, an append asks once the journal is larger than the state.
  public init(directory: URL, sync: Sync = .everyRecord, compactingAfter: Int = 1 << 16) {
    self.directory = directory
    self.sync = sync
    self.compactingAfter = compactingAfter
  }

  var statePath: String { directory.appendingPathComponent("state").path }
  var journalPath: String { directory.appendingPathComponent("journal").path }

  /// The header of each file: its format and the generation of the state it belongs to.
  struct Header: Codable {
    var format: Int
    var generation: Int
  }

  /// The first record of the state file: its header and the replica's fields. Each section follows as
  /// a record of the section without its items, then its items in records of at most ``chunkSize``; then
  /// each pending edit as a wire `edit` message. The item records are decoded in parallel.
  struct StateHeader: Codable {
    var format: Int
    var generation: Int
    var clientID: String
    var editsMade: Int
    var epoch: String?
    var query: WireQueryRequest?
    var stream: String?
    var version: Int?
    /// The number of items of each section.
    var itemCounts: [Int]
    var chunkSize: Int
    var pendingEdits: Int
    /// The newest answers (``ReplicaState/answers``); absent in files of earlier builds.
    var answers: [ReplicaAnswer]?

    /// The number of records each section takes: itself, and its item chunks.
    func records(ofSectionWith count: Int) -> Int { 1 + (count + chunkSize - 1) / chunkSize }
  }

  /// How many items a record of the state file holds at most.
  static var chunkSize: Int { 4_096 }

  // MARK: - Reading

  /// Reads the state and the journal of its generation.
  /// - Throws: ``ReplicaStoreError``: `damaged` when a file fails its checks or a record does not decode,
  ///   `newerFormat` when a file has a newer format, `io` when a file cannot be read.
  /// - Complexity: O(size of the files).
  public func load() throws(ReplicaStoreError) -> (
    state: ReplicaState<Section>?, journal: [WireMessage<Section>]
  ) {
    var files = Files()
    var state: ReplicaState<Section>?
    if let data = try read(statePath) {
      let read = try frames(data, of: "state")
      guard let first = read.records.first, !read.tornTail else {
        throw ReplicaStoreError(.damaged, "the state file has no whole header")
      }
      let header = try decode(StateHeader.self, first, of: "state")
      guard header.chunkSize > 0, header.itemCounts.allSatisfy({ $0 >= 0 }) else {
        throw ReplicaStoreError(.damaged, "the state file's header is not one this store writes")
      }
      let expected =
        1 + header.itemCounts.reduce(0) { $0 + header.records(ofSectionWith: $1) } + header.pendingEdits
      guard read.records.count == expected else {
        throw ReplicaStoreError(
          .damaged, "the state file holds \(read.records.count) records, not \(expected)")
      }
      var kept = ReplicaState<Section>(clientID: header.clientID, query: header.query)
      (kept.editsMade, kept.epoch) = (header.editsMade, header.epoch)
      (kept.stream, kept.version) = (header.stream, header.version)
      kept.answers = header.answers ?? []
      var next = 1
      var shells: [Section] = []
      var chunks: [(section: Int, bytes: Data)] = []
      for (section, count) in header.itemCounts.enumerated() {
        shells.append(try decode(Section.self, read.records[next], of: "state"))
        let records = header.records(ofSectionWith: count)
        for record in next + 1..<next + records { chunks.append((section, read.records[record])) }
        next += records
      }
      var sections = shells
      for (chunk, items) in try Self.decodeItems(chunks.map(\.bytes)).enumerated() {
        sections[chunks[chunk].section].items.append(contentsOf: items)
      }
      guard zip(sections, header.itemCounts).allSatisfy({ $0.items.count == $1 }) else {
        throw ReplicaStoreError(.damaged, "the state file's sections do not hold the items its header counts")
      }
      do { kept.snapshot = try Snapshot(sections) } catch {
        throw ReplicaStoreError(.damaged, "the state file's state is not a valid snapshot: \(error)")
      }
      for record in read.records[next...] {
        guard case .edit(let edit) = try message(record, of: "state") else {
          throw ReplicaStoreError(.damaged, "the state file's pending edit is not an edit")
        }
        kept.pendingEdits.append(edit)
      }
      (state, files.generation, files.stateBytes) = (kept, header.generation, data.count)
    }
    var journal: [WireMessage<Section>] = []
    if let data = try read(journalPath) {
      let read = try frames(data, of: "journal")
      if let first = read.records.first {
        let header = try decode(Header.self, first, of: "journal")
        // A journal of an older generation was written before the state's compaction: the state holds it.
        if header.generation == files.generation {
          for record in read.records.dropFirst() { journal.append(try message(record, of: "journal")) }
          (files.journalLength, files.tornTail) = (read.validLength, read.tornTail)
        }
      }
    }
    self.files.withLock { $0 = files }
    return (state, journal)
  }

  private func read(_ path: String) throws(ReplicaStoreError) -> Data? {
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
      throw ReplicaStoreError(.io, "reading \(path): \(error)")
    }
  }

  private func frames(_ data: Data, of file: String) throws(ReplicaStoreError) -> ReplicaFrames.Read {
    do { return try ReplicaFrames.read(data) } catch {
      throw ReplicaStoreError(.damaged, "the \(file) file: \(error)")
    }
  }

  /// The items of each record of `chunks`, decoded on every core at once.
  /// - Complexity: O(size of the records), divided among the cores.
  private static func decodeItems(_ chunks: [Data]) throws(ReplicaStoreError) -> [[Section.Item]] {
    let results = chunks.map { _ in Locked<Result<[Section.Item], any Error>?>(nil) }
    DispatchQueue.concurrentPerform(iterations: chunks.count) { index in
      let result = Result { try JSONDecoder().decode([Section.Item].self, from: chunks[index]) }
      results[index].withLock { $0 = result }
    }
    return try results.map { (slot) throws(ReplicaStoreError) -> [Section.Item] in
      switch slot.withLock({ $0 }) {
      case .success(let items): return items
      case .failure(let error):
        throw ReplicaStoreError(.damaged, "items of the state file do not decode: \(error)")
      case nil: throw ReplicaStoreError(.damaged, "items of the state file were not decoded")
      }
    }
  }

  private func message(_ record: Data, of file: String) throws(ReplicaStoreError) -> WireMessage<Section> {
    do { return try coder.decode(record, as: Section.self) } catch {
      throw ReplicaStoreError(.damaged, "a record of the \(file) file does not decode: \(error)")
    }
  }

  private func decode<Value: Decodable>(_ type: Value.Type, _ record: Data, of file: String)
    throws(ReplicaStoreError) -> Value
  {
    if let header = try? JSONDecoder().decode(Header.self, from: record), header.format > Self.format {
      throw ReplicaStoreError(
        .newerFormat, "the \(file) file has format \(header.format), this build reads \(Self.format)")
    }
    do { return try JSONDecoder().decode(type, from: record) } catch {
      throw ReplicaStoreError(.damaged, "the \(file) file does not decode: \(error)")
    }
  }

  /// What the store knows of its files, reading them first if it has not.
  private func known() throws(ReplicaStoreError) -> Files {
    if let files = files.withLock({ $0 }) { return files }
    _ = try load()
    return files.withLock { $0 } ?? Files()
  }

  // MARK: - Writing

  /// Appends `message` to the journal, after cutting a torn tail, and flushes it with ``Sync/everyRecord``.
  /// - Returns: `true` once the journal is larger than the state and than ``compactingAfter``: a
  ///   compaction would make loading cheaper.
  /// - Complexity: O(size of the message).
  public func append(_ message: WireMessage<Section>) throws(ReplicaStoreError) -> Bool {
    var files = try known()
    if files.journalLength == nil {
      try replaceJournal(generation: files.generation)
      (files.journalLength, files.tornTail) = (ReplicaFrames.frame(try header(files.generation)).count, false)
    }
    let frame = ReplicaFrames.frame(coder.encode(message))
    var length = files.journalLength ?? 0
    do {
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: journalPath))
      defer { try? handle.close() }
      if files.tornTail { try handle.truncate(atOffset: UInt64(length)) }
      try handle.seek(toOffset: UInt64(length))
      try handle.write(contentsOf: frame)
      if sync == .everyRecord { try handle.synchronize() }
    } catch {
      // What was written may be torn: the next append cuts it.
      self.files.withLock { $0?.tornTail = true }
      throw ReplicaStoreError(.io, "appending to \(journalPath): \(error)")
    }
    length += frame.count
    (files.journalLength, files.tornTail) = (length, false)
    self.files.withLock { $0 = files }
    return length > max(files.stateBytes, compactingAfter)
  }

  /// Writes `state` as the new base, then an empty journal; see the type's discussion for what a crash
  /// leaves at each step.
  /// - Complexity: O(size of the state).
  public func compact(_ state: ReplicaState<Section>) throws(ReplicaStoreError) {
    let generation = (try? known())?.generation ?? 0
    let next = generation + 1
    let sections = state.snapshot.sections
    let stateHeader = StateHeader(
      format: Self.format, generation: next, clientID: state.clientID, editsMade: state.editsMade,
      epoch: state.epoch, query: state.query, stream: state.stream, version: state.version,
      itemCounts: sections.map(\.items.count), chunkSize: Self.chunkSize,
      pendingEdits: state.pendingEdits.count, answers: state.answers)
    var bytes = Data()
    do {
      let encoder = JSONEncoder()
      bytes.append(ReplicaFrames.frame(try encoder.encode(stateHeader)))
      for section in sections {
        var shell = section
        shell.items = []
        bytes.append(ReplicaFrames.frame(try encoder.encode(shell)))
        for start in stride(from: 0, to: section.items.count, by: Self.chunkSize) {
          let chunk = section.items[start..<min(start + Self.chunkSize, section.items.count)]
          bytes.append(ReplicaFrames.frame(try encoder.encode(Array(chunk))))
        }
      }
    } catch {
      throw ReplicaStoreError(.io, "encoding the state: \(error)")
    }
    for edit in state.pendingEdits {
      bytes.append(ReplicaFrames.frame(coder.encode(WireMessage<Section>.edit(edit))))
    }
    try writeWhole(bytes, to: statePath)
    try replaceJournal(generation: next)
    let journalLength = ReplicaFrames.frame(try header(next)).count
    files.withLock { $0 = Files(generation: next, stateBytes: bytes.count, journalLength: journalLength) }
  }

  private func header(_ generation: Int) throws(ReplicaStoreError) -> Data {
    do { return try JSONEncoder().encode(Header(format: Self.format, generation: generation)) } catch {
      throw ReplicaStoreError(.io, "encoding a header: \(error)")
    }
  }

  private func replaceJournal(generation: Int) throws(ReplicaStoreError) {
    try writeWhole(ReplicaFrames.frame(try header(generation)), to: journalPath)
  }

  /// Writes `bytes` to `path` + `.tmp`, flushes it, renames it over `path` and flushes the folder.
  private func writeWhole(_ bytes: Data, to path: String) throws(ReplicaStoreError) {
    let temporary = path + ".tmp"
    do {
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      guard FileManager.default.createFile(atPath: temporary, contents: nil) else {
        throw ReplicaStoreError(.io, "creating \(temporary)")
      }
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
      defer { try? handle.close() }
      try handle.write(contentsOf: bytes)
      try handle.synchronize()
    } catch let error as ReplicaStoreError {
      throw error
    } catch {
      throw ReplicaStoreError(.io, "writing \(temporary): \(error)")
    }
    guard rename(temporary, path) == 0 else {
      throw ReplicaStoreError(.io, "renaming \(temporary) over \(path): errno \(errno)")
    }
    let folder = open(directory.path, O_RDONLY)
    if folder >= 0 {
      _ = fsync(folder)
      _ = close(folder)
    }
  }
}
