// The board: SQLite (through GRDB) is the truth; every accepted write is prepared in a data source, committed
// to the database, then applied in the source, which streams it to every client as wire batches.

import Foundation
import GRDB
import SimpleSource

/// A card on the board.
public struct Card: Identifiable, Equatable, Sendable, Codable {
  /// The card's id: unique on the board.
  public var id: String
  /// What the card says.
  public var title: String
  /// The user who alone may see the card; `nil` for a card everyone sees. Absent from JSON when `nil`.
  public var owner: String?

  /// Creates a card.
  public init(id: String, title: String, owner: String? = nil) {
    self.id = id
    self.title = title
    self.owner = owner
  }

  /// Whether `user` (`nil`: a guest) may see the card: the rows of the user's scope.
  public func isVisible(to user: String?) -> Bool { owner == nil || owner == user }
}

/// A column of cards: a section whose header is the column's title.
public typealias Column = Section<String, Card>

/// Why a write was refused; nothing was written.
public struct BoardError: Error, Equatable, Sendable {
  /// The HTTP status the refusal maps to: 400, 404 or 409.
  public var status: Int
  /// A stable name, such as `"unknownCard"`.
  public var code: String
  /// What was wrong, for people.
  public var detail: String

  /// A refusal with `status`, `code` and `detail`.
  public init(status: Int, code: String, detail: String) {
    self.status = status
    self.code = code
    self.detail = detail
  }

  /// A request that is malformed or breaks a rule of the board, which `detail` names.
  public static func invalid(_ detail: String) -> Self { Self(status: 400, code: "invalid", detail: detail) }
  /// A card that does not exist, or that the user may not see: the two answers are the same, so a
  /// refusal never tells that another user's private card exists.
  public static func unknownCard(_ id: String) -> Self {
    Self(status: 404, code: "unknownCard", detail: "no card \(id)")
  }
  /// Another process held the database file longer than the busy timeout; nothing was written.
  public static let busy = Self(
    status: 503, code: "busy", detail: "the database is busy; retry in a second (Retry-After)")
  /// The database did not answer a write within its deadline, and no `COMMIT` was sent: nothing was
  /// written.
  public static func timedOut(_ deadline: Duration) -> Self {
    Self(
      status: 503, code: "busy",
      detail: "the database did not answer within \(deadline); nothing was written; retry (Retry-After)")
  }
  /// The database did not answer a write's `COMMIT` within its deadline: the write may have been made.
  public static func unknownOutcome(_ deadline: Duration) -> Self {
    Self(
      status: 503, code: "unknownOutcome",
      detail: "the database did not confirm the write within \(deadline); it may have been made: read the "
        + "board (or follow it) before writing it again")
  }
  /// A column that the board does not have.
  public static func unknownColumn(_ id: String) -> Self {
    Self(
      status: 400, code: "unknownColumn",
      detail: "no column \(id); the columns are \(Board.columns.map(\.id))")
  }
}

