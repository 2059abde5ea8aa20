// A database write against its deadline: whichever comes first, the write's end or the deadline, answers the
// client, exactly once; after the deadline the write starts no further step.

import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// The state of one write racing its deadline, shared by the task that writes and the task that keeps time.
///
/// The writer attaches its connection, asks before each step whether it may go on, says when it sends
/// `COMMIT`, and finishes; the deadline, if it comes first, answers the client and closes the connection so
/// that a query stuck on a dead connection fails. Whoever answers is told so once: the client gets exactly one
/// answer, within the deadline. A plain synchronous state machine: kept under a lock, acted on outside it.
struct WriteDeadline<Connection> {
  enum State {
    /// Working on `connection` (`nil`: not leased yet); nothing is committed.
    case working(Connection?)
    /// `COMMIT` was sent on the connection: the write may be made whatever happens next.
    case committing(Connection)
    /// The writer answered.
    case finished
    /// The deadline answered.
    case timedOut
  }

  /// What the deadline does.
  enum Expiry {
    /// The writer answered first: nothing.
    case nothing
    /// Answer that nothing was made (no `COMMIT` was sent), and close `connection` if there is one.
    case notMade(close: Connection?)
    /// Answer that the write's outcome is unknown (`COMMIT` was sent and not answered), and close it.
    case unknownOutcome(close: Connection)
  }

  private(set) var state = State.working(nil)

  /// The writer leased `connection`: `false` when the deadline has passed (close it and stop).
  mutating func attach(_ connection: Connection) -> Bool {
    guard case .working = state else { return false }
    state = .working(connection)
    return true
  }

  /// Whether the writer may start its next step (a query, preparing the write): `false` once the
  /// deadline has passed (roll back, abandon what it prepared, and stop).
  func mayProceed() -> Bool {
    if case .working = state { return true }
    return false
  }

  /// The writer is about to send `COMMIT`: `false` when the deadline has passed (roll back instead).
  mutating func commit() -> Bool {
    guard case .working(let connection?) = state else { return false }
    state = .committing(connection)
    return true
  }

  /// The writer is done (made, refused or failed): `true` when it answers the client, `false` when the
  /// deadline did already.
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
    case .working(let connection):
      state = .timedOut
      return .notMade(close: connection)
    case .committing(let connection):
      state = .timedOut
      return .unknownOutcome(close: connection)
    case .finished, .timedOut:
      return .nothing
    }
  }
}

extension WriteDeadline.Expiry: Equatable where Connection: Equatable {}
extension WriteDeadline: Sendable where Connection: Sendable {}
extension WriteDeadline.State: Sendable where Connection: Sendable {}

/// A write's race against its deadline, shared by the task that writes and the one that keeps time.
typealias DeadlineRace = NIOLockedValueBox<WriteDeadline<PostgresConnection>>

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
      let error: BoardError
      switch race.withLockedValue({ $0.expire() }) {
      case .nothing: return
      case .notMade(let open): (connection, error) = (open, .timedOut(deadline))
      case .unknownOutcome(let open): (connection, error) = (open, .unknownOutcome(deadline))
      }
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
