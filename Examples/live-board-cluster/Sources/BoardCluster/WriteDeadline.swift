// A database write against its deadline: whichever comes first, the write's end or the deadline, answers the
// client, exactly once; after the deadline the write starts no further step.

import Logging
import NIOConcurrencyHelpers
import LiveBoard
import PostgresNIO
import SimpleSource

/// The state of one write racing its deadline, shared by the task that writes and the task that keeps time.
///
/// The writer attaches its connection, hands over what releases its prepared write (`Held`: it is abandoned
/// by whoever answers the write), asks before each step whether it may go on, says when it sends `COMMIT` (or
/// a statement that commits by itself, and whether that one committed nothing), and finishes. The deadline,
/// if it comes first, answers the client, abandons the prepared write (so the source is free even if the
/// writer's task never returns) and closes the connection so that a query stuck on it fails. The client gets
/// exactly one answer, within the deadline. A plain synchronous state machine: kept under a lock, acted on
/// outside it.
struct WriteDeadline<Connection, Held> {
  enum State {
    /// Working on `connection` (`nil`: not leased yet), holding `held` once prepared; nothing committed.
    case working(Connection?, Held?)
    /// `COMMIT` was sent on the connection: the write may be made whatever happens next.
    case committing(Connection, Held?)
    /// The writer answered.
    case finished
    /// The deadline answered.
    case timedOut
  }

  /// What the deadline does.
  enum Expiry {
    /// The writer answered first: nothing.
    case nothing
    /// Answer that nothing was made (no `COMMIT` was sent), abandon `held` and close `connection`.
    case notMade(close: Connection?, abandon: Held?)
    /// Answer that the write's outcome is unknown (`COMMIT` was sent and not answered), abandon `held` (the
    /// log's follower makes the write if it was committed) and close the connection.
    case unknownOutcome(close: Connection, abandon: Held?)
  }

  private(set) var state = State.working(nil, nil)

  /// The writer leased `connection`: `false` when the deadline has passed (close it and stop).
  mutating func attach(_ connection: Connection) -> Bool {
    guard case .working(_, let held) = state else { return false }
    state = .working(connection, held)
    return true
  }

  /// The writer prepared its write, which `held` abandons: `false` when the deadline has passed (abandon it
  /// and stop).
  mutating func hold(_ held: Held) -> Bool {
    guard case .working(let connection, _) = state else { return false }
    state = .working(connection, held)
    return true
  }

  /// Whether the writer may start its next step (a query, preparing the write): `false` once the
  /// deadline has passed (roll back and stop).
  func mayProceed() -> Bool {
    if case .working = state { return true }
    return false
  }

  /// The writer is about to send `COMMIT`: `false` when the deadline has passed (roll back instead).
  mutating func commit() -> Bool {
    guard case .working(let connection?, let held) = state else { return false }
    state = .committing(connection, held)
    return true
  }

  /// What the writer sent committed nothing (the statement sent by ``commit()`` found the stream moved or an
  /// edit answered already; PostgreSQL refused a statement for contention): the writer abandons what it held
  /// and goes on working on the same connection, within the same deadline. `false` when the deadline has
  /// passed (it abandoned what was held; stop).
  mutating func madeNothing() -> Bool {
    switch state {
    case .working(let connection, _):
      state = .working(connection, nil)
      return true
    case .committing(let connection, _):
      state = .working(connection, nil)
      return true
    case .finished, .timedOut:
      return false
    }
  }

  /// The writer is done (made, refused or failed): `true` when it answers the client (and applies or
  /// abandons what it prepared), `false` when the deadline did already (and abandoned it).
  mutating func finish() -> Bool {
    switch state {
    case .working, .committing:
      state = .finished
      return true
    case .finished, .timedOut:
      return false
    }
  }

  /// The deadline passed.
  mutating func expire() -> Expiry {
    switch state {
    case .working(let connection, let held):
      state = .timedOut
      return .notMade(close: connection, abandon: held)
    case .committing(let connection, let held):
      state = .timedOut
      return .unknownOutcome(close: connection, abandon: held)
    case .finished, .timedOut:
      return .nothing
    }
  }
}

extension WriteDeadline.Expiry: Equatable where Connection: Equatable, Held: Equatable {}
extension WriteDeadline: Sendable where Connection: Sendable, Held: Sendable {}
extension WriteDeadline.State: Sendable where Connection: Sendable, Held: Sendable {}

/// A write's race against its deadline, shared by the task that writes and the one that keeps time.
typealias DeadlineRace = NIOLockedValueBox<WriteDeadline<PostgresConnection, PreparedWriteReleaser<Column>>>

/// Runs `work` in a task of its own and answers with its result, or, when `deadline` passes first, with
/// 503 at once: `busy` when nothing was committed, `unknownOutcome` when `COMMIT` was sent and not answered.
/// Then the connection `work` attached is closed (a query stuck on it fails) and `work`'s task is cancelled;
/// `work` checks the race before each step and starts none after the deadline.
///
/// Exactly one answer, within `deadline` (plus the scheduling of the timer's task), whatever `work` does.
func withDeadline<Value: Sendable>(
  _ deadline: Duration, logger: Logger,
  _ work: @escaping @Sendable (DeadlineRace) async -> Result<Value, BoardError>
) async -> Result<Value, BoardError> {
  let race = DeadlineRace(WriteDeadline())
  return await withCheckedContinuation { (answer: CheckedContinuation<Result<Value, BoardError>, Never>) in
    let worker = NIOLockedValueBox<Task<Void, Never>?>(nil)
    let timer = Task {
      do { try await Task.sleep(for: deadline) } catch { return }  // the work answered first
      let connection: PostgresConnection?
      let held: PreparedWriteReleaser<Column>?
      let error: BoardError
      switch race.withLockedValue({ $0.expire() }) {
      case .nothing: return
      case .notMade(let open, let prepared): (connection, held, error) = (open, prepared, .timedOut(deadline))
      case .unknownOutcome(let open, let prepared):
        (connection, held, error) = (open, prepared, .unknownOutcome(deadline))
      }
      // The source is free for the next write now, whatever the writer's task is waiting on.
      if let held { await held.abandon() }
      logger.error(
        "live-board: the database did not answer within \(deadline) (\(error.code)); closing the connection")
      worker.withLockedValue { $0 }?.cancel()
      if let connection { Task { try? await connection.close() } }
      answer.resume(returning: .failure(error))
    }
    worker.withLockedValue {
      $0 = Task {
        let result = await work(race)
        timer.cancel()
        if race.withLockedValue({ $0.finish() }) { answer.resume(returning: result) }
      }
    }
  }
}
