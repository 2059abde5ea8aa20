// The board's group commit: writes that arrive while a group is stored form the next group, one SQLite
// transaction and one version, each answered on its own.

import Foundation
import class GRDB.DatabaseQueue
import NIOConcurrencyHelpers
import SimpleSource
import Testing

@testable import LiveBoard

/// Holds the first group a board stores until the test opens it, and counts the groups stored.
actor StoringGate {
  /// How many writes each group stored held, in order.
  private(set) var sizes: [Int] = []
  /// How many of the groups stored changed something (made a version).
  private(set) var changed = 0
  private var held: CheckedContinuation<Void, Never>?
  private var arrival: CheckedContinuation<Void, Never>?
  private var isOpen = false

  /// The board's hook: records the group; the first one waits for ``open()``.
  func storing(_ group: GroupCommit<Column, PlannedWrite>.Group) async {
    sizes.append(group.results.count)
    if group.batch != nil { changed += 1 }
    guard !isOpen, sizes.count == 1 else { return }
    arrival?.resume()
    arrival = nil
    await withCheckedContinuation { held = $0 }
  }

  /// Returns once the first group is being stored.
  func firstArrived() async {
    guard sizes.isEmpty else { return }
    await withCheckedContinuation { arrival = $0 }
  }

  /// Lets the first group be stored, and every group after it.
  func open() {
    isOpen = true
    held?.resume()
    held = nil
  }
}

/// A board in memory whose first stored group waits for `gate`.
func gatedBoard(_ gate: StoringGate, commits: CommitMode = .group) throws -> Board {
  try Board(
    path: nil, history: .default, answerRetention: 10_000, commits: commits,
    storing: { group in await gate.storing(group) })
}

/// Starts `writes` each in a task of its own while the board's first group waits at `gate`, then opens it;
/// returns each write's outcome, in order.
func writeWhileHeld(
  _ writes: [BoardWrite], on board: Board, gate: StoringGate
) async -> [Result<(version: Int, card: Card?), BoardError>] {
  let (started, start) = AsyncStream.makeStream(of: Void.self)
  let tasks = writes.map { write in
    Task { () -> Result<(version: Int, card: Card?), BoardError> in
      start.yield()
      do throws(BoardError) { return .success(try await board.write(write)) } catch { return .failure(error) }
    }
  }
  var events = started.makeAsyncIterator()
  for _ in writes { await events.next() }
  await gate.open()
  var outcomes: [Result<(version: Int, card: Card?), BoardError>] = []
  for task in tasks { outcomes.append(await task.value) }
  return outcomes
}

extension Result {
  var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}

@Suite("The board's group commit", .timeLimit(.minutes(5)))
struct BoardGroupCommitTests {
  @Test(
    "writes that arrive while a group is stored form the next: one transaction and one version per group, each write answered on its own, a refused one refusing nothing else"
  )
  func groups() async throws {
    let gate = StoringGate()
    let board = try gatedBoard(gate)
    let first = Task { try await board.create(id: "first", title: "First", column: "todo", before: nil) }
    await gate.firstArrived()
    // Tasks started one after another may reach the board in any order: each outcome here is the same in
    // every order (the order within a group is GroupCommit's, tested in the package's own suite).
    let outcomes = await writeWhileHeld(
      [
        try .create(id: "p", title: "P", column: "todo", before: nil, user: nil, isPrivate: false),
        try .create(id: "q", title: "Q", column: "doing", before: "first", user: nil, isPrivate: false),
        .delete("nope", user: nil),
        try .edit("first", title: "Edited", isPrivate: nil, user: nil),
        try .create(id: "r", title: "R", column: "done", before: nil, user: nil, isPrivate: false),
        try .create(id: "first", title: "Again", column: "done", before: nil, user: nil, isPrivate: false),
      ], on: board, gate: gate)
    #expect(try await first.value.1 == 1)
    // "q" anchors on a card of another column; "nope" does not exist; "first" exists already.
    #expect(outcomes.map { $0.failure?.code } == [nil, "invalid", "unknownCard", nil, nil, "duplicateID"])
    #expect(try outcomes[3].get().card == Card(id: "first", title: "Edited"))
    let stored = try await board.read()
    #expect(stored.columns.map { $0.items.map(\.title) } == [["Edited", "P"], [], ["R"]])
    #expect(await board.source.snapshot.sections == stored.columns)
    // One version per group that changed something, and the database's version is the source's.
    let (changed, held) = (await gate.changed, await board.source.version.number)
    #expect(stored.version == changed && stored.version == held)
    #expect(await gate.sizes.reduce(0, +) == 7)
    for outcome in outcomes {
      if case .success(let made) = outcome { #expect(made.version <= stored.version) }
    }
  }

  @Test("with one transaction per edit, each write is a group of its own")
  func perEdit() async throws {
    let gate = StoringGate()
    let board = try gatedBoard(gate, commits: .perEdit)
    await gate.open()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<8 {
        group.addTask { _ = try await board.create(id: "c\(index)", title: "C", column: "todo", before: nil) }
      }
      try await group.waitForAll()
    }
    #expect(await gate.sizes == Array(repeating: 1, count: 8))
    #expect(try await board.read().version == 8)
  }