/// The board's store and its live data source.
///
/// Writes are committed in groups (``write(_:)``): those that arrive while one group commits are planned in
/// arrival order against the source's state (which is the database's at the version it reports), prepared
/// in the source as one write (its batch derived, nothing made), stored in one SQLite transaction, and then
/// applied in the source: one version per group, each write answered on its own. A refused write changes
/// neither the database nor the source; a group the database refuses is abandoned whole.
public actor Board {
  /// The fixed columns: id and title.
  public static let columns: [(id: String, title: String)] = [
    ("todo", "To do"), ("doing", "Doing"), ("done", "Done"),
  ]
  /// The longest title accepted, in characters.
  public static let maxTitle = 200

  // Guard map: the actor's state is its own. Exactly once has one owner per kind of write. A WebSocket edit:
  // the service's table of answers, in this process (a resend while it is made waits for its answer, one
  // made recently gets it; the writer is not called again); `edit_answer`, written in the write's own
  // transaction, only for what that table cannot know (a resend after a restart, or from another process),
  // and read only when the write was refused. An HTTP write with an `Idempotency-Key`: `edit_answer` alone.
  // Nothing here keeps edits in flight.
  let database: DatabaseQueue
  /// The live board, one section per column.
  public let source: BasicDataSource<Column>
  /// The name of the stream of versions: made when the file was created, with the newest version stored
  /// beside the cards, so versions go on across restarts (a client at the stored version resumes; an
  /// older one resets, as the history starts empty).
  public nonisolated let stream: String
  /// How many versions clients can resume from, in the board and in each view of it.
  public nonisolated let history: HistoryLimit
  /// How many versions' edits keep their answers (table `edit_answer`, written with each edit).
  public nonisolated let answerRetention: Int
  /// Whether writes that arrive together share a transaction.
  public nonisolated let commits: CommitMode
  /// Commits the writes, a group at a time.
  let groups: GroupCommit<Column, PlannedWrite>
  /// How many times the source was reloaded from the database.
  var reloads = 0
  /// With ``CommitMode/perEdit``: whether a write is being made, and who waits for it.
  var isWriting = false
  var writers: [CheckedContinuation<Void, Never>] = []

  /// Opens (or creates) the board stored at `path`; `nil` keeps it in memory.
  /// - Parameters:
  ///   - history: How many versions clients can resume from.
  ///   - answerRetention: How many versions' edits keep their answers: a WebSocket edit sent again after
  ///     a restart gets its first answer when it was made at one of the newest `answerRetention` versions.
  ///   - commits: Whether writes that arrive together share a transaction (``CommitMode/group``), or each
  ///     has its own.
  public init(
    path: String?, history: HistoryLimit = .default, answerRetention: Int = 10_000,
    commits: CommitMode = .group
  ) throws {
    try self.init(
      path: path, history: history, answerRetention: answerRetention, commits: commits, storing: nil)
  }

  /// Opens the board; `storing`, for tests, runs before each group is stored.
  init(
    path: String?, history: HistoryLimit, answerRetention: Int, commits: CommitMode,
    storing: (@Sendable (GroupCommit<Column, PlannedWrite>.Group) async -> Void)?
  ) throws {
    precondition(answerRetention > 0, "live-board: answers are kept for at least one version")
    // WAL, so that readers of the file never block a write, and a busy timeout, so that a write that meets
    // another process's lock waits for it; one that still cannot write answers 503 (``BoardError/busy``).
    var configuration = Configuration()
    configuration.journalMode = .wal
    configuration.busyMode = .timeout(Self.busyTimeout)
    database =
      try path.map { try DatabaseQueue(path: $0, configuration: configuration) }
      ?? DatabaseQueue(configuration: configuration)
    try database.write { db in
      try db.execute(
        sql: """
          CREATE TABLE IF NOT EXISTS card (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL,
            columnID TEXT NOT NULL,
            position INTEGER NOT NULL
          );
          CREATE INDEX IF NOT EXISTS card_column ON card(columnID, position);
          """)
      // Boards stored before private cards existed gain the column; their cards stay shared.
      if try !db.columns(in: "card").contains(where: { $0.name == "owner" }) {
        try db.execute(sql: "ALTER TABLE card ADD COLUMN owner TEXT")
      }
      // The stream and its newest version; the answers to clients' edits, made with them.
      try db.execute(
        sql: """
          CREATE TABLE IF NOT EXISTS board_meta (stream TEXT NOT NULL, version INTEGER NOT NULL);
          CREATE TABLE IF NOT EXISTS edit_answer (
            scope TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, fingerprint TEXT,
            PRIMARY KEY (scope, id)
          );
          CREATE INDEX IF NOT EXISTS edit_answer_version ON edit_answer(version);
          """)
      // Answers recorded before fingerprints were kept have none, and are trusted.
      if try !db.columns(in: "edit_answer").contains(where: { $0.name == "fingerprint" }) {
        try db.execute(sql: "ALTER TABLE edit_answer ADD COLUMN fingerprint TEXT")
      }
      if try Int.fetchOne(db, sql: "SELECT count(*) FROM board_meta") == 0 {
        try db.execute(
          sql: "INSERT INTO board_meta (stream, version) VALUES (?, 0)",
          arguments: ["board-" + UUID().uuidString.prefix(8).lowercased()])
      }
    }
    let (columns, stream, version) = try database.read { db in
      let meta = try Row.fetchOne(db, sql: "SELECT stream, version FROM board_meta")
      return (try Self.readColumns(db), meta?["stream"] as String? ?? "", meta?["version"] as Int? ?? 0)
    }
    source = try BasicDataSource(sections: columns, version: version, history: history)
    self.history = history
    self.stream = stream
    self.answerRetention = answerRetention
    self.commits = commits
    let database = database
    groups = GroupCommit(source) { group in
      await storing?(group)
      try Self.store(group, in: database, retention: answerRetention)
    }
  }

  /// The newest version the database stores (that of its last committed group).
  static func storedVersion(_ db: GRDB.Database) throws -> Int {
    try Int.fetchOne(db, sql: "SELECT version FROM board_meta") ?? 0
  }

  /// The cards of the database, by column. A row whose id Swift takes for equal to an earlier row's (ids
  /// that differ only in Unicode normalization, written before they were normalized) is left out and
  /// logged: the database keeps it, and the board still starts.
  static func readColumns(_ db: GRDB.Database) throws -> [Column] {
    let rows = try Row.fetchAll(
      db, sql: "SELECT id, title, owner, columnID FROM card ORDER BY columnID, position")
    var cards: [String: [Card]] = [:]
    var seen = Set<String>()
    for row in rows {
      let card = Card(id: row["id"], title: row["title"], owner: row["owner"])
      guard seen.insert(card.id).inserted else {
        log("live-board: card \(card.id.debugDescription) is not shown: another card's id equals it")
        continue
      }
      cards[row["columnID"], default: []].append(card)
    }
    return columns.map { Column(id: $0.id, header: $0.title, items: cards[$0.id] ?? []) }
  }

  /// The board as the database holds it, with its version, read in one read: every card, or, for a user
  /// (`nil`: a guest) given as `visibleTo`, the cards that user may see. The source holds that version
  /// once the group that made it is applied, right after its commit (``reach(_:)``).
  public func read(visibleTo user: String?? = .none) async throws(BoardError) -> (
    version: Int, columns: [Column]
  ) {
    var (version, columns) = try read { db in
      (try Self.storedVersion(db), try Self.readColumns(db))
    }
    if case .some(let user) = user { columns = Self.visible(columns, to: user) }
    return (version, columns)
  }

  /// `columns` with only the cards `user` (`nil`: a guest) may see.
  public static func visible(_ columns: [Column], to user: String?) -> [Column] {
    columns.map { column in
      var visible = column
      visible.items.removeAll { !$0.isVisible(to: user) }
      return visible
    }
  }

  /// Checks a user name taken from a request: 1 to 32 ASCII letters, digits, `-` or `_`.
  public static func checkedUser(_ name: String?) throws(BoardError) -> String? {
    guard let name else { return nil }
    let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_".utf8)
    guard (1...32).contains(name.utf8.count), name.utf8.allSatisfy(allowed.contains) else {
      throw BoardError(
        status: 400, code: "invalidUser", detail: "a user name has 1 to 32 ASCII letters, digits, - or _")
    }
    return name
  }

  // MARK: - Writes

  /// Makes `write`; see ``BoardStore/write(_:)``. With ``CommitMode/group`` (the default), the writes that
  /// arrive while a group commits form the next group: planned in arrival order against the board the
  /// writes before them left, then one SQLite transaction (every write's rows, every answer, the version)
  /// and one version of the source. A write the board refuses is answered alone and refuses nothing else.
  /// With ``CommitMode/perEdit``, one write at a time, each a transaction and a version of its own.
  ///
  /// A write with a ticket is made once: the table of answers decides, in the write's own transaction. A
  /// ticket whose answer is recorded already, or whose edit is too old to tell (see
  /// ``EditTicket/answerMayBeDropped(newest:retention:)``), is refused 503 `busy` and nothing of it is
  /// made; ``recall(_:)`` then has its answer or its refusal. (In this process, the service answers an edit
  /// sent again while it is made before it reaches the board; two writes of one ticket in one group are
  /// both refused busy, and a resend is answered from the record or made.)
  /// - Complexity: O(log *n*) to plan and make for *n* cards, and the group's transaction and batch shared.
  public func write(_ write: BoardWrite) async throws(BoardError) -> (version: Int, card: Card?) {
    switch commits {
    case .group: return try await submit(write)
    case .perEdit: return try await exclusive { () async throws(BoardError) in try await self.submit(write) }
    }
  }

  /// Hands `write` to the group committer until it is answered: a write of a group that was not committed
  /// for another write's sake (whose answer was recorded already) goes again in the next group; one whose
  /// rows the database did not hold as the source does reloads the source from the database first, once.
  func submit(_ write: BoardWrite) async throws(BoardError) -> (version: Int, card: Card?) {
    var reloaded = false
    for _ in 0..<8 {
      let generation = reloads
      do {
        let (version, planned) = try await groups.write { transaction in try write.make(in: &transaction) }
        return (version.number, planned.card)
      } catch let refusal as BoardError {
        throw refusal
      } catch let conflict as AnswerConflict {
        // Its own answer is recorded, or its edit is too old to tell: the writer's recall answers it.
        if let key = write.ticket?.key, conflict.keys.contains(key) { throw .busy }
      } catch let disagreement as Disagreement {
        guard !reloaded else { break }
        reloaded = true
        await resynchronize(after: disagreement.detail, unless: generation)
      } catch {
        throw Self.failure(error)
      }
    }
    Self.log("live-board: a write was not made after the source was reloaded or the group made again")
    throw BoardError(status: 500, code: "database", detail: "the board could not be written")
  }

  /// The version recorded as the answer to `ticket`'s edit; see ``BoardStore/recall(_:)``. Read with the
  /// stored version in one read.
  public func recall(_ ticket: EditTicket) async throws(BoardError) -> Int? {
    let (scope, id) = (ticket.scope, ticket.edit.id)
    let (recorded, newest) = try read { db in
      (
        try Row.fetchOne(
          db, sql: "SELECT version, fingerprint FROM edit_answer WHERE scope = ? AND id = ?",
          arguments: [scope, id]),
        try Self.storedVersion(db)
      )
    }
    return try decide(
      ticket, recorded: recorded?["version"], fingerprint: recorded?["fingerprint"], newest: newest)
  }

  /// Stores `group` in one transaction: each answer (an answer recorded already, or an edit too old to
  /// tell whether it was, refuses its write, and nothing of the group is written: ``AnswerConflict``),
  /// each write's rows (a row not where the source
  /// has it, written behind this process's back, refuses the group: ``Disagreement``), the version, and
  /// drops answers older than `retention` versions.
  static func store(
    _ group: GroupCommit<Column, PlannedWrite>.Group, in database: DatabaseQueue, retention: Int
  )
    throws
  {
    let made = group.results.compactMap { try? $0.get() }
    try database.write { db in
      var conflicts = Set<[String]>()
      for ticket in made.compactMap(\.ticket) {
        try db.execute(
          sql: "INSERT OR IGNORE INTO edit_answer (scope, id, version, fingerprint) VALUES (?, ?, ?, ?)",
          arguments: [ticket.scope, ticket.edit.id, group.version.number, ticket.fingerprint])
        // The newest version stored is the group's base: one process makes every version, in order.
        if db.changesCount != 1 || ticket.answerMayBeDropped(newest: group.base.number, retention: retention)
        {
          conflicts.insert(ticket.key)
        }
      }
      if !conflicts.isEmpty { throw AnswerConflict(keys: conflicts) }
      for write in made { try store(write.rows, in: db) }
      if group.batch != nil {
        try db.execute(sql: "UPDATE board_meta SET version = ?", arguments: [group.version.number])
      }
      if made.contains(where: { $0.ticket != nil }) {
        try db.execute(
          sql: "DELETE FROM edit_answer WHERE version <= ?", arguments: [group.version.number - retention])
      }
    }
  }

  /// Writes one write's rows; throws ``Disagreement`` when the card is not where the source has it.
  static func store(_ rows: RowChange, in db: GRDB.Database) throws {
    func expectOne(_ what: String) throws {
      if db.changesCount != 1 { throw Disagreement(detail: what) }
    }
    switch rows {
    case .insert(let card, let column, let index):
      guard try Int.fetchOne(db, sql: "SELECT 1 FROM card WHERE id = ?", arguments: [card.id]) == nil else {
        throw Disagreement(detail: "card \(card.id) is stored already")
      }
      try db.execute(
        sql: "UPDATE card SET position = position + 1 WHERE columnID = ? AND position >= ?",
        arguments: [column, index])
      try db.execute(
        sql: "INSERT INTO card (id, title, owner, columnID, position) VALUES (?, ?, ?, ?, ?)",
        arguments: [card.id, card.title, card.owner, column, index])
    case .update(let card):
      try db.execute(
        sql: "UPDATE card SET title = ?, owner = ? WHERE id = ?",
        arguments: [card.title, card.owner, card.id])
      try expectOne("card \(card.id) is not stored")
    case .move(let id, let from, let to):
      let stored = try Row.fetchOne(
        db, sql: "SELECT columnID, position FROM card WHERE id = ?", arguments: [id])
      guard let stored, stored["columnID"] == from.column, stored["position"] == from.index else {
        throw Disagreement(detail: "card \(id) is not stored at \(from.column)[\(from.index)]")
      }
      try db.execute(
        sql: "UPDATE card SET position = position - 1 WHERE columnID = ? AND position > ?",
        arguments: [from.column, from.index])
      try db.execute(
        sql: "UPDATE card SET position = position + 1 WHERE columnID = ? AND position >= ? AND id != ?",
        arguments: [to.column, to.index, id])
      try db.execute(
        sql: "UPDATE card SET columnID = ?, position = ? WHERE id = ?", arguments: [to.column, to.index, id])
    case .delete(let id, let column, let index):
      try db.execute(
        sql: "DELETE FROM card WHERE id = ? AND columnID = ? AND position = ?",
        arguments: [id, column, index])
      try expectOne("card \(id) is not stored at \(column)[\(index)]")
      try db.execute(
        sql: "UPDATE card SET position = position - 1 WHERE columnID = ? AND position > ?",
        arguments: [column, index])
    }
  }

  // MARK: - Helpers

  /// Runs writes one at a time (``CommitMode/perEdit``): each waits until the one before it is answered.
  func exclusive<T: Sendable>(_ body: () async throws(BoardError) -> T) async throws(BoardError) -> T {
    while isWriting { await withCheckedContinuation { writers.append($0) } }
    isWriting = true
    defer {
      isWriting = false
      if !writers.isEmpty { writers.removeFirst().resume() }
    }
    return try await body()
  }

  /// A title as it is stored: trimmed and in Unicode normalization form C, so that the database and the
  /// live clients hold the same bytes; control characters (NUL, line breaks) and the line and paragraph
  /// separators (U+2028, U+2029, which break lines as well) are refused.
  public static func checked(_ title: String) throws(BoardError) -> String {
    let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
    guard !trimmed.isEmpty else { throw .invalid("a title is not empty") }
    guard trimmed.count <= maxTitle else { throw .invalid("a title has at most \(maxTitle) characters") }
    let breaking: Set<Unicode.GeneralCategory> = [.control, .lineSeparator, .paragraphSeparator]
    guard !trimmed.unicodeScalars.contains(where: { breaking.contains($0.properties.generalCategory) }) else {
      throw .invalid("a title has no control characters (NUL, tab, line breaks, U+2028, U+2029)")
    }
    return trimmed
  }

  /// The characters an id may have: those a URL path carries as they are (RFC 3986's unreserved ones), so
  /// that every card can be edited, moved and deleted at `/api/cards/{id}`, and ids that look alike are
  /// the same bytes in the database and in Swift.
  static let idCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~".utf8)

  /// An id as it is stored: 1 to 64 of ``idCharacters``.
  public static func checkedID(_ id: String) throws(BoardError) -> String {
    guard (1...64).contains(id.utf8.count), id.utf8.allSatisfy(idCharacters.contains) else {
      throw .invalid("an id has 1 to 64 ASCII letters, digits, -, ., _ or ~")
    }
    return id
  }

  /// Refuses a column the board does not have.
  public static func checkColumn(_ column: String) throws(BoardError) {
    guard Self.columns.contains(where: { $0.id == column }) else { throw .unknownColumn(column) }
  }

  func read<T>(_ body: @Sendable (GRDB.Database) throws -> T) throws(BoardError) -> T {
    do { return try database.read(body) } catch { throw Self.failure(error) }
  }

  func write(_ body: @Sendable (GRDB.Database) throws -> Void) throws(BoardError) {
    do { try database.write(body) } catch { throw Self.failure(error) }
  }

  /// How long a write waits for another process's lock on the file, in seconds.
  static let busyTimeout: TimeInterval = 2

  /// A database error as the client sees it: 503 `busy` (with `Retry-After`) when the file stayed locked,
  /// 500 `database` otherwise; the details are logged, not sent.
  static func failure(_ error: any Error) -> BoardError {
    log("live-board: database error: \(error)")
    if let error = error as? DatabaseError,
      error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
    {
      return .busy
    }
    return BoardError(status: 500, code: "database", detail: "the database could not be read or written")
  }

  /// Makes the source show what the database holds, after a group whose rows the database did not hold
  /// as the source does (the file was written behind this process's back); logs what happened. One reload
  /// per refused group: `generation` is ``reloads`` when the write was submitted, and a write of the same
  /// group that comes second finds it moved on. The reload is a direct write, so it takes its turn between
  /// groups, when every committed group is applied and the next has not begun: the rows it reads are the
  /// ones the source's version stands for. When the database's rows cannot be shown (ids Swift takes for
  /// equal), the source keeps its state.
  func resynchronize(after refusal: String, unless generation: Int) async {
    guard generation == reloads else { return }
    reloads += 1
    Self.log("live-board: the database refused a write (\(refusal)); reloading the source from the database")
    let database = database
    do {
      try await source.update { (sections: inout [Column]) throws in
        sections = try database.read { db in try Self.readColumns(db) }
      }
      // A group committed since stored its own version: the newest stays.
      let version = await source.version.number
      try write { db in
        try db.execute(sql: "UPDATE board_meta SET version = MAX(version, ?)", arguments: [version])
      }
    } catch {
      Self.log(
        "live-board: the database's rows cannot be shown as they are (\(error)); the source keeps its state")
    }
  }

  static func log(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }
}
