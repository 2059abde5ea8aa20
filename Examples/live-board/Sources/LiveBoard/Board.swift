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
/// Each write is validated against the database, prepared in the data source (its batch derived, nothing
/// made), committed in one database transaction, and then applied in the source, all on this actor (see
/// ``commit(_:storing:)``): the source is always the database's state at the version it reports, and a
/// refused write changes neither.
public actor Board {
  /// The fixed columns: id and title.
  public static let columns: [(id: String, title: String)] = [
    ("todo", "To do"), ("doing", "Doing"), ("done", "Done"),
  ]
  /// The longest title accepted, in characters.
  public static let maxTitle = 200

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
  var isWriting = false
  var writers: [CheckedContinuation<Void, Never>] = []

  /// Opens (or creates) the board stored at `path`; `nil` keeps it in memory.
  /// - Parameters:
  ///   - history: How many versions clients can resume from.
  ///   - answerRetention: How many versions' edits keep their answers: a WebSocket edit sent again after
  ///     a restart gets its first answer when it was made at one of the newest `answerRetention` versions.
  public init(path: String?, history: HistoryLimit = .default, answerRetention: Int = 10_000) throws {
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

  /// The board as the database holds it, with the source's version: every card, or, for a user (`nil`: a
  /// guest) given as `visibleTo`, the cards that user may see.
  public func read(visibleTo user: String?? = .none) async throws(BoardError) -> (
    version: Int, columns: [Column]
  ) {
    try await exclusive { () async throws(BoardError) in
      var columns = try self.read { db in try Self.readColumns(db) }
      if case .some(let user) = user {
        for index in columns.indices { columns[index].items.removeAll { !$0.isVisible(to: user) } }
      }
      return (version: await self.source.version.number, columns: columns)
    }
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

  /// Adds a card at the end of `column`, or before the card `before`, for `user` (`nil`: a guest, who
  /// sees shared cards only); a private card is seen by its owner alone.
  /// - Returns: The card and the version the write made.
  public func create(
    id: String?, title: String, column: String, before: String?, user: String? = nil, isPrivate: Bool = false,
    answering ticket: EditTicket? = nil
  ) async throws(BoardError) -> (Card, Int) {
    try await exclusive { () async throws(BoardError) in
      try await self.createNow(
        id: id, title: title, column: column, before: before, user: user, isPrivate: isPrivate,
        answering: ticket)
    }
  }

  func createNow(
    id: String?, title: String, column: String, before: String?, user: String?, isPrivate: Bool,
    answering ticket: EditTicket?
  ) async throws(BoardError) -> (Card, Int) {
    guard !isPrivate || user != nil else { throw .invalid("a private card needs a user (?user=)") }
    let card = Card(
      id: try Self.checkedID(id ?? UUID().uuidString.prefix(12).lowercased()), title: try Self.checked(title),
      owner: isPrivate ? user : nil)
    try Self.checkColumn(column)
    if try position(of: card.id) != nil {
      throw BoardError(status: 409, code: "duplicateID", detail: "card \(card.id) exists")
    }
    let index = try insertionIndex(in: column, before: before, moving: nil, user: user)
    let version = try await commit(answering: ticket) {
      (transaction: inout Transaction<Column>) throws(Failure) in
      if let before {
        _ = try transaction.insertItems([card], before: before)
      } else {
        _ = try transaction.appendItems([card], toSection: column)
      }
    } storing: { db in
      try db.execute(
        sql: "UPDATE card SET position = position + 1 WHERE columnID = ? AND position >= ?",
        arguments: [column, index])
      try db.execute(
        sql: "INSERT INTO card (id, title, owner, columnID, position) VALUES (?, ?, ?, ?, ?)",
        arguments: [card.id, card.title, card.owner, column, index])
    }
    return (card, version)
  }

  /// Changes a card's title, whether it is private (to `user`, who then owns it), or both; `nil` keeps
  /// that part. A card `user` may not see is unknown to them.
  public func edit(
    _ id: String, title: String?, isPrivate: Bool? = nil, user: String? = nil,
    answering ticket: EditTicket? = nil
  ) async throws(BoardError) -> (Card, Int) {
    try await exclusive { () async throws(BoardError) in
      try await self.editNow(id, title: title, isPrivate: isPrivate, user: user, answering: ticket)
    }
  }

  /// Changes a card's title; see ``edit(_:title:isPrivate:user:)``.
  public func rename(_ id: String, title: String, user: String? = nil) async throws(BoardError) -> (Card, Int)
  {
    try await edit(id, title: title, user: user)
  }

  func editNow(_ id: String, title: String?, isPrivate: Bool?, user: String?, answering ticket: EditTicket?)
    async throws(BoardError) -> (Card, Int)
  {
    guard title != nil || isPrivate != nil else { throw .invalid("an edit names a title, private, or both") }
    guard isPrivate != true || user != nil else { throw .invalid("a private card needs a user (?user=)") }
    guard let old = try card(id, visibleTo: user) else { throw .unknownCard(id) }
    var card = old
    if let title { card.title = try Self.checked(title) }
    if let isPrivate { card.owner = isPrivate ? user : nil }
    let edited = card
    let version = try await commit(answering: ticket) {
      (transaction: inout Transaction<Column>) throws(Failure) in
      _ = try transaction.replaceItem(edited)
    } storing: { db in
      try db.execute(
        sql: "UPDATE card SET title = ?, owner = ? WHERE id = ?", arguments: [edited.title, edited.owner, id])
    }
    return (edited, version)
  }

  /// Moves a card to the end of `column`, or before the card `before`; both cards must be ones `user`
  /// may see.
  public func move(
    _ id: String, to column: String, before: String?, user: String? = nil, answering ticket: EditTicket? = nil
  ) async throws(BoardError) -> Int {
    try await exclusive { () async throws(BoardError) in
      try await self.moveNow(id, to: column, before: before, user: user, answering: ticket)
    }
  }

  func moveNow(_ id: String, to column: String, before: String?, user: String?, answering ticket: EditTicket?)
    async throws(BoardError) -> Int
  {
    guard try card(id, visibleTo: user) != nil, let (from, oldIndex) = try position(of: id) else {
      throw .unknownCard(id)
    }
    try Self.checkColumn(column)
    if before == id { throw .invalid("a card cannot move before itself") }
    let index = try insertionIndex(in: column, before: before, moving: id, user: user)
    return try await commit(answering: ticket) { (transaction: inout Transaction<Column>) throws(Failure) in
      if let before {
        _ = try transaction.moveItem(id, before: before)
      } else {
        _ = try transaction.moveItem(id, toSection: column)
      }
    } storing: { db in
      try db.execute(
        sql: "UPDATE card SET position = position - 1 WHERE columnID = ? AND position > ?",
        arguments: [from, oldIndex])
      try db.execute(
        sql: "UPDATE card SET position = position + 1 WHERE columnID = ? AND position >= ? AND id != ?",
        arguments: [column, index, id])
      try db.execute(
        sql: "UPDATE card SET columnID = ?, position = ? WHERE id = ?", arguments: [column, index, id])
    }
  }

  /// Deletes a card `user` may see.
  public func delete(_ id: String, user: String? = nil, answering ticket: EditTicket? = nil)
    async throws(BoardError) -> Int
  {
    try await exclusive { () async throws(BoardError) in
      try await self.deleteNow(id, user: user, answering: ticket)
    }
  }

  /// The version recorded as the answer to `ticket`'s edit; see ``BoardStore/recall(_:)``.
  public func recall(_ ticket: EditTicket) async throws(BoardError) -> Int? {
    let recorded = try read { db in
      try Row.fetchOne(
        db, sql: "SELECT version, fingerprint FROM edit_answer WHERE scope = ? AND id = ?",
        arguments: [ticket.scope, ticket.edit.id])
    }
    return try decide(
      ticket, recorded: recorded?["version"], fingerprint: recorded?["fingerprint"],
      newest: await source.version.number)
  }

  func deleteNow(_ id: String, user: String?, answering ticket: EditTicket?) async throws(BoardError) -> Int {
    guard try card(id, visibleTo: user) != nil, let (column, index) = try position(of: id) else {
      throw .unknownCard(id)
    }
    return try await commit(answering: ticket) { (transaction: inout Transaction<Column>) throws(Failure) in
      _ = try transaction.deleteItems([id])
    } storing: { db in
      try db.execute(sql: "DELETE FROM card WHERE id = ?", arguments: [id])
      try db.execute(
        sql: "UPDATE card SET position = position - 1 WHERE columnID = ? AND position > ?",
        arguments: [column, index])
    }
  }

  // MARK: - Helpers

  /// Runs writes one at a time, though each suspends while the source applies it: a write validated
  /// against the database must reach the source before the next one is validated.
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
  /// live clients hold the same bytes; control characters (NUL, line breaks) are refused.
  public static func checked(_ title: String) throws(BoardError) -> String {
    let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
    guard !trimmed.isEmpty else { throw .invalid("a title is not empty") }
    guard trimmed.count <= maxTitle else { throw .invalid("a title has at most \(maxTitle) characters") }
    guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
      throw .invalid("a title has no control characters (NUL, tab, line breaks)")
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

  /// Card `id` as the database holds it, if `user` may see it.
  func card(_ id: String, visibleTo user: String?) throws(BoardError) -> Card? {
    let card = try read { db in
      try Row.fetchOne(db, sql: "SELECT title, owner FROM card WHERE id = ?", arguments: [id])
        .map { Card(id: id, title: $0["title"], owner: $0["owner"]) }
    }
    return card.flatMap { $0.isVisible(to: user) ? $0 : nil }
  }

  /// The column and position of card `id` in the database.
  func position(of id: String) throws(BoardError) -> (String, Int)? {
    try read { db in
      try Row.fetchOne(db, sql: "SELECT columnID, position FROM card WHERE id = ?", arguments: [id])
        .map { ($0["columnID"], $0["position"]) }
    }
  }

  /// Where a card lands in `column`: before `before` (a card of that column that `user` may see), or at
  /// the end. A card that moves within its column is counted out first.
  func insertionIndex(in column: String, before: String?, moving: String?, user: String?) throws(BoardError)
    -> Int
  {
    guard let before else {
      let count = try read { db in
        try Int.fetchOne(
          db, sql: "SELECT COUNT(*) FROM card WHERE columnID = ? AND id != ?",
          arguments: [column, moving ?? ""])
      }
      return count ?? 0
    }
    guard try card(before, visibleTo: user) != nil, let (anchorColumn, anchorIndex) = try position(of: before)
    else { throw .unknownCard(before) }
    guard anchorColumn == column else { throw .invalid("card \(before) is not in column \(column)") }
    if let moving, let (movingColumn, movingIndex) = try position(of: moving), movingColumn == column,
      movingIndex < anchorIndex
    {
      return anchorIndex - 1
    }
    return anchorIndex
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

  typealias Failure = DataSourceError<String, String>

  /// Makes a write validated against the database in two phases: the source prepares `edits` (validated,
  /// its batch derived, nothing made), the database commits `rows`, then the source applies the prepared
  /// write, which cannot fail. A database that refuses (busy, an I/O error) leaves both as they were: the
  /// write is abandoned. No moment exists where the database has a write the source cannot make.
  ///
  /// The write was validated against the database, which the source mirrors, so the source refuses it only
  /// when the two disagree (the file was written behind this process's back). Then the refusal is logged,
  /// the source is brought back to the database's state (one batch: never a trap), and the write is
  /// prepared again; refused again, it answers 500 and nothing is written.
  ///
  /// The same transaction stores the new version, and with a `ticket`, the edit's answer (a second answer
  /// for one (user, id) fails the transaction: nothing is made) and drops answers older than
  /// ``answerRetention`` versions.
  /// - Returns: The version the write made.
  func commit(
    answering ticket: EditTicket?,
    _ edits: @Sendable (inout Transaction<Column>) throws(Failure) -> Void,
    storing rows: @escaping @Sendable (GRDB.Database) throws -> Void
  ) async throws(BoardError) -> Int {
    let prepared: PreparedWrite<Column, Void>
    do {
      prepared = try await source.prepare(edits)
    } catch {
      await resynchronize(after: "\(error)")
      do {
        prepared = try await source.prepare(edits)
      } catch {
        Self.log("live-board: the source still refuses the write (\(error)); nothing was written")
        throw BoardError(status: 500, code: "database", detail: "the board could not be written")
      }
    }
    let (version, retention) = (prepared.version, answerRetention)
    do {
      try write { db in
        try rows(db)
        try db.execute(sql: "UPDATE board_meta SET version = ?", arguments: [version])
        if let ticket {
          try db.execute(
            sql: "INSERT INTO edit_answer (scope, id, version, fingerprint) VALUES (?, ?, ?, ?)",
            arguments: [ticket.scope, ticket.edit.id, version, ticket.fingerprint])
          try db.execute(sql: "DELETE FROM edit_answer WHERE version <= ?", arguments: [version - retention])
        }
      }
    } catch {
      await prepared.abandon()
      throw error
    }
    return await prepared.apply().number
  }

  /// Makes the source show what the database holds, after a write the source refused; logs what happened.
  /// When the database's rows cannot be shown (ids Swift takes for equal), the source keeps its state.
  func resynchronize(after refusal: String) async {
    Self.log("live-board: the source refused a committed write (\(refusal)); reloading it from the database")
    do {
      let columns = try read { db in try Self.readColumns(db) }
      try await source.setSections(columns)
      let version = await source.version.number
      try write { db in try db.execute(sql: "UPDATE board_meta SET version = ?", arguments: [version]) }
    } catch {
      Self.log(
        "live-board: the database's rows cannot be shown as they are (\(error)); the source keeps its state")
    }
  }

  static func log(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }
}
