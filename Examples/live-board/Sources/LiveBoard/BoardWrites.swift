// One write of the board, whichever store makes it: checked where it can be without the board, then planned
// against the board's state in its turn, as edits of the source and the rows they change.

import Foundation
import SimpleSource

/// How a store commits its writes.
public enum CommitMode: String, Sendable, CaseIterable {
  /// The writes that arrive while one group commits form the next group: one database transaction, one
  /// version and one batch for all of them, each answered on its own (a refused one refuses nothing else).
  case group
  /// One database transaction, one version and one batch per write: the control group commit is
  /// measured against.
  case perEdit = "per-edit"
}

/// A write the HTTP API or a client's edit asks of a ``BoardStore``: its operation, checked as far as it
/// can be without the board (ids, titles, columns), the user who asks, and the ticket its answer is
/// recorded under.
public struct BoardWrite: Sendable {
  /// What the write does.
  public enum Operation: Sendable, Equatable {
    /// Add `card` at the end of `column`, or before the card `before`.
    case create(Card, column: String, before: String?)
    /// Change card `id`'s title (`nil`: keep it), whether it is private to the user (`nil`: keep it), or
    /// both.
    case edit(String, title: String?, isPrivate: Bool?)
    /// Move card `id` to the end of `column`, or before the card `before`.
    case move(String, column: String, before: String?)
    /// Delete card `id`.
    case delete(String)
  }

  /// What the write does.
  public let operation: Operation
  /// Who asks: `nil` for a guest, who sees shared cards only.
  public let user: String?
  /// The client's edit the write answers, recorded with it; `nil` for the HTTP API.
  public let ticket: EditTicket?

  init(_ operation: Operation, user: String?, ticket: EditTicket?) {
    self.operation = operation
    self.user = user
    self.ticket = ticket
  }

  /// Adds a card (`id` `nil`: a new one) with `title` at the end of `column` or before `before`; a private
  /// card is seen by `user` alone, who must then be named.
  /// - Throws: ``BoardError`` `invalid` or `unknownColumn` for what is wrong without looking at the board.
  public static func create(
    id: String?, title: String, column: String, before: String?, user: String?, isPrivate: Bool,
    answering ticket: EditTicket? = nil
  ) throws(BoardError) -> Self {
    guard !isPrivate || user != nil else { throw .invalid("a private card needs a user (?user=)") }
    let card = Card(
      id: try Board.checkedID(id ?? UUID().uuidString.prefix(12).lowercased()),
      title: try Board.checked(title), owner: isPrivate ? user : nil)
    try Board.checkColumn(column)
    return Self(.create(card, column: column, before: before), user: user, ticket: ticket)
  }

  /// Changes card `id`'s title, whether it is private to `user`, or both (`nil` keeps that part).
  /// - Throws: ``BoardError`` `invalid` when it changes nothing or its title is not one the board takes.
  public static func edit(
    _ id: String, title: String?, isPrivate: Bool?, user: String?, answering ticket: EditTicket? = nil
  ) throws(BoardError) -> Self {
    guard title != nil || isPrivate != nil else { throw .invalid("an edit names a title, private, or both") }
    guard isPrivate != true || user != nil else { throw .invalid("a private card needs a user (?user=)") }
    let checked = try title.map { (title: String) throws(BoardError) in try Board.checked(title) }
    return Self(.edit(id, title: checked, isPrivate: isPrivate), user: user, ticket: ticket)
  }

  /// Moves card `id` to the end of `column`, or before the card `before`.
  /// - Throws: ``BoardError`` `unknownColumn`, or `invalid` for a card moved before itself.
  public static func move(
    _ id: String, to column: String, before: String?, user: String?, answering ticket: EditTicket? = nil
  ) throws(BoardError) -> Self {
    try Board.checkColumn(column)
    if before == id { throw .invalid("a card cannot move before itself") }
    return Self(.move(id, column: column, before: before), user: user, ticket: ticket)
  }

  /// Deletes card `id`.
  public static func delete(_ id: String, user: String?, answering ticket: EditTicket? = nil) -> Self {
    Self(.delete(id), user: user, ticket: ticket)
  }

