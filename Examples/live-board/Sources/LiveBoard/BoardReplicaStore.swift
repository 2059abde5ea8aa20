// A Swift client's replica of the board kept in the app's own SQLite database through GRDB, instead of the
// package's files: ReplicaStore is three calls, here three transactions.

import Foundation
import GRDB
import NIOConcurrencyHelpers
import SimpleSource

/// A ``RemoteDataSource``'s replica of the board in two tables of a SQLite database the app already keeps:
/// `replica_state` (one row: the base state and pending edits as one document) and `replica_journal` (one
/// row per message since, in order).
///
/// Each call is one SQLite transaction, so a crash at any moment leaves the journal with or without the
/// message appended, and a compaction all done or not begun: `load()` reads the replica before or after
/// it, never a mix. The queue it opens is in WAL mode, with the ``Sync`` chosen: `synchronous = FULL`
/// flushes every commit (an append survives a power loss), `NORMAL` flushes at WAL checkpoints only (an
/// append survives the app crashing; a power loss may lose the newest ones, never the order).
///
/// The store is called from the source's actor and its calls block while SQLite writes (and, with
/// ``Sync/everyRecord``, while the disk flushes): one replica per app costs a millisecond or so per batch;
/// a process that simulates hundreds of clients (a load generator) should choose ``Sync/checkpoints``.
///
/// Cost: an append is one `INSERT` (O(*k*) for a message of *k* changes); a compaction rewrites the state
/// (O(*n*)) and is asked for once the journal holds more bytes than the state and at least
/// `compactingAfter`; loading is O(*n*) plus the journal.
public final class BoardReplicaStore: ReplicaStore, Sendable {
  /// The board's section: a column of cards.
  public typealias Section = Column

  /// The database.
  public let database: DatabaseQueue
  /// The journal's size in bytes below which an append never asks for a compaction.
  public let compactingAfter: Int
  /// Whether a power loss may take commits that returned (``Sync/checkpoints``): a replica then starts
  /// each time under a new epoch of edit ids.
  public let forgetsAppends: Bool
  /// The sizes of the state and the journal, in bytes, once read.
  let sizes = NIOLockedValueBox<(state: Int, journal: Int)?>(nil)
  let coder = WireCoder(maxMessageBytes: Int.max)

  /// What `replica_state` holds, beside the snapshot and the edits (encoded as wire messages).
  struct Document: Codable {
    var format: Int
    var clientID: String
    var editsMade: Int
    var epoch: String?
    var query: WireQueryRequest?
    var stream: String?
    var version: Int?
    var sections: [Column]
    var pendingEdits: [Data]
  }

  /// The format this build writes and the newest it reads.
  static let format = 1

  /// When appends reach the disk.
  public enum Sync: String, Sendable {
    /// Every commit is flushed (`synchronous = FULL`).
    case everyRecord = "FULL"
    /// Only WAL checkpoints are flushed (`synchronous = NORMAL`).
    case checkpoints = "NORMAL"
  }

  /// A store in the SQLite file at `path` (created when missing), or in memory when `path` is `nil`.
  public convenience init(path: String?, sync: Sync = .everyRecord, compactingAfter: Int = 1 << 16) throws {
    var configuration = Configuration()
    configuration.journalMode = .wal
    let pragma = "PRAGMA synchronous = \(sync.rawValue)"
    configuration.prepareDatabase { db in try db.execute(sql: pragma) }
    let database =
      try path.map { try DatabaseQueue(path: $0, configuration: configuration) }
      ?? DatabaseQueue(configuration: configuration)
    try self.init(database: database, compactingAfter: compactingAfter, forgetsAppends: sync == .checkpoints)
  }

  /// A store in `database`, whose two tables it creates when missing; `forgetsAppends` when its commits
  /// are not all flushed (a power loss may take the newest).
  public init(database: DatabaseQueue, compactingAfter: Int = 1 << 16, forgetsAppends: Bool = false) throws {
    self.database = database
    self.compactingAfter = compactingAfter
    self.forgetsAppends = forgetsAppends
    try database.write { db in
      try db.execute(
        sql: """
          CREATE TABLE IF NOT EXISTS replica_state (id INTEGER PRIMARY KEY CHECK (id = 0), document BLOB NOT NULL);
          CREATE TABLE IF NOT EXISTS replica_journal (seq INTEGER PRIMARY KEY AUTOINCREMENT, message BLOB NOT NULL);
          """)
    }
  }

