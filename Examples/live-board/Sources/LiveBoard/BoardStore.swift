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
  /// Adds a card; see ``Board/create(id:title:column:before:user:isPrivate:)``. With a `ticket`, the
  /// edit's answer is recorded in the write's transaction; an answer recorded already fails it.
  func create(
    id: String?, title: String, column: String, before: String?, user: String?, isPrivate: Bool,
    answering ticket: EditTicket?
  ) async throws(BoardError) -> (Card, Int)
  /// Edits a card; see ``Board/edit(_:title:isPrivate:user:)``.
  func edit(_ id: String, title: String?, isPrivate: Bool?, user: String?, answering ticket: EditTicket?)
    async throws(BoardError) -> (Card, Int)
  /// Moves a card; see ``Board/move(_:to:before:user:)``.
  func move(_ id: String, to column: String, before: String?, user: String?, answering ticket: EditTicket?)
    async throws(BoardError) -> Int
  /// Deletes a card; see ``Board/delete(_:user:)``.
  func delete(_ id: String, user: String?, answering ticket: EditTicket?) async throws(BoardError) -> Int
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
  /// Adds a card for the HTTP API (no answer recorded).
  func create(
    id: String?, title: String, column: String, before: String?, user: String?, isPrivate: Bool
  ) async throws(BoardError) -> (Card, Int) {
    try await create(
      id: id, title: title, column: column, before: before, user: user, isPrivate: isPrivate, answering: nil)
  }

  /// Edits a card for the HTTP API.
  func edit(_ id: String, title: String?, isPrivate: Bool?, user: String?) async throws(BoardError) -> (
    Card, Int
  ) {
    try await edit(id, title: title, isPrivate: isPrivate, user: user, answering: nil)
  }

  /// Moves a card for the HTTP API.
  func move(_ id: String, to column: String, before: String?, user: String?) async throws(BoardError) -> Int {
    try await move(id, to: column, before: before, user: user, answering: nil)
  }

  /// Deletes a card for the HTTP API.
  func delete(_ id: String, user: String?) async throws(BoardError) -> Int {
    try await delete(id, user: user, answering: nil)
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
  /// One process makes every version: nothing to read.
  public func reach(_ version: Int) async {}
}
