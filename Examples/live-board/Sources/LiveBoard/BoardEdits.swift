// Clients' edits over the WebSocket (the wire format's `edit` message), made as the HTTP API makes its
// writes: checked against the database and the user's scope, stored, then published to every client.

import SimpleSource

/// The writer of the board's ``WireService``: a client's edit holds one operation, made through the same
/// ``BoardStore`` calls as the HTTP API (so the same checks, statuses and storage), and answered with the
/// version it made. A `replace` changes a card's title and keeps its owner; a `patch` names the title alone
/// and changes it (what the page sends); the named edit `toTop {"card": id}` moves a card above the first
/// other card of its column, on the board's state when it is made. A refusal is `invalidEdit` naming
/// the board's code (`unknownCard`, `duplicateID`, `invalid`, …), `editNotMade` when the database failed or
/// was busy (nothing was made), `unanswered` when the database did not confirm the write in time (it may
/// have been made: the batches that follow tell, and a resend gets its answer), `editExpired`, or
/// `editIDReused` (another edit was answered under its id).
///
/// **Exactly once, with one owner in a process.** Within a process the service's table of answers makes
/// each edit once: a resend while it is made waits for its answer, one made recently gets that answer, and
/// the writer is not called again. The database's table of answers is for what that table cannot know (a
/// resend after a restart, or to another instance): each edit's answer is recorded in the write's own
/// transaction, under (user, edit id), with the edit's fingerprint, and a second record of it refuses the
/// write that made it again (its transaction makes nothing). So the writer makes the edit at once, and reads
/// the database only when the store refused it: the recorded answer is then the client's, on SQLite and on
/// PostgreSQL alike. Answers are kept for the newest ``BoardStore/answerRetention`` versions; an edit whose
/// client held an older version is never made (its answer might be gone): it gets its answer when it is
/// still recorded, and `editExpired` otherwise.
func boardWriter(_ board: some BoardStore) -> WireWriter<Column, String?> {
  WireWriter { (edit, user, _) throws(WireError) in
    guard edit.operations.count == 1, let operation = edit.operations.first else {
      throw WireError(.invalidEdit, "the board makes one operation per edit")
    }
    for card in operation.writtenItems where card.owner != nil && card.owner != user {
      throw WireError(.invalidEdit, "a private card belongs to the user who writes it")
    }
    let ticket = EditTicket(user: user, edit: edit)
    do throws(BoardError) {
      do throws(BoardError) {
        return try await make(operation, on: board, for: user, answering: ticket)
      } catch {
        // Refused: perhaps made before (its answer recorded; a create made again finds its card), or too
        // old to tell. The table answers it, or refuses it as expired or as another edit's id.
        switch await recall(ticket, on: board) {
        case .success(let recorded?): return recorded
        case .failure(let refusal) where refusal.code == "editExpired" || refusal.code == "editIDReused":
          throw refusal
        case .success(nil), .failure: throw error
        }
      }
    } catch {
      let code: WireError.Code =
        switch error.code {
        case "unknownOutcome": .unanswered
        case "editExpired": .editExpired
        case "editIDReused": .editIDReused
        default: error.status >= 500 ? .editNotMade : .invalidEdit
        }
      throw WireError(code, "\(error.code): \(error.detail)")
    }
  }
}

/// Makes one operation of a client's edit through the store, recording its answer.
private func make(
  _ operation: WireOperation<Column>, on board: some BoardStore, for user: String?,
  answering ticket: EditTicket
) async throws(BoardError) -> Int {
  switch operation {
  case .insert(let cards, let place):
    guard cards.count == 1, let card = cards.first else {
      throw BoardError.invalid("an edit inserts one card")
    }
    let (column, before) = try await target(place, on: board, for: user)
    let (_, version) = try await board.create(
      id: card.id, title: card.title, column: column, before: before, user: user,
      isPrivate: card.owner != nil, answering: ticket)
    return version
  case .replace(let card):
    // A replace changes the title: the owner (whether the card is private) is not the client's to
    // change by omission, so it is kept as it is; `PATCH {"private": …}` changes it explicitly.
    return try await board.edit(card.id, title: card.title, isPrivate: nil, user: user, answering: ticket).1
  case .patch(let id, let patch):
    // A patch names the fields it changes; a card's own is its title (privacy changes through
    // `PATCH {"private": …}`), so only the title is taken, and nothing else is written back.
    guard case .object(let fields) = patch.value, Set(fields.keys) == ["title"] else {
      throw BoardError.invalid("a patch of a card names its title, and nothing else")
    }
    guard let shown = await board.source.snapshot.item(withID: id), shown.isVisible(to: user) else {
      throw BoardError.unknownCard(id)
    }
    let patched: Card
    do { patched = try patch.applied(to: shown, in: String.self) } catch {
      throw BoardError.invalid("the patched card is not valid: \(error.detail ?? "\(error.code)")")
    }
    return try await board.edit(id, title: patched.title, isPrivate: nil, user: user, answering: ticket).1
  case .named(let call):
    // The board's one named edit, `toTop {"card": id}`: the card goes before the first other card of its
    // column the user sees, on the board's state when the edit is made (the page does not know it).
    guard call.name == "toTop" else { throw BoardError.invalid("unknownEdit: no named edit \(call.name)") }
    guard case .object(let arguments)? = call.json, arguments.count == 1,
      case .string(let id)? = arguments["card"]
    else {
      throw BoardError.invalid("invalidArguments: toTop takes {\"card\": id}")
    }
    let shown = await board.source.snapshot
    guard let position = shown.position(ofItem: id), shown[position].isVisible(to: user) else {
      throw BoardError.unknownCard(id)
    }
    let column = shown.section(at: position.section)
    let first = column.items.first { $0.id != id && $0.isVisible(to: user) }  // a column is short
    return try await board.move(id, to: column.id, before: first?.id, user: user, answering: ticket)
  case .delete(let ids):
    guard ids.count == 1, let id = ids.first else { throw BoardError.invalid("an edit deletes one card") }
    return try await board.delete(id, user: user, answering: ticket)
  case .move(let id, let place):
    let (column, before) = try await target(place, on: board, for: user)
    return try await board.move(id, to: column, before: before, user: user, answering: ticket)
  }
}

/// The column and the card to go before (`nil`: the end) that `place` means for `user`: after a card is
/// before the next card of its column that `user` sees.
private func target(_ place: WireOperation<Column>.Place, on board: some BoardStore, for user: String?)
  async throws(BoardError) -> (column: String, before: String?)
{
  let shown = await board.source.snapshot
  func column(of id: String) throws(BoardError) -> (column: Int, item: Int) {
    guard let position = shown.position(ofItem: id), shown[position].isVisible(to: user) else {
      throw .unknownCard(id)
    }
    return (position.section, position.item)
  }
  switch place {
  case .end(let column):
    return (column, nil)
  case .before(let anchor):
    return (shown.section(at: try column(of: anchor).column).id, anchor)
  case .after(let anchor):
    let (section, item) = try column(of: anchor)
    let cards = shown.section(at: section).items  // O(column size): a column is short
    let next = cards[(item + 1)...].first { $0.isVisible(to: user) }
    return (shown.section(at: section).id, next?.id)
  }
}