  /// The base state and the journal, read in one transaction.
  /// - Throws: ``ReplicaStoreError``: `damaged` when a row does not decode, `newerFormat`, or `io`.
  public func load() throws(ReplicaStoreError) -> (
    state: ReplicaState<Column>?, journal: [WireMessage<Column>]
  ) {
    let rows: (Data?, [Data])
    do {
      rows = try database.read { db in
        (
          try Data.fetchOne(db, sql: "SELECT document FROM replica_state WHERE id = 0"),
          try Data.fetchAll(db, sql: "SELECT message FROM replica_journal ORDER BY seq")
        )
      }
    } catch {
      throw ReplicaStoreError(.io, "the replica's database could not be read: \(error)")
    }
    guard let stored = rows.0 else {
      sizes.withLockedValue { $0 = (0, 0) }
      return (nil, [])
    }
    let document: Document
    do {
      document = try JSONDecoder().decode(Document.self, from: stored)
    } catch {
      throw ReplicaStoreError(.damaged, "the replica's state does not decode: \(error)")
    }
    guard document.format <= Self.format else {
      throw ReplicaStoreError(.newerFormat, "format \(document.format); this build reads \(Self.format)")
    }
    var state = ReplicaState<Column>(clientID: document.clientID, query: document.query)
    (state.editsMade, state.epoch) = (document.editsMade, document.epoch)
    (state.stream, state.version) = (document.stream, document.version)
    do {
      state.snapshot = try Snapshot(document.sections)
    } catch {
      throw ReplicaStoreError(.damaged, "the replica's state holds an id twice: \(error)")
    }
    state.pendingEdits = try document.pendingEdits.map { (data) throws(ReplicaStoreError) in
      guard case .edit(let edit) = try message(data) else {
        throw ReplicaStoreError(.damaged, "a pending edit that is not an edit")
      }
      return edit
    }
    let journal = try rows.1.map { (data) throws(ReplicaStoreError) in try message(data) }
    sizes.withLockedValue { $0 = (stored.count, rows.1.reduce(0) { $0 + $1.count }) }
    return (state, journal)
  }

  /// Journals `message`: one `INSERT`.
  /// - Returns: `true` once the journal holds more bytes than the state, and at least `compactingAfter`.
  public func append(_ message: WireMessage<Column>) throws(ReplicaStoreError) -> Bool {
    let data = coder.encode(message)
    do {
      try database.write { db in
        try db.execute(sql: "INSERT INTO replica_journal (message) VALUES (?)", arguments: [data])
      }
    } catch {
      throw ReplicaStoreError(.io, "the replica's journal could not be written: \(error)")
    }
    return sizes.withLockedValue { sizes in
      guard var known = sizes else { return false }
      known.journal += data.count
      sizes = known
      return known.journal >= compactingAfter && known.journal > known.state
    }
  }

  /// Replaces the state and empties the journal, in one transaction.
  public func compact(_ state: ReplicaState<Column>) throws(ReplicaStoreError) {
    let document = Document(
      format: Self.format, clientID: state.clientID, editsMade: state.editsMade, epoch: state.epoch,
      query: state.query,
      stream: state.stream, version: state.version, sections: state.snapshot.sections,
      pendingEdits: state.pendingEdits.map { coder.encode(.edit($0)) })
    let data: Data
    do {
      data = try JSONEncoder().encode(document)
      try database.write { db in
        try db.execute(sql: "DELETE FROM replica_journal")
        try db.execute(
          sql: "INSERT OR REPLACE INTO replica_state (id, document) VALUES (0, ?)", arguments: [data])
      }
    } catch {
      throw ReplicaStoreError(.io, "the replica's state could not be written: \(error)")
    }
    sizes.withLockedValue { $0 = (data.count, 0) }
  }

  private func message(_ data: Data) throws(ReplicaStoreError) -> WireMessage<Column> {
    do {
      return try coder.decode(data)
    } catch {
      throw ReplicaStoreError(.damaged, "a journalled message does not decode: \(error)")
    }
  }
}