  /// Plans the write against `transaction`'s state and makes its edits there: the board the write sees is
  /// the one the writes before it in its turn (or its group) left.
  ///
  /// A card `user` may not see is unknown to them, as one that does not exist: both answer 404.
  /// - Returns: The rows to change in the database, and the card the write answers with (a created or
  ///   edited one).
  /// - Throws: ``BoardError`` for a write the board refuses; `transaction` is then as it was.
  /// - Complexity: O(log *n*) for *n* cards.
  public func make(in transaction: inout Transaction<Column>) throws(BoardError) -> PlannedWrite {
    let board = transaction.snapshot
    switch operation {
    case .create(let card, let column, let before):
      if board.contains(item: card.id) {
        throw BoardError(status: 409, code: "duplicateID", detail: "card \(card.id) exists")
      }
      let index = try Self.insertionIndex(in: column, before: before, moving: nil, user: user, on: board)
      try Self.edit(&transaction) { (transaction) throws(Failure) in
        if let before {
          _ = try transaction.insertItems([card], before: before)
        } else {
          _ = try transaction.appendItems([card], toSection: column)
        }
      }
      return PlannedWrite(rows: .insert(card, column: column, at: index), card: card, ticket: ticket)
    case .edit(let id, let title, let isPrivate):
      guard var card = board.item(withID: id), card.isVisible(to: user) else { throw .unknownCard(id) }
      if let title { card.title = title }
      if let isPrivate { card.owner = isPrivate ? user : nil }
      let edited = card
      try Self.edit(&transaction) { (transaction) throws(Failure) in _ = try transaction.replaceItem(edited) }
      return PlannedWrite(rows: .update(edited), card: edited, ticket: ticket)
    case .move(let id, let column, let before):
      guard let card = board.item(withID: id), card.isVisible(to: user), let from = board.position(ofItem: id)
      else { throw .unknownCard(id) }
      let index = try Self.insertionIndex(in: column, before: before, moving: id, user: user, on: board)
      try Self.edit(&transaction) { (transaction) throws(Failure) in
        if let before {
          _ = try transaction.moveItem(id, before: before)
        } else {
          _ = try transaction.moveItem(id, toSection: column)
        }
      }
      let origin = (column: board.section(at: from.section).id, index: from.item)
      return PlannedWrite(rows: .move(id, from: origin, to: (column, index)), card: nil, ticket: ticket)
    case .delete(let id):
      guard let card = board.item(withID: id), card.isVisible(to: user), let at = board.position(ofItem: id)
      else { throw .unknownCard(id) }
      try Self.edit(&transaction) { (transaction) throws(Failure) in _ = try transaction.deleteItems([id]) }
      return PlannedWrite(
        rows: .delete(id, column: board.section(at: at.section).id, at: at.item), card: nil, ticket: ticket)
    }
  }

  typealias Failure = DataSourceError<String, String>

  /// Makes `edits`, checked against the same state just before: the source refusing them is a fault of this
  /// code, answered 500 (an edit that throws changes nothing).
  static func edit(
    _ transaction: inout Transaction<Column>, _ edits: (inout Transaction<Column>) throws(Failure) -> Void
  ) throws(BoardError) {
    do {
      try edits(&transaction)
    } catch {
      throw BoardError(status: 500, code: "database", detail: "the board could not be written: \(error.code)")
    }
  }

  /// Where a card lands in `column` of `board`: before `before` (a card of that column `user` may see), or
  /// at the end; a card that moves within its column is counted out first.
  static func insertionIndex(
    in column: String, before: String?, moving: String?, user: String?, on board: Snapshot<Column>
  ) throws(BoardError) -> Int {
    guard let section = board.index(ofSection: column) else { throw .unknownColumn(column) }
    let moved = moving.flatMap { board.position(ofItem: $0) }
    guard let before else {
      return board.itemCount(inSection: section) - (moved?.section == section ? 1 : 0)
    }
    guard let anchor = board.item(withID: before), anchor.isVisible(to: user),
      let at = board.position(ofItem: before)
    else { throw .unknownCard(before) }
    guard at.section == section else { throw .invalid("card \(before) is not in column \(column)") }
    if let moved, moved.section == section, moved.item < at.item { return at.item - 1 }
    return at.item
  }
}

/// A write planned in its turn: the rows it changes, the card it answers with, and its ticket.
public struct PlannedWrite: Sendable {
  /// The rows the write changes, as positions in their columns.
  public let rows: RowChange
  /// The created or edited card; `nil` for a move or a delete.
  public let card: Card?
  /// The client's edit whose answer is recorded with the write.
  public let ticket: EditTicket?
}

/// The rows a write changes, as positions in their columns.
public enum RowChange: Sendable {
  /// A card inserted at `at` in `column`: the cards from there on move down one.
  case insert(Card, column: String, at: Int)
  /// A card's title and owner changed.
  case update(Card)
  /// A card moved: the cards after it in its old column move up, those from its new place on down.
  case move(String, from: (column: String, index: Int), to: (column: String, index: Int))
  /// A card deleted from `at` in `column`: the cards after it move up one.
  case delete(String, column: String, at: Int)
}

/// Edits of one group whose answers are recorded already (made before a restart, or on another instance),
/// or that are too old to tell (``EditTicket/answerMayBeDropped(newest:retention:)``): the group is rolled
/// back, those writes are refused, and the rest is committed without them.
public struct AnswerConflict: Error {
  /// The ``EditTicket/key`` of each conflicting edit.
  public let keys: Set<[String]>

  /// The conflict of the edits `keys` names.
  public init(keys: Set<[String]>) { self.keys = keys }
}

extension EditTicket {
  /// The answer's key in the table of answers: (scope, edit id).
  public var key: [String] { [scope, edit.id] }

  /// Whether this edit's answer, had it been made, may be gone from a table that keeps the answers of
  /// the newest `retention` versions up to `newest`: its client held a version older than those. A store
  /// does not make such an edit (it refuses it as an ``AnswerConflict``, rolled back);
  /// ``BoardStore/recall(_:)`` then answers it, or refuses it as expired. An edit without a base (an HTTP
  /// write's) never expires.
  /// - Complexity: O(1).
  public func answerMayBeDropped(newest: Int, retention: Int) -> Bool {
    guard let base = edit.base else { return false }
    return base < max(0, newest - retention + 1)
  }
}

/// Rows the database does not hold as the source does: the file was written behind this process's back.
struct Disagreement: Error {
  /// What was not where the source has it.
  let detail: String
}
