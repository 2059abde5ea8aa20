// What the service needs from a board, whichever database keeps it: one SQLite file, or PostgreSQL shared
// by several instances.

import SimpleSource

/// A board the HTTP API and the WebSocket serve: its live source and its writes.
///
/// ``Board`` keeps one SQLite file for one process; ``ClusterBoard`` keeps PostgreSQL, shared by every
/// instance of the service, with one log of versions.
public protocol BoardStore: Sendable {
  /// The live board, one section per column, at the versions clients see.
  var source: BasicDataSource<Column> { get }
  /// The name of the stream of versions clients resume in.
  var stream: String { get }
  /// How many versions clients can resume from, in the board and in each view of it.
  var history: HistoryLimit { get }

  /// The board as the database holds it, with its version; for a user given as `visibleTo` (`nil`: a
  /// guest), the cards that user may see.
  func read(visibleTo user: String??) async throws(BoardError) -> (version: Int, columns: [Column])
  /// Makes `write` in its turn: planned against the board the writes before it left, stored in the
  /// database (with its ticket's answer), then made in ``source``. How writes are grouped into database
  /// transactions is the store's ``commits``. A write whose ticket's answer is recorded already, or whose
  /// edit is too old to tell (``EditTicket/answerMayBeDropped(newest:retention:)``), is refused 503 `busy`
  /// in its own transaction, and nothing of it is made: ``recall(_:)`` has its answer or its refusal.
  /// - Returns: The version that holds the write, and the card it answers with (created or edited).
  /// - Throws: ``BoardError``: the board's refusal (nothing was made), or the database's failure.
  func write(_ write: BoardWrite) async throws(BoardError) -> (version: Int, card: Card?)
  /// Whether writes that arrive together share a database transaction.
  var commits: CommitMode { get }
  /// The version recorded as the answer to `ticket`'s edit, or `nil` when none is and the edit is to be
  /// made. Answers are kept for the edits made at the newest ``answerRetention`` versions.
  /// - Throws: ``BoardError`` `editExpired` when none is recorded and the edit was made before the oldest
  ///   version whose answers are kept, `editIDReused` when the answer recorded under its id is another
  ///   edit's (``WireEdit/recall(recorded:fingerprint:answersKeptFrom:)``).
  func recall(_ ticket: EditTicket) async throws(BoardError) -> Int?
  /// How many versions' edits keep their answers.
  var answerRetention: Int { get }
  /// Brings the board's source to `version` when the storage holds it and the source does not yet (another
  /// instance made it): a client resuming from a version it saw elsewhere then resumes here, not resets.
  /// Returns once the source holds it, or after one bounded attempt.
  func reach(_ version: Int) async
}

extension BoardStore {
  /// Adds a card at the end of `column`, or before the card `before`, for `user` (`nil`: a guest, who sees
  /// shared cards only); a private card is seen by its owner alone. With a `ticket`, the edit's answer is
  /// recorded with the write.
  /// - Returns: The card and the version that holds it.
  public func create(
    id: String?, title: String, column: String, before: String?, user: String? = nil, isPrivate: Bool = false,
    answering ticket: EditTicket? = nil
  ) async throws(BoardError) -> (Card, Int) {
    let made = try await write(
      .create(
        id: id, title: title, column: column, before: before, user: user, isPrivate: isPrivate,
        answering: ticket))
    guard let card = made.card else {
      throw BoardError(status: 500, code: "database", detail: "no card made")
    }
    return (card, made.version)
  }

  /// Changes a card's title, whether it is private (to `user`, who then owns it), or both; `nil` keeps
  /// that part. A card `user` may not see is unknown to them.
  /// - Returns: The card as edited and the version that holds it.
  public func edit(
    _ id: String, title: String?, isPrivate: Bool? = nil, user: String? = nil,
    answering ticket: EditTicket? = nil
  ) async throws(BoardError) -> (Card, Int) {
    let made = try await write(.edit(id, title: title, isPrivate: isPrivate, user: user, answering: ticket))
    guard let card = made.card else { throw .unknownCard(id) }
    return (card, made.version)
  }

  /// Changes a card's title; see ``edit(_:title:isPrivate:user:answering:)``.
  public func rename(_ id: String, title: String, user: String? = nil) async throws(BoardError) -> (Card, Int)
  {
    try await edit(id, title: title, user: user)
  }

  /// Moves a card to the end of `column`, or before the card `before`; both cards must be ones `user` may
  /// see.
  /// - Returns: The version that holds the move.
  public func move(
    _ id: String, to column: String, before: String?, user: String? = nil, answering ticket: EditTicket? = nil
  ) async throws(BoardError) -> Int {
    try await write(.move(id, to: column, before: before, user: user, answering: ticket)).version
  }

  /// Deletes a card `user` may see.
  /// - Returns: The version that holds the delete.
  public func delete(_ id: String, user: String? = nil, answering ticket: EditTicket? = nil)
    async throws(BoardError) -> Int
  {
    try await write(.delete(id, user: user, answering: ticket)).version
  }

  /// ``recall(_:)``'s decision, from the version and fingerprint recorded for `ticket` and the newest
  /// version stored.
  public func decide(
    _ ticket: EditTicket, recorded: Int?, fingerprint: String?, newest: Int
  ) throws(BoardError) -> Int? {
    do {
      return try ticket.edit.recall(
        recorded: recorded, fingerprint: fingerprint, answersKeptFrom: max(0, newest - answerRetention + 1))
    } catch {
      throw BoardError(status: 409, code: error.code.rawValue, detail: error.detail)
    }
  }
}

/// A client's edit whose answer the store records with the write: who sent it and the edit (its id, and
/// the version its client held). The pair (user, id) is unique in the table of answers, so a second
/// transaction making the same edit (a resend racing on another instance) fails and makes nothing.
public struct EditTicket: Sendable {
  /// The user who sent it; `nil`: a guest.
  public let user: String?
  /// The edit.
  public let edit: WireEdit<Column>
  /// The edit's ``WireEdit/fingerprint``, recorded with its answer: a later edit under the same id is
  /// answered only when it asks for the same.
  public let fingerprint: String

  /// A ticket for `edit` sent by `user`.
  public init(user: String?, edit: WireEdit<Column>) {
    self.user = user
    self.edit = edit
    fingerprint = edit.fingerprint
  }

  /// The scope as stored: the user's name (checked, so never empty) or the empty string for guests.
  public var scope: String { user ?? "" }
}

extension Board: BoardStore {
  /// One process makes every version, but a version read from the database (``read(visibleTo:)``) is
  /// in the source only once its group is applied, right after its commit: waits for it when the database
  /// holds it.
  public func reach(_ version: Int) async {
    guard await source.version.number < version,
      let stored = try? read({ db in try Self.storedVersion(db) }),
      version <= stored
    else { return }
    _ = try? await source.settled(through: source.counter.version(version))
  }
}
