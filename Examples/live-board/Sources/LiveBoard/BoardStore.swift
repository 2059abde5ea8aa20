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
  /// Adds a card; see ``Board/create(id:title:column:before:user:isPrivate:)``.
  func create(
    id: String?, title: String, column: String, before: String?, user: String?, isPrivate: Bool
  ) async throws(BoardError) -> (Card, Int)
  /// Edits a card; see ``Board/edit(_:title:isPrivate:user:)``.
  func edit(_ id: String, title: String?, isPrivate: Bool?, user: String?) async throws(BoardError) -> (
    Card, Int
  )
  /// Moves a card; see ``Board/move(_:to:before:user:)``.
  func move(_ id: String, to column: String, before: String?, user: String?) async throws(BoardError) -> Int
  /// Deletes a card; see ``Board/delete(_:user:)``.
  func delete(_ id: String, user: String?) async throws(BoardError) -> Int
  /// Brings the board's source to `version` when the storage holds it and the source does not yet (another
  /// instance made it): a client resuming from a version it saw elsewhere then resumes here, not resets.
  /// Returns once the source holds it, or after one bounded attempt.
  func reach(_ version: Int) async
}

extension Board: BoardStore {
  /// One process makes every version: nothing to read.
  public func reach(_ version: Int) async {}
}