  @Test(
    "an edit whose answer is recorded already, made again, is refused alone: the rest of its group is made"
  )
  func answerConflict() async throws {
    let gate = StoringGate()
    let board = try gatedBoard(gate)
    await gate.open()
    let ticket = EditTicket(
      user: "ann",
      edit: WireEdit(id: "e-1", operations: [.insert([Card(id: "a", title: "A")], .end(of: "todo"))]))
    _ = try await board.create(
      id: "a", title: "A", column: "todo", before: nil, user: "ann", answering: ticket)
    // Made again (a resend after a restart, or to another instance): its answer row is there already.
    let outcomes = await withTaskGroup(of: (String, BoardError?).self) { group in
      group.addTask {
        do throws(BoardError) {
          _ = try await board.create(
            id: "again", title: "A", column: "todo", before: nil, user: "ann", answering: ticket)
          return ("again", nil)
        } catch { return ("again", error) }
      }
      group.addTask {
        do throws(BoardError) {
          _ = try await board.create(id: "b", title: "B", column: "todo", before: nil, user: "bo")
          return ("b", nil)
        } catch { return ("b", error) }
      }
      return await group.reduce(into: [String: BoardError?]()) { $0[$1.0] = $1.1 }
    }
    #expect(outcomes["again"]??.code == "busy")
    #expect(outcomes["b"]! == nil)
    let stored = try await board.read()
    #expect(stored.columns[0].items.map(\.id) == ["a", "b"])
    #expect(try await board.recall(ticket) == 1)
  }

  @Test(
    "the same edit sent twice at once is made once: the table of answers refuses the second, which then gets the first's answer"
  )
  func ticketInFlight() async throws {
    let gate = StoringGate()
    let board = try gatedBoard(gate)
    // A fresh card id each time: the table of answers alone must tell that the second is the same edit.
    let ticket = EditTicket(
      user: "ann",
      edit: WireEdit(id: "e-1", operations: [.insert([Card(id: "a", title: "A")], .end(of: "todo"))]))
    let first = Task {
      try await board.create(id: nil, title: "A", column: "todo", before: nil, user: "ann", answering: ticket)
    }
    await gate.firstArrived()
    // The second forms the next group, behind the first one's storage.
    let second = Task { () -> BoardError? in
      do throws(BoardError) {
        _ = try await board.create(
          id: nil, title: "A", column: "todo", before: nil, user: "ann", answering: ticket)
        return nil
      } catch { return error }
    }
    await gate.open()
    #expect(try await first.value.1 == 1)
    #expect(await second.value == BoardError.busy)
    #expect(try await board.recall(ticket) == 1)
    #expect(try await board.read().columns.flatMap(\.items).count == 1, "made once")
  }

  @Test(
    "a client's edit is made without reading the table of answers; only an edit the store refused reads it, and gets its recorded answer"
  )
  func answersReadOnRefusal() async throws {
    let board = await RecallCountingBoard(try Board(path: nil))
    let writer = boardWriter(board)
    let edit = try WireCoder().read(Data(insertEdit("c-1", card: "a", base: 0).utf8), as: Column.self).0
    guard case .edit(let made) = edit else { throw BoardError.invalid("not an edit") }
    #expect(try await writer.write(made, "ann", WireVisibility()) == 1)
    #expect(board.recalls.withLockedValue { $0 } == 0, "made without a read of the answers")
    // The same edit again, as after a restart (no service in front remembers it): refused by the table
    // in the write's transaction, then answered from it.
    #expect(try await writer.write(made, "ann", WireVisibility()) == 1)
    #expect(board.recalls.withLockedValue { $0 } == 1)
    #expect(try await board.board.read().columns.flatMap(\.items).map(\.id) == ["a"], "made once")
  }
}

/// A ``Board`` that counts the reads of its table of answers.
final class RecallCountingBoard: BoardStore {
  let board: Board
  let recalls = NIOLockedValueBox(0)

  let source: BasicDataSource<Column>

  init(_ board: Board) async {
    self.board = board
    source = await board.source
  }

  var stream: String { board.stream }
  var history: HistoryLimit { board.history }
  var commits: CommitMode { board.commits }
  var answerRetention: Int { board.answerRetention }

  func read(visibleTo user: String??) async throws(BoardError) -> (version: Int, columns: [Column]) {
    try await board.read(visibleTo: user)
  }

  func write(_ write: BoardWrite) async throws(BoardError) -> (version: Int, card: Card?) {
    try await board.write(write)
  }

  func recall(_ ticket: EditTicket) async throws(BoardError) -> Int? {
    recalls.withLockedValue { $0 += 1 }
    return try await board.recall(ticket)
  }

  func reach(_ version: Int) async { await board.reach(version) }
}
